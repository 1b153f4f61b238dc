"""Small value types shared by the constructs: per-environment values, secret references."""

from __future__ import annotations

import ast
import bisect
import contextlib
import contextvars
import functools
import linecache
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any, Generic, TypeVar

from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.secrets import credential_in
from fleet.core.words import plural

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

_FLEET_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Frames of these packages sit between a user's declaration and our constructors.
_LIBRARY_DIRS = (_FLEET_DIR, os.sep + "jsii" + os.sep, os.sep + "typeguard" + os.sep)


@dataclass(frozen=True)
class PerEnv(Generic[T_co]):
    """A value that differs by environment: ``PerEnv({"dev": 1, "prod": 3}, default=2)``.

    Without ``default``, every environment the construct is placed in must be listed.
    """

    values: Mapping[str, T_co]
    default: T_co | None = None

    def get(self, environment: str, *, where: str, field: str) -> T_co:
        """The value for ``environment``, or a DefinitionError naming the field."""
        if environment in self.values:
            return self.values[environment]
        if self.default is not None:
            return self.default
        known = ", ".join(sorted(self.values)) or "none"
        raise DefinitionError(
            f"no value for environment {environment!r} (given for: {known}) and no default",
            where=where,
            field=field,
        )


def per_env(default: T | None = None, **values: T) -> PerEnv[T]:
    """Shorthand for :class:`PerEnv`: ``per_env(dev=1, prod=3)``."""
    return PerEnv(values=dict(values), default=default)


def resolve(value: T | PerEnv[T], environment: str, *, where: str, field: str) -> T:
    """``value`` itself, or its entry for ``environment`` when it is a :class:`PerEnv`."""
    if isinstance(value, PerEnv):
        return value.get(environment, where=where, field=field)
    return value


_SECRET_KEY = re.compile(r"[-._a-zA-Z0-9]{1,253}")
"""Kubernetes' ``IsConfigMapKey`` (apimachinery v0.36.3 ``pkg/util/validation/validation.go``),
with ``hasChDirPrefix`` (no ``.``, ``..`` or ``..`` first) checked beside it."""
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


@dataclass(frozen=True, kw_only=True)
class SecretKeyRef:
    """A key of a Kubernetes Secret, by reference only (the value never enters ``dist/``)."""

    name: str
    namespace: str
    key: str

    def __post_init__(self) -> None:
        for field in ("name", "key"):
            problem = credential_in(str(getattr(self, field)))
            if problem:
                raise DefinitionError(
                    f"holds a {problem.split(';')[0]}, not a name: a SecretKeyRef names the "
                    "Secret and the key in it that hold the credential, never the credential",
                    where=caller_location(),
                    field=field,
                )
        key = self.key
        if not (
            isinstance(key, str)
            and _SECRET_KEY.fullmatch(key)
            and key != "."
            and not key.startswith("..")
        ):
            # Never shown: what is not a key name may be the credential itself.
            size = (
                f"a value of {plural(len(key), 'character')}"
                if isinstance(key, str)
                else f"a {type(key).__name__}"
            )
            raise DefinitionError(
                "a Secret's key is a name: 1 to 253 letters, digits, '-', '_' or '.', not '.' "
                f"and not starting with '..' (Kubernetes' IsConfigMapKey); got {size} that is "
                "not one (not shown: it may be the credential itself)",
                where=caller_location(),
                field="key",
            )
        for field, rule, what in (
            ("name", _DNS_SUBDOMAIN, "a DNS subdomain (lower-case, 253 at most)"),
            ("namespace", _DNS_LABEL, "a DNS label (lower-case, 63 at most)"),
        ):
            value = getattr(self, field)
            if not isinstance(value, str) or not rule.fullmatch(value) or len(value) > 253:
                shown = "a value that is not shown" if credential_in(str(value)) else repr(value)
                raise DefinitionError(
                    f"a Secret's {field} is {what}, got {shown}",
                    where=caller_location(),
                    field=field,
                )

    def to_dict(self) -> dict[str, str]:
        """The ``{key, name, namespace}`` form Crossplane and ArgoCD providers use."""
        return {"key": self.key, "name": self.name, "namespace": self.namespace}


