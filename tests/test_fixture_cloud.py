"""A third cloud that lives only in a test fixture package (``tests/fixtures/clouds/capo``,
Cluster API on OpenStack): registering it (importing its module) is all it takes for the
fleet to install, order and health-check its platform components (#22 item 1).

Upstream facts the fixture relies on are named in ``capo/__init__.py`` (CAPO v0.14.7, ORC
v2.0.3, Cluster API v1.12.11's clusterctl provider names).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import lupa
import pytest
import yaml
from support import REPO

from fleet import ArgoCd, Fleet, SecretKeyRef, testing
from fleet.checks.crds import PACKAGED_CRDS
from fleet.checks.waves import check_waves
from fleet.cli.main import main
from fleet.core.layout import SYNC_WAVE
from fleet.core.manifest import Manifest
from fleet.platform.cluster_api import OPERATOR_PROVIDER_HEALTH

FIXTURE_CLOUDS = REPO / "tests" / "fixtures" / "clouds"
HEALTH = "resource.customizations.health."


@pytest.fixture(autouse=True)
def capo_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture cloud is a package of its own: importable from its folder, nothing else."""
    monkeypatch.syspath_prepend(str(FIXTURE_CLOUDS))


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
from capo.cluster import {cls}

from fleet import Fleet


def define(fleet: Fleet) -> None:
    {cls}(
        fleet,
        "batch",
        name="capo-batch-{{env}}",
        environments=["dev"],
        region="RegionOne",
        cloud_secret="capo-cloud-config",
    )
"""


def _project(root: Path, cls: str = "CapoCluster") -> Path:
    (root / "clusters").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.fleet]\nenvironments = ["dev", "prod"]\n')
    (root / "clusters" / "__init__.py").write_text("")
    (root / "clusters" / "platform.py").write_text(PLATFORM)
    (root / "clusters" / "capo_clusters.py").write_text(CLUSTERS.format(cls=cls))
    return root


def _crds(root: Path) -> Path:
    """The pinned CRDs plus the fixture's own (CAPO's OpenStackCluster), so that the synth
    validates every object, the CAPO ones included."""
    crds = root / "crds"
    shutil.copytree(PACKAGED_CRDS, crds, ignore=shutil.ignore_patterns("*.md"))
    shutil.copytree(FIXTURE_CLOUDS / "capo" / "crds", crds / "cluster-api-provider-openstack")
    return crds


def _load(folder: Path) -> dict[str, dict[str, Any]]:
    return {p.name: yaml.safe_load(p.read_text()) for p in sorted(folder.glob("*.yaml"))}


def _wave(body: dict[str, Any]) -> int:
    return int(body["metadata"].get("annotations", {}).get(SYNC_WAVE, "0"))


@pytest.fixture
def rendered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fleet with a CapoCluster in dev (none in prod), rendered and validated by
    ``fleet synth`` into its dist/."""
    root = _project(tmp_path / "project")
    monkeypatch.setenv("FLEET_CRDS_DIR", str(_crds(tmp_path)))
    monkeypatch.setenv("FLEET_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--root", str(root), "synth", "--no-cache"]) == 0
    return root / "dist"


def test_its_infrastructure_provider_is_in_wave_3_of_providers(rendered: Path) -> None:
    providers = _load(rendered / "dev" / "providers")
    [infra] = [b for b in providers.values() if b["kind"] == "InfrastructureProvider"]
    assert infra["metadata"]["name"] == "openstack"  # clusterctl's name for CAPO
    assert infra["metadata"]["namespace"] == "capo-system"
    assert infra["spec"] == {"version": "v0.14.7"}  # no MachinePool gate: that is OKE's
    assert {(b["kind"], b["metadata"]["name"]) for b in providers.values()} >= {
        ("Namespace", "capo-system"),
        ("CoreProvider", "cluster-api"),
    }
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
    assert data[f"{HEALTH}operator.cluster.x-k8s.io_InfrastructureProvider"] == (
        OPERATOR_PROVIDER_HEALTH
    )
    lua = data[f"{HEALTH}infrastructure.cluster.x-k8s.io_OpenStackCluster"]
    assert lua.startswith("-- CAPO's OpenStackCluster")
    # Against CAPO v0.14.7's status (api/v1beta1/openstackcluster_types.go).
    assert _lua(lua, {"status": {"ready": True}})["status"] == "Healthy"
    assert _lua(lua, {"status": {"ready": False}})["status"] == "Progressing"
    failed = {"status": {"ready": False, "failureReason": "InvalidConfiguration"}}
    assert _lua(lua, failed)["status"] == "Degraded"
    assert _lua(lua, {})["status"] == "Progressing"
    # The cluster's clouds.yaml Secret has its namespace from wave 0.
    [ns] = [b for b in bootstrap.values() if b["metadata"]["name"] == "capo-clusters"]
    assert ns["kind"] == "Namespace" and _wave(ns) == 0


