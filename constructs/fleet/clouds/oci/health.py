"""ArgoCD health of CAPOCI's managed kinds, read from what CAPOCI v0.24.0 actually sets.

ArgoCD has no health check for any ``infrastructure.cluster.x-k8s.io`` kind (argo-cd v3.5.1
``resource_customizations/``), so CAPOCI's component brings these (``argocd-cm``). Each is
written from the controller's code (oracle/cluster-api-provider-oci v0.24.0, 909e19f4):
every failure it reports reads Degraded, every transient state Progressing for a bounded
time (then Degraded, naming the bound), every steady state Healthy. The bounds need the age
of a timestamp (:data:`fleet.platform.health_lua.AGE_FUNCTION`), hence ``open_libs``.
"""

from __future__ import annotations

from fleet.platform.health_lua import AGE_FUNCTION, minutes

POOL_NO_CONDITION_SECONDS = 30 * 60
"""A node pool without ``NodePoolReady`` this long after its creation is Degraded. CAPOCI
sets the condition on the first reconcile that reaches OKE (``reconcileNormal``), which
waits only for the control plane; the pools are applied after the control plane is Healthy
(wave 1), so 30 minutes covers controller-runtime's longest back-off (1,000 s) with room."""
POOL_CREATING_SECONDS = 45 * 60
"""``NodePoolReady=False`` (``NodePoolNotReady``, severity Info: the OKE pool is CREATING)
longer than this is Degraded: OKE creates a pool's nodes in minutes; a pool that never
leaves CREATING waits for capacity or a quota that will not come."""
POOL_NOT_FOUND_SECONDS = 15 * 60
"""``NodePoolReady=Unknown`` (``NodePoolNotFound``: ``FindNodePool`` failed, e.g. the OCI
API refused, or "cluster api tags have been modified out of context") this long is
Degraded."""
MACHINES_GRACE_SECONDS = 10 * 60
"""How long ``Ready=False`` with ``FailedToCreateNewMachines`` or
``FailedToDeleteOrphanedMachines`` reads Progressing. CAPOCI sets it when it cannot write the
MachinePool Machines (``reconcileManagedMachines``) and retries on the next reconcile, but
nothing ever sets ``Ready`` back to True for a managed pool: past this window the condition
tells nothing about now, and the pool reads by its OKE state."""

CONTROL_PLANE_NO_CONDITION_SECONDS = 30 * 60
"""An ``OCIManagedControlPlane`` without any condition this long after its creation is
Degraded. CAPOCI marks ``ControlPlaneReady`` only once OKE answered the create
(``reconcile``: CREATING, ACTIVE, ...); when ``GetOrCreateControlPlane`` fails (quota, a bad
version, an IAM policy) it returns the error before any condition, and ``SetSummary`` makes no
``Ready`` from none (cluster-api v1.12 ``util/deprecated/v1beta1/conditions`` ``merge``:
no conditions, nil). Before the create it waits for the OCIManagedCluster's network, a few
minutes; 30 covers that and the longest back-off."""
CONTROL_PLANE_CREATING_SECONDS = 60 * 60
"""``ControlPlaneReady=False`` with severity Info (the OKE cluster is CREATING) longer than
this is Degraded: OKE creates a control plane in about ten minutes."""