@dataclass(frozen=True)
class JsonPatch:
    """One RFC 6902 operation, applied to a rendered object (the escape hatch).

    Mirrors cdk8s's ``JsonPatch`` factory names: ``JsonPatch.add("/spec/x", 1)``.
    """

    op: str
    path: str
    value: Any = None

    @classmethod
    def add(cls, path: str, value: Any) -> JsonPatch:
        """Add ``value`` at ``path`` (creates the key, or inserts into a list)."""
        return cls("add", path, value)

    @classmethod
    def replace(cls, path: str, value: Any) -> JsonPatch:
        """Replace the value at ``path``."""
        return cls("replace", path, value)

    @classmethod
    def remove(cls, path: str) -> JsonPatch:
        """Remove the value at ``path``."""
        return cls("remove", path)

    def to_dict(self) -> dict[str, Any]:
        """The RFC 6902 dict form."""
        if self.op == "remove":
            return {"op": self.op, "path": self.path}
        return {"op": self.op, "path": self.path, "value": self.value}


_location_root: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "fleet_location_root", default=None
)
"""The project definition locations are relative to (None: the current folder)."""


@contextlib.contextmanager
def location_root(root: str | os.PathLike[str]) -> Iterator[None]:
    """Definition locations relative to ``root`` (the project) inside the block, not to the
    current folder. Only inside it, and only in this thread (a context variable): a fleet
    loaded earlier in the process never changes where another one's errors point."""
    token = _location_root.set(os.path.abspath(root))
    try:
        yield
    finally:
        _location_root.reset(token)


def _root() -> str:
    return _location_root.get() or os.getcwd()


