"""The one-button bootstrap: what converges on a real management cluster.

Upstream behaviour relied on (read at the pinned tags; see docs/upstream-behaviour.md):

* argoproj/argo-cd v3.5.1 ``gitops-engine/pkg/sync/sync_context.go``: a sync applies wave
  N+1 only once every object of wave N is Healthy, fails on Degraded, and does not wait
  after the last wave.
* kubernetes-sigs/cluster-api-operator v0.28.0 ``hack/charts/cluster-api-operator/Chart.yaml``
  (no cert-manager dependency since v0.11.0) and ``config/chart/kustomization.yaml`` (the
  chart renders cert-manager ``Certificate``/``Issuer`` objects).
* cert-manager/cert-manager v1.21.1 ``deploy/charts/cert-manager/values.yaml``: ``crds.enabled``.
* crossplane-contrib/provider-argocd v0.14.3 ``pkg/clients/argocd.go`` (``insecure``) and
  argo-cd ``util/settings/settings.go`` (self-signed certificate by default).
* argo-cd v3.5.1 ``util/settings/accounts.go`` (``accounts.<name>: apiKey``),
  ``util/rbac/rbac.go`` (``policy.*.csv``), ``server/cluster/cluster.go`` (``clusters``
  get/create/update/delete).
* cluster-api-operator v0.28.0 ``api/v1alpha2/conditions_consts.go`` and
  ``internal/controller/healthcheck/healthcheck_controller.go`` (provider conditions),
  ``internal/controller/component_customizer.go`` (``setArgs`` replaces a manager flag).
* oracle/cluster-api-provider-oci v0.24.0 ``config/manager/manager.yaml`` and ``main.go``
  (``--init-oci-clients-on-startup``).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import cdk8s
import lupa
import pytest
import yaml
from argocd_lua import run_health
from builders import (
    argocd,
    builtin_plugins,
    find,
    magnum,
    names,
    oke,
    rendered,
    tool_components,
    wave,
)
from crd_samples import crds_dir
from support import REPO

from fleet import (
    ArgoCd,
    CapociCredentials,
    Fleet,
    FleetConfig,
    FleetPackage,
    GitPath,
    HelmChart,
    MagnumCluster,
    OciManagedCluster,
    per_env,
    testing,
)
from fleet.argocd.bootstrap import (
    APPLICATION_HEALTH,
    IGNORE_HEALTHCHECK,
    PROVIDER_ARGOCD_POLICY,
    WAVE_CLUSTERS,
)
from fleet.checks.crds import read_crd_file
from fleet.checks.references import check_references
from fleet.checks.registry import CheckContext, Checks, check_environments
from fleet.checks.waves import check_waves
from fleet.clouds.base import IgnoreDifference, cloud_plugins
from fleet.core.layout import COMPARE_OPTIONS, SYNC_OPTIONS, SYNC_WAVE
from fleet.core.manifest import Manifest
from fleet.platform.cluster_api import OPERATOR_PROVIDER_HEALTH as CAPI_OPERATOR_PROVIDER_HEALTH
from fleet.platform.plugins import Platform


def hybrid(fleet: Fleet, **argocd_args: Any) -> list[Manifest]:
    magnum(fleet)
    oke(fleet)
    argocd(fleet, **argocd_args)
    return rendered(fleet)


def _retarget(manifests: list[Manifest], kind: str, name: str, **changes: Any) -> list[Manifest]:
    """A copy of ``manifests`` where the object's annotations are updated with ``changes``."""
    out = []
    for m in manifests:
        if m.kind == kind and m.name == name:
            body = copy.deepcopy(m.body)
            body["metadata"].setdefault("annotations", {}).update(changes)
            m = Manifest(m.environment, body, m.folder, m.source)
        out.append(m)
    return out


# --- item 1: cert-manager before cluster-api-operator, and the generic wave check -------------


def test_cert_manager_is_installed_before_the_operator_chart(fleet: Fleet) -> None:
    out = hybrid(fleet)
    cert_manager = find(out, "Application", "fleet-dev-cert-manager")
    source = cert_manager.body["spec"]["source"]
    assert source["chart"] == "cert-manager"
    assert source["repoURL"] == "https://charts.jetstack.io"
    assert source["targetRevision"] == "v1.21.1"  # the chart's versions start with "v"
    assert source["helm"]["valuesObject"] == {"crds": {"enabled": True, "keep": True}}
    operator = find(out, "Application", "fleet-dev-cluster-api-operator")
    # The removed dependency's value did nothing; it must not pretend to install anything.
    assert "cert-manager" not in operator.body["spec"]["source"]["helm"]["valuesObject"]
    assert wave(cert_manager) < wave(operator)
    assert check_waves(out, Platform.of(fleet).plugins) == []


def test_wave_check_fails_on_the_old_ordering(fleet: Fleet) -> None:
    out = hybrid(fleet)
    same_wave = _retarget(
        out,
        "Application",
        "fleet-dev-cluster-api-operator",
        **{SYNC_WAVE: str(wave(find(out, "Application", "fleet-dev-cert-manager")))},
    )
    problems = [p.line() for p in check_waves(same_wave, Platform.of(fleet).plugins)]
    assert any(
        "fleet-dev-cluster-api-operator" in line
        and "cert-manager.io/Certificate" in line
        and "installed in wave 1" in line
        for line in problems
    ), problems
    # The old render had no cert-manager at all.
    without = [m for m in out if m.name != "fleet-dev-cert-manager"]
    problems = [p.line() for p in check_waves(without, Platform.of(fleet).plugins)]
    assert any("cert-manager, which this environment does not install" in p for p in problems)


