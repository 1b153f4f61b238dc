"""Provisioning reads as Progressing, pausing as Suspended, real failures as Degraded (issue
21, item 4): the Lua health checks the bootstrap puts into ``argocd-cm``, run as ArgoCD runs
them (tests/argocd_lua.py), on upstream test data and on objects built from the controllers'
code. Each row also runs ArgoCD's built-in check for the kind (argo-cd v3.5.1, vendored in
tests/fixtures/argocd-health/), which the fleet's overrides replace.

Why it matters: argo-cd v3.5.1 ``gitops-engine/pkg/sync/sync_context.go`` fails a sync on a
Degraded object of a waited wave and retries it with back-off; anything but Healthy or
Degraded keeps the wave waiting.

Sources of the objects built here:

* upjet v2.2.0: ``pkg/controller/external_async_tfpluginsdk.go`` (``Create``/``Update`` wrap
  their errors as "async create failed: ..."/"async update failed: ..."),
  ``external_tfpluginsdk.go`` ("failed to create the resource: %v" of the Terraform
  diagnostics; "refuse to update the external resource because the following update
  requires replacing it: cannot change the value of the argument %q from %q to %q"),
  ``pkg/resource/conditions.go`` (``LastAsyncOperation`` reasons ``AsyncCreateFailure``,
  ``AsyncUpdateFailure``), ``pkg/controller/api.go`` ``callbackFn`` (``Synced`` ``ReconcileError``
  "create failed: ..."/"update failed: ...").
* crossplane-runtime v2.1.0 ``apis/common/condition.go``: ``Creating``, ``Available``,
  ``ReconcileSuccess``, ``ReconcilePaused`` (``Synced=False``, no message).
* terraform-provider-openstack v3.4.0 ``resource_openstack_containerinfra_nodegroup_v1.go``:
  "Error creating openstack_containerinfra_nodegroup_v1: %s"; gophercloud v2.8.0
  ``errors.go``: "Expected HTTP response code %v when accessing [%s %s], but got %d instead:
  %s"; openstack/magnum (stable/2025.1) ``magnum/common/exception.py``
  (``ClusterAPIAddressUnavailable`` 409 "Cluster API address is not available yet",
  ``FlavorNotFound`` 400 "Unable to find flavor %(flavor)s."),
  ``magnum/api/middleware/parsable_error.py`` (the JSON error body).
* kubernetes-sigs/cluster-api v1.12.11 ``internal/controllers/cluster/
  cluster_controller_phases.go`` (``WaitingForInfrastructure`` fallback, severity Info);
  oracle/cluster-api-provider-oci v0.24.0
  ``controllers/ocimanagedcluster_controlplane_controller.go`` (``ControlPlaneNotReady``
  severity Info while OKE creates, severity Error on a failure).
* crossplane/crossplane v2.3.4 ``apis/pkg/v1/conditions.go`` (``PackageHealth`` messages,
  reasons ``UnpackingPackage``, ``ActivePackageRevision``, ``UnhealthyPackageRevision``,
  ``UnknownPackageRevisionHealth``), ``internal/controller/pkg/manager/reconciler.go``
  (``Unpacking().WithMessage(err)`` when the package cannot be fetched).
"""

from __future__ import annotations

import calendar
import datetime
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from argocd_lua import LuaError, run_health
from builders import argocd, find, magnum, oke, rendered

from fleet import Fleet, FleetConfig, NodeGroup
from fleet.platform.cluster_api import ready_health

FIXTURES = Path(__file__).parent / "fixtures" / "argocd-health"
HEALTH = "resource.customizations.health."
OPEN_LIBS = "resource.customizations.useOpenLibs."
MAGNUM_API = "containerinfra.openstack.crossplane.io/v1alpha1"


