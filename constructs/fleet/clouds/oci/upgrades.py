"""``fleet diff`` rules of the OKE plug-in for Kubernetes versions: the control plane moves
one minor version at a time and never back, and the node pools follow in a later change.

CAPOCI passes ``OCIManagedControlPlane.spec.version`` to OKE's ``UpdateCluster`` as it is
and has no rule of its own for it (oracle/cluster-api-provider-oci v0.24.0
``cloud/scope/managed_control_plane.go`` ``UpdateControlPlane``;
``api/v1beta2/ocimanagedcontrolplane_webhook.go`` checks no version), and a node pool's
``spec.version`` to ``UpdateNodePool`` (``cloud/scope/managed_machine_pool.go``). What is
refused is Kubernetes' rule, which OKE follows: the API server never skips a minor version
when upgrading, and a kubelet is never newer than the API server (kubernetes/website
``content/en/releases/version-skew-policy.md``, "Supported component upgrade order"); OKE
never downgrades a control plane (OCI documentation, "Upgrade Best Practices": "you cannot
downgrade the control plane nodes").
"""

from __future__ import annotations

from collections.abc import Sequence

from fleet.core.errors import DefinitionError
from fleet.core.manifest import dig
from fleet.core.validators import check_kubernetes_version
from fleet.platform.changes import Body, Change, ChangeRule, Objects, Verdict
from fleet.platform.cluster_api import INFRASTRUCTURE_GROUP

CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
GUIDE = 'docs/guide.md, "Upgrade Kubernetes across the fleet"'
SOURCE = (
    "oracle/cluster-api-provider-oci v0.24.0 cloud/scope/managed_control_plane.go "
    "(UpdateControlPlane), cloud/scope/managed_machine_pool.go; kubernetes/website "
    'content/en/releases/version-skew-policy.md; OCI documentation "Upgrade Best Practices"'
)


def minor_of(version: object) -> tuple[int, int, int] | None:
    """``v1.30.1`` -> (1, 30, 1); None when it is no Kubernetes version."""
    if not isinstance(version, str):
        return None
    try:
        return check_kubernetes_version(version, where="", field="")
    except DefinitionError:
        return None


def judge_control_plane_version(change: Change) -> Sequence[Verdict]:
    """The control plane's version: a decrease or a skipped minor is an error, one minor
    (or a patch) up an in-place upgrade (a warning: OKE replaces the control plane)."""
    old, new = dig(change.old, "spec", "version"), dig(change.new, "spec", "version")
    before, after = minor_of(old), minor_of(new)
    if old == new or before is None or after is None:
        return ()
    shown = f"spec.version: {old} -> {new}"
    if after < before:
        return (
            (
                "error",
                f"{shown}: OKE cannot downgrade a control plane; CAPOCI would send the "
                "version in every UpdateCluster and fail on every reconcile. Keep "
                f"{old}, or build a new cluster at the older version",
            ),
        )
    if after[0] != before[0] or after[1] > before[1] + 1:
        return (
            (
                "error",
                f"{shown} skips a minor version: the API server upgrades one minor at a "
                "time (Kubernetes version skew policy) and CAPOCI passes the version to "
                "OKE unchecked. Go through each minor version in turn, the node pools "
                f"following each ({GUIDE})",
            ),
        )
    return (
        (
            "warning",
            f"{shown}: an in-place upgrade of the OKE control plane (CAPOCI UpdateCluster). "
            "The node pools follow in a later change, once the control plane runs it "
            "(`fleet status`); OKE then replaces their nodes max_surge at a time",
        ),
    )


def _control_plane(side: Objects, pool: Body) -> Body | None:
    """The OCIManagedControlPlane of ``pool``'s cluster on ``side`` (same namespace, same
    ``cluster.x-k8s.io/cluster-name``)."""
    meta = pool.get("metadata") or {}
    cluster = (meta.get("labels") or {}).get(CLUSTER_NAME_LABEL)
    namespace = meta.get("namespace") or ""
    for body in side.of_kind(INFRASTRUCTURE_GROUP, "OCIManagedControlPlane"):
        other = body.get("metadata") or {}
        if (other.get("labels") or {}).get(CLUSTER_NAME_LABEL) == cluster and (
            other.get("namespace") or ""
        ) == namespace:
            return body
    return None


def judge_pool_version(change: Change) -> Sequence[Verdict]:
    """A node pool's version: above the version its control plane runs *before* the change
    (the control plane moves in the same change) is an error; a decrease too."""
    old, new = dig(change.old, "spec", "version"), dig(change.new, "spec", "version")
    before, after = minor_of(old), minor_of(new)
    if old == new or before is None or after is None:
        return ()
    shown = f"spec.version: {old} -> {new}"
    if after < before:
        return (
            (
                "error",
                f"{shown}: a node pool is not downgraded in place; declare a new pool at "
                "the older version and retire this one",
            ),
        )
    control_plane = _control_plane(change.base, change.new)
    running = minor_of(dig(control_plane, "spec", "version")) if control_plane else None
    if running is not None and after[:2] > running[:2]:
        return (
            (
                "error",
                f"{shown} in the same change as the control plane's upgrade (it runs "
                f"{dig(control_plane, 'spec', 'version')} in the base revision): a kubelet "
                "must never be newer than the API server (Kubernetes version skew policy), "
                "so OKE refuses the node pool update until the control plane is done. "
                "Upgrade the control plane in one change and the node pools in the next, "
                f"once `fleet status` shows the control plane converged ({GUIDE})",
            ),
        )
    return (
        (
            "warning",
            f"{shown}: OKE replaces the pool's nodes with nodes of the new version (node "
            "cycling, max_surge at a time)",
        ),
    )


OKE_VERSION_RULES = (
    ChangeRule(
        groups=(INFRASTRUCTURE_GROUP,),
        kinds=("OCIManagedControlPlane",),
        paths=(("spec", "version"),),
        judge=judge_control_plane_version,
        source=SOURCE,
    ),
    ChangeRule(
        groups=(INFRASTRUCTURE_GROUP,),
        kinds=("OCIManagedMachinePool",),
        paths=(("spec", "version"),),
        judge=judge_pool_version,
        source=SOURCE,
    ),
)
"""What ``fleet diff`` says of a live OKE cluster's Kubernetes versions."""