def test_wave_check_is_its_own_entry_of_the_check_registry(fleet: Fleet) -> None:
    out = hybrid(fleet)
    late = _retarget(out, "Application", "fleet-dev-providers", **{SYNC_WAVE: "4"})
    checks = Checks.of(fleet).all  # what synth, fleet validate and fleet diff run
    context = CheckContext.of(fleet, None)
    problems = [p.line() for p in check_environments(checks, {"dev": late}, context)]
    # platform/ (wave 4) holds ProviderConfigs whose CRDs the providers install.
    assert any("ProviderConfig" in p and "wave 4" in p for p in problems), problems
    # The reference check no longer runs it from inside.
    assert not any("wave" in p.line() for p in check_references(late, Platform.of(fleet).plugins))


def test_an_operator_provider_without_health_orders_nothing(fleet: Fleet) -> None:
    out = hybrid(fleet)
    cm = find(out, "ConfigMap", "argocd-cm")
    body = copy.deepcopy(cm.body)
    del body["data"]["resource.customizations.health.operator.cluster.x-k8s.io_CoreProvider"]
    broken = [Manifest(m.environment, body, m.folder, m.source) if m is cm else m for m in out]
    problems = [p.line() for p in check_waves(broken, Platform.of(fleet).plugins)]
    assert any("cluster.x-k8s.io/Cluster" in p and "cluster-api," in p for p in problems)


def _locks() -> list[tuple[Path, dict[str, str]]]:
    """(the CRD folder, an entry of the lock beside it) of the package's pinned CRDs and of
    every tool component that carries its own (the kubeadm providers' ``crds`` slot)."""
    folders = dict.fromkeys([crds_dir(), *(c.crds for c in tool_components() if c.crds)])
    return [
        (folder, entry)
        for folder in folders
        for entry in yaml.safe_load((folder.parent / "crds.lock.yaml").read_text())["crds"]
    ]


def test_owned_crds_of_the_pinned_components_are_the_lock() -> None:
    """What the components say they own equals the locks (crds.lock.yaml, and the lock of a
    component's own ``crds`` folder; component = the folder a CRD is pinned under; group and
    kind read from the pinned file); only cert-manager's CRDs are not pinned (cert-manager
    v1.21.1 ``deploy/charts/cert-manager/templates/crd-*.yaml``)."""
    pinned: dict[str, set[tuple[str, str]]] = {}
    for folder, entry in _locks():
        component = entry["path"].split("/", 1)[0]
        candidates = (folder / f"{entry['path']}.gz", folder / entry["path"])
        crd = yaml.safe_load(read_crd_file(next(p for p in candidates if p.exists())))
        pinned.setdefault(component, set()).add(
            (crd["spec"]["group"], crd["spec"]["names"]["kind"])
        )
    builtin = tool_components()
    assert {c.name: set(c.owns) for c in builtin if c.crds_pinned and c.owns} == pinned
    assert [c.name for c in builtin if not c.crds_pinned] == ["cert-manager"]
    # A component's own folder holds its CRDs only; the package's holds no one's own.
    for c in builtin:
        if c.crds is not None:
            assert {e["path"].split("/", 1)[0] for f, e in _locks() if f == c.crds} == {
                "cluster-api-kubeadm-bootstrap",
                "cluster-api-kubeadm-control-plane",
            }


# --- item 8: one failing cluster holds up nobody else -----------------------------------------


def test_clusters_are_the_roots_last_wave(fleet: Fleet) -> None:
    FleetPackage(fleet, "p", namespace="p", source=GitPath(path="apps/p"))
    out = hybrid(fleet, export_kubeconfigs=True, kubeconfig_store="store")
    root_items = [m for m in out if m.folder == "bootstrap" and m.name != "fleet-dev"]
    cluster_apps = [m for m in root_items if "/clusters/" in str(m.body.get("spec", {}))]
    assert len(cluster_apps) == 2
    assert {wave(m) for m in cluster_apps} == {WAVE_CLUSTERS}
    # Nothing of the root comes after (or with) a per-cluster Application: the root's last
    # wave is not waited for, so no other step waits on any cluster.
    others = [m for m in root_items if m not in cluster_apps]
    assert others and max(wave(m) for m in others) < WAVE_CLUSTERS
    assert not [m for m in out if m.folder == "registrations"]


