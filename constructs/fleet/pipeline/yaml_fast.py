"""Canonical YAML, fast: the bytes of :func:`fleet.pipeline.yaml_canonical.to_yaml`, without
PyYAML's representer.

PyYAML's C dumper still builds a node tree in Python for every object (about 0.3 ms for
a cluster with 60 labels), which made YAML the largest cost of a fleet synth. Kubernetes
objects use a small part of YAML: block mappings and sequences of single-line scalars.
This module writes that part directly; the text of each distinct scalar still comes from
the canonical dumper (once per process), so quoting rules are its own
(:mod:`fleet.pipeline.yaml_scalars`). An object outside that part (a multi-line string, a
non-string key, a type the fast path does not know) goes through
:func:`fleet.pipeline.yaml_canonical.to_yaml` whole. Neither writes anchors: a sub-object
used twice is written twice.
``tests/test_yaml_fast.py`` checks equal bytes on generated objects and on the fleet.
"""

from __future__ import annotations

import io
import re
from typing import Any

from yaml.nodes import ScalarNode

from fleet.pipeline.yaml_canonical import DUMPER, to_yaml
from fleet.pipeline.yaml_canonical import dump as _pyyaml

TEXTS_KEPT = 1 << 16
"""Scalar texts each table below keeps: a full table is emptied before it takes another (a
synth of 1,000 clusters has about 20,000 distinct strings), so a long-lived process keeps
at most this many, whatever it dumps."""
_VALUES: dict[str, str | None] = {}
"""String value -> its YAML text (None: not a single-line scalar, use the slow path)."""
_KEYS: dict[str, str | None] = {}
"""Mapping key -> its YAML text as a simple key (None: use the slow path)."""
_FLOATS: dict[str, str | None] = {}
"""repr(float) -> its YAML text (by repr: 0.0 and -0.0 are equal keys but differ here)."""


def _keep(table: dict[str, str | None], key: str, text: str | None) -> None:
    """``table[key] = text``, the table emptied first when it holds :data:`TEXTS_KEPT`.
    Keyed by the scalar itself, a text is the same whoever asks: only the memory is bounded."""
    if len(table) >= TEXTS_KEPT:
        table.clear()
    table[key] = text


class _Slow(Exception):
    """The object needs PyYAML's full dumper."""


def _scalar_text(value: object) -> str | None:
    """``value`` as PyYAML writes it after ``key: `` when that is one line, else None."""
    text = _pyyaml({"k": value})
    if not text.startswith("k: ") or text.count("\n") != 1 or not text.endswith("\n"):
        return None
    return text[3:-1]


_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
"""Strings libyaml's emitter writes as they are when they resolve to a string: no
indicator, space, quote, line break or non-ASCII character, nothing at the start that
YAML reads as structure (``yaml_emitter_analyze_scalar``: block plain allowed)."""
_STR_TAG = "tag:yaml.org,2002:str"
_RESOLVER: list[Any] = []


def _plain(value: str) -> bool:
    """Whether PyYAML writes ``value`` plain, as it is, without asking it to dump it.

    The two conditions of the C dumper (``_yaml.CEmitter``): the characters allow a plain
    scalar (:data:`_PLAIN`, a subset), and the dumper's own resolver reads the plain text
    back as a string (not ``true``, ``1``, ``0x1F``, ``2020-01-01``, ...): the
    ``plain_implicit`` flag it hands to libyaml. Saves one ``yaml.dump`` call (about
    15 µs) per distinct string; ``tests/test_yaml_fast.py`` compares both ways.
    """
    if not _PLAIN.fullmatch(value):
        return False
    if not _RESOLVER:
        _RESOLVER.append(DUMPER(io.StringIO()).resolve)
    return bool(_RESOLVER[0](ScalarNode, value, (True, False)) == _STR_TAG)


def _value(value: str) -> str:
    text = _VALUES.get(value, "")
    if text == "":
        if _plain(value):
            text = value
        elif "\n" in value or "\r" in value:
            text = None
        else:
            text = _scalar_text(value)
        _keep(_VALUES, value, text)
    if text is None:
        raise _Slow
    return text


def _key(key: object) -> str:
    if type(key) is not str:
        raise _Slow
    text = _KEYS.get(key, "")
    if text == "":
        text = None
        if key and len(key) < 128 and "\n" not in key and "\r" not in key:
            dumped = _pyyaml({key: 0})
            if dumped.endswith(": 0\n") and dumped.count("\n") == 1:
                text = dumped[:-4]
        _keep(_KEYS, key, text)
    if text is None:
        raise _Slow
    return text


def _scalar(value: object) -> str:
    kind = type(value)
    if kind is str:
        return _value(value)  # type: ignore[arg-type]
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, float) and kind is float:
        text = _FLOATS.get(repr(value), "")
        if text == "":
            text = _scalar_text(value)
            _keep(_FLOATS, repr(value), text)
        if text is None:
            raise _Slow
        return text
    raise _Slow


class _Writer:
    """Writes one object: a list of lines (an object used twice is written twice)."""

    __slots__ = ("out",)

    def __init__(self) -> None:
        self.out: list[str] = []

    def map(self, node: dict[Any, Any], indent: str, first: str) -> None:
        """A non-empty mapping; first line starts with ``first``, the others with ``indent``."""
        out = self.out
        prefix = first
        for key in sorted(node):
            value = node[key]
            # The common cases in place, without a call: a key or a string whose text is
            # known, a non-empty container.
            text = _KEYS.get(key) if type(key) is str else None
            head = f"{prefix}{_key(key) if text is None else text}:"
            prefix = indent
            kind = type(value)
            if kind is str:
                text = _VALUES.get(value)
                out.append(f"{head} {_value(value) if text is None else text}\n")
            elif kind is dict or kind is list:
                if not value:
                    out.append(head + (" {}\n" if kind is dict else " []\n"))
                    continue
                out.append(f"{head}\n")
                if kind is dict:
                    self.map(value, indent + "  ", indent + "  ")
                else:
                    self.seq(value, indent, indent)  # PyYAML indents no sequence in a mapping
            else:
                out.append(f"{head} {_scalar(value)}\n")

    def seq(self, node: list[Any], indent: str, first: str) -> None:
        """A non-empty sequence; first line starts with ``first``, the others with ``indent``."""
        out = self.out
        prefix = first
        for item in node:
            head = prefix + "- "
            prefix = indent
            kind = type(item)
            if kind is str:
                text = _VALUES.get(item)
                out.append(f"{head}{_value(item) if text is None else text}\n")
            elif kind is dict or kind is list:
                if not item:
                    out.append(head + ("{}\n" if kind is dict else "[]\n"))
                elif kind is dict:
                    self.map(item, indent + "  ", head)
                else:
                    self.seq(item, indent + "  ", head)
            else:
                out.append(head + _scalar(item) + "\n")


def fast_to_yaml(body: dict[str, Any]) -> bytes:
    """The bytes of :func:`~fleet.pipeline.yaml_canonical.to_yaml` for ``body``, 5-10x faster."""
    if type(body) is not dict or not body:
        return to_yaml(body)
    writer = _Writer()
    try:
        writer.map(body, "", "")
    except (_Slow, TypeError, RecursionError):
        # TypeError: keys that do not sort (PyYAML raises too); RecursionError: an object
        # that holds itself (to_yaml says so)
        return to_yaml(body)
    return "".join(writer.out).encode("utf-8")
