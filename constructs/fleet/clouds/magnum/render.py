"""The objects a :class:`~fleet.MagnumCluster` renders in one environment: a Crossplane
``ClusterV1``, then one ``NodegroupV1`` per node group. The options rendered as they are go
where their table entry says (``render``); the rest is here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fleet.clouds.base import NodeCounts
from fleet.clouds.magnum.create_only import create_only_fields, move_create_only
from fleet.clouds.magnum.policies import policies_for
from fleet.clouds.magnum.pool import NodeGroup, group_create_only
from fleet.clouds.magnum.project import ANNOTATION_PREFIX
from fleet.core.layout import AFTER_CLUSTER_WAVE, SYNC_WAVE
from fleet.core.options import render_object, render_values, rendered

if TYPE_CHECKING:
    from fleet.clouds.magnum.cluster import MagnumCluster

API_VERSION = "containerinfra.openstack.crossplane.io/v1alpha1"
EXTERNAL_NAME = "crossplane.io/external-name"
PAUSED = "crossplane.io/paused"
"""crossplane-runtime's pause switch: reconciling stops while its value is ``"true"``."""
TEMPLATE_NAME = ANNOTATION_PREFIX + "cluster-template"
"""The template's name, for people: ``clusterTemplateId`` holds its UUID."""
MAGNUM_DRIVER = ANNOTATION_PREFIX + "magnum-driver"
"""The template's Magnum driver where the fleet knows it (declared, or the one driver of its
distro): what ``fleet diff`` reads to judge a change of template (in place or refused)."""
KUBERNETES_VERSION = ANNOTATION_PREFIX + "kubernetes-version"
"""The template's Kubernetes version: ``fleet diff`` refuses a skipped minor version."""


def objects(
    cluster: MagnumCluster, environment: str, groups: Sequence[tuple[NodeGroup, NodeCounts]]
) -> list[dict[str, Any]]:
    """The bodies of ``cluster`` in ``environment``: ClusterV1, then one NodegroupV1 per
    node group of ``groups`` (those that render: retired ones left out).

    ``name`` is the Magnum name, byte for byte; ``metadata.name`` the object name.
    ``clusterTemplateId`` is the template's UUID (its name is an annotation). Create-only
    fields (``create_only``; ``nodeCount`` of an autoscaled pool) go to
    ``spec.initProvider``: used to create the object, then never enforced (and the object
    is not late-initialized, see :func:`fleet.clouds.magnum.policies.policies_for`). Labels
    and ``masterFlavor`` render only when there are some. Where the cluster is paused,
    every object carries ``crossplane.io/paused: "true"``.
    """
    r = cluster.resolved(environment)
    name = cluster.object_name(environment)
    protection = cluster.protection_annotations()
    paused = cluster.is_paused(environment)
    if paused:
        protection = {**protection, PAUSED: "true"}

    def spec_of(for_provider: dict[str, Any], create_only: Sequence[str]) -> dict[str, Any]:
        spec: dict[str, Any] = {"deletionPolicy": cluster.deletion_policy.value}
        policies = policies_for(
            cluster.management_policies, cluster.deletion_policy, bool(create_only)
        )
        if policies:
            spec["managementPolicies"] = [p.value for p in policies]
        spec["providerConfigRef"] = {"name": r.project.name}
        spec["forProvider"] = for_provider
        return spec

    for_provider: dict[str, Any] = {
        "clusterTemplateId": r.template_uuid,
        "name": cluster.cloud_name(environment),
        "nodeCount": r.counts.node_count,
    }
    if r.labels:
        for_provider["labels"] = dict(r.labels)
    if r.master_flavor is not None:
        for_provider["masterFlavor"] = r.master_flavor
    cluster_spec = spec_of(for_provider, r.create_only)
    cluster_spec["writeConnectionSecretToRef"] = {
        "name": name,
        "namespace": cluster.connection_secret_namespace,
    }
    cluster_body = {
        "apiVersion": API_VERSION,
        "kind": "ClusterV1",
        "metadata": {
            "annotations": {
                EXTERNAL_NAME: r.external_name,
                TEMPLATE_NAME: r.template.name,
                KUBERNETES_VERSION: r.template.kubernetes_version,
                **({MAGNUM_DRIVER: r.driver.driver.value} if r.driver.driver else {}),
                **protection,
            },
            "name": name,
        },
        "spec": cluster_spec,
    }
    render_values(cluster_body, rendered(type(cluster)), r.options)
    fields = create_only_fields(type(cluster))
    move_create_only(cluster_spec, [fields[k] for k in r.create_only])
    out: list[dict[str, Any]] = [cluster_body]
    for group, counts in groups:
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
        create_only = group_create_only(group, counts, r.node_group_rewrites)
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
        out.append(nodegroup)
    return out
