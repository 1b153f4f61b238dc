"""Compare two rendered fleets object by object, and decide what a change may not do.

Pure: the input is two trees ``{env: {relpath: body}}`` of parsed YAML, the output a
:class:`FleetDiff` and guard :class:`Finding` s. Rendering the trees (git worktree, synth)
is ``cli_diff``'s job; showing them is ``diff_report``'s.

Objects are matched by identity (group, kind, namespace, name), not by file: that is how
ArgoCD and the API server see them, so a moved file is a change while a renamed object is
a removal plus an addition, which for a cluster means deleting it.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import re
from collections import defaultdict
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from fleet.checks.crds import CrdIndex
from fleet.checks.references import (
    PROVIDER_CONFIG_KINDS,
    is_use_known,
    shared_object_refs,
    tables,
)
from fleet.core.errors import FleetError
from fleet.core.manifest import Identity, Manifest

Body = Mapping[str, Any]
Tree = Mapping[str, Mapping[str, Body]]
"""environment -> relative path inside ``dist/<env>/`` -> parsed object."""

FieldPath = tuple[str | int, ...]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


class _Absent:
    """The value of a field on the side where it does not exist."""

    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()


def format_field_path(path: FieldPath) -> str:
    """``("metadata", "annotations", "a.io/b")`` -> ``metadata.annotations["a.io/b"]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            out += f".{part}" if out else part
        else:
            out += '["' + part.replace("\\", "\\\\").replace('"', '\\"') + '"]'
    return out


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One leaf that differs; ``old`` or ``new`` is :data:`ABSENT` when added or removed."""

    path: FieldPath
    old: Any
    new: Any

    @property
    def dotted(self) -> str:
        """The field's path, ``spec.forProvider.nodeCount``."""
        return format_field_path(self.path)


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """An object of one side of the diff: where it is and what the API server calls it."""

    environment: str
    api_version: str
    identity: Identity
    relpath: str

    @property
    def group(self) -> str:
        """The API group ("core" for the core group)."""
        return self.identity[0]

    @property
    def kind(self) -> str:
        """The object's kind."""
        return self.identity[1]

    @property
    def name(self) -> str:
        """metadata.name."""
        return self.identity[3]

    @property
    def folder(self) -> str:
        """The object's folder inside ``dist/<env>/`` (``clusters/<cluster>``)."""
        return posixpath.dirname(self.relpath)

    def label(self) -> str:
        """``Kind namespace/name``."""
        namespace = f"{self.identity[2]}/" if self.identity[2] else ""
        return f"{self.kind} {namespace}{self.name}"


@dataclass(frozen=True, slots=True)
class ObjectChange:
    """An object present on both sides whose content differs."""

    before: ObjectRef
    after: ObjectRef
    fields: tuple[FieldChange, ...]


@dataclass(frozen=True, slots=True)
class EnvironmentDiff:
    """What changes in one environment."""

    environment: str
    added: tuple[ObjectRef, ...]
    removed: tuple[ObjectRef, ...]
    changed: tuple[ObjectChange, ...]

    @property
    def empty(self) -> bool:
        """Whether nothing changes in this environment."""
        return not (self.added or self.removed or self.changed)


@dataclass(frozen=True, slots=True)
class FleetDiff:
    """What changes, environment by environment (every environment of either side)."""

    environments: tuple[EnvironmentDiff, ...]

    @property
    def empty(self) -> bool:
        """Whether nothing changes anywhere."""
        return all(e.empty for e in self.environments)


# --- parsing and comparing -----------------------------------------------------------------


def parse_files(files: Mapping[str, Mapping[str, bytes]]) -> dict[str, dict[str, Body]]:
    """Parse rendered files (``{env: {relpath: yaml bytes}}``) into a :data:`Tree`."""
    tree: dict[str, dict[str, Body]] = {}
    for env, env_files in files.items():
        parsed: dict[str, Body] = {}
        for relpath, data in env_files.items():
            try:
                body = yaml.load(data, Loader=_Loader)
            except yaml.YAMLError as e:
                raise FleetError(f"{env}/{relpath}: not valid YAML: {e}") from None
            parsed[relpath] = body if isinstance(body, dict) else {}
        tree[env] = parsed
    return tree


def _ref(environment: str, relpath: str, body: Body) -> ObjectRef:
    if not body.get("kind"):
        # Not a Kubernetes object (an empty file): known only by its path.
        return ObjectRef(environment, "", ("", "", "", relpath), relpath)
    manifest = Manifest(environment, dict(body), posixpath.dirname(relpath), relpath)
    return ObjectRef(environment, manifest.api_version, manifest.identity, relpath)


