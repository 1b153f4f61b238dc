"""The OKE clusters of Terraform states: each ``oci_containerengine_cluster`` with the
``oci_containerengine_node_pool`` s whose ``cluster_id`` is its OCID, and the
``oci_core_subnet`` s the states hold (for their type and name), and the parent of each
``oci_identity_compartment`` (for the tenancy a cluster is in).

Read by the import hook through :mod:`fleet.terraform.state` (tfstate v4 and ``terraform
show -json``), which refuses any attribute of a cluster or pool without a fate
(:class:`fleet.clouds.oci.importer.resources.FateSpec`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleet.clouds.oci.importer.fates import CLUSTER, COMPARTMENT, NODE_POOL, SUBNET
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.terraform.state import StateFile, StateResource


@dataclass(frozen=True)
class OkeState:
    """One OKE cluster of one state, with its node pools, in state order."""

    cluster: StateResource
    pools: tuple[StateResource, ...]
    state: StateFile
    subnets: Mapping[str, StateResource]
    """Subnet OCID -> the subnet, for every ``oci_core_subnet`` of the same state."""
    compartments: Mapping[str, str] = field(default_factory=dict)
    """Compartment OCID -> its parent's (``compartment_id``), for every
    ``oci_identity_compartment`` of the same state."""

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


def group_states(files: Sequence[StateFile]) -> list[OkeState]:
    """Every OKE cluster of ``files`` (already read, every attribute placed), with its
    node pools; raises the DefinitionErrors of all of them at once (a node pool of a
    cluster no state holds, a cluster given twice)."""
    errors: list[DefinitionError] = []
    found: list[OkeState] = []
    seen: dict[str, str] = {}
    for state in files:
        subnets = {
            str(r.attributes["id"]): r
            for r in state.resources
            if r.type == SUBNET and r.attributes.get("id")
        }
        compartments = {
            str(r.attributes["id"]): str(r.attributes.get("compartment_id") or "")
            for r in state.resources
            if r.type == COMPARTMENT and r.attributes.get("id")
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
            ocid = str(cluster.attributes.get("id"))
            first = seen.setdefault(ocid, cluster.where)
            if first != cluster.where:
                errors.append(
                    DefinitionError(
                        f"cluster {ocid} is also {first}: pass each state once",
                        where=cluster.where,
                    )
                )
                continue
            own = tuple(p for p in pools if p.attributes.get("cluster_id") == ocid)
            found.append(
                OkeState(
                    cluster=cluster,
                    pools=own,
                    state=state,
                    subnets=subnets,
                    compartments=compartments,
                )
            )
    if errors:
        raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
    return found
