"""Shows a :class:`~fleet.guards.diff.FleetDiff` as text (terminal, CI log) or Markdown
(MR/PR comment).

The Markdown is a summary table per environment, the guards' verdicts, then per
environment the added and removed objects and one collapsible ``<details>`` per changed
object. Other features add their own sections (``extra_sections``), after the diff.

A field whose value is text of several lines (a Lua health check in ``argocd-cm``, a
policy CSV) is shown as a line diff, unified-style (``@@`` hunks, `` ``/``-``/``+``
lines), not as one quoted string.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass

from fleet.core.words import plural
from fleet.guards.diff import (
    ABSENT,
    EnvironmentDiff,
    FieldChange,
    Finding,
    FleetDiff,
    ObjectChange,
    show,
)

MARKDOWN_BUDGET = 60_000
"""Characters of per-object detail in Markdown; GitHub caps a comment at 65,536."""

GUARD_DETAILS = 50
"""Objects listed under one grouped guard finding in Markdown."""

_ICONS = {"error": ":x:", "warning": ":warning:", "note": ":information_source:"}


@dataclass(frozen=True, slots=True)
class ReportSection:
    """An extra section of the report (a graph, a cost estimate, ...), in Markdown or text."""

    title: str
    body: str


def _counts(env: EnvironmentDiff) -> str:
    return f"{len(env.added)} added, {len(env.removed)} removed, {len(env.changed)} changed"


def _field_line(change: FieldChange) -> str:
    return f"{change.dotted}: {show(change.old)} -> {show(change.new)}"


def is_text_block(change: FieldChange) -> bool:
    """Whether ``change`` is between texts (or to or from one) with more than one line."""
    values = [v for v in (change.old, change.new) if v is not ABSENT]
    return all(isinstance(v, str) for v in values) and any("\n" in v for v in values)


def _lines(value: object) -> list[str]:
    return [] if value is ABSENT else str(value).splitlines()


def _size(value: object) -> str:
    if value is ABSENT:
        return "(absent)"
    return plural(len(_lines(value)), "line")


def text_block_diff(change: FieldChange) -> list[str]:
    """``<field>: text, <n> -> <m> lines``, then the unified diff's hunks (2 lines of
    context; no ``---``/``+++`` header)."""
    hunks = difflib.unified_diff(_lines(change.old), _lines(change.new), lineterm="", n=2)
    body = [line for i, line in enumerate(hunks) if i >= 2]
    return [f"{change.dotted}: text, {_size(change.old)} -> {_size(change.new)}", *body]


def _moved(change: ObjectChange) -> str | None:
    if change.before.relpath == change.after.relpath:
        return None
    return f"file moved from {change.before.relpath} to {change.after.relpath}"


def _tally(findings: Sequence[Finding]) -> str:
    parts = []
    for level in ("error", "warning"):
        n = sum(1 for f in findings if f.level == level)
        if n:
            parts.append(f"{n} {level}{'' if n == 1 else 's'}")
    return ", ".join(parts) or "no guard findings"


def render_text(
    diff: FleetDiff,
    findings: Sequence[Finding],
    *,
    title: str,
    extra_sections: Sequence[ReportSection] = (),
    verbose: bool = False,
) -> str:
    """The report for a terminal or a CI log: one line per object and per changed field.

    A grouped guard finding is one line; ``verbose`` adds its objects' lines under it."""
    lines = [title]
    for env in diff.environments:
        if env.empty:
            lines.append(f"{env.environment}: no changes")
            continue
        lines.append(f"{env.environment}: {_counts(env)}")
        lines.extend(f"  + {ref.label()}  ({ref.relpath})" for ref in env.added)
        lines.extend(f"  - {ref.label()}  ({ref.relpath})" for ref in env.removed)
        for change in env.changed:
            lines.append(f"  ~ {change.after.label()}  ({change.after.relpath})")
            for c in change.fields:
                if is_text_block(c):
                    head, *hunks = text_block_diff(c)
                    lines.append(f"      {head}")
                    lines.extend(f"        {line}" for line in hunks)
                else:
                    lines.append(f"      {_field_line(c)}")
            moved = _moved(change)
            if moved:
                lines.append(f"      ({moved})")
    for section in extra_sections:
        lines += ["", f"{section.title}:", section.body.rstrip("\n")]
    if findings:
        lines.append("")
        for f in findings:
            lines.append(f.line())
            if verbose:
                lines.extend(f"    {detail}" for detail in f.details)
        if not verbose and any(f.details for f in findings):
            lines.append("(fleet diff --verbose lists the objects of each finding)")
    lines += ["", _tally(findings)]
    return "\n".join(lines) + "\n"


