"""The Magnum objects of Terraform states, and what each of their values is.

Pure data in, pure data out: state files (:mod:`fleet.importers.tfstate`) and, when given,
the Terraform configuration (:mod:`fleet.terraform.hcl`) become templates, clusters and
node groups whose every attribute is *carried* (declared), *inherited* (Magnum copied it
from the template or the cluster: left out, as the Terraform source leaves it out),
*computed* (Magnum's or the provider's: never declared), *create-only* (under
``lifecycle { ignore_changes }``), or *unset*, with the rule that decided.

What Magnum copies when a cluster or node group leaves an attribute out, from
openstack/magnum 22.0.0 ``magnum/api/controllers/v1/cluster.py`` (``ClustersController._post``)
and ``nodegroup.py`` (``NodeGroupController.post``): a cluster takes ``keypair``
(template ``keypair_id``), ``labels``, ``floating_ip_enabled``, ``master_lb_enabled``,
``docker_volume_size``, ``master_flavor_id``, ``flavor_id``, ``fixed_network`` and
``fixed_subnet`` from its template; a node group takes ``image_id`` from the template and
``flavor_id`` and ``labels`` from its cluster. Labels under ``merge_labels`` are the parent's
updated with the object's own, and terraform-provider-openstack v3.4.0 reads them back as
the difference from the parent (``containerInfraV1GetLabelsMerged``), so Magnum's labels are
the parent's updated with the state's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleet.clouds.magnum.resolved import AUTOSCALER_LABEL, autoscaler_on
from fleet.clouds.magnum.template import ClusterTemplate
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.importers.tfstate import CLUSTER, NODEGROUP, TEMPLATE
from fleet.terraform.hcl import ALL, Block, Configuration
from fleet.terraform.state import StateFile, StateResource

CARRIED = "carried"
INHERITED = "inherited"
COMPUTED = "computed"
CREATE_ONLY = "create-only"
AUTOSCALED = "autoscaled"
UNSET = "unset"
DECLARED = (CARRIED, CREATE_ONLY, AUTOSCALED)
"""The fates of the values a declaration states."""
DEFAULT = "default"

CLUSTER_FROM_TEMPLATE = {
    "flavor": "flavor",
    "master_flavor": "master_flavor",
    "keypair": "keypair_id",
    "docker_volume_size": "docker_volume_size",
    "fixed_network": "fixed_network",
    "fixed_subnet": "fixed_subnet",
    "floating_ip_enabled": "floating_ip_enabled",
    "master_lb_enabled": "master_lb_enabled",
}
"""Cluster attribute -> the template attribute Magnum copies when the cluster leaves it out
(magnum 22.0.0 ``ClustersController._post``); ``labels`` follows its own rule."""
CLUSTER_COMPUTED = (
    "api_address",
    "coe_version",
    "container_version",
    "created_at",
    "id",
    "kubeconfig",
    "master_addresses",
    "node_addresses",
    "project_id",
    "stack_id",
    "timeouts",
    "updated_at",
    "user_id",
)
"""Never declared: ids, addresses, versions, the kubeconfig (terraform-provider-openstack
v3.4.0: Computed only, or not an argument)."""
CLUSTER_DEFAULTS: Mapping[str, Any] = {"master_count": 1, "create_timeout": 60}
"""Magnum's values when a cluster leaves them out (API defaults, ``create_timeout`` 60)."""
COMPUTED_UNLESS_SET = ("discovery_url", "region")
"""Optional and Computed: Magnum (the Heat driver's etcd discovery) or the provider's
region fills them in; declared only where the configuration sets them."""
GROUP_COMPUTED = ("cluster_id", "created_at", "id", "project_id", "timeouts", "updated_at")
GROUP_DEFAULTS: Mapping[str, Any] = {"role": "worker", "min_node_count": 0}
"""Magnum's node group defaults (``NodeGroup`` in magnum's api/controllers/v1/nodegroup.py)."""
TEMPLATE_COMPUTED = (
    "created_at",
    "id",
    "project_id",
    "region",
    "timeouts",
    "updated_at",
    "user_id",
)
AUTOSCALING = "auto_scaling_enabled"
_KUBE_TAG = re.compile(r"^v?(\d+\.\d+\.\d+)")
_KUBE_IN_NAME = re.compile(r"(?<![0-9.])v?(1\.\d{1,2}\.\d+)(?![0-9])")


