"""The Magnum resources of Terraform state (read by :mod:`fleet.terraform.state`), and the
tfvars import's view of them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fleet.clouds.magnum.importer.resources import CLUSTER, NODEGROUP, TEMPLATE, Tables, specs
from fleet.clouds.magnum.importer.tfvars import ImportedCluster
from fleet.core.credentials import shown
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.terraform.state import ResourceSchema, StateFile, StateResource
from fleet.terraform.state import read_state_file as read_resources

SCHEMAS: Mapping[str, ResourceSchema] = {
    kind: spec.schema() for kind, spec in specs(Tables()).items()
}
"""The types of the attributes read (:mod:`fleet.clouds.magnum.importer.resources`)."""


def read_state_file(path: Path, *, environment: str | None = None) -> StateFile:
    """The Magnum resources of one state file (:func:`fleet.terraform.state.read_state_file`)."""
    return read_resources(path, SCHEMAS, environment=environment)


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
