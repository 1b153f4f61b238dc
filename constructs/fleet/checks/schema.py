"""Check rendered objects against their real CRD schemas, the way the API server would.

Each CRD's ``openAPIV3Schema`` is turned into a JSON Schema (Draft 4, whose boolean
``exclusiveMinimum`` matches OpenAPI 3.0) and compiled once per process with
``jsonschema_rs``:

* ``nullable: true`` adds ``null`` to the allowed types (and to an ``enum``).
* ``x-kubernetes-int-or-string`` allows an integer or a string.
* ``x-kubernetes-preserve-unknown-fields`` allows fields the schema does not list.
* Unknown fields are errors: every object schema without ``additionalProperties`` or
  ``x-kubernetes-preserve-unknown-fields`` gets ``additionalProperties: false``. The API
  server would silently prune such fields; a silently dropped setting is a bug here.
* ``format``: ``int32``/``int64`` become range checks; ``byte`` (standard base64) and
  ``date-time`` (RFC 3339 and the looser ISO 8601 forms Kubernetes accepts) are checked by
  small functions; every other format is ignored, so no valid value is rejected.
* Top-level ``metadata``: only the standard ObjectMeta fields are allowed, and only
  ``name``, ``namespace``, ``labels`` and ``annotations`` (and the list/string fields) are
  type-checked; CRDs do not describe ObjectMeta.
* ``x-kubernetes-validations`` (CEL): every rule of every schema is compiled and
  evaluated with a real CEL runtime by :mod:`fleet.checks.cel`, after the schema's defaults
  are applied, as the API server does (upjet's ``managementPolicies`` defaults to
  ``["*"]``). Transition rules (``oldSelf``) apply to updates only and are not evaluated,
  as on create. A rule that does not compile is reported on every object of its kind.

The CRDs are the pinned ones (or ``$FLEET_CRDS_DIR``) plus the pinned folders of the
fleet's platform components that bring their own (``PlatformComponent.crds``), merged into
one index; a kind two folders define is an error. Parsed indexes and compiled validators are
kept per set of CRD files (their paths, sizes and modification times), at most
:data:`INDEXES_KEPT` sets per process, so a long-lived process never grows without bound
and a changed file is never served stale.

Core Kubernetes kinds (Namespace, Secret, ConfigMap, ServiceAccount, ...) are checked against
the strict JSON schemas bundled in the ``kubernetes-validate`` package (Kubernetes 1.37),
also compiled with ``jsonschema_rs``. An object whose apiVersion/kind has no schema is an
error unless ``declare_schemaless(api_version, kind)`` was called for it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import importlib.util
import json
import os
import re
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import jsonschema_rs

from fleet.checks.cel import Rule, RuleCompileError, RuleSet
from fleet.checks.crds import (
    ENV_VAR,
    PACKAGED_CRDS,
    CrdIndex,
    folder_stamp,
    index_cache_dir,
    load_crds,
    load_plugin_crds,
    merged,
    resolve_crds_dir,
)
from fleet.checks.problem import Problem
from fleet.core.errors import FleetError
from fleet.core.manifest import Manifest, format_path

KUBERNETES_VERSION = "1.37.0"
"""The Kubernetes version whose core schemas (from kubernetes-validate) are used."""

_INT_RANGES = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
_DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)?$"
)


def _is_byte(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_date_time(value: str) -> bool:
    return bool(_DATE_TIME.match(value))


FORMATS: dict[str, Callable[[str], bool]] = {"byte": _is_byte, "date-time": _is_date_time}

_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_STRING_LIST = {"type": "array", "items": {"type": "string"}}
_OBJECT_META: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "generateName": {"type": "string"},
        "namespace": {"type": "string"},
        "labels": _STRING_MAP,
        "annotations": _STRING_MAP,
        "finalizers": _STRING_LIST,
        "ownerReferences": {"type": "array", "items": {"type": "object"}},
        "uid": {"type": "string"},
        "resourceVersion": {"type": "string"},
        "generation": {"type": "integer"},
        "creationTimestamp": {},
        "deletionTimestamp": {},
        "deletionGracePeriodSeconds": {"type": "integer"},
        "managedFields": {"type": "array"},
        "selfLink": {"type": "string"},
    },
    "additionalProperties": False,
}

# Keywords copied unchanged from OpenAPI v3 into JSON Schema.
_PLAIN = (
    "type",
    "enum",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "multipleOf",
    "required",
)


# --- which CRDs, and what a verdict depends on ------------------------------------------------


def available_crds_dir() -> Path | None:
    """The CRD folder synth validates against: ``$FLEET_CRDS_DIR``, else the packaged CRDs.

    None when neither exists (a package stripped of its data: synth then runs the other
    checks and says it skipped the schemas); an explicitly set ``$FLEET_CRDS_DIR`` that
    does not exist is an error.
    """
    if os.environ.get(ENV_VAR) or PACKAGED_CRDS.is_dir():
        return resolve_crds_dir()
    return None


def schema_inputs(
    crds_dir: Path | None,
    schemaless: Collection[tuple[str, str]] = frozenset(),
    extra: Sequence[Path] = (),
) -> str:
    """Digest of what a schema verdict depends on besides the object and this code: the
    contents of the CRD files in ``crds_dir`` (None: not checked) and in the plug-ins'
    folders ``extra``, and the schemaless kinds."""
    h = hashlib.blake2b(digest_size=16)
    h.update(repr(sorted(schemaless)).encode())
    if crds_dir is None:
        h.update(b"\0no-crds")
        return h.hexdigest()
    for i, folder in enumerate((crds_dir, *extra)):
        h.update(f"\0folder {i}\0".encode())
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            h.update(b"\0" + path.relative_to(folder).as_posix().encode() + b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()


# --- OpenAPI v3 (structural) -> JSON Schema --------------------------------------------------


class _Converter:
    def __init__(self, api_version: str, kind: str) -> None:
        self.api_version = api_version
        self.kind = kind
        self.rules: list[Rule] = []
        self.broken: list[str] = []

    def node(self, src: dict[str, Any], path: tuple[str, ...] | None) -> dict[str, Any]:
        """Convert one schema node; ``path`` is None inside anyOf/allOf/oneOf/not branches."""
        out: dict[str, Any] = {k: src[k] for k in _PLAIN if k in src}
        preserve = bool(src.get("x-kubernetes-preserve-unknown-fields"))
        if src.get("x-kubernetes-int-or-string"):
            out.pop("type", None)
            out["type"] = ["integer", "string"]
        fmt = src.get("format")
        if fmt in _INT_RANGES and out.get("type") == "integer":
            low, high = _INT_RANGES[fmt]
            out.setdefault("minimum", low)
            out.setdefault("maximum", high)
        elif fmt in FORMATS:
            out["format"] = fmt
        if "properties" in src:
            out["properties"] = {
                name: self.node(sub, None if path is None else (*path, name))
                for name, sub in src["properties"].items()
            }
        if "items" in src and isinstance(src["items"], dict):
            out["items"] = self.node(src["items"], None if path is None else (*path, "[]"))
        extra = src.get("additionalProperties")
        if isinstance(extra, dict):
            out["additionalProperties"] = self.node(extra, None if path is None else (*path, "{}"))
        elif isinstance(extra, bool):
            out["additionalProperties"] = extra
        elif (
            path is not None
            and not preserve
            and (src.get("type") == "object" or "properties" in src)
        ):
            if src.get("x-kubernetes-embedded-resource"):
                props = out.setdefault("properties", {})
                props.setdefault("apiVersion", {"type": "string"})
                props.setdefault("kind", {"type": "string"})
                props.setdefault("metadata", {"type": "object"})
            out["additionalProperties"] = False
        for key in ("allOf", "anyOf", "oneOf"):
            # controller-gen's anyOf [{type: integer}, {type: string}] repeats the type above.
            if (
                key == "anyOf"
                and src.get("x-kubernetes-int-or-string")
                and all(set(branch) <= {"type"} for branch in src.get("anyOf") or [])
            ):
                continue
            if key in src:
                out[key] = [self.node(sub, None) for sub in src[key]]
        if "not" in src and isinstance(src["not"], dict):
            out["not"] = self.node(src["not"], None)
        if src.get("nullable"):
            kind = out.get("type")
            if isinstance(kind, str):
                out["type"] = [kind, "null"]
            elif isinstance(kind, list) and "null" not in kind:
                out["type"] = [*kind, "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        if path is not None:
            for rule in src.get("x-kubernetes-validations") or []:
                self.add_rule(path, src, rule)
        return out

    def add_rule(self, path: tuple[str, ...], schema: dict[str, Any], rule: dict[str, Any]) -> None:
        try:
            self.rules.append(Rule.of(path, schema, rule))
        except RuleCompileError as e:
            self.broken.append(f"{'.'.join(path) or '(root)'}: {e}")


def convert_schema(
    schema: dict[str, Any],
    api_version: str = "",
    kind: str = "",
    converter: _Converter | None = None,
) -> tuple[dict[str, Any], list[Rule]]:
    """Turn a CRD openAPIV3Schema into a JSON Schema plus the CEL rules to evaluate."""
    converter = converter or _Converter(api_version, kind)
    out = converter.node(schema, ())
    props = out.setdefault("properties", {})
    meta = dict(_OBJECT_META)
    crd_meta = (schema.get("properties") or {}).get("metadata") or {}
    if crd_meta.get("properties"):
        # CRDs may only constrain name/generateName; keep those constraints.
        meta_props = dict(meta["properties"])
        for name, sub in converter.node(crd_meta, None)["properties"].items():
            meta_props[name] = {**meta_props.get(name, {}), **sub}
        meta["properties"] = meta_props
    props["metadata"] = meta
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    return out, converter.rules


# --- compiled validators ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Compiled:
    validator: Any
    rules: tuple[Rule, ...]
    cel: RuleSet | None = None
    schema: dict[str, Any] | None = None
    """The CRD's openAPIV3Schema (defaults for the CEL rules)."""
    broken: tuple[str, ...] = ()
    """Rules of the CRD that do not compile (reported on every object of the kind)."""


