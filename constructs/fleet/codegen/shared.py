"""What a generated module shares instead of repeating: calls alike but for a few
keywords as one comprehension, and a label set used twice or more as a named constant
(as a person would write them)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fleet.codegen.layout import constant_name, statement
from fleet.core.pysource import Call, Comprehension, Name, NamePattern, Tuple, Value

MIN_REPEATED = 3
"""Calls alike but for :attr:`Repetition.varying` become a comprehension from this many."""
_MIN_CONSTANT = 2
"""A label set of at least this many labels, used twice or more, becomes a constant."""


@dataclass(frozen=True, kw_only=True)
class Repetition:
    """Which keywords may differ between the calls of one comprehension, and the
    comprehension's variable for each (a node group's ``name``, zone and id)."""

    varying: Mapping[str, str] = field(default_factory=dict)
    """Keyword -> the comprehension's variable."""
    name: str = ""
    """The keyword of a name written ``f"{<zone>}<suffix>"`` when every name is its zone
    with one prefix and suffix ("" : never)."""
    zone: str = ""
    """The keyword of that zone."""


def _key(value: Value) -> str:
    return repr(value)


def repeated_calls(
    callee: str, groups: Sequence[tuple[tuple[str, Value], ...]], repetition: Repetition
) -> list[Value]:
    """The items of a list of ``callee`` calls (each given as its keywords): calls alike
    but for ``repetition``'s keywords, :data:`MIN_REPEATED` or more of them, as one
    comprehension; every other one as a call."""
    buckets: dict[tuple[object, ...], list[dict[str, Value]]] = {}
    for group in groups:
        keywords = dict(group)
        signature = tuple((k, k in repetition.varying or _key(v)) for k, v in keywords.items())
        buckets.setdefault(signature, []).append(keywords)
    out: list[Value] = []
    for members in buckets.values():
        if len(members) < MIN_REPEATED:
            out.extend(Call(callee=callee, keywords=tuple(m.items())) for m in members)
            continue
        out.append(_comprehension(callee, members, repetition))
    return out


def _comprehension(
    callee: str, members: list[dict[str, Value]], repetition: Repetition
) -> Comprehension:
    first = members[0]
    targets = repetition.varying
    varying = [k for k in first if k in targets and len({_key(m[k]) for m in members}) > 1]
    named = repetition.name and repetition.name in varying
    name_pattern = _name_pattern(members, repetition) if named else None
    columns = [k for k in varying if not (k == repetition.name and name_pattern is not None)]
    element: list[tuple[str, Value]] = []
    for key, value in first.items():
        if key == repetition.name and name_pattern is not None:
            element.append((key, name_pattern))
        elif key in varying:
            element.append((key, Name(targets[key])))
        else:
            element.append((key, value))
    rows = tuple(Tuple(tuple(m[k] for k in columns)) for m in members)
    return Comprehension(
        element=Call(callee=callee, keywords=tuple(element)),
        targets=tuple(targets[k] for k in columns),
        rows=rows,
    )


def _name_pattern(members: list[dict[str, Value]], repetition: Repetition) -> NamePattern | None:
    """``f"{zone}-cache"`` when every name is its zone with one prefix and suffix."""
    pairs = [(m.get(repetition.name), m.get(repetition.zone)) for m in members]
    if not all(isinstance(n, str) and isinstance(z, str) and z and z in n for n, z in pairs):
        return None
    splits = {(str(n).split(str(z), 1)[0], str(n).split(str(z), 1)[1]) for n, z in pairs}
    if len(splits) != 1:
        return None
    prefix, suffix = splits.pop()
    return NamePattern(
        prefix=prefix, target=Name(repetition.varying[repetition.zone]), suffix=suffix
    )


def _label_sets(value: Value, found: list[Mapping[str, Value]]) -> None:
    if isinstance(value, Mapping):
        if len(value) >= _MIN_CONSTANT and all(isinstance(v, str) for v in value.values()):
            found.append(value)
        for item in value.values():
            _label_sets(item, found)
    elif isinstance(value, Call):
        for item in (*value.positional, *(v for _, v in value.keywords)):
            _label_sets(item, found)
    elif isinstance(value, Comprehension):
        _label_sets(value.element, found)
        for row in value.rows:
            _label_sets(row, found)
    elif isinstance(value, Tuple):
        for item in value.items:
            _label_sets(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _label_sets(item, found)


def replace_constants(value: Value, constants: Mapping[str, str]) -> Value:
    """``value`` with each label set of ``constants`` (by content) as its constant's name."""
    if isinstance(value, Mapping):
        name = constants.get(_key(dict(value)))
        if name is not None:
            return Name(name)
        return {k: replace_constants(v, constants) for k, v in value.items()}
    if isinstance(value, Call):
        return Call(
            callee=value.callee,
            positional=tuple(replace_constants(v, constants) for v in value.positional),
            keywords=tuple((k, replace_constants(v, constants)) for k, v in value.keywords),
        )
    if isinstance(value, Comprehension):
        return Comprehension(
            element=replace_constants(value.element, constants),
            targets=value.targets,
            rows=tuple(
                Tuple(tuple(replace_constants(v, constants) for v in r.items)) for r in value.rows
            ),
        )
    if isinstance(value, Tuple):
        return Tuple(tuple(replace_constants(v, constants) for v in value.items))
    if isinstance(value, list):
        return [replace_constants(v, constants) for v in value]
    return value


def label_constants(
    values: Sequence[tuple[str, Value]], taken: set[str]
) -> tuple[dict[str, str], list[list[str]]]:
    """Label sets used twice or more among ``values`` (named ``(owner, value)``): their
    constant by content, and the constants' statements. A constant is named after what
    its users' names share (``PAWS_LABELS``), else after its first user."""
    found: dict[str, list[str]] = {}
    sets: dict[str, Mapping[str, Value]] = {}
    for owner, value in values:
        seen: list[Mapping[str, Value]] = []
        _label_sets(value, seen)
        for labels in seen:
            key = _key(dict(labels))
            sets.setdefault(key, dict(labels))
            found.setdefault(key, []).append(owner)
    constants: dict[str, str] = {}
    statements: list[list[str]] = []
    for key, owners in found.items():
        if len(owners) < 2:
            continue
        stem = _common(owners) or owners[0]
        name = constant_name(stem, prefix="TEMPLATE") + "_LABELS"
        while name in taken:
            name = f"{name}_{len(taken)}"
        taken.add(name)
        constants[key] = name
        statements.append(statement(sets[key], calls=(), target=name))
    return constants, statements


def _common(names: Sequence[str]) -> str:
    """The words every name starts and ends with: ``k8s-calico-atomic``,
    ``k8s-flannel-atomic`` -> ``k8s-atomic``."""
    words = [[w for w in re.split(r"[^A-Za-z0-9]+", n) if w] for n in names]

    def shared(rows: Sequence[Sequence[str]]) -> list[str]:
        out: list[str] = []
        for column in zip(*rows, strict=False):
            if len(set(column)) != 1:
                break
            out.append(column[0])
        return out

    head = shared(words)
    rest = [row[len(head) :] for row in words]
    tail = shared([row[::-1] for row in rest])[::-1] if all(rest) else []
    return "-".join([*head, *tail])
