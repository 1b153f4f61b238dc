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
import functools
import json
import posixpath
import re
from collections import defaultdict
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

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

if TYPE_CHECKING:
    from fleet.clouds.base import CreateOnlyField

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
    """A warning (an error when ``strict``) per changed object and immutable field.

    Kinds the vendored ForceNew table knows are left to :func:`force_new_guard`, which
    fails them by default (their CRD descriptions miss most ForceNew fields).
    """
    level: Level = "error" if strict else "warning"
    table = force_new_table()
    out: list[Finding] = []
    for env in diff.environments:
        for change in env.changed:
            if table.covers(change.after.group, change.after.kind):
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
                        _subject(change.after),
                        f"{shown}{more}: the CRD says changing "
                        f"{format_field_path(field.path)} creates a new {field.replaces}; "
                        "the provider refuses the update and the object stays Synced=False",
                    )
                )
    return out


def declared_create_only() -> dict[tuple[str, str], tuple[CreateOnlyField, ...]]:
    """(apiVersion, kind) -> the ``force_new_fields`` every cluster class declares."""
    from fleet.clouds.base import FleetCluster

    out: dict[tuple[str, str], list[CreateOnlyField]] = defaultdict(list)
    pending: list[type[FleetCluster]] = [FleetCluster]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
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
            old = yaml.load(base[env.environment][change.before.relpath], Loader=_Loader)
            new = yaml.load(head[env.environment][change.after.relpath], Loader=_Loader)
            for f in wanted:
                before = dict(_at(old, f.path))
                for where, value in _at(new, f.path):
                    if where in before and before[where] != value:
                        out.append(
                            Finding(
                                "error",
                                env.environment,
                                _subject(change.after),
                                f"{where}: {show(before[where])} -> {show(value)}: {f.why}",
                            )
                        )
    return out


def show(value: Any) -> str:
    """A field value for a one-line message: JSON-like, ``(absent)`` when missing."""
    if value is ABSENT:
        return "(absent)"
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


# --- provider-openstack: what upjet refuses to update ----------------------------------------

FORCE_NEW_DATA = Path(__file__).parent / "data" / "openstack-force-new.json"
"""terraform-provider-openstack's ForceNew arguments of the Magnum resources, with provenance."""

EXTERNAL_NAME = "crossplane.io/external-name"
UPJET_REFUSAL = (
    "refuse to update the external resource because the following update requires replacing it"
)
"""upjet v2.2.0 ``pkg/controller/external_tfpluginsdk.go`` (``Update``), verbatim."""
UPGRADE_GUIDE = 'docs/guide.md, "Upgrade Kubernetes on a Magnum cluster"'
_INSTEAD = {
    "ClusterV1": (
        "instead, blue/green: declare a new cluster with a new name and the new values, move "
        f"the workloads, then retire this one ({UPGRADE_GUIDE})"
    ),
    "NodegroupV1": (
        "instead, declare a new node group with a new name and the new values, then retire "
        "this one (retired=True on its NodeGroup)"
    ),
}


@dataclass(frozen=True, slots=True)
class ForceNewField:
    """A ``spec.forProvider`` field Terraform marks ForceNew (upjet refuses to change it)."""

    name: str
    terraform: str
    computed: bool
    """Optional+Computed: left out, Terraform keeps the value the cloud has."""


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
def force_new_table() -> ForceNewTable:
    """The vendored table (``checks/data/openstack-force-new.json``), read once."""
    data = json.loads(FORCE_NEW_DATA.read_text(encoding="utf-8"))
    kinds: dict[tuple[str, str], dict[str, ForceNewField]] = {}
    updatable: dict[tuple[str, str], frozenset[str]] = {}
    for group in data["groups"]:
        for kind, spec in data["kinds"].items():
            kinds[(group, kind)] = {
                name: ForceNewField(name, entry["terraform"], bool(entry["computed"]))
                for name, entry in spec["forceNew"].items()
            }
            updatable[(group, kind)] = frozenset(spec["updatable"])
    src = data["source"]
    return ForceNewTable(kinds, updatable, f"{src['repo']} {src['tag']} ({src['commit'][:12]})")


