"""The base of every fleet declaration: placed in environments, rendered per environment."""

from __future__ import annotations

import inspect
from abc import ABCMeta, abstractmethod
from collections.abc import Sequence
from functools import cached_property
from types import FunctionType
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, TypeVar, cast, dataclass_transform

import jsonpatch

from fleet.core.arguments import CheckedArguments
from fleet.core.errors import DefinitionError, FleetError
from fleet.core.manifest import Manifest
from fleet.core.options import argument_table, declare_fields, field_names, option
from fleet.core.tree import Scope, TreeConstruct, attach, did_you_mean, narrow_environments
from fleet.core.values import (
    JsonPatch,
    argument_location,
    caller_location,
    location_of,
    relocate,
)

if TYPE_CHECKING:
    from fleet.core.fleet import Fleet


_T = TypeVar("_T")
_KEYWORDS: dict[type, frozenset[str] | None] = {}


def _keywords(cls: type) -> frozenset[str] | None:
    """The keywords a class with its own ``__init__`` takes (None: it takes ``**kwargs``,
    passed on to the base class, which checks them)."""
    known = _KEYWORDS.get(cls, frozenset())
    if known == frozenset():
        params = inspect.signature(cls.__init__).parameters.values()  # type: ignore[misc]
        names = {p.name for p in params if p.kind is not p.VAR_POSITIONAL}
        known = None if any(p.kind is p.VAR_KEYWORD for p in params) else frozenset(names)
        _KEYWORDS[cls] = known
    return known


_METHODS = (FunctionType, property, classmethod, staticmethod, cached_property)
"""What a class body defines as behaviour (a method, a property): what a field or an
attribute of a subclass must not hide."""
_MEMBERS = "_fleet_members"


def _methods(cls: type) -> dict[str, type]:
    """Name -> the class defining it, for every method and property ``cls`` has (its own
    and its bases'), dunders left out."""
    found: dict[str, type] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, _METHODS) and not name.startswith("__"):
                found[name] = klass
            elif name in found and not isinstance(value, _METHODS):
                del found[name]
    return found


def _hidden(cls: type, name: str) -> tuple[type, Any] | None:
    """(the base, its member) that ``name`` in ``cls``'s own body would hide: a base's
    method, property or class attribute that is not one of its fields."""
    fields = {n for klass in cls.__mro__[1:] for n in field_names(klass)}
    for base in cls.__mro__[1:]:
        if name in vars(base) and name not in fields:
            return base, vars(base)[name]
    return None


def _refuse_hiding(cls: type, namespace: dict[str, Any]) -> None:
    """A class body that hides a base's member with data (a field named like a method,
    ``cloud_name = ...`` over ``cloud_name()``): one line at the class, naming both."""
    fields = set(field_names(cls))
    for name, value in namespace.items():
        if name.startswith("__") or name == _MEMBERS:
            continue
        found = _hidden(cls, name)
        if found is None:
            continue
        base, member = found
        is_field = name in fields
        if isinstance(value, _METHODS) and isinstance(member, _METHODS):
            continue  # an override
        if not is_field and not isinstance(member, _METHODS):
            continue  # a class attribute given another value (a ClassVar such as ``cloud``)
        what = "field" if is_field else "class attribute"
        raise DefinitionError(
            f"{cls.__name__}.{name}: a {what} would hide {base.__name__}.{name} "
            f"({_describe(member)}), which the fleet calls; rename it",
            where=_class_location(cls),
            field=name,
        )
    for name in fields - set(namespace):
        found = _hidden(cls, name)
        if found is not None:  # an annotation without a value (a required field)
            base, member = found
            raise DefinitionError(
                f"{cls.__name__}.{name}: a field would hide {base.__name__}.{name} "
                f"({_describe(member)}), which the fleet calls; rename it",
                where=_class_location(cls),
                field=name,
            )


def _describe(member: object) -> str:
    if isinstance(member, property | cached_property):
        return "a property"
    if isinstance(member, _METHODS):
        return "a method"
    return "a class attribute"


def _class_location(cls: type) -> str:
    """``file:line`` of the ``class`` statement (the caller of the metaclass)."""
    try:
        lines = inspect.getsourcelines(cls)[1]
        return location_of(inspect.getsourcefile(cls) or "", lines)
    except (OSError, TypeError):
        return caller_location()


