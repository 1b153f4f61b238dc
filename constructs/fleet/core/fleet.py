"""The root of a fleet: its environments, its declarations, and its cdk8s App."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError

if TYPE_CHECKING:
    import cdk8s

    from fleet.core.declaration import FleetConstruct
    from fleet.core.environment import Environment

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class Fleet:
    """A fleet: its declarations, placed in environments, and one cdk8s Chart per environment.

    Declarations (clusters, projects, packages) are created with the fleet as their
    scope and placed in environments by name; they render at synth time. The cdk8s
    App and its :class:`~fleet.core.environment.Environment` charts are created the first
    time a declaration module asks for a chart (``fleet.environment("dev")``) to add
    cdk8s constructs of its own: importing cdk8s starts Node.js (0.3 s), which a fleet
    of declarations alone never needs.
    """

    def __init__(self, config: FleetConfig) -> None:
        self.config = config
        self._app: cdk8s.App | None = None
        self._charts: dict[str, Environment] = {}
        self._constructs: dict[str, FleetConstruct] = {}
        self.revive_retired = False
        """While True, retired clusters and node pools render as if they were not retired.

        ``fleet diff`` sets it for a second render: what only that render holds is what
        retirement took away (see :func:`fleet.cli.diff.retired_objects`)."""

    @property
    def app(self) -> cdk8s.App:
        """The fleet's cdk8s App, with one Environment chart per environment."""
        return self._cdk8s()

    def _cdk8s(self) -> cdk8s.App:
        if self._app is None:
            import cdk8s

            from fleet.core.environment import Environment

            app = cdk8s.App()
            self._charts = {name: Environment(app, name) for name in self.environment_names}
            self._app = app
        return self._app

    @property
    def environment_names(self) -> tuple[str, ...]:
        """The environments in their configured order."""
        return self.config.environments

    def check_environment(self, name: str) -> None:
        """Raise the fleet's "unknown environment" error unless ``name`` is configured."""
        self.config.check_environment(name)

    def environment(self, name: str) -> Environment:
        """The cdk8s chart of environment ``name``: add your own cdk8s constructs to it."""
        self.check_environment(name)
        self._cdk8s()
        return self._charts[name]

    def user_objects(self, name: str) -> list[dict[str, Any]]:
        """The objects of the cdk8s constructs added to environment ``name``'s chart."""
        self.check_environment(name)
        chart = self._charts.get(name)
        return chart.user_objects() if chart is not None else []

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
        if construct_id in self.environment_names:
            raise DefinitionError(
                f"id {construct_id!r} is the name of an environment", where=where, field="id"
            )
        self._constructs[construct_id] = construct
