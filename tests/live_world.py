"""Live objects for ``fleet status`` tests (importable as ``live_world``): what the
management cluster would hold once ArgoCD applied a rendered environment and the
controllers reported, shaped by the upstream types and checked against the pinned CRDs
(``kube_server.World.put`` validates each).

Status shapes and where they come from:

* Crossplane managed resources (``ClusterV1``, ``NodegroupV1``, provider-argocd ``Cluster``):
  ``status.conditions`` of crossplane-runtime v2.1.0 ``apis/common/condition.go``
  (``Available``/``ReconcileSuccess``; ``ReconcileError`` for a failure) and upjet v2.2.0
  ``pkg/resource/conditions.go`` (``LastAsyncOperation``); ``ClusterV1.status.atProvider``
  of provider-openstack v0.9.0 ``apis/cluster/containerinfra/v1alpha1/zz_clusterv1_types.go``;
  the registration's ``status.atProvider.connectionState.connectionState`` of
  provider-argocd v0.14.3 ``apis/cluster/v1alpha1/types.go``.
* Cluster API ``Cluster``/``MachinePool`` read as ``v1beta1``: ``status.v1beta2.conditions``
  (cluster-api v1.12.11 ``api/core/v1beta1/cluster_types.go``, ``machinepool_types.go``).
* CAPOCI v0.24.0 ``OCIManaged*`` (``v1beta2``, v1beta1-contract conditions with severity;
  ``OCIManagedControlPlane.status.version``; ``OCIManagedMachinePool.status.failureMessages``).
* ArgoCD ``Application`` (argo-cd v3.5.1 ``pkg/apis/application/v1alpha1/types.go``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from kube_server import World

from fleet.core.manifest import Manifest

T0 = "2026-07-01T09:00:00Z"
T1 = "2026-07-01T10:30:00Z"
TRACKING = "argocd.argoproj.io/tracking-id"

PLURALS = {
    "ClusterV1": "clusterv1s",
    "NodegroupV1": "nodegroupv1s",
    "Cluster": "clusters",
    "MachinePool": "machinepools",
    "OCIManagedCluster": "ocimanagedclusters",
    "OCIManagedControlPlane": "ocimanagedcontrolplanes",
    "OCIManagedMachinePool": "ocimanagedmachinepools",
    "Application": "applications",
}


def condition(
    type_: str, status: str = "True", reason: str = "", message: str = "", since: str = T0
) -> dict[str, Any]:
    """A crossplane-runtime condition (type, status, lastTransitionTime, reason, message)."""
    out: dict[str, Any] = {"type": type_, "status": status, "lastTransitionTime": since}
    out["reason"] = reason or {"Ready": "Available", "Synced": "ReconcileSuccess"}.get(
        type_, "Success"
    )
    if message:
        out["message"] = message
    return out


def metav1_condition(
    type_: str, status: str = "True", reason: str = "", message: str = "", since: str = T0
) -> dict[str, Any]:
    """A ``metav1.Condition`` (Cluster API v1beta2: reason and message always set)."""
    return {
        "type": type_,
        "status": status,
        "lastTransitionTime": since,
        "reason": reason or ("Available" if status == "True" else "NotAvailable"),
        "message": message,
        "observedGeneration": 1,
    }


def v1beta1_condition(
    type_: str, status: str = "True", *, severity: str = "", reason: str = "", since: str = T0
) -> dict[str, Any]:
    """A Cluster API v1beta1-contract condition (``severity`` only when not True)."""
    out: dict[str, Any] = {"type": type_, "status": status, "lastTransitionTime": since}
    if severity:
        out["severity"] = severity
    if reason:
        out["reason"] = reason
    return out


def cluster_api_status(
    api: str, fields: dict[str, Any], v1beta1: list[Any], v1beta2: list[Any]
) -> dict[str, Any]:
    """A Cluster API core object's status as the API server serves it at ``api``
    (kubernetes-sigs/cluster-api v1.12.11 ``api/core/v1beta2/cluster_types.go``,
    ``machinepool_types.go``: metav1 ``conditions``, the old ones in
    ``deprecated.v1beta1.conditions``; ``api/core/v1beta1/``: the old ``conditions``, the
    new ones in ``v1beta2.conditions``)."""
    if api.endswith("/v1beta2"):
        return {**fields, "conditions": v1beta2, "deprecated": {"v1beta1": {"conditions": v1beta1}}}
    return {**fields, "conditions": v1beta1, "v1beta2": {"conditions": v1beta2}}


def live(manifest: Manifest, application: str) -> dict[str, Any]:
    """``manifest`` as the API server returns it once ArgoCD applied it for
    ``application`` (server fields, the tracking annotation), without status."""
    body = copy.deepcopy(manifest.body)
    meta = body.setdefault("metadata", {})
    meta.setdefault("annotations", {})[TRACKING] = (
        f"{application}:{manifest.group}/{manifest.kind}:{manifest.namespace}/{manifest.name}"
    )
    meta.update(
        {
            "uid": f"uid-{manifest.kind.lower()}-{manifest.name}",
            "resourceVersion": "4711",
            "generation": 1,
            "creationTimestamp": T0,
        }
    )
    return body


def converged_status(body: dict[str, Any], revision: str) -> dict[str, Any]:
    """The status a converged object of ``body``'s kind carries."""
    kind = body["kind"]
    api = body["apiVersion"]
    if kind in ("ClusterV1", "NodegroupV1") or (kind == "Cluster" and "argocd" in api):
        status: dict[str, Any] = {
            "conditions": [
                condition("Ready"),
                condition("Synced"),
                condition("LastAsyncOperation", reason="Success"),
            ]
        }
        if kind == "ClusterV1":
            status["atProvider"] = {
                "apiAddress": "https://188.185.0.10:6443",
                "coeVersion": "v1.25.3-cern.0",
                "id": "8a3f6c2e-1d4b-4e5f-9a7b-2c3d4e5f6a7b",
            }
        if kind == "Cluster":
            status["conditions"] = status["conditions"][:2]
            status["atProvider"] = {
                "connectionState": {
                    "connectionState": {"status": "Successful", "message": "", "attemptedAt": T0},
                    "serverVersion": "1.30",
                    "applicationsCount": 3,
                }
            }
        return status
    if kind == "Cluster":
        return cluster_api_status(
            api,
            {"phase": "Provisioned"},
            [v1beta1_condition("Ready")],
            [
                metav1_condition("Available"),
                metav1_condition("InfrastructureReady", reason="Ready"),
                metav1_condition("RemoteConnectionProbe", reason="RemoteConnectionProbeSucceeded"),
                metav1_condition("ControlPlaneAvailable"),
                metav1_condition("WorkersAvailable"),
                metav1_condition("ControlPlaneMachinesUpToDate", reason="UpToDate"),
                metav1_condition("WorkerMachinesUpToDate", reason="UpToDate"),
                metav1_condition("RollingOut", "False", reason="NotRollingOut"),
            ],
        )
    if kind == "MachinePool":
        replicas = body["spec"].get("replicas", 1)
        return cluster_api_status(
            api,
            {"phase": "Running", "replicas": replicas, "readyReplicas": replicas},
            [v1beta1_condition("Ready")],
            [
                metav1_condition("Available"),
                metav1_condition("InfrastructureReady", reason="Ready"),
                metav1_condition("MachinesUpToDate", reason="UpToDate"),
                metav1_condition("ScalingUp", "False", reason="NotScalingUp"),
            ],
        )
    if kind == "OCIManagedControlPlane":
        return {
            "ready": True,
            "initialized": True,
            "version": body["spec"].get("version", "v1.30.1"),
            "conditions": [v1beta1_condition("Ready"), v1beta1_condition("ControlPlaneReady")],
        }
    if kind == "OCIManagedMachinePool":
        return {
            "ready": True,
            "replicas": 1,
            "nodepoolLifecycleState": "ACTIVE",
            "conditions": [v1beta1_condition("Ready"), v1beta1_condition("NodePoolReady")],
        }
    if kind == "OCIManagedCluster":
        return {"ready": True, "conditions": [v1beta1_condition("Ready")]}
    if kind == "Application":
        return {
            "sync": {"status": "Synced", "revision": revision},
            "health": {"status": "Healthy", "lastTransitionTime": T0},
            "operationState": {
                "operation": {"sync": {"revision": revision}},
                "phase": "Succeeded",
                "message": "successfully synced (all tasks run)",
                "startedAt": T0,
                "finishedAt": T0,
                "syncResult": {"revision": revision},
            },
            "reconciledAt": T1,
            "resourceHealthSource": "appTree",
            "sourceType": "Directory",
        }
    raise AssertionError(f"no status for {api} {kind}")