def test_each_registration_lives_in_its_clusters_folder_after_the_cluster(fleet: Fleet) -> None:
    out = hybrid(fleet, export_kubeconfigs=True, kubeconfig_store="store")
    for cluster in ("mag-dev", "oke-dev"):
        folder = f"clusters/{cluster}"
        inside = [m for m in out if m.folder == folder]
        registration = [m for m in inside if m.api_version.startswith("cluster.argocd.")]
        push = [m for m in inside if m.kind == "PushSecret"]
        assert [m.name for m in registration] == [cluster]
        # OKE kubeconfigs are never exported (their token expires within minutes).
        assert len(push) == (0 if cluster.startswith("oke") else 1)
        # OKE node pools come with the registration: it needs the API server, not the nodes
        # (fleet.clouds.oci.render; the Cluster's health, fleet.platform.capi_health).
        pools = [m for m in inside if m.kind in ("MachinePool", "OCIManagedMachinePool")]
        assert len(pools) == (2 if cluster.startswith("oke") else 0)
        objects = [m for m in inside if m not in registration + push + pools]
        assert objects and {wave(m) for m in objects} == {0}
        assert {wave(m) for m in registration + push + pools} == {1}
        app = find(out, "Application", f"fleet-dev-cluster-{cluster}")
        assert app.body["spec"]["source"]["path"] == f"dist/dev/{folder}"


# --- issue 21.1: a sync of the root never waits on a cluster's health ------------------------


def test_the_root_shares_its_last_wave_with_the_cluster_applications_only(fleet: Fleet) -> None:
    """argo-cd v3.5.1 ``gitops-engine/pkg/sync/sync_context.go`` ``Sync``: every running task
    of a multi-step sync is health-checked (``health.GetResourceHealth`` with the Lua
    overrides) before the next wave, Degraded fails the sync, anything but Healthy waits; the
    last wave ends the sync right after it is applied ("if it is the last phase/wave ...
    successful EVEN if those objects subsequently degrades"). ``controller/sync.go``
    (``WithHealthOverride``) makes no exception for the root's own manifest, whose health is
    the worst of its children's. So the root's own manifest must sit in the last wave, with
    the clusters, and nothing else the bootstrap needs may sit there."""
    FleetPackage(fleet, "p", namespace="p", source=GitPath(path="apps/p"))
    out = hybrid(fleet, export_kubeconfigs=True, kubeconfig_store="store")
    bootstrap = [m for m in out if m.folder == "bootstrap"]
    last = max(wave(m) for m in bootstrap)
    assert wave(find(out, "Application", "fleet-dev")) == last == WAVE_CLUSTERS
    assert {m.name for m in bootstrap if wave(m) == last} == {
        "fleet-dev",
        "fleet-dev-cluster-mag-dev",
        "fleet-dev-cluster-oke-dev",
    }


def test_an_environment_without_clusters_keeps_the_root_in_the_last_wave(fleet: Fleet) -> None:
    argocd(fleet)
    out = rendered(fleet)
    root = find(out, "Application", "fleet-dev")
    assert wave(root) == WAVE_CLUSTERS
    assert all(wave(m) < WAVE_CLUSTERS for m in out if m.folder == "bootstrap" and m is not root)


def test_the_roots_health_leaves_the_clusters_out(fleet: Fleet) -> None:
    """argo-cd v3.5.1 ``controller/health.go`` ``setApplicationHealth`` skips a child whose
    live object has ``argocd.argoproj.io/ignore-healthcheck: "true"``
    (``common.AnnotationIgnoreHealthCheck``): a Progressing or Degraded cluster leaves the
    root's health (what dashboards and alerts read) at the platform's."""
    out = hybrid(fleet)
    apps = [m for m in out if m.kind == "Application" and m.folder == "bootstrap"]
    ignored = {m.name for m in apps if m.body["metadata"]["annotations"].get(IGNORE_HEALTHCHECK)}
    assert ignored == {"fleet-dev-cluster-mag-dev", "fleet-dev-cluster-oke-dev"}
    for name in ignored:
        assert (
            find(out, "Application", name).body["metadata"]["annotations"][IGNORE_HEALTHCHECK]
            == "true"
        )


@pytest.mark.parametrize("child", ["Progressing", "Degraded", "Healthy"])
def test_an_application_is_as_healthy_as_argocd_says(child: str) -> None:
    """Why the root may not sit in a waited wave: the Application health check reports the
    health ArgoCD computed for it, which for the root is the worst of its children's."""
    root = {"status": {"health": {"status": child, "message": "m"}}}
    assert run_health(APPLICATION_HEALTH, root, open_libs=False) == {
        "status": child,
        "message": "m",
    }


def test_a_retry_syncs_the_latest_commit(fleet: Fleet) -> None:
    """A failed sync retries forever (``limit: -1``) and, while it does, automated sync
    starts no new one; with ``retry.refresh`` the retry takes the latest revision (argo-cd
    v3.5.1 ``controller/appcontroller.go`` ``processRequestedAppOperation``: "Remove the
    desired revisions if the sync failed and we are retrying"), so a Degraded step is fixed
    by its next commit instead of retrying the commit that broke it."""
    out = hybrid(fleet)
    apps = [m for m in out if m.kind == "Application" and m.folder == "bootstrap"]
    assert len(apps) > 5
    for m in apps:
        retry = m.body["spec"]["syncPolicy"]["retry"]
        assert retry["refresh"] is True, m.name
        assert retry["limit"] == -1


# --- issue 21.5: argocd-cm keeps ArgoCD's default resource.exclusions -------------------------

