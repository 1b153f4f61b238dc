"""What ``fleet validate`` warns about an OKE cluster adopted by OCID until its declaration
says CAPOCI's adoption tags are on it (``adoption_tags_applied=True``).

CAPOCI v0.24.0 ``cloud/scope/managed_machine_pool.go`` ``FindNodePool`` refuses a node pool
found by ``spec.id`` unless it carries ``CreatedBy=OCIClusterAPIProvider`` and
``ClusterResourceIdentifier=<ociResourceIdentifier>`` (``cloud/ociutil/ociutil.go``
``BuildClusterTags``); ``fleet.clouds.oci.importer`` prints the commands that tag them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fleet.clouds.base import FleetCluster

UNKNOWN_REACHABILITY = (
    "UNKNOWN (imported from Terraform state): say how the management cluster reaches this "
    "VCN (peering, DRG, VPN)"
)
"""What ``fleet import tfstate`` declares as ``private_api_reachable_via`` of a cluster with a
private API endpoint: the state cannot say how the management cluster reaches it."""


def adoption_warnings(
    cluster: FleetCluster, cluster_id: object, pool_ids: Sequence[object], applied: bool
) -> list[str]:
    """The warning of a cluster that adopts by OCID (its ``cluster_id`` or a pool's
    ``node_pool_id``) while ``applied`` is False; none otherwise."""
    if applied or (cluster_id is None and not any(pool_ids)):
        return []
    return [
        f"{cluster.context}: adopted by OCID, but adoption_tags_applied is not set: CAPOCI "
        "adopts a node pool found by spec.id only if it carries the freeform tags "
        "CreatedBy=OCIClusterAPIProvider and ClusterResourceIdentifier=<the cluster's "
        "oci_resource_identifier>; tag the cluster and every pool with the commands `fleet "
        "import tfstate` printed (docs/oke-clusters.md, Adopting clusters built with "
        "Terraform), then set adoption_tags_applied=True"
    ]


def reachability_warnings(cluster: FleetCluster, statements: Iterable[str | None]) -> list[str]:
    """The warning of a cluster whose ``private_api_reachable_via`` (in one of its
    environments' networks: ``statements``) is still the import's placeholder."""
    if UNKNOWN_REACHABILITY not in set(statements):
        return []
    return [
        f"{cluster.context}: private_api_reachable_via is still the import's placeholder: "
        "say how the management cluster reaches the private API endpoint (VCN peering, DRG, "
        "VPN); CAPOCI and ArgoCD on the management cluster must reach it"
    ]
