"""An OpenStack Magnum cluster through Crossplane provider-openstack (Figures 10 -> 12, 13)."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Unpack

from fleet.clouds.base import (
    CloudPlugin,
    FleetCluster,
    IntPerEnv,
    Lifecycle,
    NodeCounts,
    NodePoolSummary,
    resolve_counts,
    unique_pools,
)
from fleet.clouds.magnum.plugin import MAGNUM_PLUGIN
from fleet.clouds.magnum.project import ANNOTATION_PREFIX, OpenStackProject
from fleet.clouds.magnum.template import ClusterTemplate, TemplateCatalog, is_uuid
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.layout import AFTER_CLUSTER_WAVE, SYNC_WAVE
from fleet.core.manifest import Manifest
from fleet.core.refs import Ref, mutator, target_of
from fleet.core.tree import Scope
from fleet.core.validators import check_dns_label, check_label_values, checked_arguments
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


@checked_arguments
@dataclass(frozen=True, kw_only=True)
class NodeGroup:
    """A Magnum node group: nodes of one flavor, usually in one availability zone.

    ``availability_zone`` becomes the ``availability_zone`` label. ``min_node_count``
    and ``max_node_count`` are rendered only when set (autoscaling); then ``node_count``
    is only the size at creation (``spec.initProvider``), so Crossplane does not resize
    the group back after whatever scales it. Magnum's own autoscaler manages only the
    cluster's ``default-worker`` group (see :class:`MagnumCluster`); for this group the
    bounds are Magnum's resize limits. ``docker_volume_size_gb``, ``image_id`` and ``role``
    (NodegroupV1's ``dockerVolumeSize``, ``imageId``, ``role``) are rendered only when set
    (Magnum's defaults when left out). ``external_name`` is Terraform's id of the node
    group, ``<cluster id>/<node group id>`` (default: the cluster's external name, ``/``,
    the node group's name). Counts may differ per environment (:class:`PerEnv`).
    ``retired=True`` removes the node group from the render in every environment (see
    docs: retiring); its name stays taken.
    """

    argument_noun: ClassVar[str] = "node group"
    """How locations name it: ``file:line (node group <name>)``."""

    name: str
    flavor: str
    node_count: IntPerEnv
    min_node_count: IntPerEnv | None = None
    max_node_count: IntPerEnv | None = None
    availability_zone: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    merge_labels: bool = True
    retired: bool = False
    where: str = field(default="", compare=False)
    docker_volume_size_gb: int | None = None
    image_id: str | None = None
    role: str | None = None
    external_name: str | PerEnv[str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", self.where or caller_location())
        ctx = f"{self.where} (node group {self.name})"
        check_dns_label(self.name, where=ctx, field="name")
        if self.name in RESERVED_NODE_GROUPS:
            raise DefinitionError(
                f"{self.name!r} is the node group Magnum creates for every cluster (give the "
                "cluster's flavor, node_count and master_count instead)",
                where=ctx,
                field="name",
            )
        if not isinstance(self.retired, bool):
            raise DefinitionError(
                f"must be True or False, got {self.retired!r}", where=ctx, field="retired"
            )
        if not self.flavor or not isinstance(self.flavor, str):
            raise DefinitionError("a node group needs a flavor", where=ctx, field="flavor")
        check_label_values(self.labels, where=ctx, field="labels")
        check_optional(self.docker_volume_size_gb, int, where=ctx, field="docker_volume_size_gb")
        check_optional(self.image_id, str, where=ctx, field="image_id")
        check_optional(self.role, str, where=ctx, field="role")

    def all_labels(self) -> dict[str, str]:
        """The node group's labels, ``availability_zone`` included."""
        labels = dict(self.labels)
        if self.availability_zone:
            labels["availability_zone"] = self.availability_zone
        return labels


@dataclass(frozen=True, kw_only=True)
class MagnumClusterState:
    """A :class:`MagnumCluster` resolved for one environment: the values it renders."""

    environment: str
    flavor: str
    master_flavor: str
    keypair: str
    external_name: str
    """The ``crossplane.io/external-name``: the cluster name, or the Magnum UUID adopted."""
    template_uuid: str
    """The template's UUID in the project's region: ``clusterTemplateId``."""
    labels: Mapping[str, str]
    """Template base labels, the cluster's own, and the autoscaling labels."""
    counts: NodeCounts
    """``default-worker``'s size; min/max set when the autoscaler manages it."""
    master_count: int
    groups: tuple[tuple[NodeGroup, NodeCounts], ...]
    """Every declared node group (retired ones too) with its counts."""
    docker_volume_size_gb: int | None = None
    floating_ip_enabled: bool | None = None
    master_lb_enabled: bool | None = None
    fixed_network: str | None = None
    fixed_subnet: str | None = None
    discovery_url: str | None = None
    openstack_region: str | None = None
    """The optional ClusterV1 arguments: None where not set (the template's or Magnum's
    value applies); see :attr:`extra_for_provider`."""

    @property
    def extra_for_provider(self) -> dict[str, Any]:
        """The optional ClusterV1 arguments that are set (forProvider name -> value)."""
        return {
            key: value
            for key, value in (
                ("discoveryUrl", self.discovery_url),
                ("dockerVolumeSize", self.docker_volume_size_gb),
                ("fixedNetwork", self.fixed_network),
                ("fixedSubnet", self.fixed_subnet),
                ("floatingIpEnabled", self.floating_ip_enabled),
                ("masterLbEnabled", self.master_lb_enabled),
                ("region", self.openstack_region),
            )
            if value is not None
        }

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

    def __init__(
        self,
        scope: Scope,
        construct_id: str,
        *,
        name: str | PerEnv[str],
        environments: Sequence[str] | None = None,
        project: OpenStackProject | Ref[OpenStackProject],
        template: ClusterTemplate | str,
        flavor: str | PerEnv[str],
        keypair: str | PerEnv[str],
        node_count: IntPerEnv,
        min_node_count: IntPerEnv | None = None,
        max_node_count: IntPerEnv | None = None,
        master_count: IntPerEnv = 1,
        master_flavor: str | PerEnv[str] | None = None,
        create_timeout_minutes: int = 60,
        labels: Mapping[str, str] | PerEnv[Mapping[str, str]] | None = None,
        allow_extra_labels: bool = False,
        merge_labels: bool = True,
        node_groups: Sequence[NodeGroup] = (),
        deletion_policy: DeletionPolicy | str | None = None,
        management_policies: Sequence[ManagementPolicy | str] | None = None,
        connection_secret_namespace: str = "crossplane-clusters",
        external_name: str | PerEnv[str] | None = None,
        docker_volume_size_gb: int | PerEnv[int] | None = None,
        floating_ip_enabled: bool | PerEnv[bool] | None = None,
        master_lb_enabled: bool | PerEnv[bool] | None = None,
        fixed_network: str | PerEnv[str] | None = None,
        fixed_subnet: str | PerEnv[str] | None = None,
        discovery_url: str | PerEnv[str] | None = None,
        openstack_region: str | PerEnv[str] | None = None,
        **lifecycle: Unpack[Lifecycle],
    ) -> None:
        """Arguments left out: ``master_flavor`` is ``flavor``; ``labels`` only the
        template's base labels; ``deletion_policy`` is ``Orphan`` while
        ``deletion_protection`` is on, else ``Delete``; ``management_policies`` is not
        rendered (Crossplane's default, all); ``external_name`` is the cluster name;
        ``retired`` False (True: retired everywhere; a list: in those environments).
        ``docker_volume_size_gb``, ``floating_ip_enabled``, ``master_lb_enabled``,
        ``fixed_network``, ``fixed_subnet``, ``discovery_url`` and ``openstack_region``
        (ClusterV1's ``region``) are rendered only when set (each may differ per
        environment): left out, the template's or Magnum's value applies."""
        super().__init__(
            scope,
            construct_id,
            name=name,
            environments=environments,
            **lifecycle,
        )
        ctx = self.context
        if not isinstance(project, OpenStackProject) and not (
            isinstance(project, Ref) and issubclass(project.target_kind, OpenStackProject)
        ):
            raise DefinitionError(
                f"must be an OpenStackProject or a reference to one, got {project!r}",
                where=ctx,
                field="project",
            )
        self._project = project
        # A template by name is looked up in the prepare phase, among the fleet's templates.
        self._template: ClusterTemplate | str = TemplateCatalog.of(self.fleet).use(
            template, where=ctx
        )
        if isinstance(create_timeout_minutes, bool) or not isinstance(create_timeout_minutes, int):
            raise DefinitionError(
                f"must be an integer, got {create_timeout_minutes!r}",
                where=ctx,
                field="create_timeout_minutes",
            )
        if create_timeout_minutes <= 0:
            raise DefinitionError(
                f"must be more than 0, got {create_timeout_minutes}",
                where=ctx,
                field="create_timeout_minutes",
            )
        self.create_timeout_minutes = create_timeout_minutes
        chosen_policy = deletion_policy or (
            DeletionPolicy.ORPHAN if self.deletion_protection else DeletionPolicy.DELETE
        )
        if chosen_policy not in DELETION_POLICIES:
            raise DefinitionError(
                f"must be one of {', '.join(DELETION_POLICIES)}, got {deletion_policy!r}",
                where=ctx,
                field="deletion_policy",
            )
        self.deletion_policy = DeletionPolicy(chosen_policy)
        if management_policies is not None:
            bad = [p for p in management_policies if p not in MANAGEMENT_POLICIES]
            if bad or not management_policies:
                raise DefinitionError(
                    f"must be a non-empty list of {', '.join(MANAGEMENT_POLICIES)}, got "
                    f"{list(management_policies)!r}",
                    where=ctx,
                    field="management_policies",
                )
        self.management_policies = (
            [ManagementPolicy(p) for p in management_policies] if management_policies else None
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
        self.connection_secret_namespace = check_dns_label(
            connection_secret_namespace, where=ctx, field="connection_secret_namespace"
        )
        self.node_groups = unique_pools(
            node_groups, NodeGroup, where=ctx, field="node_groups", noun="node group"
        )
        self.merge_labels = merge_labels
        self._inputs: dict[str, Any] = dict(
            flavor=flavor,
            master_flavor=master_flavor,
            keypair=keypair,
            node_count=node_count,
            min_node_count=min_node_count,
            max_node_count=max_node_count,
            master_count=master_count,
            labels=labels,
            allow_extra_labels=allow_extra_labels,
            external_name=external_name,
        )
        self._options: tuple[tuple[str, type, Any], ...] = (
            ("discovery_url", str, discovery_url),
            ("docker_volume_size_gb", int, docker_volume_size_gb),
            ("fixed_network", str, fixed_network),
            ("fixed_subnet", str, fixed_subnet),
            ("floating_ip_enabled", bool, floating_ip_enabled),
            ("master_lb_enabled", bool, master_lb_enabled),
            ("openstack_region", str, openstack_region),
        )
        self._resolved: dict[str, MagnumClusterState] = {}
        if isinstance(self._template, ClusterTemplate) and not isinstance(project, Ref):
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
        ctx = self.context
        self._resolved = {env: self._resolve(env, **self._inputs) for env in self.environments}
        options = self._options
        for env in self.environments:
            self._resolved[env] = replace(
                self._resolved[env],
                **{
                    name: check_optional(
                        resolve(value, env, where=ctx, field=name), kind, where=ctx, field=name
                    )
                    for name, kind, value in options
                    if value is not None
                },
            )

    def _resolve(
        self,
        env: str,
        *,
        flavor: str | PerEnv[str],
        master_flavor: str | PerEnv[str] | None,
        keypair: str | PerEnv[str],
        node_count: IntPerEnv,
        min_node_count: IntPerEnv | None,
        max_node_count: IntPerEnv | None,
        master_count: IntPerEnv,
        labels: Mapping[str, str] | PerEnv[Mapping[str, str]] | None,
        allow_extra_labels: bool,
        external_name: str | PerEnv[str] | None,
    ) -> MagnumClusterState:
        ctx = self.context
        errors: list[DefinitionError] = []

        def text(value: str | PerEnv[str], field_name: str) -> str:
            v = resolve(value, env, where=ctx, field=field_name)
            if not isinstance(v, str) or not v:
                errors.append(
                    DefinitionError(
                        f"must be a non-empty string, got {v!r}", where=ctx, field=field_name
                    )
                )
                return ""
            return v

        chosen = None if labels is None else resolve(labels, env, where=ctx, field="labels")
        own_labels: dict[str, str] = dict(chosen or {})
        for key, value in own_labels.items():
            if not isinstance(value, str):
                errors.append(
                    DefinitionError(
                        f"label values are strings, got {value!r} for {key!r}",
                        where=ctx,
                        field="labels",
                    )
                )
            elif key in AUTOSCALING_LABELS:
                errors.append(
                    DefinitionError(
                        f"label {key!r} is set from min_node_count and max_node_count; "
                        "set those instead",
                        where=ctx,
                        field="labels",
                    )
                )
            elif not allow_extra_labels and key not in self.template.known_labels:
                errors.append(self.template.unknown_label_error(key, where=ctx))
        if (min_node_count is None) != (max_node_count is None):
            errors.append(
                DefinitionError(
                    "an autoscaled cluster needs both min_node_count and max_node_count",
                    where=ctx,
                    field="min_node_count" if min_node_count is None else "max_node_count",
                )
            )
            min_node_count = max_node_count = None
        template_uuid = self.template.uuid_for(self.project.region or "")
        if template_uuid is None:
            errors.append(self.template.missing_uuid_error(self.project.region or "", where=ctx))
        counts = NodeCounts(0, None, None)
        try:
            counts = resolve_counts(ctx, "", env, node_count, min_node_count, max_node_count)
            masters = resolve_counts(ctx, "master_", env, master_count, None, None).node_count or 0
            if masters < 1:
                raise DefinitionError(
                    f"must be 1 or more, got {masters}", where=ctx, field="master_count"
                )
        except DefinitionError as e:
            errors.append(e)
            masters = 0
        groups = []
        for group in self.node_groups:
            try:
                groups.append(
                    (
                        group,
                        resolve_counts(
                            ctx,
                            f"node_groups[{group.name}].",
                            env,
                            group.node_count,
                            group.min_node_count,
                            group.max_node_count,
                        ),
                    )
                )
            except DefinitionError as e:
                errors.append(e)
        flavor_value = text(flavor, "flavor")
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
        resolved = MagnumClusterState(
            environment=env,
            flavor=flavor_value,
            master_flavor=text(master_flavor, "master_flavor") if master_flavor else flavor_value,
            keypair=text(keypair, "keypair"),
            external_name=text(external_name, "external_name")
            if external_name
            else self.cluster_name(env),
            template_uuid=template_uuid or "",
            labels=all_labels,
            counts=counts,
            master_count=masters,
            groups=tuple(groups),
        )
        if errors:
            raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
        return resolved

    def state(self, environment: str) -> MagnumClusterState:
        """The cluster resolved for ``environment`` (one of its environments)."""
        return self._resolved[environment]

    @mutator
    def add_node_group(self, group: NodeGroup) -> NodeGroup:
        """Append ``group`` to the node groups (checked like those given at construction)."""
        ctx = self.context
        self.check_mutable("add_node_group")
        self.set_input(
            "node_groups",
            unique_pools(
                (*self.node_groups, group),
                NodeGroup,
                where=ctx,
                field="node_groups",
                noun="node group",
            ),
        )
        errors: list[DefinitionError] = []
        added: dict[str, NodeCounts] = {}
        for env in self.environments:
            try:
                added[env] = resolve_counts(
                    ctx,
                    f"node_groups[{group.name}].",
                    env,
                    group.node_count,
                    group.min_node_count,
                    group.max_node_count,
                )
            except DefinitionError as e:
                errors.append(e)
        if errors:
            self.set_input("node_groups", self.node_groups[:-1])
            raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
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
        """The project's OpenStack region ("" when the project does not say)."""
        return self.project.region or ""

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

        ``clusterTemplateId`` is the template's UUID (its name is an annotation). Where a
        pool is autoscaled, ``nodeCount`` goes to ``spec.initProvider``: used to create
        it, then left to the autoscaler (and the object is not late-initialized, see
        :meth:`_policies`). Where the cluster is paused, every object carries
        ``crossplane.io/paused: "true"``.
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
            "createTimeout": self.create_timeout_minutes,
            "flavor": r.flavor,
            "keypair": r.keypair,
            "labels": dict(r.labels),
            "masterCount": r.master_count,
            "masterFlavor": r.master_flavor,
            "mergeLabels": self.merge_labels,
            "name": r.external_name if not is_uuid(r.external_name) else name,
        }
        cluster_spec: dict[str, Any] = {**common(r.autoscaled), "forProvider": for_provider}
        if r.autoscaled:
            cluster_spec["initProvider"] = {"nodeCount": r.counts.node_count}
        else:
            for_provider["nodeCount"] = r.counts.node_count
        for_provider.update(r.extra_for_provider)
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
        out = [self._manifest(environment, folder, cluster)]
        for group, counts in self._groups(environment):
            group_for_provider: dict[str, Any] = {
                "clusterId": r.external_name,
                "flavorId": group.flavor,
                "labels": group.all_labels(),
                "mergeLabels": group.merge_labels,
                "name": group.name,
            }
            autoscaled = counts.min_node_count is not None or counts.max_node_count is not None
            if not autoscaled:
                group_for_provider["nodeCount"] = counts.node_count
            if counts.min_node_count is not None:
                group_for_provider["minNodeCount"] = counts.min_node_count
            if counts.max_node_count is not None:
                group_for_provider["maxNodeCount"] = counts.max_node_count
            for key, value in (
                ("dockerVolumeSize", group.docker_volume_size_gb),
                ("imageId", group.image_id),
                ("role", group.role),
            ):
                if value is not None:
                    group_for_provider[key] = value
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
            out.append(self._manifest(environment, folder, nodegroup))
        return out


def check_optional(value: Any, kind: type, *, where: str, field: str) -> Any:
    """``value`` unchanged when it is None or a ``kind`` (an int that is no bool; a
    non-empty string; a positive size); else the error naming ``field``."""
    if value is None:
        return None
    ok = isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
    if ok and kind is str and not value:
        ok = False
    if ok and kind is int and value < 1:
        raise DefinitionError(f"must be 1 or more, got {value}", where=where, field=field)
    if not ok:
        what = {bool: "True or False", int: "a whole number", str: "a non-empty string"}[kind]
        raise DefinitionError(f"must be {what}, got {value!r}", where=where, field=field)
    return value
