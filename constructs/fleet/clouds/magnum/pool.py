"""A Magnum node group (``NodeGroup``): its fields, its own checks, and what a cluster
derives from it per environment (counts, external name, create-only fields)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from fleet.clouds.base import IntPerEnv, NodeCounts, resolve_counts, unique_pools
from fleet.clouds.magnum.create_only import check_create_only
from fleet.clouds.magnum.names import check_node_group_name
from fleet.clouds.magnum.template import label_value_errors
from fleet.core.errors import DefinitionError
from fleet.core.names import object_name_for
from fleet.core.options import option, value_type
from fleet.core.values import PerEnv, caller_location, resolve

DEFAULT_WORKER = "default-worker"
"""Magnum's name for the node group that ``node_count`` and ``flavor`` describe."""
RESERVED_NODE_GROUPS = (DEFAULT_WORKER, "default-master")
"""Magnum names a cluster's own node groups ``default-<role>`` (magnum/conductor/utils.py);
another node group of that name is refused (NodeGroupAlreadyExists, api/controllers/v1/
nodegroup.py)."""


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
        render="spec.forProvider.flavorId",
        terraform="flavor_id",
        inherits="cluster.flavor",
        doc="The nodes' flavor.",
    )
    node_count: IntPerEnv = option(terraform="node_count", doc="The number of nodes.")
    min_node_count: IntPerEnv | None = option(
        default=None,
        terraform="min_node_count",
        cloud_default=0,
        doc="Magnum's lower resize limit.",
    )
    max_node_count: IntPerEnv | None = option(
        default=None, terraform="max_node_count", doc="Magnum's upper resize limit."
    )
    availability_zone: str | None = option(
        default=None, doc="The availability zone (the ``availability_zone`` label)."
    )
    labels: Mapping[str, str] = option(
        factory=dict, terraform="labels", inherits="cluster.labels", doc="Labels of the node group."
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
        inherits="template.image",
        nonempty=True,
        doc="The nodes' image (the template's when left out).",
    )
    role: str | None = option(
        default=None,
        render="spec.forProvider.role",
        terraform="role",
        cloud_default="worker",
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


def group_counts(where: str, group: NodeGroup, env: str) -> NodeCounts:
    """``group``'s counts in ``env`` (``where``: the cluster's context)."""
    return resolve_counts(
        where,
        f"node_groups[{group.name}].",
        env,
        group.node_count,
        group.min_node_count,
        group.max_node_count,
    )


def group_create_only(
    group: NodeGroup, counts: NodeCounts, rewrites: Sequence[str] = ()
) -> tuple[str, ...]:
    """The NodegroupV1 arguments of ``group`` rendered in ``spec.initProvider`` only: its
    ``create_only``, ``node_count`` where it has bounds (something else resizes it), and
    ``rewrites``, what the cluster's Magnum driver rewrites on an upgrade
    (:data:`fleet.clouds.magnum.drivers.NODE_GROUP_REWRITES`)."""
    fields = tuple(group.create_only)
    bounded = counts.min_node_count is not None or counts.max_node_count is not None
    if bounded and "node_count" not in fields:
        fields += ("node_count",)
    return fields + tuple(f for f in rewrites if f not in fields)


def group_external(group: NodeGroup, environment: str, cluster_external: str) -> str:
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


def unique_groups(groups: Sequence[object], *, where: str) -> tuple[NodeGroup, ...]:
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
