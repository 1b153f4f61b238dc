"""What an OKE cluster needs from its environment's management cluster, checked at synth
time: a route to the cluster's API endpoint, and, for an autoscaled cluster, what its
autoscaler needs (the management API server's address, a registration, a node to run on,
a release for the cluster's Kubernetes minor).

Why the route matters: Cluster API (the kubeconfig, node references), ArgoCD (the
registration and every sync) and External Secrets reach the OKE API endpoint from the
management cluster. The endpoint's NSG admits tcp/6443 only from ``api_allowed_cidrs``
(:class:`~fleet.OkeVcn`); a cluster the management cluster cannot reach is created and then
never registered (its ``Cluster`` reads Degraded: :mod:`fleet.platform.capi_health`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fleet.clouds.oci.autoscaler import RELEASES, release_for
from fleet.clouds.oci.network import OkeNetwork, OkeVcn
from fleet.core.errors import DefinitionError
from fleet.platform.management import ManagementCluster

if TYPE_CHECKING:
    from fleet.clouds.oci.cluster import OciManagedCluster


def check_private_route(network: OkeNetwork, *, where: str) -> None:
    """A private endpoint of a new VCN needs ``api_allowed_cidrs``: without them its NSG
    admits tcp/6443 from the workers only, and the management cluster has no way in,
    whatever ``private_api_reachable_via`` says."""
    if (
        isinstance(network, OkeVcn)
        and not network.public_endpoint()
        and not network.api_allowed_cidrs
    ):
        raise DefinitionError(
            "a private API endpoint without api_allowed_cidrs admits only the cluster's own "
            "workers: list the management cluster's routed range (the route "
            f"{network.private_api_reachable_via!r} ends at the endpoint's NSG), or Cluster "
            "API and ArgoCD never reach the cluster and it is never registered",
            where=where,
            field="network",
        )


def check_management_route(cluster: OciManagedCluster, environment: str) -> None:
    """One of the egress CIDRs the environment's :class:`~fleet.ManagementCluster` declares
    must lie inside one of the endpoint's ``api_allowed_cidrs`` (an :class:`~fleet.OkeVcn`;
    an existing VCN's NSGs are OCI's, not the fleet's, and are not checked). One is enough:
    a public endpoint sees the management cluster's NAT address, a private one its routed
    range, and a management cluster may have both."""
    network = cluster.network_for(environment)
    management = ManagementCluster.of(cluster.fleet, environment)
    egress = management.egress_cidrs(environment) if management else None
    if not isinstance(network, OkeVcn) or egress is None or management is None:
        return
    allowed = [ipaddress.IPv4Network(c) for c in network.api_allowed_cidrs]
    if any(ipaddress.IPv4Network(c).subnet_of(a) for c in egress for a in allowed):
        return
    kind = "public" if network.public_endpoint() else "private"
    raise DefinitionError(
        f"none of the management cluster's egress CIDR blocks {list(egress)} ({environment}, "
        f"ManagementCluster at {management.where}) is in api_allowed_cidrs "
        f"{list(network.api_allowed_cidrs)}: the {kind} API endpoint would refuse Cluster API "
        "and ArgoCD, and the cluster would never be registered",
        where=cluster.context,
        field="network",
    )


def check_autoscaler(
    cluster: OciManagedCluster, environment: str, autoscaled: Sequence[str]
) -> None:
    """What the autoscaler of ``cluster`` in ``environment`` needs, ``autoscaled`` naming the
    autoscaled pools: the management API server (a ManagementCluster), a registration in
    ArgoCD (which deploys it), a release of its minor, and a pool that always has a node
    for it to run on."""
    where, field = cluster.context, f"node_pools[{autoscaled[0]}].min_node_count"
    if ManagementCluster.of(cluster.fleet, environment) is None:
        raise DefinitionError(
            f"autoscaled node pools need the management cluster's API server in "
            f"{environment}: their autoscaler runs in the OKE cluster and scales its "
            "MachinePools there; declare ManagementCluster(fleet, ..., api_server=...)",
            where=where,
            field=field,
        )
    if not cluster.register_in_argocd:
        raise DefinitionError(
            "autoscaled node pools need the cluster registered in ArgoCD, which deploys its "
            "autoscaler into it: remove register_in_argocd=False, or give fixed sizes",
            where=where,
            field=field,
        )
    version = cluster.kubernetes_version(environment)
    if release_for(version) is None:
        known = ", ".join(f"{a}.{b}" for a, b in sorted(RELEASES))
        raise DefinitionError(
            f"no cluster-autoscaler release is pinned for Kubernetes {version} ({environment}); "
            f"the fleet pins one per minor: {known} (fleet/clouds/oci/autoscaler.py)",
            where=where,
            field="kubernetes_version",
        )
    if not any(
        (p.counts.min_node_count or 0) >= 1 or (p.counts.node_count or 0) >= 1
        for p in cluster.resolved(environment).pools
        if not p.spec.retired
    ):
        raise DefinitionError(
            f"every node pool can be empty in {environment}, and the autoscaler runs on the "
            "cluster's own nodes: give one pool a node_count or a min_node_count of 1 or more",
            where=where,
            field=field,
        )
