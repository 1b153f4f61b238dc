"""Guards of ``fleet diff`` for fields a live object cannot change: fields whose CRD
description says a change creates a new resource (upjet's wording), and the create-only
fields the cluster classes declare (``force_new_fields``:
:class:`~fleet.clouds.base.CreateOnlyField`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleet.checks.crds import CrdIndex
from fleet.clouds.base import CreateOnlyField, cloud_plugins
from fleet.guards.diff import (
    FieldPath,
    Files,
    Finding,
    FleetDiff,
    format_field_path,
    load_yaml,
    show,
    subject,
)
from fleet.platform.plugins import PluginSet
from fleet.platform.upjet import Level

IMMUTABLE_MARKER = re.compile(r"changing this creates a new\s*([A-Za-z-]*)", re.IGNORECASE)
"""Upjet's wording for a field whose change makes Terraform replace the resource."""


@dataclass(frozen=True, slots=True)
class ImmutableField:
    """A field whose change the provider refuses; ``[]``/``{}`` in ``path`` match any item."""

    path: tuple[str, ...]
    replaces: str
    """What the CRD says a change creates ("cluster", "node group", ...)."""


ImmutableFields = Mapping[tuple[str, str], tuple[ImmutableField, ...]]
"""(apiVersion, kind) -> its immutable fields."""


def immutable_fields(index: CrdIndex) -> dict[tuple[str, str], tuple[ImmutableField, ...]]:
    """The fields of every CRD in ``index`` whose description says a change replaces it.

    ``status`` is left out: the fleet never renders it.
    """
    out: dict[tuple[str, str], tuple[ImmutableField, ...]] = {}
    for key, crd in index.schemas.items():
        spec = (crd.schema.get("properties") or {}).get("spec")
        found = list(_immutable(spec, ("spec",))) if isinstance(spec, dict) else []
        if found:
            out[key] = tuple(found)
    return out


def _immutable(schema: Mapping[str, Any], path: tuple[str, ...]) -> Iterator[ImmutableField]:
    description = schema.get("description")
    if isinstance(description, str):
        match = IMMUTABLE_MARKER.search(" ".join(description.split()))
        if match:
            yield ImmutableField(path, match.group(1).rstrip(".").lower() or "resource")
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict):
            yield from _immutable(sub, (*path, name))
    items = schema.get("items")
    if isinstance(items, dict):
        yield from _immutable(items, (*path, "[]"))
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        yield from _immutable(extra, (*path, "{}"))


def _covers(pattern: tuple[str, ...], path: FieldPath) -> bool:
    """Whether a change at ``path`` changes the field ``pattern`` (or something inside it)."""
    for want, got in zip(pattern, path, strict=False):
        if want == "[]":
            if not isinstance(got, int):
                return False
        elif want == "{}":
            if not isinstance(got, str):
                return False
        elif want != got:
            return False
    return True


def immutable_guard(
    diff: FleetDiff,
    *,
    immutable: ImmutableFields,
    strict: bool = False,
    plugins: PluginSet | None = None,
) -> list[Finding]:
    """A warning (an error when ``strict``) per changed object and immutable field.

    Kinds a cloud plug-in's ForceNew table knows are left to
    :func:`fleet.guards.force_new.force_new_guard`, which fails them by default (their CRD
    descriptions miss most ForceNew fields).
    """
    level: Level = "error" if strict else "warning"
    tables = [p.force_new.table() for _, p in cloud_plugins(plugins) if p.force_new is not None]
    out: list[Finding] = []
    for env in diff.environments:
        for change in env.changed:
            if any(t.covers(change.after.group, change.after.kind) for t in tables):
                continue
            fields = {
                f
                for ref in (change.before, change.after)
                for f in immutable.get((ref.api_version, ref.kind), ())
            }
            for field in sorted(fields, key=lambda f: f.path):
                hits = [c for c in change.fields if _covers(field.path, c.path)]
                if not hits:
                    continue
                shown = "; ".join(f"{c.dotted}: {show(c.old)} -> {show(c.new)}" for c in hits[:3])
                more = f"; and {len(hits) - 3} more" if len(hits) > 3 else ""
                out.append(
                    Finding(
                        level,
                        env.environment,
                        subject(change.after),
                        f"{shown}{more}: the CRD says changing "
                        f"{format_field_path(field.path)} creates a new {field.replaces}; "
                        "the provider refuses the update and the object stays Synced=False",
                    )
                )
    return out


def declared_create_only(
    plugins: PluginSet | None = None,
) -> dict[tuple[str, str], tuple[CreateOnlyField, ...]]:
    """(apiVersion, kind) -> the ``force_new_fields`` every cluster class with a plug-in
    (among ``plugins``) declares."""
    out: dict[tuple[str, str], list[CreateOnlyField]] = defaultdict(list)
    for cls, _ in cloud_plugins(plugins):
        for f in cls.force_new_fields:
            if f not in out[(f.api_version, f.kind)]:
                out[(f.api_version, f.kind)].append(f)
    return {k: tuple(v) for k, v in out.items()}


def _at(value: Any, path: Sequence[str], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(where, value) for every place ``path`` reaches; ``[]`` items are keyed by name."""
    if not path:
        yield prefix, value
        return
    head, rest = path[0], path[1:]
    if head == "[]":
        for i, item in enumerate(value if isinstance(value, list) else ()):
            key = item.get("name", i) if isinstance(item, dict) else i
            yield from _at(item, rest, f"{prefix}[{key}]")
    elif isinstance(value, dict) and head in value:
        yield from _at(value[head], rest, f"{prefix}.{head}" if prefix else head)


def create_only_guard(
    diff: FleetDiff,
    base: Files,
    head: Files,
    fields: Mapping[tuple[str, str], Sequence[CreateOnlyField]],
) -> list[Finding]:
    """An error per changed object whose declared force-new field changes value (a field
    that appears or disappears on one side only is left to the other guards)."""
    out: list[Finding] = []
    for env in diff.environments:
        for change in env.changed:
            wanted = fields.get((change.after.api_version, change.after.kind), ())
            if not wanted:
                continue
            old = load_yaml(base[env.environment][change.before.relpath])
            new = load_yaml(head[env.environment][change.after.relpath])
            for f in wanted:
                before = dict(_at(old, f.path))
                for where, value in _at(new, f.path):
                    if where in before and before[where] != value:
                        out.append(
                            Finding(
                                "error",
                                env.environment,
                                subject(change.after),
                                f"{where}: {show(before[where])} -> {show(value)}: {f.why}",
                            )
                        )
    return out
