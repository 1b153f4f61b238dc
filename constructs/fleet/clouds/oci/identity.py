"""The OCI credentials CAPOCI uses for a set of OKE clusters: an ``OCIClusterIdentity``."""

from __future__ import annotations

from collections.abc import Sequence

from fleet.clouds.base import FleetCluster
from fleet.core.declaration import FleetConstruct
from fleet.core.layout import PLATFORM, PROTECT, sync_options
from fleet.core.manifest import Manifest
from fleet.core.options import option
from fleet.core.refs import Ref, target_of
from fleet.core.tree import name_from_id
from fleet.core.validators import check_dns_label, check_dns_subdomain
from fleet.core.values import SecretKeyRef

INFRA_API = "infrastructure.cluster.x-k8s.io/v1beta2"
KIND = "OCIClusterIdentity"


class OciClusterIdentity(FleetConstruct):
    """An OCI user principal that CAPOCI acts as, by Secret reference only.

    The Secret is created in the management cluster out of band (in
    ``principal_secret_namespace``, before the first cluster syncs); only its name is
    rendered. CAPOCI reads the keys ``tenancy`` (OCID), ``user`` (OCID), ``fingerprint``,
    ``key`` (the PEM private key), optionally ``passphrase`` (the key's) and optionally
    ``region`` (the cluster's ``spec.region`` wins) (CAPOCI ``cloud/util/util.go``,
    ``cloud/config/config.go``; docs/oke-clusters.md, "Credentials"). The identity renders
    once per environment, in the environments where a cluster uses it, and allows exactly
    the namespaces of those clusters.

    Example::

        tenancy = OciClusterIdentity(fleet, "oci-tenancy", principal_secret="oci-user-principal")
    """

    principal_secret: str = option(
        doc="The Secret (in principal_secret_namespace) with the principal's keys."
    )
    _name: str | None = option(
        default=None,
        alias="name",
        doc="The identity's name (default: the construct id, after the prefixes of the "
        "Components it is declared in, :func:`~fleet.core.tree.name_from_id`).",
    )
    namespace: str = option(
        default="oke-clusters",
        doc="Where the identity lives, and the default namespace of its clusters.",
    )
    _principal_secret_namespace: str | None = option(
        default=None,
        alias="principal_secret_namespace",
        doc="The Secret's namespace (default: namespace).",
    )
    _environments: Sequence[str] | None = option(default=None, init=False)
    """An identity renders where its clusters are (:meth:`prepare`): not an argument."""

    def __post_init__(self) -> None:
        """Names and namespaces, checked."""
        super().__post_init__()
        ctx = self.context
        self.name: str = check_dns_subdomain(
            self._name or name_from_id(self), where=ctx, field="name"
        )
        check_dns_label(self.namespace, where=ctx, field="namespace")
        check_dns_subdomain(self.principal_secret, where=ctx, field="principal_secret")
        self.principal_secret_namespace: str = check_dns_label(
            self._principal_secret_namespace or self.namespace,
            where=ctx,
            field="principal_secret_namespace",
        )
        self._namespaces: dict[str, set[str]] = {}
        """Environment -> the namespaces of the clusters using the identity there."""

    def prepare(self) -> None:
        """Render in the environments of the clusters that use the identity, allowing
        their namespaces (found once every ``define()`` has run: any module order)."""
        self._namespaces = self.fleet.catalog(_IdentityUse).namespaces(self)

    def reference(self) -> dict[str, str]:
        """The ``identityRef`` of an OCIManagedCluster."""
        return {
            "apiVersion": INFRA_API,
            "kind": KIND,
            "name": self.name,
            "namespace": self.namespace,
        }

    def render(self, environment: str) -> list[Manifest]:
        """The OCIClusterIdentity, in the environments where a cluster uses it."""
        namespaces = self._namespaces.get(environment)
        if not namespaces:
            return []
        body = {
            "apiVersion": INFRA_API,
            "kind": KIND,
            "metadata": {
                # Deleting the identity would strand every cluster that uses it.
                "annotations": sync_options(PROTECT),
                "name": self.name,
                "namespace": self.namespace,
            },
            "spec": {
                "allowedNamespaces": {"list": sorted(namespaces)},
                "principalSecret": {
                    "name": self.principal_secret,
                    "namespace": self.principal_secret_namespace,
                },
                "type": "UserPrincipal",
            },
        }
        return [self._manifest(environment, PLATFORM, body)]

    def required_secrets(self, environment: str) -> list[tuple[SecretKeyRef, str]]:
        """The principal Secret a person creates (for the bootstrap's disaster-recovery
        list), keys as CAPOCI reads them (oracle/cluster-api-provider-oci
        ``cloud/util/util.go`` ``GetOrBuildClientFromIdentity``, ``cloud/config/config.go``)."""
        if not self._namespaces.get(environment):
            return []
        ref = SecretKeyRef(
            name=self.principal_secret, namespace=self.principal_secret_namespace, key="key"
        )
        return [(ref, "keys tenancy, user, fingerprint, key (PEM); passphrase, region optional")]


class _IdentityUse:
    """Per identity, the namespaces of the clusters that use it in each environment,
    found once per fleet (prepare phase)."""

    def __init__(self) -> None:
        self._by_identity: dict[int, dict[str, set[str]]] | None = None

    def namespaces(self, identity: OciClusterIdentity) -> dict[str, set[str]]:
        if self._by_identity is None:
            found: dict[int, dict[str, set[str]]] = {}
            for declaration in identity.fleet.declarations():
                used = getattr(declaration, "identity", None)
                if isinstance(used, Ref):
                    used = target_of(used, "identity")
                if isinstance(declaration, FleetCluster) and isinstance(used, OciClusterIdentity):
                    envs = found.setdefault(id(used), {})
                    for env in declaration.environments:
                        envs.setdefault(env, set()).add(
                            getattr(declaration, "namespace", identity.namespace)
                        )
            self._by_identity = found
        return self._by_identity.get(id(identity), {})
