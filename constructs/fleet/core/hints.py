"""Argument types read from type hints: a check per hint (``must be True or False, got
str 'false'``), the types that surely fit it (the fast path), and the walk to every
``per_env`` inside a value (its keys must be environments). :mod:`fleet.core.arguments`
applies them to a constructor's call."""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import functools
import inspect
import types
import typing
from collections import abc
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, Union

from fleet.core.redact import HIDDEN, is_secret_name, shown, withheld
from fleet.core.secrets import credential_in
from fleet.core.values import PerEnv

Check = Callable[[Any, str], "str | None"]
"""Checks a value; returns None when it fits, else what was expected and what came."""


def shown_value(value: object, field: str = "") -> str:
    """``str 'abc'``: the type and a short repr, for a message; only the type for a
    credential-like field or value (a secret given where a reference belongs must not reach
    the terminal or a CI log); an object whose repr is only its address, by its type."""
    if value is None:
        return "None"
    if is_secret_name(field):
        return type(value).__name__
    text = repr(value)
    if text.startswith("<") and " at 0x" in text:
        return f"a {type(value).__name__}"
    problem = credential_in(text)
    if problem:  # before shortening: a cut token is no longer recognisable
        return f"{type(value).__name__} (a {problem.split(';')[0]}, not shown)"
    if withheld(value):
        return f"{type(value).__name__} ({HIDDEN})"
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _noun(hint: Any) -> str:
    """``str``, ``NodeGroup``, ``str or None``: a type as a word, without an article."""
    if isinstance(hint, type):
        return hint.__name__
    if typing.get_origin(hint) in (Union, types.UnionType):
        return " or ".join(_noun(a) for a in typing.get_args(hint))
    return _name_of(hint)


def _name_of(hint: Any) -> str:
    if hint is type(None):
        return "None"
    if isinstance(hint, type):
        plain = {"bool": "True or False", "int": "an integer", "str": "a string"}
        if hint.__name__ in plain:
            return plain[hint.__name__]
        return ("an " if hint.__name__[:1] in "AEIOU" else "a ") + hint.__name__
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):  # "or None" goes without saying: leave it out
        members = [a for a in args if a is not type(None)]
        alone = [a for a in members if not is_per_env_hint(a)]
        inner = [typing.get_args(typing.get_args(a)[0]) for a in members if a not in alone]
        if len(alone) > 1 and inner == [tuple(alone)]:  # X | Y | PerEnv[X | Y]
            return " or ".join(_name_of(a) for a in alone) + ", or per_env of those"
        return " or ".join(_name_of(a) for a in members)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (Mapping, dict, abc.Mapping):
        return f"a mapping of {_noun(args[0])} to {_noun(args[1])}" if args else "a mapping"
    if origin in (Sequence, list, tuple, abc.Sequence):
        return f"a list of {_noun(args[0])}" if args else "a list"
    if origin is not None and getattr(origin, "__name__", "") == "PerEnv":
        return f"per_env({_name_of(args[0])})"
    if origin is not None and getattr(origin, "__name__", "") == "Ref":
        return f"a reference to {_name_of(args[0])}"
    return getattr(hint, "__name__", str(hint))


def _outer(hint: Any) -> Callable[[Any], bool]:
    """A cheap test of whether a value has the outer shape of ``hint`` (for unions)."""
    origin = typing.get_origin(hint)
    if origin in (Mapping, dict, abc.Mapping) or hint in (dict, Mapping):
        return lambda v: isinstance(v, abc.Mapping)
    if origin in (Sequence, list, tuple, abc.Sequence) or hint in (list, tuple):
        return lambda v: isinstance(v, (list, tuple))
    if origin is not None and isinstance(origin, type):
        cls = origin
        return lambda v: isinstance(v, cls)
    if hint is float:
        return lambda v: isinstance(v, (int, float))
    if isinstance(hint, type):
        cls = hint
        return lambda v: isinstance(v, cls)
    return lambda v: True


