"""One table per declaration: each argument declared once, in the class body, with ``option``.

A declaration's arguments are its fields, as in a dataclass::

    class MagnumCluster(FleetCluster):
        flavor: str | PerEnv[str] = option(terraform="flavor", doc="The workers' flavor.")
        docker_volume_size_gb: int | PerEnv[int] | None = option(
            default=None,
            render="spec.forProvider.dockerVolumeSize",
            terraform="docker_volume_size",
            minimum=1,
            doc="Docker volume size in GB; left out, the template's.",
        )

The annotation is the argument's type (``PerEnv`` in it: it may differ per environment);
``option`` adds the rest of the table entry: the default, where the value renders as it
is (``render``, in the class's :attr:`rendered_kind` unless ``kind`` names another), the
Terraform attribute it corresponds to (for the importer and the force-new data), bounds
and a line of documentation. Everything else reads this table: the constructor (type
checkers see the signature through ``typing.dataclass_transform``; at run time
:class:`ArgumentTable` checks the arguments with the same messages, file:line and
did-you-mean), the resolved per-environment state, the render (:func:`rendered`), the
importer and the checks of the table against the pinned CRDs and provider data.

``FleetConstruct`` subclasses (through their metaclass) and classes decorated with
:func:`value_type` (``NodeGroup``, ``OkeNodePool``) take fields this way.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import sys
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar, Union, dataclass_transform, overload

from fleet.core.arguments import ArgumentChecks, checked_arguments
from fleet.core.errors import DefinitionError
from fleet.core.hints import Check, per_env_values
from fleet.core.tree import did_you_mean
from fleet.core.values import PerEnv, argument_location

T = TypeVar("T")
C = TypeVar("C", bound=type)


class _Required:
    """The default of an option that has none: the argument is required."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Final = _Required()


@dataclass(frozen=True, slots=True, eq=False)
class Option:
    """One argument of a declaration or value type: its entry in the class's table.

    Read a class's table with :func:`options_of`; build entries with :func:`option`.
    """

    name: str = ""
    """The attribute (the field's name in the class body)."""
    alias: str = ""
    """The constructor keyword when it is not ``name`` (see :attr:`keyword`)."""
    hint: Any = Any
    """The annotation, evaluated (``int | PerEnv[int] | None``)."""
    default: Any = REQUIRED
    factory: Callable[[], Any] | None = None
    kw_only: bool = True
    init: bool = True
    compare: bool = True
    render: tuple[str, ...] = ()
    """The path of the value in the rendered object (``("spec", "forProvider",
    "dockerVolumeSize")``), for a value rendered as it is, once resolved; () otherwise."""
    kind: str = ""
    """The kind of the object ``render`` is in ("": the class's ``rendered_kind``)."""
    terraform: str = ""
    """The Terraform attribute of the same value (``docker_volume_size``), if any."""
    inherits: str = ""
    """Where the cloud takes the value from when the argument is left out, as
    ``<parent>.<Terraform attribute>`` (``template.keypair_id``: Magnum copies the
    template's ``keypair_id`` into a cluster that sets no ``keypair``); "" for none. The
    importer leaves out a value equal to the parent's."""
    cloud_default: Any = None
    """The value the cloud (or its Terraform provider) gives when the argument is left out
    (Magnum's ``master_count`` 1), which the importer leaves out; None: no such default."""
    computed: bool = False
    """Optional and Computed, with no parent and no default: when the argument is left out
    the cloud or its provider fills a value in (an etcd discovery URL, a region), so the
    importer declares it only where the Terraform configuration sets it."""
    minimum: int | None = None
    """The smallest number allowed (for every environment's value)."""
    nonempty: bool = False
    """Whether an empty string is refused."""
    doc: str = ""
    owner: type | None = None
    """The class whose body declares it."""

    @property
    def keyword(self) -> str:
        """The constructor keyword."""
        return self.alias or self.name

    @property
    def required(self) -> bool:
        """Whether the constructor needs it (no default)."""
        return self.default is REQUIRED and self.factory is None

    @property
    def per_env(self) -> bool:
        """Whether its value may differ per environment (``PerEnv`` in its annotation)."""
        return _has_per_env(self.hint)

    @property
    def members(self) -> tuple[Any, ...]:
        """The members of its annotation, a union's each, ``PerEnv[X]`` as ``X``
        (``(int, NoneType)`` for ``int | PerEnv[int] | None``)."""
        return tuple(_members(self.hint))

    @property
    def scalar(self) -> type | None:
        """The plain type of one environment's value (``int`` for ``int | PerEnv[int] |
        None``), or None when it is not one plain type."""
        found = {a for a in _members(self.hint) if a is not type(None)}
        plain = {a for a in found if isinstance(a, type)}
        return plain.pop() if len(plain) == 1 and len(found) == 1 else None

    def rendered_kind(self, owner: type) -> str:
        """The kind of the object the option renders into, for ``owner``'s table."""
        return self.kind or str(getattr(owner, "rendered_kind", ""))


