"""A third cloud that lives only in a test fixture package (``tests/fixtures/clouds/capo``,
Cluster API on OpenStack with kubeadm): written against ``fleet.plugin`` alone, declaring it
in a fleet is all it takes for the fleet to install, order, validate and health-check its
platform components, list it, draw it and guard its changes (#22 item 1, #30).

Upstream facts the fixture relies on are named in ``capo/__init__.py`` (CAPO v0.14.7, ORC
v2.0.3, Cluster API v1.12.11); the kubeadm providers' in ``fleet/platform/cluster_api.py``.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import lupa
import pytest
import yaml
from crd_samples import crds_dir
from support import REPO

from fleet import ArgoCd, Fleet, SecretKeyRef, testing
from fleet.checks.waves import check_waves
from fleet.cli.main import main
from fleet.core.layout import SYNC_WAVE
from fleet.core.manifest import Manifest
from fleet.platform.cluster_api import OPERATOR_PROVIDER_HEALTH
from fleet.platform.plugins import Platform

FIXTURE_CLOUDS = REPO / "tests" / "fixtures" / "clouds"
CAPO = FIXTURE_CLOUDS / "capo"
HEALTH = "resource.customizations.health."


@pytest.fixture(autouse=True)
def capo_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture cloud is a package of its own: importable from its folder, nothing else."""
    monkeypatch.syspath_prepend(str(FIXTURE_CLOUDS))
    monkeypatch.setenv("PYTHONPATH", str(FIXTURE_CLOUDS))


PLATFORM = """\
from fleet import ArgoCd, Fleet, SecretKeyRef


def define(fleet: Fleet) -> None:
    ArgoCd(
        fleet,
        "argocd",
        server_addr="argocd-server.argocd.svc:443",
        credentials=SecretKeyRef(name="argocd-credentials", namespace="crossplane-system", key="t"),
    )
"""

CLUSTERS = """\
from capo.cluster import {cls}, CapoPool

from fleet import Fleet


def define(fleet: Fleet) -> None:
    {cls}(
        fleet,
        "batch",
        name="capo-batch-{{env}}",
        environments=["dev"],
        region="RegionOne",
        cloud_secret="capo-cloud-config",
        kubernetes_version="{version}",
        image="ubuntu-2404-kube",
        control_plane_flavor="m1.medium",
        pools=[
            CapoPool(name="general", flavor="{flavor}", node_count=3, revision={revision}),
            CapoPool(name="burst", flavor="m1.large", min_node_count=1, max_node_count=5),
        ],
    )
"""


def _project(
    root: Path,
    cls: str = "CapoCluster",
    *,
    version: str = "v1.31.4",
    flavor: str = "m1.large",
    revision: int = 1,
) -> Path:
    (root / "clusters").mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[tool.fleet]\nenvironments = ["dev", "prod"]\n')
    (root / "clusters" / "__init__.py").write_text("")
    (root / "clusters" / "platform.py").write_text(PLATFORM)
    (root / "clusters" / "capo_clusters.py").write_text(
        CLUSTERS.format(cls=cls, version=version, flavor=flavor, revision=revision)
    )
    return root


def _load(folder: Path) -> dict[str, dict[str, Any]]:
    return {p.name: yaml.safe_load(p.read_text()) for p in sorted(folder.glob("*.yaml"))}


def _wave(body: dict[str, Any]) -> int:
    return int(body["metadata"].get("annotations", {}).get(SYNC_WAVE, "0"))


