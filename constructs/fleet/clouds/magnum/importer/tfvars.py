"""Reads Terraform tfvars files of Magnum clusters (the seed's Figure 10) into a plain model:
one ``<community>/<cluster>/terraform.tfvars`` per cluster (the values are read and decoded
by :mod:`fleet.terraform.tfvars`)."""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fleet.clouds.magnum.cluster import MagnumCluster
from fleet.clouds.magnum.pool import NodeGroup
from fleet.clouds.magnum.resolved import AUTOSCALER_LABEL, BOUND_LABELS, autoscaler_on
from fleet.core.credentials import credential_paths, shown
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.options import Option
from fleet.core.validators import check_dns_label, check_dns_subdomain
from fleet.terraform.tfvars import (
    as_bool,
    as_int,
    as_labels,
    as_text,
    convert_option,
    importable,
    read_tfvars,
)

TFVARS_NAME = "terraform.tfvars"

CONNECTION_KEYS = (
    "project_name",
    "project_id",
    "auth_url",
    "region_name",
    "interface",
    "identity_api_version",
)
"""The OpenStack connection parameters: they become the project's ProviderConfig."""

CLUSTER_KEYS = (
    "cluster_name",
    "cluster_template_name",
    "create_timeout",
    "flavor",
    "keypair",
    "master_count",
    "master_flavor",
    "merge_labels",
    "node_count",
    "labels",
    "nodegroups_list",
)
"""The cluster parameters the model holds (ClusterV1 and its NodegroupV1s)."""

NODEGROUP_KEYS = (
    "name",
    "flavor_id",
    "node_count",
    "min_node_count",
    "max_node_count",
    "merge_labels",
    "labels",
)


def cluster_options() -> tuple[Option, ...]:
    """The optional ``openstack_containerinfra_cluster_v1`` arguments ClusterV1 renders,
    besides those the layout holds as its own keys (:data:`CLUSTER_KEYS`)."""
    return tuple(o for o in importable(MagnumCluster) if o.terraform not in CLUSTER_KEYS)


def node_group_options() -> tuple[Option, ...]:
    """The optional ``openstack_containerinfra_nodegroup_v1`` arguments NodegroupV1 renders."""
    return importable(NodeGroup)


@dataclass(frozen=True, kw_only=True)
class Connection:
    """How Crossplane reaches the cluster's OpenStack project (the tfvars' openrc part)."""

    project_name: str
    project_id: str | None = None
    auth_url: str | None = None
    region: str | None = None
    interface: str | None = None
    identity_api_version: str | None = None

    @property
    def provider_config_name(self) -> str:
        """The ProviderConfig's name: the project name as a DNS name (``jeedy-ais``)."""
        return re.sub(r"[^a-z0-9]+", "-", self.project_name.lower()).strip("-")


@dataclass(frozen=True, kw_only=True)
class ImportedNodeGroup:
    """One entry of ``nodegroups_list``, converted (counts are ints, ``merge_labels`` a bool)."""

    name: str
    flavor: str
    node_count: int
    min_node_count: int | None = None
    max_node_count: int | None = None
    merge_labels: bool | None = None
    labels: Mapping[str, str]
    options: Mapping[str, Any] = field(default_factory=dict)
    """The :func:`node_group_options` set, by keyword, converted."""


@dataclass(frozen=True, kw_only=True)
class Unmapped:
    """A tfvars value the model has no place for: listed in the import report."""

    source: str
    key: str
    value: Any

    def line(self) -> str:
        """``<file>: <key> = <value> (not modelled)``."""
        value = shown(self.value, self.key.split(".")[-1])
        return f"{self.source}: {self.key} = {value} has no place in the model"