@pytest.fixture(scope="module")
def argocd_cm(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """``argocd-cm`` of an environment with a Magnum and an OKE cluster."""
    fleet = Fleet(FleetConfig(root=tmp_path_factory.mktemp("health")))
    magnum(fleet, node_groups=[NodeGroup(name="zone-a", flavor="m2.large", node_count=1)])
    oke(fleet)
    argocd(fleet)
    data: dict[str, str] = find(rendered(fleet), "ConfigMap", "argocd-cm").body["data"]
    return data


def _key(obj: dict[str, Any]) -> str:
    return f"{obj['apiVersion'].rpartition('/')[0]}_{obj['kind']}"


def epoch(ts: str) -> int:
    """Seconds since the epoch of a ``metav1.Time`` (``YYYY-MM-DDTHH:MM:SSZ``)."""
    return calendar.timegm(datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").timetuple())


T0 = "2026-11-02T10:00:00Z"
"""When :func:`cond`'s conditions changed last."""
NOW = epoch(T0) + 120
"""The clock of every verdict unless a row says otherwise: two minutes after :data:`T0`."""


def stamp(minutes_before_now: float) -> str:
    """A ``metav1.Time`` that many minutes before :data:`NOW`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(NOW - int(minutes_before_now * 60)))


def fleet_verdict(cm: dict[str, str], obj: dict[str, Any], *, now: int = NOW) -> str:
    """What ArgoCD makes of ``obj`` with the rendered ``argocd-cm`` (exact key, its
    ``useOpenLibs`` key deciding the libraries), at ``now``."""
    key = _key(obj)
    return run_health(cm[HEALTH + key], obj, open_libs=cm.get(OPEN_LIBS + key) == "true", now=now)[
        "status"
    ]


def builtin_verdict(folder: str, obj: dict[str, Any]) -> str:
    """ArgoCD's built-in check (built-ins always run with the open libraries); a Lua error
    is health Unknown for ArgoCD."""
    script = (FIXTURES / folder / "builtin_health.lua").read_text()
    try:
        return run_health(script, obj, open_libs=True, now=NOW)["status"]
    except LuaError:
        return "Unknown (Lua error)"


def upstream(path: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((FIXTURES / path).read_text())
    return data


# --- objects built from the controllers' code --------------------------------------------


def cond(
    type_: str, status: str, reason: str = "", message: str = "", **extra: str
) -> dict[str, str]:
    out = {"type": type_, "status": status, "lastTransitionTime": T0}
    if reason:
        out["reason"] = reason
    if message:
        out["message"] = message
    out.update(extra)
    return out


def mr(
    kind: str,
    *conditions: dict[str, str],
    annotations: dict[str, str] | None = None,
    at_provider: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A provider-openstack managed resource as the API server returns it."""
    status: dict[str, Any] = {"conditions": list(conditions)}
    if at_provider is not None:
        status["atProvider"] = at_provider
    return {
        "apiVersion": MAGNUM_API,
        "kind": kind,
        "metadata": {
            "name": "k8s-x",
            "annotations": {"crossplane.io/external-name": "k8s-x", **(annotations or {})},
        },
        "spec": {"forProvider": {"name": "k8s-x"}},
        "status": status,
    }


SYNCED = cond("Synced", "True", "ReconcileSuccess")
CREATING = cond("Ready", "False", "Creating")
AVAILABLE = cond("Ready", "True", "Available")
PAUSED = cond("Synced", "False", "ReconcilePaused")


def _magnum_error(status: int, title: str, detail: str) -> str:
    error = {
        "request_id": "",
        "code": "client",
        "status": status,
        "title": title,
        "detail": detail,
        "links": [],
    }
    body = json.dumps({"errors": [error]})
    return (
        "Expected HTTP response code [202] when accessing [POST "
        "https://magnum.example.org:9511/v1/clusters/k8s-x/nodegroups], but got "
        f"{status} instead: {body}"
    )


def _create_failed(error: str) -> list[dict[str, str]]:
    """``LastAsyncOperation`` and ``Synced`` after an async create failed."""
    diag = f"[{{0 Error creating openstack_containerinfra_nodegroup_v1: {error}  []}}]"
    message = f"async create failed: failed to create the resource: {diag}"
    return [
        cond("LastAsyncOperation", "False", "AsyncCreateFailure", message),
        cond("Synced", "False", "ReconcileError", f"create failed: {message}"),
    ]


def _cluster_create_failed() -> list[dict[str, str]]:
    """``LastAsyncOperation`` and ``Synced`` after terraform-provider-openstack v3.4.0's
    create saw CREATE_FAILED (``containerInfraClusterV1StateRefreshFunc``: "is in an error
    state"; ``resourceContainerInfraClusterV1Create``: "Error waiting for ... to become
    ready"), wrapped by upjet v2.2.0 (``external_tfpluginsdk.go`` ``Create``,
    ``pkg/terraform/errors`` async create, ``api.go`` ``callbackFn``)."""
    error = (
        "Error waiting for openstack_containerinfra_cluster_v1 5e2f0c4a to become ready: "
        "openstack_containerinfra_cluster_v1 is in an error state: Resource CREATE failed: "
        "WaitConditionTimeout: resources.kube_minions"
    )
    message = f"async create failed: failed to create the resource: [{{0 {error}  []}}]"
    return [
        cond("LastAsyncOperation", "False", "AsyncCreateFailure", message),
        cond("Synced", "False", "ReconcileError", f"create failed: {message}"),
    ]


API_ADDRESS_409 = _magnum_error(
    409, "Cluster API address is not available yet", "Cluster API address is not available yet"
)
FLAVOR_400 = _magnum_error(400, "Unable to find flavor m2", "Unable to find flavor m2.huge.")
FORCE_NEW = (
    "async update failed: refuse to update the external resource because the following update "
    'requires replacing it: cannot change the value of the argument "labels.kube_tag" from '
    '"v1.25.3" to "v1.26.1"'
)

MAGNUM_ROWS = [
    # (what, object, ArgoCD's built-in, the fleet's)
    (
        "node group refused until the cluster has an API address (409)",
        mr("NodegroupV1", CREATING, *_create_failed(API_ADDRESS_409)),
        "Degraded",
        "Progressing",
    ),
    (
        "node group with a flavor Magnum does not know (400)",
        mr("NodegroupV1", CREATING, *_create_failed(FLAVOR_400)),
        "Degraded",
        "Degraded",
    ),
    ("cluster being created", mr("ClusterV1", CREATING, SYNCED), "Progressing", "Progressing"),
    (
        "cluster created: Ready with an API address",
        mr("ClusterV1", AVAILABLE, SYNCED, at_provider={"apiAddress": "https://10.0.0.5:6443"}),
        "Healthy",
        "Healthy",
    ),
    (
        "cluster still creating in Magnum after a provider restart: Ready, no API address yet",
        mr("ClusterV1", AVAILABLE, SYNCED, at_provider={"apiAddress": "", "createdAt": stamp(12)}),
        "Healthy",
        "Progressing",
    ),
    (
        "cluster without an API address past its create timeout (60 + 10 minutes)",
        mr("ClusterV1", AVAILABLE, SYNCED, at_provider={"apiAddress": "", "createdAt": stamp(71)}),
        "Healthy",
        "Degraded",
    ),
    (
        "cluster without an API address within its own createTimeout (120 minutes)",
        {
            **mr(
                "ClusterV1",
                AVAILABLE,
                SYNCED,
                at_provider={"apiAddress": "", "createdAt": stamp(71)},
            ),
            "spec": {"forProvider": {"name": "k8s-x", "createTimeout": 120}},
        },
        "Healthy",
        "Progressing",
    ),
    (
        "CREATE_FAILED whose master came up, as the async create's callback leaves it",
        mr(
            "ClusterV1",
            CREATING,
            *_cluster_create_failed(),
            at_provider={"apiAddress": "https://10.0.0.5:6443"},
        ),
        "Degraded",
        "Degraded",
    ),
    (
        "CREATE_FAILED with an API address after the provider's next Observe (no trace left)",
        mr(
            "ClusterV1",
            AVAILABLE,
            SYNCED,
            cond("LastAsyncOperation", "True", "Success"),
            at_provider={"apiAddress": "https://10.0.0.5:6443", "createdAt": stamp(30)},
        ),
        "Healthy",
        "Healthy",
    ),
    ("paused cluster", mr("ClusterV1", AVAILABLE, PAUSED), "Degraded", "Suspended"),
    (
        "cluster just paused, conditions not updated yet",
        mr(
            "ClusterV1",
            AVAILABLE,
            SYNCED,
            annotations={"crossplane.io/paused": "true"},
            at_provider={"apiAddress": "https://10.0.0.5:6443"},
        ),
        "Healthy",
        "Suspended",
    ),
    (
        "a ForceNew change the provider refuses",
        mr(
            "ClusterV1",
            AVAILABLE,
            cond("LastAsyncOperation", "False", "AsyncUpdateFailure", FORCE_NEW),
            cond("Synced", "False", "ReconcileError", f"update failed: {FORCE_NEW}"),
            at_provider={"apiAddress": "https://10.0.0.5:6443"},
        ),
        "Degraded",
        "Degraded",
    ),
    ("node group created", mr("NodegroupV1", AVAILABLE, SYNCED), "Healthy", "Healthy"),
]


@pytest.mark.parametrize(("what", "obj", "builtin", "ours"), MAGNUM_ROWS, ids=lambda v: v)
def test_magnum_objects(
    argocd_cm: dict[str, str], what: str, obj: dict[str, Any], builtin: str, ours: str
) -> None:
    assert builtin_verdict("_.crossplane.io_", obj) == builtin, what
    assert fleet_verdict(argocd_cm, obj) == ours, what


def capi_cluster(phase: str, *conditions: dict[str, str], paused: bool = False) -> dict[str, Any]:
    """A Cluster API ``Cluster`` (v1beta1, as the fleet renders it) of an OKE cluster."""
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "oke-dev", "namespace": "oke-clusters"},
        "spec": {"paused": paused} if paused else {},
        "status": {"phase": phase, "conditions": list(conditions)},
    }


