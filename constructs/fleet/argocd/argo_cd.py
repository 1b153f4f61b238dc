"""The fleet's ArgoCD: provider-argocd's ProviderConfig, the one-button bootstrap, and the
registration of every cluster.

Declared once (``clusters/platform.py``)::

    ArgoCd(
        fleet, "argocd",
        server_addr="argocd-server.argocd.svc:443",
        credentials=SecretKeyRef(name="argocd-credentials", namespace="crossplane-system",
                                 key="authToken"),
        export_kubeconfigs=per_env(prod=True, default=False),
        kubeconfig_store="cern-secret-store",
    )

At render it registers every :class:`~fleet.FleetCluster` of the environment that has
``register_in_argocd=True`` and no explicit :class:`~fleet.ArgoRegistration`, and renders the
bootstrap described in :mod:`fleet.argocd.bootstrap`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from fleet.argocd import bootstrap as bs
from fleet.argocd.components import ARGO_CD, EXTERNAL_SECRETS, PROVIDER_ARGOCD
from fleet.argocd.live import APPLICATIONS, REGISTRATIONS, status_reader_role
from fleet.argocd.package import FleetPackage
from fleet.argocd.registration import (
    REGISTRATION_WAVE,
    ArgoRegistration,
    KubeconfigExport,
    exports_kubeconfig,
    render_registration,
)
from fleet.clouds.base import FleetCluster, NeedsSecrets, ignore_differences
from fleet.core import layout
from fleet.core.declaration import FleetConstruct
from fleet.core.errors import DefinitionError
from fleet.core.fleet import Fleet
from fleet.core.hints import shown_value
from fleet.core.layout import sync_options
from fleet.core.manifest import Manifest
from fleet.core.tree import Scope, did_you_mean
from fleet.core.validators import check_dns_label, check_dns_subdomain, check_version_pin
from fleet.core.values import PerEnv, SecretKeyRef, resolve
from fleet.platform.component import (
    ApplicationInstall,
    DirectoryInstall,
    InstallContext,
    ObjectsInstall,
    PlatformComponent,
    with_requirements,
)
from fleet.platform.crossplane import CROSSPLANE_SYSTEM, CrossplaneProvider, max_reconcile_rate
from fleet.platform.plugins import Platform, Plugin

PROVIDER_CONFIG_API = "argocd.crossplane.io/v1alpha1"


def in_cluster_address(server_addr: str) -> bool:
    """Whether ``host:port`` is a Kubernetes Service address (``*.svc``, ``*.svc.cluster.local``):
    ArgoCD's in-cluster server, which serves a self-signed certificate by default."""
    host = server_addr.rsplit(":", 1)[0] if ":" in server_addr else server_addr
    return host.endswith(".svc") or ".svc." in host or "." not in host


GO_MAX_DURATION_SECONDS = (1 << 63) // 10**9
"""The longest Go ``time.Duration`` in whole seconds (an int64 of nanoseconds): 292 years.
A longer ``--poll=...s`` fails to parse, and the provider does not start."""