UPSTREAM_EXCLUSIONS = yaml.safe_load(
    """\
### Network resources created by the Kubernetes control plane and excluded to reduce the number of watched events and UI clutter
- apiGroups:
  - ''
  - discovery.k8s.io
  kinds:
  - Endpoints
  - EndpointSlice
### Internal Kubernetes resources excluded reduce the number of watched events
- apiGroups:
  - coordination.k8s.io
  kinds:
  - Lease
### Internal Kubernetes Authz/Authn resources excluded reduce the number of watched events
- apiGroups:
  - authentication.k8s.io
  - authorization.k8s.io
  kinds:
  - SelfSubjectReview
  - TokenReview
  - LocalSubjectAccessReview
  - SelfSubjectAccessReview
  - SelfSubjectRulesReview
  - SubjectAccessReview
### Intermediate Certificate Request excluded reduce the number of watched events
- apiGroups:
  - certificates.k8s.io
  kinds:
  - CertificateSigningRequest
- apiGroups:
  - cert-manager.io
  kinds:
  - CertificateRequest
### Cilium internal resources excluded reduce the number of watched events and UI Clutter
- apiGroups:
  - cilium.io
  kinds:
  - CiliumIdentity
  - CiliumEndpoint
  - CiliumEndpointSlice
### Kyverno intermediate and reporting resources excluded reduce the number of watched events and improve performance
- apiGroups:
  - kyverno.io
  - reports.kyverno.io
  - wgpolicyk8s.io
  kinds:
  - PolicyReport
  - ClusterPolicyReport
  - EphemeralReport
  - ClusterEphemeralReport
  - AdmissionReport
  - ClusterAdmissionReport
  - BackgroundScanReport
  - ClusterBackgroundScanReport
  - UpdateRequest
"""  # noqa: E501
)
"""``data["resource.exclusions"]`` of argoproj/argo-cd v3.5.1 (109ca7ca)
``manifests/base/config/argocd-cm.yaml`` (git blob 393d3fe657b26cdd66dc09295c80f1abb2b03712),
copied from the file."""


def test_argocd_cm_keeps_argocds_default_exclusions(fleet: Fleet) -> None:
    """The fleet applies ``resource.exclusions`` server-side with force-conflicts
    (argo-cd v3.5.1 ``gitops-engine/pkg/utils/kube/resource_ops.go``), which replaces the
    whole value; ArgoCD reads it as one list (``util/settings/settings.go``
    ``GetResourcesFilter``) and keeps no defaults of its own besides events, metrics and
    Leases (``util/settings/resources_filter.go``). So every default entry must be there."""
    argocd(fleet)
    data = find(rendered(fleet), "ConfigMap", "argocd-cm").body["data"]
    exclusions = yaml.safe_load(data["resource.exclusions"])
    assert len(UPSTREAM_EXCLUSIONS) == 7
    assert all(entry in exclusions for entry in UPSTREAM_EXCLUSIONS)
    assert [e for e in exclusions if e not in UPSTREAM_EXCLUSIONS] == [
        {"apiGroups": ["*"], "kinds": ["ProviderConfigUsage"], "clusters": ["*"]}
    ]


def test_the_root_never_takes_over_a_client_side_argocd_cm(fleet: Fleet) -> None:
    """A server-side sync first moves the fields that ``kubectl-client-side-apply`` owns
    (operation Update) to ArgoCD's manager, unless the Application's sync options carry
    ``ClientSideApplyMigration=false`` (argo-cd v3.5.1 ``controller/sync.go``
    ``WithClientSideApplyMigration``; ``gitops-engine/pkg/sync/sync_context.go``
    ``needsClientSideApplyMigration``), and the partial ``argocd-cm`` would then drop
    upstream's ``resource.customizations.ignoreResourceUpdates.*`` keys of an ArgoCD installed
    client-side. The root syncs the ArgoCD config maps: it carries the option; the maps
    themselves are applied server-side."""
    argocd(fleet)
    out = rendered(fleet)
    root = find(out, "Application", "fleet-dev").body
    assert root["spec"]["syncPolicy"]["syncOptions"] == ["ClientSideApplyMigration=false"]
    for name in ("argocd-cm", "argocd-cmd-params-cm", "argocd-rbac-cm"):
        options = find(out, "ConfigMap", name).body["metadata"]["annotations"][SYNC_OPTIONS]
        assert "ServerSideApply=true" in options.split(",")


# --- item 4: provider-argocd can talk to a stock ArgoCD ---------------------------------------


def test_provider_argocd_trusts_the_in_cluster_self_signed_certificate(fleet: Fleet) -> None:
    argocd(
        fleet,
        server_addr=per_env(
            dev="argocd-server.argocd.svc:443",
            test="argocd.example.org:443",
            prod="argocd-server:443",
        ),
    )
    spec = find(rendered(fleet), "ProviderConfig", "argocd-provider").body["spec"]
    assert spec["insecure"] is True
    assert (
        "insecure"
        not in find(rendered(fleet, "test"), "ProviderConfig", "argocd-provider").body["spec"]
    )
    assert (
        find(rendered(fleet, "prod"), "ProviderConfig", "argocd-provider").body["spec"]["insecure"]
        is True
    )


def test_insecure_can_be_turned_off(tmp_path: Path) -> None:
    fleet = Fleet(FleetConfig(root=tmp_path))
    argocd(fleet, insecure=False)
    assert "insecure" not in find(rendered(fleet), "ProviderConfig", "argocd-provider").body["spec"]


