"""OKE node pools that autoscale (issue 29): the MachinePool's bounds, no enforced size, the
nodes' capacity for a pool that may be empty, and one cluster autoscaler per cluster, in the
workload cluster, with a management-cluster token it cannot misuse.

Upstream behaviour relied on (each test names its part):

* oracle/cluster-api-provider-oci v0.24.0 (909e19f4) ``cloud/scope/managed_machine_pool.go``
  ``UpdateNodePool``: the OKE pool is resized to ``MachinePool.spec.replicas`` unless the
  MachinePool carries ``cluster.x-k8s.io/replicas-managed-by``;
  ``exp/controllers/ocimachinepoolmachine_controller.go``: deleting a MachinePool Machine only
  removes its finalizer.
* kubernetes-sigs/cluster-api v1.12.11 (8f5479b7) ``internal/webhooks/machinepool.go``
  ``calculateMachinePoolReplicas`` (ported below as :func:`webhook_replicas`).
* kubernetes/autoscaler cluster-autoscaler-1.30.7 (4be8b2d7)
  ``cloudprovider/clusterapi/``: ``clusterapi_utils.go`` (annotation keys),
  ``clusterapi_unstructured.go`` (``InstanceCapacity``, ``CanScaleFromZero``, ``SetSize``
  through the scale subresource), ``clusterapi_provider.go`` (``BuildClusterAPI``: the
  ``--cloud-config`` kubeconfig read once), ``clusterapi_autodiscovery.go``
  (``namespaceToWatch``).
* kubernetes/client-go v0.30.0 ``transport/token_source.go`` (``NewCachedFileTokenSource``:
  a kubeconfig's ``tokenFile`` is read again every minute).
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders import argocd, find, rendered

from fleet import (
    Fleet,
    FleetConfig,
    JsonPatch,
    ManagementCluster,
    OciClusterIdentity,
    OciManagedCluster,
    OkeNodePool,
    OkeVcn,
    per_env,
)
from fleet.checks.problem import InvalidObjects
from fleet.clouds.oci import autoscaler
from fleet.clouds.oci.changes import judge_pool_size
from fleet.clouds.oci.shapes import SHAPES, capacity_annotations
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.manifest import Manifest
from fleet.platform.changes import Change
from fleet.testing import synth
from fleet.views.inventory import inventory

MIN = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
MAX = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
MANAGED_BY = "cluster.x-k8s.io/replicas-managed-by"
CAPACITY = "capacity.cluster-autoscaler.kubernetes.io/"
WAVE = "argocd.argoproj.io/sync-wave"
API_SERVER = "https://mgmt.example.org:6443"
EGRESS = "198.51.100.17/32"


def oke(fleet: Fleet, *pools: OkeNodePool, **overrides: Any) -> OciManagedCluster:
    args: dict[str, Any] = {
        "name": "oke-{env}",
        "environments": ["dev"],
        "compartment_id": "ocid1.compartment.oc1..aaaaexample",
        "region": "eu-frankfurt-1",
        "kubernetes_version": "v1.30.1",
        "availability_domains": ["BKrI:EU-FRANKFURT-1-AD-1"],
        "node_image_id": "ocid1.image.oc1.eu-frankfurt-1.aaaaexample",
        "network": OkeVcn(api_allowed_cidrs=[EGRESS]),
        "node_pools": list(pools)
        or [
            OkeNodePool(name="system", ocpus=1, memory_gb=16, node_count=1),
            OkeNodePool(name="web", ocpus=2, memory_gb=16, min_node_count=1, max_node_count=5),
            OkeNodePool(name="batch", ocpus=2, memory_gb=32, min_node_count=0, max_node_count=4),
        ],
    }
    args.update(overrides)
    if "identity" not in args:
        args["identity"] = OciClusterIdentity(fleet, "oci", principal_secret="oci-principal")
    return OciManagedCluster(fleet, args.pop("id", "oke"), **args)


def autoscaled_fleet(root: Path, **overrides: Any) -> Fleet:
    fleet = Fleet(FleetConfig(root=root))
    ManagementCluster(fleet, "management", api_server=API_SERVER, egress_cidrs=[EGRESS])
    oke(fleet, **overrides)
    argocd(fleet)
    return fleet


@pytest.fixture
def manifests(tmp_path: Path) -> list[Manifest]:
    return rendered(autoscaled_fleet(tmp_path))


def webhook_replicas(old: dict[str, Any] | None, new: dict[str, Any], dry_run: bool = False) -> int:
    """kubernetes-sigs/cluster-api v1.12.11 ``internal/webhooks/machinepool.go``
    ``calculateMachinePoolReplicas``, ported: what ``spec.replicas`` becomes on admission."""
    if new["spec"].get("replicas") is not None:
        return int(new["spec"]["replicas"])
    annotations = new["metadata"].get("annotations") or {}
    if MIN in annotations and MAX in annotations:
        low, high = int(annotations[MIN]), int(annotations[MAX])
        if old is None:
            return low
        current = old["spec"].get("replicas")
        if current is None or current < low:
            return low
        if current > high:
            return high
        return int(current)
    return 1


# --- the acceptance of issue 29 ("29-oke-autoscale") ----------------------------------------


def test_29_oke_autoscale(tmp_path: Path) -> None:
    """An OKE pool with ``min_node_count=1, max_node_count=5`` renders the min/max
    annotations, no ``replicas-managed-by`` and no enforced replicas; an autoscaler for that
    cluster is rendered (``--cloud-provider=clusterapi``); a pool with ``min_node_count=0``
    carries capacity annotations; the render passes every check (schemas of the pinned CRDs,
    references, waves, secrets: ``fleet validate``)."""
    fleet = autoscaled_fleet(tmp_path)
    out = synth(fleet, validate=True).all(env="dev")
    web = find(out, "MachinePool", "oke-dev-web").body
    annotations = web["metadata"]["annotations"]
    assert (annotations[MIN], annotations[MAX]) == ("1", "5")
    assert MANAGED_BY not in annotations
    assert "replicas" not in web["spec"]
    assert not [k for k in annotations if k.startswith(CAPACITY)]  # it never is empty
    deployment = find(out, "Deployment", "cluster-autoscaler-oke-dev")
    assert deployment.folder == "clusters/oke-dev/autoscaler"
    (container,) = deployment.body["spec"]["template"]["spec"]["containers"]
    assert "--cloud-provider=clusterapi" in container["args"]
    assert (
        "--node-group-auto-discovery=clusterapi:namespace=oke-clusters,clusterName=oke-dev"
        in container["args"]
    )
    assert container["image"] == "registry.k8s.io/autoscaling/cluster-autoscaler:v1.30.7"
    batch = find(out, "MachinePool", "oke-dev-batch").body["metadata"]["annotations"]
    assert {k: v for k, v in batch.items() if k.startswith(CAPACITY)} == {
        CAPACITY + "cpu": "4",
        CAPACITY + "memory": "32Gi",
        CAPACITY + "maxPods": "31",
        CAPACITY + "labels": "kubernetes.io/arch=amd64",
    }
    # the fixed pool is what it was
    system = find(out, "MachinePool", "oke-dev-system").body
    assert system["spec"]["replicas"] == 1
    assert not [k for k in system["metadata"].get("annotations", {}) if k.startswith("cluster.")]


def test_fleet_validate_passes_on_an_autoscaled_project(make_project: Any) -> None:
    from fleet.cli.main import main

    root = make_project(
        {
            "clusters/oke.py": f"""\
            from fleet import (ArgoCd, Fleet, ManagementCluster, OciClusterIdentity,
                               OciManagedCluster, OkeNodePool, OkeVcn, SecretKeyRef)


            def define(fleet: Fleet) -> None:
                ManagementCluster(fleet, "management", api_server="{API_SERVER}")
                OciManagedCluster(
                    fleet, "oke", name="oke-{{env}}", environments=["dev"],
                    identity=OciClusterIdentity(fleet, "oci", principal_secret="oci-principal"),
                    compartment_id="ocid1.compartment.oc1..aaaaexample",
                    region="eu-frankfurt-1", kubernetes_version="v1.30.1",
                    availability_domains=["BKrI:EU-FRANKFURT-1-AD-1"],
                    node_image_id="ocid1.image.oc1.eu-frankfurt-1.aaaaexample",
                    network=OkeVcn(api_allowed_cidrs=["{EGRESS}"]),
                    node_pools=[OkeNodePool(name="a", ocpus=1, memory_gb=8,
                                            min_node_count=1, max_node_count=5)],
                )
                ArgoCd(fleet, "argocd", server_addr="argocd-server.argocd.svc:443",
                       credentials=SecretKeyRef(name="argocd-credentials",
                                                namespace="crossplane-system", key="authToken"))
            """
        }
    )
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert main(["--root", str(root), "synth"]) == 0, err.getvalue()
        assert main(["--root", str(root), "validate"]) == 0, err.getvalue()
    assert (root / "dist/dev/clusters/oke-dev/autoscaler").is_dir()


# --- Cluster API's webhook and ArgoCD converge on the size ---------------------------------


def test_a_new_autoscaled_pool_starts_at_its_minimum(manifests: list[Manifest]) -> None:
    """No ``replicas`` in git: the webhook defaults a new MachinePool to the minimum, which
    CAPOCI creates (``CreateNodePool``: ``Size`` from ``replicas``)."""
    web = find(manifests, "MachinePool", "oke-dev-web").body
    assert webhook_replicas(None, web) == 1


@pytest.mark.parametrize(("current", "after"), [(3, 3), (0, 1), (8, 5)])
def test_fixed_to_autoscaled_keeps_the_size_inside_the_bounds(
    tmp_path: Path, current: int, after: int
) -> None:
    """The fixed pool's ``replicas`` leaves git with the change; under server-side apply the
    field ArgoCD no longer sends is removed and the webhook fills it from the old object:
    kept inside [min, max], else clamped. The ``fleet diff`` note says the same."""
    fixed = rendered(
        autoscaled_fleet(
            tmp_path / "a",
            node_pools=[OkeNodePool(name="web", ocpus=1, memory_gb=8, node_count=current)],
        )
    )
    scaled = rendered(
        autoscaled_fleet(
            tmp_path / "b",
            node_pools=[
                OkeNodePool(name="web", ocpus=1, memory_gb=8, min_node_count=1, max_node_count=5)
            ],
        )
    )
    old = find(fixed, "MachinePool", "oke-dev-web").body
    new = find(scaled, "MachinePool", "oke-dev-web").body
    assert webhook_replicas(old, new) == after
    ((level, message),) = judge_pool_size(Change("dev", old, new, _NoObjects(), _NoObjects()))
    assert message.startswith("fixed -> autoscaled (1..5)")
    if current > 5:
        assert level == "warning"
        assert f"the pool had {current} nodes" in message and "sets 5" in message
    elif current < 1:
        assert f"grows from {current} to 1" in message
    else:
        assert level == "note" and "keeps the pool's current size" in message


class _NoObjects:
    def get(self, group: str, kind: str, name: str, namespace: str = "") -> Any:
        return None

    def of_kind(self, group: str, kind: str) -> list[Any]:
        return []


def test_autoscaled_to_fixed_and_bound_changes_have_notes(tmp_path: Path) -> None:
    def machine_pool(root: Path, pool: OkeNodePool) -> dict[str, Any]:
        body: dict[str, Any] = find(
            rendered(autoscaled_fleet(root, node_pools=[pool])), "MachinePool", "oke-dev-web"
        ).body
        return body

    scaled = machine_pool(
        tmp_path / "a",
        OkeNodePool(name="web", ocpus=1, memory_gb=8, min_node_count=1, max_node_count=5),
    )
    fixed = machine_pool(tmp_path / "b", OkeNodePool(name="web", ocpus=1, node_count=2))
    wider = machine_pool(
        tmp_path / "c",
        OkeNodePool(name="web", ocpus=1, memory_gb=8, min_node_count=2, max_node_count=3),
    )
    none = _NoObjects()
    ((level, message),) = judge_pool_size(Change("dev", scaled, fixed, none, none))
    assert level == "warning"
    assert message.startswith("autoscaled (1..5) -> fixed (2)") and "OKE picks the nodes" in message
    verdicts = judge_pool_size(Change("dev", scaled, wider, none, none))
    assert [v[0] for v in verdicts] == ["note", "warning"]
    assert "min_node_count 1 -> 2" in verdicts[0][1]
    assert "max_node_count 5 -> 3" in verdicts[1][1] and "kubectl scale" in verdicts[1][1]
    # a change of waves or labels alone says nothing
    assert judge_pool_size(Change("dev", scaled, scaled, none, none)) == ()


# --- the autoscaler -------------------------------------------------------------------------


def test_the_management_token_may_scale_only_this_clusters_pools(
    manifests: list[Manifest],
) -> None:
    """A Role in the cluster's namespace, never a ClusterRole; ``machinepools/scale`` by
    name. The autoscaler watches only that namespace (``--node-group-auto-discovery`` with a
    namespace: ``namespaceToWatch``) and reads machinepools, machines, machinesets and
    machinedeployments (its informers, ``newMachineController``) and the infrastructure
    object (``readInfrastructureReferenceResource``)."""
    role = find(manifests, "Role", "oke-dev-autoscaler")
    assert role.namespace == "oke-clusters"
    scale = [r for r in role.body["rules"] if "machinepools/scale" in r["resources"]]
    assert scale == [
        {
            "apiGroups": ["cluster.x-k8s.io"],
            "resourceNames": ["oke-dev-batch", "oke-dev-web"],
            "resources": ["machinepools/scale"],
            "verbs": ["get", "patch", "update"],
        }
    ]
    writes = [r for r in role.body["rules"] if set(r["verbs"]) - {"get", "list", "watch"}]
    assert writes == scale
    management = [m for m in manifests if m.folder == "clusters/oke-dev"]
    assert not [m for m in management if m.kind in ("ClusterRole", "ClusterRoleBinding")]
    token = find(manifests, "Secret", "oke-dev-autoscaler-token").body
    assert token["type"] == "kubernetes.io/service-account-token"
    assert "data" not in token and "stringData" not in token


def test_the_workload_kubeconfig_holds_no_secret(manifests: list[Manifest]) -> None:
    """The token and CA are files of the pushed Secret; client-go reads ``tokenFile`` again
    every minute, where an inline ``token`` (as in CAPOCI's ``<cluster>-kubeconfig``) is
    read once."""
    config = yaml.safe_load(
        find(manifests, "ConfigMap", "cluster-autoscaler-oke-dev-kubeconfig").body["data"][
            "kubeconfig"
        ]
    )
    (user,) = config["users"]
    assert user["user"] == {"tokenFile": "/etc/fleet/management-credentials/token"}
    (cluster,) = config["clusters"]
    assert cluster["cluster"]["server"] == API_SERVER
    push = find(manifests, "PushSecret", "oke-dev-autoscaler-token").body["spec"]
    assert push["selector"] == {"secret": {"name": "oke-dev-autoscaler-token"}}
    assert {d["match"]["secretKey"] for d in push["data"]} == {"token", "ca.crt"}
    assert push["template"] == {"type": "Opaque"}
    store = find(manifests, "SecretStore", "oke-dev-workload").body["spec"]["provider"]
    assert store["kubernetes"]["authRef"] == {"key": "value", "name": "oke-dev-kubeconfig"}


def test_waves_registration_needs_the_api_server_not_the_nodes(manifests: list[Manifest]) -> None:
    """Wave 0: the cluster, its network and control plane, and the autoscaler's account;
    wave 1: the node pools, the registration, the SecretStore, the PushSecret and the
    Application of the workload objects (not after the node pools: ArgoCD's built-in
    MachinePool check, argo-cd v3.5.1 ``resource_customizations/cluster.x-k8s.io/
    MachinePool/health.lua``, reads ``ScalingUp`` Progressing with no bound, so a pool that
    waits for capacity would hold a later wave for ever)."""
    waves = {
        (m.kind, m.name): int((m.body["metadata"].get("annotations") or {}).get(WAVE, "0"))
        for m in manifests
        if m.folder == "clusters/oke-dev" and m.group != "cluster.argocd.crossplane.io"
    }
    assert [
        int(m.body["metadata"]["annotations"][WAVE])
        for m in manifests
        if m.group == "cluster.argocd.crossplane.io"
    ] == [1]  # the registration
    assert waves[("Cluster", "oke-dev")] == 0 == waves[("OCIManagedControlPlane", "oke-dev")]
    assert waves[("ServiceAccount", "oke-dev-autoscaler")] == 0
    assert (
        waves[("MachinePool", "oke-dev-web")]
        == 1
        == waves[("OCIManagedMachinePool", "oke-dev-web")]
    )
    assert waves[("SecretStore", "oke-dev-workload")] == 1
    assert waves[("PushSecret", "oke-dev-autoscaler-token")] == 1
    assert waves[("Application", "fleet-dev-cluster-oke-dev-autoscaler")] == 1
    assert max(waves.values()) == 1
    app = find(manifests, "Application", "fleet-dev-cluster-oke-dev-autoscaler").body
    assert app["spec"]["destination"] == {"name": "oke-dev"}
    assert app["spec"]["source"]["path"] == "dist/dev/clusters/oke-dev/autoscaler"
    assert app["metadata"]["finalizers"] == ["resources-finalizer.argocd.argoproj.io"]


def test_two_autoscaled_clusters_in_one_environment(tmp_path: Path) -> None:
    """Object identities are unique per environment: each cluster's workload objects carry
    its name (they go to different clusters, but live in one ``dist/<env>/``)."""
    fleet = autoscaled_fleet(tmp_path)
    first = next(c for c in fleet.declarations() if isinstance(c, OciManagedCluster))
    oke(fleet, id="other", name="oke2-{env}", identity=first.identity)
    out = synth(fleet).all(env="dev")
    assert {m.name for m in out if m.kind == "Deployment"} == {
        "cluster-autoscaler-oke-dev",
        "cluster-autoscaler-oke2-dev",
    }
    folders = {m.folder for m in out if m.kind == "Deployment"}
    assert folders == {"clusters/oke-dev/autoscaler", "clusters/oke2-dev/autoscaler"}


def test_a_paused_cluster_has_one_wave(tmp_path: Path) -> None:
    out = rendered(autoscaled_fleet(tmp_path, paused=True))
    assert not [
        m
        for m in out
        if m.folder == "clusters/oke-dev" and WAVE in (m.body["metadata"].get("annotations") or {})
    ]


def test_external_secrets_is_installed_only_where_pools_autoscale(tmp_path: Path) -> None:
    scaled = rendered(autoscaled_fleet(tmp_path / "a"))
    fixed = rendered(
        autoscaled_fleet(tmp_path / "b", node_pools=[OkeNodePool(name="a", ocpus=1, node_count=2)])
    )
    apps = {m.name for m in scaled if m.kind == "Application"}
    assert "fleet-dev-external-secrets" in apps
    assert "fleet-dev-external-secrets" not in {m.name for m in fixed if m.kind == "Application"}
    assert not [m for m in fixed if "autoscaler" in m.name or m.folder.endswith("/autoscaler")]


def test_one_release_per_minor_matching_its_tag() -> None:
    """Each pinned release is the newest patch of its minor among kubernetes/autoscaler's
    ``cluster-autoscaler-<version>`` tags (recorded with the commit), and none before 1.30
    (no ``apiGroup`` references)."""
    for (major, minor), release in autoscaler.RELEASES.items():
        assert release.version.startswith(f"{major}.{minor}.")
        assert len(release.commit) == 40
    assert min(autoscaler.RELEASES) == (1, 30)
    assert autoscaler.release_for("v1.33.2") == autoscaler.RELEASES[(1, 33)]
    assert autoscaler.release_for("v1.29.9") is None


# --- scale from zero: the nodes' capacity -------------------------------------------------


def test_capacity_of_flexible_and_fixed_shapes() -> None:
    """vCPUs: OCPUs x 2 on x86 and A2, x 1 on A1 (OCI "Compute Shapes"; the autoscaler's own
    OCI provider, ``cloudprovider/oci/common/oci_shape.go`` ``ocpuToVCPU``); memory in GiB."""
    arm = capacity_annotations(
        "VM.Standard.A1.Flex", ocpus=4, memory_gb=24, max_pods=31, labels={"pool": "batch"}
    )
    assert arm == {
        CAPACITY + "cpu": "4",
        CAPACITY + "memory": "24Gi",
        CAPACITY + "maxPods": "31",
        CAPACITY + "labels": "kubernetes.io/arch=arm64,pool=batch",
    }
    x86 = capacity_annotations(
        "VM.Standard.E4.Flex", ocpus=1.5, memory_gb=12, max_pods=31, labels={}
    )
    assert isinstance(x86, dict) and x86[CAPACITY + "cpu"] == "3"
    fixed = capacity_annotations(
        "VM.Standard2.1", ocpus=None, memory_gb=None, max_pods=31, labels={}
    )
    assert isinstance(fixed, dict)
    assert (fixed[CAPACITY + "cpu"], fixed[CAPACITY + "memory"]) == ("2", "15Gi")
    assert all(s.vcpus_per_ocpu == (1 if ".A1." in s.name else 2) for s in SHAPES.values())


@pytest.mark.parametrize(
    ("pool", "message"),
    [
        (
            OkeNodePool(name="gpu", node_shape="VM.GPU.A10.1", min_node_count=0, max_node_count=2),
            "no sourced sizes for shape VM.GPU.A10.1",
        ),
        (
            OkeNodePool(name="flex", ocpus=2, min_node_count=0, max_node_count=2),
            "VM.Standard.E4.Flex is flexible: give ocpus and memory_gb",
        ),
    ],
)
def test_fails_scale_from_zero_without_a_known_size(
    tmp_path: Path, pool: OkeNodePool, message: str
) -> None:
    fleet = Fleet(FleetConfig(root=tmp_path))
    with pytest.raises(DefinitionError, match=message):
        oke(fleet, OkeNodePool(name="system", ocpus=1, node_count=1), pool)


def test_a_pool_that_never_is_empty_needs_no_size(tmp_path: Path) -> None:
    fleet = Fleet(FleetConfig(root=tmp_path))
    ManagementCluster(fleet, "management", api_server=API_SERVER)
    oke(
        fleet,
        OkeNodePool(name="gpu", node_shape="VM.GPU.A10.1", min_node_count=1, max_node_count=2),
    )
    argocd(fleet)
    annotations = find(rendered(fleet), "MachinePool", "oke-dev-gpu").body["metadata"][
        "annotations"
    ]
    assert (annotations[MIN], annotations[MAX]) == ("1", "2")


# --- what an autoscaled cluster needs, checked at synth time -------------------------------


def _fails(tmp_path: Path, message: str, *, management: bool = True, **overrides: Any) -> None:
    fleet = Fleet(FleetConfig(root=tmp_path))
    if management:
        ManagementCluster(fleet, "management", api_server=API_SERVER, egress_cidrs=[EGRESS])
    oke(fleet, **overrides)
    argocd(fleet)
    with pytest.raises((DefinitionError, DefinitionErrors), match=message):
        rendered(fleet)


def test_fails_without_a_management_cluster(tmp_path: Path) -> None:
    _fails(tmp_path, "declare ManagementCluster", management=False)


def test_fails_unregistered(tmp_path: Path) -> None:
    _fails(tmp_path, "need the cluster registered in ArgoCD", register_in_argocd=False)


def test_fails_without_a_minor_release(tmp_path: Path) -> None:
    _fails(
        tmp_path,
        r"no cluster-autoscaler release is pinned for Kubernetes v1.29.9",
        kubernetes_version="v1.29.9",
    )


def test_fails_when_every_pool_can_be_empty(tmp_path: Path) -> None:
    _fails(
        tmp_path,
        "the autoscaler runs on the cluster's own nodes",
        node_pools=[
            OkeNodePool(name="a", ocpus=1, memory_gb=8, min_node_count=0, max_node_count=3)
        ],
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_node_count": 1}, "max_node_count: an autoscaled pool needs both bounds"),
        (
            {"min_node_count": 1, "max_node_count": 3, "node_count": 2},
            "node_count: give node_count .* or min_node_count and max_node_count .*, not both",
        ),
        ({}, "node_count: give node_count"),
    ],
)
def test_fails_bad_bounds(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(DefinitionError, match=message):
        OkeNodePool(name="a", ocpus=1, **kwargs)


def test_fails_min_above_max_per_environment(tmp_path: Path) -> None:
    fleet = Fleet(FleetConfig(root=tmp_path))
    with pytest.raises(
        DefinitionError, match=r"min_node_count 4 is above max_node_count 3 \(prod\)"
    ):
        oke(
            fleet,
            OkeNodePool(
                name="a", ocpus=1, min_node_count=per_env(prod=4, default=1), max_node_count=3
            ),
            environments=["dev", "prod"],
        )


# --- the route from the management cluster ------------------------------------------------


def test_fails_a_private_endpoint_without_allowed_ranges(tmp_path: Path) -> None:
    fleet = Fleet(FleetConfig(root=tmp_path))
    network = OkeVcn(api_endpoint="private", private_api_reachable_via="the campus DRG")
    with pytest.raises(DefinitionError, match="a private API endpoint without api_allowed_cidrs"):
        oke(fleet, network=network)


@pytest.mark.parametrize("endpoint", ["public", "private"])
def test_fails_an_endpoint_the_management_cluster_cannot_reach(
    tmp_path: Path, endpoint: str
) -> None:
    extra = {"private_api_reachable_via": "the campus DRG"} if endpoint == "private" else {}
    network = OkeVcn(api_endpoint=endpoint, api_allowed_cidrs=["10.0.0.0/8"], **extra)
    _fails(
        tmp_path,
        rf"none of the management cluster's egress CIDR blocks \['{EGRESS}'\] \(dev, .*\) is "
        rf"in api_allowed_cidrs \['10.0.0.0/8'\]: the {endpoint} API endpoint would refuse",
        network=network,
    )


def test_an_egress_inside_the_allowed_ranges_passes(tmp_path: Path) -> None:
    fleet = Fleet(FleetConfig(root=tmp_path))
    # the NAT address (public endpoints) and the routed range (private ones)
    ManagementCluster(
        fleet, "management", api_server=API_SERVER, egress_cidrs=[EGRESS, "10.2.3.0/24"]
    )
    network = OkeVcn(
        api_endpoint="private",
        private_api_reachable_via="the campus DRG",
        api_allowed_cidrs=["10.0.0.0/8"],
    )
    oke(fleet, network=network)
    argocd(fleet)
    assert find(rendered(fleet), "Deployment", "cluster-autoscaler-oke-dev")


# --- fleet ls ---------------------------------------------------------------------------------


def test_fleet_ls_shows_the_bounds(tmp_path: Path) -> None:
    fleet = autoscaled_fleet(tmp_path)
    fleet.run_phases()
    (row,) = inventory(fleet)
    assert row.cells()["nodes"] == "2..10"  # system 1 + web 1..5 + batch 0..4
    pools = {p.name: (p.node_count, p.min_node_count, p.max_node_count) for p in row.node_pools}
    assert pools == {"system": (1, None, None), "web": (None, 1, 5), "batch": (None, 0, 4)}


def test_objects_fail_validation_when_broken(tmp_path: Path) -> None:
    """The schemas really apply to the v1beta2 MachinePool (the pinned CRD's ``replicas``
    is an int32)."""
    fleet = autoscaled_fleet(tmp_path)
    cluster = next(c for c in fleet.declarations() if isinstance(c, OciManagedCluster))
    cluster.add_json_patch(JsonPatch.add("/spec/replicas", "many"), kind="MachinePool")
    with pytest.raises(InvalidObjects, match="replicas"):
        synth(fleet, validate=True)


def test_the_move_to_v1beta2_is_a_note(tmp_path: Path) -> None:
    """kubernetes-sigs/cluster-api v1.12.11 ``config/crd/bases``: v1beta1 is served and
    converted, v1beta2 stored; the move changes the manifest, not the object."""
    from fleet.clouds.oci.changes import judge_api_version

    new = find(rendered(autoscaled_fleet(tmp_path)), "MachinePool", "oke-dev-web").body
    old = {**new, "apiVersion": "cluster.x-k8s.io/v1beta1"}
    none = _NoObjects()
    ((level, message),) = judge_api_version(Change("dev", old, new, none, none))
    assert level == "note" and "nothing changes on the cluster" in message
    assert judge_api_version(Change("dev", new, new, none, none)) == ()


# --- fleet diff, end to end ----------------------------------------------------------------


def _oke_project(pool: str) -> str:
    return f"""\
from fleet import (ArgoCd, Fleet, ManagementCluster, OciClusterIdentity,
                   OciManagedCluster, OkeNodePool, OkeVcn, SecretKeyRef)


def define(fleet: Fleet) -> None:
    ManagementCluster(fleet, "management", api_server="{API_SERVER}")
    OciManagedCluster(
        fleet, "oke", name="oke-{{env}}", environments=["dev"],
        identity=OciClusterIdentity(fleet, "oci", principal_secret="oci-principal"),
        compartment_id="ocid1.compartment.oc1..aaaaexample",
        region="eu-frankfurt-1", kubernetes_version="v1.30.1",
        availability_domains=["BKrI:EU-FRANKFURT-1-AD-1"],
        node_image_id="ocid1.image.oc1.eu-frankfurt-1.aaaaexample",
        network=OkeVcn(api_allowed_cidrs=["{EGRESS}"]),
        node_pools=[
            OkeNodePool(name="system", ocpus=1, memory_gb=8, node_count=1),
            OkeNodePool(name="web", ocpus=1, memory_gb=8, {pool}),
        ],
    )
    ArgoCd(fleet, "argocd", server_addr="argocd-server.argocd.svc:443",
           credentials=SecretKeyRef(name="argocd-credentials",
                                    namespace="crossplane-system", key="authToken"))
"""


def test_fleet_diff_notes_each_change_of_size(tmp_path: Path) -> None:
    """``fleet diff`` on a repository whose ``main`` commits ``dist/``: fixed -> autoscaled,
    a change of the bounds, and back to fixed, each with its note (or warning) on the
    pool's MachinePool, and none of them an error (exit 0)."""
    import subprocess

    from crd_samples import crds_dir

    from fleet.cli.main import main

    root = tmp_path / "repo"
    (root / "clusters").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.fleet]\nenvironments = ["dev"]\n')
    (root / "clusters" / "__init__.py").write_text("")
    source = root / "clusters" / "oke.py"

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
            check=True,
            capture_output=True,
        )

    def commit(pool: str) -> None:
        source.write_text(_oke_project(pool))
        assert main(["--root", str(root), "synth"]) == 0
        git("add", "-A")
        git("commit", "--quiet", "-m", pool)

    def diff(pool: str) -> str:
        source.write_text(_oke_project(pool))
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["--root", str(root), "diff", "--crds", str(crds_dir())])
        assert (code, err.getvalue()) == (0, ""), out.getvalue()
        return out.getvalue()

    where = "dev: MachinePool oke-clusters/oke-dev-web (cluster.x-k8s.io): "
    git("init", "--quiet", "--initial-branch=main")
    commit("node_count=3")
    out = diff("min_node_count=1, max_node_count=5")
    assert f"note: {where}fixed -> autoscaled (1..5)" in out, out
    assert "keeps the pool's current size" in out
    assert "spec.replicas: 3 -> (absent)" in out
    assert "+ Deployment kube-system/cluster-autoscaler-oke-dev" in out
    out = diff("min_node_count=1, max_node_count=2")
    assert f"warning: {where}fixed -> autoscaled (1..2): the pool had 3 nodes" in out, out

    commit("min_node_count=1, max_node_count=5")
    out = diff("min_node_count=2, max_node_count=4")
    assert f"note: {where}min_node_count 1 -> 2" in out, out
    assert f"warning: {where}max_node_count 5 -> 4" in out, out
    out = diff("node_count=2")
    assert f"warning: {where}autoscaled (1..5) -> fixed (2)" in out, out
    assert "error:" not in out
