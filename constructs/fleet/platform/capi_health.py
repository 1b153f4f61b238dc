"""ArgoCD health of a Cluster API ``Cluster``: Healthy once its API server is up and the
management cluster reaches it, whatever its workers do.

Why not ArgoCD's built-in (argo-cd v3.5.1
``resource_customizations/cluster.x-k8s.io/Cluster/health.lua``): it calls any ``Ready=False``
Degraded, so a whole OKE provisioning (10 to 20 minutes) would fail the cluster's sync.

What the registration of a cluster needs is its API server, reachable from the management
cluster (provider-argocd hands ArgoCD the kubeconfig; argo-cd ``server/cluster/cluster.go``
``Create`` asks the cluster for its version), not every node: the Cluster is in its
Application's wave 0, the registration and the node pools in wave 1, so this check is what
the registration waits for. Cluster API v1.12 reports both facts on the v1beta2 object
(kubernetes-sigs/cluster-api v1.12.11 ``api/core/v1beta2/cluster_types.go``,
``internal/controllers/cluster/cluster_controller_status.go``): ``ControlPlaneAvailable``
(mirrored from the control plane object, else from ``ControlPlaneInitialized``) and
``RemoteConnectionProbe`` (``setRemoteConnectionProbeCondition``, from the ClusterCache,
which connects with ``<cluster>-kubeconfig`` once the infrastructure is provisioned and counts
every failed connection as a failed probe: ``controllers/clustercache/cluster_accessor.go``
``Connect``). ``Available`` also requires ``WorkersAvailable``, so it is not used.
"""

from __future__ import annotations

from fleet.platform.health_lua import AGE_FUNCTION, minutes

PROBE_GRACE_SECONDS = 5 * 60
"""After the control plane becomes available, how long a failed ``RemoteConnectionProbe``
reads Progressing: the probe failed while the API server did not exist yet, and the
ClusterCache retries a connection every 30 s (``ConnectionCreationRetryInterval``)."""

CLUSTER_HEALTH = (
    """\
-- Cluster API Cluster: Healthy once the control plane is available and the management
-- cluster reaches its API server; Degraded on a failure or when it cannot reach it;
-- Suspended while paused. v1beta2 (Cluster API 1.12's served version) and v1beta1.
"""
    + AGE_FUNCTION
    + f"""\
local hs = {{status = "Progressing", message = "Waiting for the cluster"}}
local meta = obj.metadata or {{}}
local ann = meta.annotations or {{}}
if (obj.spec ~= nil and obj.spec.paused == true) or ann["cluster.x-k8s.io/paused"] ~= nil then
  hs.status = "Suspended"
  hs.message = "Cluster is paused"
  return hs
end
local st = obj.status
if st == nil then
  return hs
end
local v1beta1 = {{conditions = st.conditions, failureReason = st.failureReason,
  failureMessage = st.failureMessage}}
local v1beta2 = nil
if obj.apiVersion == "cluster.x-k8s.io/v1beta2" then
  v1beta2 = {{}}
  for _, c in ipairs(st.conditions or {{}}) do
    v1beta2[c.type] = c
  end
  v1beta1 = (st.deprecated or {{}}).v1beta1 or {{}}
end
if st.phase == "Failed" or v1beta1.failureReason ~= nil or v1beta1.failureMessage ~= nil then
  hs.status = "Degraded"
  hs.message = v1beta1.failureMessage or v1beta1.failureReason or "Cluster failed"
  return hs
end
local ready = nil
for _, c in ipairs(v1beta1.conditions or {{}}) do
  if c.type == "Ready" then
    ready = c
  end
end
if ready ~= nil and ready.status == "False" and ready.severity == "Error" then
  hs.status = "Degraded"
  hs.message = ready.message or ready.reason or "Not ready"
  return hs
end
if v1beta2 == nil then
  if st.phase == "Provisioned" and ready ~= nil and ready.status == "True" then
    hs.status = "Healthy"
    hs.message = "Cluster is running"
    return hs
  end
  if ready ~= nil and ready.status == "False" then
    hs.message = ready.message or ready.reason or "Not ready"
  elseif st.phase ~= nil then
    hs.message = "Cluster is " .. st.phase
  end
  return hs
end
local infra = v1beta2["InfrastructureReady"]
local cp = v1beta2["ControlPlaneAvailable"]
local probe = v1beta2["RemoteConnectionProbe"]
if infra == nil or infra.status ~= "True" then
  hs.message = "Infrastructure: " .. ((infra and (infra.message or infra.reason)) or "not ready")
  return hs
end
if cp == nil or cp.status ~= "True" then
  hs.message = "Control plane: " .. ((cp and (cp.message or cp.reason)) or "not available")
  return hs
end
if probe ~= nil and probe.status == "True" then
  hs.status = "Healthy"
  hs.message = "API server reachable from the management cluster"
  return hs
end
hs.message = "The management cluster cannot reach the API server: "
  .. ((probe and (probe.message or probe.reason)) or "no probe yet")
local age = fleet_age(cp.lastTransitionTime)
if probe ~= nil and probe.status == "False" and age ~= nil and age > {PROBE_GRACE_SECONDS} then
  hs.status = "Degraded"
  hs.message = hs.message .. " (for more than {minutes(PROBE_GRACE_SECONDS)})"
end
return hs
"""
)
"""Health of a Cluster API ``Cluster`` (``argocd-cm``; needs ``useOpenLibs``).

v1beta2 (what the fleet renders, and what ArgoCD reads at the served version): Healthy when
``InfrastructureReady``, ``ControlPlaneAvailable`` and ``RemoteConnectionProbe`` are True;
Degraded on phase ``Failed``, a ``status.deprecated.v1beta1`` failure, a v1beta1 ``Ready``
with severity Error (CAPOCI v0.24.0 marks a failed OKE cluster so:
``controllers/ocimanagedcluster_controlplane_controller.go``, mirrored by Cluster API), or a
probe still failing :data:`PROBE_GRACE_SECONDS` after the control plane became available (a
private endpoint the management cluster has no route to); Progressing otherwise.

v1beta1: the v1beta1 ``Ready`` summarises ``InfrastructureReady`` and ``ControlPlaneReady``
(``SetSummary`` in ``cluster_controller.go``), severity Info while they come up
(``cluster_controller_phases.go``). Paused (``spec.paused``, the ``cluster.x-k8s.io/paused``
annotation: ``util/annotations/helpers.go`` ``IsPaused``): Suspended. No deletion branch:
ArgoCD calls an object with a ``deletionTimestamp`` Progressing before any Lua runs
(``gitops-engine/pkg/health/health.go`` ``GetResourceHealth``)."""
