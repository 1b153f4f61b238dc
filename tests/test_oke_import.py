"""OKE's importer (issue 30) through the clouds' importer hook: Terraform-built OKE
clusters become OciManagedCluster declarations adopted by OCID, with the same command,
orchestration and report as Magnum's.

Upstream read: oracle/terraform-provider-oci v8.28.0
``internal/service/containerengine/containerengine_{cluster,node_pool}_resource.go`` (every
attribute has a fate, fleet/clouds/oci/importer/fates.py); oracle/cluster-api-provider-oci
v0.24.0 ``cloud/scope/managed_machine_pool.go`` ``FindNodePool`` (a pool found by spec.id
without CreatedBy/ClusterResourceIdentifier freeform tags is refused),
``managed_control_plane.go`` ``GetOKECluster`` (adopted by spec.id, no tag check) and
``UpdateControlPlane`` (tags replaced by OCIManagedCluster.spec.freeformTags),
``cloud/ociutil/ociutil.go`` ``BuildClusterTags``; oracle/oci-cli v3.89.3
``services/container_engine/.../generated/containerengine_cli.py`` ``update_cluster`` and
``update_node_pool`` (``--freeform-tags`` "will replace any existing values", asked for
confirmation unless ``--force``). Fixture modelled on oracle-terraform-modules/terraform-oci-oke
@ 25ef9a02 (see its PROVENANCE.md).
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import HYBRID

from fleet import FleetConfig
from fleet.cli.main import main
from fleet.clouds.oci.importer import planner as oke_planner
from fleet.clouds.oci.importer.importer import CODE
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.importers.generated import check_generated
from fleet.importers.state_import import StateOptions, StatePlan, plan_state_import

FIXTURE = Path(__file__).parent / "fixtures/terraform/real-oke/terraform-oci-oke"
TFSTATE = FIXTURE / "state/prod.tfstate"
SHOWN = FIXTURE / "state/prod.show.json"
MAGNUM_SHOWN = (
    Path(__file__).parent
    / "fixtures/terraform/real/stackhpc-terraform-magnum/state/podman.show.json"
)
CLUSTER_ID = "ocid1.cluster.oc1.eu-frankfurt-1.aaaaaaaaexampleprodcluster01"
IDENTIFIER = "0acd9549-b15d-58d6-a35c-42fea842de5a"


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "clusters").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.fleet]\nenvironments = ["dev", "test", "prod"]\n')
    (root / "clusters" / "__init__.py").write_text("")
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return _project(tmp_path)


def _plan(root: Path, *states: Path, env: str | None = None) -> StatePlan:
    return plan_state_import(
        FleetConfig.load(root), StateOptions(states=[(s, env) for s in states])
    )


def _bodies(plan: StatePlan, env: str = "prod") -> dict[tuple[str, str], dict[str, Any]]:
    return {(m.kind, m.name): dict(m.body) for m in plan.manifests[env]}


def test_both_state_formats_import_the_same(root: Path) -> None:
    v4, shown = _plan(root, TFSTATE), _plan(root, SHOWN)
    # The same text, but for the state's file name in the docstring and comment.
    (v4_text,), (shown_text,) = v4.files.values(), shown.files.values()
    assert v4_text.replace("prod.tfstate", "STATE") == shown_text.replace("prod.show.json", "STATE")
    assert [line.split(" -> ")[-1] for line in v4.report] == [
        line.split(" -> ")[-1] for line in shown.report
    ]


def test_adopted_by_ocid_on_the_existing_network(root: Path) -> None:
    bodies = _bodies(_plan(root, TFSTATE))
    assert bodies[("OCIManagedControlPlane", "oke-prod")]["spec"]["id"] == CLUSTER_ID
    pools = {
        name: body["spec"]["id"]
        for (kind, name), body in bodies.items()
        if kind == "OCIManagedMachinePool"
    }
    assert pools == {
        "oke-prod-np1": "ocid1.nodepool.oc1.eu-frankfurt-1.aaaaaaaaexamplenp1",
        "oke-prod-np2": "ocid1.nodepool.oc1.eu-frankfurt-1.aaaaaaaaexamplenp2",
    }
    infra = bodies[("OCIManagedCluster", "oke-prod")]["spec"]
    assert infra["networkSpec"]["skipNetworkManagement"] is True
    assert (
        infra["networkSpec"]["vcn"]["id"] == "ocid1.vcn.oc1.eu-frankfurt-1.amaaaaaaexampleokevcn01"
    )
    assert infra["freeformTags"] == {"role": "cluster", "state_id": "k3p9xq"}
    assert infra["ociResourceIdentifier"] == IDENTIFIER
    # terraform-oci-oke's default CNI: flannel, on the cluster and on every pool.
    cp = bodies[("OCIManagedControlPlane", "oke-prod")]["spec"]
    assert cp["clusterPodNetworkOptions"] == [{"cniType": "FLANNEL_OVERLAY"}]
    pool = bodies[("OCIManagedMachinePool", "oke-prod-np2")]["spec"]
    assert pool["nodePoolNodeConfig"]["nodePoolPodNetworkOptionDetails"] == {
        "cniType": "FLANNEL_OVERLAY"
    }
    assert pool["nodePoolCyclingDetails"]["maximumSurge"] == "25%"
    assert bodies[("MachinePool", "oke-prod-np1")]["spec"]["replicas"] == 3


def _commands(report: list[str]) -> list[list[str]]:
    return [shlex.split(line.split(":   ", 1)[1]) for line in report if ":   oci ce " in line]


def test_report_gives_tag_commands_that_keep_each_objects_tags(root: Path) -> None:
    report = _plan(root, TFSTATE).report
    commands = _commands(report)
    assert len(commands) == 3  # the cluster and its two pools
    cluster, np1, _ = commands
    assert cluster[:6] == ["oci", "ce", "cluster", "update", "--cluster-id", CLUSTER_ID]
    # The update replaces the freeform tags and asks for confirmation without --force.
    assert cluster[-1] == "--force" and np1[-1] == "--force"
    assert json.loads(cluster[cluster.index("--freeform-tags") + 1]) == {
        "ClusterResourceIdentifier": IDENTIFIER,
        "CreatedBy": "OCIClusterAPIProvider",
        "role": "cluster",
        "state_id": "k3p9xq",
    }
    # A pool keeps its own tags (the state's), not the cluster's.
    assert np1[:6] == [
        "oci",
        "ce",
        "node-pool",
        "update",
        "--node-pool-id",
        "ocid1.nodepool.oc1.eu-frankfurt-1.aaaaaaaaexamplenp1",
    ]
    assert json.loads(np1[np1.index("--freeform-tags") + 1]) == {
        "ClusterResourceIdentifier": IDENTIFIER,
        "CreatedBy": "OCIClusterAPIProvider",
        "pool": "np1",
        "role": "worker",
        "state_id": "k3p9xq",
    }
    text = "\n".join(report)
    assert "renames it to 'oke-prod-np1'" in text
    assert "per-pool tags are not carried" in text
    assert "private_api_reachable_via" in text


def test_command_imports_synths_and_validate_warns_until_tagged(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``fleet validate`` warns (exit 0) while a step only a person can take is open: the
    adoption tags, and how the management cluster reaches the private API endpoint (the
    state cannot say; the import writes a placeholder)."""
    assert main(["--root", str(root), "import", "tfstate", str(TFSTATE)]) == 0
    out = capsys.readouterr().out
    assert "imported 1 cluster as 1 declaration" in out
    module = root / "clusters" / "terraform_oci_oke.py"
    assert "adoption_tags_applied=False" in module.read_text()
    assert main(["--root", str(root), "synth"]) == 0
    assert main(["--root", str(root), "validate"]) == 0
    err = capsys.readouterr().err
    assert "adoption_tags_applied is not set" in err
    assert "private_api_reachable_via is still the import's placeholder" in err
    module.write_text(
        module.read_text().replace("adoption_tags_applied=False", "adoption_tags_applied=True")
    )
    assert main(["--root", str(root), "validate"]) == 0
    err = capsys.readouterr().err
    assert "adoption_tags_applied" not in err
    assert "private_api_reachable_via is still" in err
    said = 'private_api_reachable_via="DRG attachment of the management VCN",'
    module.write_text(
        re.sub(
            r'private_api_reachable_via="UNKNOWN.*?VPN\)",', said, module.read_text(), flags=re.S
        )
    )
    assert main(["--root", str(root), "validate"]) == 0
    assert "private_api_reachable_via" not in capsys.readouterr().err


