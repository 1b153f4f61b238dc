"""Reads resources of Terraform state, whatever cloud they belong to.

Two formats (hashicorp/terraform v1.15.9): a state file (``terraform.tfstate``, ``terraform
state pull``; format version 4, ``internal/states/statefile/version4.go``:
``resources[].instances[].attributes``, a module path in ``module``) and ``terraform show
-json`` output (``internal/command/jsonstate/state.go``: ``format_version`` 0.x or 1.x,
``values.root_module.resources[].values`` and ``child_modules`` nested to any depth). Only
the resource types the caller names are read (a cloud's importer names its own, with the
type of each attribute it reads: :class:`ResourceSchema`), managed resources and data
sources; every other resource (and every output) is counted, never read: a state holds
secrets (kubeconfigs, keys, outputs not marked sensitive).

A name or address Terraform could never write (a line break in a resource's name, an
attribute name no provider schema has) is refused when read, naming the file and showing
the text escaped (:mod:`fleet.terraform.names`). Anything else is refused, saying
what it is: a state of format version 1 to 3 (Terraform
0.11 or older; ``version3.go``), of a version newer than 4, ``terraform show -json``
output of a newer ``format_version``, a plan (saved or shown), an empty state, an OpenTofu
state encrypted at rest (opentofu/opentofu ``internal/encryption/base.go``: ``meta``,
``encrypted_data``, ``encryption_version``). A byte order mark (UTF-8, UTF-16) is read past.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleet.core.errors import DefinitionError
from fleet.terraform.names import (
    check_address,
    check_attributes,
    check_name,
    shown_path,
)

STATE_VERSION = 4
SHOW_JSON_MAJORS = ("0", "1")
"""``terraform show -json`` ``format_version`` majors read: "0.1" (to v0.15), "0.2"
(v1.0.x), "1.0" (since v1.1.0)."""


@dataclass(frozen=True, kw_only=True)
class ResourceSchema:
    """The attributes of one resource type that a cloud's importer reads, with the type its
    Terraform provider declares for each (``schema.TypeString``, ``TypeInt``, ``TypeBool``,
    ``TypeMap`` of strings: ``string``, ``int``, ``bool``, ``map``). A state that holds
    another type was not written by Terraform: refused, naming the attribute, never quoting
    the value."""

    provider: str
    """The Terraform provider that declares the type (for messages)."""
    attributes: Mapping[str, str]
    """Attribute -> ``string``, ``int``, ``bool`` or ``map``."""


Schemas = Mapping[str, ResourceSchema]
"""The resource types to read (by Terraform type), each with its schema."""

_ZIP = b"PK\x03\x04"
"""A saved plan (``terraform plan -out``) is a zip archive."""


@dataclass(frozen=True, kw_only=True)
class StateResource:
    """One resource instance of a state (of a type read): where it is, and its attributes."""

    source: str
    address: str
    type: str
    attributes: Mapping[str, Any]
    mode: str = "managed"
    """``managed`` (a resource) or ``data`` (a data source)."""
    name: str = ""
    """The block's name (``web`` in ``aws_instance.web``)."""
    module: str = ""
    """The module instance (``module.k8s_cluster.module.flux[0]``), "" at the root."""
    index: int | str | None = None
    """The ``count`` index or ``for_each`` key, None for a single instance."""
    sensitive: frozenset[str] = frozenset()
    """The top-level attributes the state marks sensitive."""
    tainted: bool = False
    """Marked tainted (v4 ``"status": "tainted"``, show-json ``"tainted": true``,
    hashicorp/terraform ``internal/states/statefile/version4.go``,
    ``internal/command/jsonstate/state.go``): Terraform would replace it on its next apply."""

    @property
    def where(self) -> str:
        """``<state file> <resource address>``, for messages."""
        return f"{self.source} {self.address}"

    def text(self, key: str) -> str | None:
        """A string attribute, None when absent or empty."""
        value = self.attributes.get(key)
        return str(value) if value not in (None, "") else None

    def number(self, key: str) -> int | None:
        """A whole-number attribute (JSON may write ``3.0``), None when absent."""
        value = self.attributes.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return int(value) if float(value).is_integer() else None

    @property
    def block(self) -> str:
        """The address without module and instance key: ``<type>.<name>`` (with
        ``data.`` for a data source), as the HCL names the block."""
        return f"{'data.' if self.mode == 'data' else ''}{self.type}.{self.name}"

    @property
    def module_path(self) -> tuple[str, ...]:
        """The module calls from the root, instance keys dropped: ``("k8s_cluster",
        "flux")``."""
        return tuple(_MODULE_STEP.findall(self.module))


