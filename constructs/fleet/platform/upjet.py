"""What an upjet-generated Crossplane provider refuses to update: its Terraform provider's
ForceNew arguments, as data a cloud plug-in carries (``CloudPlugin.force_new``) and
``fleet diff`` reads (:mod:`fleet.guards.force_new`).

Upjet never replaces a resource: a change to a ForceNew argument makes it refuse the whole
update (upjet v2.2.0 ``pkg/controller/external_tfpluginsdk.go``, ``Update``), and the object
stays ``Synced=False``. The CRD descriptions miss most of these arguments, so a cloud vendors
the Terraform provider's schema as a JSON table (with its provenance):
``{"source": {repo, tag, commit}, "groups": [...], "kinds": {Kind: {"forceNew": {field:
{terraform, computed, type?}}, "updatable": [...]}}}`` (``type: "map"`` for a
Terraform map).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Level = Literal["error", "warning", "note"]
"""How serious a diff finding is: ``error`` fails ``fleet diff``."""

FieldRule = Callable[[Any, Any], tuple[Level, str]]
"""(old value, new value) -> (level, message) for one field whose change the ForceNew table
alone would misjudge (a Magnum template's name -> its UUID)."""


@dataclass(frozen=True, slots=True)
class ForceNewField:
    """A ``spec.forProvider`` field Terraform marks ForceNew (upjet refuses to change it)."""

    name: str
    terraform: str
    computed: bool
    """Optional+Computed: left out, Terraform keeps the value the cloud has."""
    map: bool = False
    """A Terraform map (``TypeMap``): diffed key by key, every key a ForceNew change."""


@dataclass(frozen=True, slots=True)
class ForceNewTable:
    """The vendored ForceNew data: per (group, kind), its ForceNew and in-place fields."""

    kinds: Mapping[tuple[str, str], Mapping[str, ForceNewField]]
    updatable: Mapping[tuple[str, str], frozenset[str]]
    source: str
    """``repo tag (commit)``, for messages."""

    def covers(self, group: str, kind: str) -> bool:
        """Whether the table knows ``group``/``kind`` (the CRD-text guard then stands aside)."""
        return (group, kind) in self.kinds


@functools.cache
def load_force_new_table(path: Path) -> ForceNewTable:
    """The table vendored at ``path`` (read once)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    kinds: dict[tuple[str, str], dict[str, ForceNewField]] = {}
    updatable: dict[tuple[str, str], frozenset[str]] = {}
    for group in data["groups"]:
        for kind, spec in data["kinds"].items():
            kinds[(group, kind)] = {
                name: ForceNewField(
                    name,
                    entry["terraform"],
                    bool(entry["computed"]),
                    map=entry.get("type") == "map",
                )
                for name, entry in spec["forceNew"].items()
            }
            updatable[(group, kind)] = frozenset(spec["updatable"])
    src = data["source"]
    return ForceNewTable(kinds, updatable, f"{src['repo']} {src['tag']} ({src['commit'][:12]})")


@dataclass(frozen=True, kw_only=True)
class ForceNewRules:
    """What ``fleet diff`` refuses on one provider's managed resources, and what to say.

    ``data``: the vendored table (see the module docstring); ``cloud``: who holds the real
    resource, for messages ("Magnum"); ``instead``: kind -> what to do instead of the
    refused change (``default_instead`` for the other kinds); ``field_rules``: (kind,
    forProvider field) -> the verdict for a change of that field, instead of the table's.
    """

    data: Path
    cloud: str
    default_instead: str
    instead: Mapping[str, str] = field(default_factory=dict)
    field_rules: Mapping[tuple[str, str], FieldRule] = field(default_factory=dict)

    def table(self) -> ForceNewTable:
        """The vendored table, read once."""
        return load_force_new_table(self.data)
