"""The Magnum importer (:class:`fleet.clouds.importer.CloudImporter`): its resource types,
what its modules call, its state planner and its tfvars layout."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from fleet.clouds.importer import GeneratedCode, StateRequest
from fleet.clouds.magnum.importer.code import generated_code
from fleet.clouds.magnum.importer.planner import MagnumStatePlanner
from fleet.clouds.magnum.importer.resources import CLOUD, CLUSTER, Tables, specs
from fleet.clouds.magnum.importer.tfvars_plan import MagnumTfvars
from fleet.terraform.attributes import ResourceSpec


@dataclass(frozen=True, kw_only=True)
class MagnumImporter:
    """Magnum clusters, node groups and templates from Terraform, declared with
    ``tables`` (the built-in classes unless a test or a subclass gives others)."""

    tables: Tables = field(default_factory=Tables)

    @property
    def name(self) -> str:
        """``Magnum``."""
        return CLOUD

    @property
    def specs(self) -> Mapping[str, ResourceSpec]:
        """The three resource types (:mod:`fleet.clouds.magnum.importer.resources`)."""
        return specs(self.tables)

    @property
    def clusters(self) -> frozenset[str]:
        """``openstack_containerinfra_cluster_v1``."""
        return frozenset({CLUSTER})

    @property
    def code(self) -> GeneratedCode:
        """What its modules call."""
        return generated_code(self.tables)

    @property
    def tfvars(self) -> MagnumTfvars:
        """The seed's tfvars layout."""
        return MagnumTfvars()

    def plan_states(self, request: StateRequest) -> MagnumStatePlanner:
        """What the states hold of Magnum (all problems raised at once)."""
        return MagnumStatePlanner(request, self.tables)


def load() -> MagnumImporter:
    """The importer the plug-in's hook loads."""
    return MagnumImporter()