def test_provider_argocd_account_and_narrow_rbac(fleet: Fleet) -> None:
    out = hybrid(fleet)
    cm = find(out, "ConfigMap", "argocd-cm").body
    assert cm["data"]["accounts.provider-argocd"] == "apiKey"
    rbac = find(out, "ConfigMap", "argocd-rbac-cm")
    assert rbac.folder == "bootstrap"
    annotations = rbac.body["metadata"]["annotations"]
    assert annotations[SYNC_OPTIONS] == "ServerSideApply=true,Prune=false,Delete=false"
    assert wave(rbac) == 0
    # Its own key: ArgoCD appends every policy.<x>.csv to policy.csv; the operator's
    # policy.csv is left alone.
    assert set(rbac.body["data"]) == {"policy.fleet.csv"}
    lines = rbac.body["data"]["policy.fleet.csv"].splitlines()
    assert lines == PROVIDER_ARGOCD_POLICY.splitlines()
    grants = {tuple(x.strip() for x in line.split(",")) for line in lines if line.startswith("p,")}
    assert {g[3] for g in grants} == {"get", "create", "update", "delete"}
    assert {g[2] for g in grants} == {"clusters"}
    assert "g, provider-argocd, role:fleet-provider-argocd" in lines
    assert "role:admin" not in rbac.body["data"]["policy.fleet.csv"]


# --- item 14: health of cluster-api-operator providers ---------------------------------------


def _lua(script: str, obj: dict[str, Any]) -> dict[str, str]:
    lua = lupa.LuaRuntime(unpack_returned_tuples=True)

    def to_lua(value: Any) -> Any:
        if isinstance(value, dict):
            return lua.table_from({k: to_lua(v) for k, v in value.items()})
        if isinstance(value, list):
            return lua.table_from([to_lua(v) for v in value])
        return value

    lua.globals().obj = to_lua(obj)
    result = lua.execute(script)
    return {"status": result["status"], "message": result["message"]}


def _provider(conditions: list[dict[str, str]], **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"generation": 1},
        "spec": {"version": "v0.24.0"},
        "status": {"observedGeneration": 1, "conditions": conditions, **status},
    }


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"spec": {"version": "v1"}}, "Progressing"),
        (_provider([]), "Progressing"),
        (
            _provider(
                [
                    {
                        "type": "PreflightCheckPassed",
                        "status": "False",
                        "reason": "WaitingForCoreProviderReady",
                    }
                ]
            ),
            "Progressing",
        ),
        (
            _provider(
                [
                    {
                        "type": "PreflightCheckPassed",
                        "status": "False",
                        "reason": "UnsupportedProviderDowngradeReason",
                    }
                ]
            ),
            "Degraded",
        ),
        (
            _provider(
                [
                    {
                        "type": "ProviderInstalled",
                        "status": "False",
                        "reason": "ComponentsFetchError",
                        "message": "404",
                    }
                ]
            ),
            "Degraded",
        ),
        (
            _provider(
                [{"type": "ProviderInstalled", "status": "True"}], installedVersion="v0.24.0"
            ),
            "Progressing",
        ),
        (
            _provider(
                [
                    {"type": "ProviderInstalled", "status": "True"},
                    {"type": "Ready", "status": "False", "reason": "NoDeploymentAvailable"},
                ],
                installedVersion="v0.24.0",
            ),
            "Progressing",
        ),
        (
            _provider(
                [
                    {"type": "ProviderInstalled", "status": "True"},
                    {"type": "Ready", "status": "True"},
                ],
                installedVersion="v0.23.0",
            ),
            "Progressing",
        ),
        (
            _provider(
                [
                    {"type": "ProviderInstalled", "status": "True"},
                    {"type": "Ready", "status": "True"},
                ],
                installedVersion="v0.24.0",
            ),
            "Healthy",
        ),
        (
            {
                **_provider(
                    [
                        {"type": "Ready", "status": "True"},
                        {"type": "ProviderInstalled", "status": "True"},
                    ],
                    installedVersion="v0.24.0",
                ),
                "metadata": {"generation": 2},
            },
            "Progressing",
        ),
    ],
)
def test_operator_provider_health(obj: dict[str, Any], expected: str) -> None:
    assert _lua(CAPI_OPERATOR_PROVIDER_HEALTH, obj)["status"] == expected


def test_operator_provider_health_is_configured_where_cluster_api_is(fleet: Fleet) -> None:
    out = hybrid(fleet)
    data = find(out, "ConfigMap", "argocd-cm").body["data"]
    for kind in ("CoreProvider", "InfrastructureProvider"):
        key = f"resource.customizations.health.operator.cluster.x-k8s.io_{kind}"
        assert data[key] == CAPI_OPERATOR_PROVIDER_HEALTH


# --- item 15: install only what the environment needs -----------------------------------------


CAPI_PARTS = {
    ("Application", "fleet-dev-cert-manager"),
    ("Application", "fleet-dev-cluster-api-operator"),
    ("CoreProvider", "cluster-api"),
    ("InfrastructureProvider", "oci"),
    ("Namespace", "capoci-system"),
    ("Namespace", "capi-system"),
}