_MODULE_STEP = re.compile(r'module\.([A-Za-z0-9_-]+)(?:\[(?:\d+|"(?:[^"\\]|\\.)*")\])?')


@dataclass(frozen=True, kw_only=True)
class StateFile:
    """One state file: its format, the resources of the types read, and what else it holds."""

    path: Path
    format: str
    """``tfstate-v4`` or ``show-json``."""
    terraform_version: str
    resources: tuple[StateResource, ...]
    others: tuple[str, ...] = ()
    """The addresses of every other resource (not read)."""
    environment: str | None = None
    """The environment given with the file (``--state ENV=PATH``)."""

    @property
    def source(self) -> str:
        """The path as given, for messages (escaped when it is not printable)."""
        return shown_path(self.path)


def read_state_file(path: Path, schemas: Schemas, *, environment: str | None = None) -> StateFile:
    """One state file (the resources of the types ``schemas`` names), or a DefinitionError
    naming it and what it is instead."""
    source = shown_path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise DefinitionError(f"cannot read: {e.strerror or e}", where=source) from None
    if raw.startswith(_ZIP):
        raise DefinitionError(
            "a saved plan (terraform plan -out), not a state: pass the state "
            "(`terraform state pull > state.tfstate`) or `terraform show -json > state.json`",
            where=source,
        )
    try:
        document = json.loads(_text(raw))
    except UnicodeDecodeError:
        raise DefinitionError("not a Terraform state (not UTF-8 text)", where=source) from None
    except json.JSONDecodeError as e:
        if not e.doc.strip():
            raise DefinitionError(
                "an empty file, not a state (did `terraform state pull` fail?)", where=source
            ) from None
        what = e.msg.removesuffix(" starting at")  # json's "Unterminated string starting at"
        cut = what == "Unterminated string" or not e.doc[e.pos :].strip()
        ends = " (the file ends there: cut short?)" if cut else ""
        raise DefinitionError(f"not JSON: {what}{ends}", where=f"{source}:{e.lineno}") from None
    if not isinstance(document, dict):
        raise DefinitionError("not a Terraform state (not a JSON object)", where=source)
    if "encryption_version" in document and "encrypted_data" in document:
        raise DefinitionError(
            "an OpenTofu state encrypted at rest (encryption_version "
            f"{str(document['encryption_version'])[:8]!r}): pass `tofu show -json > state.json` "
            "instead, which OpenTofu decrypts with the configuration's keys",
            where=source,
        )
    terraform_version = str(document.get("terraform_version") or "")
    others: list[str] = []
    if "format_version" in document:
        _check_show_json(document, source)
        values = document.get("values")
        module = values.get("root_module") if isinstance(values, dict) else None
        if not isinstance(module, dict):
            raise DefinitionError(
                "an empty state (`terraform show -json` gives no values): nothing to import",
                where=source,
            )
        resources = tuple(_shown(source, module, others, schemas))
        kind = "show-json"
    elif "version" in document or "modules" in document:
        _check_version(document, source)
        listed = document.get("resources")
        if not isinstance(listed, list):
            raise DefinitionError(
                "state format version 4 without a resources list", where=source, field="resources"
            )
        resources = tuple(_v4(source, listed, others, schemas))
        kind = "tfstate-v4"
    else:
        raise DefinitionError(
            "neither a Terraform state (version, resources[]) nor `terraform show -json` "
            "output (format_version, values.root_module)",
            where=source,
        )
    return StateFile(
        path=path,
        format=kind,
        terraform_version=terraform_version,
        resources=resources,
        others=tuple(others),
        environment=environment,
    )