POOL_HEALTH = (
    """\
-- CAPOCI OCIManagedMachinePool (v0.24.0 exp/controllers/ocimanaged_machinepool_controller.go):
-- the OKE pool's lifecycle state and NodePoolReady, not Ready (only ever set False).
"""
    + AGE_FUNCTION
    + f"""\
local hs = {{status = "Progressing", message = "Waiting for CAPOCI"}}
local st = obj.status
local meta = obj.metadata or {{}}
local cond = {{}}
if st ~= nil and st.conditions ~= nil then
  for _, c in ipairs(st.conditions) do
    cond[c.type] = c
  end
end
local function failures()
  if st ~= nil and st.failureMessages ~= nil and #st.failureMessages > 0 then
    return ": " .. table.concat(st.failureMessages, "; ")
  end
  return ""
end
local state = ""
if st ~= nil and st.nodepoolLifecycleState ~= nil then
  state = st.nodepoolLifecycleState
end
if state == "FAILED" or state == "NEEDS_ATTENTION" or state == "INACTIVE" or state == "DELETED" then
  hs.status = "Degraded"
  hs.message = "OKE node pool is " .. state .. failures()
  return hs
end
local np = cond["NodePoolReady"]
if np == nil then
  local age = fleet_age(meta.creationTimestamp)
  if age ~= nil and age > {POOL_NO_CONDITION_SECONDS} then
    hs.status = "Degraded"
    hs.message = "No NodePoolReady condition {minutes(POOL_NO_CONDITION_SECONDS)} after "
      .. "creation: CAPOCI has not reached OKE for this pool (see its events)"
  end
  return hs
end
if np.status == "False" and np.severity == "Error" then
  hs.status = "Degraded"
  hs.message = (np.reason or "NodePoolProvisionFailed") .. failures()
  return hs
end
if np.status == "Unknown" then
  hs.message = "CAPOCI cannot find the node pool (" .. (np.reason or "") .. ")"
  local age = fleet_age(np.lastTransitionTime)
  if age ~= nil and age > {POOL_NOT_FOUND_SECONDS} then
    hs.status = "Degraded"
    hs.message = hs.message .. " for {minutes(POOL_NOT_FOUND_SECONDS)}"
  end
  return hs
end
if np.status == "False" then
  hs.message = "OKE node pool is " .. (state ~= "" and state or (np.reason or "not ready"))
  if np.severity == "Info" then
    local age = fleet_age(np.lastTransitionTime)
    if age ~= nil and age > {POOL_CREATING_SECONDS} then
      hs.status = "Degraded"
      hs.message = hs.message .. " for more than {minutes(POOL_CREATING_SECONDS)}"
    end
  end
  return hs
end
if state == "UPDATING" or state == "CREATING" then
  hs.message = "OKE node pool is " .. state
  return hs
end
if np.status == "True" and (state == "ACTIVE" or state == "") then
  local ready = cond["Ready"]
  if ready ~= nil and ready.status == "False" and (ready.reason == "FailedToCreateNewMachines"
      or ready.reason == "FailedToDeleteOrphanedMachines") then
    local age = fleet_age(ready.lastTransitionTime)
    if age == nil or age <= {MACHINES_GRACE_SECONDS} then
      hs.message = ready.reason .. ": CAPOCI retries on its next reconcile"
      return hs
    end
    hs.status = "Healthy"
    hs.message = "OKE node pool is ACTIVE (Ready=False " .. ready.reason
      .. " is older than {minutes(MACHINES_GRACE_SECONDS)}; CAPOCI never clears it)"
    return hs
  end
  hs.status = "Healthy"
  hs.message = "OKE node pool is ACTIVE"
  return hs
end
return hs
"""
)
"""Health of ``OCIManagedMachinePool``, from ``reconcileNormal``:

* ``nodepoolLifecycleState`` FAILED, NEEDS_ATTENTION, INACTIVE or DELETED: Degraded,
  whatever ``status.ready`` says (CAPOCI sets it True when the pool is ACTIVE and never
  resets it in ``reconcileNormal``: a pool that fails after ACTIVE keeps ``ready: true``).
* ``NodePoolReady=False`` severity Error (``NodePoolProvisionFailed``: the create call
  failed, or any lifecycle state but CREATING, UPDATING, ACTIVE): Degraded, with
  ``failureMessages`` (the nodes' errors).
* CREATING (``NodePoolNotReady``, severity Info), UPDATING, ``NodePoolNotFound``
  (Unknown), no condition yet: Progressing, bounded (:data:`POOL_CREATING_SECONDS`,
  :data:`POOL_NOT_FOUND_SECONDS`, :data:`POOL_NO_CONDITION_SECONDS`). UPDATING has no bound:
  CAPOCI writes no time for it, and OKE ends every update in ACTIVE or FAILED.
* ACTIVE with ``NodePoolReady=True``: Healthy; a ``Ready=False`` from
  ``reconcileManagedMachines`` reads Progressing for :data:`MACHINES_GRACE_SECONDS`, then
  is only mentioned (:data:`MACHINES_GRACE_SECONDS`)."""

CONTROL_PLANE_HEALTH = (
    """\
-- CAPOCI OCIManagedControlPlane (v0.24.0 controllers/ocimanagedcluster_controlplane_controller.go):
-- Healthy once Ready; Degraded on a failed OKE cluster, or when no condition ever appears.
"""
    + AGE_FUNCTION
    + f"""\
local hs = {{status = "Progressing", message = "Waiting for CAPOCI"}}
local st = obj.status
local meta = obj.metadata or {{}}
local cond = {{}}
local any = false
if st ~= nil and st.conditions ~= nil then
  for _, c in ipairs(st.conditions) do
    cond[c.type] = c
    any = true
  end
end
if not any then
  local age = fleet_age(meta.creationTimestamp)
  if age ~= nil and age > {CONTROL_PLANE_NO_CONDITION_SECONDS} then
    hs.status = "Degraded"
    hs.message = "No condition {minutes(CONTROL_PLANE_NO_CONDITION_SECONDS)} after creation: "
      .. "OKE refused the create or the network is not ready (see CAPOCI's events)"
  end
  return hs
end
local ready = cond["Ready"]
local cp = cond["ControlPlaneReady"] or ready
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = "OKE cluster is ready"
  return hs
end
for _, c in ipairs({{cp, ready}}) do
  if c ~= nil and c.status == "False" and c.severity == "Error" then
    hs.status = "Degraded"
    hs.message = c.message or c.reason or "OKE cluster failed"
    return hs
  end
end
if cp ~= nil and cp.status == "False" then
  hs.message = cp.reason or "OKE cluster is not ready"
  if cp.severity == "Info" then
    local age = fleet_age(cp.lastTransitionTime)
    if age ~= nil and age > {CONTROL_PLANE_CREATING_SECONDS} then
      hs.status = "Degraded"
      hs.message = "OKE cluster not ready for more than {minutes(CONTROL_PLANE_CREATING_SECONDS)}"
    end
  end
end
return hs
"""
)
"""Health of ``OCIManagedControlPlane``: ``Ready`` (CAPOCI's ``SetSummary`` of
``ControlPlaneReady``) True is Healthy; severity Error (``ControlPlaneProvisionFailed``: an
OKE lifecycle state other than CREATING, UPDATING, ACTIVE) is Degraded; CREATING (severity
Info) is Progressing for :data:`CONTROL_PLANE_CREATING_SECONDS`; no condition at all is
Progressing for :data:`CONTROL_PLANE_NO_CONDITION_SECONDS` after creation, then Degraded."""