@dataclass(frozen=True, kw_only=True)
class Value:
    """One attribute of an imported object: its state value, what the import does with it
    and the rule that decided."""

    attribute: str
    value: Any
    fate: str
    rule: str


def empty(value: Any) -> bool:
    """Whether a state value means "not set": null, "", 0 or an empty map or list (booleans
    are values)."""
    if isinstance(value, bool):
        return False
    return value is None or value == "" or value == 0 or value == {} or value == []


@dataclass(frozen=True, kw_only=True)
class ImportedTemplate:
    """A cluster template, from a resource or a data source of a state, or known only by the
    UUID its clusters name (never invented)."""

    uuid: str
    magnum_name: str
    known_from: str
    """``resource``, ``data-source``, ``fleet`` (not in the states, declared in the fleet's
    templates: a re-import) or ``uuid``."""
    where: str
    """``<state> <address>`` of its resource or data source (or of its first cluster); for
    one declared in the fleet, where."""
    labels: Mapping[str, str]
    values: Mapping[str, Any]
    """Every non-computed, non-empty attribute but ``name`` and ``labels``, by Terraform name
    (declared ones only, for a template of the fleet)."""
    kubernetes_version: str
    sensitive: frozenset[str] = frozenset()
    """The attributes its state marks sensitive (never written)."""

    def knows(self, attribute: str) -> bool:
        """Whether its value of ``attribute`` (Terraform's name; ``labels``) is known: every
        attribute of a template the states hold (an empty one is no value); of one declared
        in the fleet, those it declares."""
        if self.known_from == "fleet":
            return bool(self.labels) if attribute == "labels" else attribute in self.values
        return self.known_from != "uuid"


@dataclass(frozen=True, kw_only=True)
class ImportedGroup:
    """A node group of an imported cluster."""

    resource: StateResource
    magnum_name: str
    external_name: str
    """Terraform's id ``<cluster uuid>/<node group uuid>``: the NodegroupV1's external name."""
    values: tuple[Value, ...]
    labels: Mapping[str, str]
    """The labels it declares (its own, see :func:`own_labels`)."""
    merge_labels: bool | None
    block: Block | None = None

    def value(self, attribute: str) -> Value | None:
        """The decision on one attribute."""
        return next((v for v in self.values if v.attribute == attribute), None)

    def declared(self) -> dict[str, Any]:
        """The attributes it declares (carried and create-only), by Terraform name."""
        return {v.attribute: v.value for v in self.values if v.fate in DECLARED}


@dataclass(frozen=True, kw_only=True)
class StateCluster:
    """One Magnum cluster of one state, in its environment, with its node groups."""

    resource: StateResource
    state: StateFile
    environment: str
    environment_rule: str
    magnum_name: str
    uuid: str
    template: ImportedTemplate
    values: tuple[Value, ...]
    labels: Mapping[str, str]
    """The labels it declares (see :func:`own_labels`); ``magnum_labels`` are all of them."""
    magnum_labels: Mapping[str, str]
    merge_labels: bool | None
    node_groups: tuple[ImportedGroup, ...]
    project_id: str
    region: str
    block: Block | None = None
    notes: tuple[str, ...] = ()

    def value(self, attribute: str) -> Value | None:
        """The decision on one attribute."""
        return next((v for v in self.values if v.attribute == attribute), None)

    def declared(self) -> dict[str, Any]:
        """The attributes it declares (carried and create-only), by Terraform name."""
        return {v.attribute: v.value for v in self.values if v.fate in DECLARED}

    @property
    def where(self) -> str:
        """``<state> <address>``."""
        return self.resource.where


@dataclass(frozen=True, kw_only=True)
class StateImport:
    """What the states hold: templates by UUID, clusters in state order."""

    templates: Mapping[str, ImportedTemplate]
    clusters: tuple[StateCluster, ...]
    ignored: tuple[str, ...] = ()
    """``<state>: N other resources`` lines for the report."""


