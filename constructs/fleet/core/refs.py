"""References: a declaration named by id or path in ``define()``, resolved in the prepare phase.

``fleet.declaration("jeedy-edh", OpenStackProject)`` returns a :class:`Ref`, not the
declaration: the module that declares ``jeedy-edh`` may not have run yet. Every reference is
resolved once every ``define()`` has run (:meth:`fleet.core.fleet.Fleet.run_phases`), so the
result never depends on the order modules load in. What a ``define()`` may do with one:

* pass it on where a declaration is expected (``MagnumCluster(project=ref)``,
  ``ArgoRegistration(cluster=ref)``);
* call a mutator on it (``ref.add_json_patch(...)``, ``ref.add_node_group(...)``, or
  ``ref.defer(lambda cluster: ...)``): the call is recorded and applied in the prepare
  phase, before Aspects, in the order of the files that made the calls;
* anything else (reading ``ref.environments``) fails with one line naming the read and the
  look-up. In an Aspect or ``prepare()`` the reference is resolved: ``ref.get()`` is the
  declaration, and its attributes read through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.hints import shown_value
from fleet.core.tree import did_you_mean
from fleet.core.values import JsonPatch, caller_location

if TYPE_CHECKING:
    from fleet.core.declaration import FleetConstruct
    from fleet.core.fleet import Fleet

T_co = TypeVar("T_co", bound="FleetConstruct", covariant=True)
D = TypeVar("D", bound="FleetConstruct")
F = TypeVar("F", bound=Callable[..., Any])

_MUTATOR = "__fleet_mutator__"


def mutator(method: F) -> F:
    """Mark ``method`` as a mutator: called on a :class:`Ref` in ``define()``, it is
    recorded and applied to the declaration in the prepare phase."""
    setattr(method, _MUTATOR, True)
    return method


class UnresolvedReference(DefinitionError, AttributeError):
    """An attribute of a reference read before the prepare phase resolved it.

    Also an AttributeError, so that ``getattr(ref, name, default)`` and ``hasattr`` treat
    the attribute as absent rather than failing.
    """


class Ref(Generic[T_co]):
    """A declaration of kind ``T_co`` named by ``path`` (a path, or an id that one
    declaration has), resolved once every ``define()`` has run.

    Example::

        def define(fleet):
            edh = fleet.declaration("jeedy-edh", OpenStackProject)  # Ref[OpenStackProject]
            MagnumCluster(fleet, "edh-2", project=edh, ...)
            web = fleet.declaration("edh-app", MagnumCluster)
            web.add_node_group(NodeGroup(name="zone-d", flavor="m2.large", node_count=1))
    """

    __slots__ = ("_field", "_fleet", "_target", "_where", "target_kind", "target_path")

    def __init__(
        self, fleet: Fleet, path: str, kind: type[T_co], *, where: str, field: str = "id"
    ) -> None:
        from fleet.core.declaration import FleetConstruct

        given: object = kind  # checked as given: a string is a common slip
        if not (isinstance(given, type) and issubclass(given, FleetConstruct)):
            got = (
                f"the string {given!r}: pass the class itself (from fleet import {given})"
                if isinstance(given, str) and given.isidentifier()
                else shown_value(given)
            )
            raise DefinitionError(
                f"the kind of {path!r} must be a declaration class (imported from fleet), "
                f"got {got}",
                where=where,
                field="kind",
            )
        self._fleet = fleet
        self._target: T_co | None = None
        self._where = where  # resolution errors name the look-up ...
        self._field = field  # ... and this field (``cluster`` for ``cluster="web"``)
        self.target_path = path
        """The path or id looked up."""
        self.target_kind = kind
        """The kind of declaration expected (its class)."""

    @property
    def is_resolved(self) -> bool:
        """Whether the prepare phase has resolved the reference."""
        return self._target is not None

    def get(self) -> T_co:
        """The declaration; before the prepare phase, the error naming this read."""
        if self._target is None:
            raise self._unresolved("get()")
        return self._target

    def add_json_patch(
        self, *ops: JsonPatch, kind: str | None = None, environment: str | None = None
    ) -> None:
        """``add_json_patch`` of the declaration, applied in the prepare phase."""

        def patch(target: FleetConstruct) -> None:
            target.add_json_patch(*ops, kind=kind, environment=environment)

        self._fleet.defer(self, patch)

    def defer(self, action: Callable[[T_co], object]) -> None:
        """Call ``action(declaration)`` in the prepare phase, where mutators still work:
        the typed form of any mutator (``ref.defer(lambda c: c.add_node_group(group))``)."""
        self._fleet.defer(self, action)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        target = self._target
        if target is not None:
            return getattr(target, name)
        attribute = getattr(self.target_kind, name, None)
        if attribute is None:
            mutators = [n for n in dir(self.target_kind) if _is_mutator(self.target_kind, n)]
            hint = did_you_mean(name, mutators, n=1)
            if hint:  # a mutator's name, mistyped (other attributes may be set in __init__)
                raise UnresolvedReference(
                    f"{self.target_kind.__name__} has no method {name!r}{hint}",
                    where=caller_location(),
                    field=name,
                )
        elif getattr(attribute, _MUTATOR, False):
            fleet = self._fleet

            def deferred(*args: Any, **kwargs: Any) -> None:
                def call(target: FleetConstruct) -> None:
                    getattr(target, name)(*args, **kwargs)

                fleet.defer(self, call)

            return deferred
        raise self._unresolved(name)

    def _unresolved(self, name: str) -> UnresolvedReference:
        return UnresolvedReference(
            f"{self.target_path!r} (looked up at {self._where}) is resolved once every "
            "define() has run: pass the reference on, call its mutators (applied then), or "
            "read it in an Aspect or prepare()",
            where=caller_location(),
            field=name,
        )

    def resolve(self) -> None:
        """Find the declaration (the prepare phase calls it); an unknown id or path, or
        another kind, fails naming the look-up."""
        found = self._fleet.find(self.target_path, where=self._where, field=self._field)
        if not isinstance(found, self.target_kind):
            raise DefinitionError(
                f"{self.target_path!r} is {article(type(found).__name__)}, not "
                f"{article(self.target_kind.__name__)}",
                where=self._where,
                field=self._field,
            )
        self._target = found

    def __repr__(self) -> str:
        state = "resolved" if self._target is not None else "unresolved"
        return f"Ref[{self.target_kind.__name__}]({self.target_path!r}, {state})"


def _is_mutator(kind: type, name: str) -> bool:
    return bool(getattr(getattr(kind, name, None), _MUTATOR, False))


def article(noun: str) -> str:
    """``noun`` with its indefinite article: ``an OpenStackProject``, ``a MagnumCluster``."""
    return ("an " if noun[:1] in "AEIOU" else "a ") + noun


def target_of(value: D | Ref[D], field: str) -> D:
    """``value`` itself, or the declaration a reference resolved to (read as ``field``:
    before the prepare phase, the error names it)."""
    if not isinstance(value, Ref):
        return value
    if value._target is None:
        raise value._unresolved(field)
    return value._target


def relocate(error: DefinitionError | DefinitionErrors, where: str) -> DefinitionErrors:
    """``error`` (one or several) placed at ``where``: a deferred call's problems belong
    to the line that made the call, not to the prepare phase that ran it."""
    errors = error.errors if isinstance(error, DefinitionErrors) else [error]
    return DefinitionErrors(
        [DefinitionError(e.message, where=where, field=e.field) for e in errors]
    )
