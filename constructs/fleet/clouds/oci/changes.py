"""``fleet diff`` rules of the OKE plug-in: an enhanced cluster never goes back to basic, and
what a node pool's move between a fixed size and autoscaling (or a change of its bounds) does.

CAPOCI sends the control plane's ``clusterType`` in every ``UpdateCluster`` call, with every
other control-plane field (Kubernetes version, OIDC, tags, image policy), whenever the spec
differs from what OKE reports; an empty type is sent as nothing, while the comparison
defaults it to ``BASIC_CLUSTER`` (oracle/cluster-api-provider-oci v0.24.0
``cloud/scope/managed_control_plane.go``: ``UpdateControlPlane``,
``getOKEClusterTypeFromSpecType``, ``setControlPlaneSpecDefaults``; its webhook has no rule
for the field, ``api/v1beta2/ocimanagedcontrolplane_webhook.go``). OKE refuses the downgrade
("once you have created an enhanced cluster, you cannot downgrade the enhanced cluster to a
basic cluster": OCI documentation, "Creating an Enhanced Cluster",
https://docs.oracle.com/en-us/iaas/Content/ContEng/Tasks/contengcreatingenhancedclusters.htm).
So a downgrade fails every reconcile and blocks every other control-plane change; left out,
CAPOCI calls UpdateCluster on every reconcile for ever.
"""

from __future__ import annotations

from collections.abc import Sequence

from fleet.core.manifest import dig
from fleet.platform.changes import Change, ChangeRule, Verdict
from fleet.platform.cluster_api import CAPI_GROUP, INFRASTRUCTURE_GROUP

BASIC = "BASIC_CLUSTER"
ENHANCED = "ENHANCED_CLUSTER"
"""``OCIManagedControlPlane.spec.clusterType`` values (CAPOCI ``api/v1beta2``)."""

SOURCE = (
    "oracle/cluster-api-provider-oci v0.24.0 cloud/scope/managed_control_plane.go "
    "(UpdateControlPlane, getOKEClusterTypeFromSpecType, setControlPlaneSpecDefaults); OCI "
    'documentation "Creating an Enhanced Cluster"'
)


def judge_cluster_type(change: Change) -> Sequence[Verdict]:
    """``ENHANCED_CLUSTER`` -> anything else (``BASIC_CLUSTER``, or left out) is an error;
    anything -> ``ENHANCED_CLUSTER`` a warning (it cannot be undone)."""
    old = dig(change.old, "spec", "clusterType")
    new = dig(change.new, "spec", "clusterType")
    if old == new:
        return ()
    shown = f"spec.clusterType: {old or '(absent)'} -> {new or '(absent)'}"
    if old == ENHANCED:
        left_out = (
            "; left out, CAPOCI compares it as BASIC_CLUSTER but sends no type, so it calls "
            "UpdateCluster on every reconcile"
            if not new
            else ""
        )
        return (
            (
                "error",
                f"{shown}: OKE cannot downgrade an enhanced cluster; CAPOCI sends the type "
                "with every control-plane update and retries on every reconcile, so every "
                f"other control-plane change (version, OIDC, tags) is blocked too{left_out}. "
                f"Keep cluster_type={ENHANCED!r}, or blue/green: declare a new basic cluster, "
                "move the workloads, then retire this one (retired=True)",
            ),
        )
    if new == ENHANCED:
        return (
            (
                "warning",
                f"{shown}: an upgrade OKE applies in place, and one-way: an enhanced cluster "
                "can never go back to basic",
            ),
        )
    return ()


MIN_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
MAX_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
POOL_SOURCE = (
    "kubernetes-sigs/cluster-api v1.12.11 internal/webhooks/machinepool.go "
    "(calculateMachinePoolReplicas); oracle/cluster-api-provider-oci v0.24.0 "
    "cloud/scope/managed_machine_pool.go (UpdateNodePool), "
    "exp/controllers/ocimachinepoolmachine_controller.go; kubernetes/autoscaler "
    "cluster-autoscaler-1.30.7 cloudprovider/clusterapi (enforce-node-group-min-size)"
)
SHRINK = (
    "OKE picks the nodes to remove and cordons and drains them first (CAPOCI sends only the size)"
)


def _bounds(body: object) -> tuple[int, int] | None:
    annotations = dig(body, "metadata", "annotations") or {}
    try:
        return int(annotations[MIN_SIZE]), int(annotations[MAX_SIZE])
    except (KeyError, TypeError, ValueError):
        return None