# --- templates ---------------------------------------------------------------------------------


def kubernetes_version(
    labels: Mapping[str, str], image: str, name: str, coe_versions: Sequence[str]
) -> str | None:
    """From the ``kube_tag`` label (the Heat drivers'), else a cluster's ``coe_version``
    (what Magnum reports running), else a Kubernetes version (1.x.y) in the image or
    template name."""
    for text in (labels.get("kube_tag", ""), *coe_versions):
        match = _KUBE_TAG.match(text)
        if match:
            return "v" + match.group(1)
    for text in (image, name):
        match = _KUBE_IN_NAME.search(text)
        if match:
            return "v" + match.group(1)
    return None


def _template(resource: StateResource, coe_versions: Sequence[str]) -> ImportedTemplate:
    attrs = resource.attributes
    labels = {str(k): str(v) for k, v in (attrs.get("labels") or {}).items()}
    name = resource.text("name") or ""
    values = {
        k: v
        for k, v in sorted(attrs.items())
        if k not in (*TEMPLATE_COMPUTED, "name", "labels") and not empty(v)
    }
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


# --- environments ------------------------------------------------------------------------------


def environment_of(
    name: str, state: StateFile, flag: str | None, config: FleetConfig, where: str = ""
) -> tuple[str, str]:
    """The environment of a cluster and why: from its name (one dash-separated segment
    naming an environment), else from its state file (``--state ENV=PATH``), else
    ``--environment``; ``where`` (its state and address) names it in the error."""
    found = sorted({s for s in name.split("-") if s in config.environments})
    if len(found) == 1:
        env = found[0]
        rule = f"the name {name!r} has the segment {env!r}"
        if state.environment not in (None, env):
            rule += f" (the state was given as {state.environment}=: the name decides)"
        return env, rule
    if state.environment is not None:
        return state.environment, f"the state was given as --state {state.environment}=PATH"
    if flag is not None:
        return flag, f"--environment {flag}"
    which = f"several ({', '.join(found)})" if found else "none"
    raise DefinitionError(
        f"cannot tell the environment of cluster {name!r}: its name holds {which} of "
        f"{', '.join(config.environments)}; pass the state as --state ENV=PATH, or "
        "--environment ENV",
        where=where or state.source,
    )


# --- labels ------------------------------------------------------------------------------------


def magnum_labels(
    state_labels: Mapping[str, str], parent: Mapping[str, str], merge: bool | None
) -> dict[str, str]:
    """The labels Magnum holds: under ``merge_labels`` the parent's updated with the
    state's (the provider reads back only what differs, plus the declared ones); else the
    state's, which the provider reads back whole."""
    if merge:
        return {**parent, **state_labels}
    return dict(state_labels)


# --- decisions ---------------------------------------------------------------------------------


def _decide(
    attribute: str,
    value: Any,
    *,
    block: Block | None,
    parent_value: Any,
    parent_known: bool,
    parent: str,
    ignored: Sequence[str],
) -> Value:
    """Carried, inherited or unset, for an attribute the parent may have given."""
    if empty(value):
        return Value(attribute=attribute, value=value, fate=UNSET, rule="not set in the state")
    if block is not None:
        if attribute in block.arguments:
            fate = CREATE_ONLY if attribute in ignored else CARRIED
            return Value(
                attribute=attribute, value=value, fate=fate, rule=f"set at {block.at(attribute)}"
            )
        if not parent_known or value == parent_value:
            return Value(
                attribute=attribute,
                value=value,
                fate=INHERITED,
                rule=f"left to the {parent} by {block.where}",
            )
        # Left out of the configuration, yet the state holds another value than the
        # parent's: set by an earlier configuration (Terraform plans no change when an
        # Optional+Computed argument is removed). The state is what Magnum holds.
        return Value(
            attribute=attribute,
            value=value,
            fate=CREATE_ONLY if attribute in ignored else CARRIED,
            rule=f"not in {block.where}, but the state's differs from the {parent}'s",
        )
    if parent_known and value == parent_value:
        return Value(
            attribute=attribute, value=value, fate=INHERITED, rule=f"equal to the {parent}'s"
        )
    rule = f"differs from the {parent}'s" if parent_known else f"the {parent}'s values are unknown"
    fate = CREATE_ONLY if attribute in ignored else CARRIED
    return Value(attribute=attribute, value=value, fate=fate, rule=rule)