def _compile(schema: dict[str, Any], registry: Any = None) -> Any:
    kwargs: dict[str, Any] = {"validate_formats": True, "formats": FORMATS}
    if registry is not None:
        kwargs["registry"] = registry
        return jsonschema_rs.validator_for(schema, **kwargs)
    return jsonschema_rs.Draft4Validator(schema, **kwargs)


@dataclass(slots=True)
class _Schemas:
    """One merged CRD index and the validators compiled from it (one per kind asked for)."""

    index: CrdIndex
    compiled: dict[tuple[str, str], _Compiled | None] = field(default_factory=dict)

    def validator(self, api_version: str, kind: str) -> _Compiled | None:
        """The compiled schema and CEL rules of ``api_version``/``kind``; None: no CRD."""
        key = (api_version, kind)
        if key not in self.compiled:
            crd = self.index.get(api_version, kind)
            if crd is None:
                self.compiled[key] = None
            else:
                converter = _Converter(api_version, kind)
                schema, rules = convert_schema(crd.schema, api_version, kind, converter)
                self.compiled[key] = _Compiled(
                    _compile(schema),
                    tuple(rules),
                    RuleSet(rules) if rules else None,
                    crd.schema,
                    tuple(converter.broken),
                )
        return self.compiled[key]


INDEXES_KEPT = 4
"""Merged CRD indexes (with their compiled validators) a process keeps, least recently
used dropped first."""
_INDEXES: OrderedDict[tuple[tuple[Path, str], ...], _Schemas] = OrderedDict()


