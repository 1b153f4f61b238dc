"""Where credential material sits in a nested value (maps, lists, strings): one scan shared
by the secret guard of rendered objects (:mod:`fleet.checks.secret_guard`) and by what an
import reads from its input (state values, tfvars values, a template's attributes), and
:func:`shown`, the way a message shows an input value (never one that looks like a
credential: :func:`fleet.core.redact.shown`).

A finding is a string that holds credential material (:func:`fleet.core.secrets.credential_in`),
a map key that does, or a field named like a credential (``password``, ``token``,
``apiKey``, ... or ending in one of those) whose value is a non-empty literal string, and a
``{key|name, value}`` pair (a node label, an environment variable) whose name is such a
name. Names ending in ``Ref``, ``Selector``, ``Name``, ``Key``, ``Path`` ...
(``tokenSecretRef``, ``secretName``) name a secret rather than hold one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from fleet.core import redact
from fleet.core.manifest import format_path
from fleet.core.secrets import MIN_LENGTH, credential_in, is_credential_field


def _credential_literal(key: str) -> str:
    return (
        f"literal value in credential field {key!r}; "
        "use a secret reference (for example a *SecretRef) instead"
    )


_CONTAINERS = (dict, list)  # a tuple: `dict | list` would build a union on every call


_SHORTEST = 9
"""Shorter strings hold no credential material (``a://b:c@d``, a URL with a password, is the
shortest; the other kinds need :data:`~fleet.core.secrets.MIN_LENGTH`)."""
_credential_in = functools.lru_cache(maxsize=1 << 16)(credential_in)
"""Label values, image names and the like repeat across clusters: each is read once."""


def _pair_name(item: dict[Any, Any]) -> str | None:
    """The name of a ``{key|name, value}`` pair (a node label, an environment variable)."""
    for field in ("key", "name"):
        name = item.get(field)
        if isinstance(name, str) and isinstance(item.get("value"), str):
            return name
    return None


def scan(value: Any, path: list[str | int], out: list[tuple[list[str | int], str]]) -> None:
    """Append ``(path, what)`` to ``out`` for each place in ``value`` (at ``path``) that
    holds credential material (see the module docstring)."""
    # This walks every value of every object a synth has not checked before: one shared
    # path list, copied only for a finding, and no per-node generators (40% faster).
    if isinstance(value, dict):
        pair = _pair_name(value)
        if pair is not None and is_credential_field(pair) and value["value"].strip():
            out.append(([*path, "value"], _credential_literal(pair)))
        for key, item in value.items():
            name = str(key)
            if len(name) >= MIN_LENGTH:
                problem = _credential_in(name)
                if problem:
                    out.append((path[:], f"a key holds a {problem}"))
                    name = "<redacted key>"  # never shown, even in the path of a finding
            if isinstance(item, str):
                if is_credential_field(name) and item.strip():
                    out.append(([*path, name], _credential_literal(name)))
                elif len(item) >= _SHORTEST:
                    problem = _credential_in(item)
                    if problem:
                        out.append(([*path, name], problem))
            elif isinstance(item, _CONTAINERS):
                path.append(name)
                scan(item, path, out)
                path.pop()
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str) and len(item) >= _SHORTEST:
                problem = _credential_in(item)
                if problem:
                    out.append(([*path, index], problem))
            elif isinstance(item, _CONTAINERS):
                path.append(index)
                scan(item, path, out)
                path.pop()


def credential_paths(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(path, what)`` for each value of ``values`` (nested maps and lists) that holds
    credential material: ``labels.password`` -> "literal value in credential field ..."."""
    found: list[tuple[list[str | int], str]] = []
    scan(dict(values), [], found)
    return [(format_path(path), what.split(";")[0]) for path, what in found]


# One rule for what a message may quote, for every error and report line of the tool.
HIDDEN, shown = redact.HIDDEN, redact.shown
