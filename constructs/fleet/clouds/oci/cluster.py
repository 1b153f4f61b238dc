"""An Oracle OKE cluster through Cluster API's OCI provider (CAPOCI), managed node pools.

Renders the object set of CAPOCI's ``cluster-template-managed.yaml``: a Cluster API
``Cluster``, an ``OCIManagedCluster`` (compartment, network), an
``OCIManagedControlPlane`` (the OKE cluster) and, per node pool, a ``MachinePool`` with
its ``OCIManagedMachinePool`` (seed Figures 15, 16).
"""

from __future__ import annotations

import enum
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, TypeVar, Unpack

from fleet.clouds.base import (
    CloudPlugin,
    CreateOnlyField,
    FleetCluster,
    IgnoreDifference,
    IntPerEnv,
    Lifecycle,
    NodeCounts,
    NodePoolSummary,
    resolve_counts,
    unique_pools,
)
from fleet.clouds.oci.identity import OciClusterIdentity
from fleet.clouds.oci.network import (
    POD,
    WORKER,
    OkeNetwork,
    check_ocid,
    parse_cidr,
)
from fleet.clouds.oci.plugin import OKE_PLUGIN
from fleet.clouds.oci.regions import REGION_KEYS, services_cidr_label
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.manifest import Manifest
from fleet.core.refs import mutator
from fleet.core.tree import Scope
from fleet.core.validators import check_dns_label, check_label_values, checked_arguments
from fleet.core.values import PerEnv, SecretKeyRef, caller_location, resolve

CAPI_API = "cluster.x-k8s.io/v1beta1"
"""CAPOCI implements the CAPI v1beta1 contract: its templates use v1beta1 refs."""
INFRA_API = "infrastructure.cluster.x-k8s.io/v1beta2"
CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
KUBECONFIG_KEY = "value"
VCN_NATIVE = "OCI_VCN_IP_NATIVE"
MIN_BOOT_VOLUME_GB = 50
"""OKE refuses smaller boot volumes."""
MAX_NODE_POOL_NAME = 31
"""CAPOCI's OCIManagedMachinePool webhook refuses longer names (``ValidateCreate``)."""
OKE_MAX_PODS_PER_NODE = 31
"""CAPOCI compares a pool against OKE with ``maxPodsPerNode`` forced to 31
(``setMachinePoolSpecDefaults``): any other value looks changed on every reconcile."""

OCI_RESOURCE_IDENTIFIER_NAMESPACE = uuid.UUID("c4385321-d340-43b9-a6f2-1edb9e387165")
"""The UUIDv5 namespace of derived ``ociResourceIdentifier`` s. Never change it: every OKE
cluster's identifier (and so CAPOCI's lookup of its VCN, OKE cluster and node pools) is
derived from it."""


class ClusterType(enum.StrEnum):
    """OKE cluster types (``OCIManagedControlPlane.spec.clusterType``)."""

    BASIC = "BASIC_CLUSTER"
    ENHANCED = "ENHANCED_CLUSTER"


class FaultDomain(enum.StrEnum):
    """The three fault domains of an OCI availability domain."""

    FD1 = "FAULT-DOMAIN-1"
    FD2 = "FAULT-DOMAIN-2"
    FD3 = "FAULT-DOMAIN-3"


CLUSTER_TYPES = {"basic": ClusterType.BASIC, "enhanced": ClusterType.ENHANCED}
"""The older lower-case spellings, still accepted."""
FAULT_DOMAINS = tuple(FaultDomain)

E = TypeVar("E", bound=enum.StrEnum)


def choice(
    kind: type[E],
    value: object,
    *,
    where: str,
    field: str,
    aliases: Mapping[str, E] | None = None,
) -> E:
    """``value`` as a member of ``kind``: the member, its value, or one of ``aliases``."""
    if isinstance(value, str) and aliases and value in aliases:
        return aliases[value]
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        return kind(value)
    except ValueError:
        known = [*(aliases or {}), *(m.value for m in kind)]
        raise DefinitionError(
            f"must be one of {', '.join(known)}, got {value!r}", where=where, field=field
        ) from None


def derived_resource_identifier(environment: str, cluster_name: str) -> str:
    """The ``ociResourceIdentifier`` of a new cluster: UUIDv5 of ``<env>/<name>``."""
    return str(uuid.uuid5(OCI_RESOURCE_IDENTIFIER_NAMESPACE, f"{environment}/{cluster_name}"))


# OKE wants the full version (v1.30.1); Magnum templates may omit the patch.
_KUBE_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")
_REGION = re.compile(r"^[a-z]{2,}(-[a-z0-9]+)+-\d+$")
_AD = re.compile(r"^[A-Za-z0-9]+:(?P<region>[A-Z0-9-]+)-AD-\d+$")
_SSH_KEY = re.compile(r"^(ssh-(rsa|ed25519|dss)|ecdsa-sha2-nistp\d+) [A-Za-z0-9+/]+=*( \S.*)?$")

StrPerEnv = str | PerEnv[str]


def _version(value: str, *, where: str, field: str) -> tuple[int, int, int]:
    match = _KUBE_VERSION.match(value) if isinstance(value, str) else None
    if not match:
        raise DefinitionError(
            f"must be a full Kubernetes version like v1.30.1, got {value!r}",
            where=where,
            field=field,
        )
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch


def _positive(value: float | None, *, where: str, field: str, unit: str) -> str | None:
    """The number as CAPOCI's string form ("1", "1.5"), checked to be above 0."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise DefinitionError(
            f"must be a number of {unit} above 0, got {value!r}", where=where, field=field
        )
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@checked_arguments
@dataclass(frozen=True, kw_only=True)
class OkeNodePool:
    """An OKE node pool: nodes of one shape, placed across availability domains.

    Fixed size: give ``node_count`` (may differ per environment, :class:`PerEnv`); CAPOCI
    keeps the OKE node pool at ``MachinePool.spec.replicas``. ``min_node_count`` and
    ``max_node_count`` are refused: no cluster autoscaler runs for OKE clusters, and with
    Cluster API's autoscaler annotations CAPOCI never resizes the pool (see
    docs/oke-clusters.md, "Node pool size").

    Upgrades: a pool's ``kubernetes_version`` and ``image_id`` change together (an image is
    built for one Kubernetes version), after the control plane's; OKE replaces the nodes
    ``max_surge`` at a time (``nodePoolCyclingDetails``, always rendered: without it a new
    version reaches only nodes created later).

    Left out: ``availability_domains`` are the cluster's; ``fault_domains`` all three
    (:class:`FaultDomain`, Figure 16); ``image_id``, ``ssh_public_key`` and
    ``kubernetes_version`` the cluster's; ``memory_gb`` the shape's default for the OCPUs;
    ``max_pods_per_node`` OKE's 31 (the only value CAPOCI can keep in sync); ``max_surge``
    1 and ``max_unavailable`` 0 (an integer or ``"25%"``). ``ocpus`` is required for
    flexible (``*.Flex``) shapes. ``labels`` become Kubernetes node labels.
    ``retired=True`` removes the pool from the render in every environment (see docs:
    retiring); its name stays taken. ``<cluster name>-<name>`` is at most 31 characters.

    Example::

        OkeNodePool(name="general", node_shape="VM.Standard.E4.Flex", ocpus=2,
                    memory_gb=32, node_count=per_env(test=1, prod=3))
    """

    name: str
    node_shape: str = "VM.Standard.E4.Flex"
    ocpus: float | None = None
    memory_gb: float | None = None
    node_count: IntPerEnv | None = None
    min_node_count: IntPerEnv | None = None
    max_node_count: IntPerEnv | None = None
    availability_domains: Sequence[str] | None = None
    fault_domains: Sequence[FaultDomain | str] = FAULT_DOMAINS
    subnet_name: str = WORKER
    nsg_names: Sequence[str] = (WORKER,)
    pod_subnet_names: Sequence[str] = (POD,)
    pod_nsg_names: Sequence[str] = (POD,)
    max_pods_per_node: int | None = None
    boot_volume_size_gb: int = MIN_BOOT_VOLUME_GB
    image_id: StrPerEnv | None = None
    ssh_public_key: str | None = None
    kubernetes_version: StrPerEnv | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    max_surge: int | str = 1
    max_unavailable: int | str = 0
    retired: bool = False
    where: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", self.where or caller_location())
        ctx = self.context
        check_dns_label(self.name, where=ctx, field="name")
        if not isinstance(self.retired, bool):
            raise DefinitionError(
                f"must be True or False, got {self.retired!r}", where=ctx, field="retired"
            )
        if not isinstance(self.node_shape, str) or not self.node_shape:
            raise DefinitionError("a node pool needs a node shape", where=ctx, field="node_shape")
        ocpus = _positive(self.ocpus, where=ctx, field="ocpus", unit="OCPUs")
        if ocpus is None and self.node_shape.endswith(".Flex"):
            raise DefinitionError(
                f"a flexible shape ({self.node_shape}) needs ocpus", where=ctx, field="ocpus"
            )
        _positive(self.memory_gb, where=ctx, field="memory_gb", unit="GB")
        size = self.boot_volume_size_gb
        if isinstance(size, bool) or not isinstance(size, int) or size < MIN_BOOT_VOLUME_GB:
            raise DefinitionError(
                f"must be an integer of at least {MIN_BOOT_VOLUME_GB} (GB), got {size!r}",
                where=ctx,
                field="boot_volume_size_gb",
            )
        if self.max_pods_per_node is not None and (
            isinstance(self.max_pods_per_node, bool)
            or self.max_pods_per_node != OKE_MAX_PODS_PER_NODE
        ):
            raise DefinitionError(
                f"must be {OKE_MAX_PODS_PER_NODE} or left out, got {self.max_pods_per_node!r}: "
                "CAPOCI compares every pool with maxPodsPerNode 31 and would update a pool "
                "with another value on every reconcile",
                where=ctx,
                field="max_pods_per_node",
            )
        for name in ("min_node_count", "max_node_count"):
            if getattr(self, name) is not None:
                raise DefinitionError(
                    "OKE node pools have a fixed size: give node_count. No cluster autoscaler "
                    "runs for OKE clusters, and CAPOCI never resizes a pool that Cluster API's "
                    "autoscaler annotations mark (docs/oke-clusters.md, Node pool size)",
                    where=ctx,
                    field=name,
                )
        if self.node_count is None:
            raise DefinitionError("give node_count", where=ctx, field="node_count")
        for name in ("max_surge", "max_unavailable"):
            _check_surge(getattr(self, name), where=ctx, field=name)
        if self.max_surge in (0, "0", "0%") and self.max_unavailable in (0, "0", "0%"):
            raise DefinitionError(
                "max_surge and max_unavailable are both 0: OKE could replace no node",
                where=ctx,
                field="max_surge",
            )
        for name in ("fault_domains", "nsg_names", "pod_subnet_names", "pod_nsg_names"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise DefinitionError("must be a list, not one string", where=ctx, field=name)
            if len(set(value)) != len(value):
                raise DefinitionError(f"lists a name twice: {list(value)}", where=ctx, field=name)
            object.__setattr__(self, name, tuple(value))
        if not self.fault_domains:
            raise DefinitionError(
                "needs at least one fault domain", where=ctx, field="fault_domains"
            )
        object.__setattr__(
            self,
            "fault_domains",
            tuple(
                choice(FaultDomain, fd, where=ctx, field="fault_domains")
                for fd in self.fault_domains
            ),
        )
        if self.availability_domains is not None:
            object.__setattr__(
                self, "availability_domains", _check_ads(self.availability_domains, ctx)
            )
        if self.ssh_public_key is not None:
            _check_ssh_key(self.ssh_public_key, ctx)
        check_label_values(self.labels, where=ctx, field="labels")

    @property
    def context(self) -> str:
        """``file:line (node pool <name>)`` for messages."""
        return f"{self.where} (node pool {self.name})"

    @property
    def machine_size(self) -> str:
        """``VM.Standard.E4.Flex/2ocpu/32gb`` (the parts that are set)."""
        parts = [self.node_shape]
        if self.ocpus is not None:
            parts.append(f"{_positive(self.ocpus, where='', field='', unit='')}ocpu")
        if self.memory_gb is not None:
            parts.append(f"{_positive(self.memory_gb, where='', field='', unit='')}gb")
        return "/".join(parts)


_SURGE = re.compile(r"^(\d+|(100|[1-9]?\d)%)$")


def _check_surge(value: object, *, where: str, field: str) -> str:
    """OKE's cycling count: an integer of 0 or more, or a percentage, as CAPOCI's string."""
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not _SURGE.match(text):
        raise DefinitionError(
            f"must be an integer of 0 or more or a percentage like '25%', got {value!r}",
            where=where,
            field=field,
        )
    return text


def _check_ads(ads: Sequence[str], ctx: str) -> tuple[str, ...]:
    if isinstance(ads, str):
        raise DefinitionError(
            "must be a list, not one string", where=ctx, field="availability_domains"
        )
    for ad in ads:
        if not isinstance(ad, str) or not _AD.match(ad):
            raise DefinitionError(
                f"must look like BKrI:EU-FRANKFURT-1-AD-1, got {ad!r}",
                where=ctx,
                field="availability_domains",
            )
    if len(set(ads)) != len(ads):
        raise DefinitionError(
            f"lists an availability domain twice: {list(ads)}",
            where=ctx,
            field="availability_domains",
        )
    return tuple(ads)


def _check_ssh_key(key: str, ctx: str, field: str = "ssh_public_key") -> str:
    if not isinstance(key, str) or not _SSH_KEY.match(key.strip()):
        raise DefinitionError(
            "must be one OpenSSH public key line (ssh-ed25519 AAAA... comment)",
            where=ctx,
            field=field,
        )
    return key.strip()


@dataclass(frozen=True)
class ResolvedPool:
    """A node pool resolved for one environment."""

    spec: OkeNodePool
    counts: NodeCounts
    version: str
    image_id: str
    ssh_public_key: str | None
    availability_domains: tuple[str, ...]


@dataclass(frozen=True)
class ResolvedOke:
    """An OKE cluster's values resolved for one environment (what :meth:`render` reads)."""

    compartment_id: str
    version: str
    oci_resource_identifier: str
    pinned_identifier: bool
    """Whether the identifier was given (an existing cluster) rather than derived."""
    pools: tuple[ResolvedPool, ...]