def _members(hint: Any) -> Iterator[Any]:
    """The members of a union hint, ``PerEnv[X]`` counted as ``X``."""
    if typing.get_origin(hint) in (Union, types.UnionType):
        for a in typing.get_args(hint):
            yield from _members(a)
    elif _is_per_env(hint):
        yield from _members(typing.get_args(hint)[0])
    else:
        yield hint


def _is_per_env(hint: Any) -> bool:
    return typing.get_origin(hint) is PerEnv


def _has_per_env(hint: Any) -> bool:
    if _is_per_env(hint):
        return True
    return typing.get_origin(hint) in (Union, types.UnionType) and any(
        _has_per_env(a) for a in typing.get_args(hint)
    )


# --- the field specifier ---------------------------------------------------------------------


@overload
def option(
    *,
    default: T,
    alias: str | None = None,
    kw_only: bool = True,
    init: bool = True,
    compare: bool = True,
    render: str = "",
    kind: str = "",
    terraform: str = "",
    inherits: str = "",
    cloud_default: Any = None,
    computed: bool = False,
    minimum: int | None = None,
    nonempty: bool = False,
    doc: str = "",
) -> T: ...


@overload
def option(
    *,
    factory: Callable[[], T],
    alias: str | None = None,
    kw_only: bool = True,
    init: bool = True,
    compare: bool = True,
    render: str = "",
    kind: str = "",
    terraform: str = "",
    inherits: str = "",
    cloud_default: Any = None,
    computed: bool = False,
    minimum: int | None = None,
    nonempty: bool = False,
    doc: str = "",
) -> T: ...


@overload
def option(
    *,
    alias: str | None = None,
    kw_only: bool = True,
    init: bool = True,
    compare: bool = True,
    render: str = "",
    kind: str = "",
    terraform: str = "",
    inherits: str = "",
    cloud_default: Any = None,
    computed: bool = False,
    minimum: int | None = None,
    nonempty: bool = False,
    doc: str = "",
) -> Any: ...


def option(
    *,
    default: Any = REQUIRED,
    factory: Callable[[], Any] | None = None,
    alias: str | None = None,
    kw_only: bool = True,
    init: bool = True,
    compare: bool = True,
    render: str = "",
    kind: str = "",
    terraform: str = "",
    inherits: str = "",
    cloud_default: Any = None,
    computed: bool = False,
    minimum: int | None = None,
    nonempty: bool = False,
    doc: str = "",
) -> Any:
    """Declare one argument in a class body (the field specifier of declarations and
    value types). Without ``default`` or ``factory`` the argument is required.

    ``render`` is a dotted path in the rendered object (``spec.forProvider.region``) for a
    value rendered as it is once resolved for the environment (left out where None);
    ``kind`` names that object's kind when it is not the class's ``rendered_kind``.
    ``terraform`` is the Terraform attribute that holds the same value; ``inherits``,
    ``cloud_default`` and ``computed`` say what the cloud does when the argument is left out
    (see :class:`Option`: the importer reads them). ``minimum`` and
    ``nonempty`` bound every environment's value. ``alias`` is the constructor keyword
    when the attribute has another name; ``kw_only=False`` makes it positional.
    """
    return Option(
        alias=alias or "",
        default=default,
        factory=factory,
        kw_only=kw_only,
        init=init,
        compare=compare,
        render=tuple(render.split(".")) if render else (),
        kind=kind,
        terraform=terraform,
        inherits=inherits,
        cloud_default=cloud_default,
        computed=computed,
        minimum=minimum,
        nonempty=nonempty,
        doc=doc,
    )


# --- collecting a class's table ----------------------------------------------------------------

_OWN = "_fleet_fields"
"""Class attribute: the options its own body declares (unevaluated hints), in order."""
_TABLE = "_fleet_table"
_METADATA = "fleet.option"
_VALUE_TYPE = "_fleet_value_type"