@dataclass_transform(eq_default=False, kw_only_default=True, field_specifiers=(option,))
class _Sealed(ABCMeta):
    """The metaclass of declarations.

    Type checkers (pyright, mypy) read a declaration's fields (``option``) as its
    constructor's signature (``typing.dataclass_transform``), unless the class defines
    ``__init__``. At run time it collects each class's fields, refuses a field or class
    attribute that would hide a base's method or property, checks the keywords of a
    class with its own ``__init__`` (one line naming the unknown keyword, not a TypeError
    about another one), refuses a class that leaves an abstract method unimplemented,
    points an error about an argument at the argument's line, and seals the declaration
    once its constructor (the whole subclass chain) has returned.
    """

    # ABCMeta's checks also consult classes registered as virtual subclasses, at about three
    # times the cost of type's on a miss; declarations have none, and the fleet asks
    # isinstance of every declaration in its loops: type's own checks, abstract methods kept.
    __instancecheck__ = type.__instancecheck__
    __subclasscheck__ = type.__subclasscheck__

    def __init__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> None:
        super().__init__(name, bases, namespace)
        init = namespace.get("__init__")
        if init is None or getattr(init, "_fleet_generic", False):
            declare_fields(cls)
        _refuse_hiding(cls, namespace)
        # What an instance attribute must not hide, looked up on every assignment.
        cls._fleet_members = _methods(cls)

    def __call__(cls: type[_T], *args: Any, **kwargs: Any) -> _T:
        missing = sorted(getattr(cls, "__abstractmethods__", ()))
        if missing:
            owners = {next(k.__name__ for k in cls.__mro__ if name in vars(k)) for name in missing}
            raise DefinitionError(
                f"{cls.__name__} cannot be declared: it does not implement "
                f"{', '.join(missing)} (abstract in {', '.join(sorted(owners))})",
                where=caller_location(),
                field=cls.__name__,
            )
        if not getattr(cls.__init__, "_fleet_generic", False):
            known = _keywords(cls)
            if known is not None and not known.issuperset(kwargs):
                unknown = sorted(set(kwargs) - known)[0]
                raise DefinitionError(
                    f"unknown keyword argument of {cls.__name__}"
                    + did_you_mean(unknown, sorted(known - {"self", "scope", "construct_id"}), n=1),
                    where=argument_location(unknown),
                    field=unknown,
                )
        try:
            obj = type.__call__(cls, *args, **kwargs)
        except FleetError as e:
            relocate(e, kwargs)
            raise
        object.__setattr__(obj, "_sealed", True)
        return cast(_T, obj)