CAPI_ROWS = [
    (
        "OKE cluster provisioning: waiting for the infrastructure (severity Info)",
        capi_cluster(
            "Provisioning",
            cond("Ready", "False", "WaitingForInfrastructure", severity="Info"),
            cond("InfrastructureReady", "False", "WaitingForInfrastructure", severity="Info"),
        ),
        "Degraded",
        "Progressing",
    ),
    (
        "OKE control plane being created (CAPOCI ControlPlaneNotReady, severity Info)",
        capi_cluster(
            "Provisioned",
            cond("Ready", "False", "ControlPlaneNotReady", severity="Info"),
        ),
        "Degraded",
        "Progressing",
    ),
    (
        "OKE control plane failed (severity Error)",
        capi_cluster(
            "Provisioned",
            cond("Ready", "False", "ControlPlaneProvisionFailed", severity="Error"),
        ),
        "Degraded",
        "Degraded",
    ),
    *(
        (
            f"upstream testdata {name}",
            upstream(f"cluster.x-k8s.io_Cluster/{name}.yaml"),
            verdict,
            verdict,
        )
        for name, verdict in (
            ("progressing_provisioning", "Progressing"),
            ("degraded_failed", "Degraded"),
            ("error_provisioned", "Degraded"),
            ("suspended_paused", "Suspended"),
            ("healthy_provisioned", "Healthy"),
        )
    ),
    (
        "paused by annotation only",
        {
            **capi_cluster("Provisioned", cond("Ready", "True")),
            "metadata": {"name": "c", "annotations": {"cluster.x-k8s.io/paused": ""}},
        },
        "Healthy",
        "Suspended",
    ),
]