def test_nothing_of_it_where_no_such_cluster_is(rendered: Path) -> None:
    prod = sorted((rendered / "prod").rglob("*.yaml"))
    assert prod
    bodies = [yaml.safe_load(p.read_text()) for p in prod]
    for body in bodies:
        if body["kind"] == "ConfigMap" and body["metadata"]["name"] == "argocd-cm":
            # ArgoCD's own default exclusions name cert-manager.io (bootstrap.py): not an install.
            body["data"].pop("resource.exclusions")
    text = "\n".join(yaml.safe_dump(body) for body in bodies)
    for word in ("openstack", "capo", "cluster-api", "cert-manager", "x-k8s.io"):
        assert word not in text, word
    assert check_waves([]) == []


def test_the_wave_check_passes_and_runs_on_it(tmp_path: Path) -> None:
    out = _render(tmp_path, "CapoCluster")
    assert check_waves(out) == []
    # Take CAPO out of the providers: its kinds then have no installer.
    without = [m for m in out if m.kind != "InfrastructureProvider"]
    problems = [p.line() for p in check_waves(without)]
    assert any(
        "OpenStackCluster" in p
        and "comes from cluster-api-provider-openstack, which this environment does not install"
        in p
        for p in problems
    ), problems


def _render(tmp_path: Path, cls: str) -> list[Manifest]:
    import capo.cluster

    fleet = testing.fleet(environments=["dev", "prod"], root=tmp_path)
    ArgoCd(
        fleet,
        "argocd",
        server_addr="argocd-server.argocd.svc:443",
        credentials=SecretKeyRef(name="argocd-credentials", namespace="crossplane-system", key="t"),
    )
    getattr(capo.cluster, cls)(
        fleet,
        "batch",
        name="capo-batch-{env}",
        environments=["dev"],
        region="RegionOne",
        cloud_secret="capo-cloud-config",
    )
    return testing.synth(fleet).manifests["dev"]


def test_the_wave_check_fails_a_component_whose_crd_arrives_in_the_same_wave(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _render(tmp_path, "BrokenCapoCluster")
    problems = [p.line() for p in check_waves(out)]
    assert len(problems) == 1, problems
    assert "OpenStackFloatingIPPool capo-system/public" in problems[0]
    assert (
        "in root sync wave 3, but its CRD comes from cluster-api-provider-openstack "
        "(dev: InfrastructureProvider capo-system/openstack), which is installed in wave 3"
    ) in problems[0]
    # fleet synth refuses it, with that line, and writes nothing.
    root = _project(tmp_path / "project", "BrokenCapoCluster")
    monkeypatch.setenv("FLEET_CRDS_DIR", str(_crds(tmp_path)))
    monkeypatch.setenv("FLEET_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--root", str(root), "synth", "--no-cache"]) != 0
    assert "OpenStackFloatingIPPool" in capsys.readouterr().err
    assert not (root / "dist").exists()


def test_with_oke_the_machine_pool_gate_stays_with_the_core_and_capoci(
    tmp_path: Path, fleet: Fleet
) -> None:
    """Feature gates: the core provider gets every component's, each infrastructure
    provider only its own (CAPO's manager defines no MachinePool gate)."""
    from fleet import OciClusterIdentity, OciManagedCluster, OkeNodePool, OkeVcn

    out = _render(tmp_path, "CapoCluster")
    assert not [m for m in out if m.body.get("spec", {}).get("manager")]
    import capo.cluster

    both = testing.fleet(environments=["dev"], root=tmp_path / "both")
    ArgoCd(
        both,
        "argocd",
        server_addr="argocd-server.argocd.svc:443",
        credentials=SecretKeyRef(name="argocd-credentials", namespace="crossplane-system", key="t"),
    )
    capo.cluster.CapoCluster(
        both, "batch", name="capo-{env}", environments=["dev"], region="R", cloud_secret="s"
    )
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
    manifests = testing.synth(both).manifests["dev"]
    gates = {
        (m.kind, m.name): m.body["spec"].get("manager", {}).get("featureGates")
        for m in manifests
        if m.group == "operator.cluster.x-k8s.io"
    }
    assert gates == {
        ("CoreProvider", "cluster-api"): {"MachinePool": True},
        ("InfrastructureProvider", "oci"): {"MachinePool": True},
        ("InfrastructureProvider", "openstack"): None,
    }
    assert check_waves(manifests) == []


def test_registering_is_importing_and_a_later_class_is_seen() -> None:
    from fleet.clouds.base import CloudPlugin, FleetCluster, cloud_plugins
    from fleet.platform.plugins import catalogue

    before = dict(cloud_plugins())  # a walk, cached until a class body names a plug-in
    import capo.cluster

    assert capo.cluster.CapoCluster in dict(cloud_plugins())
    assert catalogue().get("cluster-api-provider-openstack") is not None

    class Later(FleetCluster):
        plugin = CloudPlugin()

    assert Later not in before
    assert Later in dict(cloud_plugins())
