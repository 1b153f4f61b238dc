"""The OKE clusters of Terraform states: each ``oci_containerengine_cluster`` with the
``oci_containerengine_node_pool`` s whose ``cluster_id`` is its OCID, and the
``oci_core_subnet`` s the states hold (for their type and name).

Read through :mod:`fleet.terraform.state` (tfstate v4 and ``terraform show -json``); every
attribute of a cluster or pool must have a fate (:func:`fleet.clouds.oci.importer.fates.unplaced`),
or the import is refused, naming the state, the address and the attribute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleet.clouds.oci.importer.fates import CLUSTER, NODE_POOL, PROVIDER, SUBNET, unplaced
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.terraform.state import ResourceSchema, StateFile, StateResource, read_state_file

SCHEMAS: Mapping[str, ResourceSchema] = {
    CLUSTER: ResourceSchema(
        provider=PROVIDER,
        attributes={
            "id": "string",
            "name": "string",
            "compartment_id": "string",
            "kubernetes_version": "string",
            "vcn_id": "string",
            "type": "string",
            "kms_key_id": "string",
            "freeform_tags": "map",
            "defined_tags": "map",
        },
    ),
    NODE_POOL: ResourceSchema(
        provider=PROVIDER,
        attributes={
            "id": "string",
            "cluster_id": "string",
            "name": "string",
            "node_shape": "string",
            "kubernetes_version": "string",
            "node_image_id": "string",
            "node_image_name": "string",
            "ssh_public_key": "string",
            "quantity_per_subnet": "int",
            "freeform_tags": "map",
            "defined_tags": "map",
            "node_metadata": "map",
        },
    ),
    SUBNET: ResourceSchema(
        provider=PROVIDER,
        attributes={
            "id": "string",
            "display_name": "string",
            "prohibit_public_ip_on_vnic": "bool",
        },
    ),
}
"""The resource types read, with the provider's type of each scalar attribute read
(oracle/terraform-provider-oci v8.28.0 ``containerengine_*_resource.go``,
``core_subnet_resource.go``)."""


@dataclass(frozen=True)
class OkeState:
    """One OKE cluster of one state, with its node pools, in state order."""

    cluster: StateResource
    pools: tuple[StateResource, ...]
    state: StateFile
    subnets: Mapping[str, StateResource]
    """Subnet OCID -> the subnet, for every ``oci_core_subnet`` of the same state."""

    @property
    def name(self) -> str:
        """The cluster's name in OKE."""
        return str(self.cluster.attributes.get("name") or "")


def block(attributes: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """The first item of a nested block (Terraform keeps a block as a list), {} if none."""
    value = attributes.get(name)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return dict(value[0])
    return {}


def read_states(states: Sequence[tuple[Path, str | None]]) -> list[OkeState]:
    """Every OKE cluster of ``states`` (path, environment given for it); raises the
    DefinitionErrors of all of them at once (unreadable, an attribute with no fate, a node
    pool of a cluster no state holds)."""
    errors: list[DefinitionError] = []
    found: list[OkeState] = []
    for path, environment in states:
        try:
            state = read_state_file(path, SCHEMAS, environment=environment)
        except DefinitionError as e:
            errors.append(e)
            continue
        for resource in state.resources:
            if resource.type in (CLUSTER, NODE_POOL):
                errors.extend(
                    DefinitionError(
                        f"the state holds {attribute!r}, which the OKE importer neither "
                        f"places nor drops ({PROVIDER} has no such attribute): add its fate "
                        "to fleet/clouds/oci/importer/fates.py",
                        where=resource.where,
                        field=attribute,
                    )
                    for attribute in unplaced(resource.type, resource.attributes)
                )
        subnets = {
            str(r.attributes["id"]): r
            for r in state.resources
            if r.type == SUBNET and r.attributes.get("id")
        }
        clusters = [r for r in state.resources if r.type == CLUSTER and r.mode == "managed"]
        pools = [r for r in state.resources if r.type == NODE_POOL and r.mode == "managed"]
        ids = {str(c.attributes.get("id")) for c in clusters}
        for pool in pools:
            if str(pool.attributes.get("cluster_id")) not in ids:
                errors.append(
                    DefinitionError(
                        "a node pool of a cluster this state does not hold: pass the state "
                        "of its cluster too (or import the cluster's state alone)",
                        where=pool.where,
                        field="cluster_id",
                    )
                )
        for cluster in clusters:
            own = tuple(
                p for p in pools if p.attributes.get("cluster_id") == cluster.attributes.get("id")
            )
            found.append(OkeState(cluster=cluster, pools=own, state=state, subnets=subnets))
    if errors:
        raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
    return found
