"""A Terraform migration into an existing fleet: community by community, merged across
environments, adopted by the UUIDs of the Terraform state, every value carried over.

The fixtures (tests/fixtures/migration/) are two communities: ``edh`` adds clusters to the
project the example fleet declares (JEEDY EDH), ``data`` brings its own project; their
states are a ``terraform.tfstate`` (format 4) and ``terraform show -json`` output, with
made-up UUIDs (the template ones are those of the example catalog).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from import_support import ImportOptions, plan_import, verify
from support import HYBRID, tree_hash

from fleet import Fleet, FleetConfig, MagnumCluster, NodeGroup, OpenStackProject
from fleet.checks.crds import PACKAGED_CRDS, read_crd_file
from fleet.cli.main import main
from fleet.clouds.magnum.importer.tfvars_state import load_state
from fleet.clouds.magnum.template import ClusterTemplate
from fleet.core.errors import DefinitionError, DefinitionErrors

MIGRATION = Path(__file__).parent / "fixtures" / "migration"
EDH, DATA = MIGRATION / "tfvars" / "edh", MIGRATION / "tfvars" / "data"
EDH_STATE, DATA_STATE = MIGRATION / "state" / "edh.tfstate", MIGRATION / "state" / "data.json"
OLD_FIXTURES = Path(__file__).parent / "fixtures" / "tfvars"
CRDS = PACKAGED_CRDS
ProjectFactory = Callable[[dict[str, str]], Path]


def fleet(root: Path, *args: str) -> int:
    return main(["--root", str(root), *args])


def state_attributes(path: Path) -> dict[str, dict[str, Any]]:
    """Resource attributes of a fixture state by ``name`` (clusters) or ``id`` (node groups),
    read straight from the JSON, not through the importer."""
    document = json.loads(path.read_text())
    found: dict[str, dict[str, Any]] = {}

    def add(attributes: dict[str, Any]) -> None:
        found[attributes.get("name") if "cluster_id" not in attributes else attributes["id"]] = (
            attributes
        )

    for resource in document.get("resources", []):
        for instance in resource["instances"]:
            add(instance["attributes"])

    def walk(module: dict[str, Any]) -> None:
        for resource in module.get("resources", []):
            add(resource["values"])
        for child in module.get("child_modules", []):
            walk(child)

    if "values" in document:
        walk(document["values"]["root_module"])
    return found


def rendered(root: Path, env: str, kind: str, name: str) -> dict[str, Any]:
    path = next((root / "dist" / env).rglob(f"{kind.lower()}_*_{name}.yaml"))
    body: dict[str, Any] = yaml.safe_load(path.read_text())
    return body


# --- the whole migration ------------------------------------------------------------------------


def test_two_communities_one_after_the_other_into_the_example_fleet(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """provider-openstack's config/external_name.go maps openstack_containerinfra_cluster_v1
    and _nodegroup_v1 to config.IdentifierFromProvider: the external name is Terraform's id,
    the Magnum UUID for a cluster and ``<cluster id>/<node group id>`` for a node group
    (terraform-provider-openstack, resource_openstack_containerinfra_nodegroup_v1.go, SetId)."""
    root = example_project
    assert fleet(root, "import", "tfstate", str(EDH_STATE), "--tfvars", str(EDH), "--verify") == 0
    first = capsys.readouterr().out
    assert fleet(root, "import", "tfvars", str(DATA), "--state", str(DATA_STATE), "--verify") == 0
    second = capsys.readouterr().out
    assert fleet(root, "synth") == 0

    # The project the fleet declares is reused, and the report says where it is.
    edh = (root / "clusters" / "edh.py").read_text()
    assert 'jeedy_edh = fleet.declaration("jeedy-edh", OpenStackProject)' in edh
    assert "OpenStackProject(" not in edh
    assert "reuses project 'jeedy-edh' (clusters/jeedy_edh.py:" in first
    # Three environments, one declaration; the prod-only archive on its own.
    assert edh.count("MagnumCluster(") == 2
    assert 'name="k8s-edh-search-{env}-v25"' in edh
    assert "merged as 'k8s-edh-search-v25' with test, prod" in first
    data = (root / "clusters" / "data.py").read_text()
    assert data.count("MagnumCluster(") == 1 and "OpenStackProject(" in data
    assert "imported and verified 2 clusters as 1 declaration" in second

    edh_state, data_state = state_attributes(EDH_STATE), state_attributes(DATA_STATE)
    for env in ("dev", "test", "prod"):
        name = f"k8s-edh-search-{env}-v25"
        cluster = rendered(root, env, "ClusterV1", name)
        uuid = edh_state[name]["id"]
        assert cluster["metadata"]["annotations"]["crossplane.io/external-name"] == uuid
        for_provider = cluster["spec"]["forProvider"]
        assert for_provider["name"] == name  # adopted by UUID, the name stays the name
        assert for_provider["flavor"] == edh_state[name]["flavor"]
        assert for_provider["dockerVolumeSize"] == 50
        assert for_provider["floatingIpEnabled"] is False
        assert for_provider["masterLbEnabled"] is (env == "prod")
        group = rendered(root, env, "NodegroupV1", f"{name}-workers")
        group_id = next(
            a["id"]
            for a in edh_state.values()
            if a.get("cluster_id") == uuid and a["name"] == "workers"
        )
        assert group["metadata"]["annotations"]["crossplane.io/external-name"] == group_id
        assert group["spec"]["forProvider"]["clusterId"] == uuid
        assert group["spec"]["forProvider"]["role"] == "worker"
        assert group["spec"]["forProvider"]["dockerVolumeSize"] == 100
    lake = rendered(root, "prod", "ClusterV1", "k8s-data-lake-prod-multi-v25")
    assert (
        lake["metadata"]["annotations"]["crossplane.io/external-name"]
        == (data_state["k8s-data-lake-prod-multi-v25"]["id"])
    )
    archive = rendered(root, "prod", "ClusterV1", "k8s-edh-archive-prod-v25")["spec"]["forProvider"]
    assert (archive["fixedNetwork"], archive["fixedSubnet"]) == (
        "edh-archive-net",
        "edh-archive-subnet",
    )


def test_a_second_import_of_a_community_replaces_its_module_only(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = example_project
    assert fleet(root, "import", "tfvars", str(EDH), "--derive-templates") == 0
    first = tree_hash(root / "clusters")
    assert fleet(root, "import", "tfvars", str(EDH), "--derive-templates", "--verify") == 0
    assert tree_hash(root / "clusters") == first
    assert "edh.py" in {Path(p).name for p in first}


def test_merging_shrinks_the_generated_code(
    example_project: Path, make_project: ProjectFactory, tmp_path: Path
) -> None:
    """The same clusters, each environment on its own (``--environment`` turns off merging)
    and merged: fewer MagnumClusters and fewer lines, with every value verified both ways."""
    config = FleetConfig.load(example_project)
    merged = plan_import(config, ImportOptions(paths=[EDH]))
    assert verify(config, merged) == []
    singles = [
        plan_import(config, ImportOptions(paths=[EDH / f"k8s-edh-search-{e}-v25"], environment=e))
        for e in ("dev", "test", "prod")
    ]
    for result in singles:
        assert verify(config, result) == []
    text = next(iter(merged.files.values()))
    single_lines = sum(len(next(iter(r.files.values())).splitlines()) for r in singles)
    assert text.count("MagnumCluster(") == 2
    assert sum(next(iter(r.files.values())).count("MagnumCluster(") for r in singles) == 3
    assert len(text.splitlines()) < single_lines


def test_clusters_that_differ_beyond_environment_values_stay_apart(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    # The seed's dev and prod batch clusters differ in create_timeout: not per environment.
    root = make_project({})
    files = [str(p) for p in sorted((OLD_FIXTURES / "ais").glob("*batch*/terraform.tfvars"))]
    uuid = "--template-uuid=kubernetes-1.25.3-3-multi=0b6f3c52-7a1e-4d8b-9c2f-5e4a3b2c1d01"
    assert fleet(root, "import", "tfvars", *files, "--derive-templates", uuid, "--verify") == 0
    out = capsys.readouterr().out
    assert "not merged across environments: create_timeout differs" in out
    assert (root / "clusters" / "ais.py").read_text().count("MagnumCluster(") == 2


# --- existing declarations --------------------------------------------------------------------


def test_fails_reimporting_a_cluster_the_fleet_declares_naming_its_file(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = example_project
    before = tree_hash(root)
    assert fleet(root, "import", "tfvars", str(OLD_FIXTURES / "ais")) == 2
    err = capsys.readouterr().err
    match = re.search(
        r"cluster 'k8s-ais-web-test-v25' \(test\) is already declared at "
        r"(clusters/jeedy_ais\.py):(\d+) \(ais-web\)",
        err,
    )
    assert match, err
    lines = (root / match.group(1)).read_text().splitlines()
    line = int(match.group(2))
    assert "MagnumCluster(" in lines[line - 1] and '"ais-web"' in lines[line + 1]
    assert tree_hash(root) == before


def project_fleet(make_project: ProjectFactory, project: str) -> Path:
    """A fleet whose ``z_projects.py`` declares one OpenStackProject."""
    return make_project(
        {
            "clusters/_templates.py": (HYBRID / "clusters" / "_templates.py").read_text(),
            "clusters/z_projects.py": f"""
                from fleet import Fleet, OpenStackProject


                def define(fleet: Fleet) -> None:
                    {project}
            """,
        }
    )


def test_a_project_value_the_fleet_lacks_is_left_to_a_person(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project_fleet(
        make_project, 'OpenStackProject(fleet, "edh", project_name="JEEDY DATA", region="cern")'
    )
    assert fleet(root, "import", "tfvars", str(DATA), "--verify") == 0
    out = capsys.readouterr().out
    assert "reuses project 'edh' (clusters/z_projects.py:6)" in out
    assert (
        "needs a person: auth_url = 'https://keystone.cern.ch/v3' is not declared on project 'edh'"
        in out
    )
    # Named after its community, though it sorts before the module that declares the
    # project: the project is looked up by reference, resolved after every define().
    assert (root / "clusters" / "data.py").is_file()
    assert fleet(root, "synth") == 0


def test_an_out_module_that_sorts_before_the_reused_project_is_accepted(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project_fleet(
        make_project, 'OpenStackProject(fleet, "edh", project_name="JEEDY DATA", region="cern")'
    )
    out = root / "clusters" / "a_first.py"
    assert fleet(root, "import", "tfvars", str(DATA), "--out", str(out), "--verify") == 0
    assert "reuses project 'edh' (clusters/z_projects.py:6)" in capsys.readouterr().out
    assert 'jeedy_data = fleet.declaration("edh", OpenStackProject)' in out.read_text()
    assert fleet(root, "synth") == 0
    provider_config = rendered(root, "dev", "ProviderConfig", "edh")
    assert provider_config["metadata"]["annotations"]["fleet.openstack/project-name"] == (
        "JEEDY DATA"
    )
    cluster = rendered(root, "dev", "ClusterV1", "k8s-data-lake-dev-multi-v25")
    assert cluster["spec"]["providerConfigRef"] == {"name": "edh"}


def test_fails_project_that_matches_but_disagrees(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project_fleet(
        make_project,
        'OpenStackProject(fleet, "data", project_name="JEEDY DATA", region="cern", '
        'interface="internal")',
    )
    before = tree_hash(root)
    assert fleet(root, "import", "tfvars", str(DATA)) == 2
    err = capsys.readouterr().err
    assert (
        f"{DATA}/k8s-data-lake-dev-multi-v25/terraform.tfvars:4: interface: has 'public', the "
        "project 'data' it matches by project name and region (clusters/z_projects.py:6) has "
        "'internal'"
    ) in err
    assert tree_hash(root) == before


def test_fails_project_id_taken_by_another_project(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project_fleet(
        make_project, 'OpenStackProject(fleet, "jeedy-data", project_name="OTHER", region="cern")'
    )
    assert fleet(root, "import", "tfvars", str(DATA)) == 2
    assert "would be declared as 'jeedy-data', which clusters/z_projects.py:6" in (
        capsys.readouterr().err
    )


# --- Terraform state ----------------------------------------------------------------------------


def test_both_state_formats_are_read_with_their_addresses() -> None:
    state = load_state([EDH_STATE, DATA_STATE])
    search = state.clusters["k8s-edh-search-prod-v25"]
    assert search.address == (
        'module.cluster["k8s-edh-search-prod-v25"].openstack_containerinfra_cluster_v1.cluster'
    )
    lake = state.clusters["k8s-data-lake-dev-multi-v25"]
    assert lake.address == 'module.lake["dev"].openstack_containerinfra_cluster_v1.cluster'
    expected = state_attributes(DATA_STATE)["k8s-data-lake-dev-multi-v25"]["id"]
    assert lake.attributes["id"] == expected
    group = state.node_group(expected, "zone-b")
    assert group is not None and group.address.endswith('nodegroup_v1.nodegroup["zone-b"]')
    assert {t.attributes["name"] for t in state.templates.values()} == {
        "kubernetes-1.25.3-3",
        "kubernetes-1.25.3-3-multi",
    }


def edited_state(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    document = json.loads(EDH_STATE.read_text())
    edit(document)
    path = tmp_path / "edited.tfstate"
    path.write_text(json.dumps(document))
    return path


def cluster_attributes(document: dict[str, Any], name: str) -> dict[str, Any]:
    return next(
        i["attributes"]
        for r in document["resources"]
        for i in r["instances"]
        if i["attributes"].get("name") == name and "cluster_id" not in i["attributes"]
    )


def test_fails_state_and_tfvars_that_disagree(
    example_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def edit(document: dict[str, Any]) -> None:
        cluster_attributes(document, "k8s-edh-search-prod-v25")["node_count"] = 5

    state = edited_state(tmp_path, edit)
    before = tree_hash(example_project)
    assert fleet(example_project, "import", "tfstate", str(state), "--tfvars", str(EDH)) == 2
    err = capsys.readouterr().err
    assert (
        f"{EDH}/k8s-edh-search-prod-v25/terraform.tfvars:12: node_count: tfvars has 3, the state "
        f'has node_count = 5 at {state} module.cluster["k8s-edh-search-prod-v25"]'
        ".openstack_containerinfra_cluster_v1.cluster"
    ) in err
    assert tree_hash(example_project) == before


def test_fails_template_with_two_ids_in_one_region(
    example_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = "0b6f3c52-7a1e-4d8b-9c2f-5e4a3b2c1dff"

    def edit(document: dict[str, Any]) -> None:
        cluster_attributes(document, "k8s-edh-search-test-v25")["cluster_template_id"] = other

    state = edited_state(tmp_path, edit)
    assert fleet(example_project, "import", "tfstate", str(state), "--tfvars", str(EDH)) == 2
    err = capsys.readouterr().err
    assert "cluster_template_name: template 'kubernetes-1.25.3-3' is " in err
    assert f"but {other} at {state}" in err


def test_a_cluster_missing_from_the_state_is_adopted_by_name_and_reported(
    example_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def edit(document: dict[str, Any]) -> None:
        document["resources"] = [
            r for r in document["resources"] if "archive" not in r.get("module", "")
        ]

    state = edited_state(tmp_path, edit)
    assert fleet(example_project, "import", "tfvars", str(EDH), "--state", str(state)) == 0
    out = capsys.readouterr().out
    assert "k8s-edh-archive-prod-v25 (prod): needs a person: not in the Terraform state" in out


def test_derived_templates_carry_the_uuids_of_the_state(make_project: ProjectFactory) -> None:
    root = make_project({})
    assert (
        fleet(root, "import", "tfvars", str(EDH), "--state", str(EDH_STATE), "--derive-templates")
        == 0
    )
    source = (root / "clusters" / "_imported_templates.py").read_text()
    uuid = state_attributes(EDH_STATE)["kubernetes-1.25.3-3"]["id"]
    assert f'uuid={{"cern": "{uuid}"}}' in source


def test_template_uuid_given_twice_must_agree_with_the_state(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both sources of a derived template's UUID, ``--template-uuid`` and the state: the
    same id is accepted, a different one is an error naming both, and nothing is written."""
    uuid = state_attributes(EDH_STATE)["kubernetes-1.25.3-3"]["id"]
    args = ("import", "tfvars", str(EDH), "--state", str(EDH_STATE), "--derive-templates")
    root = make_project({})
    before = tree_hash(root)
    wrong = "0b6f3c52-7a1e-4d8b-9c2f-5e4a3b2c1dff"
    assert fleet(root, *args, f"--template-uuid=kubernetes-1.25.3-3={wrong}") == 2
    err = capsys.readouterr().err
    assert f"--template-uuid kubernetes-1.25.3-3={wrong} differs from the Terraform state" in err
    assert uuid in err and "Traceback" not in err
    assert tree_hash(root) == before
    assert fleet(root, *args, f"--template-uuid=kubernetes-1.25.3-3={uuid}") == 0
    source = (root / "clusters" / "_imported_templates.py").read_text()
    assert f'uuid={{"cern": "{uuid}"}}' in source


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not JSON"),
        (
            '{"version": 3, "resources": []}',
            "state format version 3 (Terraform 0.11 or older) is not",
        ),
        ('{"values": {}}', "neither a Terraform state"),
    ],
)
def test_fails_unreadable_state(
    example_project: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    text: str,
    message: str,
) -> None:
    state = tmp_path / "bad.tfstate"
    state.write_text(text)
    assert fleet(example_project, "import", "tfstate", str(state), "--tfvars", str(EDH)) == 2
    err = capsys.readouterr().err
    assert f"error: {state}" in err and message in err
    assert "Traceback" not in err


