"""The modules ``fleet import tfstate`` writes, as a person would write them.

Built from :mod:`fleet.importers.codegen`'s values (every input value enters as a literal):
templates in one catalog module; per module, its projects and clusters; three or more node
groups that differ only in their name, zone and id as one comprehension; a label set used
twice or more as a named constant (:mod:`fleet.codegen.shared`). :func:`cluster_module`
also gives the lines each declaration spans, so that a problem found when the result is
rendered names the input value that caused it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fleet.codegen.layout import (
    FLEET,
    GENERATED_STATE,
    INDENT,
    blocks,
    callees,
    comment_lines,
    module,
)
from fleet.codegen.shared import Repetition, label_constants, repeated_calls, replace_constants
from fleet.core.pysource import Call, Lookup, Name, Value, py_str
from fleet.importers.codegen import statement

NODE_GROUPS = Repetition(
    varying={"name": "name", "availability_zone": "zone", "external_name": "group_id"},
    name="name",
    zone="availability_zone",
)
"""Node groups alike but for their name, zone and id become one comprehension."""


def node_group_items(groups: Sequence[tuple[tuple[str, Value], ...]]) -> list[Value]:
    """The ``node_groups`` list (see :func:`fleet.codegen.shared.repeated_calls`)."""
    return repeated_calls("NodeGroup", groups, NODE_GROUPS)


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
        statements.append(
            lines + statement(replace_constants(call, constants), target=template.variable)
        )
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
    text_calls = [(cid, replace_constants(call, constants)) for cid, call in calls]
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