def _kinds_names(out: Sequence[Manifest]) -> set[tuple[str, str]]:
    return {(m.kind, m.name) for m in out}


def test_magnum_only_environment_installs_no_cluster_api(fleet: Fleet) -> None:
    magnum(fleet)
    argocd(fleet)
    out = rendered(fleet)
    assert not CAPI_PARTS & _kinds_names(out)
    assert ("Provider", "provider-openstack") in _kinds_names(out)
    assert not [k for k in find(out, "ConfigMap", "argocd-cm").body["data"] if "x-k8s" in k]
    assert "fleet-dev-external-secrets" not in names(out, "Application")
    assert check_waves(out, Platform.of(fleet).plugins) == []


def test_oke_only_environment_installs_no_provider_openstack(fleet: Fleet) -> None:
    oke(fleet)
    argocd(fleet)
    out = rendered(fleet)
    assert _kinds_names(out) >= CAPI_PARTS
    assert ("Provider", "provider-openstack") not in _kinds_names(out)
    assert ("Provider", "provider-argocd") in _kinds_names(out)
    assert check_waves(out, Platform.of(fleet).plugins) == []


def test_external_secrets_only_where_kubeconfigs_are_exported(fleet: Fleet) -> None:
    magnum(fleet, environments=["dev", "prod"])
    argocd(fleet, export_kubeconfigs=per_env(prod=True, default=False), kubeconfig_store="s")
    assert "fleet-dev-external-secrets" not in names(rendered(fleet), "Application")
    assert "fleet-prod-external-secrets" in names(rendered(fleet, "prod"), "Application")


def test_capoci_starts_without_credentials_of_its_own(fleet: Fleet) -> None:
    oke(fleet)
    argocd(fleet)
    spec = find(rendered(fleet), "InfrastructureProvider", "oci").body["spec"]
    assert spec["deployment"]["containers"] == [
        {"args": {"--init-oci-clients-on-startup": "false"}, "name": "manager"}
    ]
    assert spec["manager"]["featureGates"] == {"MachinePool": True}
    # No config secret by default: every cluster uses its OCIClusterIdentity.
    assert "configSecret" not in spec


def test_capoci_without_credentials_needs_an_identity_on_every_cluster(fleet: Fleet) -> None:
    from fleet import DefinitionError

    oke(fleet, identity=None)
    argocd(fleet)
    with pytest.raises(DefinitionError, match="no identity"):
        rendered(fleet)


def test_capoci_config_secret_can_be_named(fleet: Fleet) -> None:
    oke(fleet, identity=None)
    argocd(fleet)
    CapociCredentials(fleet, "capoci", secret="capoci-variables")
    out = rendered(fleet)
    spec = find(out, "InfrastructureProvider", "oci").body["spec"]
    assert spec["configSecret"] == {"name": "capoci-variables", "namespace": "capoci-system"}
    # The manager starts with the default credentials of the secret's variables.
    assert "deployment" not in spec
    # The secret's namespace exists from wave 0, before anyone restores the secret.
    ns = find(out, "Namespace", "capoci-system")
    assert ns.folder == "bootstrap" and wave(ns) == 0


def test_versions_pin_another_version_of_a_component(fleet: Fleet) -> None:
    out = hybrid(fleet, versions={"cluster-api": "v1.12.12", "crossplane": "2.3.5"})
    assert find(out, "CoreProvider", "cluster-api").body["spec"]["version"] == "v1.12.12"
    crossplane = find(out, "Application", "fleet-dev-crossplane").body["spec"]["source"]
    assert crossplane["targetRevision"] == "2.3.5"
    # The others keep their pins.
    assert find(out, "InfrastructureProvider", "oci").body["spec"]["version"] == "v0.24.0"


@pytest.mark.parametrize("version", ["latest", "2.x", "~2.3", "2.3", "main"])
def test_fails_a_component_version_that_is_not_a_pin(fleet: Fleet, version: str) -> None:
    """Charts: argo-cd v3.5.1 ``newHelmClientResolveRevision`` and helm v4.2.1
    ``IndexFile.Get`` resolve ranges to the newest match; a Crossplane package tag or a
    cluster-api-operator provider version is a release tag too."""
    from fleet import FleetError

    magnum(fleet)
    argocd(fleet, versions={"crossplane": version})
    with pytest.raises(FleetError) as raised:
        rendered(fleet)
    assert f"(argocd): versions[crossplane]: {version!r} is not an exact version" in str(
        raised.value
    )


def test_fails_a_version_for_an_unknown_component(fleet: Fleet) -> None:
    from fleet import FleetError

    magnum(fleet)
    oke(fleet)
    argocd(fleet, versions={"cluster-api-operater": "0.29.0"})
    with pytest.raises(FleetError) as raised:
        rendered(fleet)
    assert (
        "(argocd): versions: no platform component is called 'cluster-api-operater' "
        "(did you mean 'cluster-api-operator'"
    ) in str(raised.value)


def test_a_version_names_a_component_of_this_fleet(fleet: Fleet) -> None:
    """The components known are the fleet's own (what its declarations' plug-ins list), not
    whatever the process imported: a Magnum-only fleet has no Cluster API to pin."""
    from fleet import FleetError

    magnum(fleet)
    argocd(fleet, versions={"cluster-api-operator": "0.29.0"})
    with pytest.raises(FleetError) as raised:
        rendered(fleet)
    assert (
        "no platform component is called 'cluster-api-operator' (known: argo-cd, crossplane, "
        "external-secrets, provider-argocd, provider-openstack)"
    ) in str(raised.value)