def _schemas(crds_dir: Path, extra: Sequence[Path]) -> _Schemas:
    """The index of ``crds_dir`` and the plug-ins' folders ``extra``, merged, with its
    compiled validators: kept by the folders' :func:`~fleet.checks.crds.folder_stamp`."""
    folders = (crds_dir, *extra)
    key = tuple((folder, folder_stamp(folder)) for folder in folders)
    found = _INDEXES.get(key)
    if found is not None:
        _INDEXES.move_to_end(key)
        return found
    cache_dir = index_cache_dir()
    indexes = [load_crds(crds_dir, cache_dir=cache_dir)]
    indexes += [load_plugin_crds(folder, cache_dir=cache_dir) for folder in extra]
    found = _INDEXES[key] = _Schemas(merged(indexes))
    while len(_INDEXES) > INDEXES_KEPT:
        _INDEXES.popitem(last=False)
    return found


@cache
def _core_schema_dir() -> Path:
    # find_spec locates the package without running it: importing kubernetes_validate
    # just to find its data folder took 90 ms of every synth.
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:  # a pinned dependency
        raise FleetError("core Kubernetes schemas need the kubernetes-validate package")
    package = Path(next(iter(spec.submodule_search_locations)))
    return package / "kubernetes-json-schema" / f"v{KUBERNETES_VERSION}-local-strict"


