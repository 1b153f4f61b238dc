"""Reads the Magnum resources of Terraform state.

Two formats (hashicorp/terraform v1.15.9): a state file (``terraform.tfstate``, ``terraform
state pull``; format version 4, ``internal/states/statefile/version4.go``:
``resources[].instances[].attributes``, a module path in ``module``) and ``terraform show
-json`` output (``internal/command/jsonstate/state.go``: ``format_version`` 0.x or 1.x,
``values.root_module.resources[].values`` and ``child_modules`` nested to any depth). Only
``openstack_containerinfra_{cluster,nodegroup,clustertemplate}_v1`` are read, managed
resources and data sources; every other resource (and every output) is counted, never
read: a state holds secrets (kubeconfigs, keys, outputs not marked sensitive).

A name or address Terraform could never write (a line break in a resource's name, an
attribute name no provider schema has) is refused when read, naming the file and showing
the text escaped (:mod:`fleet.importers.terraform_names`). Anything else is refused, saying
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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.importers.secrets import shown
from fleet.importers.terraform_names import (
    check_address,
    check_attributes,
    check_name,
    shown_path,
)
from fleet.importers.tfvars import ImportedCluster

CLUSTER = "openstack_containerinfra_cluster_v1"
NODEGROUP = "openstack_containerinfra_nodegroup_v1"
TEMPLATE = "openstack_containerinfra_clustertemplate_v1"
MAGNUM_TYPES = (CLUSTER, NODEGROUP, TEMPLATE)

STATE_VERSION = 4
SHOW_JSON_MAJORS = ("0", "1")
"""``terraform show -json`` ``format_version`` majors read: "0.1" (to v0.15), "0.2"
(v1.0.x), "1.0" (since v1.1.0)."""
SCHEMA: Mapping[str, Mapping[str, str]] = {
    CLUSTER: {
        **dict.fromkeys(
            (
                "id",
                "name",
                "region",
                "project_id",
                "cluster_template_id",
                "discovery_url",
                "flavor",
                "master_flavor",
                "keypair",
                "fixed_network",
                "fixed_subnet",
            ),
            "string",
        ),
        **dict.fromkeys(
            ("create_timeout", "docker_volume_size", "master_count", "node_count"), "int"
        ),
        **dict.fromkeys(("merge_labels", "master_lb_enabled", "floating_ip_enabled"), "bool"),
        "labels": "map",
    },
    NODEGROUP: {
        **dict.fromkeys(
            ("id", "name", "region", "cluster_id", "role", "image_id", "flavor_id"), "string"
        ),
        **dict.fromkeys(
            ("docker_volume_size", "node_count", "min_node_count", "max_node_count"), "int"
        ),
        "merge_labels": "bool",
        "labels": "map",
    },
    TEMPLATE: {
        **dict.fromkeys(
            (
                "id",
                "name",
                "region",
                "coe",
                "cluster_distro",
                "dns_nameserver",
                "docker_storage_driver",
                "external_network_id",
                "fixed_network",
                "fixed_subnet",
                "flavor",
                "master_flavor",
                "http_proxy",
                "https_proxy",
                "no_proxy",
                "image",
                "insecure_registry",
                "keypair_id",
                "network_driver",
                "server_type",
                "volume_driver",
            ),
            "string",
        ),
        **dict.fromkeys(("apiserver_port", "docker_volume_size"), "int"),
        **dict.fromkeys(
            (
                "floating_ip_enabled",
                "master_lb_enabled",
                "public",
                "registry_enabled",
                "tls_disabled",
                "hidden",
            ),
            "bool",
        ),
        "labels": "map",
    },
}
"""The type of each attribute the importer reads, as terraform-provider-openstack v3.4.0
declares it (``openstack/resource_openstack_containerinfra_<kind>_v1.go`` for cluster,
nodegroup and clustertemplate, and ``data_source_openstack_containerinfra_clustertemplate_v1.go``:
``schema.TypeString``,
``TypeInt``, ``TypeBool``, ``TypeMap`` of strings). A state that holds another type was not
written by Terraform: refused, naming the attribute, never quoting the value."""

_ZIP = b"PK\x03\x04"
"""A saved plan (``terraform plan -out``) is a zip archive."""


@dataclass(frozen=True, kw_only=True)
class StateResource:
    """One Magnum resource instance of a state: where it is, and its attributes."""

    source: str
    address: str
    type: str
    attributes: Mapping[str, Any]
    mode: str = "managed"
    """``managed`` (a resource) or ``data`` (a data source)."""
    name: str = ""
    """The block's name (``cluster`` in ``openstack_containerinfra_cluster_v1.cluster``)."""
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
        """The address without module and instance key: ``openstack_..._v1.name`` (with
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
    """One state file: its format, its Magnum resources, and what else it holds."""

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


def read_state_file(path: Path, *, environment: str | None = None) -> StateFile:
    """One state file, or a DefinitionError naming it and what it is instead."""
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
        resources = tuple(_shown(source, module, others))
        kind = "show-json"
    elif "version" in document or "modules" in document:
        _check_version(document, source)
        listed = document.get("resources")
        if not isinstance(listed, list):
            raise DefinitionError(
                "state format version 4 without a resources list", where=source, field="resources"
            )
        resources = tuple(_v4(source, listed, others))
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


def _v4(source: str, resources: list[Any], others: list[str]) -> Iterator[StateResource]:
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
            if type_ not in MAGNUM_TYPES:
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
                )
            )


def _check_types(resource: StateResource) -> StateResource:
    """``resource``, or a DefinitionError naming the first attribute whose type is not the
    provider's (:data:`SCHEMA`); null means unset and passes."""
    for attribute, kind in SCHEMA[resource.type].items():
        value = resource.attributes.get(attribute)
        if value is None or _is(kind, value):
            continue
        expected = {"string": "a string", "int": "a whole number", "bool": "true or false"}
        raise DefinitionError(
            f"the state holds {_kind_of(value)} where terraform-provider-openstack has "
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


def _shown(source: str, module: Mapping[str, Any], others: list[str]) -> Iterator[StateResource]:
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
        if type_ not in MAGNUM_TYPES:
            others.append(address)
            continue
        if resource.get("deposed_key") or not isinstance(resource.get("values"), dict):
            continue
        check_attributes(resource["values"], where=f"{source} {address}")
        index = resource.get("index")
        flags = resource.get("sensitive_values")
        yield _check_types(
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
            )
        )
    for child in module.get("child_modules") or []:
        if isinstance(child, dict):
            yield from _shown(source, child, others)