class OciManagedCluster(FleetCluster):
    """An OKE cluster with managed node pools, created by Cluster API (CAPOCI).

    Every object lives in ``namespace`` (default: the identity's, else
    ``oke-clusters``) and carries ``cluster.x-k8s.io/cluster-name``. CAPI writes the
    kubeconfig to Secret ``<name>-kubeconfig`` (key ``value``) there; see
    :meth:`kubeconfig_secret`. The MachinePool kinds need Cluster API's ``MachinePool``
    feature gate (``EXP_MACHINE_POOL=true``), which CAPOCI's platform component turns on
    (:data:`fleet.clouds.oci.plugin.CAPOCI`).

    ``network`` is required (:class:`~fleet.OkeVcn` or :class:`~fleet.OkeExistingVcn`):
    it decides whether the API endpoint is public (the default of ``OkeVcn``, open to its
    ``api_allowed_cidrs``) or private (with a statement of how the management cluster
    reaches it); CAPOCI's own default network would open the API to 0.0.0.0/0.

    ``oci_resource_identifier``: CAPOCI tags everything it creates with
    ``OCIManagedCluster.spec.ociResourceIdentifier`` and finds the VCN, OKE cluster and node
    pools again by display name plus that tag. The fleet renders a UUIDv5 of
    ``<environment>/<cluster name>`` (:data:`OCI_RESOURCE_IDENTIFIER_NAMESPACE`), so a
    management cluster rebuilt from git adopts them instead of creating duplicates. A
    cluster created before the fleet rendered it has a random one, which CAPOCI's webhook
    keeps immutable: pin it with ``oci_resource_identifier=per_env(prod="<uuid>")``
    (``kubectl get ocimanagedcluster <name> -o jsonpath='{.spec.ociResourceIdentifier}'``).

    ``paused`` renders ``Cluster.spec.paused: true`` there: CAPOCI then stops reconciling,
    which also stops it refreshing the short-lived token in ``<name>-kubeconfig``, so ArgoCD
    loses the cluster within minutes until it is unpaused.

    Left out: ``identity`` is CAPOCI's controller-wide credentials; ``cluster_type`` is
    :attr:`ClusterType.BASIC` (``"basic"``/``"enhanced"`` are accepted);
    ``pods_cidr``/``services_cidr`` are OKE's defaults; ``ssh_public_key`` means no SSH
    access to nodes; ``oci_resource_identifier`` is derived.

    Example::

        OciManagedCluster(
            fleet, "sso-oke",
            name="oke-sso-{env}", environments=["test", "prod"],
            identity=tenancy, compartment_id="ocid1.compartment.oc1..aaaa",
            region="eu-frankfurt-1", kubernetes_version="v1.30.1",
            availability_domains=["BKrI:EU-FRANKFURT-1-AD-1"],
            node_image_id="ocid1.image.oc1.eu-frankfurt-1.aaaa",
            network=OkeVcn(api_allowed_cidrs=["198.51.100.17/32"]),
            node_pools=[OkeNodePool(name="general", ocpus=2, node_count=3)],
        )
    """

    cloud: ClassVar[str] = "oke"
    bearing_kinds: ClassVar[tuple[tuple[str, str], ...]] = (
        (CAPI_API, "Cluster"),
        (INFRA_API, "OCIManagedCluster"),
        (INFRA_API, "OCIManagedControlPlane"),
        (CAPI_API, "MachinePool"),
        (INFRA_API, "OCIManagedMachinePool"),
    )
    plugin: ClassVar[CloudPlugin] = OKE_PLUGIN
    kubeconfig_export_refused: ClassVar[str] = (
        "an OKE kubeconfig is not exported: CAPOCI's <cluster>-kubeconfig holds a presigned "
        "token that expires within minutes (refreshed only inside the management cluster); "
        "use an exec kubeconfig with `oci ce cluster generate-token` (docs/oke-clusters.md)"
    )
    ignore_differences: ClassVar[tuple[IgnoreDifference, ...]] = (
        # CAPOCI writes the OCIDs of what it created or found into spec (vcn_reconciler.go,
        # subnet_reconciler.go, nsg_reconciler.go, *_gateway_reconciler.go,
        # route_table_reconciler.go), the availability domains (cluster.go
        # SetAvailabilityDomains) and the endpoint it read from OKE.
        IgnoreDifference(
            "infrastructure.cluster.x-k8s.io",
            "OCIManagedCluster",
            (
                ".spec.controlPlaneEndpoint",
                ".spec.availabilityDomains",
                ".spec.networkSpec.vcn.id",
                ".spec.networkSpec.vcn.internetGateway",
                ".spec.networkSpec.vcn.natGateway",
                ".spec.networkSpec.vcn.serviceGateway",
                ".spec.networkSpec.vcn.routeTable",
                ".spec.networkSpec.vcn.subnets[]?.id",
                ".spec.networkSpec.vcn.subnets[]?.securityList",
                ".spec.networkSpec.vcn.networkSecurityGroup.list[]?.id",
            ),
        ),
        # managed_control_plane.go (spec.id), the control-plane controller (endpoint).
        IgnoreDifference(
            "infrastructure.cluster.x-k8s.io",
            "OCIManagedControlPlane",
            (".spec.id", ".spec.controlPlaneEndpoint"),
        ),
        # ocimanaged_machinepool_controller.go, managed_machine_pool.go.
        IgnoreDifference(
            "infrastructure.cluster.x-k8s.io",
            "OCIManagedMachinePool",
            (".spec.id", ".spec.providerID", ".spec.providerIDList"),
        ),
        # Cluster API core copies these from the provider objects / its webhook defaults.
        IgnoreDifference("cluster.x-k8s.io", "Cluster", (".spec.controlPlaneEndpoint",)),
        IgnoreDifference(
            "cluster.x-k8s.io",
            "MachinePool",
            (".spec.providerIDList", ".spec.template.spec.nodeDeletionTimeout"),
        ),
    )
    """What CAPOCI and Cluster API write into the ``spec`` of the rendered objects: the
    cluster's Application ignores these paths (with ``RespectIgnoreDifferences=true``).
    The ``SERVICE_CIDR_BLOCK`` destinations CAPOCI rewrites are rendered as it writes them
    instead, and ``ociResourceIdentifier`` is always rendered."""
    force_new_fields: ClassVar[tuple[CreateOnlyField, ...]] = (
        CreateOnlyField(
            INFRA_API,
            "OCIManagedCluster",
            ("spec", "ociResourceIdentifier"),
            "CAPOCI's webhook refuses the change (field is immutable); pin the live value",
        ),
        CreateOnlyField(
            INFRA_API,
            "OCIManagedCluster",
            ("spec", "compartmentId"),
            "CAPOCI's webhook refuses the change (field is immutable)",
        ),
        CreateOnlyField(
            INFRA_API,
            "OCIManagedCluster",
            ("spec", "region"),
            "CAPOCI's webhook refuses the change (field is immutable)",
        ),
        CreateOnlyField(
            INFRA_API,
            "OCIManagedCluster",
            ("spec", "networkSpec", "vcn", "subnets", "[]", "type"),
            "CAPOCI sets a subnet's type (and the API endpoint's public IP) only when it "
            "creates it; a new cluster is needed for another endpoint",
        ),
        CreateOnlyField(
            INFRA_API,
            "OCIManagedCluster",
            ("spec", "networkSpec", "vcn", "cidr"),
            "CAPOCI never updates a VCN's CIDR block",
        ),
        CreateOnlyField(
            CAPI_API,
            "Cluster",
            ("spec", "clusterNetwork"),
            "OKE takes the pods and services CIDRs only when it creates the cluster",
        ),
    )
    """Changes ``fleet diff`` refuses on a live OKE cluster (CAPOCI webhook
    ``ValidateUpdate``, or applied only at creation)."""

    def __init__(
        self,
        scope: Scope,
        construct_id: str,
        *,
        name: StrPerEnv,
        environments: Sequence[str] | None = None,
        compartment_id: StrPerEnv,
        region: str,
        kubernetes_version: StrPerEnv,
        availability_domains: Sequence[str],
        node_image_id: StrPerEnv,
        node_pools: Sequence[OkeNodePool] = (),
        identity: OciClusterIdentity | None = None,
        network: OkeNetwork | None = None,
        cluster_type: ClusterType | str = ClusterType.BASIC,
        pods_cidr: str = "10.244.0.0/16",
        services_cidr: str = "10.96.0.0/16",
        ssh_public_key: str | None = None,
        namespace: str | None = None,
        oci_resource_identifier: StrPerEnv | None = None,
        **lifecycle: Unpack[Lifecycle],
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            name=name,
            environments=environments,
            **lifecycle,
        )
        ctx = self.context
        if identity is not None and not isinstance(identity, OciClusterIdentity):
            raise DefinitionError(
                f"must be an OciClusterIdentity, got {type(identity).__name__}",
                where=ctx,
                field="identity",
            )
        self.identity = identity
        self.namespace = check_dns_label(
            namespace or (identity.namespace if identity else "oke-clusters"),
            where=ctx,
            field="namespace",
        )
        if not isinstance(region, str) or not _REGION.match(region):
            raise DefinitionError(
                f"must be an OCI region identifier like eu-frankfurt-1, got {region!r}",
                where=ctx,
                field="region",
            )
        self.oci_region = region
        self.default_ads = _check_ads(availability_domains, ctx)
        for ad in self.default_ads:
            self._check_ad_region(ad, ctx)
        if region not in REGION_KEYS:
            raise DefinitionError(
                f"{region} is not a region the fleet knows the key of (the table in "
                "fleet/clouds/oci/regions.py, from oci-go-sdk common/regions.go)",
                where=ctx,
                field="region",
            )
        self.cluster_type = choice(
            ClusterType, cluster_type, where=ctx, field="cluster_type", aliases=CLUSTER_TYPES
        )
        if network is None:
            raise DefinitionError(
                "give the network: OkeVcn(api_allowed_cidrs=[...]) for a public API endpoint "
                "open to those CIDR blocks, OkeVcn(api_endpoint='private', "
                "private_api_reachable_via=...) or OkeExistingVcn(...); CAPOCI's default "
                "network opens the API to 0.0.0.0/0",
                where=ctx,
                field="network",
            )
        if not isinstance(network, OkeNetwork):
            raise DefinitionError(
                f"must be OkeVcn or OkeExistingVcn, got {type(network).__name__}",
                where=ctx,
                field="network",
            )
        self.network: OkeNetwork = network
        pods = parse_cidr(pods_cidr, where=ctx, field="pods_cidr")
        services = parse_cidr(services_cidr, where=ctx, field="services_cidr")
        if pods.overlaps(services):
            raise DefinitionError(
                f"{pods_cidr} overlaps services_cidr {services_cidr}", where=ctx, field="pods_cidr"
            )
        vcn = self.network.vcn_cidr()
        if vcn is not None and services.overlaps(vcn):
            # Service IPs inside the VCN would shadow real hosts (OKE requires them apart).
            raise DefinitionError(
                f"{services_cidr} overlaps the VCN's {vcn}", where=ctx, field="services_cidr"
            )
        self.pods_cidr, self.services_cidr = str(pods), str(services)
        self.ssh_public_key = _check_ssh_key(ssh_public_key, ctx) if ssh_public_key else None
        self._node_image_id = node_image_id
        self.node_pool_specs = self._check_pools(node_pools)
        if isinstance(oci_resource_identifier, str) and len(self.environments) > 1:
            raise DefinitionError(
                "one identifier for several environments would make their clusters adopt "
                "each other's resources: give per_env(<env>=...) for the clusters that exist",
                where=ctx,
                field="oci_resource_identifier",
            )
        self._resolved: dict[str, ResolvedOke] = {
            env: self._resolve(
                env,
                compartment_id=compartment_id,
                kubernetes_version=kubernetes_version,
                oci_resource_identifier=oci_resource_identifier,
            )
            for env in self.environments
        }

    def _check_ad_region(self, ad: str, ctx: str, prefix: str = "") -> None:
        match = _AD.match(ad)
        if match is None or match.group("region") != self.oci_region.upper():
            raise DefinitionError(
                f"{ad} is not in region {self.oci_region}",
                where=ctx,
                field=prefix + "availability_domains",
            )

    def _check_pools(self, node_pools: Sequence[OkeNodePool]) -> tuple[OkeNodePool, ...]:
        ctx = self.context
        pools = unique_pools(
            node_pools, OkeNodePool, where=ctx, field="node_pools", noun="node pool"
        )
        for pool in pools:
            self._check_pool(pool)
        return pools

    def _check_pool(self, pool: OkeNodePool) -> None:
        """One pool against the cluster: name length, placement, subnet and NSG names."""
        ctx = self.context
        names = self.network.names()
        for env in self.environments:
            full = f"{self.cluster_name(env)}-{pool.name}"
            field_name = f"node_pools[{pool.name}].name (with the cluster name)"
            check_dns_label(full, where=ctx, field=field_name)
            if len(full) > MAX_NODE_POOL_NAME:
                raise DefinitionError(
                    f"{full!r} is {len(full)} characters; CAPOCI refuses OKE node pool "
                    f"names over {MAX_NODE_POOL_NAME}: shorten the pool or cluster name",
                    where=ctx,
                    field=field_name,
                )
        for ad in pool.availability_domains or ():
            self._check_ad_region(ad, ctx, f"node_pools[{pool.name}].")
        if not (pool.availability_domains or self.default_ads):
            raise DefinitionError(
                "no availability domain: give the cluster's or the pool's",
                where=ctx,
                field=f"node_pools[{pool.name}].availability_domains",
            )
        refs = [
            ("subnet_name", [pool.subnet_name], names.subnets),
            ("pod_subnet_names", pool.pod_subnet_names, names.subnets),
            ("nsg_names", pool.nsg_names, names.nsgs),
            ("pod_nsg_names", pool.pod_nsg_names, names.nsgs),
        ]
        for field_name, wanted, known in refs:
            for item in wanted:
                if item not in known:
                    raise DefinitionError(
                        f"{item!r} is not a {field_name.split('_')[-2]} of the cluster's "
                        f"network (known: {', '.join(sorted(known)) or 'none'})",
                        where=ctx,
                        field=f"node_pools[{pool.name}].{field_name}",
                    )

    @mutator
    def add_node_pool(self, pool: OkeNodePool) -> OkeNodePool:
        """Append ``pool`` after the declaration (checked as if it had been declared)."""
        ctx = self.context
        self.check_mutable("add_node_pool")
        (pool,) = unique_pools([pool], OkeNodePool, where=ctx, field="node_pools", noun="")
        if any(p.name == pool.name for p in self.node_pool_specs):
            raise DefinitionError(
                f"duplicate node pool name {pool.name!r}", where=pool.context, field="name"
            )
        self._check_pool(pool)
        resolved = {
            env: self._resolve_pool(env, pool, self._resolved[env].version)
            for env in self.environments
        }
        self.set_input("node_pool_specs", (*self.node_pool_specs, pool))
        for env, one in resolved.items():
            state = self._resolved[env]
            self._resolved[env] = replace(state, pools=(*state.pools, one))
        return pool

    def _resolve(
        self,
        env: str,
        *,
        compartment_id: StrPerEnv,
        kubernetes_version: StrPerEnv,
        oci_resource_identifier: StrPerEnv | None,
    ) -> ResolvedOke:
        ctx = self.context
        errors: list[DefinitionError] = []
        compartment = ""
        version = ""
        try:
            compartment = check_ocid(
                resolve(compartment_id, env, where=ctx, field="compartment_id"),
                ["compartment", "tenancy"],
                where=ctx,
                field="compartment_id",
            )
        except DefinitionError as e:
            errors.append(e)
        try:
            version = resolve(kubernetes_version, env, where=ctx, field="kubernetes_version")
            _version(version, where=ctx, field="kubernetes_version")
        except DefinitionError as e:
            errors.append(e)
            version = ""
        identifier, pinned = "", False
        try:
            identifier, pinned = self._identifier(env, oci_resource_identifier)
        except DefinitionError as e:
            errors.append(e)
        pools: list[ResolvedPool] = []
        for pool in self.node_pool_specs:
            try:
                pools.append(self._resolve_pool(env, pool, version))
            except DefinitionError as e:
                errors.append(e)
        if errors:
            raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
        return ResolvedOke(
            compartment_id=compartment,
            version=version,
            oci_resource_identifier=identifier,
            pinned_identifier=pinned,
            pools=tuple(pools),
        )

    def _identifier(self, env: str, given: StrPerEnv | None) -> tuple[str, bool]:
        """The pinned identifier for ``env`` if given there, else the derived one."""
        ctx, field_name = self.context, "oci_resource_identifier"
        value: object = None
        if isinstance(given, PerEnv):
            value = given.values.get(env, given.default)
        elif given is not None:
            value = given
        if value is None:
            return derived_resource_identifier(env, self.cluster_name(env)), False
        try:
            parsed = uuid.UUID(value) if isinstance(value, str) else None
        except ValueError:
            parsed = None
        if parsed is None or str(parsed) != value:
            raise DefinitionError(
                f"must be the cluster's UUID as CAPOCI stored it (lower case, with dashes), "
                f"got {value!r} ({env})",
                where=ctx,
                field=field_name,
            )
        return value, True

    def _resolve_pool(self, env: str, pool: OkeNodePool, version: str) -> ResolvedPool:
        """``pool`` in ``env``; ``version`` is the control plane's ("" when it was bad)."""
        ctx = self.context
        prefix = f"node_pools[{pool.name}]."
        control_plane = _version(version, where=ctx, field="") if version else None
        counts = resolve_counts(ctx, prefix, env, pool.node_count, None, None)
        pool_version = resolve(
            pool.kubernetes_version or version,
            env,
            where=ctx,
            field=prefix + "kubernetes_version",
        )
        # A pool that inherits a bad control-plane version was reported already.
        inherited = pool.kubernetes_version is None
        parsed = (
            control_plane
            if inherited
            else _version(pool_version, where=ctx, field=prefix + "kubernetes_version")
        )
        if control_plane and parsed and parsed[:2] > control_plane[:2]:
            raise DefinitionError(
                f"{pool_version} is newer than the control plane's {version} ({env})",
                where=ctx,
                field=prefix + "kubernetes_version",
            )
        image = check_ocid(
            resolve(
                pool.image_id or self._node_image_id, env, where=ctx, field=prefix + "image_id"
            ),
            ["image"],
            where=ctx,
            field=prefix + "image_id",
        )
        return ResolvedPool(
            spec=pool,
            counts=counts,
            version=pool_version,
            image_id=image,
            ssh_public_key=pool.ssh_public_key or self.ssh_public_key,
            availability_domains=tuple(pool.availability_domains or self.default_ads),
        )

    # --- the hybrid API -------------------------------------------------------------

    def kubernetes_version(self, environment: str) -> str:
        """The control plane's Kubernetes version."""
        return self._resolved[environment].version

    def region(self, environment: str) -> str:
        """The OCI region."""
        return self.oci_region

    def account(self, environment: str) -> str:
        """The compartment OCID."""
        return self._resolved[environment].compartment_id

    def node_pools(self, environment: str) -> list[NodePoolSummary]:
        """The node pools; placement is their availability domains."""
        return [
            NodePoolSummary(
                name=p.spec.name,
                machine_size=p.spec.machine_size,
                node_count=p.counts.node_count,
                min_node_count=p.counts.min_node_count,
                max_node_count=p.counts.max_node_count,
                placement=p.availability_domains,
            )
            for p in self._pools(environment)
        ]

    def kubeconfig_secret(self, environment: str) -> SecretKeyRef:
        """``<name>-kubeconfig`` (key ``value``), written by Cluster API.

        For OKE it holds a short-lived token that CAPOCI refreshes (seed Test 4).
        """
        return SecretKeyRef(
            name=f"{self.cluster_name(environment)}-kubeconfig",
            namespace=self.namespace,
            key=KUBECONFIG_KEY,
        )

    def kubeconfig_producer(self, environment: str) -> tuple[str, str, str, str]:
        """The Cluster API Cluster."""
        return (CAPI_API, "Cluster", self.namespace, self.cluster_name(environment))

    # --- rendering ------------------------------------------------------------------

    def retired_pool_names(self) -> tuple[str, ...]:
        """The node pools declared retired."""
        return tuple(p.name for p in self.node_pool_specs if p.retired)

    def resolved(self, environment: str) -> ResolvedOke:
        """The cluster's values in ``environment``."""
        return self._resolved[environment]

    def _pools(self, environment: str) -> list[ResolvedPool]:
        """The node pools that render in ``environment`` (retired ones left out)."""
        pools = self._resolved[environment].pools
        return [p for p in pools if not p.spec.retired or self.reviving]

    def _metadata(self, name: str, environment: str, **annotations: str) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "labels": {CLUSTER_NAME_LABEL: self.cluster_name(environment)},
            "name": name,
            "namespace": self.namespace,
        }
        merged = {**annotations, **self.protection_annotations()}
        if merged:
            meta["annotations"] = merged
        return meta

    def _ref(self, api_version: str, kind: str, name: str) -> dict[str, str]:
        return {"apiVersion": api_version, "kind": kind, "name": name, "namespace": self.namespace}

    def render(self, environment: str) -> list[Manifest]:
        """Cluster, OCIManagedCluster, OCIManagedControlPlane, then per node pool a
        MachinePool and its OCIManagedMachinePool (retired pools left out)."""
        r = self._resolved[environment]
        name = self.cluster_name(environment)
        folder = self.folder(environment)
        cluster_spec: dict[str, Any] = {
            "clusterNetwork": {
                "pods": {"cidrBlocks": [self.pods_cidr]},
                "services": {"cidrBlocks": [self.services_cidr]},
            },
            "controlPlaneRef": self._ref(INFRA_API, "OCIManagedControlPlane", name),
            "infrastructureRef": self._ref(INFRA_API, "OCIManagedCluster", name),
        }
        if self.is_paused(environment):
            # Cluster API's IsPaused: every CAPOCI controller returns early for the cluster.
            cluster_spec["paused"] = True
        cluster = {
            "apiVersion": CAPI_API,
            "kind": "Cluster",
            "metadata": self._metadata(name, environment),
            "spec": cluster_spec,
        }
        infra_spec: dict[str, Any] = {
            "compartmentId": r.compartment_id,
            "ociResourceIdentifier": r.oci_resource_identifier,
            "region": self.oci_region,
        }
        if self.identity is not None:
            infra_spec["identityRef"] = self.identity.reference()
        network_spec = self.network.network_spec(services_cidr_label(self.oci_region))
        if network_spec is not None:
            infra_spec["networkSpec"] = network_spec
        infra = {
            "apiVersion": INFRA_API,
            "kind": "OCIManagedCluster",
            "metadata": self._metadata(name, environment),
            "spec": infra_spec,
        }
        control_plane = {
            "apiVersion": INFRA_API,
            "kind": "OCIManagedControlPlane",
            "metadata": self._metadata(name, environment),
            "spec": {
                "clusterPodNetworkOptions": [{"cniType": VCN_NATIVE}],
                "clusterType": self.cluster_type.value,
                "version": r.version,
            },
        }
        bodies = [cluster, infra, control_plane]
        out = [self._manifest(environment, folder, body) for body in bodies]
        for pool in self._pools(environment):
            out.extend(
                self._manifest(environment, folder, body)
                for body in self._render_pool(environment, pool)
            )
        return out

    def _render_pool(self, environment: str, pool: ResolvedPool) -> list[dict[str, Any]]:
        cluster_name = self.cluster_name(environment)
        name = f"{cluster_name}-{pool.spec.name}"
        spec = pool.spec
        machine_pool_spec: dict[str, Any] = {
            "clusterName": cluster_name,
            # Always rendered, never the autoscaler annotations: CAPOCI resizes the OKE pool
            # to it unless replicas-managed-by is set (managed_machine_pool.go UpdateNodePool).
            "replicas": pool.counts.node_count,
            "template": {
                "spec": {
                    "bootstrap": {"dataSecretName": ""},
                    "clusterName": cluster_name,
                    "infrastructureRef": self._ref(INFRA_API, "OCIManagedMachinePool", name),
                    "version": pool.version,
                }
            },
        }
        machine_pool = {
            "apiVersion": CAPI_API,
            "kind": "MachinePool",
            "metadata": self._metadata(name, environment),
            "spec": machine_pool_spec,
        }
        shape_config: dict[str, str] = {}
        ocpus = _positive(spec.ocpus, where="", field="", unit="")
        memory = _positive(spec.memory_gb, where="", field="", unit="")
        if ocpus is not None:
            shape_config["ocpus"] = ocpus
        if memory is not None:
            shape_config["memoryInGBs"] = memory
        pod_options: dict[str, Any] = {
            "nsgNames": list(spec.pod_nsg_names),
            "subnetNames": list(spec.pod_subnet_names),
        }
        if spec.max_pods_per_node is not None:
            pod_options["maxPodsPerNode"] = spec.max_pods_per_node
        pool_spec: dict[str, Any] = {
            "nodePoolNodeConfig": {
                "nodePoolPodNetworkOptionDetails": {
                    "cniType": VCN_NATIVE,
                    "vcnIpNativePodNetworkOptions": pod_options,
                },
                "nsgNames": list(spec.nsg_names),
                "placementConfigs": [
                    {
                        "availabilityDomain": ad,
                        "faultDomains": [str(fd) for fd in spec.fault_domains],
                        "subnetName": spec.subnet_name,
                    }
                    for ad in pool.availability_domains
                ],
            },
            # Without it OKE gives a new version or image only to nodes created later.
            "nodePoolCyclingDetails": {
                "isNodeCyclingEnabled": True,
                "maximumSurge": _check_surge(spec.max_surge, where="", field=""),
                "maximumUnavailable": _check_surge(spec.max_unavailable, where="", field=""),
            },
            "nodeShape": spec.node_shape,
            "nodeSourceViaImage": {
                "bootVolumeSizeInGBs": spec.boot_volume_size_gb,
                "imageId": pool.image_id,
            },
            "version": pool.version,
        }
        if shape_config:
            pool_spec["nodeShapeConfig"] = shape_config
        if pool.ssh_public_key:
            pool_spec["sshPublicKey"] = pool.ssh_public_key
        if spec.labels:
            pool_spec["initialNodeLabels"] = [
                {"key": k, "value": v} for k, v in sorted(spec.labels.items())
            ]
        oci_pool = {
            "apiVersion": INFRA_API,
            "kind": "OCIManagedMachinePool",
            "metadata": self._metadata(name, environment),
            "spec": pool_spec,
        }
        return [machine_pool, oci_pool]
