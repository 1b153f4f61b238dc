"""An OpenStack Magnum cluster through Crossplane provider-openstack (Figures 10 -> 12, 13)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
from fleet.clouds.magnum.project import OpenStackProject
from fleet.clouds.magnum.template import ClusterTemplate, catalog
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.fleet import Fleet
from fleet.core.manifest import Manifest
from fleet.core.validators import check_dns_label, check_label_values
from fleet.core.values import PerEnv, SecretKeyRef, caller_location, resolve

API_VERSION = "containerinfra.openstack.crossplane.io/v1alpha1"
EXTERNAL_NAME = "crossplane.io/external-name"
KUBECONFIG_KEY = "attribute.kubeconfig.raw_config"
DELETION_POLICIES = ("Orphan", "Delete")
MANAGEMENT_POLICIES = ("*", "Create", "Update", "Delete", "Observe", "LateInitialize")
DEFAULT_WORKER = "default-worker"
"""Magnum's name for the node group that ``node_count`` and ``flavor`` describe."""


@dataclass(frozen=True, kw_only=True)
class NodeGroup:
    """A Magnum node group: nodes of one flavor, usually in one availability zone.

    ``availability_zone`` becomes the ``availability_zone`` label. ``min_node_count``
    and ``max_node_count`` are rendered only when set (autoscaling). Counts may differ
    per environment (:class:`PerEnv`). ``retired=True`` removes the node group from the
    render in every environment (see docs: retiring); its name stays taken.
    """

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

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", self.where or caller_location())
        ctx = f"{self.where} (node group {self.name})"
        check_dns_label(self.name, where=ctx, field="name")
        if not isinstance(self.retired, bool):
            raise DefinitionError(
                f"must be True or False, got {self.retired!r}", where=ctx, field="retired"
            )
        if not self.flavor or not isinstance(self.flavor, str):
            raise DefinitionError("a node group needs a flavor", where=ctx, field="flavor")
        check_label_values(self.labels, where=ctx, field="labels")

    def all_labels(self) -> dict[str, str]:
        """The node group's labels, ``availability_zone`` included."""
        labels = dict(self.labels)
        if self.availability_zone:
            labels["availability_zone"] = self.availability_zone
        return labels