def compile_hint(hint: Any) -> Check | None:
    """A check for values of type ``hint``, or None for "anything goes"."""
    if hint is Any or hint is object or isinstance(hint, typing.TypeVar):
        return None
    if isinstance(hint, str):  # an unresolved forward reference: not checked
        return None
    expected = _name_of(hint)
    if hint is type(None):
        return lambda v, f: None if v is None else f"must be None, got {shown_value(v, f)}"
    if hint is bool:
        return lambda v, f: (
            None if v is True or v is False else f"must be {expected}, got {shown_value(v, f)}"
        )
    if hint is int:
        return lambda v, f: (
            None
            if isinstance(v, int) and not isinstance(v, bool)
            else f"must be {expected}, got {shown_value(v, f)}"
        )
    if hint is float:
        return lambda v, f: (
            None
            if isinstance(v, (int, float)) and not isinstance(v, bool)
            else f"must be a number, got {shown_value(v, f)}"
        )
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        checks = [compile_hint(a) for a in args]
        if any(c is None for c in checks):
            return None
        members = [(_outer(a), c) for a, c in zip(args, checks, strict=True) if c is not None]

        def union(v: Any, f: str) -> str | None:
            inner = None
            for outer, check in members:
                if outer(v):  # only members of the value's shape: no messages built in vain
                    error = check(v, f)
                    if error is None:
                        return None
                    inner = inner or error
            # a value of the right outer shape gets the inner complaint (labels['a']: ...)
            if inner is not None and not inner.startswith("must be "):
                return inner
            return f"must be {expected}, got {shown_value(v, f)}"

        return union
    if origin is Literal:
        allowed = args
        return lambda v, f: None if v in allowed else f"must be {expected}, got {shown_value(v, f)}"
    if origin in (Mapping, dict, abc.Mapping) or hint in (dict, Mapping):
        key_check = compile_hint(args[0]) if args else None
        value_check = compile_hint(args[1]) if args else None

        def mapping(v: Any, f: str) -> str | None:
            if not isinstance(v, abc.Mapping):
                return f"must be {expected}, got {shown_value(v, f)}"
            for key, item in v.items():
                if key_check is not None and (error := key_check(key, f)) is not None:
                    return f"keys: {error}"
                if value_check is not None and (error := value_check(item, f)) is not None:
                    if f.endswith("labels") and error.startswith("must be "):
                        got = shown(item, str(key))
                        return f"label values are strings, got {got} for {key!r}"
                    return f"[{key!r}]: {error}"
            return None

        return mapping
    if origin in (Sequence, list, tuple, abc.Sequence) or hint in (list, tuple):
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            args = args[:1]
        item_check = compile_hint(args[0]) if len(args) == 1 else None
        item_type = args[0] if len(args) == 1 and isinstance(args[0], type) else None

        def sequence(v: Any, f: str) -> str | None:
            if isinstance(v, (str, bytes)) or not isinstance(v, (list, tuple)):
                if item_type not in (None, str, bytes) and isinstance(v, item_type):
                    return (
                        f"must be {expected}, got a single {item_type.__name__} "
                        "(put it in a list: [...])"
                    )
                return f"must be {expected}, got {shown_value(v, f)}"
            if item_check is not None:
                for i, item in enumerate(v):
                    if (error := item_check(item, f)) is not None:
                        return f"[{i}]: {error}"
            return None

        return sequence
    if origin is PerEnv:
        value_check = compile_hint(args[0]) if args else None
        inner = per_env_values(value_check) if value_check is not None else None

        def per_env_value(v: Any, f: str) -> str | None:
            if not isinstance(v, PerEnv):
                return f"must be {expected}, got {shown_value(v, f)}"
            return inner(v, f) if inner is not None else None

        return per_env_value
    if origin is not None and isinstance(origin, type):
        hint = origin
    if callable(hint) and not isinstance(hint, type):  # Callable[...] and the like
        return None
    if isinstance(hint, type):
        if hint is abc.Callable:
            return lambda v, f: (
                None if callable(v) else f"must be a function, got {shown_value(v, f)}"
            )
        cls = hint
        return lambda v, f: (
            None if isinstance(v, cls) else f"must be {expected}, got {shown_value(v, f)}"
        )
    return None


_SCALARS = (str, int, float, bool, type(None))


def fast_types(hint: Any) -> frozenset[type]:
    """Types whose values surely fit ``hint`` and hold no PerEnv: checked by ``type(v) in``.

    Exact types only (a bool is not an int here: ``type(True)`` is ``bool``); containers,
    PerEnv and dataclasses that may hold a PerEnv always take the full check.
    """
    if typing.get_origin(hint) in (Union, types.UnionType):
        out: frozenset[type] = frozenset()
        for a in typing.get_args(hint):
            out |= fast_types(a)
        return out
    if hint is float:
        return frozenset({float, int})
    if hint in _SCALARS:
        return frozenset({hint})
    if (
        isinstance(hint, type)
        and typing.get_origin(hint) is None
        and not issubclass(hint, (abc.Mapping, abc.Sequence, abc.Set))
        and not (dataclasses.is_dataclass(hint) and _class_walks(hint))
    ):
        return frozenset({hint})
    return frozenset()


