"""The modules ``fleet import tfstate`` writes, as a person would write them.

Built from :mod:`fleet.importers.codegen`'s values (every input value enters as a literal):
templates in one catalog module; per module, its projects and clusters; three or more node
groups that differ only in their name, zone and id as one comprehension; a label set used
twice or more as a named constant. :func:`cluster_module` also gives the lines each
declaration spans, so that a problem found when the result is rendered names the input
value that caused it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fleet.importers.codegen import (
    FLEET,
    GENERATED_STATE,
    INDENT,
    blocks,
    callees,
    comment_lines,
    module,
    statement,
    template_variable,
)
from fleet.importers.pysource import (
    Call,
    Comprehension,
    Lookup,
    Name,
    NamePattern,
    Tuple,
    Value,
    py_str,
)

MIN_REPEATED = 3
"""Node groups alike but for :data:`VARYING` become a comprehension from this many."""
VARYING = ("name", "availability_zone", "external_name")
"""What may differ between the node groups of one comprehension."""
_TARGET = {"name": "name", "availability_zone": "zone", "external_name": "group_id"}
_MIN_CONSTANT = 2
"""A label set of at least this many labels, used twice or more, becomes a constant."""


@dataclass(frozen=True, kw_only=True)
class TemplateDecl:
    """A ``ClusterTemplate`` of the catalog module."""

    variable: str
    keywords: tuple[tuple[str, Value], ...]
    comment: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ClusterCall:
    """A ``MagnumCluster`` call: its keywords (``node_groups`` apart) and node groups."""

    construct_id: str
    keywords: tuple[tuple[str, Value], ...]
    node_groups: tuple[tuple[tuple[str, Value], ...], ...] = ()
    comment: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ProjectCall:
    """A project the module declares (``call``) or looks up (``reused``)."""

    variable: str
    call: Call | None = None
    reused: str | None = None
    reused_from: str = ""


@dataclass(frozen=True, kw_only=True)
class Source:
    """A generated module's text and the lines (1-based, inclusive) of each declaration."""

    text: str
    spans: Mapping[str, tuple[int, int]] = field(default_factory=dict)


# --- node groups -------------------------------------------------------------------------------


def _key(value: Value) -> str:
    return repr(value)


def node_group_items(groups: Sequence[tuple[tuple[str, Value], ...]]) -> list[Value]:
    """The ``node_groups`` list: groups alike but for their name, zone and id, three or
    more of them, as one comprehension; every other group as a ``NodeGroup`` call."""
    buckets: dict[tuple[object, ...], list[dict[str, Value]]] = {}
    for group in groups:
        keywords = dict(group)
        signature = tuple((k, k in VARYING or _key(v)) for k, v in keywords.items())
        buckets.setdefault(signature, []).append(keywords)
    out: list[Value] = []
    for members in buckets.values():
        if len(members) < MIN_REPEATED:
            out.extend(Call(callee="NodeGroup", keywords=tuple(m.items())) for m in members)
            continue
        out.append(_comprehension(members))
    return out


def _comprehension(members: list[dict[str, Value]]) -> Comprehension:
    first = members[0]
    varying = [k for k in first if k in VARYING and len({_key(m[k]) for m in members}) > 1]
    name_pattern = _name_pattern(members) if "name" in varying else None
    columns = [k for k in varying if not (k == "name" and name_pattern is not None)]
    element: list[tuple[str, Value]] = []
    for key, value in first.items():
        if key == "name" and name_pattern is not None:
            element.append((key, name_pattern))
        elif key in varying:
            element.append((key, Name(_TARGET[key])))
        else:
            element.append((key, value))
    rows = tuple(Tuple(tuple(m[k] for k in columns)) for m in members)
    return Comprehension(
        element=Call(callee="NodeGroup", keywords=tuple(element)),
        targets=tuple(_TARGET[k] for k in columns),
        rows=rows,
    )


def _name_pattern(members: list[dict[str, Value]]) -> NamePattern | None:
    """``f"{zone}-cache"`` when every name is its zone with one prefix and suffix."""
    pairs = [(m.get("name"), m.get("availability_zone")) for m in members]
    if not all(isinstance(n, str) and isinstance(z, str) and z and z in n for n, z in pairs):
        return None
    splits = {(str(n).split(str(z), 1)[0], str(n).split(str(z), 1)[1]) for n, z in pairs}
    if len(splits) != 1:
        return None
    prefix, suffix = splits.pop()
    return NamePattern(prefix=prefix, target=Name(_TARGET["availability_zone"]), suffix=suffix)


# --- label constants ---------------------------------------------------------------------------


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


def _replace(value: Value, constants: Mapping[str, str]) -> Value:
    if isinstance(value, Mapping):
        name = constants.get(_key(dict(value)))
        if name is not None:
            return Name(name)
        return {k: _replace(v, constants) for k, v in value.items()}
    if isinstance(value, Call):
        return Call(
            callee=value.callee,
            positional=tuple(_replace(v, constants) for v in value.positional),
            keywords=tuple((k, _replace(v, constants)) for k, v in value.keywords),
        )
    if isinstance(value, Comprehension):
        return Comprehension(
            element=_replace(value.element, constants),
            targets=value.targets,
            rows=tuple(Tuple(tuple(_replace(v, constants) for v in r.items)) for r in value.rows),
        )
    if isinstance(value, Tuple):
        return Tuple(tuple(_replace(v, constants) for v in value.items))
    if isinstance(value, list):
        return [_replace(v, constants) for v in value]
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
        name = template_variable(stem) + "_LABELS"
        while name in taken:
            name = f"{name}_{len(taken)}"
        taken.add(name)
        constants[key] = name
        statements.append(statement(sets[key], target=name))
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