def _plain(
    attribute: str, value: Any, *, block: Block | None, default: Any, ignored: Sequence[str]
) -> Value:
    """An attribute no parent gives: Magnum's default when left out."""
    if value is None:
        return Value(attribute=attribute, value=value, fate=UNSET, rule="not in the state")
    if block is not None and attribute in block.arguments:
        fate = CREATE_ONLY if attribute in ignored else CARRIED
        return Value(
            attribute=attribute, value=value, fate=fate, rule=f"set at {block.at(attribute)}"
        )
    if value == default:
        return Value(attribute=attribute, value=value, fate=DEFAULT, rule="Magnum's default")
    fate = CREATE_ONLY if attribute in ignored else CARRIED
    rule = "not Magnum's default" if block is None else f"not in {block.where}, not the default"
    return Value(attribute=attribute, value=value, fate=fate, rule=rule)


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


def _computed_unless_set(attribute: str, value: Any, block: Block | None) -> Value:
    if block is not None and attribute in block.arguments and not empty(value):
        return Value(
            attribute=attribute, value=value, fate=CARRIED, rule=f"set at {block.at(attribute)}"
        )
    return Value(attribute=attribute, value=value, fate=COMPUTED, rule="Computed: left to Magnum")


def own_labels(
    state_labels: Mapping[str, str],
    merge: bool | None,
    *,
    block: Block | None,
    parent: Mapping[str, str],
    parent_known: bool,
) -> tuple[dict[str, str], str]:
    """The labels an object declares, and why.

    Under ``merge_labels`` the state holds what differs from the parent plus the declared
    labels: all of it is declared. Without it the state holds all of Magnum's labels: they
    are declared when the configuration sets ``labels`` or when they differ from the
    parent's (set by an earlier configuration; or no configuration given), else left to
    the parent."""
    labels = dict(state_labels)
    if merge:
        return labels, "merge_labels: the state holds the object's own labels"
    if block is not None:
        if "labels" in block.arguments and labels:
            return labels, f"set at {block.at('labels')}"
        if not parent_known or labels == dict(parent) or not labels:
            return {}, f"left to the parent by {block.where}"
        return labels, f"not in {block.where}, but the state's differ from the parent's"
    if parent_known and labels == dict(parent):
        return {}, "equal to the parent's"
    return labels, "differ from the parent's" if parent_known else "the parent's are unknown"


def _ignored(block: Block | None) -> tuple[str, ...]:
    return block.ignore_changes if block is not None else ()