def _text(raw: bytes) -> str:
    """The file's text: UTF-8, or UTF-8 or UTF-16 after a byte order mark (what Windows
    PowerShell writes for ``terraform show -json > state.json``, or with ``Out-File``)."""
    if raw.startswith(codecs.BOM_UTF8):
        return raw[len(codecs.BOM_UTF8) :].decode("utf-8")
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return raw.decode("utf-16")
    return raw.decode("utf-8")


def _check_show_json(document: Mapping[str, Any], source: str) -> None:
    version = str(document.get("format_version"))
    if any(key in document for key in ("planned_values", "resource_changes", "prior_state")):
        raise DefinitionError(
            "a plan (`terraform show -json PLANFILE`), not a state: run `terraform show -json` "
            "without a plan file, or pass the state (`terraform state pull`)",
            where=source,
            field="format_version",
        )
    if version.split(".")[0] not in SHOW_JSON_MAJORS:
        raise DefinitionError(
            f"`terraform show -json` format_version {version!r} is newer than this importer "
            "reads (0.x, 1.x)",
            where=source,
            field="format_version",
        )


def _check_version(document: Mapping[str, Any], source: str) -> None:
    version = document.get("version")
    if version == STATE_VERSION:
        return
    if version in (1, 2, 3) or ("modules" in document and "resources" not in document):
        shown = version if isinstance(version, int) else "3 or older"
        raise DefinitionError(
            f"state format version {shown} (Terraform 0.11 or older) is not supported: run "
            "Terraform 0.12 or newer once on it (e.g. `terraform apply -refresh-only`) to "
            "rewrite it as version 4, or pass `terraform show -json` output",
            where=source,
            field="version",
        )
    if isinstance(version, int) and not isinstance(version, bool) and version > STATE_VERSION:
        raise DefinitionError(
            f"state format version {version} is newer than this importer reads (version 4); "
            "pass `terraform show -json` output instead",
            where=source,
            field="version",
        )
    raise DefinitionError(
        f"state format version {version!r} is not one Terraform writes (this reads version 4)",
        where=source,
        field="version",
    )


def _v4(
    source: str, resources: list[Any], others: list[str], schemas: Schemas
) -> Iterator[StateResource]:
    for number, resource in enumerate(resources):
        if not isinstance(resource, dict):
            continue
        mode = "data" if resource.get("mode") == "data" else "managed"
        module = str(resource.get("module") or "")
        type_, name = str(resource.get("type")), str(resource.get("name"))
        at = f"resources[{number}]"
        check_name(type_, what="resource type", where=source, field=f"{at}.type")
        check_name(name, what="resource name", where=source, field=f"{at}.name")
        check_address(module, where=source, field=f"{at}.module")
        base = ".".join(
            part for part in (module, "data" if mode == "data" else "", f"{type_}.{name}") if part
        )
        for instance in resource.get("instances") or []:
            if not isinstance(instance, dict):
                continue
            key = instance.get("index_key")
            address = base + ("" if key is None else f"[{json.dumps(key)}]")
            if type_ not in schemas:
                others.append(address)
                continue
            if instance.get("deposed"):
                continue  # an object awaiting destruction (create_before_destroy)
            attributes = instance.get("attributes")
            if not isinstance(attributes, dict):
                raise DefinitionError(
                    f"{address}: no attributes (a state written before Terraform 0.12 keeps "
                    "attributes_flat; run Terraform 0.12 or newer once on it)",
                    where=source,
                )
            check_attributes(attributes, where=f"{source} {address}")
            yield _check_types(
                schemas[type_],
                StateResource(
                    source=source,
                    address=address,
                    type=type_,
                    attributes=attributes,
                    mode=mode,
                    name=name,
                    module=module,
                    index=key if isinstance(key, (int, str)) else None,
                    sensitive=_sensitive_v4(instance.get("sensitive_attributes")),
                    tainted=instance.get("status") == "tainted",
                ),
            )


