"""A :class:`~fleet.MagnumCluster` resolved for one environment (:class:`ResolvedMagnum`):
its template, project, labels as Magnum sees them, autoscaling, counts and external
names, with every check that needs them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fleet.clouds.base import NodeCounts, resolve_counts
from fleet.clouds.magnum.drivers import DriverDecision
from fleet.clouds.magnum.policies import check_late_init
from fleet.clouds.magnum.pool import NodeGroup, group_counts, group_external
from fleet.clouds.magnum.project import OpenStackProject
from fleet.clouds.magnum.template import ClusterTemplate, label_value_errors
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.options import rendered, resolved_values
from fleet.core.values import resolve

if TYPE_CHECKING:
    from fleet.clouds.magnum.cluster import MagnumCluster

AUTOSCALER_LABEL = "auto_scaling_enabled"
"""The cluster label that turns on Magnum's cluster autoscaler for ``default-worker``."""
BOUND_LABELS = ("min_node_count", "max_node_count")
"""The cluster labels that bound ``default-worker`` for the autoscaler (the fleet sets them
from ``min_node_count`` and ``max_node_count``)."""
_TRUE = frozenset(("1", "t", "true", "on", "y", "yes"))


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
    driver: DriverDecision
    """The template's Magnum driver, and how the fleet decided
    (:attr:`ClusterTemplate.driver_decision`)."""

    @property
    def node_group_rewrites(self) -> tuple[str, ...]:
        """The node group arguments the driver rewrites on an upgrade (create-only)."""
        return self.driver.node_group_rewrites()

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


def external_name_of(cluster: MagnumCluster, environment: str) -> str:
    """The ``crossplane.io/external-name`` in ``environment``: ``external_name`` (a
    UUID or the name itself), else the Magnum name."""
    given = resolve(
        cluster.external_name, environment, where=cluster.context, field="external_name"
    )
    return given or cluster.cloud_name(environment)


def magnum_labels_of(
    cluster: MagnumCluster, template: ClusterTemplate, given: Mapping[str, str]
) -> dict[str, str]:
    """The labels Magnum gives the cluster for the ``given`` labels: ``template``'s
    updated with them, or, given some without ``merge_labels``, those alone (magnum
    22.0.0 ``api/controllers/v1/cluster.py`` ``_post``)."""
    if given and not cluster.merge_labels:
        return dict(given)
    return {**template.base_labels, **given}


def resolve_environment(cluster: MagnumCluster, env: str) -> ResolvedMagnum:
    """``cluster``'s values in ``env``, or every error found in them at once: labels the
    template does not know, master count without a load balancer, half-given bounds, a
    template without a UUID in the region, autoscaling the fleet does not bound, node
    group counts and external names, late initialization with create-only fields."""
    ctx = cluster.context
    errors: list[DefinitionError] = []
    template = cluster.template_for(env)
    project = cluster.project_for(env)
    options = resolved_values(cluster, rendered(type(cluster)), env, where=ctx)
    chosen = resolve(cluster.labels, env, where=ctx, field="labels")
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
        elif not cluster.allow_extra_labels and key not in template.known_labels:
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
    min_node_count, max_node_count = cluster.min_node_count, cluster.max_node_count
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
        counts = resolve_counts(ctx, "", env, cluster.node_count, min_node_count, max_node_count)
    except DefinitionError as e:
        errors.append(e)
    base = template.base_labels
    declared = own_labels if cluster.inherit_from_template else {**base, **own_labels}
    magnum_labels = magnum_labels_of(cluster, template, declared)
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
        magnum_labels = magnum_labels_of(cluster, template, {**declared, **added})
        autoscaled = True
    elif autoscaled:
        if "node_count" not in cluster.create_only:
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
    external_name = external_name_of(cluster, env)
    groups = []
    group_externals: dict[str, str] = {}
    for group in cluster.node_groups:
        try:
            groups.append((group, group_counts(ctx, group, env)))
            group_externals[group.name] = group_external(group, env, external_name)
        except DefinitionError as e:
            errors.append(e)
    create_only = tuple(cluster.create_only)
    if autoscaled and "node_count" not in create_only:
        create_only += ("node_count",)
    driver = template.driver_decision
    # A Cluster API driver upgrades in place when the template changes: the template's
    # labels (kube_tag) change with it, and magnum-cluster-api rewrites kube_tag in Magnum.
    # Labels are ForceNew, so rendered in forProvider either would be refused for ever.
    if driver.in_place and "labels" not in create_only:
        create_only += ("labels",)
    try:
        check_late_init(
            cluster.management_policies,
            bool(create_only),
            groups,
            where=ctx,
            rewrites=driver.node_group_rewrites(),
        )
    except DefinitionError as e:
        errors.append(e)
    if errors:
        raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
    master_flavor = resolve(cluster.master_flavor, env, where=ctx, field="master_flavor")
    if master_flavor is None and not cluster.inherit_from_template:
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
        driver=driver,
    )
