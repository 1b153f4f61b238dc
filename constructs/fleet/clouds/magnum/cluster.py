"""An OpenStack Magnum cluster through Crossplane provider-openstack (Figures 10 -> 12, 13)."""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

from fleet.clouds.base import (
    CloudPlugin,
    FleetCluster,
    IntPerEnv,
    NodeCounts,
    NodePoolSummary,
    resolve_counts,
    unique_pools,
)
from fleet.clouds.magnum.names import check_cluster_name, check_node_group_name
from fleet.clouds.magnum.plugin import MAGNUM_PLUGIN
from fleet.clouds.magnum.project import ANNOTATION_PREFIX, OpenStackProject
from fleet.clouds.magnum.template import (
    ClusterTemplate,
    TemplateCatalog,
    is_uuid,
    label_value_errors,
)
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.layout import AFTER_CLUSTER_WAVE, SYNC_WAVE
from fleet.core.manifest import Manifest
from fleet.core.names import object_name_for
from fleet.core.options import (
    option,
    options_of,
    render_object,
    render_values,
    rendered,
    resolved_values,
    value_type,
)
from fleet.core.refs import Ref, mutator, target_of
from fleet.core.tree import did_you_mean
from fleet.core.validators import check_dns_label
from fleet.core.values import PerEnv, SecretKeyRef, caller_location, resolve

API_VERSION = "containerinfra.openstack.crossplane.io/v1alpha1"
EXTERNAL_NAME = "crossplane.io/external-name"
PAUSED = "crossplane.io/paused"
"""crossplane-runtime's pause switch: reconciling stops while its value is ``"true"``."""
TEMPLATE_NAME = ANNOTATION_PREFIX + "cluster-template"
"""The template's name, for people: ``clusterTemplateId`` holds its UUID."""
KUBECONFIG_KEY = "attribute.kubeconfig.raw_config"


class DeletionPolicy(enum.StrEnum):
    """What Crossplane does to the Magnum cluster when its object is deleted."""

    ORPHAN = "Orphan"
    DELETE = "Delete"


class ManagementPolicy(enum.StrEnum):
    """What Crossplane may do to the Magnum cluster (``spec.managementPolicies``)."""

    ALL = "*"
    CREATE = "Create"
    UPDATE = "Update"
    DELETE = "Delete"
    OBSERVE = "Observe"
    LATE_INITIALIZE = "LateInitialize"


DELETION_POLICIES = tuple(p.value for p in DeletionPolicy)
MANAGEMENT_POLICIES = tuple(p.value for p in ManagementPolicy)
DEFAULT_WORKER = "default-worker"
"""Magnum's name for the node group that ``node_count`` and ``flavor`` describe."""
RESERVED_NODE_GROUPS = (DEFAULT_WORKER, "default-master")
"""Magnum names a cluster's own node groups ``default-<role>`` (magnum/conductor/utils.py);
another node group of that name is refused (NodeGroupAlreadyExists, api/controllers/v1/
nodegroup.py)."""
AUTOSCALER_LABEL = "auto_scaling_enabled"
"""The cluster label that turns on Magnum's cluster autoscaler for ``default-worker``."""
BOUND_LABELS = ("min_node_count", "max_node_count")
"""The cluster labels that bound ``default-worker`` for the autoscaler (the fleet sets them
from ``min_node_count`` and ``max_node_count``)."""
_TRUE = frozenset(("1", "t", "true", "on", "y", "yes"))
_T = TypeVar("_T")
_D = TypeVar("_D")


def _given(value: _T | PerEnv[_T]) -> list[_T]:
    """Every value ``value`` gives: itself, or a ``per_env``'s values and default."""
    if isinstance(value, PerEnv):
        default = [] if value.default is None else [value.default]
        return [*value.values.values(), *default]
    return [value]


def autoscaler_on(value: str) -> bool:
    """Whether a driver turns the autoscaler on for ``auto_scaling_enabled=value``: the Heat
    driver for ``true`` in any case (magnum 22.0.0
    ``drivers/common/templates/kubernetes/fragments/enable-auto-scaling.sh``), the Cluster
    API driver for what ``oslo_utils.strutils.bool_from_string`` reads as true
    (stackhpc/magnum-capi-helm ``driver.py`` ``_get_label_bool``); either is enough."""
    return value.strip().lower() in _TRUE


def _int_label(labels: Mapping[str, str], key: str) -> int | None:
    """A label that holds a count (``min_node_count``), None where absent or no integer."""
    try:
        return int(labels[key])
    except (KeyError, ValueError):
        return None


def _group_create_only(group: NodeGroup, counts: NodeCounts) -> tuple[str, ...]:
    """The NodegroupV1 arguments of ``group`` rendered in ``spec.initProvider`` only: its
    ``create_only``, and ``node_count`` where it has bounds (something else resizes it)."""
    fields = tuple(group.create_only)
    bounded = counts.min_node_count is not None or counts.max_node_count is not None
    if bounded and "node_count" not in fields:
        fields += ("node_count",)
    return fields


def _group_external(group: NodeGroup, environment: str, cluster_external: str) -> str:
    """The node group's external name in ``environment``: Terraform's id
    ``<cluster>/<node group>``. Declared, its cluster part must be the cluster's external
    name: terraform-provider-openstack v3.4.0 reads ``cluster_id`` back from the id
    (``resource_openstack_containerinfra_nodegroup_v1.go``, Read: ``parsePairedIDs``,
    ``d.Set("cluster_id", clusterID)``; Create: ``d.SetId(clusterID + "/" + UUID)`` with
    ``clusterID = d.Get("cluster_id")``) and ``cluster_id`` is ForceNew, so ``clusterId``
    (the cluster's external name) and the id must agree."""
    if group.external_name is None:
        return f"{cluster_external}/{group.name}"
    value = resolve(group.external_name, environment, where=group.where, field="external_name")
    cluster_part, slash, group_part = value.partition("/")
    if not slash or not group_part or cluster_part != cluster_external:
        raise DefinitionError(
            f"node group {group.name!r} ({environment}): external name {value!r} must be "
            f"'{cluster_external}/<node group UUID>', the cluster's external name first: "
            "the provider reads clusterId back from it (ForceNew); adopt the cluster by the "
            "same id (external_name= on the cluster)",
            where=f"{group.where} (node group {group.name})",
            field="external_name",
        )
    return value


def _unique_groups(groups: Sequence[object], *, where: str) -> tuple[NodeGroup, ...]:
    """``groups`` if their Magnum names and object names are unique, else the error naming
    both node groups (and the pin, ``object_name=``)."""
    out = unique_pools(groups, NodeGroup, where=where, field="node_groups", noun="node group")
    seen: dict[str, NodeGroup] = {}
    for group in out:
        other = seen.setdefault(group.kube_name, group)
        if other is not group:
            raise DefinitionError(
                f"node groups {other.name!r} ({other.where}) and {group.name!r} both have the "
                f"object name {group.kube_name!r} (their NodegroupV1 names would be one): "
                "pin another with NodeGroup(object_name=...) on one of them",
                where=f"{group.where} (node group {group.name})",
                field="object_name",
            )
    return out


