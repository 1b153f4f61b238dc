"""`fleet import tfstate`: the seven real-world Terraform shapes (tests/fixtures/terraform/real),
imported into a copy of the fixture fleet ``hybrid``, every state value compared with the
rendered ClusterV1 and NodegroupV1 through each fixture's expected.yaml.

expected.yaml was written by hand from the Terraform source, the states and upstream
behaviour, not from the importer (its README gives the keys and the rules); these tests
read it and never regenerate it. Each fixture is imported once (in-process, as `fleet
import tfstate` does, with the states and flags its expected.yaml names) and the plan's
rendered objects are what the fleet renders with the written modules.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import copy_fleet
from support import HYBRID, REPO, tree_hash

from fleet import ClusterTemplate, FleetConfig
from fleet.cli.main import main
from fleet.core.manifest import Manifest
from fleet.importers.generated import check_generated, shape
from fleet.importers.registry import cloud_importers
from fleet.importers.state_import import StateOptions, StatePlan, plan_state_import
from fleet.terraform.hcl import read_configuration

REAL = Path(__file__).parent / "fixtures" / "terraform" / "real"
FIXTURES = sorted(p.name for p in REAL.iterdir() if p.is_dir())
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
EXTERNAL_NAME = "crossplane.io/external-name"


def expected(fixture: str) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((REAL / fixture / "expected.yaml").read_text())
    return document


def options_for(fixture: str, **overrides: Any) -> StateOptions:
    """The command line expected.yaml gives: each state with its flag, the sources."""
    doc = expected(fixture)
    folder = REAL / fixture
    states: list[tuple[Path, str | None]] = []
    environment = None
    for state in doc["import"]["states"]:
        flag = state["flag"] or ""
        given = flag.startswith("--state")
        states.append((folder / state["path"], state["environment"] if given else None))
        if flag.startswith("--environment"):
            environment = state["environment"]
    source = doc["import"]["source"]
    sources = [folder / s for s in ([source] if isinstance(source, str) else source or [])]
    values: dict[str, Any] = {"states": states, "sources": sources, "environment": environment}
    values.update(overrides)
    return StateOptions(**values)


@pytest.fixture(scope="module")
def hybrid_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_fleet(HYBRID, tmp_path_factory.mktemp("state-import") / "project")


_PLANS: dict[str, StatePlan] = {}


def templates_of(plan: StatePlan) -> dict[str, Any]:
    """The templates the (one) importer read, by UUID."""
    (planner,) = plan.planners
    return dict(planner.model.templates)  # type: ignore[attr-defined]


def imported(fixture: str, root: Path) -> StatePlan:
    """The fixture imported into the fleet (once per test session)."""
    if fixture not in _PLANS:
        _PLANS[fixture] = plan_state_import(FleetConfig.load(root), options_for(fixture))
    return _PLANS[fixture]


def by_external_name(manifests: list[Manifest], kind: str) -> dict[str, dict[str, Any]]:
    return {
        m.body["metadata"]["annotations"][EXTERNAL_NAME]: m.body
        for m in manifests
        if m.kind == kind and EXTERNAL_NAME in m.body["metadata"].get("annotations", {})
    }


def entries(fixture: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for cluster in expected(fixture)["clusters"]:
        for env, entry in cluster["environments"].items():
            yield cluster["declaration"], env, entry


def autoscaled(entry: dict[str, Any]) -> bool:
    """Whether expected.yaml says something else resizes the pool: the cluster's labels
    turn Magnum's autoscaler on (``autoscaling.enabled_by``), or the node group has bounds."""
    explicit = entry.get("explicit") or {}
    bounded = bool(explicit.get("min_node_count") or explicit.get("max_node_count"))
    return bounded or bool((entry.get("autoscaling") or {}).get("enabled_by"))


def moved_node_count(spec: dict[str, Any], value: Any) -> bool:
    """An autoscaled pool's nodeCount in spec.initProvider, with the state's value, and
    the object not late-initialized: the one place these tests read expected.yaml's
    ``exact: nodeCount`` otherwise than it says.

    expected.yaml keeps Terraform's behaviour (node_count enforced on every apply). The
    fleet enforces continuously, so for a pool another controller resizes it sets the
    value at creation only (upjet v2.2.0 ``filterInitExclusiveDiffs``): the Magnum
    autoscaler of the Heat driver resizes through Magnum's API (kubernetes/autoscaler
    ``cluster-autoscaler/cloudprovider/magnum/magnum_manager_impl.go`` ``updateNodeCount``:
    ``clusters.Resize``), which an enforced nodeCount would undo on every poll; the
    Cluster API driver leaves the count to the autoscaler (stackhpc/magnum-capi-helm
    a8b82c24 ``driver.py`` ``_get_node_counts``: "the `replicas` field is omitted when
    autoscaling is enabled"). The value is kept; only its enforcement changes.
    """
    rendered = spec.get("managementPolicies", ["*"])
    return (
        "nodeCount" not in spec.get("forProvider", {})
        and spec.get("initProvider", {}).get("nodeCount") == value
        and not {"*", "LateInitialize"} & set(rendered)
    )


def check_for_provider(body: dict[str, Any], entry: dict[str, Any], what: str) -> list[str]:
    """The rules of tests/fixtures/terraform/real/README.md, for one object."""
    problems: list[str] = []
    spec = body["spec"]
    for_provider, init = spec.get("forProvider", {}), spec.get("initProvider", {})
    rules = entry["for_provider"]
    labels = entry.get("labels") or {}
    for key, value in (rules.get("exact") or {}).items():
        if key == "nodeCount" and autoscaled(entry) and moved_node_count(spec, value):
            continue
        if key == "labels" and for_provider.get("mergeLabels") is True:
            problems += check_merged_labels(for_provider.get("labels"), labels, what)
        elif for_provider.get(key, "<absent>") != value:
            problems.append(f"{what}: forProvider.{key} is {for_provider.get(key, '<absent>')!r}")
    for key, value in (rules.get("absent_or_equal") or {}).items():
        if key not in for_provider:
            continue
        if key == "labels" and for_provider.get("mergeLabels") is True:
            problems += check_merged_labels(for_provider["labels"], labels, what)
        elif for_provider[key] != value:
            problems.append(f"{what}: forProvider.{key} is {for_provider[key]!r}, not {value!r}")
    for key in rules.get("absent") or []:
        if key in for_provider:
            problems.append(f"{what}: forProvider.{key} must be absent")
    for key, value in (entry.get("init_provider") or {}).items():
        if init.get(key) != value or key in for_provider:
            problems.append(f"{what}: initProvider.{key} is {init.get(key)!r}")
    policies = entry.get("management_policies")
    if policies:
        rendered = spec.get("managementPolicies", ["*"])
        bad = [p for p in policies["must_not_include"] if p in rendered]
        if bad:
            problems.append(f"{what}: managementPolicies {rendered} include {bad}")
    return problems