def world(manifests: Iterable[Manifest], revision: str, *, dist: str = "dist") -> World:
    """The converged management cluster of one rendered environment: its Applications and
    every object of the kinds ``fleet status`` reads in the clusters' folders, each tracked
    by the Application that syncs its folder."""
    manifests = list(manifests)
    apps = {
        m.body["spec"]["source"].get("path"): m
        for m in manifests
        if m.kind == "Application" and m.group == "argoproj.io"
    }
    root = next(m for path, m in apps.items() if path and path.endswith("/bootstrap"))
    out = World()
    for m in manifests:
        if m.kind not in PLURALS or (m.kind == "Application" and m.group != "argoproj.io"):
            continue
        if m.kind == "Application":
            body = live(m, root.name)
        else:
            app = apps.get(f"{dist}/{m.environment}/{m.folder}")
            if app is None:
                continue
            body = live(m, app.name)
        body["status"] = converged_status(body, revision)
        out.put(body, PLURALS[m.kind])
    for path in list(out.objects):
        out.known.add(path)
    return out


def find(w: World, kind: str, name: str) -> dict[str, Any]:
    """The object of ``kind`` named ``name`` the world serves."""
    for path, items in w.objects.items():
        if path.endswith("/" + PLURALS[kind]):
            for body in items:
                if body["metadata"]["name"] == name and body["kind"] == kind:
                    return body
    raise KeyError(f"{kind} {name}")