def _group(
    resource: StateResource,
    cluster: StateResource,
    cluster_labels: Mapping[str, str],
    template: ImportedTemplate,
    block: Block | None,
) -> ImportedGroup:
    attrs = resource.attributes
    ignored = _ignored(block)
    values: list[Value] = []
    for attribute in ("node_count", "min_node_count", "max_node_count", "role"):
        if attribute == "max_node_count" and empty(attrs.get(attribute)):
            values.append(
                Value(attribute=attribute, value=None, fate=UNSET, rule="0: no upper limit")
            )
            continue
        if attribute == "node_count":
            bounded = any(not empty(attrs.get(k)) for k in ("min_node_count", "max_node_count"))
            values.append(_node_count(attrs.get(attribute), ignored, bounded, "its bounds"))
            continue
        values.append(
            _plain(
                attribute,
                attrs.get(attribute),
                block=block,
                default=GROUP_DEFAULTS.get(attribute),
                ignored=ignored,
            )
        )
    values.append(
        _decide(
            "flavor_id",
            attrs.get("flavor_id"),
            block=block,
            parent_value=cluster.attributes.get("flavor"),
            parent_known=True,
            parent="cluster",
            ignored=ignored,
        )
    )
    values.append(
        _decide(
            "image_id",
            attrs.get("image_id"),
            block=block,
            parent_value=template.values.get("image"),
            parent_known=template.knows("image"),
            parent="template",
            ignored=ignored,
        )
    )
    volume = attrs.get("docker_volume_size")
    values.append(
        Value(attribute="docker_volume_size", value=volume, fate=UNSET, rule="not set in the state")
        if empty(volume)
        else Value(
            attribute="docker_volume_size",
            value=volume,
            fate=CREATE_ONLY if "docker_volume_size" in ignored else CARRIED,
            rule="Magnum does not copy it",
        )
    )
    merge = attrs.get("merge_labels")
    merge = merge if isinstance(merge, bool) else None
    state_labels = {str(k): str(v) for k, v in (attrs.get("labels") or {}).items()}
    labels, why = own_labels(
        state_labels, merge, block=block, parent=cluster_labels, parent_known=True
    )
    values.append(
        Value(attribute="labels", value=labels, fate=CARRIED if labels else INHERITED, rule=why)
    )
    return ImportedGroup(
        resource=resource,
        magnum_name=resource.text("name") or "",
        external_name=str(attrs["id"]),
        values=tuple(values),
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
) -> StateCluster:
    attrs = resource.attributes
    block, notes = _block_of(resource, configuration)
    ignored = _ignored(block)
    values: list[Value] = []
    for attribute, template_attribute in CLUSTER_FROM_TEMPLATE.items():
        values.append(
            _decide(
                attribute,
                attrs.get(attribute),
                block=block,
                parent_value=template.values.get(template_attribute),
                parent_known=template.knows(template_attribute),
                parent="template",
                ignored=ignored,
            )
        )
    for attribute, default in CLUSTER_DEFAULTS.items():
        values.append(
            _plain(attribute, attrs.get(attribute), block=block, default=default, ignored=ignored)
        )
    switch = magnum_labels(
        {str(k): str(v) for k, v in (attrs.get("labels") or {}).items()},
        template.labels,
        attrs.get("merge_labels") is True,
    ).get(AUTOSCALER_LABEL)
    autoscaled = switch is not None and autoscaler_on(switch)
    values.append(
        _node_count(attrs.get("node_count"), ignored, autoscaled, f"{AUTOSCALER_LABEL}={switch}")
    )
    for attribute in COMPUTED_UNLESS_SET:
        values.append(_computed_unless_set(attribute, attrs.get(attribute), block))
    merge = attrs.get("merge_labels")
    merge = merge if isinstance(merge, bool) else None
    state_labels = {str(k): str(v) for k, v in (attrs.get("labels") or {}).items()}
    labels, why = own_labels(
        state_labels,
        merge,
        block=block,
        parent=template.labels,
        parent_known=template.knows("labels"),
    )
    values.append(
        Value(
            attribute="labels",
            value=labels,
            fate=(CREATE_ONLY if "labels" in ignored else CARRIED) if labels else INHERITED,
            rule=why,
        )
    )
    all_labels = magnum_labels(state_labels, template.labels, merge)
    uuid = str(attrs["id"])
    imported_groups = []
    for group in groups:
        group_block, group_notes = _block_of(group, configuration)
        notes.extend(group_notes)
        imported_groups.append(_group(group, resource, all_labels, template, group_block))
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
        values=tuple(values),
        labels=labels,
        magnum_labels=all_labels,
        merge_labels=merge,
        node_groups=tuple(imported_groups),
        project_id=str(attrs.get("project_id") or ""),
        region=str(attrs.get("region") or ""),
        block=block,
        notes=tuple(notes),
    )


def resource_block(configuration: Configuration, resource: StateResource) -> Block | None:
    """The ``resource`` (or ``data``) block of a state resource in ``configuration``."""
    kind = "data" if resource.mode == "data" else "resource"
    return configuration.block(resource.module_path, kind, resource.type, resource.name)


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
            templates[uuid] = _template(resource, coe.get(uuid, []))
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
    return _cluster(resource, state, template, groups.get(uuid, ()), configuration, environment)