def check_merged_labels(rendered: Any, labels: dict[str, Any], what: str) -> list[str]:
    """README: with mergeLabels, every label of required_if_merge with its value, and any
    other declared label with Magnum's value."""
    rendered = rendered or {}
    problems = [
        f"{what}: label {k} missing or changed"
        for k, v in (labels.get("required_if_merge") or {}).items()
        if rendered.get(k) != v
    ]
    magnum = labels.get("magnum") or {}
    problems += [
        f"{what}: label {k} is not Magnum's value"
        for k, v in rendered.items()
        if magnum.get(k) != v
    ]
    return problems


# --- every value of every fixture ---------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURES)
def test_every_state_value_is_rendered_unchanged(fixture: str, hybrid_copy: Path) -> None:
    plan = imported(fixture, hybrid_copy)
    problems: list[str] = []
    for declaration, env, entry in entries(fixture):
        manifests = list(plan.manifests[env])
        clusters = by_external_name(manifests, "ClusterV1")
        body = clusters.get(entry["external_name"])
        what = f"{declaration}/{env}"
        if body is None:
            problems.append(f"{what}: no ClusterV1 adopts {entry['external_name']}")
            continue
        # Real Magnum names survive byte-identical; the Kubernetes name is a DNS label.
        assert body["spec"]["forProvider"]["name"] == entry["magnum_name"]
        assert DNS_LABEL.match(body["metadata"]["name"]), body["metadata"]["name"]
        assert body["spec"]["deletionPolicy"] == "Orphan"
        problems += check_for_provider(body, entry, what)
        groups = by_external_name(manifests, "NodegroupV1")
        for group in entry.get("node_groups") or []:
            found = groups.get(group["external_name"])
            label = f"{what} node group {group['magnum_name']}"
            if found is None:
                problems.append(f"{label}: no NodegroupV1 adopts {group['external_name']}")
                continue
            assert found["spec"]["forProvider"]["name"] == group["magnum_name"]
            assert DNS_LABEL.match(found["metadata"]["name"]), found["metadata"]["name"]
            problems += check_for_provider(found, group, label)
        ours = [
            g for g in groups.values() if g["spec"]["forProvider"].get("clusterId") == entry["uuid"]
        ]
        assert len(ours) == len(entry.get("node_groups") or []), what
    assert problems == []


@pytest.mark.parametrize("fixture", FIXTURES)
def test_one_declaration_per_expected_cluster(fixture: str, hybrid_copy: Path) -> None:
    plan = imported(fixture, hybrid_copy)
    found = sorted(sorted(m.cluster.environment for m in d.members) for d in plan.declarations)
    wanted = sorted(sorted(c["environments"]) for c in expected(fixture)["clusters"])
    assert found == wanted


def test_the_allow_list_of_generated_code_is_what_these_imports_call(hybrid_copy: Path) -> None:
    """#26: the classes the check of generated modules allows (one list for both imports)
    are those the seven real imports call, no more (``fleet.declaration`` look-ups, the
    other allowed call, are the tfvars import's reused projects: test_migration.py)."""
    called: set[str] = set()
    for fixture in FIXTURES:
        for path, text in imported(fixture, hybrid_copy).files.items():
            check_generated({path: text}, "clusters")
            called |= {
                node.func.id
                for node in ast.walk(ast.parse(text))
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            }
    magnum = [i for i in cloud_importers() if i.name == "Magnum"]
    assert called == shape(magnum).calls  # OKE's: test_oke_import.py


@pytest.mark.parametrize("fixture", FIXTURES)
def test_templates_keep_their_uuid_name_labels_and_values(fixture: str, hybrid_copy: Path) -> None:
    plan = imported(fixture, hybrid_copy)
    catalog = next(
        (text for path, text in plan.files.items() if path.name == "_imported_templates.py"), ""
    )
    written = {t.uuid: t for t in templates_in(catalog)}
    for template in expected(fixture)["templates"]:
        found = templates_of(plan)[template["uuid"]]
        assert found.magnum_name == template["magnum_name"]
        assert found.known_from == template["known_from"]
        assert found.kubernetes_version == template["kubernetes_version"]
        values = dict(template["values"])
        labels = values.pop("labels")
        assert dict(found.labels) == labels
        assert {k: found.values.get(k) for k in values} == values
        assert f'uuid="{template["uuid"]}"' in catalog
        # Written as code, every value read back as the state holds it (none in a comment).
        declared = written[template["uuid"]]
        assert declared.name == template["magnum_name"]
        assert dict(declared.base_labels) == labels
        assert declared.magnum_attributes() == values


def templates_in(catalog: str) -> list[ClusterTemplate]:
    """The templates a generated catalog module declares, by running it."""
    namespace: dict[str, Any] = {}
    exec(compile(catalog, "_imported_templates.py", "exec"), namespace)
    return [v for v in namespace.values() if isinstance(v, ClusterTemplate)]


# --- the command: what it prints and writes ------------------------------------------------


def argv_for(fixture: str, **flags: Any) -> list[str]:
    """`fleet import tfstate` as a person would run it for the fixture."""
    options = options_for(fixture, **flags)
    argv = ["import", "tfstate"]
    for path, env in options.states:
        argv += ["--state", f"{env}={path}"] if env else [str(path)]
    for source in options.sources:
        argv += ["--source", str(source)]
    if options.environment:
        argv += ["--environment", options.environment]
    return argv


