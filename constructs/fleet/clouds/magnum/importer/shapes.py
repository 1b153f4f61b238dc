"""What a Terraform input is, when it is not the one-cluster-per-file tfvars layout.

``fleet import tfvars`` reads one layout: a folder of ``<community>/<cluster>/terraform.tfvars``
files, each one cluster's values. Real configurations are written otherwise (a map of
clusters iterated with ``for_each``, a module that wraps the cluster, per-datacenter maps
selected by a variable, a ``count`` switch, a template found by a data source, literal
values and no tfvars at all). Whatever HCL made them, their state holds evaluated values:
each refusal here names the shape it saw, where (``file:line``), and the state import
that reads it. Values from the input are never quoted, only names, counts and keys.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fleet.clouds.magnum.importer.resources import CLUSTER, NODEGROUP, TEMPLATE
from fleet.clouds.magnum.importer.tfvars import TFVARS_NAME
from fleet.core.errors import DefinitionError
from fleet.core.words import plural
from fleet.terraform.hcl import Block, Configuration, read_configuration
from fleet.terraform.tfvars import read_tfvars

_VAR = re.compile(r"\bvar\.([A-Za-z_][A-Za-z0-9_-]*)")
_SELECTED = re.compile(r"\bvar\.([A-Za-z_][A-Za-z0-9_-]*)\[var\.([A-Za-z_][A-Za-z0-9_-]*)\]")
_DATA_TEMPLATE = re.compile(rf"\bdata\.{TEMPLATE}\.([A-Za-z_][A-Za-z0-9_-]*)\b")
_SWITCH = re.compile(r"^(?:[01]|true|false)$")
_NOUN = {CLUSTER: "cluster", NODEGROUP: "node group"}
_SEARCH_UP = 3
"""How many folders above a tfvars file are searched for the configuration that uses it."""


def _way_out(*, source: Path | None, shown_json: bool = True) -> str:
    pull = (
        "terraform show -json > state.json"
        if shown_json
        else "terraform state pull > state.tfstate"
    )
    state = "state.json" if shown_json else "state.tfstate"
    hint = (
        f" (with `--source {source}`: what it leaves to the template stays unset)" if source else ""
    )
    return f"import the state instead: `{pull} && fleet import tfstate {state}`{hint}"


def describe(paths: Sequence[Path]) -> list[DefinitionError]:
    """One refusal per PATH that is a Terraform configuration or one of its tfvars files
    rather than the tfvars layout (none for a path this module does not recognise)."""
    found: list[DefinitionError] = []
    for path in paths:
        error = describe_file(path) if path.is_file() else describe_folder(path)
        if error is not None:
            found.append(error)
    return found


def _configuration_of(path: Path) -> Configuration | None:
    folder = path if path.is_dir() else path.parent
    for _ in range(_SEARCH_UP + 1):
        if any(folder.glob("*.tf")):
            try:
                return read_configuration(folder)
            except DefinitionError:
                return None
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def _magnum_blocks(configuration: Configuration) -> list[tuple[tuple[str, ...], Block]]:
    return [
        (path, block)
        for path, folder in sorted(configuration.modules.items())
        for block in folder.of_kind("resource")
        if block.labels[:1] in ((CLUSTER,), (NODEGROUP,))
    ]


def _variables(block: Block, argument: str) -> list[str]:
    return _VAR.findall(str(block.arguments.get(argument, "")))


def describe_file(path: Path) -> DefinitionError | None:
    """A tfvars file that sets the variables of a configuration: what its values are to
    the Magnum resources (a map iterated by ``for_each``, a ``count`` switch)."""
    configuration = _configuration_of(path)
    if configuration is None:
        return None
    try:
        values, lines = read_tfvars(path)
    except DefinitionError:
        values, lines = {}, {}
    blocks = _magnum_blocks(configuration)
    for module_path, block in blocks:
        for variable in _variables(block, "for_each"):
            value = values.get(variable)
            if module_path or not isinstance(value, dict):
                continue
            noun = _NOUN[block.labels[0]]
            layout = "a for_each layout" + ("" if noun == "cluster" else f" in {block.file.name}")
            return DefinitionError(
                f"variable `{variable}` is a map of {plural(len(value), noun)} ({layout}): "
                f"{_way_out(source=configuration.root)}",
                where=f"{path}:{lines.get(variable, 1)}",
            )
    for module_path, block in blocks:
        for variable in _variables(block, "count"):
            value = values.get(variable)
            if module_path or variable not in values:
                continue
            shown = f' = "{value}"' if _SWITCH.match(str(value).lower()) else ""
            return DefinitionError(
                f"{variable}{shown} is a count switch ({block.file.name}: count = "
                f"var.{variable}), not a cluster: {_way_out(source=configuration.root)}",
                where=f"{path}:{lines.get(variable, 1)}",
            )
    used = sorted(
        {v for _, b in blocks for a in b.arguments for v in _variables(b, a)} & set(values)
    )
    if used and "cluster_name" not in values:
        return DefinitionError(
            f"sets variables ({', '.join(used[:4])}{', ...' if len(used) > 4 else ''}) of the "
            f"Terraform configuration in {configuration.root}, not one cluster's values: "
            f"{_way_out(source=configuration.root)}",
            where=f"{path}:{min(lines.get(v, 1) for v in used)}",
        )
    return None


def describe_folder(path: Path) -> DefinitionError | None:
    """A folder of ``.tf`` files: how its clusters are declared."""
    if not path.is_dir() or any(path.glob(f"*/*/{TFVARS_NAME}")):
        return None
    if not any(path.glob("*.tf")):
        return _describe_parent(path)
    configuration = _configuration_of(path)
    if configuration is None:
        return None
    root = configuration.modules[()]
    blocks = _magnum_blocks(configuration)
    clusters = [(p, b) for p, b in blocks if b.labels[0] == CLUSTER]
    way_out = _way_out(source=path, shown_json=False)
    for call in root.of_kind("module"):
        if any(p[:1] == (call.name,) for p, _ in clusters):
            source = str(call.arguments.get("source", "")).strip('"')
            return DefinitionError(
                f"module `{call.name}` (source {source}) declares the cluster: {way_out}",
                where=call.where,
            )
    if any(p[:1] in configuration.unread for p, _ in clusters) or (
        not clusters and configuration.unread
    ):
        call = next(root.of_kind("module"))
        return DefinitionError(
            f"module `{call.name}` comes from {configuration.unread[(call.name,)]}: {way_out}",
            where=call.where,
        )
    for _, block in clusters:
        if "for_each" in block.arguments or "count" in block.arguments:
            meta = "for_each" if "for_each" in block.arguments else "count"
            return DefinitionError(
                f"resource {CLUSTER} `{block.name}` is repeated with {meta}: {way_out}",
                where=block.at(meta),
            )
    for _, block in clusters:
        for argument in block.arguments:
            selected = _SELECTED.search(str(block.arguments[argument]))
            if selected is None:
                continue
            variable, key = selected.groups()
            declared = root.find("variable", variable)
            keys = _map_keys(declared.arguments.get("default")) if declared else []
            shown = f" ({', '.join(keys)})" if keys else ""
            return DefinitionError(
                f"variable `{variable}` is a map keyed by {key}{shown} selected by var.{key}, "
                f"one state per {key}: import each state instead, with its environment: "
                f"`terraform state pull > {keys[0] if keys else key}.tfstate && fleet import "
                f"tfstate --state ENV={keys[0] if keys else key}.tfstate --source {path}`",
                where=declared.where if declared else block.at(argument),
            )
    for _, block in clusters:
        data = _DATA_TEMPLATE.search(str(block.arguments.get("cluster_template_id", "")))
        if data is None:
            continue
        lookup = root.find("data", TEMPLATE, data.group(1))
        name = str(lookup.arguments.get("name", "")) if lookup else ""
        shown = f" (template name {name})" if name.startswith('"') else ""
        return DefinitionError(
            f"resource {CLUSTER} `{block.name}` takes its template from data source "
            f"`{data.group(1)}`{shown}, whose UUID only the state holds: {way_out}",
            where=block.where,
        )
    if clusters:
        block = clusters[0][1]
        return DefinitionError(
            f"the cluster is a resource with its values in the configuration and no "
            f"<community>/<cluster>/{TFVARS_NAME}: {way_out}",
            where=block.where,
        )
    return None


def _describe_parent(path: Path) -> DefinitionError | None:
    """A folder without ``.tf`` files: of tfvars files that set a configuration's
    variables, or of Terraform configurations (one per environment or datacenter, up to
    :data:`_SEARCH_UP` folders below) that declare Magnum clusters."""
    for file in sorted(path.glob("*.tfvars")):
        error = describe_file(file)
        if error is not None:
            return error
    folders = sorted(
        {f.parent for depth in range(1, _SEARCH_UP + 1) for f in path.glob("*/" * depth + "*.tf")}
    )
    found: list[Path] = []
    called: set[Path] = set()
    for folder in folders:
        try:
            configuration = read_configuration(folder)
        except DefinitionError:
            continue
        called.update(m.path.resolve() for k, m in configuration.modules.items() if k)
        if any(b.labels[0] == CLUSTER for _, b in _magnum_blocks(configuration)):
            found.append(folder)
    found = [f for f in found if f.resolve() not in called]  # a module, not a root
    if not found:
        return None
    names = ", ".join(str(f.relative_to(path)) for f in found[:4]) + (
        ", ..." if len(found) > 4 else ""
    )
    first = found[0]
    return DefinitionError(
        f"holds {plural(len(found), 'Terraform configuration')} of Magnum clusters ({names}), "
        f"not <community>/<cluster>/{TFVARS_NAME}: import "
        f"{'its state' if len(found) == 1 else 'the state of each'} instead, with its "
        f"environment: `terraform state pull > {first.name}.tfstate && fleet import tfstate "
        f"--state ENV={first.name}.tfstate --source {first}`",
        where=str(path),
    )


def _map_keys(value: Any) -> list[str]:
    return sorted(str(k) for k in value) if isinstance(value, dict) else []
