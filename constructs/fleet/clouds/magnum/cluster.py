"""An OpenStack Magnum cluster through Crossplane provider-openstack (Figures 10 -> 12, 13)."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from fleet.clouds.base import (
    CloudPlugin,
    FleetCluster,
    IntPerEnv,
    NodeCounts,
    NodePoolSummary,
    resolve_counts,
    unique_pools,
)
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
from fleet.core.options import (
    option,
    render_object,
    render_values,
    rendered,
    resolved_values,
    value_type,
)
from fleet.core.refs import Ref, mutator, target_of
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
AUTOSCALING_LABELS = ("auto_scaling_enabled", "min_node_count", "max_node_count")
"""The cluster labels that turn on Magnum's cluster autoscaler and bound ``default-worker``."""


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
    the node group's name). Counts may differ per environment (:class:`PerEnv`).
    ``retired=True`` removes the node group from the render in every environment (see
    docs: retiring); its name stays taken.
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", caller_location())
        ctx = f"{self.where} (node group {self.name})"
        check_dns_label(self.name, where=ctx, field="name")
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

    def all_labels(self) -> dict[str, str]:
        """The node group's labels, ``availability_zone`` included."""
        labels = dict(self.labels)
        if self.availability_zone:
            labels["availability_zone"] = self.availability_zone
        return labels


@dataclass(frozen=True, kw_only=True)
class ResolvedMagnum:
    """A :class:`MagnumCluster` resolved for one environment: the values it renders
    (:meth:`MagnumCluster.resolved`)."""

    environment: str
    options: Mapping[str, Any]
    """The options rendered as they are (``flavor``, ``docker_volume_size_gb``, ...), by
    name, resolved for the environment; None where not set (the template's or Magnum's
    value applies)."""
    master_flavor: str
    external_name: str
    """The ``crossplane.io/external-name``: the cluster name, or the Magnum UUID adopted."""
    region: str
    """The effective OpenStack region: ``openstack_region``, else the project's ("")."""
    template_uuid: str
    """The template's UUID in :attr:`region`: ``clusterTemplateId``."""
    labels: Mapping[str, str]
    """Template base labels, the cluster's own, and the autoscaling labels."""
    counts: NodeCounts
    """``default-worker``'s size; min/max set when the autoscaler manages it."""
    groups: tuple[tuple[NodeGroup, NodeCounts], ...]
    """Every declared node group (retired ones too) with its counts."""

    @property
    def flavor(self) -> str:
        """The workers' flavor."""
        return str(self.options["flavor"])

    @property
    def keypair(self) -> str:
        """The nodes' keypair."""
        return str(self.options["keypair"])

    @property
    def master_count(self) -> int:
        """The control-plane nodes."""
        return int(self.options["master_count"])

    @property
    def autoscaled(self) -> bool:
        """Whether Magnum's autoscaler manages ``default-worker``."""
        return self.counts.min_node_count is not None


