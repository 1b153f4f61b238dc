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

from collections.abc import Iterator, Sequence
from typing import Any

from fleet.argocd import bootstrap as bs
from fleet.argocd.package import FleetPackage
from fleet.argocd.registration import (
    ArgoRegistration,
    KubeconfigExport,
    exports_kubeconfig,
    render_registration,
)
from fleet.clouds.base import (
    CAPOCI,
    CLUSTER_API,
    CROSSPLANE,
    EXTERNAL_SECRETS,
    PROVIDER_ARGOCD,
    PROVIDER_OPENSTACK,
    FleetCluster,
    HealthCheck,
    NeedsSecrets,
    ignore_differences,
    with_requirements,
)
from fleet.core import layout
from fleet.core.declaration import FleetConstruct
from fleet.core.errors import DefinitionError
from fleet.core.fleet import Fleet
from fleet.core.layout import sync_options
from fleet.core.manifest import Manifest
from fleet.core.tree import Scope
from fleet.core.validators import check_dns_label, check_dns_subdomain
from fleet.core.values import PerEnv, SecretKeyRef, resolve

PROVIDER_CONFIG_API = "argocd.crossplane.io/v1alpha1"
CROSSPLANE_SYSTEM = "crossplane-system"
CAPI_SYSTEM = "capi-system"
CAPOCI_SYSTEM = "capoci-system"


def in_cluster_address(server_addr: str) -> bool:
    """Whether ``host:port`` is a Kubernetes Service address (``*.svc``, ``*.svc.cluster.local``):
    ArgoCD's in-cluster server, which serves a self-signed certificate by default."""
    host = server_addr.rsplit(":", 1)[0] if ":" in server_addr else server_addr
    return host.endswith(".svc") or ".svc." in host or "." not in host