# --- the arguments ClusterV1 and NodegroupV1 have -------------------------------------------


def crd_fields(kind: str) -> set[str]:
    name = f"containerinfra.openstack.crossplane.io_{kind.lower()}s.yaml"
    crd = yaml.safe_load(read_crd_file(CRDS / "provider-openstack" / f"{name}.gz"))
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return set(schema["properties"]["spec"]["properties"]["forProvider"]["properties"])


def magnum_fleet(make_project: ProjectFactory, **cluster: Any) -> tuple[Fleet, MagnumCluster]:
    root = make_project({})
    fleet_ = Fleet(FleetConfig.load(root))
    project = OpenStackProject(fleet_, "p", project_name="P")
    template = ClusterTemplate(
        name="t", kubernetes_version="v1.25.3", uuid="0b6f3c52-7a1e-4d8b-9c2f-5e4a3b2c1d03"
    )
    made = MagnumCluster(
        fleet_,
        "c",
        name="c-{env}",
        environments=["dev", "prod"],
        project=project,
        template=template,
        flavor="m2.large",
        keypair="k",
        node_count=1,
        **cluster,
    )
    return fleet_, made


def test_every_optional_argument_renders_into_a_field_the_crd_has(
    make_project: ProjectFactory,
) -> None:
    """crossplane-contrib/provider-openstack's ClusterV1 and NodegroupV1 CRDs
    (package/crds/containerinfra.openstack.crossplane.io_{clusterv1s,nodegroupv1s}.yaml)."""
    from fleet import per_env

    _, cluster = magnum_fleet(
        make_project,
        docker_volume_size_gb=50,
        floating_ip_enabled=False,
        master_lb_enabled=per_env(dev=False, prod=True),
        fixed_network="net",
        fixed_subnet="subnet",
        discovery_url="https://discovery.etcd.io/x",
        openstack_region="cern",
        node_groups=[
            NodeGroup(
                name="g", flavor="f", node_count=1, docker_volume_size_gb=80, image_id="i", role="r"
            )
        ],
    )
    dev, group = (m.body for m in cluster.render("dev"))
    prod = cluster.render("prod")[0].body
    extra = {
        "discoveryUrl": "https://discovery.etcd.io/x",
        "dockerVolumeSize": 50,
        "fixedNetwork": "net",
        "fixedSubnet": "subnet",
        "floatingIpEnabled": False,
        "masterLbEnabled": False,
        "region": "cern",
    }
    assert {k: dev["spec"]["forProvider"][k] for k in extra} == extra
    assert prod["spec"]["forProvider"]["masterLbEnabled"] is True
    assert set(extra) <= crd_fields("ClusterV1")
    group_extra = {"dockerVolumeSize": 80, "imageId": "i", "role": "r"}
    assert {k: group["spec"]["forProvider"][k] for k in group_extra} == group_extra
    assert set(group_extra) <= crd_fields("NodegroupV1")
    # Left out, nothing is rendered: Magnum's (or the template's) value applies.
    _, plain = magnum_fleet(
        make_project, node_groups=[NodeGroup(name="g", flavor="f", node_count=1)]
    )
    plain_dev, plain_group = (m.body for m in plain.render("dev"))
    assert not set(extra) & set(plain_dev["spec"]["forProvider"])
    assert not set(group_extra) & set(plain_group["spec"]["forProvider"])


