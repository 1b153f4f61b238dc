"""An OpenStack Magnum cluster through Crossplane provider-openstack (Figures 10 -> 12, 13):
the declaration and its option table. Its node groups are in :mod:`.pool`, its values per
environment in :mod:`.resolved`, its objects in :mod:`.render`, and which Magnum cluster it
reaches in :mod:`.identity`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import ClassVar, TypeVar

from fleet.clouds.base import (
    CloudPlugin,
    FleetCluster,
    IntPerEnv,
    NodeCounts,
    NodePoolSummary,
)
from fleet.clouds.magnum import render
from fleet.clouds.magnum.create_only import check_create_only
from fleet.clouds.magnum.identity import MagnumIdentities
from fleet.clouds.magnum.names import check_cluster_name
from fleet.clouds.magnum.plugin import MAGNUM_PLUGIN
from fleet.clouds.magnum.policies import (
    DeletionPolicy,
    ManagementPolicy,
    check_late_init,
    deletion_policy_for,
    management_policies_for,
)
from fleet.clouds.magnum.pool import (
    DEFAULT_WORKER,
    NodeGroup,
    group_counts,
    group_external,
    unique_groups,
)
from fleet.clouds.magnum.project import OpenStackProject
from fleet.clouds.magnum.render import API_VERSION
from fleet.clouds.magnum.resolved import ResolvedMagnum, external_name_of, resolve_environment
from fleet.clouds.magnum.template import ClusterTemplate, TemplateCatalog, is_uuid
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.manifest import Manifest
from fleet.core.options import option
from fleet.core.refs import Ref, mutator, target_of
from fleet.core.validators import check_dns_label
from fleet.core.values import PerEnv, SecretKeyRef, caller_location, resolve

KUBECONFIG_KEY = "attribute.kubeconfig.raw_config"
_T = TypeVar("_T")
_D = TypeVar("_D")


def _given(value: _T | PerEnv[_T]) -> list[_T]:
    """Every value ``value`` gives: itself, or a ``per_env``'s values and default."""
    if isinstance(value, PerEnv):
        default = [] if value.default is None else [value.default]
        return [*value.values.values(), *default]
    return [value]


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
    project (id, else name), region and auth URL (:func:`fleet.clouds.magnum.identity.same_cloud`).

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
        inherits="template.flavor",
        nonempty=True,
        doc="The workers' flavor (``default-worker``; default: the template's).",
    )
    keypair: str | PerEnv[str] | None = option(
        default=None,
        render="spec.forProvider.keypair",
        terraform="keypair",
        inherits="template.keypair_id",
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
        cloud_default=1,
        minimum=1,
        doc="The control-plane nodes.",
    )
    master_flavor: str | PerEnv[str] | None = option(
        default=None,
        terraform="master_flavor",
        inherits="template.master_flavor",
        nonempty=True,
        doc="The control-plane nodes' flavor (default: ``flavor``; with "
        "inherit_from_template, the template's).",
    )
    create_timeout_minutes: int = option(
        default=60,
        render="spec.forProvider.createTimeout",
        terraform="create_timeout",
        cloud_default=60,
        minimum=1,
        doc="How long Magnum may take to create the cluster.",
    )
    labels: Mapping[str, str] | PerEnv[Mapping[str, str]] | None = option(
        default=None,
        terraform="labels",
        inherits="template.labels",
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
        inherits="template.docker_volume_size",
        minimum=1,
        doc="The Docker volume size in GB.",
    )
    floating_ip_enabled: bool | PerEnv[bool] | None = option(
        default=None,
        render="spec.forProvider.floatingIpEnabled",
        terraform="floating_ip_enabled",
        inherits="template.floating_ip_enabled",
        doc="Whether the nodes get floating IPs.",
    )
    master_lb_enabled: bool | PerEnv[bool] | None = option(
        default=None,
        render="spec.forProvider.masterLbEnabled",
        terraform="master_lb_enabled",
        inherits="template.master_lb_enabled",
        doc="Whether the API gets a load balancer.",
    )
    fixed_network: str | PerEnv[str] | None = option(
        default=None,
        render="spec.forProvider.fixedNetwork",
        terraform="fixed_network",
        inherits="template.fixed_network",
        nonempty=True,
        doc="An existing network for the nodes.",
    )
    fixed_subnet: str | PerEnv[str] | None = option(
        default=None,
        render="spec.forProvider.fixedSubnet",
        terraform="fixed_subnet",
        inherits="template.fixed_subnet",
        nonempty=True,
        doc="An existing subnet of fixed_network.",
    )
    discovery_url: str | PerEnv[str] | None = option(
        default=None,
        render="spec.forProvider.discoveryUrl",
        terraform="discovery_url",
        computed=True,
        nonempty=True,
        doc="The etcd discovery URL.",
    )
    openstack_region: str | PerEnv[str] | None = option(
        default=None,
        render="spec.forProvider.region",
        terraform="region",
        computed=True,
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
        self.deletion_policy = deletion_policy_for(
            self._deletion_policy, self.deletion_protection, where=ctx
        )
        self.management_policies: list[ManagementPolicy] | None = management_policies_for(
            self._management_policies, self.deletion_policy, where=ctx
        )
        check_dns_label(
            self.connection_secret_namespace, where=ctx, field="connection_secret_namespace"
        )
        self.node_groups = unique_groups(self.node_groups, where=ctx)
        self.create_only = check_create_only(self.create_only, type(self), where=ctx)
        self._resolved: dict[str, ResolvedMagnum] = {}
        self._taken: dict[str, ClusterTemplate] = {}
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
        prepare phase): the one an upgrade rollout gave it there (:meth:`take_template`),
        else the declared one."""
        taken = self._taken.get(environment)
        if taken is not None:
            return taken
        return self.declared_template_for(environment)

    def declared_template_for(self, environment: str) -> ClusterTemplate:
        """The cluster template declared for ``environment`` (``template=``)."""
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
        self.fleet.catalog(MagnumIdentities).check(self, MagnumCluster)

    def take_template(self, environment: str, template: ClusterTemplate) -> None:
        """Render ``template`` in ``environment`` instead of the declared one, checked like a
        declared one: a promoted step of the fleet's upgrade rollout
        (:class:`fleet.clouds.magnum.rollout.MagnumTarget`). Only from an Aspect."""
        self.check_mutable("take_template")
        TemplateCatalog.of(self.fleet).add(template)
        self._taken[environment] = template
        self._resolved[environment] = resolve_environment(self, environment)

    def _resolve_all(self) -> None:
        self._resolved = {env: resolve_environment(self, env) for env in self.environments}

    def magnum_identity(self, environment: str) -> tuple[str, ...]:
        """What Magnum finds this cluster by in ``environment``, as far as the declaration
        tells: the project's auth URL and project (id, else name), the region, and the
        external name (the UUID, or the Magnum name without case: Magnum's MySQL tables
        compare names so). Two environments with the same identity reach one Magnum cluster
        unless their credentials lead apart (:func:`fleet.clouds.magnum.identity.same_cloud`)."""
        project = self.project_for(environment)
        ctx = self.context
        region = resolve(self.openstack_region, environment, where=ctx, field="openstack_region")
        external = external_name_of(self, environment)
        return (
            project.auth_url or "",
            project.project_id or project.project_name,
            region or project.region or "",
            external if is_uuid(external) else external.casefold(),
        )

    def resolved(self, environment: str) -> ResolvedMagnum:
        """The cluster's values in ``environment`` (one of its environments)."""
        return self._resolved[environment]

    @mutator
    def add_node_group(self, group: NodeGroup) -> NodeGroup:
        """Append ``group`` to the node groups (checked like those given at construction)."""
        ctx = self.context
        self.check_mutable("add_node_group")
        groups = unique_groups((*self.node_groups, group), where=ctx)
        errors: list[DefinitionError] = []
        added: dict[str, tuple[NodeCounts, str]] = {}
        for env in self.environments:
            try:
                counts = group_counts(ctx, group, env)
                external = (
                    group_external(group, env, self._resolved[env].external_name)
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
            check_late_init(
                self.management_policies,
                bool(state.create_only),
                [*state.groups, (group, counts)],
                where=ctx,
                rewrites=state.node_group_rewrites,
            )
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

    def render(self, environment: str) -> list[Manifest]:
        """ClusterV1, then one NodegroupV1 per node group (retired ones left out)
        (:func:`fleet.clouds.magnum.render.objects`)."""
        folder = self.folder(environment)
        return [
            self._manifest(environment, folder, body)
            for body in render.objects(self, environment, self._groups(environment))
        ]
