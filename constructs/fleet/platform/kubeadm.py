"""Cluster API's kubeadm providers, for a cloud whose machines kubeadm builds.

A cloud on Cluster API that builds its machines with kubeadm lists
:data:`KUBEADM_CONTROL_PLANE` (which requires :data:`KUBEADM_BOOTSTRAP` and the core) and
:data:`KUBEADM_BOOTSTRAP` among its components and :data:`KUBEADM_CHANGE_RULES` among its
change rules: their operator health, the ``KubeadmControlPlane`` health and references, the
core's ``MachineDeployment`` (:data:`fleet.platform.cluster_api.CLUSTER_API`) and their
pinned CRDs come with them: no file of the tool is edited for such a cloud. The CRDs (from
cluster-api v1.12.11) are in a folder of their own, :data:`KUBEADM_CRDS`, which the
components carry in their ``crds`` slot: a fleet that uses no kubeadm never loads them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from fleet.core.manifest import dig
from fleet.platform.changes import Change, ChangeRule, Verdict
from fleet.platform.cluster_api import (
    BOOTSTRAP_GROUP,
    CLUSTER_API,
    CONTROLPLANE_GROUP,
    OperatorProvider,
    operator_health,
    ready_health,
)
from fleet.platform.component import HealthCheck, PlatformComponent
from fleet.platform.references import ReferenceRules

KUBEADM_CRDS = Path(__file__).resolve().parent.parent / "data" / "kubeadm" / "crds"
"""The kubeadm providers' pinned CRDs: a ``crds/`` folder beside its ``crds.lock.yaml``
(in the package's data, shipped in the wheel)."""

KUBEADM_BOOTSTRAP = PlatformComponent(
    name="cluster-api-kubeadm-bootstrap",
    version=CLUSTER_API.version,
    install=OperatorProvider(
        kind="BootstrapProvider", provider="kubeadm", namespace="capi-kubeadm-bootstrap-system"
    ),
    requires=(CLUSTER_API,),
    owns=frozenset(
        {(BOOTSTRAP_GROUP, "KubeadmConfig"), (BOOTSTRAP_GROUP, "KubeadmConfigTemplate")}
    ),
    owns_groups=False,
    health_checks=(operator_health("BootstrapProvider"),),
    crds=KUBEADM_CRDS,
)
"""Cluster API's kubeadm bootstrap provider (a ``BootstrapProvider`` named ``kubeadm``,
clusterctl's name: cluster-api v1.12.11 ``cmd/clusterctl/client/config/providers_client.go``
``KubeadmBootstrapProviderName``; namespace ``capi-kubeadm-bootstrap-system``,
``bootstrap/kubeadm/config/default/kustomization.yaml``), released with the core. Its kinds'
group is every bootstrap provider's."""

KUBEADM_CONTROL_PLANE_HEALTH = ready_health(
    "Cluster API KubeadmControlPlane (v1beta1): healthy when Ready."
)
"""Health of a ``KubeadmControlPlane``: ArgoCD has none for it (argo-cd v3.5.1
``resource_customizations/controlplane.cluster.x-k8s.io/`` holds only
``AWSManagedControlPlane``). Its v1beta1 status is the contract's: ``ready`` (a ready
replica), ``failureReason``, and the ``Ready`` summary condition (cluster-api v1.12.11
``api/controlplane/kubeadm/v1beta1/conversion.go``, ``controlplane/kubeadm/internal/
controllers/controller.go`` ``SetSummary``)."""

KUBEADM_CONTROL_PLANE = PlatformComponent(
    name="cluster-api-kubeadm-control-plane",
    version=CLUSTER_API.version,
    install=OperatorProvider(
        kind="ControlPlaneProvider",
        provider="kubeadm",
        namespace="capi-kubeadm-control-plane-system",
    ),
    # Its machines join through KubeadmConfigs, which the bootstrap provider turns into
    # cloud-init (cluster-api v1.12.11 controlplane/kubeadm/internal/controllers/helpers.go).
    requires=(CLUSTER_API, KUBEADM_BOOTSTRAP),
    owns=frozenset(
        {
            (CONTROLPLANE_GROUP, "KubeadmControlPlane"),
            (CONTROLPLANE_GROUP, "KubeadmControlPlaneTemplate"),
        }
    ),
    owns_groups=False,
    health_checks=(
        operator_health("ControlPlaneProvider"),
        HealthCheck(CONTROLPLANE_GROUP, "KubeadmControlPlane", KUBEADM_CONTROL_PLANE_HEALTH),
    ),
    references=ReferenceRules(
        object_refs={
            (CONTROLPLANE_GROUP, "KubeadmControlPlane"): (
                ("spec", "machineTemplate", "infrastructureRef"),
            )
        }
    ),
    crds=KUBEADM_CRDS,
)
"""Cluster API's kubeadm control-plane provider (a ``ControlPlaneProvider`` named
``kubeadm``: ``KubeadmControlPlaneProviderName``; namespace
``capi-kubeadm-control-plane-system``, ``controlplane/kubeadm/config/default/
kustomization.yaml``). ``spec.machineTemplate.infrastructureRef`` names the infrastructure
provider's machine template (``api/controlplane/kubeadm/v1beta1/
kubeadm_control_plane_types.go``)."""


_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def _minor(version: object) -> tuple[int, int] | None:
    """(major, minor) of a Kubernetes version (``v1.31.4``, tolerant like semver's
    ``ParseTolerant``: a missing ``v`` or patch); None when it is none."""
    found = _VERSION.match(version) if isinstance(version, str) else None
    return (int(found.group(1)), int(found.group(2))) if found else None


def judge_control_plane_version(change: Change) -> Sequence[Verdict]:
    """A ``KubeadmControlPlane`` may move up one minor version at a time: KCP's webhook
    refuses ``spec.version`` at or beyond the old minor + 2 (cluster-api v1.12.11
    ``controlplane/kubeadm/internal/webhooks/kubeadmcontrolplane.go`` ``validateVersion``:
    "cannot update Kubernetes version from X to Y"), and ArgoCD's sync then fails on it."""
    old, new = dig(change.old, "spec", "version"), dig(change.new, "spec", "version")
    before, after = _minor(old), _minor(new)
    if old == new or before is None or after is None:
        return ()
    if after >= (before[0], before[1] + 2):
        step = f"v{before[0]}.{before[1] + 1}"
        return (
            (
                "error",
                f"spec.version: {old} -> {new} skips a minor version, which KCP's webhook "
                f"refuses (cannot update Kubernetes version from {old} to {new}); upgrade to "
                f"{step} first, one reviewed change per minor version",
            ),
        )
    return ()


KUBEADM_CHANGE_RULES: tuple[ChangeRule, ...] = (
    ChangeRule(
        groups=(CONTROLPLANE_GROUP,),
        kinds=("KubeadmControlPlane",),
        paths=(("spec", "version"),),
        judge=judge_control_plane_version,
        source=(
            "kubernetes-sigs/cluster-api v1.12.11 controlplane/kubeadm/internal/webhooks/"
            "kubeadmcontrolplane.go (validateVersion)"
        ),
    ),
)
"""What ``fleet diff`` judges on a ``KubeadmControlPlane``: a cloud whose clusters use
:data:`KUBEADM_CONTROL_PLANE` lists these in its ``CloudPlugin.change_rules``."""
