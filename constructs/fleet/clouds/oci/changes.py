"""``fleet diff`` rules of the OKE plug-in: an enhanced cluster never goes back to basic.

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

from fleet.platform.changes import Change, ChangeRule, Verdict, dig
from fleet.platform.cluster_api import INFRASTRUCTURE_GROUP

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


OKE_CHANGE_RULES = (
    ChangeRule(
        groups=(INFRASTRUCTURE_GROUP,),
        kinds=("OCIManagedControlPlane",),
        paths=(("spec", "clusterType"),),
        judge=judge_cluster_type,
        source=SOURCE,
    ),
)
"""What ``fleet diff`` judges when an OKE control plane changes."""