def _index(environment: str, files: Mapping[str, Body]) -> dict[Identity, tuple[ObjectRef, Body]]:
    # synth guarantees one object per identity in an environment, so the key is unique.
    out: dict[Identity, tuple[ObjectRef, Body]] = {}
    for relpath in sorted(files):
        ref = _ref(environment, relpath, files[relpath])
        out[ref.identity] = (ref, files[relpath])
    return out


def _flatten(value: Any, path: FieldPath) -> Iterator[tuple[FieldPath, Any]]:
    if isinstance(value, dict) and value:
        for key in sorted(value, key=str):
            yield from _flatten(value[key], (*path, str(key)))
    else:
        yield path, value


def field_changes(old: Any, new: Any, path: FieldPath = ()) -> list[FieldChange]:
    """Leaf-level differences between two parsed YAML values, in path order.

    Maps are compared key by key (label maps included); a map that appears or disappears
    is reported leaf by leaf. Lists of equal length are compared item by item; otherwise
    the whole list is one change.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[FieldChange] = []
        for key in sorted(old.keys() | new.keys(), key=str):
            sub = (*path, str(key))
            if key not in new:
                out.extend(FieldChange(p, v, ABSENT) for p, v in _flatten(old[key], sub))
            elif key not in old:
                out.extend(FieldChange(p, ABSENT, v) for p, v in _flatten(new[key], sub))
            else:
                out.extend(field_changes(old[key], new[key], sub))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [
            c
            for i, (a, b) in enumerate(zip(old, new, strict=True))
            for c in field_changes(a, b, (*path, i))
        ]
    if type(old) is type(new) and old == new:  # typed: True == 1 in Python, not in YAML
        return []
    return [FieldChange(path, old, new)]


def compare_environment(
    environment: str, base: Mapping[str, Body], head: Mapping[str, Body]
) -> EnvironmentDiff:
    """The objects added, removed and changed in one environment."""
    before, after = _index(environment, base), _index(environment, head)
    added = tuple(after[i][0] for i in after if i not in before)
    removed = tuple(before[i][0] for i in before if i not in after)
    changed: list[ObjectChange] = []
    for identity, (new_ref, new_body) in after.items():
        if identity not in before:
            continue
        old_ref, old_body = before[identity]
        fields = field_changes(old_body, new_body)
        if fields or old_ref.relpath != new_ref.relpath:
            changed.append(ObjectChange(old_ref, new_ref, tuple(fields)))

    def by_path(ref: ObjectRef) -> str:
        return ref.relpath

    return EnvironmentDiff(
        environment,
        tuple(sorted(added, key=by_path)),
        tuple(sorted(removed, key=by_path)),
        tuple(sorted(changed, key=lambda c: c.after.relpath)),
    )


def compare(base: Tree, head: Tree, *, order: Sequence[str] = ()) -> FleetDiff:
    """Compare two rendered fleets; environments in ``order`` first, then the rest sorted."""
    names = [e for e in order if e in base or e in head]
    names += sorted((base.keys() | head.keys()) - set(names))
    return FleetDiff(
        tuple(compare_environment(env, base.get(env, {}), head.get(env, {})) for env in names)
    )


Files = Mapping[str, Mapping[str, bytes]]
"""environment -> relative path inside ``dist/<env>/`` -> rendered YAML."""


def compare_files(base: Files, head: Files, *, order: Sequence[str] = ()) -> FleetDiff:
    """:func:`compare` of rendered files; byte-identical files are not even parsed.

    Rendering is canonical, so equal bytes at one path are the same object on both sides,
    and parsing is most of the cost of a diff (about 0.3 ms per object).
    """

    def differing(files: Files, other: Files) -> dict[str, dict[str, bytes]]:
        return {
            env: {p: data for p, data in env_files.items() if other.get(env, {}).get(p) != data}
            for env, env_files in files.items()
        }

    return compare(
        parse_files(differing(base, head)), parse_files(differing(head, base)), order=order
    )


# --- guards --------------------------------------------------------------------------------

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


def cluster_bearing_kinds() -> tuple[KindPattern, ...]:
    """Every kind whose deletion would delete or cut off a cluster: the single list.

    The ``bearing_kinds`` of every :class:`~fleet.FleetCluster` subclass with a cloud
    plug-in, the plug-in's ``protected_kinds`` (the same kinds when a user adds them as
    plain objects, and the cloud's identities), plus :data:`PLATFORM_BEARING_KINDS`.
    """
    from fleet.clouds.base import cloud_plugins  # the construct tree is not needed to diff

    found: list[KindPattern] = []
    extra: list[KindPattern] = []
    for cls, plugin in cloud_plugins():
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


Level = Literal["error", "warning", "note"]


@dataclass(frozen=True, slots=True)
class Finding:
    """A guard's verdict on one object: ``error`` fails the diff, ``note`` only informs."""

    level: Level
    environment: str
    subject: str
    """``Kind namespace/name (group)``."""
    message: str

    def line(self) -> str:
        """``<level>: <env>: <subject>: <message>`` (empty parts left out)."""
        parts = [p for p in (self.environment, self.subject) if p]
        return f"{self.level}: " + ": ".join([*parts, self.message])