@functools.cache
def init_hints(init: Callable[..., Any]) -> dict[str, Any]:
    """``init``'s parameter hints; ``**options: Unpack[SomeTypedDict]`` adds its keys."""
    try:
        hints = typing.get_type_hints(init)
    except (NameError, TypeError):  # a hint naming something not importable at run time
        return {}
    for p in inspect.signature(init).parameters.values():
        hint = hints.get(p.name)
        if p.kind is p.VAR_KEYWORD and typing.get_origin(hint) is typing.Unpack:
            (typed,) = typing.get_args(hint)
            del hints[p.name]
            with contextlib.suppress(NameError, TypeError):
                hints.update(typing.get_type_hints(typed))
        elif p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            hints.pop(p.name, None)
    hints.pop("return", None)
    return hints


def per_env_values(check: Check) -> Check:
    """``check`` applied to a value, or to each value (and the default) of a ``PerEnv``;
    a failure inside one names it (``[dev]: ...``)."""

    def each(v: Any, f: str) -> str | None:
        if not isinstance(v, PerEnv):
            return check(v, f)
        for env, item in v.values.items():
            if (error := check(item, f)) is not None:
                return f"[{env}]: {error}"
        if v.default is not None and (error := check(v.default, f)) is not None:
            return f"[default]: {error}"
        return None

    return each


Walk = Callable[[Any, str], Iterator[tuple[str, PerEnv[Any]]]]
"""Yields (field path, PerEnv) for each PerEnv inside a value of one type hint."""


def is_per_env_hint(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    return origin is not None and getattr(origin, "__name__", "") == "PerEnv"


@functools.cache
def _class_walks(cls: type) -> tuple[tuple[str, Walk], ...]:
    """(field, walk) for the fields of dataclass ``cls`` whose hints may hold a PerEnv."""
    if not dataclasses.is_dataclass(cls):
        return ()
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError):
        return ()
    walks = []
    for f in dataclasses.fields(cls):
        walk = compile_walk(hints.get(f.name))
        if walk is not None:
            walks.append((f.name, walk))
    return tuple(walks)


def compile_walk(hint: Any, depth: int = 0) -> Walk | None:
    """A walk for values of type ``hint``, or None when no PerEnv can be inside."""
    if hint is None or depth > 4:
        return None
    if is_per_env_hint(hint):

        def one(v: Any, path: str) -> Iterator[tuple[str, PerEnv[Any]]]:
            if isinstance(v, PerEnv):
                yield path, v

        return one
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        walks = [w for w in (compile_walk(a, depth + 1) for a in args) if w is not None]
        if not walks:
            return None

        def any_of(v: Any, path: str) -> Iterator[tuple[str, PerEnv[Any]]]:
            for walk in walks:
                yield from walk(v, path)

        return any_of
    if origin in (Sequence, list, tuple, abc.Sequence) and args:
        item = compile_walk(args[0], depth + 1)
        if item is None:
            return None

        def items(v: Any, path: str) -> Iterator[tuple[str, PerEnv[Any]]]:
            if isinstance(v, (list, tuple)):
                for i, x in enumerate(v):
                    name = getattr(x, "name", None)
                    yield from item(x, f"{path}[{name if isinstance(name, str) else i}]")

        return items
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        cls = hint
        if not _class_walks(cls):
            return None

        def fields(v: Any, path: str) -> Iterator[tuple[str, PerEnv[Any]]]:
            if isinstance(v, cls):  # a subclass's own fields too
                for name, walk in _class_walks(type(v)):
                    yield from walk(getattr(v, name, None), f"{path}.{name}")

        return fields
    return None


def per_env_key_errors(
    value: Any, walk: Walk, environments: Sequence[str], path: str
) -> Iterator[tuple[str, str]]:
    """(field, problem) for each ``per_env`` key in ``value`` that is not an environment.

    ``walk`` (compiled from the argument's type hint) follows lists and dataclass values
    (a NodeGroup's counts), so every :class:`PerEnv` reachable from a declaration's
    arguments is checked when it is attached to the declaration.
    """
    for field, per_env_value in walk(value, path):
        for key in per_env_value.values:
            if key not in environments:
                close = difflib.get_close_matches(key, environments, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                yield (
                    field,
                    f"per_env key {key!r} is not an environment "
                    f"(configured: {', '.join(environments)}){hint}",
                )