# --- the tfvars import's view: clusters by name, node groups, templates by id ------------------


@dataclass(frozen=True, kw_only=True)
class TerraformState:
    """The Magnum clusters (by name), node groups and templates of one or more states."""

    clusters: Mapping[str, StateResource]
    node_groups: Mapping[tuple[str, str], StateResource]
    """By (cluster UUID, node group name)."""
    templates: Mapping[str, StateResource]
    """By template UUID."""
    files: tuple[StateFile, ...] = field(default=())

    def node_group(self, cluster_id: str, name: str) -> StateResource | None:
        """The node group ``name`` of the cluster with UUID ``cluster_id``."""
        return self.node_groups.get((cluster_id, name))


def load_state(paths: Sequence[Path]) -> TerraformState:
    """Every Magnum resource of the given states; an error for an unreadable file, another
    format, or one cluster name or template id held twice (naming both addresses)."""
    files: list[StateFile] = []
    errors: list[DefinitionError] = []
    for path in paths:
        try:
            files.append(read_state_file(path))
        except DefinitionError as e:
            errors.append(e)
    clusters: dict[str, StateResource] = {}
    groups: dict[tuple[str, str], StateResource] = {}
    templates: dict[str, StateResource] = {}
    for resource in (r for f in files for r in f.resources):
        if resource.type == CLUSTER and resource.mode == "managed":
            name, uuid = resource.text("name"), resource.text("id")
            if name is None or uuid is None:
                errors.append(_bad(resource, "a cluster without name or id"))
                continue
            first = clusters.setdefault(name, resource)
            if first is not resource:
                errors.append(_bad(resource, f"cluster {name!r} is also {first.where}"))
        elif resource.type == NODEGROUP and resource.mode == "managed":
            cluster_id, name = resource.text("cluster_id"), resource.text("name")
            if cluster_id is None or name is None or resource.text("id") is None:
                errors.append(_bad(resource, "a node group without cluster_id, name or id"))
                continue
            groups[(cluster_id, name)] = resource
        elif resource.type == TEMPLATE and resource.text("id") is not None:
            templates.setdefault(str(resource.attributes["id"]), resource)
    if errors:
        raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
    return TerraformState(
        clusters=clusters, node_groups=groups, templates=templates, files=tuple(files)
    )