def _state_with(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    state = json.loads(TFSTATE.read_text())
    change(state)
    out = tmp_path / "oke-changed.tfstate"
    out.write_text(json.dumps(state))
    return out


def _attributes(state: dict[str, Any], kind: str) -> dict[str, Any]:
    resource = next(r for r in state["resources"] if r["type"] == kind)
    attributes: dict[str, Any] = resource["instances"][0]["attributes"]
    return attributes


def test_an_attribute_with_no_fate_is_refused(root: Path, tmp_path: Path) -> None:
    def add(state: dict[str, Any]) -> None:
        pool = _attributes(state, "oci_containerengine_node_pool")
        pool["node_config_details"][0]["brand_new_setting"] = "x"

    with pytest.raises(DefinitionErrors, match=r"brand_new_setting.*neither imported nor dropped"):
        _plan(root, _state_with(tmp_path, add))


def test_legacy_placement_is_refused(root: Path, tmp_path: Path) -> None:
    def legacy(state: dict[str, Any]) -> None:
        pool = _attributes(state, "oci_containerengine_node_pool")
        pool["node_config_details"] = []
        pool["subnet_ids"] = ["ocid1.subnet.oc1.eu-frankfurt-1.aaaaaaaaexampleworkers"]
        pool["quantity_per_subnet"] = 1

    with pytest.raises((DefinitionError, DefinitionErrors), match="legacy subnet_ids"):
        _plan(root, _state_with(tmp_path, legacy))


def test_what_capoci_cannot_hold_is_reported(root: Path, tmp_path: Path) -> None:
    def set_them(state: dict[str, Any]) -> None:
        pool = _attributes(state, "oci_containerengine_node_pool")
        placement = pool["node_config_details"][0]["placement_configs"][0]
        placement["preemptible_node_config"] = [
            {"preemption_action": [{"type": "TERMINATE", "is_preserve_boot_volume": False}]}
        ]
        pool["node_image_name"] = "Oracle-Linux-8.10"
        pool["node_pool_cycling_details"][0]["cycle_modes"] = ["BOOT_VOLUME_REPLACE"]

    text = "\n".join(_plan(root, _state_with(tmp_path, set_them)).report)
    assert "preemptible_node_config.preemption_action.type is set" in text
    assert "node_image_name is set in the state and not carried: image by name" in text
    assert "cycle_modes is set" in text


def test_an_image_by_name_is_declared_as_the_ocid_oke_resolved(root: Path, tmp_path: Path) -> None:
    def by_name(state: dict[str, Any]) -> None:
        pool = _attributes(state, "oci_containerengine_node_pool")
        pool["node_source_details"] = []
        pool["node_image_name"] = "Oracle-Linux-8.10-2026.02.28-0-OKE-1.32.1-760"

    plan = _plan(root, _state_with(tmp_path, by_name))
    spec = _bodies(plan)[("OCIManagedMachinePool", "oke-prod-np1")]["spec"]
    resolved = "ocid1.image.oc1.eu-frankfurt-1.aaaaaaaaexampleoraclelinux810oke"
    assert spec["nodeSourceViaImage"]["imageId"] == resolved
    assert f"declared as the OCID OKE resolved it to (node_source.image_id {resolved})" in (
        "\n".join(plan.report)
    )


def test_verify_refuses_a_render_that_loses_a_value(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = oke_planner._pool

    def lossy(*args: Any, **kwargs: Any) -> Any:
        keywords, ads, image = real(*args, **kwargs)
        keywords.pop("ssh_public_key", None)
        return keywords, ads, image

    monkeypatch.setattr(oke_planner, "_pool", lossy)
    with pytest.raises(DefinitionErrors, match=r"ssh_public_key.*the import would change it"):
        _plan(root, TFSTATE)
    assert not any((root / "clusters").glob("*oke*.py"))


def test_a_state_of_magnum_and_oke_imports_each_through_its_plugin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One `terraform show -json` with a Magnum cluster set and an OKE cluster, into the
    hybrid fleet (both clouds): each cluster through its cloud's importer, each importer's
    clusters in a module of its own, rendered and checked together."""
    from conftest import copy_fleet

    root = copy_fleet(HYBRID, tmp_path / "hybrid")
    # The hybrid fleet gives each OKE cluster an identity; an imported one uses CAPOCI's
    # own credentials (a cluster without either is refused by the render).
    (root / "clusters" / "capoci.py").write_text(
        "from fleet import CapociCredentials, Fleet\n\n\n"
        "def define(fleet: Fleet) -> None:\n"
        '    CapociCredentials(fleet, "capoci", secret="capoci-variables", environments=["prod"])\n'
    )
    magnum = json.loads(MAGNUM_SHOWN.read_text())
    oke = json.loads(SHOWN.read_text())
    mixed = magnum["values"]["root_module"]
    mixed.setdefault("child_modules", []).extend(oke["values"]["root_module"]["child_modules"])
    state = tmp_path / "mixed.show.json"
    state.write_text(json.dumps(magnum))
    argv = ["--root", str(root), "import", "tfstate", "--state", f"dev={state}"]
    assert main(argv) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    magnum_module = (root / "clusters" / "mixed.py").read_text()
    oke_module = (root / "clusters" / "mixed_oke.py").read_text()
    assert "MagnumCluster(" in magnum_module and "OciManagedCluster" not in magnum_module
    assert "OciManagedCluster(" in oke_module and "MagnumCluster" not in oke_module
    assert "oke-prod (prod): " in out and "k8s-calico-podman (dev): " in out
    assert "imported 3 clusters as 3 declarations" in out
    assert main(["--root", str(root), "synth"]) == 0
    assert main(["--root", str(root), "validate"]) == 0


def test_the_allow_list_of_generated_code_is_what_oke_imports_call(root: Path) -> None:
    """The classes the OKE importer lets its modules call are those its imports call."""
    called: set[str] = set()
    for path, text in _plan(root, TFSTATE).files.items():
        check_generated({path: text}, "clusters")
        called |= {
            node.func.id
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
    assert called == set(CODE.calls)


def _environment_copy(tmp_path: Path, env: str) -> Path:
    """The prod state as the same configuration applied for ``env`` (its own OCIDs, VCN
    and name; one state per environment, as terraform-oci-oke's workspaces give)."""
    text = TFSTATE.read_text()
    text = text.replace("oke-prod", f"oke-{env}").replace("exampleprod", f"example{env}")
    text = text.replace("aaaaaaaaexample", f"aaaaaaaa{env}example")
    text = text.replace("amaaaaaaexampleokevcn01", f"amaaaaaa{env}okevcn01")
    out = tmp_path / f"{env}.tfstate"
    out.write_text(text)
    return out


def test_the_same_cluster_in_two_environments_is_one_declaration(
    root: Path, tmp_path: Path
) -> None:
    test = _environment_copy(tmp_path, "test")
    plan = _plan(root, TFSTATE, test)
    (declaration,) = plan.declarations
    assert [m.cluster.environment for m in declaration.members] == ["test", "prod"]
    (text,) = plan.files.values()
    assert 'name="oke-{env}"' in text
    assert "network=per_env(" in text and "cluster_id=per_env(" in text
    ids = {
        "prod": (CLUSTER_ID, "ocid1.vcn.oc1.eu-frankfurt-1.amaaaaaaexampleokevcn01"),
        "test": (
            "ocid1.cluster.oc1.eu-frankfurt-1.aaaaaaaatestexampletestcluster01",
            "ocid1.vcn.oc1.eu-frankfurt-1.amaaaaaatestokevcn01",
        ),
    }
    for env, (cluster_id, vcn_id) in ids.items():
        bodies = _bodies(plan, env)
        assert bodies[("OCIManagedControlPlane", f"oke-{env}")]["spec"]["id"] == cluster_id
        vcn = bodies[("OCIManagedCluster", f"oke-{env}")]["spec"]["networkSpec"]["vcn"]
        assert vcn["id"] == vcn_id
    assert "merged with test" in "\n".join(plan.report)


# --- the real fixtures (tests/fixtures/terraform/real-oke) --------------------------------

REAL_OKE = Path(__file__).parent / "fixtures/terraform/real-oke"
OKE_FIXTURES = sorted(p.name for p in REAL_OKE.iterdir() if p.is_dir())
OKE_STATES = [
    (fixture, state)
    for fixture in OKE_FIXTURES
    for state in yaml.safe_load((REAL_OKE / fixture / "expected.yaml").read_text())["import"][
        "states"
    ]
]


@pytest.mark.parametrize(
    ("fixture", "state"), OKE_STATES, ids=[f"{f}/{s['path']}" for f, s in OKE_STATES]
)
def test_real_oke_terraform_imports_as_expected(
    fixture: str, state: dict[str, Any], root: Path
) -> None:
    """Every cluster and node pool of the fixture's state (imported alone, with its flag)
    becomes the declaration expected.yaml says, adopted by OCID, rendered and verified."""
    folder = REAL_OKE / fixture
    expected = yaml.safe_load((folder / "expected.yaml").read_text())
    flag = state["flag"]
    env = state["environment"] if flag and flag.startswith("--state") else None
    plan = plan_state_import(
        FleetConfig.load(root),
        StateOptions(states=[(folder / state["path"], env)], sources=[folder / "source"]),
    )
    assert sorted(d.construct_id for d in plan.declarations) == sorted(
        c["declaration"] for c in expected["clusters"]
    )
    report = "\n".join(plan.report)
    for want in expected["clusters"]:
        env_of = want["environment"]
        (decl,) = [d for d in plan.declarations if d.construct_id == want["declaration"]]
        (member,) = decl.members
        assert member.cluster.environment == env_of
        assert member.cluster.name == want["oke_name"]
        assert member.cluster.resource.address == want["address"]
        bodies = {
            (m.kind, m.name): dict(m.body)
            for m in plan.manifests[env_of]
            if m.group.endswith("cluster.x-k8s.io")
        }
        name = want["oke_name"]
        cp = bodies[("OCIManagedControlPlane", name)]["spec"]
        infra = bodies[("OCIManagedCluster", name)]["spec"]
        assert cp["id"] == want["cluster_id"]
        assert cp["clusterPodNetworkOptions"] == [{"cniType": want["cni"]}]
        vcn = infra["networkSpec"]["vcn"]
        assert infra["networkSpec"]["skipNetworkManagement"] is True
        assert vcn["id"] == want["vcn_id"]
        assert infra.get("freeformTags") == want["freeform_tags"]
        endpoints = [s for s in vcn["subnets"] if s["role"] == "control-plane-endpoint"]
        (endpoint,) = endpoints
        if isinstance(want["endpoint"], dict):
            assert (endpoint["id"], endpoint["type"]) == (want["endpoint"]["legacy"], "public")
        else:
            assert endpoint["type"] == want["endpoint"]
        subnet_ids = {s["name"]: s["id"] for s in vcn["subnets"]}
        for pool in want["node_pools"]:
            spec = bodies[("OCIManagedMachinePool", pool["object"])]["spec"]
            assert spec["id"] == pool["node_pool_id"]
            assert bodies[("MachinePool", pool["object"])]["spec"]["replicas"] == pool["replicas"]
            placements = spec["nodePoolNodeConfig"]["placementConfigs"]
            assert [p["availabilityDomain"] for p in placements] == pool["availability_domains"]
            assert {subnet_ids[p["subnetName"]] for p in placements} == {pool["subnet_id"]}
            shape = spec.get("nodeShapeConfig") or {}
            if "ocpus" in pool:
                assert float(shape["ocpus"]) == pool["ocpus"]
                assert float(shape["memoryInGBs"]) == pool["memory_gb"]
            if "labels" in pool:
                assert {kv["key"]: kv["value"] for kv in spec["initialNodeLabels"]} == pool[
                    "labels"
                ]
            if "max_surge" in pool:
                assert spec["nodePoolCyclingDetails"]["maximumSurge"] == pool["max_surge"]
        for line in want["report"]:
            assert line in report, line


@pytest.mark.parametrize("fixture", OKE_FIXTURES)
def test_real_oke_imports_synth_and_validate(
    fixture: str, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = yaml.safe_load((REAL_OKE / fixture / "expected.yaml").read_text())
    state = expected["import"]["states"][0]
    path = REAL_OKE / fixture / state["path"]
    given = ["--state", f"{state['environment']}={path}"] if state["flag"] else [str(path)]
    assert main(["--root", str(root), "import", "tfstate", *given]) == 0
    assert main(["--root", str(root), "synth"]) == 0
    assert main(["--root", str(root), "validate"]) == 0
    assert "adoption_tags_applied is not set" in capsys.readouterr().err


def test_the_guides_oke_import_runs(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/guide.md's OKE block, on the terraform-oci-oke fixture's `terraform show -json`."""
    guide = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text()
    section = guide.split("### OKE clusters from Terraform", 1)[1].split("```shell\n", 1)[1]
    lines = section.split("```", 1)[0].strip().splitlines()
    assert lines[0] == "terraform show -json > oke-prod.json"
    (root / "oke-prod.json").write_text(SHOWN.read_text())
    for line in lines[1:]:
        argv = shlex.split(line)
        assert argv[0] == "fleet"
        args = [a.replace("=oke-prod.json", f"={root / 'oke-prod.json'}") for a in argv[1:]]
        assert main(["--root", str(root), *args]) == 0, capsys.readouterr().err
    assert "adoption_tags_applied is not set" in capsys.readouterr().err
