"""The root of a fleet: its environments, its declarations, and its cdk8s App."""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, overload

from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors, FleetError
from fleet.core.manifest import Manifest
from fleet.core.refs import Ref, relocate
from fleet.core.tree import Node, TreeConstruct, apply_aspects, did_you_mean
from fleet.core.usercode import raised_at
from fleet.core.values import caller_location

if TYPE_CHECKING:
    import cdk8s

    from fleet.core.declaration import FleetConstruct
    from fleet.core.environment import Environment

D = TypeVar("D", bound="FleetConstruct")
C = TypeVar("C")


class _Deferred:
    """A mutator called on a reference in ``define()``, applied in the prepare phase."""

    __slots__ = ("action", "order", "ref", "where")

    def __init__(
        self, ref: Ref[Any], action: Callable[[Any], object], where: str, seq: int
    ) -> None:
        self.ref = ref
        self.action = action
        self.where = where
        # The file that made the call, then the order of calls within it: the same
        # whatever order the modules were loaded in.
        self.order = (where.rpartition(":")[0], seq)


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
        self._mutators_allowed = False
        self._refs: list[Ref[Any]] = []
        self._deferred: list[_Deferred] = []
        self._seq = itertools.count()
        self._catalogs: dict[Callable[[], Any], Any] = {}
        self._by_kind: dict[type[Any], tuple[Any, ...]] = {}
        self.revive_retired = False
        """While True, retired clusters and node pools render as if they were not retired.

        ``fleet diff`` sets it for a second render: what only that render holds is what
        retirement took away (see :func:`fleet.pipeline.diff.retired_in`)."""

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

    def user_manifests(self, name: str, folder: str) -> list[Manifest]:
        """:meth:`user_objects` as manifests in ``folder``, from ``cdk8s chart <name>``;
        objects that share an identity name their own construct paths, so that the
        duplicate error tells them apart."""
        source = f"cdk8s chart {name}"
        out = [Manifest(name, body, folder, source) for body in self.user_objects(name)]
        counts = Counter(m.identity for m in out)
        clashes = {identity for identity, n in counts.items() if n > 1}
        if not clashes:
            return out
        paths = self._charts[name].paths_of(clashes)
        return [
            Manifest(name, m.body, folder, f"cdk8s {paths[m.identity].pop(0)}")
            if paths.get(m.identity)
            else m
            for m in out
        ]

    def declarations(self) -> Iterator[FleetConstruct]:
        """Every fleet declaration, in the order they were created (whatever their scope)."""
        return iter(self._constructs)

    def declarations_of(self, kind: type[D]) -> tuple[D, ...]:
        """Every declaration that is a ``kind``, in the order they were created.

        Once the tree is locked (no declaration is added after ``define()``) the answer is
        kept per kind: a lookup made once per cluster and environment (the environment's
        :class:`~fleet.ManagementCluster`) reads a few declarations, not all of them.
        """
        found = self._by_kind.get(kind)
        if found is None:
            found = tuple(c for c in self._constructs if isinstance(c, kind))
            if self.node.locked:
                self._by_kind[kind] = found
        return found

    @overload
    def declaration(self, path: str) -> Ref[FleetConstruct]: ...

    @overload
    def declaration(self, path: str, kind: type[D]) -> Ref[D]: ...

    def declaration(self, path: str, kind: type[Any] | None = None) -> Ref[Any]:
        """A reference to the declaration at ``path`` (``"web"``, ``"team-a/web"``), or to
        the one declaration whose id is ``path``, of kind ``kind`` (default: any).

        In ``define()`` the reference is resolved later, once every module's ``define()``
        has run, so the declaration may come from any module: pass it on
        (``project=fleet.declaration("jeedy-edh", OpenStackProject)``) or call its mutators
        (applied then). An unknown id, or another kind, fails naming this line (with the
        nearest ids). In an Aspect or ``prepare()`` it is resolved at once: ``.get()``.
        """
        from fleet.core.declaration import FleetConstruct

        return self.reference(path, kind or FleetConstruct, where=caller_location())

    def reference(self, path: str, kind: type[D], *, where: str, field: str = "id") -> Ref[D]:
        """A :class:`~fleet.core.refs.Ref` to ``path``, for a declaration that takes a
        declaration by id (``ArgoRegistration(cluster="web")``): resolution errors name
        ``where`` and ``field``."""
        ref = Ref(self, path, kind, where=where, field=field)
        if self.node.locked:
            ref.resolve()  # every declaration exists: resolve (or fail) now
        else:
            self._refs.append(ref)
        return ref

    def find(self, path: str, *, where: str, field: str = "id") -> FleetConstruct:
        """The declaration at ``path``, or the one declaration whose id is ``path``;
        otherwise an error at ``where`` naming the nearest ids."""
        found = self._by_path.get(path)
        if found is not None:
            return found
        same_id = [c for c in self._constructs if c.construct_id == path]
        if len(same_id) == 1:
            return same_id[0]
        if same_id:
            raise DefinitionError(
                f"{len(same_id)} declarations have id {path!r}; name one by its path "
                f"({', '.join(repr(c.node.path) for c in same_id)})",
                where=where,
                field=field,
            )
        known = list(dict.fromkeys([*self._by_path, *(c.construct_id for c in self._constructs)]))
        raise DefinitionError(
            f"no declaration with id {path!r}{did_you_mean(path, sorted(known))}",
            where=where,
            field=field,
        )

    def defer(self, ref: Ref[D], action: Callable[[D], object]) -> None:
        """Apply ``action`` to what ``ref`` names: in the prepare phase when the reference
        is not resolved yet (``define()``), else now."""
        if ref.is_resolved:
            action(ref.get())
            return
        self._deferred.append(_Deferred(ref, action, caller_location(), next(self._seq)))

    def catalog(self, kind: Callable[[], C]) -> C:
        """The fleet's one ``kind()`` (made on first use): where a cloud keeps what it
        knows per fleet (``TemplateCatalog.of(fleet)``), never in a module global."""
        found = self._catalogs.get(kind)
        if found is None:
            found = self._catalogs[kind] = kind()
        return found

    def register(self, construct: FleetConstruct) -> None:
        """Called by FleetConstruct once its node is in the tree."""
        self._constructs.append(construct)
        self._by_path[construct.node.path] = construct
        self._by_kind.clear()

    # --- phases ---------------------------------------------------------------------------

    def run_phases(self) -> None:
        """After every ``define()``: lock the tree, resolve references, apply the mutators
        called on them, run each declaration's ``prepare()`` (lookups by name), apply
        Aspects, then every validation. Once per fleet; problems are raised together
        (DefinitionErrors), and again on a later call."""
        if isinstance(self._phases, DefinitionErrors):
            raise self._phases
        if self._phases:
            return
        self.node.lock()
        errors: list[DefinitionError] = []
        try:
            for ref in self._refs:
                _collect(errors, ref.resolve)
            self._stop_on(errors)
            self._mutators_allowed = True
            for deferred in sorted(self._deferred, key=lambda d: d.order):
                _collect(errors, functools.partial(self._apply, deferred))
            self._mutators_allowed = False
            for construct in self._constructs:
                _collect(errors, construct.prepare)
            self._stop_on(errors)
            self._mutators_allowed = True
            _collect(errors, lambda: apply_aspects(self.node))
            self._mutators_allowed = False
            for host in self.node.find_all():
                try:
                    messages = host.node.validate()
                except DefinitionError as e:  # a validation that is itself broken
                    errors.append(e)
                    continue
                for message in messages:
                    errors.append(
                        DefinitionError(
                            message, where=getattr(host, "context", ""), field="validation"
                        )
                    )
            self._stop_on(errors)
        finally:
            self._mutators_allowed = False
        self._refs.clear()
        self._deferred.clear()
        self._phases = True

    def _stop_on(self, errors: list[DefinitionError]) -> None:
        if errors:
            self._phases = DefinitionErrors(errors)
            raise self._phases

    @staticmethod
    def _apply(deferred: _Deferred) -> None:
        target = deferred.ref.get()
        try:
            deferred.action(target)
        except (DefinitionError, DefinitionErrors) as e:
            raise relocate(e, f"{deferred.where} ({target.node.path})") from None
        except FleetError:
            raise
        except Exception as e:  # the user's lambda, or a mutator given wrong arguments
            raise DefinitionError(
                f"the mutator called at {deferred.where} raised {type(e).__name__}: {e} "
                f"(applied to {target.node.path})",
                where=raised_at(e, deferred.where),
                field="defer",
            ) from e

    @property
    def mutators_allowed(self) -> bool:
        """Whether mutators work on the locked tree: while Aspects visit, and while the
        mutators called on references in ``define()`` are applied."""
        return self._mutators_allowed


def _collect(errors: list[DefinitionError], step: Any) -> None:
    try:
        step()
    except DefinitionErrors as e:
        errors.extend(e.errors)
    except DefinitionError as e:
        errors.append(e)


def fleet_argument(value: object, owner: str) -> Fleet:
    """``value`` when it is a :class:`Fleet`, else the one-line error at the user's call:
    ``owner`` (``"checks belong"``, say) belongs to the Fleet, the argument of define().
    What ``Checks.of`` and ``Platform.of`` check of their argument."""
    if not isinstance(value, Fleet):
        raise DefinitionError(
            f"{owner} to the Fleet (the argument of define()), got {type(value).__name__}",
            where=caller_location(),
            field="fleet",
        )
    return value