@dataclass(frozen=True, kw_only=True)
class ImportedCluster:
    """One tfvars file: one Magnum cluster in one environment.

    ``values`` holds every top-level tfvars value, decoded but not converted: it is
    what ``--verify`` compares the rendered objects with.
    """

    source: str
    community: str
    name: str
    template: str
    flavor: str
    keypair: str
    node_count: int
    master_count: int | None
    master_flavor: str | None
    create_timeout_minutes: int | None
    merge_labels: bool | None
    labels: Mapping[str, str]
    node_groups: tuple[ImportedNodeGroup, ...]
    connection: Connection
    unmapped: tuple[Unmapped, ...]
    values: Mapping[str, Any]
    lines: Mapping[str, int]
    options: Mapping[str, Any] = field(default_factory=dict)
    """The :func:`cluster_options` set, by keyword, converted."""

    def where(self, key: str) -> str:
        """``file:line`` of ``key`` (just the file when the key is absent)."""
        line = self.lines.get(key)
        return f"{self.source}:{line}" if line else self.source


# --- files ------------------------------------------------------------------------------


def find_tfvars(paths: Sequence[Path]) -> list[tuple[Path, str]]:
    """``(file, community)`` for each PATH: a tfvars file, or a folder walked like the seed.

    A folder holds ``<community>/<cluster>/terraform.tfvars`` (or is one community's folder
    of ``<cluster>/terraform.tfvars``, or one cluster's); a file's community is the name of
    its grandparent folder. The result is sorted and without duplicates.
    """
    found: dict[Path, str] = {}
    for path in paths:
        if path.is_file():
            found[path] = path.resolve().parent.parent.name
        elif path.is_dir():
            files = sorted(path.glob(f"*/*/{TFVARS_NAME}"))
            if not files and (path / TFVARS_NAME).is_file():
                files = [path / TFVARS_NAME]
            elif not files:
                files = sorted(path.glob(f"*/{TFVARS_NAME}"))
            if not files:
                raise DefinitionError(
                    f"no <community>/<cluster>/{TFVARS_NAME} under this folder",
                    where=str(path),
                    field="PATH",
                )
            for file in files:
                found[file] = file.parent.parent.name
        else:
            raise DefinitionError("no such file or folder", where=str(path), field="PATH")
    return sorted(found.items())


def module_name(community: str, *, where: str) -> str:
    """The declaration module of a community: ``jeedy-ais`` -> ``jeedy_ais``."""
    name = community.lower().replace("-", "_").replace(".", "_")
    if (
        not name.isascii()
        or not name.isidentifier()
        or name.startswith("_")
        or keyword.iskeyword(name)
    ):
        raise DefinitionError(
            f"community folder {community!r} does not make a module name; use --out FILE",
            where=where,
            field="community",
        )
    return name


# --- HCL --------------------------------------------------------------------------------

# --- the model ----------------------------------------------------------------------------


