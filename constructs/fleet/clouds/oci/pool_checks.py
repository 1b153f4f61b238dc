"""The checks of an OKE node pool against its cluster: the name CAPOCI gives it, its
availability domains, and the subnet and NSG names it takes from each environment's network.

They run when the cluster is declared and when a pool is added to it
(:meth:`~fleet.clouds.oci.cluster.OciManagedCluster.add_node_pool`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fleet.clouds.oci.cluster_values import CniType
from fleet.clouds.oci.network import OkeNetwork
from fleet.clouds.oci.pool import MAX_NODE_POOL_NAME, OkeNodePool
from fleet.clouds.oci.validators import AVAILABILITY_DOMAIN
from fleet.core.errors import DefinitionError
from fleet.core.validators import check_dns_label

if TYPE_CHECKING:
    from fleet.clouds.oci.cluster import OciManagedCluster


def check_ad_region(ad: str, region: str, where: str, prefix: str = "") -> None:
    """``ad`` (``Uocm:EU-FRANKFURT-1-AD-1``) is an availability domain of ``region``."""
    match = AVAILABILITY_DOMAIN.match(ad)
    if match is None or match.group("region") != region.upper():
        raise DefinitionError(
            f"{ad} is not in region {region}", where=where, field=prefix + "availability_domains"
        )


def check_pool(cluster: OciManagedCluster, pool: OkeNodePool) -> None:
    """One pool against the cluster: name length, placement, subnet and NSG names."""
    ctx = cluster.context
    for env in cluster.environments:
        full = f"{cluster.object_name(env)}-{pool.name}"
        field_name = f"node_pools[{pool.name}].name (with the cluster name)"
        check_dns_label(full, where=ctx, field=field_name)
        if len(full) > MAX_NODE_POOL_NAME:
            raise DefinitionError(
                f"{full!r} is {len(full)} characters; CAPOCI refuses OKE node pool "
                f"names over {MAX_NODE_POOL_NAME}: shorten the pool or cluster name",
                where=ctx,
                field=field_name,
            )
    for ad in pool.availability_domains or ():
        check_ad_region(ad, cluster.oci_region, ctx, f"node_pools[{pool.name}].")
    if not (pool.availability_domains or cluster.default_ads):
        raise DefinitionError(
            "no availability domain: give the cluster's or the pool's",
            where=ctx,
            field=f"node_pools[{pool.name}].availability_domains",
        )
    for network in cluster.networks.values():
        _check_names(cluster, pool, network)


def _check_names(cluster: OciManagedCluster, pool: OkeNodePool, network: OkeNetwork) -> None:
    """The pool's subnet and NSG names against one environment's network."""
    names = network.names()
    refs = [
        ("subnet_name", [pool.subnet_name], names.subnets),
        ("nsg_names", pool.nsg_names, names.nsgs),
    ]
    if cluster.cni is CniType.VCN_NATIVE:  # flannel pools have no pod subnets or NSGs
        refs += [
            ("pod_subnet_names", pool.pod_subnet_names, names.subnets),
            ("pod_nsg_names", pool.pod_nsg_names, names.nsgs),
        ]
    for field_name, wanted, known in refs:
        for item in wanted:
            if item not in known:
                raise DefinitionError(
                    f"{item!r} is not a {field_name.split('_')[-2]} of the cluster's "
                    f"network (known: {', '.join(sorted(known)) or 'none'})",
                    where=cluster.context,
                    field=f"node_pools[{pool.name}].{field_name}",
                )
