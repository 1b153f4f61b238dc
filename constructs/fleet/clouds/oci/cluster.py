"""An Oracle OKE cluster through Cluster API's OCI provider (CAPOCI), managed node pools.

The declaration, its checks and its values resolved per environment; the objects it
renders are in :mod:`fleet.clouds.oci.render`, its node pools in :mod:`fleet.clouds.oci.pool`.
CAPOCI's ``cluster-template-managed.yaml`` object set: a Cluster API ``Cluster``, an
``OCIManagedCluster`` (compartment, network), an ``OCIManagedControlPlane`` (the OKE
cluster) and, per node pool, a ``MachinePool`` with its ``OCIManagedMachinePool`` (seed
Figures 15, 16).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import ClassVar

from fleet.clouds.base import (
    CloudPlugin,
    CreateOnlyField,
    FleetCluster,
    IgnoreDifference,
    NodeCounts,
    NodePoolSummary,
    resolve_counts,
    unique_pools,
)
from fleet.clouds.oci import autoscaler, render
from fleet.clouds.oci.adoption import adoption_warnings, reachability_warnings
from fleet.clouds.oci.cluster_values import (
    CLUSTER_TYPES,
    ClusterType,
    CniType,
    ResolvedOke,
    TakenVersions,
    derived_resource_identifier,
)
from fleet.clouds.oci.identity import OciClusterIdentity
from fleet.clouds.oci.management import (
    check_autoscaler,
    check_management_route,
    check_private_route,
)
from fleet.clouds.oci.network import POD, OkeNetwork
from fleet.clouds.oci.plugin import OKE_PLUGIN
from fleet.clouds.oci.pool import (
    OKE_MAX_PODS_PER_NODE,
    OkeNodePool,
    ResolvedPool,
    StrPerEnv,
)
from fleet.clouds.oci.pool_checks import check_ad_region, check_pool
from fleet.clouds.oci.regions import REGION_KEYS
from fleet.clouds.oci.shapes import capacity_annotations
from fleet.clouds.oci.validators import (
    check_availability_domains,
    check_ocid,
)
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.manifest import Manifest
from fleet.core.options import option, rendered, resolved_values
from fleet.core.refs import Ref, mutator, target_of
from fleet.core.validators import (
    check_choice,
    check_cidr,
    check_dns_label,
    check_kubernetes_version,
    check_ssh_public_key,
)
from fleet.core.values import PerEnv, SecretKeyRef, resolve
from fleet.platform.component import PlatformComponent
from fleet.platform.external_secrets import EXTERNAL_SECRETS
from fleet.platform.management import ManagementCluster

CAPI_API = render.CAPI_API
INFRA_API = render.INFRA_API
KUBECONFIG_KEY = "value"

_REGION = re.compile(r"^[a-z]{2,}(-[a-z0-9]+)+-\d+$")


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
    ``<environment>/<cluster name>``
    (:data:`~fleet.clouds.oci.cluster_values.OCI_RESOURCE_IDENTIFIER_NAMESPACE`), so a
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
        # Cluster API core copies these from the provider objects / its webhook defaults
        # (v1beta2: internal/webhooks/machinepool.go Default sets
        # deletion.nodeDeletionTimeoutSeconds).
        IgnoreDifference("cluster.x-k8s.io", "Cluster", (".spec.controlPlaneEndpoint",)),
        IgnoreDifference(
            "cluster.x-k8s.io",
            "MachinePool",
            (".spec.providerIDList", ".spec.template.spec.deletion"),
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

    rendered_kind: ClassVar[str] = "OCIManagedCluster"

    compartment_id: StrPerEnv = option(
        render="spec.compartmentId", doc="The compartment (or tenancy) OCID of the cluster."
    )
    oci_region: str = option(
        alias="region", render="spec.region", doc="The OCI region (eu-frankfurt-1)."
    )
    _kubernetes_version: StrPerEnv = option(
        alias="kubernetes_version",
        render="spec.version",
        kind="OCIManagedControlPlane",
        doc="The control plane's Kubernetes version (v1.30.1).",
    )
    availability_domains: Sequence[str] = option(
        doc="The node pools' availability domains, unless a pool names its own."
    )
    node_image_id: StrPerEnv = option(doc="The nodes' image OCID, unless a pool names its own.")
    _node_pools: Sequence[OkeNodePool] = option(
        default=(), alias="node_pools", doc="The node pools."
    )
    identity: OciClusterIdentity | Ref[OciClusterIdentity] | None = option(
        default=None,
        doc="The credentials CAPOCI uses, or a reference to them "
        '(``fleet.declaration("oci-tenancy", OciClusterIdentity)``; default: its '
        "controller-wide ones).",
    )
    _network: OkeNetwork | PerEnv[OkeNetwork] | None = option(
        default=None,
        alias="network",
        doc="OkeVcn or OkeExistingVcn (required; per_env: each environment's own).",
    )
    _cluster_type: ClusterType | str = option(
        default=ClusterType.BASIC, alias="cluster_type", doc="BASIC_CLUSTER or ENHANCED_CLUSTER."
    )
    pods_cidr: str = option(default="10.244.0.0/16", doc="The pods' CIDR block.")
    services_cidr: str = option(default="10.96.0.0/16", doc="The services' CIDR block.")
    ssh_public_key: str | None = option(default=None, doc="SSH access to the nodes.")
    _namespace: str | None = option(
        default=None,
        alias="namespace",
        doc="Where the objects live (default: the identity's, else oke-clusters).",
    )
    oci_resource_identifier: StrPerEnv | None = option(
        default=None, doc="CAPOCI's identifier of an existing cluster (default: derived)."
    )
    cluster_id: StrPerEnv | None = option(
        default=None,
        render="spec.id",
        kind="OCIManagedControlPlane",
        doc="The OCID of an existing OKE cluster CAPOCI adopts (GetOKECluster reads spec.id).",
    )
    freeform_tags: Mapping[str, str] | None = option(
        default=None,
        doc="Freeform tags CAPOCI sets on the OKE cluster and its node pools (replacing theirs).",
    )
    defined_tags: Mapping[str, Mapping[str, str]] | None = option(
        default=None,
        doc="Defined tags ({namespace: {key: value}}) CAPOCI sets like freeform_tags.",
    )
    cni_type: CniType | str = option(
        default="OCI_VCN_IP_NATIVE", doc="OCI_VCN_IP_NATIVE or FLANNEL_OVERLAY (no pod subnets)."
    )
    adoption_tags_applied: bool = option(
        default=False,
        doc="CAPOCI's adoption tags are on the adopted cluster and pools (see fleet import).",
    )

    def __post_init__(self) -> None:
        """The cluster's checks, and its values resolved for each environment."""
        super().__post_init__()
        ctx = self.context
        identity = self.identity
        if isinstance(identity, Ref) and not issubclass(identity.target_kind, OciClusterIdentity):
            raise DefinitionError(
                f"must be an OciClusterIdentity or a reference to one, got {identity!r}",
                where=ctx,
                field="identity",
            )
        if self._namespace is not None:
            check_dns_label(self._namespace, where=ctx, field="namespace")
        if not _REGION.match(self.oci_region):
            raise DefinitionError(
                f"must be an OCI region identifier like eu-frankfurt-1, got {self.oci_region!r}",
                where=ctx,
                field="region",
            )
        self.default_ads = check_availability_domains(self.availability_domains, ctx)
        for ad in self.default_ads:
            self._check_ad_region(ad, ctx)
        if self.oci_region not in REGION_KEYS:
            raise DefinitionError(
                f"{self.oci_region} is not a region the fleet knows the key of (the table in "
                "fleet/clouds/oci/regions.py, from oci-go-sdk common/regions.go)",
                where=ctx,
                field="region",
            )
        self.cluster_type: ClusterType = check_choice(
            ClusterType, self._cluster_type, where=ctx, field="cluster_type", aliases=CLUSTER_TYPES
        )
        if self._network is None:
            raise DefinitionError(
                "give the network: OkeVcn(api_allowed_cidrs=[...]) for a public API endpoint "
                "open to those CIDR blocks, OkeVcn(api_endpoint='private', "
                "private_api_reachable_via=...) or OkeExistingVcn(...); CAPOCI's default "
                "network opens the API to 0.0.0.0/0",
                where=ctx,
                field="network",
            )
        self.networks: dict[str, OkeNetwork] = {
            env: resolve(self._network, env, where=ctx, field="network")
            for env in self.environments
        }
        self.cni: CniType = check_choice(CniType, self.cni_type, where=ctx, field="cni_type")
        for network in self.networks.values():
            if self.cni is CniType.VCN_NATIVE and POD not in network.names().subnets.values():
                raise DefinitionError(
                    "VCN-native pod networking needs a subnet with role pod (or cni_type="
                    "'FLANNEL_OVERLAY')",
                    where=ctx,
                    field="network",
                )
            check_private_route(network, where=ctx)
        pods = check_cidr(self.pods_cidr, where=ctx, field="pods_cidr")
        services = check_cidr(self.services_cidr, where=ctx, field="services_cidr")
        if pods.overlaps(services):
            raise DefinitionError(
                f"{self.pods_cidr} overlaps services_cidr {self.services_cidr}",
                where=ctx,
                field="pods_cidr",
            )
        for network in self.networks.values():
            vcn = network.vcn_cidr()
            if vcn is not None and services.overlaps(vcn):
                # Service IPs inside the VCN would shadow real hosts (OKE requires them apart).
                raise DefinitionError(
                    f"{self.services_cidr} overlaps the VCN's {vcn}",
                    where=ctx,
                    field="services_cidr",
                )
        self.pods_cidr, self.services_cidr = str(pods), str(services)
        if self.ssh_public_key:
            self.ssh_public_key = check_ssh_public_key(
                self.ssh_public_key, where=ctx, field="ssh_public_key"
            )
        else:
            self.ssh_public_key = None
        self.node_pool_specs = self._check_pools(self._node_pools)
        if isinstance(self.oci_resource_identifier, str) and len(self.environments) > 1:
            raise DefinitionError(
                "one identifier for several environments would make their clusters adopt "
                "each other's resources: give per_env(<env>=...) for the clusters that exist",
                where=ctx,
                field="oci_resource_identifier",
            )
        self._taken: dict[str, TakenVersions] = {}
        self._resolved: dict[str, ResolvedOke] = {
            env: self._resolve(env) for env in self.environments
        }

    def _check_ad_region(self, ad: str, ctx: str, prefix: str = "") -> None:
        check_ad_region(ad, self.oci_region, ctx, prefix)

    def _check_pools(self, node_pools: Sequence[OkeNodePool]) -> tuple[OkeNodePool, ...]:
        pools = unique_pools(
            node_pools, OkeNodePool, where=self.context, field="node_pools", noun="node pool"
        )
        for pool in pools:
            check_pool(self, pool)
        return pools

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
        check_pool(self, pool)
        resolved = {
            env: self._resolve_pool(env, pool, self._resolved[env].version, self._taken.get(env))
            for env in self.environments
        }
        self.set_input("node_pool_specs", (*self.node_pool_specs, pool))
        for env, one in resolved.items():
            state = self._resolved[env]
            self._resolved[env] = replace(state, pools=(*state.pools, one))
        return pool

    def _resolve(self, env: str) -> ResolvedOke:
        ctx = self.context
        errors: list[DefinitionError] = []
        options = resolved_values(self, rendered(type(self)), env, where=ctx, errors=errors)
        if options["compartment_id"] is not None:
            try:
                check_ocid(
                    options["compartment_id"],
                    ["compartment", "tenancy"],
                    where=ctx,
                    field="compartment_id",
                )
            except DefinitionError as e:
                errors.append(e)
        if options["cluster_id"] is not None:
            try:
                check_ocid(options["cluster_id"], ["cluster"], where=ctx, field="cluster_id")
            except DefinitionError as e:
                errors.append(e)
        version = options["kubernetes_version"] or ""
        taken = self._taken.get(env)
        if taken is not None:
            version = taken.control_plane
            options = {**options, "kubernetes_version": version}
        if version:
            try:
                check_kubernetes_version(version, where=ctx, field="kubernetes_version")
            except DefinitionError as e:
                errors.append(e)
                version = ""
        identifier, pinned = "", False
        try:
            identifier, pinned = self._identifier(env, self.oci_resource_identifier)
        except DefinitionError as e:
            errors.append(e)
        pools: list[ResolvedPool] = []
        for pool in self.node_pool_specs:
            try:
                pools.append(self._resolve_pool(env, pool, version, taken))
            except DefinitionError as e:
                errors.append(e)
        if errors:
            raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
        return ResolvedOke(
            options=options,
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
            return derived_resource_identifier(env, self.object_name(env)), False
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

    def _resolve_pool(
        self, env: str, pool: OkeNodePool, version: str, taken: TakenVersions | None = None
    ) -> ResolvedPool:
        """``pool`` in ``env``; ``version`` is the control plane's ("" when it was bad);
        ``taken``: what an upgrade rollout gives the cluster there."""
        ctx = self.context
        prefix = f"node_pools[{pool.name}]."
        control_plane = check_kubernetes_version(version, where=ctx, field="") if version else None
        counts = resolve_counts(
            ctx, prefix, env, pool.node_count, pool.min_node_count, pool.max_node_count
        )
        capacity = self._capacity(env, pool, counts) if pool.autoscaled else None
        rolled = taken.pools.get(pool.name) if taken is not None else None
        pool_version = resolve(
            pool.kubernetes_version or rolled or version,
            env,
            where=ctx,
            field=prefix + "kubernetes_version",
        )
        # A pool that inherits a bad control-plane version was reported already.
        inherited = pool.kubernetes_version is None and rolled is None
        parsed = (
            control_plane
            if inherited
            else check_kubernetes_version(
                pool_version, where=ctx, field=prefix + "kubernetes_version"
            )
        )
        if control_plane and parsed and parsed[:2] > control_plane[:2]:
            raise DefinitionError(
                f"{pool_version} is newer than the control plane's {version} ({env})",
                where=ctx,
                field=prefix + "kubernetes_version",
            )
        node_image = (taken.node_image_id if taken else None) or self.node_image_id
        image = check_ocid(
            resolve(pool.image_id or node_image, env, where=ctx, field=prefix + "image_id"),
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
            capacity=capacity,
        )

    @property
    def network(self) -> OkeNetwork:
        """The network, where every environment has the same (else :meth:`network_for`)."""
        found = list({id(n): n for n in self.networks.values()}.values())
        if len(found) != 1:
            raise DefinitionError(
                "the network differs per environment: read network_for(environment)",
                where=self.context,
                field="network",
            )
        return found[0]

    def network_for(self, environment: str) -> OkeNetwork:
        """The network in ``environment``."""
        return self.networks[environment]

    def warnings(self) -> list[str]:
        """Until ``adoption_tags_applied``, for a cluster adopted by OCID; while a network's
        ``private_api_reachable_via`` is the import's placeholder."""
        pool_ids = [p.node_pool_id for p in self.node_pool_specs]
        reachable = (getattr(n, "private_api_reachable_via", None) for n in self.networks.values())
        return [
            *adoption_warnings(self, self.cluster_id, pool_ids, self.adoption_tags_applied),
            *reachability_warnings(self, reachable),
        ]

    def take_versions(self, environment: str, taken: TakenVersions) -> None:
        """Render ``taken`` in ``environment`` instead of the declared versions (and image),
        checked like declared ones: a promoted step of the fleet's upgrade rollout
        (:class:`fleet.clouds.oci.rollout.OkeTarget`). Only from an Aspect."""
        self.check_mutable("take_versions")
        self._taken[environment] = taken
        self._resolved[environment] = self._resolve(environment)

    def taken_versions(self, environment: str) -> TakenVersions | None:
        """What an upgrade rollout gives the cluster in ``environment`` (None: nothing)."""
        return self._taken.get(environment)

    def _capacity(self, env: str, pool: OkeNodePool, counts: NodeCounts) -> dict[str, str] | None:
        """The capacity annotations of an autoscaled pool whose minimum is 0 in ``env`` (the
        autoscaler cannot see its nodes then), None for a minimum of 1 or more."""
        prefix = f"node_pools[{pool.name}]."
        if not counts.max_node_count:
            raise DefinitionError(
                f"must be 1 or more: a pool of at most 0 nodes never has one ({env})",
                where=self.context,
                field=prefix + "max_node_count",
            )
        if counts.min_node_count:
            return None
        found = capacity_annotations(
            pool.node_shape,
            ocpus=pool.ocpus,
            memory_gb=pool.memory_gb,
            max_pods=OKE_MAX_PODS_PER_NODE,
            labels=dict(pool.labels),
        )
        if isinstance(found, str):
            raise DefinitionError(
                f"a pool that scales from 0 needs the nodes' capacity for the autoscaler: "
                f"{found} ({env})",
                where=self.context,
                field=prefix + "node_shape",
            )
        return found

    # --- the hybrid API -------------------------------------------------------------

    def kubernetes_version(self, environment: str) -> str:
        """The control plane's Kubernetes version."""
        return self._resolved[environment].version

    def region(self, environment: str) -> str:
        """The OCI region (``region``: ``OCIManagedCluster.spec.region``)."""
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
            name=f"{self.object_name(environment)}-kubeconfig",
            namespace=self.namespace,
            key=KUBECONFIG_KEY,
        )

    @property
    def identity_declaration(self) -> OciClusterIdentity | None:
        """The identity, a reference resolved (once every ``define()`` has run)."""
        return None if self.identity is None else target_of(self.identity, "identity")

    @property
    def namespace(self) -> str:
        """Where the objects live: ``namespace``, else the identity's, else oke-clusters
        (an identity given by reference is known once every ``define()`` has run)."""
        if self._namespace is not None:
            return self._namespace
        identity = self.identity_declaration
        return identity.namespace if identity is not None else "oke-clusters"

    def kubeconfig_producer(self, environment: str) -> tuple[str, str, str, str]:
        """The Cluster API Cluster."""
        return (CAPI_API, "Cluster", self.namespace, self.object_name(environment))

    def retired_pool_names(self) -> tuple[str, ...]:
        """The node pools declared retired."""
        return tuple(p.name for p in self.node_pool_specs if p.retired)

    def resolved(self, environment: str) -> ResolvedOke:
        """The cluster's values in ``environment`` (one of its environments)."""
        return self._resolved[environment]

    def _pools(self, environment: str) -> list[ResolvedPool]:
        """The node pools that render in ``environment`` (retired ones left out)."""
        pools = self._resolved[environment].pools
        return [p for p in pools if not p.spec.retired or self.reviving]

    def autoscaled_pools(self, environment: str) -> list[str]:
        """The names of the pools rendered in ``environment`` that autoscale."""
        return [p.spec.name for p in self._pools(environment) if p.spec.autoscaled]

    def prepare(self) -> None:
        """Once every declaration exists: the management cluster's route to the API
        endpoint, and what an autoscaler needs (:mod:`fleet.clouds.oci.management`)."""
        super().prepare()
        for env in self.environments:
            check_management_route(self, env)
            pools = self.autoscaled_pools(env)
            if pools and not self.is_retired(env):
                check_autoscaler(self, env, pools)

    def platform_components(self, environment: str) -> tuple[PlatformComponent, ...]:
        """CAPOCI (the plug-in's), and External Secrets where pools autoscale (it pushes the
        autoscaler's token into the cluster)."""
        components = type(self).plugin.components
        if self.workload_folders(environment):
            return (*components, EXTERNAL_SECRETS)
        return components

    def workload_folders(self, environment: str) -> tuple[str, ...]:
        """The autoscaler's folder where pools autoscale."""
        if self.is_retired(environment) or not self.autoscaled_pools(environment):
            return ()
        return (f"{self.folder(environment)}/{autoscaler.WORKLOAD_FOLDER}",)

    def render(self, environment: str) -> list[Manifest]:
        """Cluster, OCIManagedCluster, OCIManagedControlPlane, then per node pool a
        MachinePool and its OCIManagedMachinePool (retired pools left out); where pools
        autoscale, the autoscaler's objects (:mod:`fleet.clouds.oci.autoscaler`)."""
        folder = self.folder(environment)
        out = [
            self._manifest(environment, folder, body)
            for body in render.objects(self, environment, self._pools(environment))
        ]
        pools = self.autoscaled_pools(environment)
        if not pools:
            return out
        name = self.object_name(environment)
        labels = {render.CLUSTER_NAME_LABEL: name}
        machine_pools = [f"{name}-{pool}" for pool in pools]
        for body in autoscaler.management_objects(
            name, self.namespace, machine_pools, labels=labels, paused=self.is_paused(environment)
        ):
            out.append(self._manifest(environment, folder, body))
        management = ManagementCluster.of(self.fleet, environment)
        release = autoscaler.release_for(self.kubernetes_version(environment))
        assert management is not None and release is not None  # checked in prepare()
        (workload,) = self.workload_folders(environment)
        for body in autoscaler.workload_objects(
            name, self.namespace, management.api_server(environment), release
        ):
            out.append(self._manifest(environment, workload, body))
        return out