# --- modules -----------------------------------------------------------------------------------


def templates_module(templates: Sequence[TemplateDecl]) -> str:
    """The catalog module: every template, sorted by variable, label sets shared as
    constants."""
    ordered = sorted(templates, key=lambda t: t.variable)
    calls: list[tuple[str, Value]] = [
        (t.variable, Call(callee="ClusterTemplate", keywords=t.keywords)) for t in ordered
    ]
    constants, constant_lines = label_constants(calls, {t.variable for t in ordered})
    statements = list(constant_lines)
    for template, (_, call) in zip(ordered, calls, strict=True):
        lines = comment_lines(template.comment)
        statements.append(lines + statement(_replace(call, constants), target=template.variable))
    return module(
        about=f"{GENERATED_STATE} (templates): re-import to update.",
        names={"fleet": ["ClusterTemplate"]},
        body=blocks(*statements),
    )


def cluster_module(
    *,
    title: str,
    projects: Sequence[ProjectCall],
    clusters: Sequence[ClusterCall],
    template_imports: Mapping[str, set[str]],
) -> Source:
    """A module of imported clusters: projects, then clusters by construct id."""
    ordered = sorted(clusters, key=lambda c: c.construct_id)
    calls: list[tuple[str, Value]] = []
    for cluster in ordered:
        keywords = list(cluster.keywords)
        if cluster.node_groups:
            keywords.insert(
                _groups_position(keywords),
                ("node_groups", node_group_items(cluster.node_groups)),
            )
        calls.append(
            (
                cluster.construct_id,
                Call(
                    callee="MagnumCluster",
                    positional=(FLEET, cluster.construct_id),
                    keywords=tuple(keywords),
                ),
            )
        )
    constants, constant_lines = label_constants(calls, set())
    names: dict[str, set[str]] = {"fleet": {"Fleet", "MagnumCluster"}}
    for source, variables in template_imports.items():
        names.setdefault(source, set()).update(variables)
    if projects:
        names["fleet"].add("OpenStackProject")
    text_calls = [(cid, _replace(call, constants)) for cid, call in calls]
    used = set().union(*(callees(c) for _, c in text_calls)) if text_calls else set()
    names["fleet"].update(used & {"NodeGroup", "per_env"})
    statements: list[list[str]] = []
    for project in sorted(projects, key=lambda p: p.variable):
        if project.call is None:
            lookup = Lookup(construct_id=project.reused or "", cls=Name("OpenStackProject"))
            statements.append(
                [
                    *comment_lines([f"Declared in {project.reused_from}."], INDENT),
                    *statement(lookup, indent=INDENT, target=project.variable),
                ]
            )
        else:
            statements.append(statement(project.call, indent=INDENT, target=project.variable))
    call_statements = []
    for cluster, (_, call) in zip(ordered, text_calls, strict=True):
        lines = comment_lines(cluster.comment, INDENT)
        call_statements.append(lines + statement(call, indent=INDENT))
    define = [
        "def define(fleet: Fleet) -> None:",
        f'{INDENT}"""Declare the imported clusters."""',
        *blocks(*statements, *call_statements),
    ]
    body = [*blocks(*constant_lines), "", "", *define] if constant_lines else ["", *define]
    about = f" ({title})" if title else ""
    text = module(about=f"{GENERATED_STATE}{about}: re-import to update.", names=names, body=body)
    return Source(text=text, spans=_spans(text, [c.construct_id for c in ordered]))


def emptied_module(*, title: str, moved_to: Sequence[str]) -> str:
    """A module an earlier import wrote whose clusters are now declared in ``moved_to``
    (merged across environments): it declares nothing, so that no cluster is declared
    twice."""
    return module(
        about=f"{GENERATED_STATE} ({title}): re-import to update.",
        names={"fleet": ["Fleet"]},
        body=[
            "",
            "def define(fleet: Fleet) -> None:",
            f'{INDENT}"""Nothing: its clusters are declared with other environments\' in:"""',
            *comment_lines(moved_to, INDENT),
        ],
    )


def _groups_position(keywords: Sequence[tuple[str, Value]]) -> int:
    """``node_groups`` goes before the adoption keywords (as a person reads them)."""
    for i, (key, _) in enumerate(keywords):
        if key in ("external_name", "deletion_policy", "management_policies"):
            return i
    return len(keywords)


def _spans(text: str, construct_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """The lines of each ``MagnumCluster(fleet, "<id>", ...)`` call."""
    lines = text.split("\n")
    starts: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if line.strip() == "MagnumCluster(" or line.strip().startswith("MagnumCluster(fleet,"):
            # The id is on this line or one of the next two.
            window = " ".join(lines[number - 1 : number + 2])
            for cid in construct_ids:
                if f"fleet, {py_str(cid)}" in window or f"{py_str(cid)}," in window:
                    starts.append((number, cid))
                    break
    spans: dict[str, tuple[int, int]] = {}
    for i, (start, cid) in enumerate(starts):
        end = starts[i + 1][0] - 1 if i + 1 < len(starts) else len(lines)
        spans[cid] = (start, end)
    return spans