@value_type
class NodeGroup:
    """A Magnum node group: nodes of one flavor, usually in one availability zone.

    ``availability_zone`` becomes the ``availability_zone`` label. ``min_node_count``
    and ``max_node_count`` are rendered only when set (autoscaling); then ``node_count``
    is only the size at creation (``spec.initProvider``), so Crossplane does not resize
    the group back after whatever scales it. Magnum's own autoscaler manages only the
    cluster's ``default-worker`` group (see :class:`MagnumCluster`); for this group the
    bounds are Magnum's resize limits. The optional NodegroupV1 arguments
    (``docker_volume_size_gb``, ``image_id``, ``role``) are rendered only when set
    (Magnum's defaults when left out). ``external_name`` is Terraform's id of the node
    group, ``<cluster id>/<node group id>`` (default: the cluster's external name, ``/``,
    the node group's name); its cluster part is the cluster's external name, and
    ``clusterId``. Counts may differ per environment (:class:`PerEnv`).
    ``retired=True`` removes the node group from the render in every environment (see
    docs: retiring); its name stays taken.

    ``name`` is Magnum's, rendered byte for byte (``user-m3.large``): any 1 to 255
    characters, except what Magnum or the provider cannot find by name unless the node
    group is adopted by ``external_name`` (an integer, a UUID, ``/``, ``?``, ``#``,
    ``%``: :mod:`fleet.clouds.magnum.names`). The NodegroupV1 is named
    ``<cluster object name>-<object_name>``, where ``object_name`` is derived from the name
    (:func:`fleet.core.names.object_name_from`: ``user-m3.large`` -> ``user-m3-large``)
    unless pinned. ``create_only`` names arguments used to create the node group and
    never enforced afterwards (Terraform's ``ignore_changes``): they render in
    ``spec.initProvider``, and the object is not late-initialized.
    """

    argument_noun: ClassVar[str] = "node group"
    """How locations name it: ``file:line (node group <name>)``."""
    rendered_kind: ClassVar[str] = "NodegroupV1"

    name: str = option(
        render="spec.forProvider.name", terraform="name", doc="The node group's name."
    )
    flavor: str = option(
        render="spec.forProvider.flavorId", terraform="flavor_id", doc="The nodes' flavor."
    )
    node_count: IntPerEnv = option(terraform="node_count", doc="The number of nodes.")
    min_node_count: IntPerEnv | None = option(
        default=None, terraform="min_node_count", doc="Magnum's lower resize limit."
    )
    max_node_count: IntPerEnv | None = option(
        default=None, terraform="max_node_count", doc="Magnum's upper resize limit."
    )
    availability_zone: str | None = option(
        default=None, doc="The availability zone (the ``availability_zone`` label)."
    )
    labels: Mapping[str, str] = option(
        factory=dict, terraform="labels", doc="Labels of the node group."
    )
    merge_labels: bool = option(
        default=True,
        render="spec.forProvider.mergeLabels",
        terraform="merge_labels",
        doc="Whether Magnum merges the labels with the cluster's.",
    )
    retired: bool = option(default=False, doc="Removed from the render everywhere.")
    where: str = option(default="", init=False, compare=False, doc="Where it was declared.")
    docker_volume_size_gb: int | None = option(
        default=None,
        render="spec.forProvider.dockerVolumeSize",
        terraform="docker_volume_size",
        minimum=1,
        doc="The Docker volume size in GB (Magnum's default when left out).",
    )
    image_id: str | None = option(
        default=None,
        render="spec.forProvider.imageId",
        terraform="image_id",
        nonempty=True,
        doc="The nodes' image (the template's when left out).",
    )
    role: str | None = option(
        default=None,
        render="spec.forProvider.role",
        terraform="role",
        nonempty=True,
        doc="The node group's role (Magnum's ``worker`` when left out).",
    )
    external_name: str | PerEnv[str] | None = option(
        default=None, doc="Terraform's id of the node group, to adopt it."
    )
    object_name: str | None = option(
        default=None,
        doc="The end of the NodegroupV1's name (default: derived from ``name``).",
    )
    create_only: Sequence[str] = option(
        default=(),
        doc="Arguments used at creation only, never enforced after (``ignore_changes``).",
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", caller_location())
        ctx = f"{self.where} (node group {self.name})"
        check_node_group_name(self.name, where=ctx, adopted=self.external_name is not None)
        object.__setattr__(
            self, "_object_name", object_name_for(self.name, self.object_name, where=ctx)
        )
        object.__setattr__(
            self, "create_only", check_create_only(self.create_only, NodeGroup, where=ctx)
        )
        if self.name in RESERVED_NODE_GROUPS:
            raise DefinitionError(
                f"{self.name!r} is the node group Magnum creates for every cluster (give the "
                "cluster's flavor, node_count and master_count instead)",
                where=ctx,
                field="name",
            )
        if not self.flavor:
            raise DefinitionError("a node group needs a flavor", where=ctx, field="flavor")
        zone = self.labels.get("availability_zone")
        if self.availability_zone and zone is not None and zone != self.availability_zone:
            raise DefinitionError(
                f"availability_zone {self.availability_zone!r} and labels['availability_zone'] "
                f"{zone!r} contradict each other (both set the availability_zone label): give one",
                where=ctx,
                field="availability_zone",
            )
        for error in label_value_errors(self.all_labels(), where=ctx, field="labels"):
            raise error

    @property
    def kube_name(self) -> str:
        """The node group's part of its NodegroupV1's name: ``object_name``, else derived
        from ``name``."""
        return str(self.__dict__["_object_name"])

    def all_labels(self) -> dict[str, str]:
        """The node group's labels, ``availability_zone`` included."""
        labels = dict(self.labels)
        if self.availability_zone:
            labels["availability_zone"] = self.availability_zone
        return labels


CREATE_ONLY_COMPUTED: Mapping[str, Mapping[str, str]] = {
    "ClusterV1": {
        "template": "clusterTemplateId",
        "node_count": "nodeCount",
        "master_flavor": "masterFlavor",
        "labels": "labels",
    },
    "NodegroupV1": {
        "node_count": "nodeCount",
        "min_node_count": "minNodeCount",
        "max_node_count": "maxNodeCount",
        "labels": "labels",
    },
}
"""The arguments rendered by code (not as they are) that may be create-only, by kind:
keyword -> their ``spec.forProvider`` field."""


@functools.cache
def create_only_fields(cls: type) -> Mapping[str, str]:
    """Every argument of ``cls`` (MagnumCluster, NodeGroup) that may be create-only,
    keyword -> its ``spec.forProvider``/``spec.initProvider`` field: those rendered into
    ``spec.forProvider`` (from the table, and :data:`CREATE_ONLY_COMPUTED`), the name
    excepted.

    upjet v2.2.0 merges ``spec.initProvider`` into the parameters and, once the resource
    exists, drops the diff of every field set there and not in ``spec.forProvider``
    (``pkg/controller/external_tfpluginsdk.go`` ``filterInitExclusiveDiffs``,
    ``ignored_tfpluginsdk.go``): what Terraform's ``ignore_changes`` does. The CRDs of
    provider-openstack v0.9.0 have every ``forProvider`` field in ``initProvider``.
    """
    kind = str(getattr(cls, "rendered_kind"))  # noqa: B009
    out = dict(CREATE_ONLY_COMPUTED[kind])
    for o in rendered(cls):
        if o.render[:2] == ("spec", "forProvider") and len(o.render) == 3 and o.keyword != "name":
            out[o.keyword] = o.render[2]
    return MappingProxyType(out)


def check_create_only(given: Sequence[str], cls: type, *, where: str) -> tuple[str, ...]:
    """``given`` (argument names of ``cls``) if each may be create-only, else the error
    saying why not."""
    fields = create_only_fields(cls)
    for keyword in given:
        if keyword in fields:
            continue
        if keyword == "name":
            why = (
                "the name is how Magnum and the provider know it (ForceNew), and it never "
                "changes in the fleet"
            )
        elif keyword == "availability_zone":
            why = "it renders as the availability_zone label: name 'labels'"
        elif keyword in options_of(cls):
            why = "it is not an argument Magnum receives (nothing renders it in forProvider)"
        else:
            why = f"not an argument of {cls.__name__}" + did_you_mean(keyword, sorted(fields))
        raise DefinitionError(
            f"{keyword!r} cannot be create-only: {why}", where=where, field="create_only"
        )
    return tuple(dict.fromkeys(given))


def move_create_only(spec: dict[str, Any], fields: Sequence[str]) -> None:
    """Move ``fields`` of ``spec.forProvider`` (where rendered) to ``spec.initProvider``."""
    for key in fields:
        if key in spec["forProvider"]:
            spec.setdefault("initProvider", {})[key] = spec["forProvider"].pop(key)


@dataclass(frozen=True, kw_only=True)
class ResolvedMagnum:
    """A :class:`MagnumCluster` resolved for one environment: the values it renders
    (:meth:`MagnumCluster.resolved`)."""

    environment: str
    template: ClusterTemplate
    """The cluster template in the environment."""
    project: OpenStackProject
    """The OpenStack project in the environment (its ProviderConfig)."""
    options: Mapping[str, Any]
    """The options rendered as they are (``flavor``, ``docker_volume_size_gb``, ...), by
    name, resolved for the environment; None where not set (the template's or Magnum's
    value applies)."""
    master_flavor: str | None
    """``masterFlavor``; None: not rendered (the template's applies)."""
    external_name: str
    """The ``crossplane.io/external-name``: the Magnum name, or the Magnum UUID adopted."""
    region: str
    """The effective OpenStack region: ``openstack_region``, else the project's ("")."""
    template_uuid: str
    """The template's UUID in :attr:`region`: ``clusterTemplateId``."""
    labels: Mapping[str, str]
    """The labels rendered (``spec.forProvider.labels``; none when empty)."""
    magnum_labels: Mapping[str, str]
    """The labels Magnum gives the cluster, as far as the fleet knows them: the template's
    base labels updated with the cluster's own and the autoscaling labels."""
    counts: NodeCounts
    """``default-worker``'s size; min/max where declared, or given by the template's
    labels."""
    autoscaled: bool
    """Whether Magnum's autoscaler manages ``default-worker`` (``auto_scaling_enabled``)."""
    create_only: tuple[str, ...]
    """The ClusterV1 arguments rendered in ``spec.initProvider`` only (``node_count``
    where autoscaled)."""
    groups: tuple[tuple[NodeGroup, NodeCounts], ...]
    """Every declared node group (retired ones too) with its counts."""
    group_external_names: Mapping[str, str]
    """Each node group's external name (by Magnum name): ``<cluster>/<node group>``."""

    @property
    def flavor(self) -> str | None:
        """The workers' flavor declared (None: the template's)."""
        value = self.options["flavor"]
        return None if value is None else str(value)

    @property
    def magnum_flavor(self) -> str | None:
        """The workers' flavor Magnum gives the cluster: the declared one, else the
        template's (None: neither declares one)."""
        return self.flavor or self.template.flavor

    @property
    def keypair(self) -> str | None:
        """The nodes' keypair (None: the template's)."""
        value = self.options["keypair"]
        return None if value is None else str(value)

    @property
    def master_count(self) -> int:
        """The control-plane nodes."""
        return int(self.options["master_count"])


class MagnumCluster(FleetCluster):
    """A Magnum cluster with its node groups, as Crossplane ``ClusterV1`` + ``NodegroupV1``.

    The cluster adopts an existing Magnum cluster of the same name (external name)
    and, by default, is orphaned rather than deleted when its object goes away.
    ``external_name`` adopts a Magnum cluster by its UUID instead (its node groups are
    then found as ``<uuid>/<group name>``); once rendered, the external name never changes
    (``fleet diff`` refuses it; docs/upstream-behaviour.md says why).

    ``name`` is Magnum's, rendered byte for byte in ``spec.forProvider.name``
    (``Cluster``, ``cluster_1``; Magnum's rule: an ASCII letter, then letters, digits,
    ``_``, ``.``, ``-``, at most 242). Every Kubernetes object, the folder and the ArgoCD
    registration use the object name, derived from it (``Cluster`` -> ``cluster``,
    ``cluster_1`` -> ``cluster-1``: :mod:`fleet.core.names`) unless ``object_name``
    pins one. Two environments (or two declarations) that reach one Magnum cluster, by
    the same name or UUID in the same OpenStack project and region as declared, are
    refused (each would adopt and reconcile it), unless the project says
    ``separate_clouds=True``: each environment's credentials reach another cloud or
    project. Two project declarations count as one project when they declare the same
    project (id, else name), region and auth URL (:func:`same_cloud`).

    ``project`` and ``template`` may differ per environment (``per_env``): a configuration
    applied once per datacenter, each with its own OpenStack project and template, is one
    declaration. Each environment renders its project's ProviderConfig reference and its
    template's UUID; a project renders only where a cluster uses it
    (:meth:`project_for`, :meth:`template_for`, ``resolved(env).project``/``.template``).

    ``min_node_count`` and ``max_node_count`` (both, or neither) hand ``default-worker`` to
    Magnum's cluster autoscaler: the cluster gets the labels ``auto_scaling_enabled``,
    ``min_node_count`` and ``max_node_count``, and ``node_count`` becomes the size at
    creation only (``spec.initProvider``). Labels cannot change on an existing cluster,
    so this is chosen when the cluster is created. Where the labels turn the autoscaler on
    without the fleet's bounds (the template's or the cluster's own
    ``auto_scaling_enabled``), ``create_only=("node_count",)`` leaves the bounds to Magnum
    (its defaults, or the template's ``min_node_count``/``max_node_count`` labels).

    ``create_only`` names arguments used to create the cluster and never enforced
    afterwards (Terraform's ``ignore_changes``): they render in ``spec.initProvider``, and
    the objects are not late-initialized. ``inherit_from_template=True`` leaves to Magnum
    what the declaration does not set: only the declared labels render (not the template's
    base labels), and ``master_flavor`` does not default to ``flavor``. ``flavor``,
    ``keypair`` and the other optional arguments left out are never rendered (Magnum copies
    the template's).

    The arguments are the fields below (each with its documentation); the optional
    ClusterV1 arguments (``docker_volume_size_gb``, ``floating_ip_enabled``, ...,
    ``openstack_region``) are rendered only when set, and may differ per environment: left
    out, the template's or Magnum's value applies.

    Example (and ``project=per_env(dev=jeedy_dev, prod=jeedy)``,
    ``template=per_env(dev=DEV_TEMPLATE, prod="kubernetes-1.25.3-3-multi")``)::

        MagnumCluster(
            fleet, "ais-batch",
            name="k8s-ais-batch-{env}-multi-v25",
            environments=["dev", "prod"],
            project=jeedy, template="kubernetes-1.25.3-3-multi",
            flavor="m2.xlarge", keypair="shared-jeedy-key",
            node_count=per_env(dev=1, prod=3),
            node_groups=[NodeGroup(name="zone-a", flavor="m2.xlarge", node_count=1)],
        )
    """

    cloud: ClassVar[str] = "magnum"
    bearing_kinds: ClassVar[tuple[tuple[str, str], ...]] = (
        (API_VERSION, "ClusterV1"),
        (API_VERSION, "NodegroupV1"),
    )
    plugin: ClassVar[CloudPlugin] = MAGNUM_PLUGIN
    rendered_kind: ClassVar[str] = "ClusterV1"

    _project: (
        OpenStackProject | Ref[OpenStackProject] | PerEnv[OpenStackProject | Ref[OpenStackProject]]
    ) = option(
        alias="project",
        doc="The OpenStack project (its ProviderConfig), or a reference to one; per_env: "
        "each environment's own.",
    )
    _template: ClusterTemplate | str | PerEnv[ClusterTemplate | str] = option(
        alias="template",
        terraform="cluster_template_id",
        doc="The cluster template, or its name in the fleet's templates; per_env: each "
        "environment's own.",
    )
    flavor: str | PerEnv[str] | None = option(
        default=None,
        render="spec.forProvider.flavor",
        terraform="flavor",
        nonempty=True,
        doc="The workers' flavor (``default-worker``; default: the template's).",
    )
    keypair: str | PerEnv[str] | None = option(
        default=None,
        render="spec.forProvider.keypair",
        terraform="keypair",
        nonempty=True,
        doc="The Nova keypair of the nodes (default: the template's).",
    )
    node_count: IntPerEnv = option(
        terraform="node_count", doc="The workers (``default-worker``); 0 or more."
    )
    min_node_count: IntPerEnv | None = option(
        default=None, doc="With max_node_count: Magnum's autoscaler manages the workers."
    )
    max_node_count: IntPerEnv | None = option(
        default=None, doc="With min_node_count: Magnum's autoscaler manages the workers."
    )
    master_count: IntPerEnv = option(
        default=1,
        render="spec.forProvider.masterCount",
        terraform="master_count",
        minimum=1,
        doc="The control-plane nodes.",
    )
    master_flavor: str | PerEnv[str] | None = option(
        default=None,
        terraform="master_flavor",
        nonempty=True,
        doc="The control-plane nodes' flavor (default: ``flavor``; with "
        "inherit_from_template, the template's).",
    )
    create_timeout_minutes: int = option(
        default=60,
        render="spec.forProvider.createTimeout",
        terraform="create_timeout",
        minimum=1,
        doc="How long Magnum may take to create the cluster.",
    )
    labels: Mapping[str, str] | PerEnv[Mapping[str, str]] | None = option(
        default=None,
        terraform="labels",
        doc="The cluster's labels over the template's base labels ({} is none).",
    )
    inherit_from_template: bool = option(
        default=False,
        doc="Leave what is not declared to Magnum: the template's base labels and master "
        "flavor are not rendered.",
    )
    allow_extra_labels: bool = option(
        default=False, doc="Allow labels the template does not know (else a typo)."
    )
    merge_labels: bool = option(
        default=True,
        render="spec.forProvider.mergeLabels",
        terraform="merge_labels",
        doc="Whether Magnum merges the labels with the template's.",
    )
    node_groups: Sequence[NodeGroup] = option(default=(), doc="The node groups.")
    _deletion_policy: DeletionPolicy | str | None = option(
        default=None,
        alias="deletion_policy",
        doc="Orphan while deletion_protection is on (the default), else Delete.",
    )
    _management_policies: Sequence[ManagementPolicy | str] | None = option(
        default=None,
        alias="management_policies",
        doc="Crossplane's management policies (default: all).",
    )
    connection_secret_namespace: str = option(
        default="crossplane-clusters", doc="The namespace of the kubeconfig secret."
    )
    external_name: str | PerEnv[str] | None = option(
        default=None,
        nonempty=True,
        doc="The Magnum cluster to adopt, by UUID (default: the name).",
    )
    docker_volume_size_gb: int | PerEnv[int] | None = option(
        default=None,
        render="spec.forProvider.dockerVolumeSize",
        terraform="docker_volume_size",
        minimum=1,
        doc="The Docker volume size in GB.",
    )
    floating_ip_enabled: bool | PerEnv[bool] | None = option(
        default=None,
        render="spec.forProvider.floatingIpEnabled",
        terraform="floating_ip_enabled",
        doc="Whether the nodes get floating IPs.",
    )
    master_lb_enabled: bool | PerEnv[bool] | None = option(
        default=None,
        render="spec.forProvider.masterLbEnabled",
        terraform="master_lb_enabled",
        doc="Whether the API gets a load balancer.",
    )
    fixed_network: str | PerEnv[str] | None = option(
        default=None,
        render="spec.forProvider.fixedNetwork",
        terraform="fixed_network",
        nonempty=True,
        doc="An existing network for the nodes.",
    )
    fixed_subnet: str | PerEnv[str] | None = option(
        default=None,
        render="spec.forProvider.fixedSubnet",
        terraform="fixed_subnet",
        nonempty=True,
        doc="An existing subnet of fixed_network.",
    )
    discovery_url: str | PerEnv[str] | None = option(
        default=None,
        render="spec.forProvider.discoveryUrl",
        terraform="discovery_url",
        nonempty=True,
        doc="The etcd discovery URL.",
    )
    openstack_region: str | PerEnv[str] | None = option(
        default=None,
        render="spec.forProvider.region",
        terraform="region",
        nonempty=True,
        doc="The region to create the cluster in (default: the credentials' region).",
    )
    _object_name: str | PerEnv[str] | None = option(
        default=None,
        alias="object_name",
        doc="The Kubernetes name of its objects and folder (default: derived from the name; "
        "``{env}`` is replaced).",
    )
    create_only: Sequence[str] = option(
        default=(),
        doc="Arguments used at creation only, never enforced after (``ignore_changes``).",
    )

    def __post_init__(self) -> None:
        """The cluster's checks, and its values resolved for each environment."""
        super().__post_init__()
        ctx = self.context
        for project in _given(self._project):
            if isinstance(project, Ref) and not issubclass(project.target_kind, OpenStackProject):
                raise DefinitionError(
                    f"must be an OpenStackProject or a reference to one, got {project!r}",
                    where=ctx,
                    field="project",
                )
        # A template by name is looked up in the prepare phase, among the fleet's templates.
        catalog = TemplateCatalog.of(self.fleet)
        templates: list[ClusterTemplate | str] = _given(self._template)
        for template in templates:
            catalog.use(template, where=ctx)
        chosen_policy = self._deletion_policy or (
            DeletionPolicy.ORPHAN if self.deletion_protection else DeletionPolicy.DELETE
        )
        if chosen_policy not in DELETION_POLICIES:
            raise DefinitionError(
                f"must be one of {', '.join(DELETION_POLICIES)}, got {self._deletion_policy!r}",
                where=ctx,
                field="deletion_policy",
            )
        self.deletion_policy = DeletionPolicy(chosen_policy)
        given = self._management_policies
        if given is not None:
            bad = [p for p in given if p not in MANAGEMENT_POLICIES]
            if bad or not given:
                raise DefinitionError(
                    f"must be a non-empty list of {', '.join(MANAGEMENT_POLICIES)}, got "
                    f"{list(given)!r}",
                    where=ctx,
                    field="management_policies",
                )
        self.management_policies: list[ManagementPolicy] | None = (
            [ManagementPolicy(p) for p in given] if given else None
        )
        if (
            self.deletion_policy is DeletionPolicy.ORPHAN
            and self.management_policies
            and ManagementPolicy.DELETE in self.management_policies
            and self.management_policies != [ManagementPolicy.ALL]
        ):
            raise DefinitionError(
                "a list with Delete makes Crossplane delete the Magnum cluster even with "
                "deletion_policy Orphan (crossplane-runtime: a custom policy list overrides "
                "the deletion policy); leave Delete out, or set deletion_protection=False",
                where=ctx,
                field="management_policies",
            )
        check_dns_label(
            self.connection_secret_namespace, where=ctx, field="connection_secret_namespace"
        )
        self.node_groups = _unique_groups(self.node_groups, where=ctx)
        self.create_only = check_create_only(self.create_only, type(self), where=ctx)
        self._resolved: dict[str, ResolvedMagnum] = {}
        known = all(isinstance(t, ClusterTemplate) for t in _given(self._template))
        if known and not any(isinstance(p, Ref) for p in _given(self._project)):
            self._resolve_all()  # checked now; otherwise in prepare()

    def check_cloud_name(self, name: str, environment: str) -> str:
        """Magnum's rule for a cluster name (:mod:`fleet.clouds.magnum.names`); a name
        Magnum reads as a UUID only for a cluster adopted by its UUID. A non-UUID
        ``external_name`` must be the name itself: the provider would find the cluster by
        one name and compare it with another (``name`` is ForceNew)."""
        external = resolve(
            self.external_name, environment, where=self.context, field="external_name"
        )
        check_cluster_name(name, where=self.context, adopted_by_uuid=is_uuid(external))
        if external is not None and not is_uuid(external) and external != name:
            raise DefinitionError(
                f"{external!r} is neither the cluster's Magnum UUID nor its name {name!r} "
                f"({environment}): adopt a cluster by its UUID, or by its name (name=)",
                where=self.context,
                field="external_name",
            )
        return name

    def pinned_object_name(self, environment: str) -> str | None:
        """``object_name`` in ``environment`` (``{env}`` replaced), if given."""
        value = resolve(self._object_name, environment, where=self.context, field="object_name")
        return None if value is None else value.replace("{env}", environment)

    @property
    def project(self) -> OpenStackProject:
        """The OpenStack project, the same in every environment (a reference resolves in the
        prepare phase); where it differs per environment, :meth:`project_for`."""
        return self._one("project", self.project_for)

    @property
    def template(self) -> ClusterTemplate:
        """The cluster template, the same in every environment (one given by name resolves
        in the prepare phase); where it differs per environment, :meth:`template_for`."""
        return self._one("template", self.template_for)

    def project_for(self, environment: str) -> OpenStackProject:
        """The OpenStack project in ``environment`` (a reference resolves in the prepare
        phase)."""
        value = self._project
        if isinstance(value, PerEnv):
            value = value.get(environment, where=self.context, field="project")
        return target_of(value, "project")

    def template_for(self, environment: str) -> ClusterTemplate:
        """The cluster template in ``environment`` (one given by name resolves in the
        prepare phase)."""
        value = self._template
        if isinstance(value, PerEnv):
            value = value.get(environment, where=self.context, field="template")
        if isinstance(value, str):
            raise TemplateCatalog.unresolved(value, path=self.node.path)
        return value

    def _one(self, field: str, of: Callable[[str], _D]) -> _D:
        """``of(env)`` when it is one object in every environment, else the error naming
        the per-environment reading."""
        found = {id(v): v for v in (of(env) for env in self.environments)}
        if len(found) == 1:
            return next(iter(found.values()))
        raise DefinitionError(
            f"the cluster's {field} differs per environment: read {field}_for(environment) "
            f"(or resolved(environment).{field})",
            where=f"{caller_location()} ({self.node.path})",
            field=field,
        )

    def prepare(self) -> None:
        """Look up a template given by name, then check the inputs that need the template
        and the project (when either was not known at construction), and the object names
        (:meth:`FleetCluster.prepare`)."""
        super().prepare()
        if any(isinstance(t, str) for t in _given(self._template)):
            catalog = TemplateCatalog.of(self.fleet)

            def look_up(template: ClusterTemplate | str) -> ClusterTemplate:
                if isinstance(template, str):
                    return catalog.get(template, where=self.context)
                return template

            given = self._template
            self._template = (
                PerEnv(
                    values={env: look_up(t) for env, t in given.values.items()},
                    default=None if given.default is None else look_up(given.default),
                )
                if isinstance(given, PerEnv)
                else look_up(given)
            )
        if not self._resolved:
            self._resolve_all()
        self.fleet.catalog(_MagnumIdentities).check(self)

    def _resolve_all(self) -> None:
        self._resolved = {env: self._resolve(env) for env in self.environments}

    def _resolve(self, env: str) -> ResolvedMagnum:
        ctx = self.context
        errors: list[DefinitionError] = []
        template = self.template_for(env)
        project = self.project_for(env)
        options = resolved_values(self, rendered(type(self)), env, where=ctx)
        chosen = resolve(self.labels, env, where=ctx, field="labels")
        own_labels: dict[str, str] = dict(chosen or {})
        for key in own_labels:
            if key in BOUND_LABELS:
                errors.append(
                    DefinitionError(
                        f"label {key!r} is set from min_node_count and max_node_count; "
                        "set those instead",
                        where=ctx,
                        field="labels",
                    )
                )
            elif not self.allow_extra_labels and key not in template.known_labels:
                errors.append(template.unknown_label_error(key, where=ctx))
        errors += label_value_errors(own_labels, where=ctx, field="labels")
        master_lb, whose = options["master_lb_enabled"], ""
        if master_lb is None:  # Magnum copies the template's (cluster.py _post)
            master_lb, whose = template.master_lb_enabled, f" (template {template.name!r})"
        if master_lb is False and options["master_count"] > 1:
            errors.append(
                DefinitionError(
                    f"master_count {options['master_count']} with master_lb_enabled=False"
                    f"{whose} ({env}): Magnum refuses it (attr_validator.validate_master_count: "
                    '"master_count must be 1 when master_lb_enabled is False"); enable the '
                    "load balancer or use one master",
                    where=ctx,
                    field="master_lb_enabled",
                )
            )
        min_node_count, max_node_count = self.min_node_count, self.max_node_count
        if (min_node_count is None) != (max_node_count is None):
            errors.append(
                DefinitionError(
                    "an autoscaled cluster needs both min_node_count and max_node_count",
                    where=ctx,
                    field="min_node_count" if min_node_count is None else "max_node_count",
                )
            )
            min_node_count = max_node_count = None
        region = options["openstack_region"] or project.region or ""
        template_uuid = template.uuid_for(region)
        if template_uuid is None:
            errors.append(template.missing_uuid_error(region, where=ctx))
        counts = NodeCounts(0, None, None)
        try:
            counts = resolve_counts(ctx, "", env, self.node_count, min_node_count, max_node_count)
        except DefinitionError as e:
            errors.append(e)
        base = template.base_labels
        declared = own_labels if self.inherit_from_template else {**base, **own_labels}
        magnum_labels = self._magnum_labels(template, declared)
        added: dict[str, str] = {}
        switch = magnum_labels.get(AUTOSCALER_LABEL)
        autoscaled = switch is not None and autoscaler_on(switch)
        if counts.min_node_count is not None and counts.max_node_count is not None:
            if switch is not None and not autoscaled and AUTOSCALER_LABEL in own_labels:
                errors.append(
                    DefinitionError(
                        f"label {AUTOSCALER_LABEL}={switch!r} keeps Magnum's autoscaler off, "
                        "while min_node_count and max_node_count hand default-worker to it; "
                        "drop one or the other",
                        where=ctx,
                        field="labels",
                    )
                )
            added = {
                AUTOSCALER_LABEL: switch if switch is not None and autoscaled else "true",
                "min_node_count": str(counts.min_node_count),
                "max_node_count": str(counts.max_node_count),
            }
            magnum_labels = self._magnum_labels(template, {**declared, **added})
            autoscaled = True
        elif autoscaled:
            if "node_count" not in self.create_only:
                own = AUTOSCALER_LABEL in own_labels
                source = "the cluster's labels turn" if own else "the template turns"
                errors.append(
                    DefinitionError(
                        f"{source} on Magnum's autoscaler ({AUTOSCALER_LABEL}={switch!r}): "
                        "set min_node_count and max_node_count, or create_only=('node_count',) "
                        "to leave the bounds to Magnum; otherwise Crossplane and the "
                        "autoscaler fight over node_count",
                        where=ctx,
                        field="min_node_count",
                    )
                )
            counts = NodeCounts(
                counts.node_count,
                _int_label(magnum_labels, "min_node_count"),
                _int_label(magnum_labels, "max_node_count"),
            )
        external_name = self._external_name(env)
        groups = []
        group_externals: dict[str, str] = {}
        for group in self.node_groups:
            try:
                groups.append((group, self._group_counts(group, env)))
                group_externals[group.name] = _group_external(group, env, external_name)
            except DefinitionError as e:
                errors.append(e)
        create_only = tuple(self.create_only)
        if autoscaled and "node_count" not in create_only:
            create_only += ("node_count",)
        try:
            self._check_policies(bool(create_only), groups)
        except DefinitionError as e:
            errors.append(e)
        if errors:
            raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
        master_flavor = resolve(self.master_flavor, env, where=ctx, field="master_flavor")
        if master_flavor is None and not self.inherit_from_template:
            master_flavor = options["flavor"]
        return ResolvedMagnum(
            environment=env,
            template=template,
            project=project,
            options=options,
            master_flavor=master_flavor,
            external_name=external_name,
            region=region,
            template_uuid=template_uuid or "",
            labels={**declared, **added},
            magnum_labels=magnum_labels,
            counts=counts,
            autoscaled=autoscaled,
            create_only=create_only,
            groups=tuple(groups),
            group_external_names=group_externals,
        )

    def _magnum_labels(
        self, template: ClusterTemplate, rendered: Mapping[str, str]
    ) -> dict[str, str]:
        """The labels Magnum gives the cluster for ``rendered`` labels: ``template``'s
        updated with them, or, given some without ``merge_labels``, those alone (magnum
        22.0.0 ``api/controllers/v1/cluster.py`` ``_post``)."""
        if rendered and not self.merge_labels:
            return dict(rendered)
        return {**template.base_labels, **rendered}

    def _check_policies(
        self, create_only: bool, groups: Sequence[tuple[NodeGroup, NodeCounts]]
    ) -> None:
        """Declared management policies that late-initialize while an object has
        create-only fields: upjet would copy them into ``spec.forProvider`` and enforce
        them (``Observe``, ``policyHasLateInit``)."""
        policies = self.management_policies or []
        if not {ManagementPolicy.ALL, ManagementPolicy.LATE_INITIALIZE} & set(policies):
            return
        if create_only or any(_group_create_only(g, c) for g, c in groups):
            raise DefinitionError(
                "late initialization (LateInitialize, or *) would copy the create-only "
                "fields (create_only, autoscaled node counts) into spec.forProvider and "
                "enforce them (upjet Observe); leave it out",
                where=self.context,
                field="management_policies",
            )

    def magnum_identity(self, environment: str) -> tuple[str, ...]:
        """What Magnum finds this cluster by in ``environment``, as far as the declaration
        tells: the project's auth URL and project (id, else name), the region, and the
        external name (the UUID, or the Magnum name without case: Magnum's MySQL tables
        compare names so). Two environments with the same identity reach one Magnum cluster
        unless their credentials lead apart (:func:`same_cloud`)."""
        project = self.project_for(environment)
        ctx = self.context
        region = resolve(self.openstack_region, environment, where=ctx, field="openstack_region")
        external = self._external_name(environment)
        return (
            project.auth_url or "",
            project.project_id or project.project_name,
            region or project.region or "",
            external if is_uuid(external) else external.casefold(),
        )

    def _external_name(self, environment: str) -> str:
        """The ``crossplane.io/external-name`` in ``environment``: ``external_name`` (a
        UUID or the name itself), else the Magnum name."""
        given = resolve(self.external_name, environment, where=self.context, field="external_name")
        return given or self.cloud_name(environment)

    def _group_counts(self, group: NodeGroup, env: str) -> NodeCounts:
        return resolve_counts(
            self.context,
            f"node_groups[{group.name}].",
            env,
            group.node_count,
            group.min_node_count,
            group.max_node_count,
        )

    def resolved(self, environment: str) -> ResolvedMagnum:
        """The cluster's values in ``environment`` (one of its environments)."""
        return self._resolved[environment]

    @mutator
    def add_node_group(self, group: NodeGroup) -> NodeGroup:
        """Append ``group`` to the node groups (checked like those given at construction)."""
        ctx = self.context
        self.check_mutable("add_node_group")
        groups = _unique_groups((*self.node_groups, group), where=ctx)
        errors: list[DefinitionError] = []
        added: dict[str, tuple[NodeCounts, str]] = {}
        for env in self.environments:
            try:
                counts = self._group_counts(group, env)
                external = (
                    _group_external(group, env, self._resolved[env].external_name)
                    if self._resolved
                    else ""
                )
                added[env] = (counts, external)
            except DefinitionError as e:
                errors.append(e)
        if errors:
            raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
        self.set_input("node_groups", groups)
        if not self._resolved:
            return group  # resolved with the other node groups in prepare()
        for env, (counts, external) in added.items():
            state = self._resolved[env]
            self._check_policies(bool(state.create_only), [*state.groups, (group, counts)])
            self._resolved[env] = replace(
                state,
                groups=(*state.groups, (group, counts)),
                group_external_names={**state.group_external_names, group.name: external},
            )
        return group

    # --- the hybrid API -------------------------------------------------------------

    def kubernetes_version(self, environment: str) -> str:
        """The template's Kubernetes version."""
        return self.template_for(environment).kubernetes_version

    def region(self, environment: str) -> str:
        """The OpenStack region the cluster is in: ``openstack_region`` (ClusterV1's
        ``region``), else its project's ("" when neither says); as terraform-provider-openstack
        does (``GetRegion``: the resource's region, else the provider's)."""
        return self._resolved[environment].region

    def template_name(self, environment: str) -> str | None:
        """The Magnum cluster template."""
        return self.template_for(environment).name

    def account(self, environment: str) -> str:
        """The OpenStack project name."""
        return self.project_for(environment).project_name

    def node_pools(self, environment: str) -> list[NodePoolSummary]:
        """Magnum's ``default-worker`` node group (the cluster's ``node_count`` and
        ``flavor``), then the declared node groups."""
        r = self._resolved[environment]
        zone = r.magnum_labels.get("availability_zone")
        default = NodePoolSummary(
            name=DEFAULT_WORKER,
            machine_size=r.magnum_flavor,
            size_inherited=r.flavor is None and r.magnum_flavor is not None,
            node_count=r.counts.node_count,
            min_node_count=r.counts.min_node_count,
            max_node_count=r.counts.max_node_count,
            placement=(zone,) if zone else (),
        )
        return [default] + [
            NodePoolSummary(
                name=group.name,
                machine_size=group.flavor,
                node_count=counts.node_count,
                min_node_count=counts.min_node_count,
                max_node_count=counts.max_node_count,
                placement=(group.availability_zone,) if group.availability_zone else (),
            )
            for group, counts in self._groups(environment)
        ]

    def retired_pool_names(self) -> tuple[str, ...]:
        """The node groups declared retired."""
        return tuple(g.name for g in self.node_groups if g.retired)

    def _groups(self, environment: str) -> list[tuple[NodeGroup, NodeCounts]]:
        """The node groups that render in ``environment``, with their counts."""
        groups = self._resolved[environment].groups
        return [(g, c) for g, c in groups if not g.retired or self.reviving]

    def kubeconfig_secret(self, environment: str) -> SecretKeyRef:
        """The Crossplane connection secret (key ``attribute.kubeconfig.raw_config``)."""
        return SecretKeyRef(
            name=self.object_name(environment),
            namespace=self.connection_secret_namespace,
            key=KUBECONFIG_KEY,
        )

    def kubeconfig_producer(self, environment: str) -> tuple[str, str, str, str]:
        """The ClusterV1 writes the connection secret."""
        return (API_VERSION, "ClusterV1", "", self.object_name(environment))

    # --- rendering ------------------------------------------------------------------

    def _policies(self, create_only: bool) -> list[ManagementPolicy] | None:
        """The declared policies; for an object with create-only fields (``create_only``,
        an autoscaled pool's ``nodeCount``) by default every one but LateInitialize (and
        Delete where the cluster is orphaned).

        With LateInitialize the provider copies the observed values into the empty
        ``forProvider`` fields after the first observation (upjet v2.2.0 ``Observe``,
        ``policyHasLateInit``), and then enforces them: it would resize the pool back
        whenever the autoscaler or a person moves it. crossplane-runtime v2.1.0 accepts
        ``[Observe, Create, Update]`` and ``[Observe, Create, Update, Delete]``
        (``pkg/reconciler/managed/policies.go``); a list with Delete would override Orphan.
        """
        if self.management_policies or not create_only:
            return self.management_policies
        policies = [ManagementPolicy.OBSERVE, ManagementPolicy.CREATE, ManagementPolicy.UPDATE]
        if self.deletion_policy is DeletionPolicy.DELETE:
            policies.append(ManagementPolicy.DELETE)
        return policies

    def render(self, environment: str) -> list[Manifest]:
        """ClusterV1, then one NodegroupV1 per node group (retired ones left out).

        The options rendered as they are go where their table entry says (``render``);
        the rest is below. ``name`` is the Magnum name, byte for byte; ``metadata.name``
        the object name. ``clusterTemplateId`` is the template's UUID (its name is an
        annotation). Create-only fields (``create_only``; ``nodeCount`` of an autoscaled
        pool) go to ``spec.initProvider``: used to create the object, then never enforced
        (and the object is not late-initialized, see :meth:`_policies`). Labels and
        ``masterFlavor`` render only when there are some. Where the cluster is paused,
        every object carries ``crossplane.io/paused: "true"``.
        """
        r = self._resolved[environment]
        name = self.object_name(environment)
        folder = self.folder(environment)
        protection = self.protection_annotations()
        paused = self.is_paused(environment)
        if paused:
            protection = {**protection, PAUSED: "true"}

        def spec_of(for_provider: dict[str, Any], create_only: Sequence[str]) -> dict[str, Any]:
            spec: dict[str, Any] = {"deletionPolicy": self.deletion_policy.value}
            policies = self._policies(bool(create_only))
            if policies:
                spec["managementPolicies"] = [p.value for p in policies]
            spec["providerConfigRef"] = {"name": r.project.name}
            spec["forProvider"] = for_provider
            return spec

        for_provider: dict[str, Any] = {
            "clusterTemplateId": r.template_uuid,
            "name": self.cloud_name(environment),
            "nodeCount": r.counts.node_count,
        }
        if r.labels:
            for_provider["labels"] = dict(r.labels)
        if r.master_flavor is not None:
            for_provider["masterFlavor"] = r.master_flavor
        cluster_spec = spec_of(for_provider, r.create_only)
        cluster_spec["writeConnectionSecretToRef"] = {
            "name": name,
            "namespace": self.connection_secret_namespace,
        }
        cluster = {
            "apiVersion": API_VERSION,
            "kind": "ClusterV1",
            "metadata": {
                "annotations": {
                    EXTERNAL_NAME: r.external_name,
                    TEMPLATE_NAME: r.template.name,
                    **protection,
                },
                "name": name,
            },
            "spec": cluster_spec,
        }
        render_values(cluster, rendered(type(self)), r.options)
        fields = create_only_fields(type(self))
        move_create_only(cluster_spec, [fields[k] for k in r.create_only])
        out = [self._manifest(environment, folder, cluster)]
        for group, counts in self._groups(environment):
            group_for_provider: dict[str, Any] = {
                "clusterId": r.external_name,
                "nodeCount": counts.node_count,
            }
            labels = group.all_labels()
            if labels:
                group_for_provider["labels"] = labels
            if counts.min_node_count is not None:
                group_for_provider["minNodeCount"] = counts.min_node_count
            if counts.max_node_count is not None:
                group_for_provider["maxNodeCount"] = counts.max_node_count
            create_only = _group_create_only(group, counts)
            group_spec = spec_of(group_for_provider, create_only)
            nodegroup = {
                "apiVersion": API_VERSION,
                "kind": "NodegroupV1",
                "metadata": {
                    "annotations": {
                        EXTERNAL_NAME: r.group_external_names[group.name],
                        **protection,
                        # Magnum refuses a node group until its cluster has an API address.
                        **({} if paused else {SYNC_WAVE: str(AFTER_CLUSTER_WAVE)}),
                    },
                    "name": f"{name}-{group.kube_name}",
                },
                "spec": group_spec,
            }
            render_object(nodegroup, rendered(type(group)), group, environment, where=group.where)
            group_fields = create_only_fields(NodeGroup)
            move_create_only(group_spec, [group_fields[k] for k in create_only])
            out.append(self._manifest(environment, folder, nodegroup))
        return out


class _MagnumIdentities:
    """Which Magnum cluster each cluster reaches in each environment, found once per fleet
    (prepare phase): two objects reaching one Magnum cluster, in two environments (two
    management clusters) or in one, would both adopt and reconcile it. provider-openstack
    v0.9.0 finds a cluster by its external name (``config/external_name.go``), which Magnum
    resolves as a name within the project (``magnum/db/sqlalchemy/api.py``
    ``get_cluster_by_name``)."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, ...], list[tuple[MagnumCluster, str]]] | None = None

    def check(self, cluster: MagnumCluster) -> None:
        """The error for ``cluster`` where an earlier declaration (by file and line, then
        environment order), or the cluster itself in an earlier environment, reaches the
        same Magnum cluster."""
        if self._by_key is None:
            found: dict[tuple[str, ...], list[tuple[MagnumCluster, str]]] = {}
            for c in cluster.fleet.declarations():
                if isinstance(c, MagnumCluster):
                    for env in c.environments:
                        if env not in c.retired_environments:
                            found.setdefault(c.magnum_identity(env), []).append((c, env))
            order = {env: i for i, env in enumerate(cluster.fleet.environment_names)}
            self._by_key = {
                key: sorted(users, key=lambda u: (u[0].where, u[0].node.path, order[u[1]]))
                for key, users in found.items()
                if len(users) > 1
            }
        for env in cluster.environments:
            key = cluster.magnum_identity(env)
            for user in self._by_key.get(key, ()):
                if user == (cluster, env):
                    break  # the earlier ones reach another cloud: later ones name this one
                if same_cloud(user, (cluster, env)):
                    raise _shared(user, (cluster, env))


def same_cloud(first: tuple[MagnumCluster, str], second: tuple[MagnumCluster, str]) -> bool:
    """Whether two (cluster, environment) pairs of one :meth:`MagnumCluster.magnum_identity`
    reach one OpenStack project: in one environment (one management cluster) always; in two,
    unless a project says ``separate_clouds`` (each environment's Secret reaches another
    cloud or project). Two project declarations with one identity (the same project id or
    name, region and auth URL, as far as declared) count as one project: the credentials in
    their Secrets, which the render cannot read, are the only thing that could tell them
    apart, so the user says so explicitly."""
    (one, one_env), (other, env) = first, second
    if one_env == env:
        return True
    a, b = one.project_for(one_env), other.project_for(env)
    return not (a.separate_clouds or b.separate_clouds)


def _shared(first: tuple[MagnumCluster, str], second: tuple[MagnumCluster, str]) -> DefinitionError:
    """The error at ``second`` (a cluster, an environment) for reaching the Magnum cluster
    ``first`` reaches."""
    (one, one_env), (other, env) = first, second
    project = other.project_for(env)
    region = other.region(env)
    place = f"project {project.project_name!r}" + (f", region {region!r}" if region else "")
    if one is other:
        names = dict.fromkeys((one.cloud_name(one_env), other.cloud_name(env)))
        what = f"environments {one_env} and {env} both render Magnum cluster " + " and ".join(
            repr(n) for n in names
        )
        fix = "put {env} in the name"
    else:
        what = (
            f"Magnum cluster {other.cloud_name(env)!r} ({env}) is also reached by cluster "
            f"{one.node.path!r} ({one.cloud_name(one_env)!r}, {one_env}, {one.where})"
        )
        fix = "rename one"
    first_project = one.project_for(one_env)
    if one_env == env:
        who, separate = "both objects", ""
    elif first_project is project:
        who = "each management cluster"
        separate = (
            f", or set separate_clouds=True on project {project.node.path!r} if each "
            "environment's credentials reach another cloud or project"
        )
    else:
        who = "each management cluster"
        place += (
            f"; projects {first_project.node.path!r} and {project.node.path!r} declare the "
            "same project, region and auth_url"
        )
        separate = (
            ", or set separate_clouds=True on both projects if their credentials reach "
            "another cloud or project"
        )
    return DefinitionError(
        f"{what} in the same OpenStack project ({place}): {who} would adopt and reconcile "
        f"the same cluster; {fix}{separate}",
        where=other.context,
        field="name",
    )
