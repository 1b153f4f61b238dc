"""Compare two rendered fleets object by object: the diff's data model.

Pure: the input is two trees ``{env: {relpath: body}}`` of parsed YAML, the output a
:class:`FleetDiff`. What a change may not do is decided by the guards, one module per
concern, each returning :class:`Finding` s: :mod:`fleet.guards.deletion` (cluster-bearing
objects removed), :mod:`fleet.guards.force_new` (what a cloud's provider refuses to update,
from its plug-in's data; external names), :mod:`fleet.guards.immutable` (fields a CRD calls
immutable, and the create-only fields cluster classes declare). Rendering the trees (git
worktree, synth) is ``fleet.pipeline.diff``'s job; showing them is ``fleet.views.diff_report``'s.

Objects are matched by identity (group, kind, namespace, name), not by file: that is how
ArgoCD and the API server see them, so a moved file is a change while a renamed object is
a removal plus an addition, which for a cluster means deleting it.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from fleet.core.errors import FleetError
from fleet.core.manifest import Identity, Manifest
from fleet.platform.upjet import Level

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
    old: Body = field(default_factory=dict, compare=False, repr=False)
    """The object as the base renders it (for guards that judge a field by its context)."""
    new: Body = field(default_factory=dict, compare=False, repr=False)
    """The object as the working tree renders it."""


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
            changed.append(ObjectChange(old_ref, new_ref, tuple(fields), old_body, new_body))

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


# --- findings ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finding:
    """A guard's verdict on one object (or on a group of them, one line per object in
    ``details``): ``error`` fails the diff, ``note`` only informs."""

    level: Level
    environment: str
    subject: str
    """``Kind namespace/name (group)``, or what the group shares (a definition module)."""
    message: str
    details: tuple[str, ...] = ()
    """One line per object of a grouped finding (``fleet diff --verbose``, Markdown)."""

    def line(self) -> str:
        """``<level>: <env>: <subject>: <message>`` (empty parts left out)."""
        parts = [p for p in (self.environment, self.subject) if p]
        return f"{self.level}: " + ": ".join([*parts, self.message])


def subject(ref: ObjectRef) -> str:
    """``Kind namespace/name (group)``: what a finding is about."""
    return f"{ref.label()} ({ref.group})"


def show(value: Any) -> str:
    """A field value for a one-line message: JSON-like, ``(absent)`` when missing."""
    if value is ABSENT:
        return "(absent)"
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def shown(changes: Sequence[FieldChange]) -> str:
    """The first three changes, ``path: old -> new``, and how many more."""
    text = "; ".join(f"{c.dotted}: {show(c.old)} -> {show(c.new)}" for c in changes[:3])
    return text + (f"; and {len(changes) - 3} more" if len(changes) > 3 else "")


def load_yaml(data: bytes) -> Any:
    """One rendered object, parsed."""
    return yaml.load(data, Loader=_Loader)