@cache
def _core_registry() -> Any:
    defs = json.loads((_core_schema_dir() / "_definitions.json").read_text())
    return jsonschema_rs.Registry([("https://kubernetes.io/api/_definitions.json", defs)])


@lru_cache(maxsize=256)
def _core_validator(api_version: str, kind: str) -> _Compiled | None:
    """The kubernetes-validate schema for a built-in kind, or None if it has none."""
    group, _, version = api_version.rpartition("/")
    group = group.split(".", 1)[0]
    stem = f"{kind.lower()}-{group}-{version}" if group else f"{kind.lower()}-{version}"
    path = _core_schema_dir() / f"{stem}.json"
    if not path.is_file():
        return None
    schema = json.loads(path.read_text())
    gvks = schema.get("x-kubernetes-group-version-kind") or []
    full_group = api_version.rpartition("/")[0]
    if not any(g.get("group", "") == full_group and g.get("kind") == kind for g in gvks):
        return None  # e.g. a CRD group whose first label matches a core group name
    return _Compiled(_compile(schema, _core_registry()), ())


def _message(error: Any) -> tuple[list[str | int], str]:
    path: list[str | int] = list(error.instance_path)
    kind = error.kind
    name = type(kind).__name__
    if name == "AdditionalProperties":
        unexpected = list(kind.unexpected)
        if len(unexpected) == 1:
            return [*path, unexpected[0]], "unknown field (the API server would drop it)"
        return path, f"unknown fields {', '.join(unexpected)} (the API server would drop them)"
    if name == "Required":
        return [*path, kind.property], "required field is missing"
    if name == "Type":
        types = kind.types if isinstance(kind.types, list) else [kind.types]
        return path, f"expected {' or '.join(map(str, types))}, got {json.dumps(error.instance)}"
    if name == "Enum":
        options = ", ".join(json.dumps(o) for o in kind.options)
        return path, f"expected one of {options}, got {json.dumps(error.instance)}"
    if name == "Pattern":
        return path, f"expected a string matching {kind.pattern}, got {json.dumps(error.instance)}"
    return path, error.message


def _check(manifest: Manifest, compiled: _Compiled) -> list[Problem]:
    body = manifest.body
    problems: list[Problem] = []
    if not compiled.validator.is_valid(body):
        for error in compiled.validator.iter_errors(body):
            path, message = _message(error)
            problems.append(Problem.of(manifest, format_path(path), message))
    for broken in compiled.broken:
        problems.append(Problem.of(manifest, "", broken))
    if compiled.cel is not None and compiled.schema is not None:
        for where, message in compiled.cel.failures(body, compiled.schema):
            problems.append(Problem.of(manifest, format_path(where), message))
    return problems


def validate_manifests(
    manifests: Sequence[Manifest],
    *,
    crds_dir: Path | None = None,
    schemaless: Collection[tuple[str, str]] = frozenset(),
    extra: Sequence[Path] = (),
) -> list[Problem]:
    """Check every manifest against its CRD (or core Kubernetes) schema.

    ``crds_dir`` defaults to ``$FLEET_CRDS_DIR`` or the packaged CRDs; ``extra`` are the
    pinned CRD folders of the fleet's plug-ins (:func:`fleet.checks.crds.plugin_crds`),
    merged with it; objects of the ``schemaless`` (apiVersion, kind) pairs without a
    schema pass unchecked (a fleet's ``Checks.of(fleet).accept_schemaless``).
    Schemas are loaded and compiled once per set of CRD files. Returns the problems
    found, in manifest order; an empty list means every object is valid.
    """
    schemas = _schemas(resolve_crds_dir(crds_dir).resolve(), extra)
    index = schemas.index
    problems: list[Problem] = []
    for manifest in manifests:
        api_version, kind = manifest.api_version, manifest.kind
        if not api_version or not kind:
            problems.append(Problem.of(manifest, "", "apiVersion and kind are required"))
            continue
        compiled = schemas.validator(api_version, kind) or _core_validator(api_version, kind)
        if compiled is None:
            if (api_version, kind) not in schemaless:
                problems.append(
                    Problem.of(
                        manifest,
                        "",
                        f"no schema for {api_version} {kind}: no served CRD version in "
                        f"{index.directory} and not a core Kubernetes kind; add its CRD, "
                        "or declare it schemaless (Checks.of(fleet).accept_schemaless)",
                    )
                )
            continue
        problems.extend(_check(manifest, compiled))
    return problems