def _is_class_var(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar", "Final", "typing.Final"))


def declare_fields(cls: type) -> None:
    """Collect the options of ``cls``'s own body (annotated class attributes, ClassVars
    left out) and replace each ``option(...)`` marker by its default, as dataclasses do."""
    own: list[tuple[str, Any, Option]] = []
    for name, annotation in inspect.get_annotations(cls).items():
        if _is_class_var(annotation):
            continue
        value = cls.__dict__.get(name, REQUIRED)
        spec = value if isinstance(value, Option) else Option(default=value)
        own.append((name, annotation, dataclasses.replace(spec, name=name, owner=cls)))
        if isinstance(value, Option):
            if spec.default is REQUIRED:
                delattr(cls, name)
            else:
                setattr(cls, name, spec.default)
    setattr(cls, _OWN, tuple(own))


def field_names(cls: type) -> tuple[str, ...]:
    """The names of the fields ``cls``'s own body declares (none for a class that defines
    its own ``__init__``)."""
    return tuple(name for name, _, _ in cls.__dict__.get(_OWN, ()))


def _evaluate(annotation: Any, owner: type) -> Any:
    """An annotation string evaluated where its class was declared (Any when it names
    something importable only for type checkers)."""
    if not isinstance(annotation, str):
        return annotation
    module = sys.modules.get(owner.__module__)
    namespace = dict(vars(module)) if module is not None else {}
    try:
        return eval(annotation, namespace, dict(vars(owner)))
    except Exception:
        return Any


def options_of(cls: type) -> Mapping[str, Option]:
    """The table of ``cls``: every option by constructor keyword, base classes' first.

    For a declaration (a ``FleetConstruct``) and a :func:`value_type`. A class that
    defines its own ``__init__`` takes its own arguments: its annotations are not options.
    """
    table = cls.__dict__.get(_TABLE)
    if table is None:
        table = _build_table(cls)
        setattr(cls, _TABLE, table)
    return typing.cast(Mapping[str, Option], table)


def _build_table(cls: type) -> Mapping[str, Option]:
    out: dict[str, Option] = {}
    if dataclasses.is_dataclass(cls):
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            spec = f.metadata.get(_METADATA) or Option(name=f.name, owner=cls)
            default = f.default if f.default is not dataclasses.MISSING else REQUIRED
            factory = f.default_factory if f.default_factory is not dataclasses.MISSING else None
            entry = dataclasses.replace(
                spec, hint=hints.get(f.name, Any), default=default, factory=factory
            )
            out[entry.keyword] = entry
        return types.MappingProxyType(out)
    by_name: dict[str, Option] = {}  # a subclass redeclares a field by its name
    for klass in reversed(cls.__mro__):
        for name, annotation, spec in klass.__dict__.get(_OWN, ()):
            by_name[name] = dataclasses.replace(spec, hint=_evaluate(annotation, klass))
    return types.MappingProxyType({o.keyword: o for o in by_name.values()})


# --- value types -----------------------------------------------------------------------------


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(option,))
def value_type(cls: C) -> C:
    """A frozen, keyword-only dataclass whose fields may be declared with :func:`option`,
    its arguments checked against their annotations (:func:`checked_arguments`)."""
    for name, annotation in inspect.get_annotations(cls).items():
        value = cls.__dict__.get(name, REQUIRED)
        if _is_class_var(annotation) or not isinstance(value, Option):
            continue
        kwargs: dict[str, Any] = {
            "init": value.init,
            "compare": value.compare,
            "metadata": {_METADATA: dataclasses.replace(value, name=name, owner=cls)},
        }
        if value.factory is not None:
            kwargs["default_factory"] = value.factory
        elif value.default is not REQUIRED:
            kwargs["default"] = value.default
        setattr(cls, name, dataclasses.field(**kwargs))
    setattr(cls, _VALUE_TYPE, True)
    made: type = dataclass(frozen=True, kw_only=True)(cls)
    return checked_arguments(made, lambda: argument_table(made).checks)  # type: ignore[return-value]


def value_types_in(cls: type) -> tuple[type, ...]:
    """The value types (:func:`value_type`) the options of ``cls`` hold, directly or in
    lists, unions and ``PerEnv`` (``NodeGroup`` for ``MagnumCluster``), and theirs."""
    found: list[type] = []
    pending = [o.hint for o in options_of(cls).values()]
    while pending:
        hint = pending.pop(0)
        if isinstance(hint, type) and hint.__dict__.get(_VALUE_TYPE) and hint not in found:
            found.append(hint)
            pending.extend(o.hint for o in options_of(hint).values())
        pending.extend(typing.get_args(hint))
    return tuple(found)


# --- the constructor ---------------------------------------------------------------------------


