"""Guard of ``fleet diff`` that applies the change rules cloud plug-ins declare
(``CloudPlugin.change_rules``, :class:`fleet.platform.changes.ChangeRule`): what a
controller refuses, or turns into a second resource, when an existing object changes.
Generic: no cloud is named here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fleet.clouds.base import cloud_plugins
from fleet.guards.diff import Files, Finding, FleetDiff, ObjectChange, load_yaml, subject
from fleet.platform.changes import Body, Change, ChangeRule
from fleet.platform.plugins import PluginSet


def change_rules(plugins: PluginSet | None = None) -> list[ChangeRule]:
    """The change rules of every cloud plug-in (of ``plugins``), in plug-in order."""
    return [rule for _, plugin in cloud_plugins(plugins) for rule in plugin.change_rules]


class _Side:
    """One side of one environment, parsed lazily: only the files that can hold the kind
    asked for (canonical YAML has ``kind: <Kind>`` on a line of its own) are read."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self._files = files
        self._by_kind: dict[tuple[str, str], list[Body]] = {}

    def of_kind(self, group: str, kind: str) -> Sequence[Body]:
        key = (group, kind)
        if key not in self._by_kind:
            marker = f"kind: {kind}\n".encode()
            found: list[Body] = []
            for _, data in sorted(self._files.items()):
                if marker not in data:
                    continue
                body = load_yaml(data)
                if not isinstance(body, dict) or body.get("kind") != kind:
                    continue
                api_version = str(body.get("apiVersion", ""))
                if (api_version.split("/", 1)[0] if "/" in api_version else "core") == group:
                    found.append(body)
            self._by_kind[key] = found
        return self._by_kind[key]

    def get(self, group: str, kind: str, name: str, namespace: str = "") -> Body | None:
        for body in self.of_kind(group, kind):
            meta = body.get("metadata") or {}
            if meta.get("name") == name and (meta.get("namespace") or "") == namespace:
                return body
        return None


def _touched(rule: ChangeRule, change: ObjectChange) -> bool:
    if not rule.paths:
        return True
    return any(tuple(c.path[: len(p)]) == p for c in change.fields for p in rule.paths)


def change_rule_guard(
    diff: FleetDiff,
    base: Files,
    head: Files,
    *,
    rules: Sequence[ChangeRule] | None = None,
) -> list[Finding]:
    """The verdicts of the plug-ins' change rules on every object that changes."""
    found = change_rules() if rules is None else rules
    out: list[Finding] = []
    if not found:
        return out
    for env in diff.environments:
        sides: tuple[_Side, _Side] | None = None
        for change in env.changed:
            ref = change.after
            for rule in found:
                if not rule.applies(ref.group, ref.kind) or not _touched(rule, change):
                    continue
                if sides is None:
                    sides = (
                        _Side(base.get(env.environment, {})),
                        _Side(head.get(env.environment, {})),
                    )
                judged = rule.judge(
                    Change(env.environment, change.old, change.new, sides[0], sides[1])
                )
                out.extend(
                    Finding(level, env.environment, subject(ref), message)
                    for level, message in judged
                )
    return out
