"""The Magnum objects of Terraform states, and what each of their values is.

Pure data in, pure data out: state files (:mod:`fleet.terraform.state`) and, when given,
the Terraform configuration (:mod:`fleet.terraform.hcl`) become templates, clusters and
node groups whose every attribute is *carried* (declared), *inherited* (Magnum copied it
from the template or the cluster: left out, as the Terraform source leaves it out),
*computed* (Magnum's or the provider's: never declared), *create-only* (under
``lifecycle { ignore_changes }``), or *unset*, with the rule that decided. Which attribute
is which comes from the option tables (:mod:`fleet.clouds.magnum.importer.resources`,
decided by :mod:`fleet.terraform.attributes`); this module decides in code only the
labels (merged with the parent's or not), the node count (an autoscaler's, or not) and
what identifies an object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fleet.clouds.importer import environment_of
from fleet.clouds.magnum.importer.model import (
    ImportedGroup,
    ImportedTemplate,
    StateCluster,
    StateImport,
    kubernetes_version,
    magnum_labels,
    own_labels,
)
from fleet.clouds.magnum.importer.resources import CLOUD, CLUSTER, NODEGROUP, TEMPLATE
from fleet.clouds.magnum.resolved import AUTOSCALER_LABEL, autoscaler_on
from fleet.clouds.magnum.template import ClusterTemplate
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.options import Option
from fleet.terraform.attributes import (
    AUTOSCALED,
    CARRIED,
    CREATE_ONLY,
    INHERITED,
    UNSET,
    Parent,
    ResourceSpec,
    Value,
    decide_default,
    empty,
)
from fleet.terraform.hcl import ALL, Block, Configuration, resource_block
from fleet.terraform.state import StateFile, StateResource

# --- templates ---------------------------------------------------------------------------------


def _template(
    resource: StateResource, coe_versions: Sequence[str], spec: ResourceSpec
) -> ImportedTemplate:
    attrs = resource.attributes
    labels = {str(k): str(v) for k, v in (attrs.get("labels") or {}).items()}
    name = resource.text("name") or ""
    read = set(spec.options()) - {"name", "labels"}
    values = {k: v for k, v in sorted(attrs.items()) if k in read and not empty(v)}
    version = kubernetes_version(labels, str(attrs.get("image") or ""), name, coe_versions)
    if version is None:
        raise DefinitionError(
            f"{resource.address}: cannot tell template {name!r}'s Kubernetes version: no "
            "kube_tag label, no coe_version on its clusters, no version in its image or name",
            where=resource.source,
            field="labels",
        )
    return ImportedTemplate(
        uuid=str(attrs["id"]),
        magnum_name=name,
        known_from="data-source" if resource.mode == "data" else "resource",
        where=resource.where,
        labels=labels,
        values=values,
        kubernetes_version=version,
        sensitive=resource.sensitive,
        project_id=str(attrs.get("project_id") or ""),
        region=str(attrs.get("region") or ""),
        public=attrs.get("public") is True,
    )


def declared_template(uuid: str, template: ClusterTemplate) -> ImportedTemplate:
    """A template the states do not hold, as the fleet declares it (a re-import: what an
    earlier import wrote, or a person): its declared attributes decide what a cluster
    inherits."""
    return ImportedTemplate(
        uuid=uuid,
        magnum_name=template.name,
        known_from="fleet",
        where=template.where,
        labels=dict(template.base_labels),
        values=template.magnum_attributes(),
        kubernetes_version=template.kubernetes_version,
    )


def _unknown_template(uuid: str, cluster: StateResource) -> ImportedTemplate:
    version = kubernetes_version({}, "", "", [cluster.text("coe_version") or ""])
    if version is None:
        raise DefinitionError(
            f"{cluster.address}: its template {uuid} is not in the state and its coe_version "
            "gives no Kubernetes version: import the state that holds the template, or a "
            'data "openstack_containerinfra_clustertemplate_v1" that finds it',
            where=cluster.source,
            field="cluster_template_id",
        )
    return ImportedTemplate(
        uuid=uuid,
        magnum_name=f"template-{uuid[:8]}",
        known_from="uuid",
        where=f"{cluster.where} cluster_template_id",
        labels={},
        values={},
        kubernetes_version=version,
    )


# --- decisions ---------------------------------------------------------------------------------


CREATE_TIMEOUT_UNSET = (
    "0: not set (terraform-provider-openstack v1.23.0 sends create_timeout only when > 0 and "
    "stores what Magnum returns; Magnum's default, 60 minutes, applies)"
)
"""Why a state's ``create_timeout: 0`` is no value (terraform-provider-openstack v1.23.0
``resource_openstack_containerinfra_cluster_v1.go`` ``resourceContainerInfraClusterV1Create``:
``if createTimeout > 0 { createOpts.CreateTimeout = &createTimeout }``)."""


def _create_timeout(
    option: Option, value: Any, block: Block | None, ignored: Sequence[str]
) -> Value:
    """``create_timeout``: 0 is "not set", as old providers stored it; any other value is
    decided as the option table says (Magnum's default when 60), and one Magnum refuses
    (below 0; terraform-provider-openstack v3.4.0 passes any int through) is the fleet's
    to refuse, at the state's address."""
    if isinstance(value, int) and not isinstance(value, bool) and value == 0:
        # Create-only: rendered in spec.initProvider (never sent for an adopted cluster, its
        # differences dropped by upjet), so the ForceNew 0 Magnum holds is never "changed".
        return Value(
            attribute=option.terraform, value=None, fate=CREATE_ONLY, rule=CREATE_TIMEOUT_UNSET
        )
    return decide_default(
        option.terraform,
        value,
        block=block,
        default=option.cloud_default,
        ignored=ignored,
        cloud=CLOUD,
    )


def _node_count(value: Any, ignored: Sequence[str], autoscaled: bool, why: str) -> Value:
    """``node_count``: Default 1 and not Computed, so always declared; only the size at
    creation under ``ignore_changes``, or where something else resizes the pool (the
    fleet renders it in ``spec.initProvider`` then, and never enforces it)."""
    if value is None:
        return Value(attribute="node_count", value=value, fate=UNSET, rule="not in the state")
    if "node_count" in ignored:
        return Value(
            attribute="node_count",
            value=value,
            fate=CREATE_ONLY,
            rule="lifecycle ignore_changes",
        )
    if autoscaled:
        return Value(
            attribute="node_count",
            value=value,
            fate=AUTOSCALED,
            rule=f"{why}: the size at creation, then the autoscaler's",
        )
    return Value(attribute="node_count", value=value, fate=CARRIED, rule="Default 1, not Computed")


def _ignored(block: Block | None) -> tuple[str, ...]:
    return block.ignore_changes if block is not None else ()


def _labels_value(
    labels: Mapping[str, str], why: str, ignored: Sequence[str], create_only: bool
) -> Value:
    fate = (
        (CREATE_ONLY if create_only and "labels" in ignored else CARRIED) if labels else INHERITED
    )
    return Value(attribute="labels", value=labels, fate=fate, rule=why)


def _merge(attrs: Mapping[str, Any]) -> bool | None:
    merge = attrs.get("merge_labels")
    return merge if isinstance(merge, bool) else None


def _state_labels(attrs: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in (attrs.get("labels") or {}).items()}


def _group(
    resource: StateResource,
    cluster: StateResource,
    cluster_labels: Mapping[str, str],
    template: ImportedTemplate,
    block: Block | None,
    spec: ResourceSpec,
) -> ImportedGroup:
    attrs = resource.attributes
    ignored = _ignored(block)
    merge = _merge(attrs)
    labels, why = own_labels(
        _state_labels(attrs), merge, block=block, parent=cluster_labels, parent_known=True
    )

    def node_count(option: Option, value: Any) -> Value:
        bounded = any(not empty(attrs.get(k)) for k in ("min_node_count", "max_node_count"))
        return _node_count(value, ignored, bounded, "its bounds")

    def max_node_count(option: Option, value: Any) -> Value:
        if empty(value):
            return Value(
                attribute=option.terraform, value=None, fate=UNSET, rule="0: no upper limit"
            )
        return decide_default(
            option.terraform, value, block=block, default=None, ignored=ignored, cloud=CLOUD
        )

    values = spec.values(
        resource,
        block=block,
        parents={
            "cluster": Parent(noun="cluster", values=cluster.attributes),
            "template": Parent(noun="template", values=template.values, known=template.knows),
        },
        cloud=CLOUD,
        own={
            "name": lambda option, value: None,
            "node_count": node_count,
            "max_node_count": max_node_count,
            "labels": lambda option, value: _labels_value(labels, why, ignored, False),
            "merge_labels": lambda option, value: None,
        },
    )
    return ImportedGroup(
        resource=resource,
        magnum_name=resource.text("name") or "",
        external_name=str(attrs["id"]),
        values=values,
        labels=labels,
        merge_labels=merge,
        block=block,
    )


def _cluster(
    resource: StateResource,
    state: StateFile,
    template: ImportedTemplate,
    groups: Sequence[StateResource],
    configuration: Configuration | None,
    environment: tuple[str, str],
    specs: Mapping[str, ResourceSpec],
) -> StateCluster:
    attrs = resource.attributes
    block, notes = _block_of(resource, configuration)
    ignored = _ignored(block)
    merge = _merge(attrs)
    state_labels = _state_labels(attrs)
    switch = magnum_labels(state_labels, template.labels, attrs.get("merge_labels") is True).get(
        AUTOSCALER_LABEL
    )
    autoscaled = switch is not None and autoscaler_on(switch)
    labels, why = own_labels(
        state_labels,
        merge,
        block=block,
        parent=template.labels,
        parent_known=template.knows("labels"),
    )
    values = specs[CLUSTER].values(
        resource,
        block=block,
        parents={"template": Parent(noun="template", values=template.values, known=template.knows)},
        cloud=CLOUD,
        own={
            "cluster_template_id": lambda option, value: None,
            "node_count": lambda option, value: _node_count(
                value, ignored, autoscaled, f"{AUTOSCALER_LABEL}={switch}"
            ),
            "labels": lambda option, value: _labels_value(labels, why, ignored, True),
            "merge_labels": lambda option, value: None,
            "create_timeout": lambda option, value: _create_timeout(option, value, block, ignored),
        },
    )
    all_labels = magnum_labels(state_labels, template.labels, merge)
    uuid = str(attrs["id"])
    imported_groups = []
    for group in groups:
        group_block, group_notes = _block_of(group, configuration)
        notes.extend(group_notes)
        imported_groups.append(
            _group(group, resource, all_labels, template, group_block, specs[NODEGROUP])
        )
    if ALL in ignored:
        notes.append(
            "ignore_changes = all: nothing may be enforced; declared with "
            "management_policies=['Observe']"
        )
    return StateCluster(
        resource=resource,
        state=state,
        environment=environment[0],
        environment_rule=environment[1],
        magnum_name=str(attrs.get("name")),
        uuid=uuid,
        template=template,
        values=values,
        labels=labels,
        magnum_labels=all_labels,
        merge_labels=merge,
        node_groups=tuple(imported_groups),
        project_id=str(attrs.get("project_id") or ""),
        region=str(attrs.get("region") or ""),
        block=block,
        notes=tuple(notes),
    )


def _block_of(
    resource: StateResource, configuration: Configuration | None
) -> tuple[Block | None, list[str]]:
    if configuration is None:
        return None, []
    block = resource_block(configuration, resource)
    if block is not None:
        return block, []
    why = configuration.why_missing(resource.module_path, resource.block)
    return None, [f"{resource.address}: {why}: its values are compared with its parent's"]


# --- the whole input ---------------------------------------------------------------------------


def read_import(
    files: Sequence[StateFile],
    config: FleetConfig,
    specs: Mapping[str, ResourceSpec],
    *,
    environment: str | None,
    configurations: Mapping[str, Configuration] | None = None,
    declared: Mapping[str, ClusterTemplate] | None = None,
) -> StateImport:
    """Every template and cluster of ``files``; ``configurations`` maps a state's source to
    the Terraform configuration that wrote it (``--source``); ``declared`` (UUID -> template)
    the templates the fleet declares, for clusters whose template the states do not hold.
    All problems in one raise."""
    errors: list[DefinitionError] = []
    templates: dict[str, ImportedTemplate] = {}
    coe: dict[str, list[str]] = {}
    for resource in (r for f in files for r in f.resources):
        if resource.type == CLUSTER and resource.mode == "managed":
            coe.setdefault(resource.text("cluster_template_id") or "", []).append(
                resource.text("coe_version") or ""
            )
    for resource in (r for f in files for r in f.resources):
        if resource.type != TEMPLATE or resource.text("id") is None:
            continue
        uuid = str(resource.attributes["id"])
        if uuid in templates and templates[uuid].known_from == "resource":
            continue
        try:
            templates[uuid] = _template(resource, coe.get(uuid, []), specs[TEMPLATE])
        except DefinitionError as e:
            errors.append(e)
    clusters: list[StateCluster] = []
    ignored: list[str] = []
    for state in files:
        groups: dict[str, list[StateResource]] = {}
        for resource in state.resources:
            if resource.type == NODEGROUP and resource.mode == "managed":
                groups.setdefault(resource.text("cluster_id") or "", []).append(resource)
        configuration = (configurations or {}).get(state.source)
        for resource in state.resources:
            if resource.type != CLUSTER or resource.mode != "managed":
                continue
            try:
                clusters.append(
                    _read_cluster(
                        resource,
                        state,
                        templates,
                        groups,
                        configuration,
                        config,
                        environment,
                        declared or {},
                        specs,
                    )
                )
            except DefinitionError as e:
                errors.append(e)
        held = {r.text("id") for r in state.resources if r.type == CLUSTER and r.mode == "managed"}
        for cluster_id, orphans in sorted(groups.items()):
            # A node group of a cluster that failed is not an orphan: its error says enough.
            if cluster_id not in held:
                errors.extend(
                    DefinitionError(
                        f"node group of cluster {cluster_id or '(none)'}, which this state "
                        "does not hold: import the state of its cluster too",
                        where=g.where,
                    )
                    for g in orphans
                )
        if state.others:
            ignored.append(
                f"{state.source}: {len(state.others)} other resource(s) not read "
                f"({', '.join(state.others[:3])}{', ...' if len(state.others) > 3 else ''})"
            )
    seen: dict[str, StateCluster] = {}
    for cluster in clusters:
        first = seen.setdefault(cluster.uuid, cluster)
        if first is not cluster:
            errors.append(
                DefinitionError(
                    f"cluster {cluster.uuid} is also {first.where}: pass each state once",
                    where=cluster.where,
                )
            )
    if not clusters and not errors:
        others = [a for f in files for a in f.others]
        listed = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        errors.append(
            DefinitionError(
                f"no {CLUSTER}"
                + ("" if len(files) == 1 else f" in {', '.join(f.source for f in files)}")
                + f": nothing to import (other resources: {len(others)}"
                + (f", {listed})" if others else ")"),
                where=files[0].source if len(files) == 1 else "",
            )
        )
    if errors:
        raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
    return StateImport(templates=templates, clusters=tuple(clusters), ignored=tuple(ignored))


def _read_cluster(
    resource: StateResource,
    state: StateFile,
    templates: dict[str, ImportedTemplate],
    groups: Mapping[str, Sequence[StateResource]],
    configuration: Configuration | None,
    config: FleetConfig,
    flag: str | None,
    declared: Mapping[str, ClusterTemplate],
    specs: Mapping[str, ResourceSpec],
) -> StateCluster:
    name, uuid = resource.text("name"), resource.text("id")
    template_id = resource.text("cluster_template_id")
    if name is None or uuid is None or template_id is None:
        missing = [k for k in ("name", "id", "cluster_template_id") if resource.text(k) is None]
        raise DefinitionError(f"a cluster without {', '.join(missing)}", where=resource.where)
    template = templates.get(template_id)
    if template is None and template_id in declared:
        template = templates[template_id] = declared_template(template_id, declared[template_id])
    if template is None:
        template = templates[template_id] = _unknown_template(template_id, resource)
    environment = environment_of(name, state, flag, config, resource.where)
    return _cluster(
        resource, state, template, groups.get(uuid, ()), configuration, environment, specs
    )
