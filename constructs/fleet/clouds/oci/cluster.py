"""An Oracle OKE cluster through Cluster API's OCI provider (CAPOCI), managed node pools.

Renders the object set of CAPOCI's ``cluster-template-managed.yaml``: a Cluster API
``Cluster``, an ``OCIManagedCluster`` (compartment, network), an
``OCIManagedControlPlane`` (the OKE cluster) and, per node pool, a ``MachinePool`` with
its ``OCIManagedMachinePool`` (seed Figures 15, 16).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from fleet.clouds.base import (
    CloudPlugin,
    FleetCluster,
    IntPerEnv,
    NodeCounts,
    NodePoolSummary,
    resolve_counts,
    unique_pools,
)
from fleet.clouds.oci.identity import OciClusterIdentity
from fleet.clouds.oci.network import (
    POD,
    WORKER,
    OkeDefaultNetwork,
    OkeNetwork,
    check_ocid,
    parse_cidr,
)
from fleet.clouds.oci.plugin import OKE_PLUGIN
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.fleet import Fleet
from fleet.core.manifest import Manifest
from fleet.core.validators import check_dns_label, check_label_values
from fleet.core.values import PerEnv, SecretKeyRef, caller_location, resolve

CAPI_API = "cluster.x-k8s.io/v1beta1"
"""CAPOCI implements the CAPI v1beta1 contract: its templates use v1beta1 refs."""
INFRA_API = "infrastructure.cluster.x-k8s.io/v1beta2"
CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
REPLICAS_MANAGED_BY = "cluster.x-k8s.io/replicas-managed-by"
AUTOSCALER_MIN = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
AUTOSCALER_MAX = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
KUBECONFIG_KEY = "value"
VCN_NATIVE = "OCI_VCN_IP_NATIVE"
CLUSTER_TYPES = {"basic": "BASIC_CLUSTER", "enhanced": "ENHANCED_CLUSTER"}
FAULT_DOMAINS = ("FAULT-DOMAIN-1", "FAULT-DOMAIN-2", "FAULT-DOMAIN-3")
MIN_BOOT_VOLUME_GB = 50
"""OKE refuses smaller boot volumes."""

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


@dataclass(frozen=True, kw_only=True)
class OkeNodePool:
    """An OKE node pool: nodes of one shape, placed across availability domains.

    Fixed size: give ``node_count``. Autoscaled: give ``min_node_count`` and
    ``max_node_count`` instead; the cluster autoscaler then owns the size and the
    MachinePool carries ``cluster.x-k8s.io/replicas-managed-by`` (so ArgoCD never
    resets it). Counts may differ per environment (:class:`PerEnv`).

    Left out: ``availability_domains`` are the cluster's; ``fault_domains`` all three
    (Figure 16); ``image_id``, ``ssh_public_key`` and ``kubernetes_version`` the
    cluster's; ``memory_gb`` the shape's default for the OCPUs. ``ocpus`` is required
    for flexible (``*.Flex``) shapes. ``labels`` become Kubernetes node labels.
    ``retired=True`` removes the pool from the render in every environment (see docs:
    retiring); its name stays taken.

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
    fault_domains: Sequence[str] = FAULT_DOMAINS
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
            or not isinstance(self.max_pods_per_node, int)
            or self.max_pods_per_node < 1
        ):
            raise DefinitionError(
                f"must be an integer of 1 or more, got {self.max_pods_per_node!r}",
                where=ctx,
                field="max_pods_per_node",
            )
        autoscaled = self.min_node_count is not None or self.max_node_count is not None
        if autoscaled and (self.min_node_count is None or self.max_node_count is None):
            raise DefinitionError(
                "an autoscaled node pool needs both min_node_count and max_node_count",
                where=ctx,
                field="min_node_count" if self.min_node_count is None else "max_node_count",
            )
        if autoscaled and self.node_count is not None:
            raise DefinitionError(
                "an autoscaled node pool's size belongs to the autoscaler: give "
                "min_node_count and max_node_count, not node_count",
                where=ctx,
                field="node_count",
            )
        if not autoscaled and self.node_count is None:
            raise DefinitionError(
                "give node_count, or min_node_count and max_node_count for an autoscaled pool",
                where=ctx,
                field="node_count",
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
        for fd in self.fault_domains:
            if fd not in FAULT_DOMAINS:
                raise DefinitionError(
                    f"must be among {', '.join(FAULT_DOMAINS)}, got {fd!r}",
                    where=ctx,
                    field="fault_domains",
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
    def autoscaled(self) -> bool:
        """Whether the cluster autoscaler owns the pool's size."""
        return self.min_node_count is not None

    @property
    def machine_size(self) -> str:
        """``VM.Standard.E4.Flex/2ocpu/32gb`` (the parts that are set)."""
        parts = [self.node_shape]
        if self.ocpus is not None:
            parts.append(f"{_positive(self.ocpus, where='', field='', unit='')}ocpu")
        if self.memory_gb is not None:
            parts.append(f"{_positive(self.memory_gb, where='', field='', unit='')}gb")
        return "/".join(parts)


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
class _Pool:
    """A node pool resolved for one environment."""

    spec: OkeNodePool
    counts: NodeCounts
    version: str
    image_id: str
    ssh_public_key: str | None
    availability_domains: tuple[str, ...]


class OciManagedCluster(FleetCluster):
    """An OKE cluster with managed node pools, created by Cluster API (CAPOCI).

    Every object lives in ``namespace`` (default: the identity's, else
    ``oke-clusters``) and carries ``cluster.x-k8s.io/cluster-name``. CAPI writes the
    kubeconfig to Secret ``<name>-kubeconfig`` (key ``value``) there; see
    :meth:`kubeconfig_secret`. The MachinePool kinds need Cluster API installed with
    ``EXP_MACHINE_POOL=true`` (:attr:`capi_feature_gates`).

    Left out: ``identity`` is CAPOCI's controller-wide credentials; ``network`` is
    CAPOCI's default network (public API endpoint); ``cluster_type`` is ``basic``;
    ``pods_cidr``/``services_cidr`` are OKE's defaults; ``ssh_public_key`` means no SSH
    access to nodes.

    Example::

        OciManagedCluster(
            fleet, "sso-oke",
            name="oke-sso-{env}", environments=["test", "prod"],
            identity=tenancy, compartment_id="ocid1.compartment.oc1..aaaa",
            region="eu-frankfurt-1", kubernetes_version="v1.30.1",
            availability_domains=["BKrI:EU-FRANKFURT-1-AD-1"],
            node_image_id="ocid1.image.oc1.eu-frankfurt-1.aaaa",
            network=OkeVcn(),
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
    emitted_kinds = bearing_kinds
    kinds_without_argocd_health: ClassVar[tuple[tuple[str, str], ...]] = (
        (INFRA_API, "OCIManagedCluster"),
        (INFRA_API, "OCIManagedControlPlane"),
        (INFRA_API, "OCIManagedMachinePool"),
    )
    capi_feature_gates: ClassVar[tuple[str, ...]] = ("EXP_MACHINE_POOL",)
    plugin: ClassVar[CloudPlugin] = OKE_PLUGIN

    def __init__(
        self,
        scope: Fleet,
        construct_id: str,
        *,
        name: StrPerEnv,
        environments: Sequence[str],
        compartment_id: StrPerEnv,
        region: str,
        kubernetes_version: StrPerEnv,
        availability_domains: Sequence[str],
        node_image_id: StrPerEnv,
        node_pools: Sequence[OkeNodePool] = (),
        identity: OciClusterIdentity | None = None,
        network: OkeNetwork | None = None,
        cluster_type: str = "basic",
        pods_cidr: str = "10.244.0.0/16",
        services_cidr: str = "10.96.0.0/16",
        ssh_public_key: str | None = None,
        namespace: str | None = None,
        fleet_labels: Mapping[str, str] | None = None,
        deletion_protection: bool = True,
        register_in_argocd: bool = True,
        retired: bool | Sequence[str] = False,
        paused: bool | Sequence[str] = False,
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            name=name,
            environments=environments,
            fleet_labels=fleet_labels,
            deletion_protection=deletion_protection,
            register_in_argocd=register_in_argocd,
            retired=retired,
            paused=paused,
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
        if cluster_type not in CLUSTER_TYPES:
            raise DefinitionError(
                f"must be one of {', '.join(CLUSTER_TYPES)}, got {cluster_type!r}",
                where=ctx,
                field="cluster_type",
            )
        self.cluster_type = cluster_type
        if network is not None and not isinstance(network, OkeNetwork):
            raise DefinitionError(
                f"must be OkeVcn or OkeExistingVcn, got {type(network).__name__}",
                where=ctx,
                field="network",
            )
        self.network: OkeNetwork = network or OkeDefaultNetwork()
        pods = parse_cidr(pods_cidr, where=ctx, field="pods_cidr")
        services = parse_cidr(services_cidr, where=ctx, field="services_cidr")
        if pods.overlaps(services):
            raise DefinitionError(
                f"{pods_cidr} overlaps services_cidr {services_cidr}", where=ctx, field="pods_cidr"
            )
        self.pods_cidr, self.services_cidr = str(pods), str(services)
        self.ssh_public_key = _check_ssh_key(ssh_public_key, ctx) if ssh_public_key else None
        self.node_pool_specs = self._check_pools(node_pools)
        self._resolved = {
            env: self._resolve(
                env,
                compartment_id=compartment_id,
                kubernetes_version=kubernetes_version,
                node_image_id=node_image_id,
            )
            for env in self.environments
        }
        if identity is not None:
            for env in self.environments:
                identity.use_in(env, self.namespace)

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
        names = self.network.names()
        pools = unique_pools(
            node_pools, OkeNodePool, where=ctx, field="node_pools", noun="node pool"
        )
        for pool in pools:
            for env in self.environments:
                check_dns_label(
                    f"{self.cluster_name(env)}-{pool.name}",
                    where=ctx,
                    field=f"node_pools[{pool.name}].name (with the cluster name)",
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
        return pools

    def _resolve(
        self,
        env: str,
        *,
        compartment_id: StrPerEnv,
        kubernetes_version: StrPerEnv,
        node_image_id: StrPerEnv,
    ) -> dict[str, Any]:
        ctx = self.context
        errors: list[DefinitionError] = []
        compartment = ""
        version = ""
        control_plane: tuple[int, int, int] | None = None
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
            control_plane = _version(version, where=ctx, field="kubernetes_version")
        except DefinitionError as e:
            errors.append(e)
        pools: list[_Pool] = []
        for pool in self.node_pool_specs:
            prefix = f"node_pools[{pool.name}]."
            try:
                counts = resolve_counts(
                    ctx, prefix, env, pool.node_count, pool.min_node_count, pool.max_node_count
                )
                pool_version = resolve(
                    pool.kubernetes_version or version,
                    env,
                    where=ctx,
                    field=prefix + "kubernetes_version",
                )
                # A pool that inherits a bad control-plane version was reported above.
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
                        pool.image_id or node_image_id, env, where=ctx, field=prefix + "image_id"
                    ),
                    ["image"],
                    where=ctx,
                    field=prefix + "image_id",
                )
                pools.append(
                    _Pool(
                        spec=pool,
                        counts=counts,
                        version=pool_version,
                        image_id=image,
                        ssh_public_key=pool.ssh_public_key or self.ssh_public_key,
                        availability_domains=tuple(pool.availability_domains or self.default_ads),
                    )
                )
            except DefinitionError as e:
                errors.append(e)
        if errors:
            raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
        return {"compartment_id": compartment, "version": version, "pools": pools}

    # --- the hybrid API -------------------------------------------------------------

    def kubernetes_version(self, environment: str) -> str:
        """The control plane's Kubernetes version."""
        return str(self._resolved[environment]["version"])

    def region(self, environment: str) -> str:
        """The OCI region."""
        return self.oci_region

    def account(self, environment: str) -> str:
        """The compartment OCID."""
        return str(self._resolved[environment]["compartment_id"])

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

    def _pools(self, environment: str) -> list[_Pool]:
        """The node pools that render in ``environment`` (retired ones left out)."""
        pools: list[_Pool] = self._resolved[environment]["pools"]
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
        cluster = {
            "apiVersion": CAPI_API,
            "kind": "Cluster",
            "metadata": self._metadata(name, environment),
            "spec": {
                "clusterNetwork": {
                    "pods": {"cidrBlocks": [self.pods_cidr]},
                    "services": {"cidrBlocks": [self.services_cidr]},
                },
                "controlPlaneRef": self._ref(INFRA_API, "OCIManagedControlPlane", name),
                "infrastructureRef": self._ref(INFRA_API, "OCIManagedCluster", name),
            },
        }
        infra_spec: dict[str, Any] = {
            "compartmentId": r["compartment_id"],
            "region": self.oci_region,
        }
        if self.identity is not None:
            infra_spec["identityRef"] = self.identity.reference()
        network_spec = self.network.network_spec()
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
                "clusterType": CLUSTER_TYPES[self.cluster_type],
                "version": r["version"],
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

    def _render_pool(self, environment: str, pool: _Pool) -> list[dict[str, Any]]:
        cluster_name = self.cluster_name(environment)
        name = f"{cluster_name}-{pool.spec.name}"
        spec = pool.spec
        annotations: dict[str, str] = {}
        machine_pool_spec: dict[str, Any] = {
            "clusterName": cluster_name,
            "template": {
                "spec": {
                    "bootstrap": {"dataSecretName": ""},
                    "clusterName": cluster_name,
                    "infrastructureRef": self._ref(INFRA_API, "OCIManagedMachinePool", name),
                    "version": pool.version,
                }
            },
        }
        if spec.autoscaled:
            annotations[REPLICAS_MANAGED_BY] = ""
            annotations[AUTOSCALER_MIN] = str(pool.counts.min_node_count)
            annotations[AUTOSCALER_MAX] = str(pool.counts.max_node_count)
        else:
            machine_pool_spec["replicas"] = pool.counts.node_count
        machine_pool = {
            "apiVersion": CAPI_API,
            "kind": "MachinePool",
            "metadata": self._metadata(name, environment, **annotations),
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
                        "faultDomains": list(spec.fault_domains),
                        "subnetName": spec.subnet_name,
                    }
                    for ad in pool.availability_domains
                ],
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
