"""The root of a fleet: its environments, its declarations, and its cdk8s App."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.tree import Node, TreeConstruct, apply_aspects, did_you_mean
from fleet.core.values import caller_location

if TYPE_CHECKING:
    import cdk8s

    from fleet.core.declaration import FleetConstruct
    from fleet.core.environment import Environment


class Fleet(TreeConstruct):
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
        self.node = Node(self, None, "", "")
        self.fleet = self
        """The root of the construct tree (id and path ``""``)."""
        self._app: cdk8s.App | None = None
        self._charts: dict[str, Environment] = {}
        self._constructs: list[FleetConstruct] = []
        self._by_path: dict[str, FleetConstruct] = {}
        self._phases: DefinitionErrors | bool = False
        self._in_aspects = False
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
            self._charts = {
                name: Environment(app, name, fleet=self) for name in self.environment_names
            }
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
        """Every fleet declaration, in the order they were created (whatever their scope)."""
        return iter(self._constructs)

    def declaration(self, path: str) -> FleetConstruct:
        """The declaration at ``path`` (``"web"``, ``"team-a/web"``), or the one declaration
        whose id is ``path``: to patch one declared elsewhere.

        Unknown: an error naming the caller's file:line and the nearest ids. Called in a
        ``define()``, it sees only modules loaded before; an Aspect or a declaration's
        ``prepare()`` sees every declaration.
        """
        found = self._by_path.get(path)
        if found is not None:
            return found
        same_id = [c for c in self._constructs if c.construct_id == path]
        if len(same_id) == 1:
            return same_id[0]
        where = caller_location()
        if same_id:
            raise DefinitionError(
                f"{len(same_id)} declarations have id {path!r}; name one by its path "
                f"({', '.join(repr(c.node.path) for c in same_id)})",
                where=where,
                field="id",
            )
        known = list(dict.fromkeys([*self._by_path, *(c.construct_id for c in self._constructs)]))
        hint = did_you_mean(path, known)
        if not hint and not self._phases:
            hint = " (declared in a module loaded later? look it up in an Aspect or prepare())"
        raise DefinitionError(f"no declaration with id {path!r}{hint}", where=where, field="id")

    def register(self, construct: FleetConstruct) -> None:
        """Called by FleetConstruct once its node is in the tree."""
        self._constructs.append(construct)
        self._by_path[construct.node.path] = construct

    # --- phases ---------------------------------------------------------------------------

    def run_phases(self) -> None:
        """After every ``define()``: lock the tree, apply Aspects, run each declaration's
        ``prepare()`` (cross-declaration lookups), then every validation. Once per fleet;
        problems are raised together (DefinitionErrors), and again on a later call."""
        if isinstance(self._phases, DefinitionErrors):
            raise self._phases
        if self._phases:
            return
        errors: list[DefinitionError] = []
        self.node.lock()
        self._in_aspects = True
        try:
            _collect(errors, lambda: apply_aspects(self.node))
        finally:
            self._in_aspects = False
        for construct in self._constructs:
            _collect(errors, construct.prepare)
        for host in self.node.find_all():
            for message in host.node.validate():
                errors.append(
                    DefinitionError(message, where=getattr(host, "context", ""), field="validation")
                )
        if errors:
            self._phases = DefinitionErrors(errors)
            raise self._phases
        self._phases = True

    @property
    def in_aspects(self) -> bool:
        """Whether Aspects are visiting (they may patch declarations of the locked tree)."""
        return self._in_aspects


def _collect(errors: list[DefinitionError], step: Any) -> None:
    try:
        step()
    except DefinitionErrors as e:
        errors.extend(e.errors)
    except DefinitionError as e:
        errors.append(e)