class MagnumCluster(FleetCluster):
    """A Magnum cluster with its node groups, as Crossplane ``ClusterV1`` + ``NodegroupV1``.

    The cluster adopts an existing Magnum cluster of the same name (external name)
    and, by default, is orphaned rather than deleted when its object goes away.

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
    emitted_kinds = bearing_kinds
    plugin: ClassVar[CloudPlugin] = MAGNUM_PLUGIN

    def __init__(
        self,
        scope: Fleet,
        construct_id: str,
        *,
        name: str | PerEnv[str],
        environments: Sequence[str],
        project: OpenStackProject,
        template: ClusterTemplate | str,
        flavor: str | PerEnv[str],
        keypair: str | PerEnv[str],
        node_count: IntPerEnv,
        master_count: IntPerEnv = 1,
        master_flavor: str | PerEnv[str] | None = None,
        create_timeout_minutes: int = 60,
        labels: Mapping[str, str] | PerEnv[Mapping[str, str]] | None = None,
        allow_extra_labels: bool = False,
        merge_labels: bool = True,
        node_groups: Sequence[NodeGroup] = (),
        deletion_policy: str | None = None,
        management_policies: Sequence[str] | None = None,
        connection_secret_namespace: str = "crossplane-clusters",
        external_name: str | PerEnv[str] | None = None,
        fleet_labels: Mapping[str, str] | None = None,
        deletion_protection: bool = True,
        register_in_argocd: bool = True,
        retired: bool | Sequence[str] = False,
        paused: bool | Sequence[str] = False,
    ) -> None:
        """Arguments left out: ``master_flavor`` is ``flavor``; ``labels`` only the
        template's base labels; ``deletion_policy`` is ``Orphan`` while
        ``deletion_protection`` is on, else ``Delete``; ``management_policies`` is not
        rendered (Crossplane's default, all); ``external_name`` is the cluster name;
        ``retired`` False (True: retired everywhere; a list: in those environments)."""
        super().__init__(
            scope,
            construct_id,
            name=name,
            environments=environments,
            fleet_labels=fleet_labels,
            deletion_protection=deletion_protection,
            register_in_argocd=register_in_argocd,
            retired=retired,
            paused=paused,
        )
        ctx = self.context
        if not isinstance(project, OpenStackProject):
            raise DefinitionError(
                f"must be an OpenStackProject, got {type(project).__name__}",
                where=ctx,
                field="project",
            )
        self.project = project
        self.template = (
            template
            if isinstance(template, ClusterTemplate)
            else catalog().get(template, where=ctx)
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
        self.deletion_policy = deletion_policy or ("Orphan" if deletion_protection else "Delete")
        if self.deletion_policy not in DELETION_POLICIES:
            raise DefinitionError(
                f"must be one of {', '.join(DELETION_POLICIES)}, got {deletion_policy!r}",
                where=ctx,
                field="deletion_policy",
            )
        if management_policies is not None:
            bad = [p for p in management_policies if p not in MANAGEMENT_POLICIES]
            if bad or not management_policies:
                raise DefinitionError(
                    f"must be a non-empty list of {', '.join(MANAGEMENT_POLICIES)}, got "
                    f"{list(management_policies)!r}",
                    where=ctx,
                    field="management_policies",
                )
        self.management_policies = list(management_policies) if management_policies else None
        self.connection_secret_namespace = check_dns_label(
            connection_secret_namespace, where=ctx, field="connection_secret_namespace"
        )
        self.node_groups = unique_pools(
            node_groups, NodeGroup, where=ctx, field="node_groups", noun="node group"
        )
        self.merge_labels = merge_labels
        self._resolved = {
            env: self._resolve(
                env,
                flavor=flavor,
                master_flavor=master_flavor,
                keypair=keypair,
                node_count=node_count,
                master_count=master_count,
                labels=labels,
                allow_extra_labels=allow_extra_labels,
                external_name=external_name,
            )
            for env in self.environments
        }
        for env in self.environments:
            project.use_in(env)

    def _resolve(
        self,
        env: str,
        *,
        flavor: str | PerEnv[str],
        master_flavor: str | PerEnv[str] | None,
        keypair: str | PerEnv[str],
        node_count: IntPerEnv,
        master_count: IntPerEnv,
        labels: Mapping[str, str] | PerEnv[Mapping[str, str]] | None,
        allow_extra_labels: bool,
        external_name: str | PerEnv[str] | None,
    ) -> dict[str, Any]:
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
            elif not allow_extra_labels and key not in self.template.known_labels:
                errors.append(self.template.unknown_label_error(key, where=ctx))
        counts: NodeCounts | None = None
        try:
            counts = resolve_counts(ctx, "", env, node_count, None, None)
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
        resolved = {
            "flavor": flavor_value,
            "master_flavor": text(master_flavor, "master_flavor")
            if master_flavor
            else flavor_value,
            "keypair": text(keypair, "keypair"),
            "external_name": text(external_name, "external_name")
            if external_name
            else self.cluster_name(env),
            "labels": {**self.template.base_labels, **own_labels},
            "counts": counts,
            "master_count": masters,
            "groups": groups,
        }
        if errors:
            raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
        return resolved

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
        zone = r["labels"].get("availability_zone")
        default = NodePoolSummary(
            name=DEFAULT_WORKER,
            machine_size=r["flavor"],
            node_count=r["counts"].node_count,
            min_node_count=None,
            max_node_count=None,
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
        groups: list[tuple[NodeGroup, NodeCounts]] = self._resolved[environment]["groups"]
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

    def render(self, environment: str) -> list[Manifest]:
        """ClusterV1, then one NodegroupV1 per node group (retired ones left out)."""
        r = self._resolved[environment]
        name = self.cluster_name(environment)
        folder = self.folder(environment)
        protection = self.protection_annotations()
        common_spec: dict[str, Any] = {"deletionPolicy": self.deletion_policy}
        if self.management_policies:
            common_spec["managementPolicies"] = self.management_policies
        common_spec["providerConfigRef"] = {"name": self.project.name}
        cluster = {
            "apiVersion": API_VERSION,
            "kind": "ClusterV1",
            "metadata": {
                "annotations": {EXTERNAL_NAME: r["external_name"], **protection},
                "name": name,
            },
            "spec": {
                **common_spec,
                "forProvider": {
                    "clusterTemplateId": self.template.name,
                    "createTimeout": self.create_timeout_minutes,
                    "flavor": r["flavor"],
                    "keypair": r["keypair"],
                    "labels": r["labels"],
                    "masterCount": r["master_count"],
                    "masterFlavor": r["master_flavor"],
                    "mergeLabels": self.merge_labels,
                    "name": r["external_name"],
                    "nodeCount": r["counts"].node_count,
                },
                "writeConnectionSecretToRef": {
                    "name": name,
                    "namespace": self.connection_secret_namespace,
                },
            },
        }
        out = [self._manifest(environment, folder, cluster)]
        for group, counts in self._groups(environment):
            for_provider: dict[str, Any] = {
                "clusterId": r["external_name"],
                "flavorId": group.flavor,
                "labels": group.all_labels(),
                "mergeLabels": group.merge_labels,
                "name": group.name,
                "nodeCount": counts.node_count,
            }
            if counts.min_node_count is not None:
                for_provider["minNodeCount"] = counts.min_node_count
            if counts.max_node_count is not None:
                for_provider["maxNodeCount"] = counts.max_node_count
            nodegroup = {
                "apiVersion": API_VERSION,
                "kind": "NodegroupV1",
                "metadata": {
                    "annotations": {
                        EXTERNAL_NAME: f"{r['external_name']}/{group.name}",
                        **protection,
                    },
                    "name": f"{name}-{group.name}",
                },
                "spec": {**common_spec, "forProvider": for_provider},
            }
            out.append(self._manifest(environment, folder, nodegroup))
        return out