def _fence(body: str, info: str = "") -> str:
    # A fence longer than any backtick run inside, so a value cannot close it.
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def _code(text: str) -> str:
    return f"<code>{html.escape(text)}</code>"


def _details(change: ObjectChange) -> str:
    rows: list[str] = []
    for c in change.fields:
        if is_text_block(c):
            head, *hunks = text_block_diff(c)
            rows.append(f"# {head}")
            rows.extend(hunks)
            continue
        if c.old is not ABSENT:
            rows.append(f"- {c.dotted}: {show(c.old)}")
        if c.new is not ABSENT:
            rows.append(f"+ {c.dotted}: {show(c.new)}")
    moved = _moved(change)
    if moved:
        rows.append(f"# {moved}")
    n = len(change.fields)
    summary = (
        f"{_code(change.after.label())} ({change.after.group}): "
        f"{n} field{'' if n == 1 else 's'} changed"
    )
    body = _fence("\n".join(rows), "diff")
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def _guard_item(f: Finding) -> str:
    """A guard finding as a list item; a grouped one's objects in a collapsed list."""
    item = (
        f"- {_ICONS[f.level]} **{f.level}** "
        + (f"`{f.environment}` " if f.environment else "")
        + (f"`{f.subject}`: " if f.subject else "")
        + f.message
    )
    if not f.details:
        return item
    n = len(f.details)
    rows = "\n".join(f"  - {html.escape(d)}" for d in f.details[:GUARD_DETAILS])
    if n > GUARD_DETAILS:
        rows += f"\n  - _and {n - GUARD_DETAILS} more (run `fleet diff --verbose` to see all)_"
    return (
        f"{item}\n  <details><summary>{n} object{'' if n == 1 else 's'}</summary>\n\n"
        f"{rows}\n\n  </details>"
    )


def _within(blocks: Sequence[str], left: list[int]) -> list[str]:
    """The leading ``blocks`` that fit in ``left[0]`` characters (which they use up)."""
    shown: list[str] = []
    for block in blocks:
        if len(block) > left[0]:
            break
        left[0] -= len(block)
        shown.append(block)
    return shown


def render_markdown(
    diff: FleetDiff,
    findings: Sequence[Finding],
    *,
    title: str,
    extra_sections: Sequence[ReportSection] = (),
    budget: int = MARKDOWN_BUDGET,
) -> str:
    """The report as a merge-request / pull-request comment (GitLab and GitHub Markdown).

    Object lists and details stop after ``budget`` characters with a note saying how
    many were left out; the summary, the guards and ``extra_sections`` always appear.
    """
    out = [f"### fleet diff\n\n{title}"]
    errors = [f for f in findings if f.level == "error"]
    if errors:
        out.append(
            f"> [!CAUTION]\n> **{len(errors)} guard error{'' if len(errors) == 1 else 's'}**: "
            "this change must not merge as it is (see Guards)."
        )
    if diff.empty:
        out.append("No object changes in any environment.")
    else:
        table = ["| Environment | Added | Removed | Changed |", "| --- | ---: | ---: | ---: |"]
        table += [
            f"| `{e.environment}` | {len(e.added)} | {len(e.removed)} | {len(e.changed)} |"
            for e in diff.environments
        ]
        out.append("\n".join(table))
    if findings:
        out.append("#### Guards\n\n" + "\n".join(_guard_item(f) for f in findings))
    left = [budget]
    for env in diff.environments:
        if env.empty:
            continue
        parts = [f"#### `{env.environment}`: {_counts(env)}"]
        # Removed first: it is what the reviewer must not miss.
        for heading, refs in (("Removed", env.removed), ("Added", env.added)):
            if refs:
                items = [f"- `{r.label()}` ({r.group}) `{r.relpath}`" for r in refs]
                shown = _within(items, left)
                more = len(items) - len(shown)
                if more:
                    shown.append(f"- _and {more} more (run `fleet diff` to see all)_")
                parts.append(f"**{heading}**\n\n" + "\n".join(shown))
        if env.changed:
            parts.append("**Changed**")
            blocks = [_details(change) for change in env.changed]
            shown = _within(blocks, left)
            parts.extend(shown)
            more = len(blocks) - len(shown)
            if more:
                parts.append(
                    f"_{more} more changed object{'' if more == 1 else 's'} left out to "
                    "keep this comment small; run `fleet diff` to see every field._"
                )
        out.append("\n\n".join(parts))
    for section in extra_sections:
        out.append(f"#### {section.title}\n\n{section.body.rstrip()}")
    out.append(f"_{_tally(findings)}_")
    return "\n\n".join(out) + "\n"