def force_new_guard(diff: FleetDiff, *, table: ForceNewTable | None = None) -> list[Finding]:
    """Errors for changes upjet refuses on existing provider-openstack Magnum objects.

    A changed ``spec.forProvider`` field that Terraform marks ForceNew is an error: upjet
    never replaces a resource, it refuses the whole update (nothing of it is applied) and
    the object stays ``Synced=False``. A ForceNew field removed is fine when Terraform
    computes it (it keeps the cloud's value); one added is a warning (refused unless it
    equals what the cloud has). ``clusterTemplateId`` changing between two UUIDs is an
    in-place upgrade (a warning: Magnum >= 18 refuses it for Heat clusters); from a name
    to a UUID it is a note (the UUID is what Magnum stores). Changes under
    ``spec.initProvider`` are notes: they apply only when the object is created.
    """
    table = table or force_new_table()
    out: list[Finding] = []
    for env in diff.environments:
        for change in env.changed:
            ref = change.after
            fields = table.kinds.get((ref.group, ref.kind))
            if fields is None:
                continue
            refused: list[FieldChange] = []
            added: list[FieldChange] = []
            init: list[FieldChange] = []
            for c in change.fields:
                if c.path[:2] == ("spec", "initProvider"):
                    init.append(c)
                    continue
                if c.path[:2] != ("spec", "forProvider") or len(c.path) < 3:
                    continue
                name = c.path[2]
                if name == "clusterTemplateId" and ref.kind == "ClusterV1":
                    out.append(_template_change(env.environment, ref, c))
                    continue
                field = fields.get(str(name))
                if field is None:
                    continue
                if c.old is ABSENT:
                    added.append(c)
                elif c.new is not ABSENT or not field.computed:
                    refused.append(c)
            subject = _subject(ref)
            if refused:
                out.append(
                    Finding(
                        "error",
                        env.environment,
                        subject,
                        f"{_shown(refused)}: Terraform marks "
                        f"{_names(refused)} ForceNew ({table.source}), so upjet refuses the "
                        f'update ("{UPJET_REFUSAL}"): nothing of it is applied and the object '
                        f"stays Synced=False; {_INSTEAD.get(ref.kind, _INSTEAD['ClusterV1'])}",
                    )
                )
            if added:
                out.append(
                    Finding(
                        "warning",
                        env.environment,
                        subject,
                        f"{_shown(added)}: ForceNew ({table.source}); upjet refuses the "
                        "update unless the value equals what Magnum already has",
                    )
                )
            if init:
                moved = {c.path[2:] for c in change.fields if c.path[:2] == ("spec", "forProvider")}
                effect = (
                    "the provider no longer sets these fields on the existing object"
                    if all(c.path[2:] in moved for c in init)
                    else "this changes nothing on the existing one"
                )
                out.append(
                    Finding(
                        "note",
                        env.environment,
                        subject,
                        f"{_shown(init)}: spec.initProvider is used only to create the "
                        f"object; {effect}",
                    )
                )
    return out


def _template_change(environment: str, ref: ObjectRef, c: FieldChange) -> Finding:
    from fleet.clouds.magnum.template import is_uuid  # clouds are not needed to diff

    subject = _subject(ref)
    if is_uuid(c.new) and not is_uuid(c.old):
        return Finding(
            "note",
            environment,
            subject,
            f"{_shown([c])}: the template's UUID replaces its name; Magnum stores the UUID "
            "already, so the provider sees no change (no upgrade)",
        )
    return Finding(
        "warning",
        environment,
        subject,
        f"{_shown([c])}: an in-place upgrade (the provider calls Magnum's upgrade action); "
        "Magnum 18.0.0 and later refuse it for clusters of the Heat driver, and labels "
        f"(kube_tag) cannot change with it; the supported path is blue/green ({UPGRADE_GUIDE})",
    )


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
                        _subject(change.after),
                        f"{_shown([c])}: the external name is {what}. The provider finds the "
                        "real resource by it (upjet takes it as the Terraform ID); without it "
                        "the provider creates a new one, with another it manages another. "
                        "Keep the old value; to move to another cluster, declare a new one "
                        "with a new name and retire this one",
                    )
                )
    return out


def _shown(changes: Sequence[FieldChange]) -> str:
    shown = "; ".join(f"{c.dotted}: {show(c.old)} -> {show(c.new)}" for c in changes[:3])
    return shown + (f"; and {len(changes) - 3} more" if len(changes) > 3 else "")


def _names(changes: Sequence[FieldChange]) -> str:
    names = sorted({str(c.path[2]) for c in changes})
    return ", ".join(names)