def _bad(resource: StateResource, message: str) -> DefinitionError:
    return DefinitionError(f"{resource.address}: {message}", where=resource.source)


# --- state and tfvars together ------------------------------------------------------------


def check_state(
    state: TerraformState, clusters: Sequence[ImportedCluster]
) -> list[DefinitionError]:
    """Where the state and the tfvars disagree on a cluster (counts, flavors, keypair,
    template, node groups): one error each, naming the tfvars line and the state address."""
    problems: list[DefinitionError] = []
    for cluster in clusters:
        found = state.clusters.get(cluster.name)
        if found is None:
            continue

        def differ(
            key: str,
            mine: object,
            resource: StateResource,
            attribute: str,
            cluster: ImportedCluster = cluster,
        ) -> None:
            theirs = resource.attributes.get(attribute)
            if isinstance(mine, int) and isinstance(theirs, float) and theirs.is_integer():
                theirs = int(theirs)
            if mine is not None and theirs is not None and mine != theirs:
                problems.append(
                    DefinitionError(
                        f"tfvars has {shown(mine, key)}, the state has {attribute} = "
                        f"{shown(theirs, attribute)} at "
                        f"{resource.where}",
                        where=cluster.where(key.split(".")[0].split("[")[0]),
                        field=key,
                    )
                )

        differ("node_count", cluster.node_count, found, "node_count")
        differ("master_count", cluster.master_count, found, "master_count")
        differ("flavor", cluster.flavor, found, "flavor")
        differ("master_flavor", cluster.master_flavor, found, "master_flavor")
        differ("keypair", cluster.keypair, found, "keypair")
        template = state.templates.get(str(found.attributes.get("cluster_template_id")))
        if template is not None:
            differ("cluster_template_name", cluster.template, template, "name")
        uuid = str(found.attributes["id"])
        for group in cluster.node_groups:
            resource = state.node_group(uuid, group.name)
            key = f"nodegroups_list[{group.name}]"
            if resource is None:
                problems.append(
                    DefinitionError(
                        f"node group {group.name!r} of cluster {found.address} is not in "
                        f"{found.source}",
                        where=cluster.where("nodegroups_list"),
                        field=key,
                    )
                )
                continue
            differ(f"{key}.node_count", group.node_count, resource, "node_count")
            differ(f"{key}.flavor_id", group.flavor, resource, "flavor_id")
    return problems


def template_uuids(
    state: TerraformState, clusters: Sequence[ImportedCluster], errors: list[DefinitionError]
) -> dict[str, dict[str, str]]:
    """Template name (from the tfvars) -> region -> Magnum id (the state's
    ``cluster_template_id`` of its clusters); ``""`` when no region is known. Two ids for
    one template in one region is an error."""
    found: dict[str, dict[str, str]] = {}
    first: dict[tuple[str, str], StateResource] = {}
    for cluster in clusters:
        resource = state.clusters.get(cluster.name)
        uuid = resource.text("cluster_template_id") if resource is not None else None
        if resource is None or uuid is None:
            continue
        region = cluster.connection.region or resource.text("region") or ""
        have = found.setdefault(cluster.template, {}).setdefault(region, uuid)
        earlier = first.setdefault((cluster.template, region), resource)
        if have != uuid:
            errors.append(
                DefinitionError(
                    f"template {cluster.template!r} is {have} at {earlier.where} but {uuid} at "
                    f"{resource.where} (region {region or 'unknown'})",
                    where=cluster.where("cluster_template_name"),
                    field="cluster_template_name",
                )
            )
    return found
