"""The modules ``fleet import tfstate`` writes, as a person would write them.

Built from :mod:`fleet.core.pysource`'s values (every input value enters as a literal):
per module, its shared declarations (projects, accounts) and its clusters; three or more
node pools that differ only in their name, zone and id as one comprehension; a label set
used twice or more as a named constant (:mod:`fleet.codegen.shared`). :func:`cluster_module`
also gives the lines each declaration spans, so that a problem found when the result is
rendered names the input value that caused it. Where each state's clusters go is
:func:`module_stem`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fleet.clouds.importer import GeneratedCode, SharedDecl
from fleet.codegen.files import relative
from fleet.codegen.layout import (
    FLEET,
    GENERATED_STATE,
    INDENT,
    PER_ENV,
    blocks,
    callees,
    comment_lines,
    module,
    statement,
)
from fleet.codegen.shared import label_constants, repeated_calls, replace_constants
from fleet.core.config import FleetConfig
from fleet.core.pysource import Call, Lookup, Name, Value, py_str
from fleet.terraform.state import StateFile

_GENERIC_STEMS = ("terraform", "state", "default", "show", "tfstate")


@dataclass(frozen=True, kw_only=True)
class ClusterCall:
    """A cluster's call: its keywords (the pools apart) and its pools'."""

    construct_id: str
    keywords: tuple[tuple[str, Value], ...]
    pools: tuple[tuple[tuple[str, Value], ...], ...] = ()
    comment: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Source:
    """A generated module's text and the lines (1-based, inclusive) of each declaration."""

    text: str
    spans: Mapping[str, tuple[int, int]] = field(default_factory=dict)


def module_stem(state: StateFile, config: FleetConfig) -> str:
    """The module of a state's clusters: the state file's name, or its folder's when the
    name says nothing (``terraform.tfstate``, ``dev.tfstate``)."""
    name = state.path.name
    for suffix in (".show.json", ".tfstate.json", ".tfstate", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    if name.lower() in _GENERIC_STEMS or name in config.environments:
        name = state.path.resolve().parent.name
        if name.lower() == "state":
            name = state.path.resolve().parent.parent.name
    stem = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if not stem or stem[0].isdigit():
        stem = f"tf_{stem}"
    return stem


def shared_in(
    shared: SharedDecl, module: Path, declared: dict[str, Path], config: FleetConfig
) -> SharedDecl:
    """``shared`` as ``module`` declares it: the first module that uses a new one declares
    it, the others look it up (one declaration of a construct id)."""
    if shared.call is None:
        return shared
    first = declared.setdefault(shared.variable, module)
    if first == module:
        return shared
    return SharedDecl(
        variable=shared.variable,
        cls=shared.cls,
        reused=str(shared.call.positional[1]),
        reused_from=relative(first, config),
    )


def cluster_module(
    *,
    title: str,
    shared: Sequence[SharedDecl],
    clusters: Sequence[ClusterCall],
    imports: Mapping[str, set[str]],
    code: GeneratedCode,
) -> Source:
    """A module of imported clusters: shared declarations, then clusters by construct id."""
    callee = code.declaration.__name__
    ordered = sorted(clusters, key=lambda c: c.construct_id)
    calls: list[tuple[str, Value]] = []
    for cluster in ordered:
        keywords = list(cluster.keywords)
        if cluster.pools:
            pools = repeated_calls(code.pool.__name__, cluster.pools, code.repetition)
            keywords.insert(_pools_position(keywords, code), (code.pools_keyword, pools))
        calls.append(
            (
                cluster.construct_id,
                Call(
                    callee=callee,
                    positional=(FLEET, cluster.construct_id),
                    keywords=tuple(keywords),
                ),
            )
        )
    constants, constant_lines = label_constants(calls, set())
    # The cloud's classes come from its module (``fleet`` for a built-in cloud).
    names: dict[str, set[str]] = {"fleet": {"Fleet"}}
    names.setdefault(code.module, set()).add(callee)
    for source, variables in imports.items():
        names.setdefault(source, set()).update(variables)
    names[code.module].update(s.cls for s in shared)
    text_calls = [(cid, replace_constants(call, constants)) for cid, call in calls]
    used = set().union(*(callees(c) for _, c in text_calls)) if text_calls else set()
    names["fleet"].update(used & {PER_ENV})
    names[code.module].update(used & {code.pool.__name__, *code.calls})
    statements: list[list[str]] = []
    for one in sorted(shared, key=lambda p: p.variable):
        if one.call is None:
            lookup = Lookup(construct_id=one.reused or "", cls=Name(one.cls))
            statements.append(
                [
                    *comment_lines([f"Declared in {one.reused_from}."], INDENT),
                    *statement(
                        lookup,
                        indent=INDENT,
                        target=one.variable,
                        calls=code.calls,
                        lookups=code.lookups,
                    ),
                ]
            )
        else:
            statements.append(
                statement(
                    one.call,
                    indent=INDENT,
                    target=one.variable,
                    calls=code.calls,
                    lookups=code.lookups,
                )
            )
    call_statements = []
    for cluster, (_, call) in zip(ordered, text_calls, strict=True):
        lines = comment_lines(cluster.comment, INDENT)
        call_statements.append(
            lines + statement(call, indent=INDENT, calls=code.calls, lookups=code.lookups)
        )
    define = [
        "def define(fleet: Fleet) -> None:",
        f'{INDENT}"""Declare the imported clusters."""',
        *blocks(*statements, *call_statements),
    ]
    body = [*blocks(*constant_lines), "", "", *define] if constant_lines else ["", *define]
    about = f" ({title})" if title else ""
    text = module(about=f"{GENERATED_STATE}{about}: re-import to update.", names=names, body=body)
    return Source(text=text, spans=_spans(text, callee, [c.construct_id for c in ordered]))


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


def _pools_position(keywords: Sequence[tuple[str, Value]], code: GeneratedCode) -> int:
    """The pools go before the adoption keywords (as a person reads them)."""
    for i, (key, _) in enumerate(keywords):
        if key in code.pools_before:
            return i
    return len(keywords)


def _spans(text: str, callee: str, construct_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """The lines of each ``<callee>(fleet, "<id>", ...)`` call."""
    lines = text.split("\n")
    starts: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if line.strip() == f"{callee}(" or line.strip().startswith(f"{callee}(fleet,"):
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
