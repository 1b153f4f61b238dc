"""The OKE resource types of the Terraform OCI provider as the import hook reads them
(:class:`~fleet.terraform.attributes.ResourceSpec`, one per type).

OKE's attributes are nested blocks (``node_config_details.placement_configs.subnet_id``), so
what each becomes is :mod:`.fates`' table of dotted paths rather than an option table: a
:class:`FateSpec` refuses any attribute path of a state that has no fate there
(:meth:`FateSpec.unplaced`), and reads the provider's types of the top-level scalars
(:data:`SCHEMAS`). Subnets are read for their type and name only (:data:`SUBNET`), and
compartments for their parent only (:data:`COMPARTMENT`: the tenancy a cluster's compartment
is in names its :class:`~fleet.OciClusterIdentity`): they are never imported, so none of
their attributes is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fleet.clouds.oci.cluster import OciManagedCluster
from fleet.clouds.oci.identity import OciClusterIdentity
from fleet.clouds.oci.importer.fates import (
    CLUSTER,
    COMPARTMENT,
    NODE_POOL,
    PROVIDER,
    SUBNET,
    unplaced,
)
from fleet.clouds.oci.network import OkeExistingVcn
from fleet.clouds.oci.pool import OkeNodePool
from fleet.terraform.attributes import ResourceSpec
from fleet.terraform.state import ResourceSchema, StateResource

CLOUD = "OKE"
"""Who holds the real objects, for messages and the report."""

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
    COMPARTMENT: ResourceSchema(
        provider=PROVIDER,
        attributes={"id": "string", "compartment_id": "string"},
    ),
}
"""The resource types read, with the provider's type of each scalar attribute read
(oracle/terraform-provider-oci v8.28.0 ``containerengine_*_resource.go``,
``core_subnet_resource.go``, ``identity_compartment_resource.go``)."""


@dataclass(frozen=True, kw_only=True)
class FateSpec(ResourceSpec):
    """A resource type whose attributes' fates are :mod:`.fates`' dotted paths."""

    checked: bool = True
    """Whether every attribute must have a fate (False: read for context only)."""

    def schema(self) -> ResourceSchema:
        """The provider's types of the top-level scalars read (:data:`SCHEMAS`)."""
        return SCHEMAS[self.resource_type]

    def unplaced(self, resource: StateResource) -> list[str]:
        """The attribute paths (nested blocks dotted) with a value and no fate, sorted."""
        if not self.checked:
            return []
        return unplaced(self.resource_type, resource.attributes)


def specs() -> Mapping[str, ResourceSpec]:
    """The four resource types, by Terraform type."""
    return {
        CLUSTER: FateSpec(
            resource_type=CLUSTER,
            table=OciManagedCluster,
            provider=PROVIDER,
            placed={},
            dropped={},
        ),
        NODE_POOL: FateSpec(
            resource_type=NODE_POOL,
            table=OkeNodePool,
            provider=PROVIDER,
            placed={},
            dropped={},
        ),
        SUBNET: FateSpec(
            resource_type=SUBNET,
            table=OkeExistingVcn,
            provider=PROVIDER,
            placed={},
            dropped={},
            checked=False,
        ),
        COMPARTMENT: FateSpec(
            resource_type=COMPARTMENT,
            table=OciClusterIdentity,
            provider=PROVIDER,
            placed={},
            dropped={},
            checked=False,
        ),
    }