class ArgoCd(FleetConstruct):
    """The ArgoCD of each environment's management cluster, and how the fleet uses it.

    ``server_addr`` (``host:port`` of the ArgoCD API, may differ per environment) and
    ``credentials`` (a Secret key holding an ArgoCD auth token, by reference) configure
    provider-argocd's ``ProviderConfig``. Left out: ``environments`` is every environment;
    ``provider_config_name`` is ``argocd-provider`` (the seed's); ``insecure`` is on for an
    in-cluster address (``*.svc``: ArgoCD's server serves a self-signed certificate and
    provider-argocd has no CA field; the traffic stays TLS-encrypted inside the cluster),
    off otherwise; ``plain_text`` is off; ``namespace`` (ArgoCD's) is ``argocd``;
    ``project`` (of the bootstrap Applications) is ``default``; ``versions`` are
    :class:`BootstrapVersions`; ``export_kubeconfigs`` is off (no PushSecret, no External
    Secrets Operator); ``kubeconfig_remote_key`` is ``kubeconfigs/{env}/{cluster}``;
    ``capoci_config_secret`` is none (CAPOCI's manager starts without credentials and uses
    each cluster's identity; name a Secret in ``capoci-system`` holding clusterctl variables
    such as ``OCI_TENANCY_ID_B64`` to give it default ones);
    ``provider_argocd_poll_seconds`` is 30 (see :mod:`fleet.argocd.registration`, OKE tokens).
    """

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
        versions: bs.BootstrapVersions | None = None,
        export_kubeconfigs: bool | PerEnv[bool] = False,
        kubeconfig_store: str | None = None,
        kubeconfig_remote_key: str = "kubeconfigs/{env}/{cluster}",
        capoci_config_secret: str | None = None,
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
        self.versions = versions or bs.BootstrapVersions()
        self.capoci_config_secret = (
            check_dns_subdomain(capoci_config_secret, where=ctx, field="capoci_config_secret")
            if capoci_config_secret is not None
            else None
        )
        if (
            isinstance(provider_argocd_poll_seconds, bool)
            or not isinstance(provider_argocd_poll_seconds, int)
            or provider_argocd_poll_seconds < 1
        ):
            raise DefinitionError(
                f"must be a whole number of seconds, 1 or more, got "
                f"{provider_argocd_poll_seconds!r}",
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
        return render_registration(
            cluster,
            environment,
            registration,
            provider_config=self.provider_config_name,
            export=export,
        )

    def components(self, environment: str) -> frozenset[str]:
        """The platform components ``environment`` needs: Crossplane and provider-argocd
        (registrations), External Secrets where kubeconfigs are exported, and what the
        cloud plug-ins of the clusters placed there (retired ones too: their ProviderConfig
        or identity still renders) ask for."""
        wanted = [CROSSPLANE, PROVIDER_ARGOCD]
        if any(
            exports_kubeconfig(reg, environment, self.exports_kubeconfigs(environment), cluster=c)
            for c, reg in self.registered(environment)
        ):
            wanted.append(EXTERNAL_SECRETS)
        for cluster in self._placed(environment):
            wanted.extend(type(cluster).plugin.components)
        return with_requirements(wanted)

    def required_secrets(self, environment: str) -> list[tuple[SecretKeyRef, str]]:
        """Every Secret a person must create before the bootstrap converges, with what it
        holds: the ArgoCD token, the clouds' credentials, CAPOCI's variables if named."""
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
        if self.capoci_config_secret and CAPOCI in self.components(environment):
            ref = SecretKeyRef(name=self.capoci_config_secret, namespace=CAPOCI_SYSTEM, key="")
            out.append((ref, "clusterctl variables OCI_TENANCY_ID_B64, OCI_USER_ID_B64, ..."))
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
            *self._providers(environment, clusters, components, secret_namespaces),
            self._manifest(environment, layout.PLATFORM, self._provider_config(environment)),
            *registrations,
        ]

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

    def _health_checks(
        self, clusters: Sequence[FleetCluster], components: frozenset[str]
    ) -> list[HealthCheck]:
        checks: list[HealthCheck] = []
        for cluster in clusters:
            checks.extend(type(cluster).plugin.health_checks)
        if CLUSTER_API in components:
            checks.extend(bs.CAPI_OPERATOR_HEALTH_CHECKS)
        return checks

    def _bootstrap(
        self,
        environment: str,
        clusters: Sequence[FleetCluster],
        components: frozenset[str],
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
                )
            )

        app(
            prefix,
            bs.git_source(config, environment, layout.BOOTSTRAP),
            None,
            dest=self.namespace,
            protect=True,
            options=(),
        )
        put(bs.argocd_cm(self.namespace, self._health_checks(clusters, components)))
        put(bs.argocd_rbac_cm(self.namespace))
        # The namespaces of the Secrets a person creates (and of kubeconfig secrets) exist
        # from the first wave, so that the Secrets can be restored before anything needs them.
        for ns in namespaces:
            put(bs.namespace(ns, bs.WAVE_ARGOCD_CONFIG))
        for chart, version in bs.platform_charts(self.versions):
            if chart.component not in components:
                continue
            app(
                f"{prefix}-{chart.chart}",
                bs.helm_source(chart.repo_url, chart.chart, version, chart.values),
                chart.wave,
                dest=chart.namespace,
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
                f"{prefix}-cluster-{cluster.cluster_name(environment)}",
                bs.git_source(config, environment, cluster.folder(environment)),
                bs.WAVE_CLUSTERS,
                dest=cluster.kubeconfig_secret(environment).namespace,
                protect=False,
                options=sorted(set(options)),
                compare=cls.plugin.application_compare_options,
                ignore=ignore,
            )
        return out

    def _check_capoci_credentials(self, environment: str) -> None:
        """Without ``capoci_config_secret`` CAPOCI has no credentials of its own: every
        cluster it manages must name an identity (``spec.identityRef``)."""
        if self.capoci_config_secret:
            return
        for cluster in self._clusters(environment):
            if CAPOCI in type(cluster).plugin.components and (
                getattr(cluster, "identity", True) is None
            ):
                raise DefinitionError(
                    f"cluster {cluster.construct_id!r} has no identity, and CAPOCI runs "
                    "without credentials of its own: give the cluster an OciClusterIdentity, "
                    "or name CAPOCI's credentials Secret with ArgoCd(capoci_config_secret=...)",
                    where=cluster.context,
                    field="identity",
                )

    def _providers(
        self,
        environment: str,
        clusters: Sequence[FleetCluster],
        components: frozenset[str],
        early_namespaces: set[str],
    ) -> list[Manifest]:
        v = self.versions
        runtime = "provider-argocd"
        bodies: list[dict[str, Any]] = []
        if PROVIDER_OPENSTACK in components:
            bodies.append(
                bs.crossplane_provider(
                    "provider-openstack", f"{bs.XPKG}/provider-openstack:{v.provider_openstack}"
                )
            )
        bodies.append(
            bs.crossplane_provider(
                "provider-argocd", f"{bs.XPKG}/provider-argocd:{v.provider_argocd}", runtime
            )
        )
        bodies.append(bs.runtime_config(runtime, [f"--poll={self.provider_argocd_poll_seconds}s"]))
        gates: dict[str, bool] = {}
        for cluster in self._placed(environment):
            gates.update(type(cluster).plugin.capi_feature_gates)
        if CLUSTER_API in components:
            if CAPI_SYSTEM not in early_namespaces:
                bodies.append(bs.namespace(CAPI_SYSTEM))
            bodies.append(
                bs.capi_provider(
                    "CoreProvider", "cluster-api", CAPI_SYSTEM, v.cluster_api, feature_gates=gates
                )
            )
        if CAPOCI in components:
            self._check_capoci_credentials(environment)
            if CAPOCI_SYSTEM not in early_namespaces:
                bodies.append(bs.namespace(CAPOCI_SYSTEM))
            bodies.append(
                bs.capi_provider(
                    "InfrastructureProvider",
                    "oci",
                    CAPOCI_SYSTEM,
                    v.capoci,
                    feature_gates=gates,
                    config_secret=(
                        (self.capoci_config_secret, CAPOCI_SYSTEM)
                        if self.capoci_config_secret
                        else None
                    ),
                    # Without a config secret every OKE cluster names an OCIClusterIdentity
                    # (checked above): the manager needs no credentials of its own, and
                    # without them it would exit at start (oracle/cluster-api-provider-oci
                    # main.go, config/manager/manager.yaml).
                    manager_args=(
                        None
                        if self.capoci_config_secret
                        else {"--init-oci-clients-on-startup": "false"}
                    ),
                )
            )
        return [self._manifest(environment, layout.PROVIDERS, b) for b in bodies]
