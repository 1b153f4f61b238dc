"""Guards of ``fleet diff`` for Crossplane managed resources: changes an upjet provider refuses
(the ForceNew data each cloud plug-in carries, ``CloudPlugin.force_new``), and external names
that change or go away. Generic: no cloud is named here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fleet.clouds.base import cloud_plugins, declared_fields
from fleet.guards.diff import (
    ABSENT,
    FieldChange,
    Finding,
    FleetDiff,
    ObjectChange,
    ObjectRef,
    shown,
    subject,
)
from fleet.platform.plugins import PluginSet
from fleet.platform.upjet import ForceNewRules, ForceNewTable

EXTERNAL_NAME = "crossplane.io/external-name"
UPJET_REFUSAL = (
    "refuse to update the external resource because the following update requires replacing it"
)
"""upjet v2.2.0 ``pkg/controller/external_tfpluginsdk.go`` (``Update``), verbatim."""


def force_new_rules(plugins: PluginSet | None = None) -> list[ForceNewRules]:
    """The ForceNew rules of every cloud plug-in (of ``plugins``) that has some."""
    return [
        plugin.force_new for _, plugin in cloud_plugins(plugins) if plugin.force_new is not None
    ]


def _names(ref: ObjectRef, changes: Sequence[FieldChange], plugins: PluginSet | None = None) -> str:
    """The fields, each with the declaration's argument it renders from when that is
    another name (``dockerVolumeSize (docker_volume_size_gb)``): the option tables."""
    declared = declared_fields(plugins)
    names = []
    for name in sorted({str(c.path[2]) for c in changes}):
        found = declared.get((ref.kind, ("spec", "forProvider", name)))
        keyword = found.option.keyword if found is not None else name
        names.append(name if keyword == name else f"{name} ({keyword})")
    return ", ".join(names)


def force_new_guard(
    diff: FleetDiff,
    *,
    rules: Sequence[ForceNewRules] | None = None,
    plugins: PluginSet | None = None,
) -> list[Finding]:
    """Errors for changes upjet refuses on existing managed resources of a cloud's provider.

    A changed ``spec.forProvider`` field that Terraform marks ForceNew is an error: upjet
    never replaces a resource, it refuses the whole update (nothing of it is applied) and
    the object stays ``Synced=False``. A ForceNew field removed is fine when Terraform
    computes it (it keeps the cloud's value); one added is a warning (refused unless it
    equals what the cloud has). A ForceNew map (Magnum's ``labels``) is diffed key by key
    by the Terraform SDK (terraform-plugin-sdk v2.38.2 ``helper/schema/schema.go``
    ``diffMap``, ``finalizeDiff``): a key added, removed or changed is refused; only the
    whole map left out of a computed field is no change (``n == nil && schema.Computed``),
    a note. A field with a rule of its own (``field_rules``: a Magnum
    template's name -> UUID, say) gets that rule's verdict. Changes under
    ``spec.initProvider`` are notes: they apply only when the object is created.
    """
    found = force_new_rules(plugins) if rules is None else rules
    tables: list[tuple[ForceNewRules, ForceNewTable]] = [(r, r.table()) for r in found]
    out: list[Finding] = []
    for env in diff.environments:
        for change in env.changed:
            ref = change.after
            for rule, table in tables:
                fields = table.kinds.get((ref.group, ref.kind))
                if fields is not None:
                    out.extend(_judge(env.environment, change, rule, table, plugins))
    return out


def _for_provider(body: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = body.get("spec")
    found = spec.get("forProvider") if isinstance(spec, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _judge(
    environment: str,
    change: ObjectChange,
    rule: ForceNewRules,
    table: ForceNewTable,
    plugins: PluginSet | None = None,
) -> list[Finding]:
    ref, changes = change.after, change.fields
    fields = table.kinds[(ref.group, ref.kind)]
    out: list[Finding] = []
    refused: list[FieldChange] = []
    dropped: dict[str, list[FieldChange]] = {}
    added: list[FieldChange] = []
    init: list[FieldChange] = []
    what = subject(ref)
    for c in changes:
        if c.path[:2] == ("spec", "initProvider"):
            init.append(c)
            continue
        if c.path[:2] != ("spec", "forProvider") or len(c.path) < 3:
            continue
        name = str(c.path[2])
        special = rule.field_rules.get((ref.kind, name))
        if special is not None:
            level, message = special(c.old, c.new)
            out.append(Finding(level, environment, what, f"{shown([c])}: {message}"))
            continue
        field = fields.get(name)
        if field is None:
            continue
        if field.map:
            if field.computed and name not in _for_provider(change.new):
                dropped.setdefault(name, []).append(c)
            else:
                refused.append(c)
        elif c.old is ABSENT:
            added.append(c)
        elif c.new is not ABSENT or not field.computed:
            refused.append(c)
    if refused:
        out.append(
            Finding(
                "error",
                environment,
                what,
                f"{shown(refused)}: Terraform marks {_names(ref, refused, plugins)} ForceNew "
                f'({table.source}), so upjet refuses the update ("{UPJET_REFUSAL}"): nothing '
                "of it is applied and the object stays Synced=False; "
                f"{rule.instead.get(ref.kind, rule.default_instead)}",
            )
        )
    for name, gone in dropped.items():
        out.append(
            Finding(
                "note",
                environment,
                what,
                f"{shown(gone)}: {name} is left out entirely; Terraform computes it, so it "
                f"keeps the values {rule.cloud} has and nothing changes (removing single keys "
                "instead would be refused)",
            )
        )
    if added:
        out.append(
            Finding(
                "warning",
                environment,
                what,
                f"{shown(added)}: ForceNew ({table.source}); upjet refuses the update unless "
                f"the value equals what {rule.cloud} already has",
            )
        )
    if init:
        moved = {c.path[2:] for c in changes if c.path[:2] == ("spec", "forProvider")}
        effect = (
            "the provider no longer sets these fields on the existing object"
            if all(c.path[2:] in moved for c in init)
            else "this changes nothing on the existing one"
        )
        out.append(
            Finding(
                "note",
                environment,
                what,
                f"{shown(init)}: spec.initProvider is used only to create the object; {effect}",
            )
        )
    return out


def external_name_guard(diff: FleetDiff) -> list[Finding]:
    """An error for every existing object whose ``crossplane.io/external-name`` changes or
    goes away.

    The external name is how the provider finds the real resource: upjet makes it the
    Terraform ID, and an object without one is a resource to create. Removing it from the
    rendered object makes ArgoCD remove it from the live object too, and the provider then
    creates a second cluster; changing it points the object at another resource. Adding
    one to an object that had none is left alone (adopting).
    """
    out: list[Finding] = []
    path = ("metadata", "annotations", EXTERNAL_NAME)
    for env in diff.environments:
        for change in env.changed:
            for c in change.fields:
                if c.path != path or c.old is ABSENT:
                    continue
                what = "removed" if c.new is ABSENT else "changed"
                out.append(
                    Finding(
                        "error",
                        env.environment,
                        subject(change.after),
                        f"{shown([c])}: the external name is {what}. The provider finds the "
                        "real resource by it (upjet takes it as the Terraform ID); without it "
                        "the provider creates a new one, with another it manages another. "
                        "Keep the old value; to move to another cluster, declare a new one "
                        "with a new name and retire this one",
                    )
                )
    return out