class ArgumentTable:
    """A class's table compiled for its constructor: keywords, checks, defaults.

    :meth:`bind` turns the arguments of one call into the attributes to set, after the
    checks (unknown keyword with did-you-mean, types, ``per_env`` keys, bounds, missing
    arguments), each failure one :class:`DefinitionError` at the argument's line.
    """

    __slots__ = (
        "attributes",
        "checks",
        "defaults",
        "factories",
        "keywords",
        "owner",
        "positional",
        "required",
    )

    def __init__(self, owner: type, options: Mapping[str, Option]) -> None:
        self.owner = owner
        given = [o for o in options.values() if o.init]
        self.positional = tuple(o.keyword for o in given if not o.kw_only)
        self.keywords = frozenset(o.keyword for o in given)
        self.required = tuple(o.keyword for o in given if o.required)
        self.attributes = {o.keyword: o.name for o in given if o.keyword != o.name}
        self.defaults = {
            o.name: o.default
            for o in options.values()
            if o.default is not REQUIRED and o.factory is None
        }
        self.factories = tuple(
            (o.name, o.factory) for o in options.values() if o.factory is not None
        )
        bounds: dict[str, Check] = {}
        for o in given:
            bound = _bound(o)
            if bound is not None:
                bounds[o.keyword] = bound
        self.checks = ArgumentChecks.compile(
            {o.keyword: o.hint for o in given}, positional=self.positional, bounds=bounds
        )

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The attributes (by name) of a call with ``args`` and ``kwargs``, checked."""
        if args:
            kwargs = self._with_positional(args, kwargs)
        if not self.keywords.issuperset(kwargs):
            self._unknown(kwargs)
        self.checks.check(self.owner, (), kwargs)
        for keyword in self.required:
            if keyword not in kwargs:
                self._missing(kwargs)
        values = self.defaults.copy()
        for name, factory in self.factories:
            values[name] = factory()
        if self.attributes:
            for keyword, value in kwargs.items():
                values[self.attributes.get(keyword, keyword)] = value
        else:
            values.update(kwargs)
        return values

    def _with_positional(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if len(args) > len(self.positional):
            raise DefinitionError(
                f"{self.owner.__name__} takes {len(self.positional)} positional arguments "
                f"({', '.join(self.positional)}), got {len(args)}; give the others by keyword",
                where=argument_location(len(self.positional)),
                field=self.positional[-1] if self.positional else "",
            )
        out = dict(zip(self.positional, args, strict=False))
        for keyword in kwargs:
            if keyword in out:
                raise DefinitionError(
                    f"given twice, by position and by keyword (to {self.owner.__name__})",
                    where=argument_location(keyword),
                    field=keyword,
                )
        out.update(kwargs)
        return out

    def _unknown(self, kwargs: dict[str, Any]) -> None:
        unknown = sorted(set(kwargs) - self.keywords)[0]
        raise DefinitionError(
            f"unknown keyword argument of {self.owner.__name__}"
            + did_you_mean(unknown, sorted(self.keywords - set(self.positional)), n=1),
            where=argument_location(unknown),
            field=unknown,
        )

    def _missing(self, kwargs: dict[str, Any]) -> None:
        missing = [k for k in self.required if k not in kwargs]
        raise DefinitionError(
            f"required argument of {self.owner.__name__}, not given"
            + (f" (nor {', '.join(missing[1:])})" if len(missing) > 1 else ""),
            where=_labelled(argument_location(-1), kwargs),
            field=missing[0],
        )


def _labelled(where: str, kwargs: Mapping[str, Any]) -> str:
    construct_id = kwargs.get("construct_id")
    return f"{where} ({construct_id})" if isinstance(construct_id, str) else where


def _bound(o: Option) -> Check | None:
    """The check of ``o``'s bounds on every environment's value, None without bounds."""
    minimum, nonempty = o.minimum, o.nonempty
    if minimum is None and not nonempty:
        return None

    def one(v: Any, f: str) -> str | None:
        number = isinstance(v, int | float) and not isinstance(v, bool)
        if minimum is not None and number and v < minimum:
            return f"must be {minimum} or more, got {v}"
        if nonempty and v == "":
            return "must be a non-empty string, got ''"
        return None

    return per_env_values(one)


def argument_table(cls: type) -> ArgumentTable:
    """The compiled table of ``cls`` (built on first use, kept on the class)."""
    table = cls.__dict__.get("_fleet_arguments")
    if table is None:
        table = ArgumentTable(cls, options_of(cls))
        setattr(cls, "_fleet_arguments", table)  # noqa: B010
    return typing.cast(ArgumentTable, table)


# --- reading the table: resolved values, the render ------------------------------------------


_RENDERED: dict[tuple[type, str | None], tuple[Option, ...]] = {}


def rendered(cls: type, kind: str | None = None) -> tuple[Option, ...]:
    """The options of ``cls`` rendered as they are (into ``kind``'s object, when given)."""
    out = _RENDERED.get((cls, kind))
    if out is None:
        out = tuple(
            o
            for o in options_of(cls).values()
            if o.render and (kind is None or o.rendered_kind(cls) == kind)
        )
        _RENDERED[(cls, kind)] = out
    return out


def resolved_values(
    obj: object,
    options: tuple[Option, ...],
    environment: str,
    *,
    where: str,
    errors: list[DefinitionError] | None = None,
) -> dict[str, Any]:
    """Each option's value on ``obj`` for ``environment`` (a ``PerEnv`` resolved), by
    keyword. A value missing for the environment raises, or, given ``errors``, is added
    to them (and None in the result)."""
    plan = _plan(options)
    if not plan.per_env:  # nothing to resolve (a node group's options)
        return {keyword: getattr(obj, name) for keyword, name in plan.names}
    out: dict[str, Any] = {}
    for keyword, name in plan.names:
        value = getattr(obj, name)
        if isinstance(value, PerEnv):
            try:
                value = value.get(environment, where=where, field=keyword)
            except DefinitionError as e:
                if errors is None:
                    raise
                errors.append(e)
                value = None
        out[keyword] = value
    return out


def render_values(
    body: dict[str, Any], options: tuple[Option, ...], values: Mapping[str, Any]
) -> None:
    """Write each option's value (from ``values``, by keyword) at its render path, where
    set (the dicts on the way made as needed)."""
    for parent, leaves in _plan(options).parents:
        node: dict[str, Any] | None = None
        for key, keyword in leaves:
            value = values[keyword]
            if value is not None:
                if node is None:
                    node = _walk(body, parent)
                node[key] = value


def _walk(body: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """The dict at ``path`` in ``body``, made on the way where missing."""
    node = body
    for step in path:
        node = node.setdefault(step, {})
    return node


def render_object(
    body: dict[str, Any], options: tuple[Option, ...], obj: object, environment: str, *, where: str
) -> None:
    """Write each option's value on ``obj`` (resolved for ``environment``) at its render
    path, where set: :func:`render_values` without the dict of values between."""
    plan = _plan(options)
    values = plan.getter(obj)
    if plan.per_env:
        values = tuple(
            v.get(environment, where=where, field=keyword) if isinstance(v, PerEnv) else v
            for (keyword, _), v in zip(plan.names, values, strict=True)
        )
    for parent, leaves in plan.indexed:
        node: dict[str, Any] | None = None
        for key, index in leaves:
            value = values[index]
            if value is not None:
                if node is None:
                    node = _walk(body, parent)
                node[key] = value


@dataclass(frozen=True, slots=True)
class _Plan:
    """``options`` compiled for the render: by parent path, and whether any is per-env."""

    options: tuple[Option, ...]
    names: tuple[tuple[str, str], ...]
    """(keyword, attribute) of each option."""
    parents: tuple[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], ...]
    """(parent path, ((last key, keyword), ...)) in the options' order."""
    indexed: tuple[tuple[tuple[str, ...], tuple[tuple[str, int], ...]], ...]
    """(parent path, ((last key, index in :attr:`names`), ...))."""
    getter: Callable[[object], tuple[Any, ...]]
    """The options' values of an object, in :attr:`names`' order."""
    per_env: bool


_PLANS: dict[int, _Plan] = {}


def _one(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """An attribute getter that returns a tuple for 0 or 1 names too."""
    return lambda obj: tuple(getattr(obj, name) for name in names)


def _plan(options: tuple[Option, ...]) -> _Plan:
    plan = _PLANS.get(id(options))
    if plan is None or plan.options is not options:
        parents: dict[tuple[str, ...], list[tuple[str, str, int]]] = {}
        for index, o in enumerate(options):
            parents.setdefault(o.render[:-1], []).append((o.render[-1], o.keyword, index))
        names = tuple(o.name for o in options)
        plan = _Plan(
            options,
            tuple((o.keyword, o.name) for o in options),
            tuple(
                (parent, tuple((key, keyword) for key, keyword, _ in leaves))
                for parent, leaves in parents.items()
            ),
            tuple(
                (parent, tuple((key, index) for key, _, index in leaves))
                for parent, leaves in parents.items()
            ),
            operator.attrgetter(*names) if len(names) > 1 else _one(names),
            any(o.per_env for o in options),
        )
        _PLANS[id(options)] = plan
    return plan
