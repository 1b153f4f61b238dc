"""The OKE importer (:class:`fleet.clouds.importer.CloudImporter`): its resource types,
what its modules call and its state planner (no tfvars layout)."""

from __future__ import annotations

from collections.abc import Mapping

from fleet.clouds.importer import GeneratedCode, StateRequest, TfvarsImporter
from fleet.clouds.oci.cluster import OciManagedCluster
from fleet.clouds.oci.importer.fates import CLUSTER
from fleet.clouds.oci.importer.identity import IDENTITY_CLASS
from fleet.clouds.oci.importer.planner import CALLS
from fleet.clouds.oci.importer.resources import CLOUD, specs
from fleet.clouds.oci.importer.state_planner import POOLS, OkeStatePlanner
from fleet.clouds.oci.pool import OkeNodePool
from fleet.codegen.shared import Repetition
from fleet.terraform.attributes import ResourceSpec

CODE = GeneratedCode(
    declaration=OciManagedCluster,
    pool=OkeNodePool,
    pools_keyword=POOLS,
    pools_before=("oci_resource_identifier", "cluster_id", "adoption_tags_applied"),
    repetition=Repetition(varying={"name": "name", "node_pool_id": "pool_id"}),
    calls=CALLS | {IDENTITY_CLASS},
    lookups=frozenset({IDENTITY_CLASS}),
)
"""What a generated OKE module calls."""


class OkeImporter:
    """OKE clusters and node pools from Terraform (oracle/terraform-provider-oci)."""

    @property
    def name(self) -> str:
        """``OKE``."""
        return CLOUD

    @property
    def specs(self) -> Mapping[str, ResourceSpec]:
        """The cluster, node pool and subnet types (:mod:`.resources`)."""
        return specs()

    @property
    def clusters(self) -> frozenset[str]:
        """``oci_containerengine_cluster``."""
        return frozenset({CLUSTER})

    @property
    def code(self) -> GeneratedCode:
        """What its modules call."""
        return CODE

    @property
    def tfvars(self) -> TfvarsImporter | None:
        """None: OKE is imported from state only."""
        return None

    def plan_states(self, request: StateRequest) -> OkeStatePlanner:
        """What the states hold of OKE (all problems raised at once)."""
        return OkeStatePlanner(request)


def load() -> OkeImporter:
    """The importer the plug-in's hook loads."""
    return OkeImporter()