def _user_frame() -> FrameType:
    """The innermost frame outside the fleet package (the user's definition)."""
    frame = sys._getframe(2)
    while frame.f_back is not None and _is_library(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def caller_location(*, outer: int = 0) -> str:
    """``file:line`` of the first caller outside the fleet package (the user's definition).

    ``outer=1``: the user's code that called that one (the next frame out that is neither
    the fleet's nor in the Python installation or virtualenv, such as a test runner or the
    ``fleet`` script), to tell two calls of one line apart; ``""`` when there is none.
    """
    frame = _user_frame()
    for _ in range(outer):
        caller = frame.f_back
        while caller is not None and not _is_users(caller.f_code.co_filename):
            caller = caller.f_back
        if caller is None:
            return ""
        frame = caller
    return location_of(frame.f_code.co_filename, _line_of(frame.f_code, frame.f_lasti))


def location_of(filename: str, line: int | None) -> str:
    """``file:line`` as definition locations show it (relative to the project)."""
    return f"{_shown_name(filename, _root())}:{line}"


def is_user_file(filename: str) -> bool:
    """Whether code in ``filename`` is the user's (not the fleet's, a library's or Python's)."""
    return _is_users(filename)


def _is_users(filename: str) -> bool:
    return not (
        _is_library(filename)
        or filename.startswith("<")
        or filename.startswith((sys.prefix, sys.base_prefix))
        or "site-packages" in filename
    )


def argument_location(argument: str | int) -> str:
    """``file:line`` of one argument of the call the user's code is making: keyword
    ``argument``, or the positional one at that index (-1: the call's last line).

    Only for errors: it parses the caller's file (once per file) to find the argument in
    the call (Python 3.11 gives the call's position, ``code.co_positions()``). Falls back
    to the call's first line, as :func:`caller_location`, when the source is not there.
    """
    frame = _user_frame()
    line = _argument_line(frame.f_code, frame.f_lasti, argument)
    if line is None:
        line = _line_of(frame.f_code, frame.f_lasti)
    return location_of(frame.f_code.co_filename, line)


def relocate(error: BaseException, keywords: Mapping[str, object]) -> None:
    """Point ``error`` (a :class:`DefinitionError`, or each of :class:`DefinitionErrors`)
    at the line of the argument its field names, when it is located at the call the user's
    code is making and the argument is one of ``keywords`` (``id``: the second positional
    argument). For the constructors: an error about ``node_count`` given on line +7 of a
    multi-line call names line +7, not the call's first line."""
    targets = error.errors if isinstance(error, DefinitionErrors) else [error]
    frame = _user_frame()
    code, lasti = frame.f_code, frame.f_lasti
    here = location_of(code.co_filename, _line_of(code, lasti))
    for e in targets:
        if not isinstance(e, DefinitionError):
            continue
        where, field = e.where, e.field
        if where != here and not where.startswith(here + " "):
            continue
        argument: str | int = _FIELD_ROOT.split(field, maxsplit=1)[0]
        if argument == "id":
            argument = 1
        elif argument not in keywords:
            continue
        line = _argument_line(code, lasti, argument)
        if line is not None:
            e.where = f"{here.rsplit(':', 1)[0]}:{line}{where[len(here) :]}"
            e.args = (e.line(),)
    if isinstance(error, DefinitionErrors):
        error.args = ("\n".join(e.line() for e in error.errors),)


_FIELD_ROOT = re.compile(r"[\[. ]")


def _per_code(function: Callable[[CodeType], T]) -> Callable[[CodeType], T]:
    """Cache ``function``'s result per code object, by identity (the last 16 objects).

    Not by equality, as functools.lru_cache would: the same module loaded again (a second
    load_fleet in one process) compiles code objects equal to the first ones, and comparing
    two equal 30,000-line code objects takes about 1 ms, once per declaration: 2.4 s for
    the second load of 1,000 clusters. The cache holds each code object, so its id is not
    reused while it is cached.
    """
    cached: dict[int, tuple[CodeType, T]] = {}

    @functools.wraps(function)
    def wrapper(code: CodeType) -> T:
        entry = cached.get(id(code))
        if entry is not None and entry[0] is code:
            return entry[1]
        result = function(code)
        if len(cached) >= 16:
            cached.clear()
        cached[id(code)] = (code, result)
        return result

    return wrapper


def _argument_line(code: CodeType, lasti: int, argument: str | int) -> int | None:
    """The line of ``argument`` in the call at bytecode offset ``lasti`` of ``code``."""
    try:
        line, end_line, column, end_column = _positions(code)[lasti // 2]
    except IndexError:
        return None
    if line is None or end_line is None or column is None or end_column is None:
        return None
    if line == end_line:
        return line
    call = _calls(code.co_filename).get((line, column, end_line, end_column))
    if call is None:
        return None
    if isinstance(argument, int):
        if argument == -1:
            return end_line
        return call.args[argument].lineno if argument < len(call.args) else None
    for keyword in call.keywords:
        if keyword.arg == argument:
            return keyword.lineno
    return None


@_per_code
def _positions(code: CodeType) -> list[tuple[int | None, int | None, int | None, int | None]]:
    return list(code.co_positions())


@functools.lru_cache(maxsize=32)
def _calls_cached(
    filename: str, stamp: tuple[int, int]
) -> dict[tuple[int, int, int, int], ast.Call]:
    text = "".join(linecache.getlines(filename))
    try:
        tree = ast.parse(text, filename)
    except (SyntaxError, ValueError):
        return {}
    return {
        (n.lineno, n.col_offset, n.end_lineno or n.lineno, n.end_col_offset or 0): n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
    }


def _calls(filename: str) -> dict[tuple[int, int, int, int], ast.Call]:
    """The calls in ``filename`` by position, parsed once per version of the file."""
    try:
        stat = os.stat(filename)
    except OSError:
        return {}
    linecache.checkcache(filename)
    return _calls_cached(filename, (stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=256)
def _shown_name(filename: str, root: str) -> str:
    """``filename`` relative to ``root``; outside it, its base name."""
    with contextlib.suppress(ValueError):  # another drive on Windows
        filename = os.path.relpath(filename, root)
    if filename.startswith(".."):
        filename = os.path.basename(filename)
    return filename


def _line_of(code: CodeType, offset: int) -> int | None:
    """The line of bytecode ``offset`` in ``code``: ``frame.f_lineno``, found by bisection.

    ``f_lineno`` decodes the line table from the start of the function each time, so in
    a generated ``define`` of 1,000 clusters (30,000 lines) asking it once per
    declaration cost 0.8 s; the table is decoded once per function here.
    """
    starts, lines = _line_table(code)
    return lines[bisect.bisect_right(starts, offset) - 1] if starts else None


@_per_code
def _line_table(code: CodeType) -> tuple[list[int], list[int | None]]:
    starts: list[int] = []
    lines: list[int | None] = []
    for start, _end, line in code.co_lines():
        starts.append(start)
        lines.append(line)
    return starts, lines


@functools.lru_cache(maxsize=256)
def _is_library(filename: str) -> bool:
    # "<string>" is the __init__ that dataclasses generate for ClusterTemplate, NodeGroup, ...
    return (
        filename.startswith(_FLEET_DIR)
        or filename == "<string>"
        or any(d in filename for d in _LIBRARY_DIRS[1:])
    )