class FleetConstruct(TreeConstruct, CheckedArguments, metaclass=_Sealed):
    """A declaration in the fleet (a cluster, a project, a package).

    A construct in the cdk8s sense (``(scope, id, *, props)``, checked at construction,
    one id per scope) in a pure-Python tree (:mod:`fleet.core.tree`) rather than a jsii
    object in Node.js, which cost about 1 ms per declaration, a second at 1,000 clusters
    (docs/performance.md). ``scope`` is the :class:`Fleet`, a
    :class:`~fleet.core.tree.Component`, another declaration, or a cdk8s construct in an
    environment chart. Subclasses render plain dicts in :meth:`render`;
    ``add_json_patch`` is the escape hatch for what a construct does not model.

    A declaration's arguments are its fields, declared once in its class body with
    :func:`~fleet.core.options.option` (the table every use of an argument reads:
    :mod:`fleet.core.options`); its own checks go in :meth:`__post_init__`, which
    subclasses extend (calling ``super().__post_init__()`` first). A subclass may define
    ``__init__`` instead, and pass its base's arguments to ``super().__init__``.

    Declarations are immutable: assigning an attribute after construction fails, and the
    mutators (``add_json_patch``, a cloud's ``add_node_group``) only work until the tree is
    locked, when every ``define()`` has run (docs/construct-tree.md).
    """

    scope: Scope = option(kw_only=False, doc="What it is declared in.")
    construct_id: str = option(kw_only=False, doc="Its id, unique among its scope's children.")
    _environments: Sequence[str] | None = option(
        default=None,
        alias="environments",
        doc="The environments to place it in (default: its scope's, or every environment).",
    )

    environments_required: ClassVar[bool] = False
    """True: ``environments`` must be given unless the scope narrows them (clusters)."""
    _sealed: ClassVar[bool] = False
    _fleet_members: ClassVar[dict[str, type]] = {}
    """Name -> the class defining it, of every method and property (set per class)."""

    if not TYPE_CHECKING:

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            values = argument_table(type(self)).bind(args, kwargs)
            scope = values.pop("scope")
            self.__dict__.update(values)
            self._place(scope)
            self.__post_init__()

        __init__._fleet_generic = True

    def _place(self, scope: Scope) -> None:
        """Attach the declaration to the tree under ``scope``; its environments."""
        where = caller_location()
        self.where: str = where
        self.node, inherited = attach(self, scope, self.construct_id, where)
        fleet: Fleet = self.node.root  # type: ignore[assignment]
        self.fleet = fleet
        fleet.register(self)
        self._patches: list[tuple[str | None, str | None, tuple[JsonPatch, ...]]] = []
        envs = narrow_environments(fleet, self._environments, inherited, where=self.context)
        if envs is None:
            if self.environments_required:
                raise DefinitionError(
                    "required: the environments to place it in (or declare it in a "
                    "Component or an environment chart that has them)",
                    where=self.context,
                    field="environments",
                )
            envs = fleet.environment_names
        self.environments: tuple[str, ...] = envs

    def __post_init__(self) -> None:
        """The declaration's own checks, once its fields are set and it is placed in the
        tree (``self.environments``, ``self.fleet``); subclasses extend it."""

    def __setattr__(self, name: str, value: object) -> None:
        if self._sealed and not name.startswith("_"):
            self._refuse(name)
        owner = type(self)._fleet_members.get(name)
        if owner is not None:
            raise DefinitionError(
                f"{type(self).__name__}: attribute {name!r} would hide {owner.__name__}."
                f"{name} ({_describe(vars(owner)[name])}), which the fleet calls; "
                "name the attribute otherwise",
                where=caller_location() + f" ({self.node.path})"
                if "node" in self.__dict__
                else caller_location(),
                field=name,
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if self._sealed and not name.startswith("_"):
            self._refuse(name)
        object.__delattr__(self, name)

    def _refuse(self, name: str) -> NoReturn:
        raise DefinitionError(
            f"{type(self).__name__} is immutable once constructed; pass {name} to the "
            "constructor (or declare another one)",
            where=caller_location() + f" ({self.node.path})",
            field=name,
        )

    def check_mutable(self, mutator: str) -> None:
        """Raise unless mutators may still change this declaration: before the tree is
        locked (every ``define()`` ran), or from an Aspect."""
        if self.node.locked and not self.fleet.mutators_allowed:
            raise DefinitionError(
                f"{mutator}() after the tree was locked (every define() has run); call it "
                "in define(), or from an Aspect",
                where=caller_location() + f" ({self.node.path})",
                field=mutator,
            )

    def set_input(self, name: str, value: object) -> None:
        """For a mutator of a subclass (``add_node_group``): replace input ``name``, while
        the declaration is still mutable."""
        self.check_mutable(f"set {name}")
        object.__setattr__(self, name, value)

    @property
    def context(self) -> str:
        """``file:line (path)``: where the declaration is, for messages."""
        return f"{self.where} ({self.node.path})"

    def scope_environments(self) -> tuple[str, ...] | None:
        """What is declared inside a declaration is placed in its environments."""
        return self.environments

    def prepare(self) -> None:
        """The prepare phase: after every ``define()`` ran and Aspects visited, resolve
        lookups of other declarations (any module order). Default: nothing."""

    def add_json_patch(
        self, *ops: JsonPatch, kind: str | None = None, environment: str | None = None
    ) -> None:
        """Patch the rendered objects (all, or those of ``kind`` in ``environment``).

        Example: ``cluster.add_json_patch(JsonPatch.add("/spec/forProvider/region",
        "cern"), kind="ClusterV1")``. Only before the tree is locked, or from an Aspect.
        """
        self.check_mutable("add_json_patch")
        where = f"{caller_location()} ({self.construct_id})"
        for op in ops:
            if not isinstance(op, JsonPatch):
                raise DefinitionError(
                    f"must be JsonPatch operations, got {type(op).__name__}",
                    where=where,
                    field="add_json_patch",
                )
        if environment is not None and environment not in self.environments:
            self.fleet.config.check_environment(
                environment, where=where, field="add_json_patch.environment"
            )
            raise DefinitionError(
                f"{self.construct_id!r} is not placed in {environment!r} "
                f"(environments: {', '.join(self.environments)}): the patch would apply nowhere",
                where=where,
                field="add_json_patch.environment",
            )
        self._patches.append((kind, environment, ops))

    def manifests(self, environment: str) -> list[Manifest]:
        """The rendered objects of this declaration in ``environment``, patches applied."""
        if environment not in self.environments:
            return []
        out = self.render(environment)
        if not self._patches:
            return out
        kinds = {m.kind for m in out}
        for kind, env, _ops in self._patches:
            if kind is not None and kind not in kinds and env in (None, environment) and out:
                raise DefinitionError(
                    f"json patch for kind {kind!r} matches no object in {environment} "
                    f"(rendered kinds: {', '.join(sorted(kinds))})",
                    where=self.context,
                    field="add_json_patch.kind",
                )
        return [self._patched(m) for m in out]

    def _patched(self, manifest: Manifest) -> Manifest:
        body: dict[str, Any] = manifest.body
        for kind, env, ops in self._patches:
            if (kind is None or kind == manifest.kind) and (
                env is None or env == manifest.environment
            ):
                try:
                    body = jsonpatch.apply_patch(body, [op.to_dict() for op in ops])
                except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
                    raise DefinitionError(
                        f"json patch does not apply to {manifest.kind} {manifest.name}: {e}",
                        where=self.context,
                        field="add_json_patch",
                    ) from None
        return Manifest(manifest.environment, body, manifest.folder, manifest.source)

    @abstractmethod
    def render(self, environment: str) -> list[Manifest]:
        """The objects of this declaration in ``environment`` (no patches)."""

    def _manifest(self, environment: str, folder: str, body: dict[str, Any]) -> Manifest:
        return Manifest(environment, body, folder, self.context)