# --- item 16: secrets and namespaces a person creates ----------------------------------------


def test_namespaces_of_person_created_secrets_exist_in_wave_0(fleet: Fleet) -> None:
    out = hybrid(fleet)
    argo = next(c for c in fleet.declarations() if isinstance(c, ArgoCd))
    secrets = argo.required_secrets("dev")
    refs = {(ref.namespace, ref.name) for ref, _ in secrets}
    assert refs == {
        ("crossplane-system", "argocd-credentials"),
        ("crossplane-system", "mag-project-openstack-credentials"),
        ("oke-clusters", "oci-user-principal"),
    }
    for namespace in {ns for ns, _ in refs}:
        m = find(out, "Namespace", namespace)
        assert m.folder == "bootstrap" and wave(m) == 0
        assert m.body["metadata"]["annotations"][SYNC_OPTIONS] == "Prune=false,Delete=false"


# --- item 7: package sync options -------------------------------------------------------------


def _package_options(fleet: Fleet, **kwargs: Any) -> list[str]:
    FleetPackage(fleet, "pkg", namespace="p", environments=["dev"], **kwargs)
    body = find(rendered(fleet), "ApplicationSet", "pkg").body
    options: list[str] = body["spec"]["template"]["spec"]["syncPolicy"]["syncOptions"]
    return options


def test_helm_packages_apply_server_side_by_default(fleet: Fleet) -> None:
    """Client-side apply keeps the whole object in last-applied-configuration, capped at
    262,144 bytes (kubernetes/apimachinery ``pkg/api/validation/objectmeta.go``);
    kube-prometheus-stack 62.7.0's CRDs are up to 773 KB."""
    chart = HelmChart(repo_url="https://charts.example.org", chart="c", version="1.0.0")
    assert _package_options(fleet, source=chart) == ["CreateNamespace=true", "ServerSideApply=true"]


def test_git_packages_and_explicit_sync_options(tmp_path: Path) -> None:
    fleet = Fleet(FleetConfig(root=tmp_path))
    assert _package_options(fleet, source=GitPath(path="apps/p")) == ["CreateNamespace=true"]
    other = Fleet(FleetConfig(root=tmp_path))
    chart = HelmChart(repo_url="https://charts.example.org", chart="c", version="1.0.0")
    options = _package_options(other, source=chart, sync_options=["ServerSideApply=false"])
    assert options == ["ServerSideApply=false"]


def test_fails_malformed_sync_option(fleet: Fleet) -> None:
    from fleet import DefinitionError

    with pytest.raises(DefinitionError, match="sync_options"):
        FleetPackage(
            fleet, "pkg", namespace="p", source=GitPath(path="a"), sync_options=["ServerSideApply"]
        )


# --- item 9: ArgoCD and the ids CAPOCI writes -------------------------------------------------


def test_oke_cluster_application_applies_and_diffs_server_side(fleet: Fleet) -> None:
    out = hybrid(fleet)
    app = find(out, "Application", "fleet-dev-cluster-oke-dev").body
    assert app["metadata"]["annotations"][COMPARE_OPTIONS] == "ServerSideDiff=true"
    assert "ServerSideApply=true" in app["spec"]["syncPolicy"]["syncOptions"]
    magnum_app = find(out, "Application", "fleet-dev-cluster-mag-dev").body
    assert COMPARE_OPTIONS not in magnum_app["metadata"]["annotations"]


class _IgnoringOke(OciManagedCluster):
    ignore_differences: ClassVar[tuple[IgnoreDifference, ...]] = (
        IgnoreDifference(
            "infrastructure.cluster.x-k8s.io",
            "OCIManagedCluster",
            (".spec.networkSpec.vcn.subnets[]?.id",),
        ),
    )


def test_cluster_class_ignore_differences_reach_its_application(fleet: Fleet) -> None:
    oke(fleet, cls=_IgnoringOke)
    argocd(fleet)
    app = find(rendered(fleet), "Application", "fleet-dev-cluster-oke-dev").body
    assert app["spec"]["ignoreDifferences"] == [
        {
            "group": "infrastructure.cluster.x-k8s.io",
            "jqPathExpressions": [".spec.networkSpec.vcn.subnets[]?.id"],
            "kind": "OCIManagedCluster",
        }
    ]
    assert "RespectIgnoreDifferences=true" in app["spec"]["syncPolicy"]["syncOptions"]


# --- day 2: chart upgrades never prune CRDs -------------------------------------------------