def judge_pool_size(change: Change) -> Sequence[Verdict]:
    """A MachinePool of an OKE pool that goes from a fixed size to autoscaled, back, or
    changes its bounds: what Cluster API's webhook, CAPOCI and the autoscaler then do."""
    old, new = _bounds(change.old), _bounds(change.new)
    replicas_old = dig(change.old, "spec", "replicas")
    replicas_new = dig(change.new, "spec", "replicas")
    if old is None and new is not None:
        low, high = new
        verdict: Verdict = (
            "note",
            f"fixed -> autoscaled ({low}..{high}): spec.replicas leaves git; Cluster API's "
            "webhook keeps the pool's current size when it is inside the bounds, else sets "
            "the nearer bound, and the cluster's autoscaler scales it up from there (never "
            "down: CAPOCI cannot remove the node it picks)",
        )
        if isinstance(replicas_old, int) and replicas_old > high:
            verdict = (
                "warning",
                f"fixed -> autoscaled ({low}..{high}): the pool had {replicas_old} nodes; "
                f"Cluster API's webhook sets {high}, and CAPOCI shrinks the OKE pool: {SHRINK}",
            )
        elif isinstance(replicas_old, int) and replicas_old < low:
            verdict = (
                "note",
                f"fixed -> autoscaled ({low}..{high}): the pool grows from {replicas_old} to "
                f"{low} (Cluster API's webhook), then the autoscaler takes over",
            )
        return (verdict,)
    if old is not None and new is None:
        low, high = old
        return (
            (
                "warning",
                f"autoscaled ({low}..{high}) -> fixed ({replicas_new}): the autoscaler stops "
                f"scaling the pool and CAPOCI resizes it from its current size (kubectl get "
                f"machinepool) to {replicas_new}; if that is fewer nodes, {SHRINK}",
            ),
        )
    if old is not None and new is not None and old != new:
        (low, high), (new_low, new_high) = old, new
        notes: list[Verdict] = []
        if new_low > low:
            notes.append(
                (
                    "note",
                    f"min_node_count {low} -> {new_low}: the autoscaler grows a smaller pool "
                    "to the new minimum (--enforce-node-group-min-size)",
                )
            )
        if new_high < high:
            notes.append(
                (
                    "warning",
                    f"max_node_count {high} -> {new_high}: a pool above the new maximum is not "
                    "shrunk (the webhook keeps a set size, the autoscaler does not scale "
                    f"down): scale it by hand (kubectl scale machinepool --replicas={new_high}); "
                    f"{SHRINK}",
                )
            )
        if not notes:
            notes.append(("note", f"bounds {low}..{high} -> {new_low}..{new_high}"))
        return tuple(notes)
    return ()


VERSION_SOURCE = (
    "kubernetes-sigs/cluster-api v1.12.11 config/crd/bases/cluster.x-k8s.io_clusters.yaml, "
    "cluster.x-k8s.io_machinepools.yaml (v1beta1 served, v1beta2 stored; conversion webhook)"
)


def judge_api_version(change: Change) -> Sequence[Verdict]:
    """A Cluster API object moved between v1beta1 and v1beta2: the same stored object."""
    old, new = change.old.get("apiVersion"), change.new.get("apiVersion")
    if old == new:
        return ()
    return (
        (
            "note",
            f"{old} -> {new}: the same object at another served version (Cluster API "
            "stores v1beta2 and converts; references name apiGroup instead of apiVersion and "
            "namespace); nothing changes on the cluster",
        ),
    )


OKE_CHANGE_RULES = (
    ChangeRule(
        groups=(INFRASTRUCTURE_GROUP,),
        kinds=("OCIManagedControlPlane",),
        paths=(("spec", "clusterType"),),
        judge=judge_cluster_type,
        source=SOURCE,
    ),
    ChangeRule(
        groups=(CAPI_GROUP,),
        kinds=("MachinePool",),
        paths=(("metadata", "annotations"), ("spec", "replicas")),
        judge=judge_pool_size,
        source=POOL_SOURCE,
    ),
    ChangeRule(
        groups=(CAPI_GROUP,),
        kinds=("Cluster", "MachinePool"),
        paths=(("apiVersion",),),
        judge=judge_api_version,
        source=VERSION_SOURCE,
    ),
)
"""What ``fleet diff`` judges when an OKE control plane changes."""
