"""The Magnum resource types of terraform-provider-openstack, once each: the declaration
class whose option table holds their attributes, the attributes this importer places by
its own code, and those it drops, with why.

Every attribute terraform-provider-openstack v3.4.0 declares for
``openstack_containerinfra_cluster_v1``, ``_nodegroup_v1`` and ``_clustertemplate_v1`` (and
the template's data source; ``openstack/resource_openstack_containerinfra_<kind>_v1.go``,
``data_source_openstack_containerinfra_clustertemplate_v1.go``; every earlier release
declares a subset of them) is one of these three, plus ``id`` and ``timeouts``: an
attribute of a state that is none of them is refused
(:meth:`fleet.terraform.attributes.ResourceSpec.unplaced`). What Magnum copies when an
attribute is left out is the option's ``inherits`` column (openstack/magnum 22.0.0
``magnum/api/controllers/v1/cluster.py`` ``ClustersController._post``, ``nodegroup.py``
``NodeGroupController.post``), its defaults ``cloud_default``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fleet.clouds.magnum.cluster import MagnumCluster
from fleet.clouds.magnum.pool import NodeGroup
from fleet.clouds.magnum.template import ClusterTemplate
from fleet.terraform.attributes import ResourceSpec

CLUSTER = "openstack_containerinfra_cluster_v1"
NODEGROUP = "openstack_containerinfra_nodegroup_v1"
TEMPLATE = "openstack_containerinfra_clustertemplate_v1"
PROVIDER = "terraform-provider-openstack"
CLOUD = "Magnum"
"""Who holds the real objects, for the report."""

_TIMESTAMPS = {
    "created_at": "Magnum's timestamp (Computed)",
    "updated_at": "Magnum's timestamp (Computed)",
}
_TIMEOUTS = {"timeouts": "Terraform's own operation timeouts, not Magnum's"}


@dataclass(frozen=True, kw_only=True)
class Tables:
    """The declaration classes the importer declares with (a subclass that adds an option
    is imported with it, nothing else changing)."""

    cluster: type[MagnumCluster] = MagnumCluster
    group: type[NodeGroup] = NodeGroup
    template: type[ClusterTemplate] = ClusterTemplate


def specs(tables: Tables) -> Mapping[str, ResourceSpec]:
    """The three resource types, by Terraform type."""
    return {
        CLUSTER: ResourceSpec(
            resource_type=CLUSTER,
            table=tables.cluster,
            provider=PROVIDER,
            placed={
                "id": ("string", "the declaration's external_name: the cluster is adopted by it"),
                "name": ("string", "the declaration's name"),
                "project_id": ("string", "the project (OpenStackProject project_id)"),
            },
            kinds={"cluster_template_id": "string"},
            dropped={
                **_TIMESTAMPS,
                **_TIMEOUTS,
                "api_address": "Magnum's (Computed): where the API listens",
                "coe_version": "Magnum's (Computed): what runs (read for the template's "
                "Kubernetes version)",
                "container_version": "Magnum's (Computed)",
                "kubeconfig": "Magnum's credentials (Computed, sensitive): never written",
                "master_addresses": "Magnum's (Computed)",
                "node_addresses": "Magnum's (Computed)",
                "stack_id": "Magnum's Heat stack (Computed)",
                "user_id": "Magnum's (Computed): who created it",
            },
        ),
        NODEGROUP: ResourceSpec(
            resource_type=NODEGROUP,
            table=tables.group,
            provider=PROVIDER,
            placed={
                "id": ("string", "the node group's external_name: it is adopted by it"),
                "cluster_id": ("string", "its cluster (the cluster's external name)"),
            },
            kinds={"region": "string"},
            dropped={
                **_TIMESTAMPS,
                **_TIMEOUTS,
                "project_id": "its cluster's project (Computed)",
                "region": "its cluster's region (Optional+Computed: Magnum creates a node "
                "group where its cluster is)",
            },
        ),
        TEMPLATE: ResourceSpec(
            resource_type=TEMPLATE,
            table=tables.template,
            provider=PROVIDER,
            placed={"id": ("string", "the template's uuid")},
            kinds={"region": "string"},
            dropped={
                **_TIMESTAMPS,
                **_TIMEOUTS,
                "project_id": "Magnum's (Computed): the project that owns it",
                "user_id": "Magnum's (Computed): who created it",
                "region": "the provider's region (Computed): the uuid is per region",
            },
        ),
    }