class MagnumCluster(FleetCluster):
    """A Magnum cluster with its node groups, as Crossplane ``ClusterV1`` + ``NodegroupV1``.

    The cluster adopts an existing Magnum cluster of the same name (external name)
    and, by default, is orphaned rather than deleted when its object goes away.
    ``external_name`` adopts a Magnum cluster by its UUID instead (its node groups are
    then found as ``<uuid>/<group name>``); once rendered, the external name never changes
    (``fleet diff`` refuses it; docs/upstream-behaviour.md says why).

    ``min_node_count`` and ``max_node_count`` (both, or neither) hand ``default-worker`` to
    Magnum's cluster autoscaler: the cluster gets the labels ``auto_scaling_enabled``,
    ``min_node_count`` and ``max_node_count``, and ``node_count`` becomes the size at
    creation only (``spec.initProvider``). Labels cannot change on an existing cluster,
    so this is chosen when the cluster is created.

    The arguments are the fields below (each with its documentation); the optional
    ClusterV1 arguments (``docker_volume_size_gb``, ``floating_ip_enabled``, ...,
    ``openstack_region``) are rendered only when set, and may differ per environment: left
    out, the template's or Magnum's value applies.

    Example::

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

    _project: OpenStackProject | Ref[OpenStackProject] = option(
        alias="project",
        doc="The OpenStack project (its ProviderConfig), or a reference to one.",
    )
    _template: ClusterTemplate | str = option(
        alias="template", doc="The cluster template, or its name in the fleet's templates."
    )
    flavor: str | PerEnv[str] = option(
        render="spec.forProvider.flavor",
        terraform="flavor",
        nonempty=True,
        doc="The workers' flavor (``default-worker``).",
    )
    keypair: str | PerEnv[str] = option(
        render="spec.forProvider.keypair",
        terraform="keypair",
        nonempty=True,
        doc="The Nova keypair of the nodes.",
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
        doc="The control-plane nodes' flavor (default: ``flavor``).",
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
        doc="The cluster's labels over the template's base labels.",
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

    def __post_init__(self) -> None:
        """The cluster's checks, and its values resolved for each environment."""
        super().__post_init__()
        ctx = self.context
        if isinstance(self._project, Ref) and not issubclass(
            self._project.target_kind, OpenStackProject
        ):
            raise DefinitionError(
                f"must be an OpenStackProject or a reference to one, got {self._project!r}",
                where=ctx,
                field="project",
            )
        # A template by name is looked up in the prepare phase, among the fleet's templates.
        self._template = TemplateCatalog.of(self.fleet).use(self._template, where=ctx)
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
        self.node_groups = unique_pools(
            self.node_groups, NodeGroup, where=ctx, field="node_groups", noun="node group"
        )
        self._resolved: dict[str, ResolvedMagnum] = {}
        if isinstance(self._template, ClusterTemplate) and not isinstance(self._project, Ref):
            self._resolve_all()  # checked now; otherwise in prepare()

    @property
    def project(self) -> OpenStackProject:
        """The OpenStack project (a reference resolves in the prepare phase)."""
        return target_of(self._project, "project")

    @property
    def template(self) -> ClusterTemplate:
        """The cluster template (one given by name resolves in the prepare phase)."""
        if isinstance(self._template, str):
            raise TemplateCatalog.unresolved(self._template, path=self.node.path)
        return self._template

    def prepare(self) -> None:
        """Look up a template given by name, then check the inputs that need the template
        and the project (when either was not known at construction)."""
        if isinstance(self._template, str):
            self._template = TemplateCatalog.of(self.fleet).get(self._template, where=self.context)
        if not self._resolved:
            self._resolve_all()

    def _resolve_all(self) -> None:
        self._resolved = {env: self._resolve(env) for env in self.environments}

    def _resolve(self, env: str) -> ResolvedMagnum:
        ctx = self.context
        errors: list[DefinitionError] = []
        options = resolved_values(self, rendered(type(self)), env, where=ctx)
        chosen = resolve(self.labels, env, where=ctx, field="labels")
        own_labels: dict[str, str] = dict(chosen or {})
        for key in own_labels:
            if key in AUTOSCALING_LABELS:
                errors.append(
                    DefinitionError(
                        f"label {key!r} is set from min_node_count and max_node_count; "
                        "set those instead",
                        where=ctx,
                        field="labels",
                    )
                )
            elif not self.allow_extra_labels and key not in self.template.known_labels:
                errors.append(self.template.unknown_label_error(key, where=ctx))
        errors += label_value_errors(own_labels, where=ctx, field="labels")
        if options["master_lb_enabled"] is False and options["master_count"] > 1:
            errors.append(
                DefinitionError(
                    f"master_count {options['master_count']} with master_lb_enabled=False "
                    f'({env}): Magnum refuses it ("master_count must be 1 when '
                    'master_lb_enabled is False"); enable the load balancer or use one master',
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
        region = options["openstack_region"] or self.project.region or ""
        template_uuid = self.template.uuid_for(region)
        if template_uuid is None:
            errors.append(self.template.missing_uuid_error(region, where=ctx))
        counts = NodeCounts(0, None, None)
        try:
            counts = resolve_counts(ctx, "", env, self.node_count, min_node_count, max_node_count)
        except DefinitionError as e:
            errors.append(e)
        groups = []
        for group in self.node_groups:
            try:
                groups.append((group, self._group_counts(group, env)))
            except DefinitionError as e:
                errors.append(e)
        all_labels = {**self.template.base_labels, **own_labels}
        if counts.min_node_count is not None and counts.max_node_count is not None:
            all_labels.update(
                auto_scaling_enabled="true",
                min_node_count=str(counts.min_node_count),
                max_node_count=str(counts.max_node_count),
            )
        elif self.template.base_labels.get("auto_scaling_enabled", "").lower() == "true":
            errors.append(
                DefinitionError(
                    "the template turns on Magnum's autoscaler (auto_scaling_enabled): set "
                    "min_node_count and max_node_count, or Crossplane and the autoscaler "
                    "fight over node_count",
                    where=ctx,
                    field="min_node_count",
                )
            )
        if errors:
            raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
        external_name = resolve(self.external_name, env, where=ctx, field="external_name")
        master_flavor = resolve(self.master_flavor, env, where=ctx, field="master_flavor")
        return ResolvedMagnum(
            environment=env,
            options=options,
            master_flavor=master_flavor or options["flavor"],
            external_name=external_name or self.cluster_name(env),
            region=region,
            template_uuid=template_uuid or "",
            labels=all_labels,
            counts=counts,
            groups=tuple(groups),
        )

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
        groups = unique_pools(
            (*self.node_groups, group), NodeGroup, where=ctx, field="node_groups", noun="node group"
        )
        errors: list[DefinitionError] = []
        added: dict[str, NodeCounts] = {}
        for env in self.environments:
            try:
                added[env] = self._group_counts(group, env)
            except DefinitionError as e:
                errors.append(e)
        if errors:
            raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
        self.set_input("node_groups", groups)
        if not self._resolved:
            return group  # resolved with the other node groups in prepare()
        for env, counts in added.items():
            state = self._resolved[env]
            self._resolved[env] = replace(state, groups=(*state.groups, (group, counts)))
        return group

    # --- the hybrid API -------------------------------------------------------------

    def kubernetes_version(self, environment: str) -> str:
        """The template's Kubernetes version."""
        return self.template.kubernetes_version

    def region(self, environment: str) -> str:
        """The OpenStack region the cluster is in: ``openstack_region`` (ClusterV1's
        ``region``), else its project's ("" when neither says); as terraform-provider-openstack
        does (``GetRegion``: the resource's region, else the provider's)."""
        return self._resolved[environment].region

    def template_name(self, environment: str) -> str | None:
        """The Magnum cluster template."""
        return self.template.name

    def account(self, environment: str) -> str:
        """The OpenStack project name."""
        return self.project.project_name

    def node_pools(self, environment: str) -> list[NodePoolSummary]:
        """Magnum's ``default-worker`` node group (the cluster's ``node_count`` and
        ``flavor``), then the declared node groups."""
        r = self._resolved[environment]
        zone = r.labels.get("availability_zone")
        default = NodePoolSummary(
            name=DEFAULT_WORKER,
            machine_size=r.flavor,
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
            name=self.cluster_name(environment),
            namespace=self.connection_secret_namespace,
            key=KUBECONFIG_KEY,
        )

    def kubeconfig_producer(self, environment: str) -> tuple[str, str, str, str]:
        """The ClusterV1 writes the connection secret."""
        return (API_VERSION, "ClusterV1", "", self.cluster_name(environment))

    # --- rendering ------------------------------------------------------------------

    def _policies(self, autoscaled: bool) -> list[ManagementPolicy] | None:
        """The declared policies; for an autoscaled pool by default every one but
        LateInitialize (and Delete where the cluster is orphaned).

        With LateInitialize the provider copies the observed ``nodeCount`` into
        ``forProvider`` after the first observation, and then resizes the pool back to it
        whenever the autoscaler moves it; a list with Delete would override Orphan.
        """
        if self.management_policies or not autoscaled:
            return self.management_policies
        policies = [ManagementPolicy.OBSERVE, ManagementPolicy.CREATE, ManagementPolicy.UPDATE]
        if self.deletion_policy is DeletionPolicy.DELETE:
            policies.append(ManagementPolicy.DELETE)
        return policies

    def render(self, environment: str) -> list[Manifest]:
        """ClusterV1, then one NodegroupV1 per node group (retired ones left out).

        The options rendered as they are go where their table entry says (``render``);
        the rest is below. ``clusterTemplateId`` is the template's UUID (its name is an
        annotation). Where a pool is autoscaled, ``nodeCount`` goes to
        ``spec.initProvider``: used to create it, then left to the autoscaler (and the
        object is not late-initialized, see :meth:`_policies`). Where the cluster is
        paused, every object carries ``crossplane.io/paused: "true"``.
        """
        r = self._resolved[environment]
        name = self.cluster_name(environment)
        folder = self.folder(environment)
        protection = self.protection_annotations()
        paused = self.is_paused(environment)
        if paused:
            protection = {**protection, PAUSED: "true"}

        def common(autoscaled: bool) -> dict[str, Any]:
            spec: dict[str, Any] = {"deletionPolicy": self.deletion_policy.value}
            policies = self._policies(autoscaled)
            if policies:
                spec["managementPolicies"] = [p.value for p in policies]
            spec["providerConfigRef"] = {"name": self.project.name}
            return spec

        for_provider: dict[str, Any] = {
            "clusterTemplateId": r.template_uuid,
            "labels": dict(r.labels),
            "masterFlavor": r.master_flavor,
            "name": r.external_name if not is_uuid(r.external_name) else name,
        }
        cluster_spec: dict[str, Any] = {**common(r.autoscaled), "forProvider": for_provider}
        if r.autoscaled:
            cluster_spec["initProvider"] = {"nodeCount": r.counts.node_count}
        else:
            for_provider["nodeCount"] = r.counts.node_count
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
                    TEMPLATE_NAME: self.template.name,
                    **protection,
                },
                "name": name,
            },
            "spec": cluster_spec,
        }
        render_values(cluster, rendered(type(self)), r.options)
        out = [self._manifest(environment, folder, cluster)]
        for group, counts in self._groups(environment):
            group_for_provider: dict[str, Any] = {
                "clusterId": r.external_name,
                "labels": group.all_labels(),
            }
            autoscaled = counts.min_node_count is not None or counts.max_node_count is not None
            if not autoscaled:
                group_for_provider["nodeCount"] = counts.node_count
            if counts.min_node_count is not None:
                group_for_provider["minNodeCount"] = counts.min_node_count
            if counts.max_node_count is not None:
                group_for_provider["maxNodeCount"] = counts.max_node_count
            group_spec: dict[str, Any] = {**common(autoscaled), "forProvider": group_for_provider}
            if autoscaled:
                group_spec["initProvider"] = {"nodeCount": counts.node_count}
            group_external = (
                resolve(group.external_name, environment, where=group.where, field="external_name")
                if group.external_name is not None
                else f"{r.external_name}/{group.name}"
            )
            nodegroup = {
                "apiVersion": API_VERSION,
                "kind": "NodegroupV1",
                "metadata": {
                    "annotations": {
                        EXTERNAL_NAME: group_external,
                        **protection,
                        # Magnum refuses a node group until its cluster has an API address.
                        **({} if paused else {SYNC_WAVE: str(AFTER_CLUSTER_WAVE)}),
                    },
                    "name": f"{name}-{group.name}",
                },
                "spec": group_spec,
            }
            render_object(nodegroup, rendered(type(group)), group, environment, where=group.where)
            out.append(self._manifest(environment, folder, nodegroup))
        return out