@pytest.mark.parametrize(("what", "obj", "builtin", "ours"), CAPI_ROWS, ids=lambda v: v)
def test_cluster_api_clusters(
    argocd_cm: dict[str, str], what: str, obj: dict[str, Any], builtin: str, ours: str
) -> None:
    assert builtin_verdict("cluster.x-k8s.io_Cluster", obj) == builtin, what
    assert fleet_verdict(argocd_cm, obj) == ours, what


def v1beta2_cluster(
    *conditions: dict[str, str],
    phase: str = "Provisioned",
    deprecated: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """A Cluster API ``Cluster`` as the fleet renders it (v1beta2) and the API server serves
    it: v1beta2 conditions in ``status.conditions``, the v1beta1 ones (with severities) in
    ``status.deprecated.v1beta1.conditions`` (kubernetes-sigs/cluster-api v1.12.11
    ``api/core/v1beta2/cluster_types.go``)."""
    status: dict[str, Any] = {"phase": phase, "conditions": list(conditions)}
    if deprecated is not None:
        status["deprecated"] = {"v1beta1": {"conditions": deprecated}}
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": "oke-dev", "namespace": "oke-clusters"},
        "spec": {},
        "status": status,
    }


INFRA_READY = cond("InfrastructureReady", "True", "Ready")
CP_AVAILABLE = cond("ControlPlaneAvailable", "True", "Available")
PROBE_OK = cond("RemoteConnectionProbe", "True", "ProbeSucceeded")
PROBE_NOT_YET = cond(
    "RemoteConnectionProbe", "False", "ProbeFailed", "Remote connection not established yet"
)
PROBE_FAILED = cond(
    "RemoteConnectionProbe", "False", "ProbeFailed", "Remote connection probe failed"
)
WORKERS_NOT_AVAILABLE = cond(
    "WorkersAvailable", "False", "NotAvailable", "* MachinePool oke-dev-general: 0 of 3 ready"
)

V1BETA2_ROWS = [
    (
        "network being created (InfrastructureReady False)",
        v1beta2_cluster(cond("InfrastructureReady", "False", "NotReady"), PROBE_NOT_YET),
        "Progressing",
    ),
    (
        "OKE control plane being created; the ClusterCache already failed to connect",
        v1beta2_cluster(
            INFRA_READY,
            cond("ControlPlaneAvailable", "False", "NotAvailable"),
            PROBE_FAILED,
            deprecated=[cond("Ready", "False", "ControlPlaneNotReady", severity="Info")],
        ),
        "Progressing",
    ),
    (
        "OKE control plane failed (CAPOCI severity Error, mirrored into the v1beta1 Ready)",
        v1beta2_cluster(
            INFRA_READY,
            cond("ControlPlaneAvailable", "False", "NotAvailable"),
            deprecated=[cond("Ready", "False", "ControlPlaneProvisionFailed", severity="Error")],
        ),
        "Degraded",
    ),
    (
        "API server up and reachable, node pools still coming up: registration may start",
        v1beta2_cluster(INFRA_READY, CP_AVAILABLE, PROBE_OK, WORKERS_NOT_AVAILABLE),
        "Healthy",
    ),
    (
        "control plane just available, the probe still counting earlier failures",
        v1beta2_cluster(
            INFRA_READY, {**CP_AVAILABLE, "lastTransitionTime": stamp(1)}, PROBE_FAILED
        ),
        "Progressing",
    ),
    (
        "private endpoint without a route: the probe fails 10 minutes after the API came up",
        v1beta2_cluster(
            INFRA_READY, {**CP_AVAILABLE, "lastTransitionTime": stamp(10)}, PROBE_FAILED
        ),
        "Degraded",
    ),
    (
        "paused",
        {**v1beta2_cluster(INFRA_READY, CP_AVAILABLE, PROBE_OK), "spec": {"paused": True}},
        "Suspended",
    ),
    ("phase Failed", v1beta2_cluster(INFRA_READY, phase="Failed"), "Degraded"),
]