def run_cli(root: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["--root", str(root), *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def fleet_copy(tmp_path: Path) -> Path:
    return copy_fleet(HYBRID, tmp_path / "project")


SECRET_MARKERS = ("NOT-A-SECRET", "FAKE-")
"""Every key, password and kubeconfig in the fixtures' states (and paws' synthetic
secrets.tf) is a fake holding these."""


@pytest.mark.parametrize("fixture", FIXTURES)
def test_the_command_writes_modules_that_synth_and_never_a_secret(
    fixture: str, fleet_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = argv_for(fixture)
    if fixture == "paws":  # the folder with the (fake) decrypted secrets, as a source too
        argv += ["--source", str(REAL / fixture / "synthetic")]
    code, output = run_cli(fleet_copy, argv, capsys)
    assert code == 0, output
    if fixture == "paws":
        assert f"report: --source {REAL / fixture / 'synthetic'}: declares none of" in output
    written = {p: p.read_text() for p in (fleet_copy / "clusters").glob("*.py")}
    assert not any(marker in output for marker in SECRET_MARKERS)
    assert not any(marker in text for text in written.values() for marker in SECRET_MARKERS)
    assert main(["--root", str(fleet_copy), "synth"]) == 0
    assert main(["--root", str(fleet_copy), "validate"]) == 0
    dist = "".join(p.read_text() for p in (fleet_copy / "dist").rglob("*.yaml"))
    assert not any(marker in dist for marker in SECRET_MARKERS)
    ruff_ok(*[p for p in written if p.read_text().startswith('"""Generated by `fleet import')])
    # The same input again: the same bytes (a re-import replaces what it wrote).
    assert run_cli(fleet_copy, argv, capsys)[0] == 0
    assert {p: p.read_text() for p in (fleet_copy / "clusters").glob("*.py")} == written


def ruff_ok(*paths: Path) -> None:
    """The generated modules pass ruff check and ruff format as the project configures them."""
    ruff = Path(sys.executable).parent / "ruff"
    config = ["--config", str(REPO / "pyproject.toml")]
    for command in (["check", "--no-cache"], ["format", "--check", "--no-cache"]):
        done = subprocess.run(
            [str(ruff), *command, *config, *map(str, paths)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_node_groups_alike_but_for_their_zone_are_one_comprehension(
    hybrid_copy: Path,
) -> None:
    plan = imported("zephyr-infrastructure", hybrid_copy)
    ci = next(text for path, text in plan.files.items() if path.name == "cnx_zephyr_ci.py")
    assert ci.count("NodeGroup(") == 3  # two comprehensions and az3-linux-arm64
    assert 'name=f"{zone}-cache"' in ci and 'name=f"{zone}-linux-x64"' in ci
    assert "for zone, group_id in (" in ci
    # A UUID or an id is never cut in two.
    for uuid in re.findall(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", ci):
        assert f'"{uuid}' in ci or f"/{uuid}" in ci


def test_label_sets_used_twice_are_named_constants(hybrid_copy: Path) -> None:
    plan = imported("stackhpc-terraform-magnum", hybrid_copy)
    catalog = next(t for p, t in plan.files.items() if p.name == "_imported_templates.py")
    assert catalog.count("K8S_ATOMIC_LABELS = {") == 1
    assert catalog.count("base_labels=K8S_ATOMIC_LABELS") == 2
    clusters = next(t for p, t in plan.files.items() if p.name == "podman.py")
    assert clusters.count('"use_podman": "true"') == 1
    assert clusters.count("labels=K8S_PODMAN_LABELS") == 2


def test_the_report_says_what_each_value_became(
    fleet_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = run_cli(fleet_copy, argv_for("ralgar-homelab-datasource"), capsys)
    assert code == 0, output
    head = "report: Cluster (dev): "
    lines = [line.removeprefix(head) for line in output.splitlines() if line.startswith(head)]
    assert any(
        line.startswith("adopts Magnum cluster fe67a6a5-362a-42bc-a117-9b98e6620681")
        and "'Kubernetes v1.26-1' (7f5be187-cb4c-4a50-875b-f8ad30f44611, data-source)" in line
        for line in lines
    )
    carried = next(line for line in lines if line.startswith("carried: "))
    assert "flavor (set at " in carried and "cluster.tf:6)" in carried
    inherited = next(line for line in lines if line.startswith("inherited from the template"))
    assert "master_flavor, docker_volume_size, master_lb_enabled (left to the template" in inherited
    assert any(line.startswith("environment: ") is False for line in lines)
    assert "environment: the state was given as --state dev=PATH" in output


def test_without_source_ignore_changes_is_unknown_and_said_to_be_enforced(
    fleet_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = run_cli(fleet_copy, argv_for("zephyr-infrastructure", sources=[]), capsys)
    assert code == 0, output
    assert (
        "report: zephyr-ci (prod): without --source the configuration's lifecycle "
        "ignore_changes is unknown: every declared value (node_count included) will be enforced"
    ) in output
    ci = (fleet_copy / "clusters" / "cnx_zephyr_ci.py").read_text()
    assert "create_only" not in ci
    # Without the HCL, a value equal to the template's is left to it.
    assert "docker_volume_size_gb=100" in ci  # node groups: Magnum copies nothing
    assert 'keypair="zephyr-ci-key"' in ci


def test_an_input_value_the_fleet_refuses_names_its_state_address_and_writes_nothing(
    fleet_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "bad.tfstate"
    document = json.loads((REAL / "ppouliot-magnum-clusters/state/terraform.tfstate").read_text())
    for resource in document["resources"]:
        if resource["type"] == "openstack_containerinfra_cluster_v1":
            resource["instances"][0]["attributes"]["name"] = "1-cluster"  # Magnum refuses it
    state.write_text(json.dumps(document))
    before = tree_hash(fleet_copy)
    code, output = run_cli(
        fleet_copy, ["import", "tfstate", str(state), "--environment", "dev"], capsys
    )
    assert code == 2
    assert f"error: {state} openstack_containerinfra_cluster_v1.cluster_1[0]: name: " in output
    assert "(the import writes nothing)" in output
    assert tree_hash(fleet_copy) == before


def test_the_environment_comes_from_the_name_then_the_state_then_the_flag(
    hybrid_copy: Path, fleet_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = {
        (m.cluster.magnum_name, m.cluster.environment): m.cluster.environment_rule
        for fixture in ("paws", "ppouliot-magnum-clusters")
        for d in imported(fixture, hybrid_copy).declarations
        for m in d.members
    }
    assert rules == {
        ("paws-dev-127d", "dev"): "the name 'paws-dev-127d' has the segment 'dev'",
        ("paws-127d", "prod"): "the state was given as --state prod=PATH",
        ("cluster_1", "dev"): "--environment dev",
    }
    state = REAL / "ppouliot-magnum-clusters/state/terraform.tfstate"
    code, output = run_cli(fleet_copy, ["import", "tfstate", str(state)], capsys)
    assert code == 2
    assert (
        f"error: {state} openstack_containerinfra_cluster_v1.cluster_1[0]: cannot tell the "
        "environment of cluster 'cluster_1': its name holds none of dev, test, prod; pass the "
        "state as --state ENV=PATH, or --environment ENV"
    ) in output
    # One line: its node groups are not reported as orphans besides.
    state = REAL / "zephyr-infrastructure/state/cnx-zephyr-ci.tfstate"
    code, output = run_cli(fleet_copy, ["import", "tfstate", str(state)], capsys)
    assert code == 2
    assert [line for line in output.splitlines() if line.startswith("error: ")] == [
        f"error: {state} openstack_containerinfra_cluster_v1.zephyr_ci: cannot tell the "
        "environment of cluster 'zephyr-ci': its name holds none of dev, test, prod; pass the "
        "state as --state ENV=PATH, or --environment ENV"
    ]


# --- what `fleet import tfvars` says of each real shape ---------------------------------------


REFUSALS = {
    "stackhpc-terraform-magnum": (
        "source/tfvars/podman.tfvars",
        ":16: variable `clusters` is a map of 2 clusters (a for_each layout): import the state "
        "instead: `terraform show -json > state.json && fleet import tfstate state.json`",
    ),
    "2i2c-infrastructure": (
        "source/terraform/openstack/projects/projectpythia-binder.tfvars",
        ":6: variable `notebook_nodes` is a map of 1 node group (a for_each layout in "
        "cluster.tf): import the state instead",
    ),
    "ppouliot-magnum-clusters": (
        "source/terraform.tfvars.example",
        ':8: enable_cluster = "1" is a count switch (main.tf: count = var.enable_cluster), not '
        "a cluster: import the state instead",
    ),
    "paws": (
        "source/tofu",
        "/variables.tf:35: variable `workers` is a map keyed by datacenter (codfw1dev, eqiad1) "
        "selected by var.datacenter, one state per datacenter: import each state instead",
    ),
    "ralgar-homelab-module": (
        "source/infra/envs/dev",
        "/cluster.tf:2: module `k8s_cluster` (source ../../modules/openstack/k8s-cluster) "
        "declares the cluster: import the state instead",
    ),
    "ralgar-homelab-datasource": (
        "source/infra/envs/dev",
        "/cluster.tf:1: resource openstack_containerinfra_cluster_v1 `cluster1` takes its "
        'template from data source `default` (template name "Kubernetes v1.26-1"), whose UUID '
        "only the state holds: import the state instead",
    ),
    "zephyr-infrastructure": (
        "source/terraform/cnx-zephyr-ci",
        "/main.tf:46: the cluster is a resource with its values in the configuration and no "
        "<community>/<cluster>/terraform.tfvars: import the state instead",
    ),
}


def test_every_fixture_has_a_refusal_here() -> None:
    assert sorted(REFUSALS) == FIXTURES
    for fixture, (path, _) in REFUSALS.items():
        commands = [r["command"] for r in expected(fixture)["refusals"]]
        assert f"fleet import tfvars {path}" in commands


@pytest.mark.parametrize("fixture", FIXTURES)
def test_tfvars_import_of_a_real_shape_names_it(
    fixture: str, fleet_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, message = REFUSALS[fixture]
    given = REAL / fixture / path
    before = tree_hash(fleet_copy)
    code, output = run_cli(fleet_copy, ["import", "tfvars", str(given)], capsys)
    assert code == 2
    assert f"error: {given}{message}" in output
    assert not any(marker in output for marker in SECRET_MARKERS)
    assert tree_hash(fleet_copy) == before


# --- the pieces -------------------------------------------------------------------------------


def edited_state(tmp_path: Path, fixture: str, state: str, to: str, **changes: Any) -> Path:
    """A copy of a fixture state with its cluster's attributes changed."""
    document = json.loads((REAL / fixture / state).read_text())
    for resource in document["resources"]:
        if resource["type"] == "openstack_containerinfra_cluster_v1":
            resource["instances"][0]["attributes"].update(changes)
    path = tmp_path / to
    path.write_text(json.dumps(document))
    return path


def test_the_same_address_in_two_environments_is_one_declaration(
    fleet_copy: Path, tmp_path: Path
) -> None:
    dev = REAL / "ppouliot-magnum-clusters/state/terraform.tfstate"
    prod = edited_state(
        tmp_path,
        "ppouliot-magnum-clusters",
        "state/terraform.tfstate",
        "prod.tfstate",
        id="8a6b2c1d-0e9f-4a3b-8c7d-6e5f4a3b2c1d",
        name="cluster_2",
        node_count=5,
    )
    plan = plan_state_import(
        FleetConfig.load(fleet_copy),
        StateOptions(states=[(dev, "dev"), (prod, "prod")]),
    )
    (decl,) = plan.declarations
    assert [m.cluster.environment for m in decl.members] == ["dev", "prod"]
    text = plan.files[decl.module]
    assert 'name=per_env(dev="cluster_1", prod="cluster_2")' in text
    assert "node_count=per_env(dev=3, prod=5)" in text
    assert 'environments=["dev", "prod"]' in text
    rendered = by_external_name(list(plan.manifests["prod"]), "ClusterV1")
    body = rendered["8a6b2c1d-0e9f-4a3b-8c7d-6e5f4a3b2c1d"]
    assert body["spec"]["forProvider"]["nodeCount"] == 5


def test_a_template_known_only_by_uuid_is_declared_with_it(
    fleet_copy: Path, tmp_path: Path
) -> None:
    document = json.loads((REAL / "ppouliot-magnum-clusters/state/terraform.tfstate").read_text())
    document["resources"] = [
        r
        for r in document["resources"]
        if r["type"] != "openstack_containerinfra_clustertemplate_v1"
    ]
    state = tmp_path / "no-template.tfstate"
    state.write_text(json.dumps(document))
    plan = plan_state_import(FleetConfig.load(fleet_copy), StateOptions(states=[(state, "dev")]))
    (template,) = templates_of(plan).values()
    assert (template.uuid, template.known_from) == ("2bd81fb0-754a-4db4-8f3e-6868a41347c8", "uuid")
    assert template.kubernetes_version == "v1.14.6"  # the cluster's coe_version
    (decl,) = plan.declarations
    member = decl.members[0]
    # Nothing tells what the template gave: every value the state holds is declared.
    assert member.keywords["flavor"] == "m1.medium"
    assert member.keywords["master_flavor"] == "m1.large"
    catalog = next(t for p, t in plan.files.items() if p.name == "_imported_templates.py")
    assert 'uuid="2bd81fb0-754a-4db4-8f3e-6868a41347c8"' in catalog
    assert "known only by the UUID its clusters name" in catalog


def test_lifecycle_ignore_changes_is_read_from_the_configuration(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'resource "openstack_containerinfra_nodegroup_v1" "a" {\n'
        "  lifecycle {\n"
        '    ignore_changes = [node_count, labels["x"]]\n'
        "  }\n"
        "  node_count = 1\n"
        "}\n"
        'resource "openstack_containerinfra_cluster_v1" "b" {\n'
        "  lifecycle { ignore_changes = all }\n"
        "}\n"
    )
    configuration = read_configuration(tmp_path)
    group = configuration.block((), "resource", "openstack_containerinfra_nodegroup_v1", "a")
    cluster = configuration.block((), "resource", "openstack_containerinfra_cluster_v1", "b")
    assert group is not None and group.ignore_changes == ("node_count", "labels")
    assert group.at("node_count") == f"{tmp_path / 'main.tf'}:5"
    assert cluster is not None and cluster.ignore_changes == ("all",)


def test_flags_of_the_other_import_are_refused(
    fleet_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(REAL / "ppouliot-magnum-clusters/state/terraform.tfstate")
    assert run_cli(fleet_copy, ["import", "tfstate", state, "--derive-templates"], capsys) == (
        2,
        "error: --derive-templates is for tfvars (--tfvars): a state gives every template, "
        "with its UUID\n",
    )
    code, output = run_cli(
        fleet_copy, ["import", "tfstate", state, "--tfvars", "x", "--state", f"dev={state}"], capsys
    )
    assert code == 2 and "--state ENV=PATH and --source are for the state import" in output


def test_a_state_given_twice_is_refused_once(
    fleet_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Once as STATE and once as --state prod=PATH (the same file by another path too):
    one line saying so, not a missing environment, and nothing written."""
    state = REAL / "ppouliot-magnum-clusters/state/terraform.tfstate"
    again = state.parent / ".." / "state" / state.name
    before = sorted(p.name for p in (fleet_copy / "clusters").iterdir())
    code, output = run_cli(
        fleet_copy, ["import", "tfstate", str(state), "--state", f"prod={again}"], capsys
    )
    assert (code, output) == (
        2,
        f"error: {again}: given twice (as STATE and as --state prod=PATH): pass each state "
        "file once\n",
    )
    assert sorted(p.name for p in (fleet_copy / "clusters").iterdir()) == before


def test_clusters_not_merged_say_why(fleet_copy: Path, tmp_path: Path) -> None:
    """The same address in two environments with a value a MagnumCluster takes once
    (``create_timeout``: ForceNew, so rendered as each state has it)."""
    dev = REAL / "ppouliot-magnum-clusters/state/terraform.tfstate"
    prod = edited_state(
        tmp_path,
        "ppouliot-magnum-clusters",
        "state/terraform.tfstate",
        "prod.tfstate",
        id="8a6b2c1d-0e9f-4a3b-8c7d-6e5f4a3b2c1d",
        name="cluster_2",
        create_timeout=15,
    )
    plan = plan_state_import(
        FleetConfig.load(fleet_copy), StateOptions(states=[(dev, "dev"), (prod, "prod")])
    )
    assert len(plan.declarations) == 2
    assert (
        "cluster_2 (prod): not merged across environments at "
        "openstack_containerinfra_cluster_v1.cluster_1[0]: create_timeout_minutes set in some "
        "environments only"
    ) in plan.report
    # Their one project is declared by the first module, looked up by the other.
    first, second = (plan.files[d.module] for d in plan.declarations)
    assert first.count("OpenStackProject(") == 1 and second.count("OpenStackProject(") == 0
    assert "# Declared in clusters/ppouliot_magnum_clusters.py." in second
    assert (
        'project = fleet.declaration("04b46ab062b6995a6f1a13878c38ac29", OpenStackProject)'
        in second
    )


def test_one_cluster_per_datacenter_is_one_declaration_with_per_env(hybrid_copy: Path) -> None:
    """paws: each datacenter's state has its own project and template (expected.yaml:
    "One declaration, per_env for name, template and node_count"); the module declares both
    projects and the cluster once."""
    plan = imported("paws", hybrid_copy)
    (decl,) = plan.declarations
    text = plan.files[decl.module]
    assert text.count("MagnumCluster(") == 1
    assert 'name=per_env(dev="paws-dev-127d", prod="paws-127d"),' in text
    assert "template=per_env(dev=PAWS_DEV_127D, prod=PAWS_127D)," in text
    assert "project=per_env(dev=project, prod=project_2)," in text
    assert "node_count=per_env(dev=2, prod=5)," in text
    assert text.count("OpenStackProject(") == 2
    assert not any("not merged" in line for line in plan.report)
    for env, config in (("dev", "pawsdev"), ("prod", "paws")):
        rendered = [m for m in plan.manifests[env] if m.kind == "ProviderConfig"]
        assert config in [m.name for m in rendered]
        (cluster,) = [
            m.body
            for m in plan.manifests[env]
            if m.kind == "ClusterV1" and m.body["spec"]["forProvider"]["name"].startswith("paws")
        ]
        assert cluster["spec"]["providerConfigRef"] == {"name": config}


def test_one_template_module_reused_across_communities(
    fleet_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two workspaces imported one after the other: both templates in one module, each with
    its comment, and the first community's module unchanged."""
    folder = REAL / "2i2c-infrastructure"
    source = ["--source", str(folder / "source/terraform/openstack")]
    first = ["import", "tfstate", "--state", f"prod={folder}/state/projectpythia-binder.show.json"]
    assert run_cli(fleet_copy, [*first, *source], capsys)[0] == 0
    binder = (fleet_copy / "clusters" / "projectpythia_binder.py").read_text()
    second = ["import", "tfstate", "--state", f"prod={folder}/state/2i2c-jetstream2.tfstate"]
    code, output = run_cli(fleet_copy, [*second, *source], capsys)
    assert code == 0, output
    catalog = (fleet_copy / "clusters" / "_imported_templates.py").read_text()
    assert catalog.count("= ClusterTemplate(") == 2
    assert catalog.count("# Magnum template 'ubuntu-jammy-kube-v1.") == 2
    assert 'uuid="cafe8e6d-ca3a-4c0c-a1d3-30a7e5687016"' in catalog
    assert 'uuid="be529a97-f060-4958-b8ce-30c955648e18"' in catalog
    assert (fleet_copy / "clusters" / "projectpythia_binder.py").read_text() == binder
    assert main(["--root", str(fleet_copy), "synth"]) == 0


# --- templates as code: read back on re-import, credentials never written ------------------------


def without_templates(tmp_path: Path, fixture: str, state: str) -> Path:
    """A copy of a fixture state without its template resources (made elsewhere), at the
    same relative path (so in the same module)."""
    document = json.loads((REAL / fixture / state).read_text())
    document["resources"] = [
        r
        for r in document["resources"]
        if r["type"] != "openstack_containerinfra_clustertemplate_v1"
    ]
    path = tmp_path / fixture / state
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(document))
    return path


def catalog_of(root: Path) -> dict[str, ClusterTemplate]:
    text = (root / "clusters" / "_imported_templates.py").read_text()
    return {t.name: t for t in templates_in(text)}


def test_a_re_import_reads_the_templates_attributes_back(
    fleet_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ppouliot's template written as code by a first import; a state without the template
    is then imported: the fleet's declaration decides what the cluster inherits (its flavor
    and master flavor equal the template's: left to it, as the Terraform source leaves
    them), where without it every value would be declared
    (test_a_template_known_only_by_uuid_is_declared_with_it)."""
    state = REAL / "ppouliot-magnum-clusters/state/terraform.tfstate"
    assert run_cli(fleet_copy, ["import", "tfstate", "--state", f"dev={state}"], capsys)[0] == 0
    first = catalog_of(fleet_copy)["clustertemplate_1"]
    assert (first.flavor, first.master_flavor, first.image) == (
        "m1.medium",
        "m1.large",
        "fedora-atomic-29-aarch64-qcow2",
    )
    bare = without_templates(tmp_path, "ppouliot-magnum-clusters", "state/terraform.tfstate")
    plan = plan_state_import(FleetConfig.load(fleet_copy), StateOptions(states=[(bare, "dev")]))
    (template,) = templates_of(plan).values()
    assert template.known_from == "fleet"
    (decl,) = plan.declarations
    keywords = decl.members[0].keywords
    assert "flavor" not in keywords and "master_flavor" not in keywords
    assert keywords["keypair"] == "mykey"  # the template has none: the cluster's own
    assert any(
        line.startswith("cluster_1 (dev): inherited from the template, left unset: flavor, ")
        and "(equal to the template's)" in line
        for line in plan.report
    )
    # The catalog is kept as the first import wrote it, attributes and all.
    catalog = next(t for p, t in plan.files.items() if p.name == "_imported_templates.py")
    assert {t.name: t for t in templates_in(catalog)}["clustertemplate_1"] == first


def test_an_import_of_other_clusters_keeps_the_templates_attributes(
    fleet_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(fleet_copy, argv_for("paws"), capsys)[0] == 0
    before = catalog_of(fleet_copy)
    assert before["paws-127d"].magnum_attributes()["external_network_id"] == ("wan-transport-eqiad")
    assert run_cli(fleet_copy, argv_for("ppouliot-magnum-clusters"), capsys)[0] == 0
    after = catalog_of(fleet_copy)
    assert set(after) == {*before, "clustertemplate_1"}
    for name, template in before.items():
        assert after[name].magnum_attributes() == template.magnum_attributes()


def test_datacenters_imported_apart_then_together_are_one_declaration(
    fleet_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The module an earlier import wrote for one datacenter declares nothing once its
    cluster is merged into the other's: no cluster is declared twice."""
    folder = REAL / "paws" / "state"
    dev = ["--state", f"dev={folder / 'codfw1dev.tfstate'}"]
    prod = ["--state", f"prod={folder / 'eqiad1.tfstate'}"]
    for argv in (dev, prod):
        assert run_cli(fleet_copy, ["import", "tfstate", *argv], capsys)[0] == 0
    assert "MagnumCluster(" in (fleet_copy / "clusters" / "eqiad1.py").read_text()
    code, output = run_cli(fleet_copy, ["import", "tfstate", *dev, *prod], capsys)
    assert code == 0, output
    emptied = (fleet_copy / "clusters" / "eqiad1.py").read_text()
    assert "MagnumCluster(" not in emptied and "# clusters/codfw1dev.py" in emptied
    assert (fleet_copy / "clusters" / "codfw1dev.py").read_text().count("MagnumCluster(") == 1
    ruff_ok(fleet_copy / "clusters" / "eqiad1.py")
    assert main(["--root", str(fleet_copy), "synth"]) == 0


def test_a_template_attribute_with_a_password_is_never_written(
    fleet_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A proxy URL with credentials in the template's state: left out of the written
    template (Magnum keeps it), said in the report and the comment, never echoed."""
    folder = REAL / "paws" / "state"
    document = json.loads((folder / "eqiad1.tfstate").read_text())
    for resource in document["resources"]:
        if resource["type"] == "openstack_containerinfra_clustertemplate_v1":
            resource["instances"][0]["attributes"]["http_proxy"] = (
                "http://paws:Pr0xy-Pa55word@proxy.eqiad.wmnet:8080"
            )
    state = tmp_path / "eqiad1.tfstate"
    state.write_text(json.dumps(document))
    code, output = run_cli(fleet_copy, ["import", "tfstate", "--state", f"prod={state}"], capsys)
    assert code == 0, output
    written = "".join(p.read_text() for p in (fleet_copy / "clusters").glob("*.py"))
    assert "Pr0xy-Pa55word" not in output + written
    assert "report: paws-127d (prod): template 'paws-127d': http_proxy hold(s) credential" in (
        output
    )
    assert "#   http_proxy: credential material, not written (Magnum keeps it)" in written
    assert catalog_of(fleet_copy)["paws-127d"].http_proxy is None


def test_a_persons_template_that_says_otherwise_than_the_state_is_reported(
    fleet_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A template the fleet declares by hand is used as it is; where its attributes differ
    from the state's, the report says so (the declaration is the person's to correct)."""
    (fleet_copy / "clusters" / "_paws_templates.py").write_text(
        '"""Templates of the paws team."""\n\n'
        "from fleet import ClusterTemplate\n\n"
        "PAWS = ClusterTemplate(\n"
        '    name="paws-127d",\n'
        '    kubernetes_version="v1.27.8",\n'
        '    uuid="7f44d9f2-3162-4af3-af88-bfe56159c5b7",\n'
        '    flavor="g4.cores4.ram16.disk20",\n'
        '    keypair="paws-magnum-vm",\n'
        ")\n"
    )
    state = REAL / "paws" / "state" / "eqiad1.tfstate"
    code, output = run_cli(fleet_copy, ["import", "tfstate", "--state", f"prod={state}"], capsys)
    assert code == 0, output
    assert re.search(
        r"report: paws-127d \(prod\): template 'paws-127d' \(\S*_paws_templates\.py:5\) declares "
        r"flavor 'g4\.cores4\.ram16\.disk20' \(the state: 'g4\.cores8\.ram32\.disk20'\): correct "
        r"its declaration\n",
        output,
    )
    module = (fleet_copy / "clusters" / "eqiad1.py").read_text()
    assert "from clusters._paws_templates import PAWS" in module


def test_magnum_names_without_a_usable_kubernetes_name_import_with_a_pinned_one(
    fleet_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Valid Magnum names (a cluster name of 100 characters, two clusters and two node
    # groups whose names derive one object name, a node group name with nothing of it left)
    # that no derived Kubernetes name fits: the import pins one, synth renders it.
    document = json.loads((REAL / "2i2c-infrastructure/state/2i2c-jetstream2.tfstate").read_text())
    long_name = "a" * 100
    for resource in document["resources"]:
        if resource["type"] == "openstack_containerinfra_cluster_v1":
            first = resource["instances"][0]
            first["attributes"]["name"] = long_name
            second = json.loads(json.dumps(first))
            second["index_key"], second["attributes"]["id"] = (
                1,
                "0e9c5a47-d4a4-4d0b-9d61-b1d0e6e4d1e1",
            )
            second["attributes"]["name"] = "A" * 100  # derives the same object name
            first["index_key"] = 0
            resource["instances"].append(second)
        if resource["type"] == "openstack_containerinfra_nodegroup_v1":
            attributes = resource["instances"][0]["attributes"]
            if attributes["name"] == "core":
                attributes["name"] = "user-m3_quad"  # derives user-m3-quad, as user-m3.quad
    nodegroups = [r for r in document["resources"] if r["type"].endswith("nodegroup_v1")]
    extra = json.loads(json.dumps(nodegroups[0]))
    extra["name"] = "odd"
    extra["instances"][0]["attributes"].update(
        name="---", id=extra["instances"][0]["attributes"]["cluster_id"] + "/7d0e"
    )
    document["resources"].append(extra)
    state = tmp_path / "names.tfstate"
    state.write_text(json.dumps(document))

    code, output = run_cli(fleet_copy, ["import", "tfstate", "--state", f"prod={state}"], capsys)

    assert code == 0, output
    suffix = lambda name: hashlib.sha256(name.encode()).hexdigest()[:8]  # noqa: E731
    cut = "a" * (63 - 9)
    assert (
        f"object name pinned to '{cut}-{suffix(long_name)}' (object_name=): the derived one "
        "has 100 characters (at most 63)" in output
    )
    assert f"object name pinned to '{cut}-{suffix('A' * 100)}'" in output
    assert (
        f"'user-m3-quad-{suffix('user-m3.quad')}' (object_name=): the derived "
        "'user-m3-quad' is taken by node group 'user-m3_quad'" in output
    )
    assert f"'nodegroup-{suffix('---')}' (object_name=): nothing is left" in output
    assert main(["--root", str(fleet_copy), "synth"]) == 0
    names = {
        doc["metadata"]["name"]: doc["spec"]["forProvider"]["name"]
        for path in (fleet_copy / "dist/prod/clusters").glob("*/*v1_containerinfra*.yaml")
        for doc in [yaml.safe_load(path.read_text())]
    }
    # Magnum's names byte for byte; every Kubernetes name a DNS-1123 label.
    assert names[f"{cut}-{suffix(long_name)}"] == long_name
    assert names[f"{cut}-{suffix('A' * 100)}"] == "A" * 100
    assert names[f"{cut}-{suffix(long_name)}-user-m3-quad"] == "user-m3_quad"
    assert names[f"{cut}-{suffix(long_name)}-user-m3-quad-{suffix('user-m3.quad')}"] == (
        "user-m3.quad"
    )
    assert names[f"{cut}-{suffix(long_name)}-nodegroup-{suffix('---')}"] == "---"
    # A re-import pins the same names.
    module = fleet_copy / "clusters" / "names.py"
    first = module.read_text()
    assert run_cli(fleet_copy, ["import", "tfstate", "--state", f"prod={state}"], capsys)[0] == 0
    assert module.read_text() == first


def test_a_value_the_configuration_no_longer_sets_is_kept_where_it_is_not_the_templates(
    fleet_copy: Path, tmp_path: Path
) -> None:
    # paws' k8s.tf leaves flavor to the template. A state whose cluster holds another
    # flavor than the template's was applied from an earlier configuration (Terraform plans
    # nothing when an Optional+Computed argument is removed): Magnum holds that flavor.
    document = json.loads((REAL / "paws/state/codfw1dev.tfstate").read_text())
    for resource in document["resources"]:
        if resource["type"] == "openstack_containerinfra_cluster_v1":
            attributes = resource["instances"][0]["attributes"]
            attributes["flavor"] = "g4.cores16.ram64.disk20"
            attributes["labels"] = {**attributes["labels"], "kube_tag": "v1.27.9-rancher1"}
    state = tmp_path / "codfw1dev.tfstate"
    state.write_text(json.dumps(document))
    options = StateOptions(states=[(state, "dev")], sources=[REAL / "paws/source/tofu"])
    (decl,) = plan_state_import(FleetConfig.load(fleet_copy), options).declarations
    keywords = decl.members[0].keywords
    assert keywords["flavor"] == "g4.cores16.ram64.disk20"
    assert keywords["labels"]["kube_tag"] == "v1.27.9-rancher1"
    assert "keypair" not in keywords  # equal to the template's: still left to it


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "zephyr-infrastructure/source/terraform",
            ": holds 2 Terraform configurations of Magnum clusters (cnx-zephyr-ci, "
            "cnx-zephyr-test), not <community>/<cluster>/terraform.tfvars: import the state of "
            "each instead, with its environment: `terraform state pull > cnx-zephyr-ci.tfstate "
            "&& fleet import tfstate --state ENV=cnx-zephyr-ci.tfstate --source "
            f"{REAL / 'zephyr-infrastructure/source/terraform/cnx-zephyr-ci'}`",
        ),
        (
            # envs/dev calls ../../modules/openstack/k8s-cluster: a module, not a root
            "ralgar-homelab-module/source/infra",
            ": holds 1 Terraform configuration of Magnum clusters (envs/dev), not",
        ),
        (
            "2i2c-infrastructure/source/terraform/openstack/projects",
            "/2i2c-jetstream2.tfvars:4: variable `notebook_nodes` is a map of 1 node group",
        ),
    ],
)
def test_tfvars_import_of_a_folder_above_the_configurations_names_them(
    path: str, message: str, fleet_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    given = REAL / path
    before = tree_hash(fleet_copy)
    code, output = run_cli(fleet_copy, ["import", "tfvars", str(given)], capsys)
    assert code == 2
    assert f"error: {given}{message}" in output
    assert tree_hash(fleet_copy) == before


def test_a_tainted_cluster_or_node_group_is_adopted_and_reported(
    fleet_copy: Path, tmp_path: Path
) -> None:
    # Tainted as hashicorp/terraform writes it: "status": "tainted" on a format 4 instance
    # (internal/states/statefile/version4.go), "tainted": true in show -json
    # (internal/command/jsonstate/state.go).
    document = json.loads((REAL / "ppouliot-magnum-clusters/state/terraform.tfstate").read_text())
    for resource in document["resources"]:
        if resource["type"] == "openstack_containerinfra_cluster_v1":
            resource["instances"][0]["status"] = "tainted"
    state = tmp_path / "tainted.tfstate"
    state.write_text(json.dumps(document))
    shown = json.loads((REAL / "zephyr-infrastructure/state/cnx-zephyr-test.show.json").read_text())
    groups = [
        r
        for r in shown["values"]["root_module"]["resources"]
        if r["type"] == "openstack_containerinfra_nodegroup_v1"
    ]
    groups[0]["tainted"] = True
    shown_state = tmp_path / "shown.json"
    shown_state.write_text(json.dumps(shown))
    config = FleetConfig.load(fleet_copy)
    report = "\n".join(
        plan_state_import(config, StateOptions(states=[(state, "dev")])).report
        + plan_state_import(config, StateOptions(states=[(shown_state, "test")])).report
    )
    tainted = "tainted in the state (Terraform would destroy and re-create it on its next apply)"
    assert f"cluster_1 (dev): {tainted}" in report
    assert f"node group {groups[0]['values']['name']!r}: {tainted}" in report
    assert report.count(tainted) == 2


def test_a_node_group_value_the_fleet_refuses_names_the_node_groups_address(
    fleet_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads((REAL / "2i2c-infrastructure/state/2i2c-jetstream2.tfstate").read_text())
    for resource in document["resources"]:
        if resource["type"] == "openstack_containerinfra_nodegroup_v1":
            attributes = resource["instances"][0]["attributes"]
            if attributes["name"] == "core":
                attributes["min_node_count"] = 9  # above its max_node_count, 5
    state = tmp_path / "bounds.tfstate"
    state.write_text(json.dumps(document))
    before = tree_hash(fleet_copy)
    code, output = run_cli(fleet_copy, ["import", "tfstate", "--state", f"prod={state}"], capsys)
    assert code == 2
    assert (
        f"error: {state} openstack_containerinfra_nodegroup_v1.core: min_node_count: "
        "min_node_count 9 is above max_node_count 5 (prod) (the import writes nothing)"
    ) in output
    assert tree_hash(fleet_copy) == before


def test_a_value_the_state_marks_sensitive_is_never_written(
    fleet_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Marks as hashicorp/terraform writes them: sensitive_attributes paths in a format 4
    # state (internal/states/statefile/version4.go), sensitive_values mirroring the values
    # in show -json (internal/command/jsonstate/state.go). The value looks like nothing.
    opaque = "c2VjcmV0LXZhbHVl"
    document = json.loads((REAL / "ppouliot-magnum-clusters/state/terraform.tfstate").read_text())
    for resource in document["resources"]:
        instance = resource["instances"][0]
        if resource["type"] == "openstack_containerinfra_cluster_v1":
            instance["attributes"]["labels"]["registry_auth"] = opaque
            instance["sensitive_attributes"] = [
                [
                    {"type": "get_attr", "value": "labels"},
                    {"type": "index", "value": {"value": "registry_auth", "type": "string"}},
                ]
            ]
    state = tmp_path / "marked.tfstate"
    state.write_text(json.dumps(document))
    before = tree_hash(fleet_copy)
    code, output = run_cli(
        fleet_copy, ["import", "tfstate", str(state), "--environment", "dev"], capsys
    )
    assert code == 2
    assert (
        f"error: {state} openstack_containerinfra_cluster_v1.cluster_1[0]: labels: holds "
        "credential material (the state marks it sensitive)"
    ) in output
    assert opaque not in output
    assert tree_hash(fleet_copy) == before

    shown = json.loads(
        (REAL / "2i2c-infrastructure/state/projectpythia-binder.show.json").read_text()
    )
    for resource in shown["values"]["root_module"]["resources"]:
        if resource["address"] == "openstack_containerinfra_nodegroup_v1.core":
            resource["values"]["labels"]["registry_auth"] = opaque
            resource["sensitive_values"] = {"labels": {"registry_auth": True}}
        if resource["type"] == "openstack_containerinfra_clustertemplate_v1":
            resource["values"]["insecure_registry"] = "registry.example.org:5000"
            resource["sensitive_values"] = {"insecure_registry": True, "labels": {}}
    shown_state = tmp_path / "marked.json"
    shown_state.write_text(json.dumps(shown))
    code, output = run_cli(
        fleet_copy, ["import", "tfstate", "--state", f"prod={shown_state}"], capsys
    )
    assert code == 2
    assert (
        f"error: {shown_state} openstack_containerinfra_nodegroup_v1.core: labels: holds "
        "credential material (the state marks it sensitive)"
    ) in output
    assert opaque not in output
    # A template attribute marked sensitive is left out, and said to be.
    for resource in shown["values"]["root_module"]["resources"]:
        if resource["address"] == "openstack_containerinfra_nodegroup_v1.core":
            del resource["values"]["labels"]["registry_auth"], resource["sensitive_values"]
    shown_state.write_text(json.dumps(shown))
    code, output = run_cli(
        fleet_copy, ["import", "tfstate", "--state", f"prod={shown_state}"], capsys
    )
    assert code == 0, output
    assert "insecure_registry hold(s) credential material or are marked sensitive" in output
    assert (
        "registry.example.org" not in (fleet_copy / "clusters/_imported_templates.py").read_text()
    )


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_a_state_written_by_windows_powershell_reads_as_the_same_state(
    encoding: str, fleet_copy: Path, tmp_path: Path
) -> None:
    # Windows PowerShell 5.1 writes `terraform show -json > state.json` as UTF-16 with a
    # byte order mark, and `Out-File -Encoding utf8` as UTF-8 with one.
    source = REAL / "paws/state/eqiad1.tfstate"
    written = tmp_path / "eqiad1.tfstate"
    written.write_bytes(source.read_text(encoding="utf-8").encode(encoding))
    config = FleetConfig.load(fleet_copy)
    plain = plan_state_import(config, StateOptions(states=[(source, "prod")]))
    marked = plan_state_import(config, StateOptions(states=[(written, "prod")]))
    assert marked.files == plain.files  # the module names the state by its file name only


def autoscaled_state(tmp_path: Path, labels: dict[str, str]) -> Path:
    """ppouliot's state with its cluster's labels (merge_labels) replaced."""
    document = json.loads((REAL / "ppouliot-magnum-clusters/state/terraform.tfstate").read_text())
    for resource in document["resources"]:
        if resource["type"] == "openstack_containerinfra_cluster_v1":
            attributes = resource["instances"][0]["attributes"]
            attributes["labels"], attributes["merge_labels"] = labels, True
    path = tmp_path / "autoscaled.tfstate"
    path.write_text(json.dumps(document))
    return path


def test_an_autoscaled_cluster_under_ignore_changes_imports_its_bounds(
    fleet_copy: Path, tmp_path: Path
) -> None:
    # The common shape: the autoscaler on by labels, node_count under ignore_changes. The
    # bounds became labels MagnumCluster refuses (the import failed) when ignore_changes
    # had made node_count create-only.
    source = tmp_path / "source"
    shutil.copytree(REAL / "ppouliot-magnum-clusters/source", source)
    main_tf = source / "main.tf"
    main_tf.write_text(
        main_tf.read_text().replace(
            "  master_count        = var.master_count\n}",
            "  master_count        = var.master_count\n"
            '  labels              = { auto_scaling_enabled = "true", min_node_count = "1", '
            'max_node_count = "5" }\n'
            "  merge_labels        = true\n"
            "  lifecycle {\n    ignore_changes = [node_count]\n  }\n}",
        )
    )
    labels = {"auto_scaling_enabled": "true", "min_node_count": "1", "max_node_count": "5"}
    state = autoscaled_state(tmp_path, labels)
    options = StateOptions(states=[(state, "dev")], sources=[source])
    (decl,) = plan_state_import(FleetConfig.load(fleet_copy), options).declarations
    keywords = decl.members[0].keywords
    assert (keywords["min_node_count"], keywords["max_node_count"]) == (1, 5)
    assert keywords["labels"] == {"auto_scaling_enabled": "true"}
    assert keywords["create_only"] == ["node_count"]


@pytest.mark.parametrize(
    ("labels", "shown"),
    [
        ({"auto_scaling_enabled": "true", "max_node_count": "5"}, "max_node_count='5'"),
        (
            {"auto_scaling_enabled": "false", "min_node_count": "1", "max_node_count": "5"},
            "min_node_count='1', max_node_count='5'",
        ),
    ],
)
def test_autoscaler_bounds_the_fleet_cannot_declare_are_refused_by_their_shape(
    labels: dict[str, str],
    shown: str,
    fleet_copy: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    state = autoscaled_state(tmp_path, labels)
    before = tree_hash(fleet_copy)
    code, output = run_cli(
        fleet_copy, ["import", "tfstate", str(state), "--environment", "dev"], capsys
    )
    assert code == 2
    errors = [line for line in output.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: {state} openstack_containerinfra_cluster_v1.cluster_1[0]: labels: holds "
        f"{shown} with auto_scaling_enabled={labels['auto_scaling_enabled']!r}: MagnumCluster "
        "writes these labels only from min_node_count and max_node_count, both whole numbers, "
        "with the autoscaler on, so it cannot declare this cluster as Magnum holds it (its "
        "labels are ForceNew); leave its state out of the import"
    ]
    assert tree_hash(fleet_copy) == before