def load_cluster(path: Path, *, community: str) -> ImportedCluster:
    """One tfvars file as an :class:`ImportedCluster`; all its problems in one raise."""
    source = str(path)
    values, lines = read_tfvars(path)
    errors: list[DefinitionError] = []

    def at(key: str) -> str:
        return f"{source}:{lines[key]}" if key in lines else source

    def get(key: str, convert: Any, **kwargs: Any) -> Any:
        if key not in values:
            return None
        try:
            return convert(values[key], where=at(key), field=key, **kwargs)
        except DefinitionError as e:
            errors.append(e)
            return None

    for key in (
        "cluster_name",
        "cluster_template_name",
        "project_name",
        "flavor",
        "keypair",
        "node_count",
    ):
        if key not in values:
            errors.append(DefinitionError(f"missing {key}", where=source, field=key))
    name = get("cluster_name", as_text)
    if name is not None:
        try:
            check_dns_label(name, where=at("cluster_name"), field="cluster_name")
        except DefinitionError as e:
            errors.append(e)
    template = get("cluster_template_name", as_text)
    connection_values = {key: get(key, as_text) for key in CONNECTION_KEYS}
    connection = None
    if connection_values["project_name"] is not None:
        connection = Connection(
            project_name=connection_values["project_name"],
            project_id=connection_values["project_id"],
            auth_url=connection_values["auth_url"],
            region=connection_values["region_name"],
            interface=connection_values["interface"],
            identity_api_version=connection_values["identity_api_version"],
        )
        try:
            check_dns_subdomain(
                connection.provider_config_name, where=at("project_name"), field="project_name"
            )
        except DefinitionError as e:
            errors.append(e)
    groups = _node_groups(values.get("nodegroups_list"), at("nodegroups_list"), source, errors)
    unmapped = [
        Unmapped(source=source, key=key, value=value)
        for key, value in values.items()
        if key not in CLUSTER_KEYS
        and key not in CONNECTION_KEYS
        and key not in {o.terraform for o in cluster_options()}
    ]
    unmapped.extend(groups[1])
    cluster = dict(
        flavor=get("flavor", as_text),
        keypair=get("keypair", as_text),
        node_count=get("node_count", as_int),
        master_count=get("master_count", as_int, minimum=1),
        master_flavor=get("master_flavor", as_text),
        create_timeout_minutes=get("create_timeout", as_int, minimum=1),
        merge_labels=get("merge_labels", as_bool),
        labels=get("labels", as_labels) or {},
        options={
            o.keyword: get(o.terraform, functools.partial(convert_option, o))
            for o in cluster_options()
            if o.terraform in values
        },
    )
    labels = cluster["labels"]
    if any(k in labels for k in BOUND_LABELS):
        bounds = autoscaler_bounds(labels)
        if bounds is None:
            errors.append(
                DefinitionError(bounds_refusal(labels), where=at("labels"), field="labels")
            )
        else:
            cluster["labels"] = {k: v for k, v in labels.items() if k not in BOUND_LABELS}
            cluster["options"] = {
                **cluster["options"],
                "min_node_count": bounds[0],
                "max_node_count": bounds[1],
            }
    # What the cluster writes holds no credential: refused at its tfvars line and field, never
    # at a generated line (the project's values: tfvars_modules.py, which knows if it writes them).
    cluster_keys = {*CLUSTER_KEYS, *(o.terraform for o in cluster_options())}
    errored = {e.field.split(".")[0] for e in errors}
    errors += [
        DefinitionError(
            f"holds credential material ({what}); the import writes nothing",
            where=at(place.split(".")[0]),
            field=place,
        )
        for place, what in credential_paths(
            {k: v for k, v in values.items() if k in cluster_keys and k not in errored}
        )
    ]
    if errors or name is None or template is None or connection is None:
        raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
    return ImportedCluster(
        source=source,
        community=community,
        name=name,
        template=template,
        node_groups=groups[0],
        connection=connection,
        unmapped=tuple(unmapped),
        values=values,
        lines=lines,
        **cluster,
    )


def autoscaler_bounds(labels: Mapping[str, str]) -> tuple[int, int] | None:
    """``(min, max)`` of a cluster's ``min_node_count`` and ``max_node_count`` labels, where
    ``MagnumCluster(min_node_count=, max_node_count=)`` writes them back byte for byte: both
    given, whole numbers written plainly, the autoscaler on in the same labels. None
    otherwise."""
    low, high = (labels.get(k) for k in BOUND_LABELS)
    switch = labels.get(AUTOSCALER_LABEL)
    if low is None or high is None or switch is None or not autoscaler_on(switch):
        return None
    if not all(v.isdigit() and str(int(v)) == v for v in (low, high)):
        return None
    return int(low), int(high)


def bounds_refusal(labels: Mapping[str, str]) -> str:
    """Why a cluster whose labels hold autoscaler bounds :func:`autoscaler_bounds` cannot
    read is not declared (no value is a secret here: counts and a switch)."""
    held = ", ".join(f"{k}={shown(labels[k], k)}" for k in BOUND_LABELS if k in labels)
    switch = labels.get(AUTOSCALER_LABEL)
    return (
        f"holds {held} with {AUTOSCALER_LABEL}="
        f"{'(none)' if switch is None else shown(switch, AUTOSCALER_LABEL)}: MagnumCluster "
        "writes these labels only from min_node_count and max_node_count, both whole numbers, "
        "with the autoscaler on, so it cannot declare this cluster as Magnum holds it (its "
        "labels are ForceNew)"
    )


