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

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from argocd_lua import LuaError, run_health
from builders import argocd, find, magnum, oke, rendered

from fleet import Fleet, FleetConfig, NodeGroup

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


def fleet_verdict(cm: dict[str, str], obj: dict[str, Any]) -> str:
    """What ArgoCD makes of ``obj`` with the rendered ``argocd-cm`` (exact key, its
    ``useOpenLibs`` key deciding the libraries)."""
    key = _key(obj)
    return run_health(cm[HEALTH + key], obj, open_libs=cm.get(OPEN_LIBS + key) == "true")["status"]


def builtin_verdict(folder: str, obj: dict[str, Any]) -> str:
    """ArgoCD's built-in check (built-ins always run with the open libraries); a Lua error
    is health Unknown for ArgoCD."""
    script = (FIXTURES / folder / "builtin_health.lua").read_text()
    try:
        return run_health(script, obj, open_libs=True)["status"]
    except LuaError:
        return "Unknown (Lua error)"


def upstream(path: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((FIXTURES / path).read_text())
    return data


# --- objects built from the controllers' code --------------------------------------------


def cond(
    type_: str, status: str, reason: str = "", message: str = "", **extra: str
) -> dict[str, str]:
    out = {"type": type_, "status": status, "lastTransitionTime": "2026-11-02T10:00:00Z"}
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
        "cluster whose create failed after the POST: Ready, no API address",
        mr("ClusterV1", AVAILABLE, SYNCED, at_provider={"apiAddress": ""}),
        "Healthy",
        "Degraded",
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
        "upstream testdata provider_degraded (runtime Deployment not available yet)",
        upstream("_.crossplane.io_/provider_degraded.yaml"),
        "Degraded",
        "Progressing",
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
