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

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fleet.argocd import bootstrap as bs
from fleet.argocd.registration import (
    FOLDER as REGISTRATIONS,
)
from fleet.argocd.registration import (
    PUSH_SECRET_API_VERSION,
    ArgoRegistration,
    exports_kubeconfig,
    registration_body,
)
from fleet.clouds.base import FleetCluster
from fleet.core.declaration import FleetConstruct, sync_options
from fleet.core.errors import DefinitionError
from fleet.core.fleet import Fleet
from fleet.core.manifest import Manifest
from fleet.core.tree import Scope
from fleet.core.validators import check_dns_label, check_dns_subdomain
from fleet.core.values import PerEnv, SecretKeyRef, resolve

if TYPE_CHECKING:
    from collections.abc import Iterator

PROVIDER_CONFIG_API = "argocd.crossplane.io/v1alpha1"
CROSSPLANE_SYSTEM = "crossplane-system"


class ArgoCd(FleetConstruct):
    """The ArgoCD of each environment's management cluster, and how the fleet uses it.

    ``server_addr`` (``host:port`` of the ArgoCD API, may differ per environment) and
    ``credentials`` (a Secret key holding an ArgoCD auth token, by reference) configure
    provider-argocd's ``ProviderConfig``. Left out: ``environments`` is every environment;
    ``provider_config_name`` is ``argocd-provider`` (the seed's); ``insecure`` and
    ``plain_text`` are off; ``namespace`` (ArgoCD's) is ``argocd``; ``project`` (of the
    bootstrap Applications) is ``default``; ``versions`` are :class:`BootstrapVersions`;
    ``export_kubeconfigs`` is off (no PushSecret, no External Secrets Operator);
    ``kubeconfig_remote_key`` is ``kubeconfigs/{env}/{cluster}``; ``capoci_config_secret``
    is ``capoci-variables`` in ``capoci-system`` (CAPOCI's OCI credentials);
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
        insecure: bool = False,
        plain_text: bool = False,
        namespace: str = "argocd",
        project: str = "default",
        versions: bs.BootstrapVersions | None = None,
        export_kubeconfigs: bool | PerEnv[bool] = False,
        kubeconfig_store: str | None = None,
        kubeconfig_remote_key: str = "kubeconfigs/{env}/{cluster}",
        capoci_config_secret: str = "capoci-variables",
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
        self.insecure = insecure
        self.plain_text = plain_text
        self.namespace = check_dns_label(namespace, where=ctx, field="namespace")
        self.project = project
        self.versions = versions or bs.BootstrapVersions()
        self.capoci_config_secret = check_dns_subdomain(
            capoci_config_secret, where=ctx, field="capoci_config_secret"
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

    def _clusters(self, environment: str) -> Iterator[FleetCluster]:
        for construct in self.fleet.declarations():
            if (
                isinstance(construct, FleetCluster)
                and environment in construct.environments
                and not construct.is_retired(environment)
            ):
                yield construct

    def _explicit(self) -> dict[int, ArgoRegistration]:
        return {
            id(c.cluster): c for c in self.fleet.declarations() if isinstance(c, ArgoRegistration)
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
        if environment not in cluster.environments or cluster.is_retired(environment):
            return []
        source = registration.context if registration else cluster.context
        out = [
            Manifest(
                environment,
                registration_body(
                    cluster,
                    environment,
                    provider_config=self.provider_config_name,
                    registration=registration,
                ),
                REGISTRATIONS,
                source,
            )
        ]
        if exports_kubeconfig(
            registration, environment, self.exports_kubeconfigs(environment), cluster=cluster
        ):
            if not self.kubeconfig_store:
                raise DefinitionError(
                    "export_kubeconfig is on but the ArgoCd names no kubeconfig_store",
                    where=source,
                    field="export_kubeconfig",
                )
            out.append(
                Manifest(
                    environment,
                    self._push_secret(cluster, environment, self.kubeconfig_store),
                    REGISTRATIONS,
                    source,
                )
            )
        return out

    def _push_secret(self, cluster: FleetCluster, environment: str, store: str) -> dict[str, Any]:
        ref = cluster.kubeconfig_secret(environment)
        name = cluster.cluster_name(environment)
        remote_key = self.kubeconfig_remote_key.replace("{env}", environment).replace(
            "{cluster}", name
        )
        return {
            "apiVersion": PUSH_SECRET_API_VERSION,
            "kind": "PushSecret",
            "metadata": {"name": f"{name}-kubeconfig-export", "namespace": ref.namespace},
            "spec": {
                "data": [{"match": {"remoteRef": {"remoteKey": remote_key}, "secretKey": ref.key}}],
                # The store keeps the kubeconfig when the PushSecret goes (a cluster retired
                # from the fleet may still run).
                "deletionPolicy": "None",
                "refreshInterval": "1h",
                "secretStoreRefs": [{"kind": "ClusterSecretStore", "name": store}],
                "selector": {"secret": {"name": ref.name}},
                "updatePolicy": "Replace",
            },
        }

    def render(self, environment: str) -> list[Manifest]:
        """ProviderConfig, bootstrap Applications, providers, ArgoCD config, registrations."""
        from fleet.argocd.package import FleetPackage

        registered = self.registered(environment)
        registrations: list[Manifest] = []
        for cluster, explicit in registered:
            if explicit is None:
                registrations.extend(self.registration_manifests(cluster, environment, None))
        exporting = any(
            exports_kubeconfig(reg, environment, self.exports_kubeconfigs(environment), cluster=c)
            for c, reg in registered
        )
        clusters = list(self._clusters(environment))
        packages = any(
            isinstance(c, FleetPackage) and environment in c.environments
            for c in self.fleet.declarations()
        )
        out = [
            *self._bootstrap(
                environment,
                clusters,
                registrations=bool(registered),
                packages=packages,
                exporting=exporting,
            ),
            *self._providers(environment, clusters),
            self._manifest(environment, bs.PLATFORM, self._provider_config(environment)),
            *registrations,
        ]
        return out

    def _provider_config(self, environment: str) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "credentials": {"secretRef": self.credentials.to_dict(), "source": "Secret"},
            "serverAddr": self.server_addr(environment),
        }
        if self.insecure:
            spec["insecure"] = True
        if self.plain_text:
            spec["plainText"] = True
        return {
            "apiVersion": PROVIDER_CONFIG_API,
            "kind": "ProviderConfig",
            "metadata": {
                "annotations": sync_options(bs.PROTECT),
                "name": self.provider_config_name,
            },
            "spec": spec,
        }

    def _health_kinds(self, clusters: Sequence[FleetCluster]) -> list[tuple[str, str]]:
        kinds = [(bs.CAPI_INFRA_GROUP, k) for k in (*bs.CAPOCI_KINDS, bs.CAPOCI_IDENTITY)]
        for cluster in clusters:
            # A cluster class names the kinds it emits that ArgoCD has no health check for.
            extra = getattr(type(cluster), "kinds_without_argocd_health", ())
            for api_version, kind in (*type(cluster).bearing_kinds, *extra):
                if api_version.startswith(bs.CAPI_INFRA_GROUP + "/"):
                    kinds.append((bs.CAPI_INFRA_GROUP, kind))
        return kinds

    def _bootstrap(
        self,
        environment: str,
        clusters: Sequence[FleetCluster],
        *,
        registrations: bool,
        packages: bool,
        exporting: bool,
    ) -> list[Manifest]:
        config = self.fleet.config
        v = self.versions
        prefix = f"fleet-{environment}"

        def app(
            name: str,
            source: dict[str, Any],
            wave: int | None,
            *,
            dest: str,
            protect: bool,
            options: Sequence[str],
            ignore_differences: Sequence[dict[str, Any]] = (),
        ) -> Manifest:
            body = bs.application(
                name=name,
                namespace=self.namespace,
                project=self.project,
                source=source,
                destination_namespace=dest,
                wave=wave,
                protect=protect,
                sync_options_=options,
            )
            if ignore_differences:
                body["spec"]["ignoreDifferences"] = list(ignore_differences)
            return self._manifest(environment, bs.BOOTSTRAP, body)

        chart_options = ("CreateNamespace=true", "ServerSideApply=true")
        # Objects whose CRDs an earlier wave installs: skip the dry run that would fail
        # before the CRD exists.
        dir_options = ("SkipDryRunOnMissingResource=true",)
        out = [
            app(
                prefix,
                bs.git_source(config, environment, bs.BOOTSTRAP),
                None,
                dest=self.namespace,
                protect=True,
                options=(),
            ),
            self._manifest(
                environment,
                bs.BOOTSTRAP,
                bs.argocd_cm(self.namespace, self._health_kinds(clusters)),
            ),
            app(
                f"{prefix}-crossplane",
                bs.helm_source(bs.CROSSPLANE_CHARTS, "crossplane", v.crossplane_chart),
                bs.WAVE_CORE,
                dest=CROSSPLANE_SYSTEM,
                protect=True,
                options=chart_options,
            ),
            app(
                f"{prefix}-cluster-api-operator",
                bs.helm_source(
                    bs.CAPI_OPERATOR_CHARTS,
                    "cluster-api-operator",
                    v.cluster_api_operator_chart,
                    {"cert-manager": {"enabled": True}},
                ),
                bs.WAVE_CORE,
                dest="capi-operator-system",
                protect=True,
                options=chart_options,
            ),
        ]
        if exporting:
            out.append(
                app(
                    f"{prefix}-external-secrets",
                    bs.helm_source(
                        bs.EXTERNAL_SECRETS_CHARTS, "external-secrets", v.external_secrets_chart
                    ),
                    bs.WAVE_CORE,
                    dest="external-secrets",
                    protect=True,
                    options=chart_options,
                )
            )
        out.append(
            app(
                f"{prefix}-providers",
                bs.git_source(config, environment, bs.PROVIDERS),
                bs.WAVE_PROVIDERS,
                dest=CROSSPLANE_SYSTEM,
                protect=True,
                options=dir_options,
            )
        )
        out.append(
            app(
                f"{prefix}-platform",
                bs.git_source(config, environment, bs.PLATFORM),
                bs.WAVE_PROVIDER_CONFIGS,
                dest=CROSSPLANE_SYSTEM,
                protect=True,
                options=dir_options,
            )
        )
        for cluster in clusters:
            name = cluster.cluster_name(environment)
            ignored = [d.to_dict() for d in cluster.ignore_differences]
            # What controllers write into spec is ignored, and a sync keeps the live values.
            respect = ("RespectIgnoreDifferences=true",) if ignored else ()
            out.append(
                app(
                    f"{prefix}-cluster-{name}",
                    bs.git_source(config, environment, cluster.folder(environment)),
                    bs.WAVE_CLUSTERS,
                    dest=cluster.kubeconfig_secret(environment).namespace,
                    protect=False,
                    options=(*respect, *dir_options),
                    ignore_differences=ignored,
                )
            )
        if registrations:
            out.append(
                app(
                    f"{prefix}-registrations",
                    bs.git_source(config, environment, REGISTRATIONS),
                    bs.WAVE_REGISTRATIONS,
                    dest=CROSSPLANE_SYSTEM,
                    protect=False,
                    options=dir_options,
                )
            )
        if packages:
            out.append(
                app(
                    f"{prefix}-packages",
                    bs.git_source(config, environment, bs.PACKAGES),
                    bs.WAVE_PACKAGES,
                    dest=self.namespace,
                    protect=False,
                    options=dir_options,
                )
            )
        return out

    def _providers(self, environment: str, clusters: Sequence[FleetCluster]) -> list[Manifest]:
        v = self.versions
        runtime = "provider-argocd"
        bodies = [
            bs.crossplane_provider(
                "provider-openstack", f"{bs.XPKG}/provider-openstack:{v.provider_openstack}"
            ),
            bs.crossplane_provider(
                "provider-argocd", f"{bs.XPKG}/provider-argocd:{v.provider_argocd}", runtime
            ),
            bs.runtime_config(runtime, [f"--poll={self.provider_argocd_poll_seconds}s"]),
            bs.namespace("capi-system"),
            bs.namespace("capoci-system"),
            bs.capi_provider("CoreProvider", "cluster-api", "capi-system", v.cluster_api),
            bs.capi_provider(
                "InfrastructureProvider",
                "oci",
                "capoci-system",
                v.capoci,
                (self.capoci_config_secret, "capoci-system"),
            ),
        ]
        # Neither Crossplane (connection secrets) nor Cluster API (namespaced clusters)
        # creates the namespace its kubeconfig secrets land in.
        secret_namespaces = sorted({c.kubeconfig_secret(environment).namespace for c in clusters})
        bodies.extend(bs.namespace(ns) for ns in secret_namespaces)
        return [self._manifest(environment, bs.PROVIDERS, b) for b in bodies]