@pytest.mark.parametrize(("what", "obj", "ours"), V1BETA2_ROWS, ids=lambda v: v)
def test_cluster_api_v1beta2_clusters(
    argocd_cm: dict[str, str], what: str, obj: dict[str, Any], ours: str
) -> None:
    """The ``Cluster`` at v1beta2 (what the fleet renders): Healthy once the infrastructure
    is ready, the control plane available and the management cluster reaches the API server
    (``RemoteConnectionProbe``), whatever the workers do; kubernetes-sigs/cluster-api v1.12.11
    ``internal/controllers/cluster/cluster_controller_status.go``
    (``setRemoteConnectionProbeCondition``: "Remote connection not established yet" before
    five failed probes, "Remote connection probe failed" after), ``controllers/clustercache/
    cluster_accessor.go`` ``Connect`` (a failed connection counts as a failed probe, and the
    ClusterCache tries as soon as the infrastructure is provisioned)."""
    assert fleet_verdict(argocd_cm, obj) == ours, what


# --- CAPOCI's managed kinds ---------------------------------------------------------------


def oci_object(kind: str, status: dict[str, Any] | None, *, created: str = T0) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
        "kind": kind,
        "metadata": {
            "name": "oke-dev-general",
            "namespace": "oke-clusters",
            "creationTimestamp": created,
        },
        "spec": {},
    }
    if status is not None:
        body["status"] = status
    return body


def pool(state: str | None, *conditions: dict[str, str], **status: Any) -> dict[str, Any]:
    """An OCIManagedMachinePool as CAPOCI v0.24.0 leaves it
    (``exp/controllers/ocimanaged_machinepool_controller.go`` ``reconcileNormal``)."""
    body: dict[str, Any] = {"conditions": list(conditions), **status}
    if state is not None:
        body["nodepoolLifecycleState"] = state
    return oci_object("OCIManagedMachinePool", body)


NP_CREATING = cond("NodePoolReady", "False", "NodePoolNotReady", severity="Info")
NP_FAILED = cond("NodePoolReady", "False", "NodePoolProvisionFailed", severity="Error")
NP_READY = cond("NodePoolReady", "True")
MACHINES_FAILED = cond("Ready", "False", "FailedToCreateNewMachines", severity="Warning")

POOL_ROWS = [
    # (what, object, the check before issue 29 (Ready/failureReason), the fleet's now)
    ("no status yet", oci_object("OCIManagedMachinePool", None), "Progressing", "Progressing"),
    (
        "no condition 40 minutes after creation (CAPOCI never reached OKE)",
        oci_object("OCIManagedMachinePool", {"ready": False}, created=stamp(40)),
        "Progressing",
        "Degraded",
    ),
    ("OKE pool CREATING", pool("CREATING", NP_CREATING), "Progressing", "Progressing"),
    (
        "OKE pool CREATING for 50 minutes (capacity or quota)",
        pool("CREATING", {**NP_CREATING, "lastTransitionTime": stamp(50)}),
        "Progressing",
        "Degraded",
    ),
    (
        "create call refused (NodePoolProvisionFailed, severity Error)",
        pool(None, NP_FAILED),
        "Progressing",
        "Degraded",
    ),
    ("ACTIVE", pool("ACTIVE", NP_READY, ready=True, replicas=3), "Healthy", "Healthy"),
    (
        "FAILED after ACTIVE: ready stays true",
        pool(
            "FAILED",
            NP_FAILED,
            ready=True,
            failureMessages=["Node pool status FAILED is unexpected"],
        ),
        "Healthy",
        "Degraded",
    ),
    (
        "FAILED seen before the condition changed",
        pool("FAILED", NP_READY, ready=True),
        "Healthy",
        "Degraded",
    ),
    (
        "transient FailedToCreateNewMachines (2 minutes old)",
        pool("ACTIVE", NP_READY, MACHINES_FAILED, ready=True),
        "Progressing",
        "Progressing",
    ),
    (
        "FailedToCreateNewMachines 30 minutes old, never cleared by CAPOCI",
        pool("ACTIVE", NP_READY, {**MACHINES_FAILED, "lastTransitionTime": stamp(30)}, ready=True),
        "Progressing",
        "Healthy",
    ),
    ("UPDATING (node cycling)", pool("UPDATING", NP_READY, ready=True), "Healthy", "Progressing"),
    (
        "node pool not found for 20 minutes (tags modified out of context)",
        pool(
            None,
            {
                **cond("NodePoolReady", "Unknown", "NodePoolNotFound"),
                "lastTransitionTime": stamp(20),
            },
        ),
        "Progressing",
        "Degraded",
    ),
    (
        "node pool not found for a minute",
        pool(
            None,
            {
                **cond("NodePoolReady", "Unknown", "NodePoolNotFound"),
                "lastTransitionTime": stamp(1),
            },
        ),
        "Progressing",
        "Progressing",
    ),
]

OLD_READY_HEALTH = ready_health("the check every OCIManaged* kind had before issue 29")


