"""The root of the construct tree: the fleet, its environments and its declarations."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import cdk8s

from fleet.config import FleetConfig
from fleet.environment import Environment
from fleet.errors import DefinitionError

if TYPE_CHECKING:
    from fleet.fleet_construct import FleetConstruct

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class Fleet(cdk8s.App):
    """The cdk8s App of a fleet: one :class:`Environment` chart per environment.

    Declarations (clusters, projects, packages) are created with the fleet as their
    scope and placed in environments by name; they render at synth time.
    """

    def __init__(self, config: FleetConfig) -> None:
        super().__init__()
        self.config = config
        self._environments = {name: Environment(self, name) for name in config.environments}
        self._constructs: dict[str, FleetConstruct] = {}
        self.revive_retired = False
        """While True, retired clusters and node pools render as if they were not retired.

        ``fleet diff`` sets it for a second render: what only that render holds is what
        retirement took away (see :func:`fleet.cli_diff.retired_objects`)."""

    @property
    def environment_names(self) -> tuple[str, ...]:
        """The environments in their configured order."""
        return self.config.environments

    def environment(self, name: str) -> Environment:
        """The chart of environment ``name`` (add your own cdk8s constructs to it)."""
        try:
            return self._environments[name]
        except KeyError:
            raise DefinitionError(
                f"unknown environment {name!r} (configured: {', '.join(self.environment_names)})",
                field="environment",
            ) from None

    def declarations(self) -> Iterator[FleetConstruct]:
        """Every fleet construct, in declaration order."""
        return iter(self._constructs.values())

    def declaration(self, construct_id: str) -> FleetConstruct:
        """The declaration with id ``construct_id`` (to patch one declared elsewhere)."""
        try:
            return self._constructs[construct_id]
        except KeyError:
            raise DefinitionError(f"no declaration with id {construct_id!r}", field="id") from None

    def register(self, construct: FleetConstruct, construct_id: str, where: str) -> None:
        """Called by FleetConstruct: checks the id before the construct joins the tree."""
        if not _ID.match(construct_id):
            raise DefinitionError(
                "construct id must start with a letter or digit and hold only "
                f"letters, digits, '-', '_' and '.', got {construct_id!r}",
                where=where,
                field="id",
            )
        existing = self._constructs.get(construct_id)
        if existing is not None:
            raise DefinitionError(
                f"duplicate declaration {construct_id!r} (first at {existing.where})",
                where=where,
                field="id",
            )
        if construct_id in self._environments:
            raise DefinitionError(
                f"id {construct_id!r} is the name of an environment", where=where, field="id"
            )
        self._constructs[construct_id] = construct
