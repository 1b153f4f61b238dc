"""What becomes of every attribute of the two OKE resources of the Terraform OCI provider.

Schema: oracle/terraform-provider-oci v8.28.0
``internal/service/containerengine/containerengine_cluster_resource.go`` and
``containerengine_node_pool_resource.go`` (the attributes, nested blocks included, and
whether each is Required, Optional or Computed). The objects it maps to: CAPOCI v0.24.0
``api/v1beta2`` ``OCIManagedControlPlaneSpec``, ``OCIManagedClusterSpec`` and
``exp/api/v1beta2`` ``OCIManagedMachinePoolSpec``, as ``cloud/scope/managed_control_plane.go``
(``UpdateControlPlane``, ``getSpecFromActual``) and ``managed_machine_pool.go``
(``UpdateNodePool``, ``getSpecFromAPIObject``) compare them with OKE.

Each attribute path (nested blocks dotted, list indexes left out) has one fate:

- ``carried``: a keyword of the declaration (the rendered field is compared by :mod:`.verify`);
- ``adopted``: the OCID CAPOCI adopts the object by;
- ``network``: a part of the cluster's :class:`~fleet.OkeExistingVcn`;
- ``computed``: OKE's output, never declared;
- ``dropped``: not declared, for the reason given;
- ``unexpressed``: CAPOCI (or the fleet's model of it) cannot hold it: reported when the
  state holds a value other than the one the fleet's render implies.

A state attribute with no fate (an attribute of a newer provider) fails the import
(:func:`unplaced`): nothing is silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

CARRIED = "carried"
ADOPTED = "adopted"
NETWORK = "network"
COMPUTED = "computed"
DROPPED = "dropped"
UNEXPRESSED = "unexpressed"

CLUSTER = "oci_containerengine_cluster"
NODE_POOL = "oci_containerengine_node_pool"
SUBNET = "oci_core_subnet"
COMPARTMENT = "oci_identity_compartment"
PROVIDER = "oracle/terraform-provider-oci v8.28.0"


@dataclass(frozen=True)
class Fate:
    """What becomes of one attribute: its fate and why (or the keyword it is carried to)."""

    fate: str
    rule: str


def _c(rule: str) -> Fate:
    return Fate(CARRIED, rule)


def _u(rule: str) -> Fate:
    return Fate(UNEXPRESSED, rule)


_OUTPUT = Fate(COMPUTED, "OKE's output")
_TERRAFORM = Fate(DROPPED, "Terraform's own setting (timeouts)")
_CREATE_ONLY = "CAPOCI sends it only when it creates the cluster (CreateCluster)"

CLUSTER_FATES: Mapping[str, Fate] = {
    "id": Fate(ADOPTED, "OCIManagedControlPlane.spec.id (cluster_id)"),
    "compartment_id": _c("compartment_id"),
    "kubernetes_version": _c("kubernetes_version"),
    "name": _c("name (CAPOCI names the OKE cluster after its OCIManagedControlPlane)"),
    "vcn_id": Fate(NETWORK, "OkeExistingVcn.id"),
    "cluster_pod_network_options.cni_type": _c("cni_type"),
    "defined_tags": _c("defined_tags"),
    "freeform_tags": _c("freeform_tags"),
    "endpoint_config.subnet_id": Fate(NETWORK, "the control-plane-endpoint subnet"),
    "endpoint_config.is_public_ip_enabled": Fate(
        NETWORK,
        "the control-plane-endpoint subnet's type (CAPOCI has no setting: it gives the "
        "endpoint a public IP when that subnet is public, IsControlPlaneEndpointSubnetPublic)",
    ),
    "endpoint_config.nsg_ids": Fate(NETWORK, "the control-plane-endpoint NSGs"),
    "endpoint_config.security_attributes": _u("no endpoint security attributes in CAPOCI"),
    "image_policy_config.is_policy_enabled": _u("image_policy_config is not modelled"),
    "image_policy_config.key_details.kms_key_id": _u("image_policy_config is not modelled"),
    "kms_key_id": _u("the cluster's KMS key is not modelled"),
    "options.add_ons.is_kubernetes_dashboard_enabled": _u("add-ons are not modelled"),
    "options.add_ons.is_tiller_enabled": _u("add-ons are not modelled"),
    "options.admission_controller_options.is_pod_security_policy_enabled": _u(
        "pod security policy is not modelled"
    ),
    "options.ip_families": _u("the fleet renders IPv4 only"),
    "options.kubernetes_network_config.pods_cidr": _c("pods_cidr"),
    "options.kubernetes_network_config.services_cidr": _c("services_cidr"),
    **{
        f"options.open_id_connect_token_authentication_config.{k}": _u(
            "OIDC token authentication is not modelled"
        )
        for k in (
            "is_open_id_connect_auth_enabled",
            "ca_certificate",
            "client_id",
            "configuration_file",
            "groups_claim",
            "groups_prefix",
            "issuer_url",
            "required_claims.key",
            "required_claims.value",
            "signing_algorithms",
            "username_claim",
            "username_prefix",
        )
    },
    "options.open_id_connect_discovery.is_open_id_connect_discovery_enabled": _u(
        "OIDC discovery is not modelled"
    ),
    "options.persistent_volume_config.defined_tags": Fate(DROPPED, _CREATE_ONLY),
    "options.persistent_volume_config.freeform_tags": Fate(DROPPED, _CREATE_ONLY),
    "options.service_lb_config.backend_nsg_ids": _u("load balancer backend NSGs are not modelled"),
    "options.service_lb_config.defined_tags": Fate(DROPPED, _CREATE_ONLY),
    "options.service_lb_config.freeform_tags": Fate(DROPPED, _CREATE_ONLY),
    "options.service_lb_subnet_ids": Fate(NETWORK, "the service-lb subnets"),
    "type": _c("cluster_type"),
    "available_kubernetes_upgrades": _OUTPUT,
    "endpoints.ipv6endpoint": _OUTPUT,
    "endpoints.kubernetes": _OUTPUT,
    "endpoints.private_endpoint": _OUTPUT,
    "endpoints.public_endpoint": _OUTPUT,
    "endpoints.vcn_hostname_endpoint": _OUTPUT,
    "lifecycle_details": _OUTPUT,
    **{
        f"metadata.{k}": _OUTPUT
        for k in (
            "created_by_user_id",
            "created_by_work_request_id",
            "deleted_by_user_id",
            "deleted_by_work_request_id",
            "time_created",
            "time_credential_expiration",
            "time_deleted",
            "time_updated",
            "updated_by_user_id",
            "updated_by_work_request_id",
        )
    },
    "open_id_connect_discovery_endpoint": _OUTPUT,
    "open_id_connect_discovery_key": _OUTPUT,
    "state": _OUTPUT,
    "timeouts": _TERRAFORM,
}
"""``oci_containerengine_cluster``: every attribute of the v8.28.0 schema."""

_PER_POOL_TAGS = _u(
    "per-pool tags: CAPOCI tags every node pool with OCIManagedCluster.spec.freeformTags and "
    "definedTags (managed_machine_pool.go getFreeFormTags), replacing the pool's own"
)
_PLACEMENT = "node_config_details.placement_configs"
_POD = "node_config_details.node_pool_pod_network_option_details"
_VNIC = "secondary_vnics.create_vnic_details"

POOL_FATES: Mapping[str, Fate] = {
    "id": Fate(ADOPTED, "OCIManagedMachinePool.spec.id (node_pool_id)"),
    "cluster_id": Fate(DROPPED, "the pool's cluster: the declaration it is a pool of"),
    "compartment_id": Fate(DROPPED, "the cluster's compartment (CAPOCI creates pools there)"),
    "name": _c("name (CAPOCI names the pool <cluster>-<pool>, UpdateNodePool renames it)"),
    "node_shape": _c("node_shape"),
    "defined_tags": _PER_POOL_TAGS,
    "freeform_tags": _PER_POOL_TAGS,
    "initial_node_labels.key": _c("labels"),
    "initial_node_labels.value": _c("labels"),
    "kubernetes_version": _c("kubernetes_version"),
    "network_launch_type": Fate(
        DROPPED, "not in CAPOCI's OCIManagedMachinePoolSpec, never sent on update"
    ),
    f"{_PLACEMENT}.availability_domain": _c("availability_domains"),
    f"{_PLACEMENT}.subnet_id": _c("subnet_name (by name in the cluster's network)"),
    f"{_PLACEMENT}.capacity_reservation_id": _u("capacity reservations are not modelled"),
    f"{_PLACEMENT}.fault_domains": _c("fault_domains"),
    f"{_PLACEMENT}.host_group_id": _u("host groups are not in CAPOCI"),
    f"{_PLACEMENT}.preemptible_node_config.preemption_action.type": _u(
        "preemptible_node_config is not in CAPOCI's placement config"
    ),
    f"{_PLACEMENT}.preemptible_node_config.preemption_action.is_preserve_boot_volume": _u(
        "preemptible_node_config is not in CAPOCI's placement config"
    ),
    "node_config_details.size": _c("node_count"),
    "node_config_details.compute_cluster_id": _u("compute clusters are not in CAPOCI"),
    "node_config_details.is_pv_encryption_in_transit_enabled": _u(
        "in-transit encryption is not modelled"
    ),
    "node_config_details.kms_key_id": _u("the pool's KMS key is not modelled"),
    "node_config_details.defined_tags": _u("node tags are not modelled"),
    "node_config_details.freeform_tags": _u("node tags are not modelled"),
    f"{_POD}.cni_type": _c("the cluster's cni_type"),
    f"{_POD}.max_pods_per_node": _c("max_pods_per_node"),
    f"{_POD}.pod_nsg_ids": _c("pod_nsg_names (by name in the cluster's network)"),
    f"{_POD}.pod_subnet_ids": _c("pod_subnet_names (by name in the cluster's network)"),
    "node_config_details.nsg_ids": _c("nsg_names (by name in the cluster's network)"),
    "node_eviction_node_pool_settings.eviction_grace_duration": _u(
        "node eviction settings are not modelled"
    ),
    "node_eviction_node_pool_settings.is_force_action_after_grace_duration": _u(
        "node eviction settings are not modelled"
    ),
    "node_eviction_node_pool_settings.is_force_delete_after_grace_duration": _u(
        "node eviction settings are not modelled"
    ),
    "node_image_id": _c("image_id (the older spelling of node_source_details.image_id)"),
    "node_image_name": _u("image by name: CAPOCI takes an image OCID only"),
    "node_metadata": _u("node metadata is not modelled"),
    "node_pool_cycling_details.cycle_modes": _u("cycle modes are not in CAPOCI"),
    "node_pool_cycling_details.is_node_cycling_enabled": _u(
        "the fleet always renders node cycling enabled"
    ),
    "node_pool_cycling_details.maximum_surge": _c("max_surge"),
    "node_pool_cycling_details.maximum_unavailable": _c("max_unavailable"),
    "node_shape_config.memory_in_gbs": _c("memory_gb"),
    "node_shape_config.ocpus": _c("ocpus"),
    "node_source_details.image_id": _c("image_id"),
    "node_source_details.source_type": Fate(DROPPED, "IMAGE, the only source CAPOCI has"),
    "node_source_details.boot_volume_size_in_gbs": _c("boot_volume_size_gb"),
    "primary_vnic.security_attributes": _u("VNIC security attributes are not in CAPOCI"),
    "quantity_per_subnet": _u("legacy placement (quantity_per_subnet): not in CAPOCI"),
    "subnet_ids": _u("legacy placement (subnet_ids): not in CAPOCI"),
    "secondary_vnics.display_name": _u("secondary VNICs are not in CAPOCI"),
    "secondary_vnics.nic_index": _u("secondary VNICs are not in CAPOCI"),
    **{
        f"{_VNIC}.{k}": _u("secondary VNICs are not in CAPOCI")
        for k in (
            "subnet_id",
            "application_resources",
            "assign_ipv6ip",
            "assign_public_ip",
            "defined_tags",
            "display_name",
            "freeform_tags",
            "ip_count",
            "ipv6address_ipv6subnet_cidr_pair_details.ipv6address",
            "ipv6address_ipv6subnet_cidr_pair_details.ipv6subnet_cidr",
            "nsg_ids",
            "security_attributes",
            "skip_source_dest_check",
        )
    },
    "ssh_public_key": _c("ssh_public_key"),
    "lifecycle_details": _OUTPUT,
    "node_source.image_id": _OUTPUT,
    "node_source.source_name": _OUTPUT,
    "node_source.source_type": _OUTPUT,
    "nodes": _OUTPUT,
    "state": _OUTPUT,
    "timeouts": _TERRAFORM,
}
"""``oci_containerengine_node_pool``: every attribute of the v8.28.0 schema (``nodes``, OKE's
list of the pool's nodes, as a whole)."""

FATES: Mapping[str, Mapping[str, Fate]] = {CLUSTER: CLUSTER_FATES, NODE_POOL: POOL_FATES}


def fate_of(resource_type: str, path: str) -> Fate | None:
    """The fate of ``path`` (dotted) of ``resource_type``, or of its nearest ancestor that
    has one (a block dropped as a whole); None when it has none."""
    table = FATES[resource_type]
    parts = path.split(".")
    for end in range(len(parts), 0, -1):
        found = table.get(".".join(parts[:end]))
        if found is not None:
            return found
    return None


def leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every attribute path of a state value with what it holds: a block (a dict, or a
    list of dicts) is walked into, anything else is a leaf (a map attribute such as
    ``freeform_tags`` is a leaf: its keys are data)."""
    if isinstance(value, dict) and prefix and fate_is_map(prefix):
        yield prefix, value
        return
    if isinstance(value, dict):
        for key in sorted(value):
            yield from leaves(value[key], f"{prefix}.{key}" if prefix else key)
        return
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for item in value:
            yield from leaves(item, prefix)
        return
    yield prefix, value


_MAPS = frozenset(
    {
        "defined_tags",
        "freeform_tags",
        "node_metadata",
        "security_attributes",
    }
)


def fate_is_map(path: str) -> bool:
    """Whether the attribute at ``path`` is a TypeMap (its keys are data, not attributes)."""
    return path.rsplit(".", 1)[-1] in _MAPS


def unplaced(resource_type: str, attributes: Mapping[str, Any]) -> list[str]:
    """The attribute paths of ``attributes`` that have no fate (sorted, each once)."""
    found = {
        path
        for path, value in leaves(dict(attributes))
        if path and value not in (None, [], {}) and fate_of(resource_type, path) is None
    }
    return sorted(found)