@pytest.mark.parametrize(("what", "obj", "before", "ours"), POOL_ROWS, ids=lambda v: v)
def test_oke_node_pools(
    argocd_cm: dict[str, str], what: str, obj: dict[str, Any], before: str, ours: str
) -> None:
    """oracle/cluster-api-provider-oci v0.24.0 ``exp/controllers/
    ocimanaged_machinepool_controller.go``: failures are ``NodePoolReady=False`` severity
    Error (``NodePoolProvisionFailed``) and any lifecycle state but CREATING, UPDATING,
    ACTIVE; ``status.ready`` is set True on ACTIVE and never reset there; ``Ready=False``
    ``FailedToCreateNewMachines`` (``reconcileManagedMachines``) is never set back to True;
    ``exp/api/v1beta2/conditions_consts.go`` names the reasons. ``before``: the Ready/
    failureReason check, which read a failed pool Healthy and a refused one Progressing."""
    assert run_health(OLD_READY_HEALTH, obj, open_libs=False, now=NOW)["status"] == before, what
    assert fleet_verdict(argocd_cm, obj) == ours, what


def control_plane(*conditions: dict[str, str], created: str = T0, **status: Any) -> dict[str, Any]:
    return oci_object(
        "OCIManagedControlPlane", {"conditions": list(conditions), **status}, created=created
    )


CP_CREATING = [
    cond("ControlPlaneReady", "False", "ControlPlaneNotReady", severity="Info"),
    cond("Ready", "False", "ControlPlaneNotReady", severity="Info"),
]

CONTROL_PLANE_ROWS = [
    ("new, no condition yet", control_plane(), "Progressing", "Progressing"),
    (
        "OKE refused the create: no condition 35 minutes after creation",
        control_plane(created=stamp(35)),
        "Progressing",
        "Degraded",
    ),
    ("OKE cluster CREATING", control_plane(*CP_CREATING), "Progressing", "Progressing"),
    (
        "OKE cluster CREATING for 70 minutes",
        control_plane(*({**c, "lastTransitionTime": stamp(70)} for c in CP_CREATING)),
        "Progressing",
        "Degraded",
    ),
    (
        "OKE cluster FAILED (ControlPlaneProvisionFailed, severity Error)",
        control_plane(
            cond("ControlPlaneReady", "False", "ControlPlaneProvisionFailed", severity="Error"),
            cond("Ready", "False", "ControlPlaneProvisionFailed", severity="Error"),
        ),
        "Degraded",
        "Degraded",
    ),
    (
        "ACTIVE",
        control_plane(cond("ControlPlaneReady", "True"), cond("Ready", "True"), ready=True),
        "Healthy",
        "Healthy",
    ),
]


@pytest.mark.parametrize(("what", "obj", "before", "ours"), CONTROL_PLANE_ROWS, ids=lambda v: v)
def test_oke_control_planes(
    argocd_cm: dict[str, str], what: str, obj: dict[str, Any], before: str, ours: str
) -> None:
    """oracle/cluster-api-provider-oci v0.24.0 ``controllers/
    ocimanagedcluster_controlplane_controller.go``: ``reconcile`` returns the error of
    ``GetOrCreateControlPlane`` before it marks any condition, and ``SetSummary`` adds no
    ``Ready`` to an object without conditions (kubernetes-sigs/cluster-api v1.12.11
    ``util/deprecated/v1beta1/conditions/merge.go``: no conditions, nil; ``setter.go`` ``Set``
    of nil does nothing); CREATING is severity Info, any state but CREATING, UPDATING,
    ACTIVE severity Error."""
    assert run_health(OLD_READY_HEALTH, obj, open_libs=False, now=NOW)["status"] == before, what
    assert fleet_verdict(argocd_cm, obj) == ours, what


def provider(
    *conditions: dict[str, str], annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "pkg.crossplane.io/v1",
        "kind": "Provider",
        "metadata": {"name": "provider-openstack", "annotations": annotations or {}},
        "spec": {"package": "xpkg.upbound.io/crossplane-contrib/provider-openstack:v0.9.0"},
        "status": {"conditions": list(conditions)},
    }


INSTALLED = cond("Installed", "True", "ActivePackageRevision")


def runtime_unavailable(minutes: float) -> dict[str, str]:
    """A Provider's ``Healthy`` while its Deployment is not Available (crossplane v2.3.4
    ``apis/pkg/v1/conditions.go`` ``PackageHealth``; ``internal/controller/pkg/runtime/
    reconciler.go`` ``errPostHook``; ``runtime_provider.go`` ``Post``): the same message
    while the pod starts and while it crash-loops, unchanged for ``minutes``."""
    return cond(
        "Healthy",
        "False",
        "UnhealthyPackageRevision",
        'Package runtime health is "False" with message: post establish runtime hook failed '
        "for package: provider package deployment is unavailable with message: Deployment "
        "does not have minimum availability.",
        lastTransitionTime=stamp(minutes),
    )


UNKNOWN_HEALTH = cond(
    "Healthy", "False", "UnhealthyPackageRevision", 'Package revision health is "Unknown"'
)
PULL_FAILED = (
    "cannot unpack package: failed to fetch package digest from remote: GET "
    "https://xpkg.upbound.io/v2/crossplane-contrib/provider-openstack/manifests/v0.9.9: "
    "MANIFEST_UNKNOWN: manifest unknown"
)