def _check_types(schema: ResourceSchema, resource: StateResource) -> StateResource:
    """``resource``, or a DefinitionError naming the first attribute whose type is not the
    provider's (``schema``); null means unset and passes."""
    for attribute, kind in schema.attributes.items():
        value = resource.attributes.get(attribute)
        if value is None or _is(kind, value):
            continue
        expected = {"string": "a string", "int": "a whole number", "bool": "true or false"}
        raise DefinitionError(
            f"the state holds {_kind_of(value)} where {schema.provider} has "
            f"{expected.get(kind, 'a map of strings')}: not a state Terraform wrote; pull it "
            "again (`terraform state pull`, or `terraform show -json`)",
            where=resource.where,
            field=attribute,
        )
    return resource


def _is(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and float(value).is_integer()
        )
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _kind_of(value: Any) -> str:
    """The JSON type of ``value``, in words (never the value: it may be a secret)."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, float) and not value.is_integer():
        return "a number with a fraction"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a map with a value that is not a string"
    if isinstance(value, list):
        return "a list"
    return "another type"


def _sensitive_v4(paths: Any) -> frozenset[str]:
    """The top-level attributes of a v4 instance's ``sensitive_attributes`` paths."""
    found: set[str] = set()
    for path in paths or []:
        if isinstance(path, list) and path and isinstance(path[0], dict):
            step = path[0]
            if step.get("type") == "get_attr" and isinstance(step.get("value"), str):
                found.add(step["value"])
    return frozenset(found)


def _marked(flags: Any) -> bool:
    """Whether a ``sensitive_values`` entry marks anything in it (``true``, or ``true``
    nested in a map or list: ``{"labels": {"token": true}}``)."""
    if isinstance(flags, dict):
        return any(_marked(v) for v in flags.values())
    if isinstance(flags, list):
        return any(_marked(v) for v in flags)
    return flags is True


def _shown(
    source: str, module: Mapping[str, Any], others: list[str], schemas: Schemas
) -> Iterator[StateResource]:
    module_address = str(module.get("address") or "")
    check_address(module_address, where=source, field="module address")
    for resource in module.get("resources") or []:
        if not isinstance(resource, dict):
            continue
        address = str(resource.get("address"))
        type_ = str(resource.get("type"))
        check_address(address, where=source, field="address")
        check_name(type_, what="resource type", where=source, field=f"{address} type")
        check_name(str(resource.get("name")), what="resource name", where=source, field=address)
        if type_ not in schemas:
            others.append(address)
            continue
        if resource.get("deposed_key") or not isinstance(resource.get("values"), dict):
            continue
        check_attributes(resource["values"], where=f"{source} {address}")
        index = resource.get("index")
        flags = resource.get("sensitive_values")
        yield _check_types(
            schemas[type_],
            StateResource(
                source=source,
                address=address,
                type=type_,
                attributes=resource["values"],
                mode="data" if resource.get("mode") == "data" else "managed",
                name=str(resource.get("name")),
                module=module_address,
                index=index if isinstance(index, (int, str)) else None,
                sensitive=frozenset(
                    k for k, v in (flags.items() if isinstance(flags, dict) else ()) if _marked(v)
                ),
                tainted=resource.get("tainted") is True,
            ),
        )
    for child in module.get("child_modules") or []:
        if isinstance(child, dict):
            yield from _shown(source, child, others, schemas)