def _node_groups(
    value: Any, where: str, source: str, errors: list[DefinitionError]
) -> tuple[tuple[ImportedNodeGroup, ...], list[Unmapped]]:
    if value is None:
        return (), []
    if not isinstance(value, list):
        errors.append(
            DefinitionError(
                f"must be a list, got {shown(value)}", where=where, field="nodegroups_list"
            )
        )
        return (), []
    groups: list[ImportedNodeGroup] = []
    unmapped: list[Unmapped] = []
    seen: set[str] = set()
    for index, item in enumerate(value):
        prefix = f"nodegroups_list[{index}]"
        if not isinstance(item, dict):
            errors.append(
                DefinitionError(f"must be an object, got {shown(item)}", where=where, field=prefix)
            )
            continue
        try:
            group = _node_group(item, where=where, prefix=prefix)
        except DefinitionError as e:
            errors.append(e)
            continue
        if group.name in seen:
            errors.append(
                DefinitionError(f"duplicate node group {group.name!r}", where=where, field=prefix)
            )
        seen.add(group.name)
        groups.append(group)
        unmapped.extend(
            Unmapped(source=source, key=f"nodegroups_list[{group.name}].{k}", value=v)
            for k, v in item.items()
            if k not in NODEGROUP_KEYS and k not in {o.terraform for o in node_group_options()}
        )
    return tuple(groups), unmapped


def _node_group(item: dict[str, Any], *, where: str, prefix: str) -> ImportedNodeGroup:
    for key in ("name", "flavor_id", "node_count"):
        if key not in item:
            raise DefinitionError(f"missing {key}", where=where, field=prefix)
    name = as_text(item["name"], where=where, field=f"{prefix}.name")
    check_dns_label(name, where=where, field=f"{prefix}.name")
    field = f"nodegroups_list[{name}]"

    def count(key: str) -> int | None:
        if key not in item:
            return None
        return as_int(item[key], where=where, field=f"{field}.{key}")

    node_count = as_int(item["node_count"], where=where, field=f"{field}.node_count")
    low, high = count("min_node_count"), count("max_node_count")
    if (low is not None and node_count < low) or (high is not None and node_count > high):
        raise DefinitionError(
            f"node_count {node_count} is outside [{low}, {high}]", where=where, field=field
        )
    return ImportedNodeGroup(
        name=name,
        flavor=as_text(item["flavor_id"], where=where, field=f"{field}.flavor_id"),
        node_count=node_count,
        min_node_count=low,
        max_node_count=high,
        merge_labels=as_bool(item["merge_labels"], where=where, field=f"{field}.merge_labels")
        if "merge_labels" in item
        else None,
        labels=as_labels(item.get("labels", {}), where=where, field=f"{field}.labels"),
        options={
            o.keyword: convert_option(
                o, item[o.terraform], where=where, field=f"{field}.{o.terraform}"
            )
            for o in node_group_options()
            if o.terraform in item
        },
    )


def load_clusters(files: Iterable[tuple[Path, str]]) -> list[ImportedCluster]:
    """Every file as a cluster; problems of all files raised together; names unique."""
    clusters: list[ImportedCluster] = []
    errors: list[DefinitionError] = []
    by_name: dict[str, ImportedCluster] = {}
    for path, community in files:
        try:
            cluster = load_cluster(path, community=community)
        except DefinitionErrors as e:
            errors.extend(e.errors)
            continue
        except DefinitionError as e:
            errors.append(e)
            continue
        first = by_name.get(cluster.name)
        if first is not None:
            errors.append(
                DefinitionError(
                    f"cluster {cluster.name!r} is also declared in {first.source}",
                    where=cluster.where("cluster_name"),
                    field="cluster_name",
                )
            )
            continue
        by_name[cluster.name] = cluster
        clusters.append(cluster)
    if errors:
        raise DefinitionErrors(errors)
    return clusters