PROVIDER_ROWS = [
    (
        "upstream testdata progressing_noStatus",
        upstream("pkg.crossplane.io_Provider/progressing_noStatus.yaml"),
        "Progressing",
        "Progressing",
    ),
    (
        "upstream testdata degraded_installed (revision unhealthy)",
        upstream("pkg.crossplane.io_Provider/degraded_installed.yaml"),
        "Degraded",
        "Degraded",
    ),
    (
        "upstream testdata healthy",
        upstream("pkg.crossplane.io_Provider/healthy.yaml"),
        "Healthy",
        "Healthy",
    ),
    (
        "upstream testdata degraded_healthy (still unpacking, no error)",
        upstream("pkg.crossplane.io_Provider/degraded_healthy.yaml"),
        "Degraded",
        "Progressing",
    ),
    (
        "upstream testdata provider_degraded (runtime Deployment unavailable for a year)",
        upstream("_.crossplane.io_/provider_degraded.yaml"),
        "Degraded",
        "Degraded",
    ),
    (
        "runtime Deployment starting (unavailable for 3 minutes)",
        provider(INSTALLED, runtime_unavailable(3)),
        "Degraded",
        "Progressing",
    ),
    (
        "runtime crash-looping (unavailable for 15 minutes)",
        provider(INSTALLED, runtime_unavailable(15)),
        "Degraded",
        "Degraded",
    ),
    (
        "revision health not reported yet, no Installed condition",
        provider(UNKNOWN_HEALTH),
        "Unknown (Lua error)",
        "Progressing",
    ),
    (
        "revision unhealthy with a message",
        provider(
            INSTALLED,
            cond(
                "Healthy",
                "False",
                "UnhealthyPackageRevision",
                'Package revision health is "False" with message: cannot resolve package '
                "dependencies: incompatible dependencies",
            ),
        ),
        "Degraded",
        "Degraded",
    ),
    (
        "package cannot be fetched",
        provider(
            cond("Installed", "False", "UnpackingPackage", PULL_FAILED),
            cond("Healthy", "False", "UnhealthyPackageRevision", PULL_FAILED),
        ),
        "Degraded",
        "Degraded",
    ),
    (
        "paused provider",
        provider(
            INSTALLED,
            cond("Healthy", "True", "HealthyPackageRevision"),
            annotations={"crossplane.io/paused": "true"},
        ),
        "Healthy",
        "Suspended",
    ),
]


@pytest.mark.parametrize(("what", "obj", "builtin", "ours"), PROVIDER_ROWS, ids=lambda v: v)
def test_crossplane_providers(
    argocd_cm: dict[str, str], what: str, obj: dict[str, Any], builtin: str, ours: str
) -> None:
    assert builtin_verdict("pkg.crossplane.io_Provider", obj) == builtin, what
    assert fleet_verdict(argocd_cm, obj) == ours, what


# --- how the checks are configured ---------------------------------------------------------


def test_the_overrides_are_exact_keys_of_the_kinds_their_components_own(
    argocd_cm: dict[str, str],
) -> None:
    """argo-cd v3.5.1 ``util/lua/lua.go`` ``GetHealthScript``: an ``argocd-cm`` wildcard key
    is matched before every built-in check, in map order; exact keys override one kind."""
    keys = {k.removeprefix(HEALTH) for k in argocd_cm if k.startswith(HEALTH)}
    assert not [k for k in keys if "*" in k]
    assert {
        "containerinfra.openstack.crossplane.io_ClusterV1",
        "containerinfra.openstack.crossplane.io_NodegroupV1",
        "containerinfra.openstack.crossplane.io_ClustertemplateV1",
        "cluster.x-k8s.io_Cluster",
        "pkg.crossplane.io_Provider",
    } <= keys


def test_every_check_that_needs_the_standard_libraries_has_them(argocd_cm: dict[str, str]) -> None:
    """A check run without ``useOpenLibs`` has no ``string`` library: it must not use it,
    and one that does must have its key (else ArgoCD reports a Lua error, health Unknown)."""
    for key, script in argocd_cm.items():
        if not key.startswith(HEALTH):
            continue
        kind = key.removeprefix(HEALTH)
        uses = "string." in script or ":find(" in script or "math." in script
        assert (argocd_cm.get(OPEN_LIBS + kind) == "true") == uses, kind
        # and it runs in its sandbox on an object without status
        group, _, name = kind.rpartition("_")
        obj = {"apiVersion": f"{group}/v1", "kind": name, "metadata": {"name": "x"}}
        assert fleet_verdict(argocd_cm, obj) in ("Progressing", "Healthy"), kind


def test_without_its_open_libraries_the_magnum_check_would_fail(argocd_cm: dict[str, str]) -> None:
    """What the ``useOpenLibs`` key is for: the sandbox ArgoCD uses without it has no
    ``string.find``."""
    obj = mr("NodegroupV1", CREATING, *_create_failed(API_ADDRESS_409))
    with pytest.raises(LuaError):
        run_health(argocd_cm[HEALTH + _key(obj)], obj, open_libs=False)


