"""The deletion guard of ``fleet diff``: a change must not delete what bears a cluster.

Removing a cluster's definition makes ArgoCD prune its objects, and with them the real
cluster (or its registration, its credentials). What counts as cluster-bearing comes from
the cluster classes and their plug-ins (:func:`cluster_bearing_kinds`); what a retired
definition or an unused shared object accounts for is a note, the rest an error.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from fleet.checks.references import (
    PROVIDER_CONFIG_KINDS,
    is_use_known,
    shared_object_refs,
    tables,
)
from fleet.clouds.base import cloud_plugins
from fleet.core import layout
from fleet.core.manifest import Identity, Manifest
from fleet.core.names import object_name_from
from fleet.core.words import plural
from fleet.guards.diff import Files, Finding, FleetDiff, ObjectRef, parse_files, subject
from fleet.platform.plugins import PluginSet

KindPattern = tuple[str, str]
"""(group, kind) as ``fnmatch`` patterns."""

PLATFORM_BEARING_KINDS: tuple[KindPattern, ...] = (
    # provider-argocd's Cluster unregisters the cluster from ArgoCD, which prunes every
    # application on it; a ProviderConfig deleted before its managed resources leaks them,
    # as an identity deleted before its clusters strands them (see above).
    ("cluster.argocd.crossplane.io", "Cluster"),
    ("cluster.m.argocd.crossplane.io", "Cluster"),
    ("*", "ProviderConfig"),
)
"""Cluster-bearing kinds of the platform itself, whatever the clouds."""


def cluster_bearing_kinds(plugins: PluginSet | None = None) -> tuple[KindPattern, ...]:
    """Every kind whose deletion would delete or cut off a cluster: the single list.

    The ``bearing_kinds`` of every :class:`~fleet.FleetCluster` subclass with a cloud
    plug-in among ``plugins`` (:func:`fleet.clouds.base.guard_plugins`: the head fleet's
    and the built-in clouds'), the plug-in's ``protected_kinds`` (the same kinds when a
    user adds them as plain objects, and the cloud's identities), plus
    :data:`PLATFORM_BEARING_KINDS`.
    """
    found: list[KindPattern] = []
    extra: list[KindPattern] = []
    for cls, plugin in cloud_plugins(plugins):
        for api_version, kind in cls.bearing_kinds:
            group = api_version.rpartition("/")[0] or "core"
            if (group, kind) not in found:
                found.append((group, kind))
        extra.extend(k for k in plugin.protected_kinds if k not in extra)
    platform = [k for k in (*extra, *PLATFORM_BEARING_KINDS) if k not in found]
    return (*sorted(found), *platform)


def is_cluster_bearing(ref: ObjectRef, kinds: Sequence[KindPattern]) -> bool:
    """Whether ``ref`` is of one of ``kinds``."""
    return any(
        fnmatch.fnmatchcase(ref.group, group) and fnmatch.fnmatchcase(ref.kind, kind)
        for group, kind in kinds
    )


RETIRE_HINT = (
    "to delete it on purpose, keep its definition and mark it retired=True in one change, "
    "then remove the definition in a later one"
)
UNUSED_HINT = (
    "it can only go once nothing uses it: mark every cluster that uses it retired=True in "
    "one change, then remove their definitions in a later one"
)
GROUP_RETIRE_HINT = (
    "to delete them on purpose, keep their definitions and mark them retired=True in one "
    "change, then remove the definitions in a later one"
)
GROUP_UNUSED_HINT = (
    "they can only go once nothing uses them: mark every cluster that uses them retired=True "
    "in one change, then remove their definitions in a later one"
)
_GROUP_CONSEQUENCE = (
    "ArgoCD would prune them, which deletes the real clusters or their nodes, or unregisters "
    "the clusters"
)
_GROUP_SHARED_CONSEQUENCE = "what uses them could no longer be updated, deleted or authenticate"

_CONSEQUENCES: dict[str, str] = {
    "ProviderConfig": "the managed resources that use it could no longer be updated or deleted",
    "Cluster": "ArgoCD would prune it, deleting or unregistering the cluster",
}
_DEFAULT_CONSEQUENCE = "ArgoCD would prune it, which can delete the real cluster or its nodes"


Verdict = Literal["retired", "unused", "refused"]


@dataclass(frozen=True, slots=True)
class Deletion:
    """One removed cluster-bearing object, judged: its per-object :class:`Finding`, and what
    grouping needs (the likely new object of a rename, where a retired definition is)."""

    environment: str
    ref: ObjectRef
    verdict: Verdict
    finding: Finding
    successor: ObjectRef | None = None
    retired_at: str = ""


def deletions(
    diff: FleetDiff,
    *,
    retired: Mapping[tuple[str, Identity], str],
    kinds: Sequence[KindPattern] | None = None,
    unused: Collection[tuple[str, Identity]] = frozenset(),
    plugins: PluginSet | None = None,
) -> list[Deletion]:
    """Every removed cluster-bearing object, judged (see :func:`deletion_guard`)."""
    kinds = cluster_bearing_kinds(plugins) if kinds is None else kinds
    rules = tables(plugins)
    hints = {kind: UNUSED_HINT for kind in PROVIDER_CONFIG_KINDS}
    hints.update({kind: UNUSED_HINT for _, kind in rules.identity_kinds})
    consequences = {**_CONSEQUENCES, **rules.identity_consequences}
    out: list[Deletion] = []
    for env in diff.environments:
        added_by_kind: dict[tuple[str, str], list[ObjectRef]] = defaultdict(list)
        removed_by_kind: dict[tuple[str, str], int] = defaultdict(int)
        for ref in env.added:
            added_by_kind[(ref.group, ref.kind)].append(ref)
        for ref in env.removed:
            removed_by_kind[(ref.group, ref.kind)] += 1
        name = env.environment
        for ref in env.removed:
            if not is_cluster_bearing(ref, kinds):
                continue
            where = retired.get((name, ref.identity))
            if where is not None:
                message = f"deleted, retired at {where}"
                finding = Finding("note", name, subject(ref), message)
                out.append(Deletion(name, ref, "retired", finding, retired_at=where))
                continue
            if (name, ref.identity) in unused:
                message = "deleted, unused: nothing in the base revision references it"
                out.append(
                    Deletion(name, ref, "unused", Finding("note", name, subject(ref), message))
                )
                continue
            successor = _successor(ref, added_by_kind[(ref.group, ref.kind)], removed_by_kind)
            renamed = f" (renamed to {successor.name}?)" if successor else ""
            message = (
                f"would be deleted{renamed}; "
                f"{consequences.get(ref.kind, _DEFAULT_CONSEQUENCE)}; "
                f"{hints.get(ref.kind, RETIRE_HINT)}"
            )
            finding = Finding("error", name, subject(ref), message)
            out.append(Deletion(name, ref, "refused", finding, successor=successor))
    return out


def deletion_guard(
    diff: FleetDiff,
    *,
    retired: Mapping[tuple[str, Identity], str],
    kinds: Sequence[KindPattern] | None = None,
    unused: Collection[tuple[str, Identity]] = frozenset(),
) -> list[Finding]:
    """An error for every removed cluster-bearing object no retired definition covers.

    ``retired`` maps (environment, identity) of what retired definitions would render to
    where each is defined; those removals become notes. So do those in ``unused``: the
    ProviderConfigs and OCIClusterIdentities nothing in the base revision uses
    (:func:`unused_objects`).
    A rename is a removal plus an addition, so it is caught the same way ("renamed?"
    names the likely new object). One finding per object: :func:`grouped_by_source` folds
    them per definition.
    """
    return [d.finding for d in deletions(diff, retired=retired, kinds=kinds, unused=unused)]


_STRING = re.compile(r"""(?:'([^'\\\n]*)'|"([^"\\\n]*)")""")


@dataclass(frozen=True)
class DefinitionSources:
    """Where the definitions of removed objects were, as far as ``fleet diff`` can tell.

    ``base_modules``: the declaration modules the change deletes or edits, path ->
    their text in the base revision; ``head``: (environment, identity) -> the source
    (``clusters/x.py:12 (path)``) of each object of the working tree's render.
    """

    base_modules: Mapping[str, str] = field(default_factory=dict)
    head: Mapping[tuple[str, Identity], str] = field(default_factory=dict)

    def of(self, deletion: Deletion) -> str | None:
        """The module that defined ``deletion``'s object: a retired one's own; a renamed
        one's successor's; else the edited or deleted module of the base revision that
        spells its cluster's name (literally, or as a ``{env}`` template), or the only
        such module."""
        if deletion.retired_at:
            return _module(deletion.retired_at)
        if deletion.successor is not None:
            source = self.head.get((deletion.environment, deletion.successor.identity))
            if source:
                return _module(source)
        name = _unit(deletion.ref)[1]
        found = [
            path
            for path, text in sorted(self.base_modules.items())
            if _spells(text, name, deletion.environment)
        ]
        if len(found) == 1:
            return found[0]
        if not found and len(self.base_modules) == 1:
            return next(iter(self.base_modules))
        return None


def _module(source: str) -> str:
    """``clusters/x.py:12 (path)`` -> ``clusters/x.py``."""
    return source.split(":", 1)[0]


def _spells(text: str, name: str, environment: str) -> bool:
    """Whether a string literal of ``text`` is the object name ``name`` (a cluster's
    folder), or a cloud name it is derived from (``"Cluster"`` for ``cluster``,
    :func:`fleet.core.names.object_name_from`), literally or as a ``{env}`` template."""
    for match in _STRING.finditer(text):
        literal = match.group(1) if match.group(1) is not None else match.group(2)
        if object_name_from(literal.replace("{env}", environment)) == name:
            return True
    return False


def _unit(ref: ObjectRef) -> tuple[str, str]:
    """("cluster", name) for an object of a cluster's folder, else (kind, name)."""
    prefix = f"{layout.CLUSTERS}/"
    if ref.folder.startswith(prefix):
        return ("cluster", ref.folder[len(prefix) :].split("/", 1)[0])
    return (ref.kind, ref.name)


def _cluster_kinds(plugins: PluginSet | None) -> frozenset[tuple[str, str]]:
    """(group, kind) of the object that is the cluster itself, per cloud (the first of its
    class's ``bearing_kinds``: ClusterV1, Cluster API's Cluster)."""
    return frozenset(
        (api.rpartition("/")[0] or "core", kind)
        for cls, _ in cloud_plugins(plugins)
        for api, kind in cls.bearing_kinds[:1]
    )


def _names(items: Sequence[str], most: int = 5) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


REMOVED_DEFINITIONS = "removed definitions"
"""The subject of a group whose definition module ``fleet diff`` cannot tell."""


def grouped_by_source(
    judged: Sequence[Deletion],
    sources: DefinitionSources | None = None,
    plugins: PluginSet | None = None,
) -> list[Finding]:
    """The deletions folded into one finding per definition module and verdict:
    ``clusters/x.py: 3 clusters removed (39 objects in dev, prod): a-dev, ...; what that
    does; what to do``. Each object's own line is in the finding's ``details``."""
    sources = sources or DefinitionSources()
    cluster_kinds = _cluster_kinds(plugins)
    groups: dict[tuple[str, Verdict, str], list[Deletion]] = defaultdict(list)
    for d in judged:
        source = sources.of(d) or REMOVED_DEFINITIONS
        # The advice ends the per-object message: objects with the same advice group.
        advice = d.finding.message.rsplit("; ", 1)[-1] if d.verdict == "refused" else ""
        groups[(source, d.verdict, advice)].append(d)
    out: list[Finding] = []
    for (source, verdict, advice), items in groups.items():
        environments = list(dict.fromkeys(d.environment for d in items))
        clusters = [
            d.ref.name + (f" (renamed to {d.successor.name}?)" if d.successor else "")
            for d in items
            if (d.ref.group, d.ref.kind) in cluster_kinds and _unit(d.ref)[0] == "cluster"
        ]
        objects = f"{plural(len(items), 'object')} in {', '.join(environments)}"
        if clusters:
            what = f"{plural(len(clusters), 'cluster')} removed ({objects}): {_names(clusters)}"
        else:
            labels = [
                d.ref.label() + (f" (renamed to {d.successor.name}?)" if d.successor else "")
                for d in items
            ]
            # the same object in several environments is named once
            what = f"{_names(list(dict.fromkeys(labels)))} removed ({objects})"
        if verdict == "retired":
            message = f"{what}; retired, so their deletion is intended"
        elif verdict == "unused":
            message = f"{what}; unused: nothing in the base revision references them"
        elif len(items) == 1:
            message = f"{what}; {items[0].finding.message.split('; ', 1)[1]}"
        elif advice == UNUSED_HINT:
            message = f"{what}; {_GROUP_SHARED_CONSEQUENCE}; {GROUP_UNUSED_HINT}"
        else:
            message = f"{what}; {_GROUP_CONSEQUENCE}; {GROUP_RETIRE_HINT}"
        out.append(
            Finding(
                items[0].finding.level,
                "",
                source,
                message,
                tuple(d.finding.line() for d in items),
            )
        )
    return out


def unused_objects(
    diff: FleetDiff, base: Files, plugins: PluginSet | None = None
) -> frozenset[tuple[str, Identity]]:
    """(environment, identity) of every removed shared object no object of ``base`` uses.

    Shared objects are those many clusters use: ProviderConfigs and OCIClusterIdentities.
    ``base`` is the base revision's whole render. An object uses what its references name
    (:func:`fleet.checks.references.shared_object_refs`): the ProviderConfig of its
    ``spec.providerConfigRef`` (a managed resource without one uses ``default``), the
    OCIClusterIdentity of its ``spec.identityRef`` (in the ref's namespace, else the
    object's). That is the ProviderConfig or identity left once every cluster that used it
    was retired, whose removal then follows removing their definitions: retired clusters
    render nothing, so nothing in the base uses it. An object whose users the reference
    rules do not know (a ProviderConfig of a provider family outside
    :data:`~fleet.checks.references.PROVIDER_CONFIG_FAMILIES`) is never taken as unused. A
    reference that resolves to no namespace uses the name in every namespace.

    Only the files of the base that spell a removed object's name out are parsed (a
    reference has to), every file of the environment for the ProviderConfig ``default``.
    """
    out: set[tuple[str, Identity]] = set()
    rules = tables(plugins)
    for env in diff.environments:
        removed = [r for r in env.removed if is_use_known(r.group, r.kind, rules)]
        if not removed:
            continue
        files = base.get(env.environment, {})
        needles = [r.name.encode() for r in removed]
        every = any(r.name == "default" and r.kind in PROVIDER_CONFIG_KINDS for r in removed)
        candidates = {
            relpath: data
            for relpath, data in files.items()
            if every or any(n in data for n in needles)
        }
        used: set[Identity] = set()
        for relpath, body in parse_files({env.environment: candidates})[env.environment].items():
            if not body.get("kind"):
                continue
            manifest = Manifest(env.environment, dict(body), posixpath.dirname(relpath), relpath)
            used.update(shared_object_refs(manifest, rules))
        anywhere = {(g, k, name) for g, k, ns, name in used if not ns}
        out.update(
            (env.environment, r.identity)
            for r in removed
            if r.identity not in used and (r.group, r.kind, r.name) not in anywhere
        )
    return frozenset(out)


def _successor(
    ref: ObjectRef, added: Sequence[ObjectRef], removed_by_kind: Mapping[tuple[str, str], int]
) -> ObjectRef | None:
    """The added object of the same kind that most likely replaces ``ref``."""
    same_folder = [a for a in added if a.folder == ref.folder]
    if same_folder:
        return same_folder[0]
    # One removed and one added of a kind: a rename that moved the cluster's folder too.
    if len(added) == 1 and removed_by_kind[(ref.group, ref.kind)] == 1:
        return added[0]
    return None