def _subject(ref: ObjectRef) -> str:
    return f"{ref.label()} ({ref.group})"


RETIRE_HINT = (
    "to delete it on purpose, keep its definition and mark it retired=True in one change, "
    "then remove the definition in a later one"
)
UNUSED_HINT = (
    "it can only go once nothing uses it: mark every cluster that uses it retired=True in "
    "one change, then remove their definitions in a later one"
)
_IDENTITY_KINDS = tuple(kind for _, kind in sorted(tables().identity_kinds))
_HINTS: dict[str, str] = {kind: UNUSED_HINT for kind in (*PROVIDER_CONFIG_KINDS, *_IDENTITY_KINDS)}

_CONSEQUENCES: dict[str, str] = {
    "ProviderConfig": "the managed resources that use it could no longer be updated or deleted",
    "Cluster": "ArgoCD would prune it, deleting or unregistering the cluster",
    **tables().identity_consequences,
}
_DEFAULT_CONSEQUENCE = "ArgoCD would prune it, which can delete the real cluster or its nodes"


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
    names the likely new object).
    """
    kinds = cluster_bearing_kinds() if kinds is None else kinds
    out: list[Finding] = []
    for env in diff.environments:
        added_by_kind: dict[tuple[str, str], list[ObjectRef]] = defaultdict(list)
        removed_by_kind: dict[tuple[str, str], int] = defaultdict(int)
        for ref in env.added:
            added_by_kind[(ref.group, ref.kind)].append(ref)
        for ref in env.removed:
            removed_by_kind[(ref.group, ref.kind)] += 1
        for ref in env.removed:
            if not is_cluster_bearing(ref, kinds):
                continue
            where = retired.get((env.environment, ref.identity))
            if where is not None:
                out.append(
                    Finding("note", env.environment, _subject(ref), f"deleted, retired at {where}")
                )
                continue
            if (env.environment, ref.identity) in unused:
                out.append(
                    Finding(
                        "note",
                        env.environment,
                        _subject(ref),
                        "deleted, unused: nothing in the base revision references it",
                    )
                )
                continue
            successor = _successor(ref, added_by_kind[(ref.group, ref.kind)], removed_by_kind)
            renamed = f" (renamed to {successor.name}?)" if successor else ""
            out.append(
                Finding(
                    "error",
                    env.environment,
                    _subject(ref),
                    f"would be deleted{renamed}; "
                    f"{_CONSEQUENCES.get(ref.kind, _DEFAULT_CONSEQUENCE)}; "
                    f"{_HINTS.get(ref.kind, RETIRE_HINT)}",
                )
            )
    return out


def unused_objects(diff: FleetDiff, base: Files) -> frozenset[tuple[str, Identity]]:
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
    for env in diff.environments:
        removed = [r for r in env.removed if is_use_known(r.group, r.kind)]
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
            used.update(shared_object_refs(manifest))
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
    diff: FleetDiff, *, immutable: ImmutableFields, strict: bool = False
) -> list[Finding]:
    """A warning (an error when ``strict``) per changed object and immutable field."""
    level: Level = "error" if strict else "warning"
    out: list[Finding] = []
    for env in diff.environments:
        for change in env.changed:
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
                        _subject(change.after),
                        f"{shown}{more}: the CRD says changing "
                        f"{format_field_path(field.path)} creates a new {field.replaces}; "
                        "the provider refuses the update and the object stays Synced=False",
                    )
                )
    return out


def show(value: Any) -> str:
    """A field value for a one-line message: JSON-like, ``(absent)`` when missing."""
    if value is ABSENT:
        return "(absent)"
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