def test_platform_charts_never_prune(fleet: Fleet) -> None:
    out = hybrid(fleet, export_kubeconfigs=True, kubeconfig_store="store")
    charts = [m for m in out if m.kind == "Application" and "chart" in m.body["spec"]["source"]]
    assert {m.body["spec"]["source"]["chart"] for m in charts} == {
        "crossplane",
        "cert-manager",
        "external-secrets",
        "cluster-api-operator",
    }
    for m in charts:
        policy = m.body["spec"]["syncPolicy"]
        assert policy["automated"]["prune"] is False, m.name
        assert {"Prune=false", "Delete=false", "ServerSideApply=true"} <= set(policy["syncOptions"])
        assert m.body["spec"]["source"]["helm"]["skipCrds"] is False
    eso = find(out, "Application", "fleet-dev-external-secrets").body["spec"]["source"]["helm"]
    annotations = eso["valuesObject"]["crds"]["annotations"]
    assert annotations == {
        SYNC_OPTIONS: "Prune=false,Delete=false",
        "helm.sh/resource-policy": "keep",
    }


# --- item 17: every folder is synced, for any fleet (extra/ included) ------------------------


def _synced_folders(manifests: Sequence[Manifest], environment: str) -> set[str]:
    """Folders reached from the root Application, following Applications (any depth)."""
    by_folder: dict[str, list[Manifest]] = {}
    for m in manifests:
        by_folder.setdefault(m.folder, []).append(m)
    reached: set[str] = set()
    queue = ["bootstrap"]
    while queue:
        folder = queue.pop()
        if folder in reached:
            continue
        reached.add(folder)
        for m in by_folder.get(folder, []):
            if m.kind == "Application" and "path" in m.body["spec"]["source"]:
                path = m.body["spec"]["source"]["path"]
                queue.append(path.split(f"/{environment}/", 1)[1])
    return reached


def _fixture_fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(FleetConfig(root=tmp_path))
    magnum(fleet, environments=["dev", "prod"])
    oke(fleet, environments=["prod"])
    argocd(fleet, export_kubeconfigs=per_env(prod=True, default=False), kubeconfig_store="s")
    FleetPackage(fleet, "p", namespace="p", environments=["prod"], source=GitPath(path="a"))
    store = cdk8s.ApiObject(
        fleet.environment("dev"),
        "store",
        api_version="external-secrets.io/v1",
        kind="ClusterSecretStore",
        metadata={"name": "s"},
    )
    store.add_json_patch(cdk8s.JsonPatch.add("/spec", {"provider": {"fake": {"data": []}}}))
    settings = cdk8s.ApiObject(
        fleet.environment("prod"),
        "cm",
        api_version="v1",
        kind="ConfigMap",
        metadata={"name": "team-settings", "namespace": "argocd"},
    )
    settings.add_json_patch(cdk8s.JsonPatch.add("/data", {"a": "b"}))
    return fleet


def test_every_folder_of_every_environment_is_synced(tmp_path: Path) -> None:
    fleet = _fixture_fleet(tmp_path)
    for env in fleet.environment_names:
        out = rendered(fleet, env)
        folders = {m.folder for m in out}
        assert folders <= _synced_folders(out, env), env
        if env in ("dev", "prod"):
            assert "extra" in folders


def test_extra_objects_are_checked_like_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``fleet synth`` says of them (``testing.synth(validate=True)``: every check)."""
    monkeypatch.setenv("FLEET_CRDS_DIR", str(crds_dir()))
    fleet = _fixture_fleet(tmp_path)
    # dev exports no kubeconfigs, so no External Secrets: the user's ClusterSecretStore
    # would never apply, and the check says so.
    with pytest.raises(testing.InvalidObjects) as refused:
        testing.synth(fleet, ["dev"], validate=True)
    problems = [p.line() for p in refused.value.problems]
    assert any("ClusterSecretStore" in p and "external-secrets" in p for p in problems), problems
    # prod passes every check: waves, the schemas (against the pinned CRDs), references
    testing.synth(fleet, ["prod"], validate=True)


# --- 15.5: clouds as plug-ins -----------------------------------------------------------------


def test_every_cloud_contributes_through_its_plugin() -> None:
    plugins = dict(cloud_plugins(builtin_plugins()))
    assert set(plugins) == {MagnumCluster, OciManagedCluster}
    assert [c.name for c in plugins[MagnumCluster].components] == ["provider-openstack"]
    assert [c.name for c in plugins[OciManagedCluster].components] == ["cluster-api-provider-oci"]
    # A component's health checks are for kinds it owns, or for the object that installs it
    # (a cluster-api-operator provider's kind, which ArgoCD has no check for).
    for component in tool_components():
        installer = getattr(component.install, "installer_kind", None)
        for check in component.health_checks:
            kind = (check.group, check.kind)
            assert kind in component.owns or kind == installer, (component, check)


# --- 15.6: one job per module, no import cycles -----------------------------------------------


def test_argocd_modules_do_not_import_each_other_in_a_cycle() -> None:
    """The ArgoCd construct imports the bootstrap plan, registrations and packages; none of
    them imports it back (not even inside a function)."""
    import ast

    folder = REPO / "constructs" / "fleet" / "argocd"
    edges: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        module = f"fleet.argocd.{path.stem}"
        tree = ast.parse(path.read_text())
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module == "fleet.argocd":
                    targets |= {f"fleet.argocd.{a.name}" for a in node.names}
                elif node.module.startswith("fleet.argocd."):
                    targets.add(node.module)
        edges[module] = targets - {module}
    assert "fleet.argocd.registration" in edges["fleet.argocd.argo_cd"]

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in edges.get(start, set()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    assert [m for m in edges if reaches(m, m, set())] == []