@pytest.mark.parametrize(
    ("arguments", "field", "message"),
    [
        ({"docker_volume_size_gb": "50"}, "docker_volume_size_gb", "must be an integer"),
        ({"docker_volume_size_gb": 0}, "docker_volume_size_gb", "must be 1 or more"),
        ({"floating_ip_enabled": "yes"}, "floating_ip_enabled", "must be True or False"),
        ({"fixed_network": ""}, "fixed_network", "must be a non-empty string"),
    ],
)
def test_fails_optional_argument_of_the_wrong_type(
    make_project: ProjectFactory, arguments: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(DefinitionError) as caught:
        magnum_fleet(make_project, **arguments)
    assert caught.value.field == field
    assert message in caught.value.message
    assert "test_migration.py:" in caught.value.where


def test_fails_node_group_option_of_the_wrong_type() -> None:
    with pytest.raises(DefinitionError) as caught:
        NodeGroup(name="g", flavor="f", node_count=1, docker_volume_size_gb=True)  # type: ignore[arg-type]
    assert caught.value.field == "docker_volume_size_gb"


def test_tfvars_options_are_converted_and_verified(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    source = (EDH / "k8s-edh-search-dev-v25" / "terraform.tfvars").read_text()
    path = tmp_path / "in" / "edh" / "k8s-edh-search-dev-v25" / "terraform.tfvars"
    path.parent.mkdir(parents=True)
    path.write_text(source.replace('docker_volume_size = "50"', 'docker_volume_size = "5x"'))
    root = make_project(
        {"clusters/_templates.py": (HYBRID / "clusters" / "_templates.py").read_text()}
    )
    with pytest.raises(DefinitionErrors) as caught:
        plan_import(FleetConfig.load(root), ImportOptions(paths=[path]))
    (error,) = caught.value.errors
    assert (error.where, error.field) == (f"{path}:13", "docker_volume_size")
    assert error.message == "must be a whole number, got '5x'"


def test_verify_reads_a_template_named_by_uuid(example_project: Path) -> None:
    """A ClusterV1 names its template by UUID and keeps the name in an annotation: verify
    wants the state's UUID in clusterTemplateId and the tfvars name in the annotation."""
    from fleet.clouds.magnum.importer.tfvars_verify import check_cluster
    from fleet.clouds.magnum.render import TEMPLATE_NAME
    from fleet.importers.files import write_files
    from fleet.pipeline.discovery import load_fleet

    config = FleetConfig.load(example_project)
    result = plan_import(config, ImportOptions(paths=[EDH], states=[EDH_STATE]))
    write_files(result.files, config)
    decl = next(d for d in result.clusters if d.cluster.name == "k8s-edh-search-prod-v25")
    cluster = next(
        d
        for d in load_fleet(config).declarations()
        if isinstance(d, MagnumCluster) and d.construct_id == "k8s-edh-search-v25"
    )
    manifests = [*cluster.render("prod"), *cluster.project.render("prod")]
    objects = {(m.kind, m.name): m for m in manifests}
    body = objects[("ClusterV1", decl.cluster.name)].body
    uuid = state_attributes(EDH_STATE)["kubernetes-1.25.3-3"]["id"]
    assert decl.template_uuid == uuid
    assert body["spec"]["forProvider"]["clusterTemplateId"] == uuid
    assert body["metadata"]["annotations"][TEMPLATE_NAME] == "kubernetes-1.25.3-3"
    assert check_cluster(decl, objects, observe=False) == []
    body["spec"]["forProvider"]["clusterTemplateId"] = "0b6f3c52-7a1e-4d8b-9c2f-5e4a3b2c1dff"
    body["metadata"]["annotations"][TEMPLATE_NAME] = "kubernetes-1.25.3-3-multi"
    problems = [p.line() for p in check_cluster(decl, objects, observe=False)]
    assert len(problems) == 2
    assert f"tfvars has {uuid!r}" in problems[0]
    assert "annotation fleet.openstack/cluster-template" in problems[1]


def test_a_project_value_with_a_password_is_left_to_a_person_without_showing_it(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project_fleet(
        make_project, 'OpenStackProject(fleet, "edh", project_name="JEEDY DATA", region="cern")'
    )
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    for path in data.glob("*/terraform.tfvars"):
        path.write_text(
            path.read_text().replace(
                "https://keystone.cern.ch/v3", "https://admin:hunter2-FAKE@keystone.cern.ch/v3"
            )
        )
    assert fleet(root, "import", "tfvars", str(data)) == 0
    out = capsys.readouterr().out
    assert "hunter2-FAKE" not in out
    assert (
        "needs a person: auth_url holds credential material (not shown) and is not declared on "
        "project 'edh' (clusters/z_projects.py:6); add auth_url= there without it" in out
    )
    assert "hunter2-FAKE" not in (root / "clusters" / "data.py").read_text()


def test_a_template_uuid_that_contradicts_the_fleets_template_is_refused_not_ignored(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    # The catalog's template is used as declared: a --template-uuid saying otherwise was
    # silently dropped.
    root = project_fleet(
        make_project, 'OpenStackProject(fleet, "edh", project_name="JEEDY DATA", region="cern")'
    )
    before = tree_hash(root / "clusters")
    given = "kubernetes-1.25.3-3-multi=0e9c5a47-d4a4-4d0b-9d61-b1d0e6e4d1e1"
    assert fleet(root, "import", "tfvars", str(DATA), "--template-uuid", given) == 2
    err = capsys.readouterr().err
    assert re.search(
        r"^error: --template-uuid: kubernetes-1\.25\.3-3-multi=0e9c5a47-d4a4-4d0b-9d61-"
        r"b1d0e6e4d1e1: the fleet declares template 'kubernetes-1\.25\.3-3-multi' "
        r"\(clusters/_templates\.py:\d+\) with uuid 0b6f3c52-7a1e-4d8b-9c2f-5e4a3b2c1d01, which "
        r"its clusters use: correct one of them$",
        err,
        re.M,
    ), err
    assert tree_hash(root / "clusters") == before
    # The same UUID, or one for a template no cluster here uses: accepted.
    agreeing = "kubernetes-1.25.3-3-multi=0b6f3c52-7a1e-4d8b-9c2f-5e4a3b2c1d01"
    other = "kubernetes-9=0e9c5a47-d4a4-4d0b-9d61-b1d0e6e4d1e1"
    args = ("--template-uuid", agreeing, "--template-uuid", other)
    assert fleet(root, "import", "tfvars", str(DATA), *args) == 0