@pytest.fixture
def rendered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fleet with a CapoCluster in dev (none in prod), rendered and validated by
    ``fleet synth`` into its dist/: the packaged CRDs, plus CAPO's through its component's
    ``crds`` slot (no FLEET_CRDS_DIR)."""
    root = _project(tmp_path / "project")
    monkeypatch.delenv("FLEET_CRDS_DIR", raising=False)
    monkeypatch.setenv("FLEET_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--root", str(root), "synth", "--no-cache"]) == 0
    return root / "dist"


def test_it_imports_only_the_public_api() -> None:
    """A plug-in is written against ``fleet``, ``fleet.plugin`` and ``fleet.testing``."""
    found = set()
    for path in sorted(CAPO.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
    ours = {m for m in found if m == "fleet" or m.startswith("fleet.")}
    assert ours == {"fleet.plugin"}, ours
    assert {m.split(".")[0] for m in found} <= {
        "__future__",
        "collections",
        "dataclasses",
        "pathlib",
        "typing",
        "capo",
        "fleet",
    }


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_it_type_checks_against_the_public_api(checker: str, tmp_path: Path) -> None:
    """The extension API is typed: the fixture passes ``mypy --strict`` and pyright as a
    plug-in author's repository runs them (the installed package, its ``py.typed``)."""
    if checker == "mypy":
        (tmp_path / "mypy.ini").write_text("[mypy]\nstrict = True\n")
        command = [sys.executable, "-m", "mypy", "--config-file", "mypy.ini"]
        command += ["--cache-dir", str(tmp_path / "cache"), "-p", "capo"]
        env = {"MYPYPATH": str(FIXTURE_CLOUDS)}
    else:
        config = {"extraPaths": [str(FIXTURE_CLOUDS)], "typeCheckingMode": "standard"}
        (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
        command = ["node", str(REPO / "node_modules" / "pyright" / "index.js")]
        command += ["--pythonpath", sys.executable, "-p", "pyrightconfig.json", str(CAPO)]
        env = {}
    result = subprocess.run(
        command,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, **env},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_its_providers_are_in_wave_3_of_providers(rendered: Path) -> None:
    providers = _load(rendered / "dev" / "providers")
    operators = {
        (b["kind"], b["metadata"]["name"]): b
        for b in providers.values()
        if b["apiVersion"].startswith("operator.cluster.x-k8s.io/")
    }
    assert set(operators) == {
        ("CoreProvider", "cluster-api"),
        ("InfrastructureProvider", "openstack"),  # clusterctl's name for CAPO
        ("BootstrapProvider", "kubeadm"),  # the tool's kubeadm slot
        ("ControlPlaneProvider", "kubeadm"),
    }
    assert operators[("InfrastructureProvider", "openstack")]["metadata"]["namespace"] == (
        "capo-system"
    )
    assert operators[("BootstrapProvider", "kubeadm")]["metadata"]["namespace"] == (
        "capi-kubeadm-bootstrap-system"
    )
    assert operators[("ControlPlaneProvider", "kubeadm")]["spec"] == {"version": "v1.12.11"}
    assert operators[("InfrastructureProvider", "openstack")]["spec"] == {"version": "v0.14.7"}
    bootstrap = _load(rendered / "dev" / "bootstrap")
    apps = {b["metadata"]["name"]: b for b in bootstrap.values() if b["kind"] == "Application"}
    assert apps["fleet-dev-providers"]["spec"]["source"]["path"] == "dist/dev/providers"
    assert _wave(apps["fleet-dev-providers"]) == 3


def test_what_it_requires_comes_first(rendered: Path) -> None:
    """ORC (from its release tag's dist/ folder), cert-manager and the operator chart come in
    waves derived from what each requires."""
    bootstrap = _load(rendered / "dev" / "bootstrap")
    apps = {b["metadata"]["name"]: b for b in bootstrap.values() if b["kind"] == "Application"}
    orc = apps["fleet-dev-openstack-resource-controller"]
    assert orc["spec"]["source"] == {
        "path": "dist",
        "repoURL": "https://github.com/k-orc/openstack-resource-controller",
        "targetRevision": "v2.0.3",
    }
    assert orc["spec"]["destination"]["namespace"] == "orc-system"
    assert orc["spec"]["syncPolicy"]["automated"]["prune"] is False
    waves = {name: _wave(app) for name, app in apps.items()}
    assert waves["fleet-dev-openstack-resource-controller"] == 1
    assert waves["fleet-dev-cert-manager"] == 1
    assert waves["fleet-dev-cluster-api-operator"] == 2
    assert waves["fleet-dev-cluster-capo-batch-dev"] == 6


def _lua(script: str, obj: dict[str, Any]) -> dict[str, Any]:
    runtime = lupa.LuaRuntime(unpack_returned_tuples=True)
    table = runtime.execute(f"return function(obj)\n{script}\nend")(
        runtime.table_from(obj, recursive=True)
    )
    return dict(table)


def test_its_health_checks_are_in_argocd_cm(rendered: Path) -> None:
    bootstrap = _load(rendered / "dev" / "bootstrap")
    [cm] = [b for b in bootstrap.values() if b["metadata"]["name"] == "argocd-cm"]
    data = cm["data"]
    for kind in ("InfrastructureProvider", "BootstrapProvider", "ControlPlaneProvider"):
        assert data[f"{HEALTH}operator.cluster.x-k8s.io_{kind}"] == OPERATOR_PROVIDER_HEALTH
    lua = data[f"{HEALTH}infrastructure.cluster.x-k8s.io_OpenStackCluster"]
    assert lua.startswith("-- CAPO's OpenStackCluster")
    # Against CAPO v0.14.7's status (api/v1beta1/openstackcluster_types.go).
    assert _lua(lua, {"status": {"ready": True}})["status"] == "Healthy"
    assert _lua(lua, {"status": {"ready": False}})["status"] == "Progressing"
    failed = {"status": {"ready": False, "failureReason": "InvalidConfiguration"}}
    assert _lua(lua, failed)["status"] == "Degraded"
    assert _lua(lua, {})["status"] == "Progressing"
    # KubeadmControlPlane v1beta1 (cluster-api v1.12.11 api/controlplane/kubeadm/v1beta1):
    # ready once a replica is, the Ready summary condition with its severity.
    kcp = data[f"{HEALTH}controlplane.cluster.x-k8s.io_KubeadmControlPlane"]
    waiting = {"type": "Ready", "status": "False", "severity": "Info", "reason": "Scaling"}
    assert _lua(kcp, {"status": {"conditions": [waiting]}})["status"] == "Progressing"
    broken = {**waiting, "severity": "Error", "message": "etcd unhealthy"}
    assert _lua(kcp, {"status": {"conditions": [broken]}}) == {
        "status": "Degraded",
        "message": "etcd unhealthy",
    }
    up = {"type": "Ready", "status": "True"}
    assert _lua(kcp, {"status": {"ready": True, "conditions": [up]}})["status"] == "Healthy"
    # MachineDeployment keeps ArgoCD's built-in check: no key of the fleet's for it.
    assert f"{HEALTH}cluster.x-k8s.io_MachineDeployment" not in data
    # The cluster's clouds.yaml Secret has its namespace from wave 0.
    [ns] = [b for b in bootstrap.values() if b["metadata"]["name"] == "capo-clusters"]
    assert ns["kind"] == "Namespace" and _wave(ns) == 0


def test_its_objects_are_capos_template(rendered: Path) -> None:
    """The kubeadm cluster of CAPO's ``templates/cluster-template-capi-v1beta1.yaml``, named
    after the cluster, every reference resolving (the synth checked them)."""
    objects = {
        (b["kind"], b["metadata"]["name"]): b
        for b in _load(rendered / "dev" / "clusters" / "capo-batch-dev").values()
    }
    assert set(objects) == {
        ("Cluster", "capo-batch-dev"),
        ("OpenStackCluster", "capo-batch-dev"),
        ("KubeadmControlPlane", "capo-batch-dev"),
        ("OpenStackMachineTemplate", "capo-batch-dev-control-plane-v1"),
        ("MachineDeployment", "capo-batch-dev-general"),
        ("OpenStackMachineTemplate", "capo-batch-dev-general-v1"),
        ("KubeadmConfigTemplate", "capo-batch-dev-general"),
        ("MachineDeployment", "capo-batch-dev-burst"),
        ("OpenStackMachineTemplate", "capo-batch-dev-burst-v1"),
        ("KubeadmConfigTemplate", "capo-batch-dev-burst"),
    }
    kcp = objects[("KubeadmControlPlane", "capo-batch-dev")]["spec"]
    assert (kcp["replicas"], kcp["version"]) == (3, "v1.31.4")
    assert kcp["machineTemplate"]["infrastructureRef"]["name"] == "capo-batch-dev-control-plane-v1"
    fixed = objects[("MachineDeployment", "capo-batch-dev-general")]
    assert fixed["spec"]["replicas"] == 3
    # The selector and template labels Cluster API's webhook would default: no drift.
    labels = {
        "cluster.x-k8s.io/cluster-name": "capo-batch-dev",
        "cluster.x-k8s.io/deployment-name": "capo-batch-dev-general",
    }
    assert fixed["spec"]["selector"] == {"matchLabels": labels}
    assert fixed["spec"]["template"]["metadata"] == {"labels": labels}
    autoscaled = objects[("MachineDeployment", "capo-batch-dev-burst")]
    assert "replicas" not in autoscaled["spec"]  # the webhook starts it at the minimum
    annotations = autoscaled["metadata"]["annotations"]
    assert annotations["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"] == "1"
    assert annotations["cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"] == "5"


def test_nothing_of_it_where_no_such_cluster_is(rendered: Path) -> None:
    prod = sorted((rendered / "prod").rglob("*.yaml"))
    assert prod
    bodies = [yaml.safe_load(p.read_text()) for p in prod]
    for body in bodies:
        if body["kind"] == "ConfigMap" and body["metadata"]["name"] == "argocd-cm":
            # ArgoCD's own default exclusions name cert-manager.io (bootstrap.py): not an install.
            body["data"].pop("resource.exclusions")
    text = "\n".join(yaml.safe_dump(body) for body in bodies)
    for word in ("openstack", "capo", "cluster-api", "cert-manager", "x-k8s.io", "kubeadm"):
        assert word not in text, word


def _fleet(tmp_path: Path, cls: str = "CapoCluster", **overrides: Any) -> Fleet:
    import capo.cluster

    fleet = testing.fleet(environments=["dev", "prod"], root=tmp_path)
    ArgoCd(
        fleet,
        "argocd",
        server_addr="argocd-server.argocd.svc:443",
        credentials=SecretKeyRef(name="argocd-credentials", namespace="crossplane-system", key="t"),
    )
    args: dict[str, Any] = {
        "name": "capo-batch-{env}",
        "environments": ["dev"],
        "region": "RegionOne",
        "cloud_secret": "capo-cloud-config",
        "kubernetes_version": "v1.31.4",
        "image": "ubuntu-2404-kube",
        "control_plane_flavor": "m1.medium",
        "pools": [capo.cluster.CapoPool(name="general", flavor="m1.large", node_count=2)],
    }
    getattr(capo.cluster, cls)(fleet, "batch", **{**args, **overrides})
    return fleet


def _render(tmp_path: Path, cls: str) -> tuple[list[Manifest], Fleet]:
    fleet = _fleet(tmp_path, cls)
    return testing.synth(fleet).manifests["dev"], fleet


def test_the_wave_check_passes_and_runs_on_it(tmp_path: Path) -> None:
    out, fleet = _render(tmp_path, "CapoCluster")
    plugins = Platform.of(fleet).plugins
    assert check_waves(out, plugins) == []
    # Take the kubeadm control-plane provider out: its kinds then have no installer.
    without = [m for m in out if m.kind != "ControlPlaneProvider"]
    problems = [p.line() for p in check_waves(without, plugins)]
    assert any(
        "KubeadmControlPlane" in p
        and "comes from cluster-api-kubeadm-control-plane, which this environment does not install"
        in p
        for p in problems
    ), problems


def test_the_wave_check_fails_a_component_whose_crd_arrives_in_the_same_wave(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, fleet = _render(tmp_path, "BrokenCapoCluster")
    problems = [p.line() for p in check_waves(out, Platform.of(fleet).plugins)]
    assert len(problems) == 1, problems
    assert "OpenStackFloatingIPPool capo-system/public" in problems[0]
    assert (
        "in root sync wave 3, but its CRD comes from cluster-api-provider-openstack "
        "(dev: InfrastructureProvider capo-system/openstack), which is installed in wave 3"
    ) in problems[0]
    # fleet synth refuses it, with that line, and writes nothing.
    root = _project(tmp_path / "project", "BrokenCapoCluster")
    monkeypatch.setenv("FLEET_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--root", str(root), "synth", "--no-cache"]) != 0
    assert "OpenStackFloatingIPPool" in capsys.readouterr().err
    assert not (root / "dist").exists()


def test_with_oke_the_machine_pool_gate_stays_with_the_core_and_capoci(tmp_path: Path) -> None:
    """Feature gates: the core provider gets every component's, each infrastructure
    provider only its own (CAPO's manager defines no MachinePool gate)."""
    from fleet import OciClusterIdentity, OciManagedCluster, OkeNodePool, OkeVcn

    out, _ = _render(tmp_path, "CapoCluster")
    assert not [m for m in out if m.body.get("spec", {}).get("manager")]
    both = _fleet(tmp_path / "both")
    OciManagedCluster(
        both,
        "oke",
        name="oke-{env}",
        environments=["dev"],
        identity=OciClusterIdentity(both, "id", principal_secret="oci-user-principal"),
        compartment_id="ocid1.compartment.oc1..aaaaexample",
        region="eu-frankfurt-1",
        kubernetes_version="v1.30.1",
        availability_domains=["BKrI:EU-FRANKFURT-1-AD-1"],
        node_image_id="ocid1.image.oc1.eu-frankfurt-1.aaaaexample",
        node_pools=[OkeNodePool(name="general", ocpus=1, node_count=1)],
        network=OkeVcn(api_allowed_cidrs=["198.51.100.17/32"]),
    )
    manifests = testing.synth(both, validate=True).manifests["dev"]
    gates = {
        (m.kind, m.name): m.body["spec"].get("manager", {}).get("featureGates")
        for m in manifests
        if m.group == "operator.cluster.x-k8s.io"
    }
    assert gates == {
        ("CoreProvider", "cluster-api"): {"MachinePool": True},
        ("InfrastructureProvider", "oci"): {"MachinePool": True},
        ("InfrastructureProvider", "openstack"): None,
        ("BootstrapProvider", "kubeadm"): None,
        ("ControlPlaneProvider", "kubeadm"): None,
    }


def test_a_fleet_knows_the_cloud_only_when_it_declares_one(tmp_path: Path) -> None:
    """The catalogue is the fleet's: importing the cloud registers nothing, and two fleets in
    one process do not see each other's plug-ins."""
    import capo.cluster

    with_capo = _fleet(tmp_path / "a")
    without = testing.fleet(environments=["dev"], root=tmp_path / "b")
    ArgoCd(
        without,
        "argocd",
        server_addr="argocd-server.argocd.svc:443",
        credentials=SecretKeyRef(name="argocd-credentials", namespace="crossplane-system", key="t"),
    )
    for fleet in (with_capo, without):
        fleet.run_phases()
    known = Platform.of(with_capo).plugins
    assert capo.cluster.CapoCluster in dict(known.plugins)
    assert known.catalogue.get("cluster-api-provider-openstack") is not None
    assert known.catalogue.get("cluster-api-kubeadm-control-plane") is not None
    other = Platform.of(without).plugins
    assert capo.cluster.CapoCluster not in dict(other.plugins)
    assert other.catalogue.get("cluster-api-provider-openstack") is None
    assert other.catalogue.owner("controlplane.cluster.x-k8s.io", "KubeadmControlPlane") is None


def test_fleet_ls_lists_it_with_its_pools(
    rendered: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = rendered.parent
    capsys.readouterr()
    assert main(["--root", str(root), "ls", "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert (row["cluster"], row["cloud"], row["kubernetes_version"]) == (
        "capo-batch-dev",
        "capo",
        "v1.31.4",
    )
    assert row["account"] == "openstack"
    assert [
        (p["name"], p["node_count"], p["min_node_count"], p["max_node_count"])
        for p in row["node_pools"]
    ] == [("general", 3, None, None), ("burst", None, 1, 5)]
    assert (row["nodes"], row["min_nodes"], row["max_nodes"]) == (None, 4, 8)


def test_fleet_graph_draws_it(rendered: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = rendered.parent
    capsys.readouterr()
    assert main(["--root", str(root), "graph", "--env", "dev"]) == 0
    out = capsys.readouterr().out
    assert 'dev_cluster_capo_batch_dev["capo v1.31.4<br/>4..8 nodes"]' in out
    assert 'dev_pool_capo_batch_dev_general("general: 3 x m1.large")' in out
    assert "dev_cluster_capo_batch_dev --> dev_pool_capo_batch_dev_burst" in out


def test_a_field_or_attribute_that_hides_what_the_fleet_calls_is_refused(
    tmp_path: Path,
) -> None:
    """#30: the old fixture set ``self.cloud_name = ...`` in its ``__init__``, which hid
    ``FleetCluster.cloud_name()``; ``fleet ls`` then crashed with a TypeError. The same
    mistake is now one line at the class or at the assignment."""
    import capo.cluster

    from fleet import DefinitionError
    from fleet.core.options import option

    with pytest.raises(DefinitionError) as raised:

        class Shadowing(capo.cluster.CapoCluster):
            cloud_name: str = option(default="openstack")

    assert "Shadowing.cloud_name: a field would hide FleetCluster.cloud_name (a method)" in str(
        raised.value
    )
    assert "test_fixture_cloud.py:" in raised.value.where

    class Assigning(capo.cluster.CapoCluster):
        def __post_init__(self) -> None:
            super().__post_init__()
            self.cloud_name = "openstack"  # type: ignore[assignment,method-assign]

    with pytest.raises(DefinitionError) as raised:
        Assigning(_fleet(tmp_path), "other", **_ARGS)
    assert "attribute 'cloud_name' would hide FleetCluster.cloud_name (a method)" in str(
        raised.value
    )


_ARGS: dict[str, Any] = {
    "name": "capo-other-{env}",
    "environments": ["dev"],
    "region": "RegionOne",
    "cloud_secret": "s",
    "kubernetes_version": "v1.31.4",
    "image": "i",
    "control_plane_flavor": "m1.medium",
}


def test_its_own_checks_fail_at_the_argument(tmp_path: Path) -> None:
    from fleet import DefinitionError

    with pytest.raises(DefinitionError, match=r"control_plane_count: must be odd with stacked"):
        _fleet(tmp_path, control_plane_count=2)
    import capo.cluster

    pool = capo.cluster.CapoPool(name="general", flavor="m1.large", min_node_count=1)
    with pytest.raises(DefinitionError, match=r"pools\[general\].node_count: give node_count"):
        _fleet(tmp_path / "x", pools=[pool])


# --- fleet diff: its change rules, and the deletion guard ---------------------------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _diff(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["--root", str(root), "diff", "--crds", str(crds_dir())])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository whose one commit is the CAPO fleet with its rendered dist/."""
    root = _project(tmp_path / "repo")
    monkeypatch.setenv("FLEET_CACHE_DIR", str(tmp_path / "cache"))
    _git(root, "init", "--quiet", "--initial-branch=main")
    assert main(["--root", str(root), "synth", "--no-cache"]) == 0
    _git(root, "add", ".")
    _git(root, "commit", "--quiet", "-m", "base")
    return root


def test_fleet_diff_refuses_a_machine_template_changed_in_place(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(repo, flavor="m1.xlarge")
    code, out = _diff(repo, capsys)
    assert code == 1, out
    assert (
        "error: dev: OpenStackMachineTemplate capo-clusters/capo-batch-dev-general-v1 "
        "(infrastructure.cluster.x-k8s.io): spec.template.spec (flavor) changes, and CAPO's "
        "webhook refuses any change of an OpenStackMachineTemplate"
    ) in out
    # Bumped, it is a new template the MachineDeployment rolls onto: nothing to refuse.
    _project(repo, flavor="m1.xlarge", revision=2)
    code, out = _diff(repo, capsys)
    assert code == 0, out
    assert "+ OpenStackMachineTemplate capo-clusters/capo-batch-dev-general-v2" in out


def test_fleet_diff_refuses_a_skipped_minor_version(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(repo, version="v1.33.0")
    code, out = _diff(repo, capsys)
    assert code == 1, out
    assert (
        "spec.version: v1.31.4 -> v1.33.0 skips a minor version, which KCP's webhook refuses"
    ) in out
    _project(repo, version="v1.32.2")
    code, out = _diff(repo, capsys)
    assert code == 0, out


def test_fleet_diff_guards_its_cluster_bearing_objects(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Removing a CAPO cluster while the fleet still declares another: every object of its
    class's ``bearing_kinds`` and its registration are refused, grouped as one cluster."""
    module = repo / "clusters" / "capo_clusters.py"
    source = module.read_text()
    second = (
        source.split("def define(fleet: Fleet) -> None:\n")[1]
        .replace('"batch"', '"other"')
        .replace("capo-batch-{env}", "capo-other-{env}")
    )
    module.write_text(source + second)
    assert main(["--root", str(repo), "synth", "--no-cache"]) == 0
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "a second cluster")
    module.write_text(source.replace('"batch"', '"other"').replace("capo-batch-", "capo-other-"))
    code, out = _diff(repo, capsys)
    assert code == 1, out
    assert (
        "error: clusters/capo_clusters.py: 1 cluster removed (6 objects in dev): capo-batch-dev;"
    ) in out


def test_fleet_diff_guards_the_last_cluster_of_the_cloud(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The head fleet declares no CAPO cluster any more, so ``fleet diff`` knows CAPO's
    plug-in no longer (it knows the head fleet's and the built-in clouds'): the Cluster API
    ``Cluster`` (a built-in cloud's protected kind) and the ArgoCD registration still refuse
    the change; CAPO's own kinds are not counted."""
    module = repo / "clusters" / "capo_clusters.py"
    module.write_text(module.read_text().split("def define")[0] + "def define(fleet): ...\n")
    code, out = _diff(repo, capsys)
    assert code == 1, out
    assert (
        "error: clusters/capo_clusters.py: 1 cluster removed (2 objects in dev): capo-batch-dev;"
    ) in out


def test_a_version_other_than_its_pinned_crds_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ArgoCd(versions=)`` that deploys another CAPO than the one whose CRDs the
    component pins in its own ``crds.lock.yaml``: its objects would be validated against
    schemas the deployed release does not serve (as for the tool's pinned components)."""
    root = _project(tmp_path / "project")
    (root / "clusters" / "platform.py").write_text(
        PLATFORM.replace(
            'key="t"),',
            'key="t"),\n        versions={"cluster-api-provider-openstack": "v0.15.0"},',
        )
    )
    monkeypatch.setenv("FLEET_CACHE_DIR", str(tmp_path / "cache"))
    capsys.readouterr()
    assert main(["--root", str(root), "synth", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert (
        "versions[cluster-api-provider-openstack]: 'v0.15.0' deploys "
        "cluster-api-provider-openstack v0.15.0, but the CRDs its objects are validated "
        f"against are of v0.14.7 (the crds.lock.yaml beside {CAPO / 'crds'})"
    ) in err, err