class ArgoCd(FleetConstruct):
    """The ArgoCD of each environment's management cluster, and how the fleet uses it.

    ``server_addr`` (``host:port`` of the ArgoCD API, may differ per environment) and
    ``credentials`` (a Secret key holding an ArgoCD auth token, by reference) configure
    provider-argocd's ``ProviderConfig``. Left out: ``environments`` is every environment;
    ``provider_config_name`` is ``argocd-provider`` (the seed's); ``insecure`` is on for an
    in-cluster address (``*.svc``: ArgoCD's server serves a self-signed certificate and
    provider-argocd has no CA field; the traffic stays TLS-encrypted inside the cluster),
    off otherwise; ``plain_text`` is off; ``namespace`` (ArgoCD's) is ``argocd``;
    ``project`` (of the bootstrap Applications) is ``default``; ``versions`` (platform
    component name -> version, ``{"cluster-api": "v1.12.12"}``) is each component's pinned
    version (the synth refuses a version whose CRDs are not the ones it validates against:
    ``fleet.checks.crds.unvalidated_versions``); ``export_kubeconfigs`` is off (no
    PushSecret, no External Secrets Operator);
    ``kubeconfig_remote_key`` is ``kubeconfigs/{env}/{cluster}``;
    ``provider_argocd_poll_seconds`` is 30 (see :mod:`fleet.argocd.registration`, OKE tokens).
    """

    plugin: ClassVar[Plugin] = Plugin(components=(ARGO_CD, PROVIDER_ARGOCD, EXTERNAL_SECRETS))
    """ArgoCD itself (there before the bootstrap), provider-argocd for the registrations,
    External Secrets for kubeconfig exports."""

    def __init__(
        self,
        scope: Scope,
        construct_id: str,
        *,
        server_addr: str | PerEnv[str],
        credentials: SecretKeyRef,
        environments: Sequence[str] | None = None,
        provider_config_name: str = "argocd-provider",
        insecure: bool | None = None,
        plain_text: bool = False,
        namespace: str = "argocd",
        project: str = "default",
        versions: Mapping[str, str] | None = None,
        export_kubeconfigs: bool | PerEnv[bool] = False,
        kubeconfig_store: str | None = None,
        kubeconfig_remote_key: str = "kubeconfigs/{env}/{cluster}",
        provider_argocd_poll_seconds: int = 30,
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            environments=environments,
        )
        ctx = self.context
        for other in self.fleet.declarations():
            if other is not self and isinstance(other, ArgoCd):
                shared = set(other.environments) & set(self.environments)
                if shared:
                    raise DefinitionError(
                        f"environment {sorted(shared)[0]!r} already has an ArgoCd "
                        f"(at {other.where})",
                        where=ctx,
                        field="environments",
                    )
        if not isinstance(credentials, SecretKeyRef):
            raise DefinitionError(
                f"must be a SecretKeyRef, got {type(credentials).__name__}",
                where=ctx,
                field="credentials",
            )
        self.credentials = credentials
        self._server_addr: dict[str, str] = {}
        self._export: dict[str, bool] = {}
        for env in self.environments:
            addr = resolve(server_addr, env, where=ctx, field="server_addr")
            if not isinstance(addr, str) or not addr or "://" in addr:
                raise DefinitionError(
                    f"must be host:port of the ArgoCD API without a scheme, got {addr!r}",
                    where=ctx,
                    field="server_addr",
                )
            self._server_addr[env] = addr
            export = resolve(export_kubeconfigs, env, where=ctx, field="export_kubeconfigs")
            if not isinstance(export, bool):
                raise DefinitionError(
                    f"must be True or False, got {export!r}", where=ctx, field="export_kubeconfigs"
                )
            self._export[env] = export
        if any(self._export.values()) and not kubeconfig_store:
            raise DefinitionError(
                "kubeconfigs are exported but no ClusterSecretStore is named",
                where=ctx,
                field="kubeconfig_store",
            )
        self.kubeconfig_store = (
            check_dns_subdomain(kubeconfig_store, where=ctx, field="kubeconfig_store")
            if kubeconfig_store
            else None
        )
        if "{cluster}" not in kubeconfig_remote_key:
            raise DefinitionError(
                "must contain {cluster}, or every cluster would overwrite one key, "
                f"got {kubeconfig_remote_key!r}",
                where=ctx,
                field="kubeconfig_remote_key",
            )
        self.kubeconfig_remote_key = kubeconfig_remote_key
        self.provider_config_name = check_dns_subdomain(
            provider_config_name, where=ctx, field="provider_config_name"
        )
        self._insecure = insecure
        self.plain_text = plain_text
        self.namespace = check_dns_label(namespace, where=ctx, field="namespace")
        self.project = check_dns_subdomain(project, where=self.context, field="project")
        if versions is not None and (
            not isinstance(versions, Mapping)
            or not all(isinstance(k, str) and isinstance(v, str) and v for k, v in versions.items())
        ):
            raise DefinitionError(
                f"must map platform component names to versions, got {versions!r}",
                where=ctx,
                field="versions",
            )
        self.versions: Mapping[str, str] = dict(versions or {})
        if (
            isinstance(provider_argocd_poll_seconds, bool)
            or not isinstance(provider_argocd_poll_seconds, int)
            or not 1 <= provider_argocd_poll_seconds <= GO_MAX_DURATION_SECONDS
        ):
            raise DefinitionError(
                f"must be a whole number of seconds from 1 to {GO_MAX_DURATION_SECONDS} (Go's "
                f"longest time.Duration: provider-argocd would not start with a longer "
                f"--poll), got {shown_value(provider_argocd_poll_seconds)}",
                where=ctx,
                field="provider_argocd_poll_seconds",
            )
        self.provider_argocd_poll_seconds = provider_argocd_poll_seconds

    # --- lookups ----------------------------------------------------------------------------

    @classmethod
    def of(cls, fleet: Fleet, environment: str, *, where: str) -> ArgoCd:
        """The ArgoCd placed in ``environment``; a DefinitionError naming ``where`` if none."""
        for construct in fleet.declarations():
            if isinstance(construct, ArgoCd) and environment in construct.environments:
                return construct
        raise DefinitionError(
            f"no ArgoCd is declared for environment {environment!r}; declare one "
            "(see clusters/platform.py) or pass argocd=",
            where=where,
            field="argocd",
        )

    def server_addr(self, environment: str) -> str:
        """The ArgoCD API address in ``environment``."""
        return self._server_addr[environment]

    def exports_kubeconfigs(self, environment: str) -> bool:
        """Whether registrations in ``environment`` push kubeconfigs by default."""
        return self._export[environment]

    def insecure(self, environment: str) -> bool:
        """Whether provider-argocd skips verifying ArgoCD's TLS certificate in ``environment``."""
        if self._insecure is not None:
            return self._insecure
        return in_cluster_address(self.server_addr(environment))

    def _placed(self, environment: str) -> Iterator[FleetCluster]:
        """Every cluster placed in ``environment``, retired or not."""
        for construct in self.fleet.declarations():
            if isinstance(construct, FleetCluster) and environment in construct.environments:
                yield construct

    def _clusters(self, environment: str) -> Iterator[FleetCluster]:
        for cluster in self._placed(environment):
            if not cluster.is_retired(environment):
                yield cluster

    def _explicit(self) -> dict[int, ArgoRegistration]:
        return {
            id(c.cluster): c
            for c in self.fleet.declarations()
            if isinstance(c, ArgoRegistration) and (c.argocd is None or c.argocd is self)
        }

    def registered(self, environment: str) -> list[tuple[FleetCluster, ArgoRegistration | None]]:
        """Every cluster registered in ``environment``, with its explicit registration."""
        explicit = self._explicit()
        return [
            (cluster, explicit.get(id(cluster)))
            for cluster in self._clusters(environment)
            if cluster.register_in_argocd
        ]

    # --- rendering --------------------------------------------------------------------------

    def registration_manifests(
        self,
        cluster: FleetCluster,
        environment: str,
        registration: ArgoRegistration | None,
    ) -> list[Manifest]:
        """The registration of ``cluster`` (and its kubeconfig PushSecret when exported)."""
        export = None
        if exports_kubeconfig(
            registration, environment, self.exports_kubeconfigs(environment), cluster=cluster
        ):
            if not self.kubeconfig_store:
                raise DefinitionError(
                    "export_kubeconfig is on but the ArgoCd names no kubeconfig_store",
                    where=registration.context if registration else cluster.context,
                    field="export_kubeconfig",
                )
            export = KubeconfigExport(
                store=self.kubeconfig_store, remote_key=self.kubeconfig_remote_key
            )
        return [
            *render_registration(
                cluster,
                environment,
                registration,
                provider_config=self.provider_config_name,
                export=export,
            ),
            *self._workload_applications(cluster, environment),
        ]

    def _workload_applications(self, cluster: FleetCluster, environment: str) -> list[Manifest]:
        """An Application per folder of objects that go into ``cluster`` itself
        (:meth:`~fleet.FleetCluster.workload_folders`), to the registered cluster, in the
        registration's wave (none where the cluster is paused: its Application has one).
        Not in a later wave: that wave would wait for the node pools too, and ArgoCD's
        MachinePool check reads a pool that waits for capacity Progressing without a bound
        (argo-cd v3.5.1 ``resource_customizations/cluster.x-k8s.io/MachinePool/
        health.lua``); ArgoCD retries the Application until the registration exists."""
        out: list[Manifest] = []
        name = cluster.object_name(environment)
        for folder in cluster.workload_folders(environment):
            wave = None if cluster.is_paused(environment) else REGISTRATION_WAVE
            body = bs.application(
                name=f"fleet-{environment}-cluster-{name}-{folder.rsplit('/', 1)[-1]}",
                namespace=self.namespace,
                project=self.project,
                source=bs.git_source(self.fleet.config, environment, folder),
                destination_namespace="",
                wave=wave,
                protect=False,
                sync_options_=bs.DIRECTORY_SYNC_OPTIONS,
            )
            # The registration's name (provider-argocd forProvider.name), not the in-cluster
            # server; and the finalizer: removing the Application (no pool autoscales any
            # more, or the cluster retires) deletes its objects from the cluster. Without the
            # cluster registered any more, ArgoCD drops the finalizer itself (argo-cd v3.5.1
            # controller/appcontroller.go finalizeApplicationDeletion).
            body["spec"]["destination"] = {"name": name}
            body["metadata"]["finalizers"] = [bs.RESOURCES_FINALIZER]
            out.append(Manifest(environment, body, cluster.folder(environment), cluster.context))
        return out

    def check_poll(self) -> None:
        """provider-argocd copies each registered cluster's kubeconfig once per poll: where a
        registered cluster's credential expires on its own (its plug-in's
        ``kubeconfig_credential``), the copy must never be older than it lives."""
        poll = self.provider_argocd_poll_seconds
        for environment in self.environments:
            for cluster in self._clusters(environment):
                credential = type(cluster).plugin.kubeconfig_credential
                if not cluster.register_in_argocd:
                    continue
                if credential is None or poll <= credential.longest_copy_delay:
                    continue
                raise DefinitionError(
                    f"{poll} s is too long while {cluster.node.path} ({type(cluster).__name__}) "
                    f"is registered in {environment}: {credential.what}, so ArgoCD's copy, "
                    f"read every poll, must lag it by at most {credential.longest_copy_delay} s "
                    "or ArgoCD holds a dead credential",
                    where=self.context,
                    field="provider_argocd_poll_seconds",
                )

    def prepare(self) -> None:
        """Every component named in ``versions`` must be one the fleet knows (a plug-in of
        one of its declarations lists it, or the fleet added it); the poll keeps
        short-lived credentials alive (:meth:`check_poll`)."""
        self.check_poll()
        components = {c.name: c for c in Platform.of(self.fleet).plugins.catalogue.components}
        known = sorted(components)
        for name in sorted(self.versions):
            if name not in known:
                raise DefinitionError(
                    f"no platform component is called {name!r}{did_you_mean(name, known)} "
                    f"(known: {', '.join(known)})",
                    where=self.context,
                    field="versions",
                )
            # An upstream folder is a Git revision: a commit pins it as well as a tag.
            check_version_pin(
                self.versions[name],
                where=self.context,
                field=f"versions[{name}]",
                commit=isinstance(components[name].install, DirectoryInstall),
            )

    def components(self, environment: str) -> tuple[PlatformComponent, ...]:
        """The platform components ``environment`` installs, by name: provider-argocd
        (registrations; with this ArgoCd's poll interval), External Secrets where
        kubeconfigs are exported, what the cloud plug-ins of the clusters placed there
        (retired ones too: their ProviderConfig or identity still renders) list, what the
        fleet added there (``Platform.of(fleet).add``), and everything those require."""
        wanted = [PROVIDER_ARGOCD, *Platform.of(self.fleet).components(environment)]
        if any(
            exports_kubeconfig(reg, environment, self.exports_kubeconfigs(environment), cluster=c)
            for c, reg in self.registered(environment)
        ):
            wanted.append(EXTERNAL_SECRETS)
        for cluster in self._placed(environment):
            wanted.extend(cluster.platform_components(environment))
        return tuple(self._configured(c, environment) for c in with_requirements(wanted))

    def _configured(self, component: PlatformComponent, environment: str) -> PlatformComponent:
        """provider-argocd with its poll interval and a reconcile rate for the environment's
        registrations (one ``Cluster`` each, read every poll); any other component as it is."""
        install = component.install
        if component is PROVIDER_ARGOCD and isinstance(install, CrossplaneProvider):
            poll = self.provider_argocd_poll_seconds
            rate = max_reconcile_rate(len(self.registered(environment)), poll)
            args = (f"--poll={poll}s", f"--max-reconcile-rate={rate}")
            return replace(component, install=replace(install, runtime_args=args))
        return component

    def version(self, component: PlatformComponent) -> str:
        """The version of ``component`` this ArgoCd installs (``versions``, else its pin)."""
        return self.versions.get(component.name, component.version)

    def required_secrets(self, environment: str) -> list[tuple[SecretKeyRef, str]]:
        """Every Secret a person must create before the bootstrap converges, with what it
        holds: the ArgoCD token, and what the other declarations read (the clouds'
        credentials)."""
        out: list[tuple[SecretKeyRef, str]] = [
            (
                self.credentials,
                f"an ArgoCD API token of account {bs.PROVIDER_ARGOCD_ACCOUNT} "
                "(argocd account generate-token), no trailing newline",
            )
        ]
        for construct in self.fleet.declarations():
            if (
                construct is not self
                and isinstance(construct, NeedsSecrets)
                and environment in construct.environments
            ):
                out.extend(construct.required_secrets(environment))
        return out

    def render(self, environment: str) -> list[Manifest]:
        """ProviderConfig, bootstrap Applications, providers, ArgoCD config, registrations."""
        registrations: list[Manifest] = []
        for cluster, explicit in self.registered(environment):
            registrations.extend(self.registration_manifests(cluster, environment, explicit))
        components = self.components(environment)
        clusters = list(self._clusters(environment))
        packages = any(
            isinstance(c, FleetPackage) and environment in c.environments
            for c in self.fleet.declarations()
        )
        extra = bool(self.fleet.user_objects(environment))
        secret_namespaces = {ref.namespace for ref, _ in self.required_secrets(environment)}
        secret_namespaces |= {c.kubeconfig_secret(environment).namespace for c in clusters}
        return [
            *self._bootstrap(
                environment,
                clusters,
                components,
                packages=packages,
                extra=extra,
                namespaces=sorted(secret_namespaces),
            ),
            *self._providers(environment, components, frozenset(secret_namespaces)),
            self._manifest(environment, layout.PLATFORM, self._provider_config(environment)),
            self._manifest(environment, layout.PLATFORM, self._status_role(environment)),
            *registrations,
        ]

    def _status_role(self, environment: str) -> dict[str, Any]:
        """The read-only ClusterRole of ``fleet status`` in ``environment``: Applications,
        registrations and the kinds the cloud plug-ins of the clusters placed there read."""
        kinds = [APPLICATIONS, REGISTRATIONS]
        for cluster in self._placed(environment):
            kinds.extend(type(cluster).plugin.status.kinds)
        return status_reader_role(kinds)

    def _provider_config(self, environment: str) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "credentials": {"secretRef": self.credentials.to_dict(), "source": "Secret"},
            "serverAddr": self.server_addr(environment),
        }
        if self.insecure(environment):
            spec["insecure"] = True
        if self.plain_text:
            spec["plainText"] = True
        return {
            "apiVersion": PROVIDER_CONFIG_API,
            "kind": "ProviderConfig",
            "metadata": {
                "annotations": sync_options(layout.PROTECT),
                "name": self.provider_config_name,
            },
            "spec": spec,
        }

    def _bootstrap(
        self,
        environment: str,
        clusters: Sequence[FleetCluster],
        components: Sequence[PlatformComponent],
        *,
        packages: bool,
        extra: bool,
        namespaces: Sequence[str],
    ) -> list[Manifest]:
        config = self.fleet.config
        prefix = f"fleet-{environment}"
        out: list[Manifest] = []

        def put(body: dict[str, Any]) -> None:
            out.append(self._manifest(environment, layout.BOOTSTRAP, body))

        def app(
            name: str,
            source: dict[str, Any],
            wave: int | None,
            *,
            dest: str,
            protect: bool,
            options: Sequence[str],
            prune: bool = True,
            compare: Sequence[str] = (),
            ignore: Sequence[dict[str, Any]] = (),
            ignore_health: bool = False,
        ) -> None:
            put(
                bs.application(
                    name=name,
                    namespace=self.namespace,
                    project=self.project,
                    source=source,
                    destination_namespace=dest,
                    wave=wave,
                    protect=protect,
                    sync_options_=options,
                    prune=prune,
                    compare_options=compare,
                    ignore_differences=ignore,
                    ignore_health=ignore_health,
                )
            )

        waves = bs.component_waves(components)
        # The root's last wave: the clusters and the root's own manifest. ArgoCD checks the
        # health of a wave's objects only before the next wave, so nothing there is waited
        # for, the root's own health (the worst of its children's) included.
        last = max([bs.WAVE_CLUSTERS, *(w + 1 for w in waves.values())])
        app(
            prefix,
            bs.git_source(config, environment, layout.BOOTSTRAP),
            last,
            dest=self.namespace,
            protect=True,
            options=bs.ROOT_SYNC_OPTIONS,
        )
        put(bs.argocd_cm(self.namespace, [h for c in components for h in c.health_checks]))
        put(bs.argocd_rbac_cm(self.namespace))
        # The namespaces of the Secrets a person creates (and of kubeconfig secrets) exist
        # from the first wave, so that the Secrets can be restored before anything needs them.
        for ns in namespaces:
            put(bs.namespace(ns, bs.WAVE_ARGOCD_CONFIG))
        for component in sorted(components, key=lambda c: (waves.get(c.name, 0), c.name)):
            install = component.install
            if isinstance(install, ApplicationInstall):
                app(
                    f"{prefix}-{component.name}",
                    bs.component_source(component, self.version(component)),
                    waves[component.name],
                    dest=install.namespace,
                    protect=True,
                    options=bs.CHART_SYNC_OPTIONS,
                    prune=False,
                )
        steps = [
            (layout.PROVIDERS, bs.WAVE_PROVIDERS, CROSSPLANE_SYSTEM, True, True),
            (layout.PLATFORM, bs.WAVE_PROVIDER_CONFIGS, CROSSPLANE_SYSTEM, True, True),
            (layout.PACKAGES, bs.WAVE_PACKAGES, self.namespace, False, packages),
            (layout.EXTRA, bs.WAVE_EXTRA, self.namespace, False, extra),
        ]
        for folder, wave, dest, protect, present in steps:
            if present:
                app(
                    f"{prefix}-{folder}",
                    bs.git_source(config, environment, folder),
                    wave,
                    dest=dest,
                    protect=protect,
                    options=bs.DIRECTORY_SYNC_OPTIONS,
                )
        for cluster in clusters:
            cls = type(cluster)
            ignore = ignore_differences(cls)
            options = [*bs.DIRECTORY_SYNC_OPTIONS, *cls.plugin.application_sync_options]
            if ignore:
                # Keep the live values of the ignored fields when syncing (ArgoCD >= 2.3).
                options.append("RespectIgnoreDifferences=true")
            app(
                f"{prefix}-cluster-{cluster.object_name(environment)}",
                bs.git_source(config, environment, cluster.folder(environment)),
                last,
                dest=cluster.kubeconfig_secret(environment).namespace,
                protect=False,
                options=sorted(set(options)),
                compare=cls.plugin.application_compare_options,
                ignore=ignore,
                # A cluster's health is its own: the root's stays that of the platform.
                ignore_health=True,
            )
        # The controller's load: these Applications, and those the packages generate.
        generated = sum(
            max(0, p.selected(environment))
            for p in self.fleet.declarations()
            if isinstance(p, FleetPackage) and environment in p.environments
        )
        workload = sum(
            len(c.workload_folders(environment)) for c, _ in self.registered(environment)
        )
        applications = sum(m.kind == "Application" for m in out) + generated + workload
        put(bs.argocd_cmd_params_cm(self.namespace, applications))
        return out

    def _providers(
        self,
        environment: str,
        components: Sequence[PlatformComponent],
        early_namespaces: frozenset[str],
    ) -> list[Manifest]:
        """What the components installed by objects render into ``providers/``."""
        bodies: list[dict[str, Any]] = []
        for component in components:
            if isinstance(component.install, ObjectsInstall):
                ctx = InstallContext(
                    fleet=self.fleet,
                    environment=environment,
                    component=component,
                    version=self.version(component),
                    installed=tuple(components),
                    early_namespaces=early_namespaces,
                )
                bodies.extend(component.install.render(ctx))
        return [self._manifest(environment, layout.PROVIDERS, b) for b in bodies]
