"""Small value types shared by the constructs: per-environment values, secret references."""

from __future__ import annotations

import bisect
import contextlib
import functools
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from types import CodeType
from typing import Any, Generic, TypeVar

from fleet.core.errors import DefinitionError

T = TypeVar("T")

_FLEET_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Frames of these packages sit between a user's declaration and our constructors.
_LIBRARY_DIRS = (_FLEET_DIR, os.sep + "jsii" + os.sep, os.sep + "typeguard" + os.sep)


@dataclass(frozen=True)
class PerEnv(Generic[T]):
    """A value that differs by environment: ``PerEnv({"dev": 1, "prod": 3}, default=2)``.

    Without ``default``, every environment the construct is placed in must be listed.
    """

    values: Mapping[str, T]
    default: T | None = None

    def get(self, environment: str, *, where: str, field: str) -> T:
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


@dataclass(frozen=True, kw_only=True)
class SecretKeyRef:
    """A key of a Kubernetes Secret, by reference only (the value never enters ``dist/``)."""

    name: str
    namespace: str
    key: str

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


_location_root: list[str] = []


def set_location_root(root: str) -> None:
    """Make definition locations relative to ``root`` (the project), not the cwd."""
    _location_root[:] = [os.path.abspath(root)]


def caller_location(*, outer: int = 0) -> str:
    """``file:line`` of the first caller outside the fleet package (the user's definition).

    ``outer=1``: the user's code that called that one (the next frame out that is neither
    the fleet's nor in the Python installation or virtualenv, such as a test runner or the
    ``fleet`` script), to tell two calls of one line apart; ``""`` when there is none.
    """
    frame = sys._getframe(1)
    while frame.f_back is not None and _is_library(frame.f_code.co_filename):
        frame = frame.f_back
    root = _location_root[0] if _location_root else os.getcwd()
    for _ in range(outer):
        caller = frame.f_back
        while caller is not None and not _is_users(caller.f_code.co_filename):
            caller = caller.f_back
        if caller is None:
            return ""
        frame = caller
    line = _line_of(frame.f_code, frame.f_lasti)
    return f"{_shown_name(frame.f_code.co_filename, root)}:{line}"


def _is_users(filename: str) -> bool:
    return not (
        _is_library(filename)
        or filename.startswith("<")
        or filename.startswith((sys.prefix, sys.base_prefix))
        or "site-packages" in filename
    )


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


@functools.lru_cache(maxsize=16)
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