# --- waves inside a cluster's Application -------------------------------------------------


def _waves(fleet: Fleet, folder: str) -> dict[str, int]:
    return {
        f"{m.kind}/{m.name}": int(
            m.body["metadata"].get("annotations", {}).get("argocd.argoproj.io/sync-wave", "0")
        )
        for m in rendered(fleet)
        if m.folder == folder
    }


def test_node_groups_wait_for_their_cluster(fleet: Fleet) -> None:
    """Magnum refuses a node group until its cluster has an API address (409
    ``ClusterAPIAddressUnavailable``): node groups come in wave 1 of the cluster's
    Application, with the registration, after the ClusterV1 (Healthy only with an
    address, above)."""
    magnum(fleet, node_groups=[NodeGroup(name="zone-a", flavor="m2.large", node_count=1)])
    argocd(fleet)
    assert _waves(fleet, "clusters/mag-dev") == {
        "ClusterV1/mag-dev": 0,
        "NodegroupV1/mag-dev-zone-a": 1,
        "Cluster/mag-dev": 1,
    }


@pytest.mark.parametrize("cloud", ["magnum", "oke"])
def test_a_paused_clusters_application_has_a_single_wave(fleet: Fleet, cloud: str) -> None:
    """A Suspended object keeps its wave waiting (sync_context.go treats only Healthy and
    Degraded as results) and automated sync starts no new operation meanwhile, so a later
    wave would never be applied, nor the commit that unpauses: a paused cluster's objects
    all sit in wave 0, which ends the sync once applied."""
    if cloud == "magnum":
        magnum(
            fleet,
            paused=True,
            node_groups=[NodeGroup(name="zone-a", flavor="m2.large", node_count=1)],
        )
        folder = "clusters/mag-dev"
    else:
        oke(fleet, paused=True)
        folder = "clusters/oke-dev"
    argocd(fleet)
    waves = _waves(fleet, folder)
    assert len(waves) >= 2
    assert set(waves.values()) == {0}


# --- every Crossplane object's check reads a pause the same way ----------------------------


def _crossplane_checks(cm: dict[str, str]) -> list[str]:
    return sorted(
        k.removeprefix(HEALTH)
        for k in cm
        if k.startswith(HEALTH)
        and k.removeprefix(HEALTH).rpartition("_")[0].endswith("crossplane.io")
    )


def _crossplane_object(
    key: str, conditions: list[dict[str, str]], **annotations: str
) -> dict[str, Any]:
    group, _, kind = key.rpartition("_")
    return {
        "apiVersion": f"{group}/v1",
        "kind": kind,
        "metadata": {"name": "x", "annotations": annotations},
        "status": {"conditions": conditions},
    }


# What a paused object's other conditions may still say: the last verdict before the pause.
_BEFORE_THE_PAUSE = [
    [],
    [AVAILABLE, SYNCED],
    [CREATING, *_create_failed(FLAVOR_400)],
    [INSTALLED, UNKNOWN_HEALTH],
]


@pytest.mark.parametrize(
    "before", _BEFORE_THE_PAUSE, ids=["none", "healthy", "failed", "installing"]
)
def test_every_crossplane_check_reads_a_pause_as_suspended(
    argocd_cm: dict[str, str], before: list[dict[str, str]]
) -> None:
    """crossplane-runtime v2.1.0: ``crossplane.io/paused: "true"`` (``pkg/meta/meta.go``
    ``IsPaused``) stops reconciling, and the reconciler then marks ``ReconcilePaused``
    (``apis/common/condition.go``: ``Synced``, status ``False``, its only producer;
    ``pkg/reconciler/managed/reconciler.go``, also for an empty ``managementPolicies``,
    which has no annotation). Crossplane's package manager does the same for a Provider
    (crossplane v2.3.4 ``internal/controller/pkg/manager/reconciler.go``, which reads the
    pause back by the reason alone). Every ``*.crossplane.io`` check the bootstrap renders
    (Crossplane's Provider, a cloud's managed resources) calls all three states Suspended:
    the annotation before the controller noticed, the annotation with the condition, and
    the condition alone."""
    keys = _crossplane_checks(argocd_cm)
    assert {
        "pkg.crossplane.io_Provider",
        "containerinfra.openstack.crossplane.io_ClusterV1",
    } <= set(keys)
    paused = {"crossplane.io/paused": "true"}
    others = [c for c in before if c["type"] != "Synced"]
    for key in keys:
        for obj in (
            _crossplane_object(key, before, **paused),
            _crossplane_object(key, [*others, PAUSED], **paused),
            _crossplane_object(key, [*others, PAUSED]),
        ):
            assert fleet_verdict(argocd_cm, obj) == "Suspended", (key, obj)
        # and a pause annotation of another value pauses nothing (IsPaused: exactly "true")
        if before:
            obj = _crossplane_object(key, before, **{"crossplane.io/paused": "false"})
            assert fleet_verdict(argocd_cm, obj) != "Suspended", key
