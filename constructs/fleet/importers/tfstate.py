"""Reads the Magnum resources of Terraform state: the UUIDs that tfvars files do not hold.

Two formats: a state file (``terraform.tfstate``, format version 4:
``resources[].instances[].attributes``) and ``terraform show -json`` output
(``values.root_module.resources[].values``, nested ``child_modules``). Only
``openstack_containerinfra_{cluster,nodegroup,clustertemplate}_v1`` are read (managed
resources and data sources); the rest of the state is ignored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.importers.tfvars import ImportedCluster

CLUSTER = "openstack_containerinfra_cluster_v1"
NODEGROUP = "openstack_containerinfra_nodegroup_v1"
TEMPLATE = "openstack_containerinfra_clustertemplate_v1"


@dataclass(frozen=True, kw_only=True)
class StateResource:
    """One Magnum resource instance of the state: where it is, and its attributes."""

    source: str
    address: str
    type: str
    attributes: Mapping[str, Any]

    @property
    def where(self) -> str:
        """``<state file> <resource address>``, for messages."""
        return f"{self.source} {self.address}"

    def text(self, key: str) -> str | None:
        """A string attribute, None when absent or empty."""
        value = self.attributes.get(key)
        return str(value) if value not in (None, "") else None


@dataclass(frozen=True, kw_only=True)
class TerraformState:
    """The Magnum clusters (by name), node groups and templates of one or more states."""

    clusters: Mapping[str, StateResource]
    node_groups: Mapping[tuple[str, str], StateResource]
    """By (cluster UUID, node group name)."""
    templates: Mapping[str, StateResource]
    """By template UUID."""

    def node_group(self, cluster_id: str, name: str) -> StateResource | None:
        """The node group ``name`` of the cluster with UUID ``cluster_id``."""
        return self.node_groups.get((cluster_id, name))


def load_state(paths: Sequence[Path]) -> TerraformState:
    """Every Magnum resource of the given states; an error for an unreadable file, another
    format, or one cluster name or template id held twice (naming both addresses)."""
    clusters: dict[str, StateResource] = {}
    groups: dict[tuple[str, str], StateResource] = {}
    templates: dict[str, StateResource] = {}
    errors: list[DefinitionError] = []
    for path in paths:
        try:
            resources = list(_resources(path))
        except DefinitionError as e:
            errors.append(e)
            continue
        for resource in resources:
            attrs = resource.attributes
            if resource.type == CLUSTER:
                name, uuid = resource.text("name"), resource.text("id")
                if name is None or uuid is None:
                    errors.append(_bad(resource, "a cluster without name or id"))
                    continue
                first = clusters.setdefault(name, resource)
                if first is not resource:
                    errors.append(_bad(resource, f"cluster {name!r} is also {first.where}"))
            elif resource.type == NODEGROUP:
                cluster_id, name = resource.text("cluster_id"), resource.text("name")
                if cluster_id is None or name is None or resource.text("id") is None:
                    errors.append(_bad(resource, "a node group without cluster_id, name or id"))
                    continue
                groups[(cluster_id, name)] = resource
            elif resource.type == TEMPLATE and isinstance(attrs.get("id"), str):
                templates.setdefault(str(attrs["id"]), resource)
    if errors:
        raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
    return TerraformState(clusters=clusters, node_groups=groups, templates=templates)


def _bad(resource: StateResource, message: str) -> DefinitionError:
    return DefinitionError(f"{resource.address}: {message}", where=resource.source)


def _resources(path: Path) -> Iterator[StateResource]:
    source = str(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise DefinitionError(f"cannot read: {e}", where=source) from None
    except json.JSONDecodeError as e:
        raise DefinitionError(f"not JSON: {e.msg}", where=f"{source}:{e.lineno}") from None
    if not isinstance(document, dict):
        raise DefinitionError("not a Terraform state", where=source)
    values = document.get("values")
    if isinstance(values, dict) and isinstance(values.get("root_module"), dict):
        yield from _shown(source, values["root_module"])
    elif isinstance(document.get("resources"), list):
        if document.get("version") != 4:
            raise DefinitionError(
                f"state format version {document.get('version')!r}; this reads version 4 "
                "(or `terraform show -json` output)",
                where=source,
                field="version",
            )
        yield from _v4(source, document["resources"])
    else:
        raise DefinitionError(
            "neither a Terraform state (resources[]) nor `terraform show -json` output "
            "(values.root_module)",
            where=source,
        )


_TYPES = (CLUSTER, NODEGROUP, TEMPLATE)


def _v4(source: str, resources: list[Any]) -> Iterator[StateResource]:
    for resource in resources:
        if not isinstance(resource, dict) or resource.get("type") not in _TYPES:
            continue
        base = ".".join(
            part
            for part in (
                resource.get("module"),
                "data" if resource.get("mode") == "data" else None,
                f"{resource['type']}.{resource.get('name')}",
            )
            if part
        )
        for instance in resource.get("instances") or []:
            if not isinstance(instance, dict) or not isinstance(instance.get("attributes"), dict):
                continue
            key = instance.get("index_key")
            index = "" if key is None else f"[{json.dumps(key)}]"
            yield StateResource(
                source=source,
                address=base + index,
                type=resource["type"],
                attributes=instance["attributes"],
            )


def _shown(source: str, module: Mapping[str, Any]) -> Iterator[StateResource]:
    for resource in module.get("resources") or []:
        if not isinstance(resource, dict) or resource.get("type") not in _TYPES:
            continue
        if isinstance(resource.get("values"), dict):
            yield StateResource(
                source=source,
                address=str(resource.get("address")),
                type=resource["type"],
                attributes=resource["values"],
            )
    for child in module.get("child_modules") or []:
        if isinstance(child, dict):
            yield from _shown(source, child)


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
                        f"tfvars has {mine!r}, the state has {attribute} = {theirs!r} at "
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
