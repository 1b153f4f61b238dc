"""`fleet import tfvars`: parsing, template derivation, generated code, fidelity, bad input."""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import PYPROJECT
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from import_support import ImportOptions, plan_import, verify
from support import HYBRID, REPO, tree_hash
from syrupy.assertion import SnapshotAssertion

from fleet import FleetConfig, MagnumCluster
from fleet.cli.main import main
from fleet.clouds.magnum.importer.code import statement
from fleet.clouds.magnum.importer.template_derivation import (
    TemplateSpec,
    derive_template,
    kubernetes_version,
)
from fleet.clouds.magnum.importer.tfvars import TFVARS_NAME, find_tfvars, load_cluster
from fleet.clouds.magnum.template import PLACEHOLDER
from fleet.codegen.layout import GENERATED
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.pysource import py_str
from fleet.core.secrets import credential_in, is_credential_field
from fleet.importers.fleet_view import project_modules
from fleet.pipeline.discovery import load_fleet
from fleet.pipeline.yaml_canonical import to_yaml
from fleet.terraform.tfvars import decode_string, encode_string, read_tfvars

FIXTURES = Path(__file__).parent / "fixtures" / "tfvars"

FIGURE_10 = FIXTURES / "ais" / "k8s-ais-batch-dev-multi-v25" / "terraform.tfvars"
ALL_FIXTURES = sorted(FIXTURES.glob("*/*/terraform.tfvars"))
RUFF = Path(sys.executable).parent / "ruff"
ProjectFactory = Callable[[dict[str, str]], Path]
UUIDS = {
    "kubernetes-1.25.3-3": "0b6f3c52-7a1e-4d8b-9c2f-5e4a3b2c1d02",
    "kubernetes-1.25.3-3-multi": "0b6f3c52-7a1e-4d8b-9c2f-5e4a3b2c1d01",
}
"""The example catalog's (made-up) template UUIDs: tfvars do not hold them."""
DERIVE = ("--derive-templates", *(f"--template-uuid={n}={u}" for n, u in UUIDS.items()))


def project(make_project: ProjectFactory, *, catalog: bool = False) -> Path:
    """A minimal project; with ``catalog``, a copy of the example fleet's templates."""
    files = {"clusters/_templates.py": (HYBRID / "clusters" / "_templates.py").read_text()}
    return make_project(files if catalog else {})


def run(root: Path, *args: str) -> int:
    return main(["--root", str(root), "import", "tfvars", *args])


def tfvars(tmp_path: Path, text: str, *, community: str = "ais", cluster: str = "c") -> Path:
    """A tfvars file at ``<tmp>/in/<community>/<cluster>/terraform.tfvars``."""
    path = tmp_path / "in" / community / cluster / "terraform.tfvars"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


MINIMAL = """\
    project_name = "JEEDY AIS"
    keypair = "k"
    cluster_name = "k8s-x-dev"
    cluster_template_name = "kubernetes-1.25.3-3"
    flavor = "m2.large"
    node_count = "1"
    labels = { "availability_zone" : "cern-geneva-a" }
"""


def ruff_ok(*paths: Path) -> None:
    config = ["--config", str(REPO / "pyproject.toml")]
    for command in (["check", "--no-cache"], ["format", "--check", "--no-cache"]):
        done = subprocess.run(
            [str(RUFF), *command, *config, *map(str, paths)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr


# --- parsing ----------------------------------------------------------------------------------


def test_figure_10_becomes_the_model() -> None:
    cluster = load_cluster(FIGURE_10, community="ais")
    assert (cluster.name, cluster.template, cluster.community) == (
        "k8s-ais-batch-dev-multi-v25",
        "kubernetes-1.25.3-3-multi",
        "ais",
    )
    assert (cluster.flavor, cluster.master_flavor, cluster.keypair) == (
        "m2.xlarge",
        "m2.xlarge",
        "<keypair>",
    )
    assert (cluster.node_count, cluster.master_count, cluster.create_timeout_minutes) == (1, 1, 60)
    assert [
        (g.name, g.flavor, g.node_count, g.merge_labels, dict(g.labels))
        for g in cluster.node_groups
    ] == [
        ("zone-a-xlarge", "m2.xlarge", 1, True, {"availability_zone": "cern-geneva-a"}),
        ("zone-b-xlarge", "m2.xlarge", 2, True, {"availability_zone": "cern-geneva-b"}),
        ("zone-c-xlarge", "m2.xlarge", 2, True, {"availability_zone": "cern-geneva-c"}),
    ]
    templates: dict[str, Any] = {}
    exec((HYBRID / "clusters" / "_templates.py").read_text(), templates)  # the seed's labels
    assert cluster.labels == templates["_BASE_1_25_3"]
    assert cluster.connection.provider_config_name == "jeedy-ais"
    assert (cluster.connection.auth_url, cluster.connection.region) == ("<auth_url>", "cern")
    assert cluster.unmapped == ()


def test_a_folder_is_walked_like_the_seed_and_a_file_names_its_community() -> None:
    found = find_tfvars([FIXTURES, FIGURE_10])
    assert [(p.parent.name, c) for p, c in found] == [
        ("k8s-ais-batch-dev-multi-v25", "ais"),
        ("k8s-ais-batch-prod-multi-v25", "ais"),
        ("k8s-ais-web-test-v25", "ais"),
        ("k8s-edh-app-prod-multi-v25", "edh"),
        ("k8s-edh-dev-v25", "edh"),
        ("k8s-edh-reports-test-v25", "edh"),
    ]


@pytest.mark.parametrize(
    ("source", "value"),
    [
        (r'"a\"b"', 'a"b'),
        (r'"back\\slash"', "back\\slash"),
        (r'"new\nline\ttab"', "new\nline\ttab"),
        ('"$${literal} %%{x}"', "${literal} %{x}"),
        ('"# not a comment"', "# not a comment"),
        (r'"\u00e9 \U0001F600 é"', "\u00e9 \U0001f600 é"),
        ('"$$x $ {"', "$$x $ {"),
    ],
)
def test_strings_decode_as_terraform_does(source: str, value: str) -> None:
    assert decode_string(source, where="f", field="k") == value
    assert decode_string(encode_string(value), where="f", field="k") == value


def test_literal_template_escapes_without_a_closing_brace_read_as_terraform_does(
    tmp_path: Path,
) -> None:
    """python-hcl2 8.1.4 reads ``$${`` only when a ``}`` follows (its lark grammar's
    ESCAPED_INTERPOLATION is ``\\$\\$\\{[^}]*\\}``), and then may read past the closing
    quote; Terraform reads ``$${`` as ``${`` wherever it is (hashicorp/hcl,
    hclsyntax/scan_string_lit.rl). A value found by the round-trip property test."""
    path = tmp_path / TFVARS_NAME
    path.write_text(
        '# a comment with "$${" stays\n'
        'a = "$${"\n'
        'b = "%%{ x $${y"\n'
        'c = "\\\\$${"\n'
        'd = "}"\n'
        'e = "$${z} /* not a comment */"\n'
    )
    values, lines = read_tfvars(path)
    assert values == {
        "a": "${",
        "b": "%{ x ${y",
        "c": "\\${",
        "d": "}",
        "e": "${z} /* not a comment */",
    }
    assert lines == {"a": 2, "b": 3, "c": 4, "d": 5, "e": 6}


def test_an_invalid_brace_escape_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / TFVARS_NAME
    path.write_text('a = "x"\nb = "\\{"\n')
    with pytest.raises(DefinitionError, match=r"invalid escape \\\{") as raised:
        read_tfvars(path)
    assert raised.value.where == f"{path}:2"


# --- template derivation ------------------------------------------------------------------------


def test_derivation_finds_base_changing_and_optional_labels() -> None:
    spec = derive_template(
        "kubernetes-1.25.3-3",
        [
            {"kube_tag": "v1.25.3-cern.0", "manila": "false", "zone": "a"},
            {"kube_tag": "v1.25.3-cern.0", "manila": "true"},
            {"kube_tag": "v1.25.3-cern.0", "manila": "false", "gpu": "true"},
        ],
    )
    assert spec == TemplateSpec(
        name="kubernetes-1.25.3-3",
        kubernetes_version="v1.25.3",
        base_labels={"kube_tag": "v1.25.3-cern.0", "manila": "false"},
        optional_labels=("gpu", "zone"),
        changing_labels=("manila",),
    )


def test_derivation_does_not_depend_on_input_order() -> None:
    sets = [{"a": "x"}, {"a": "y"}]
    assert derive_template("t-1.2.3", sets) == derive_template("t-1.2.3", sets[::-1])
    assert derive_template("t-1.2.3", sets).base_labels == {"a": "x"}


def test_kubernetes_version_from_kube_tag_then_from_the_name() -> None:
    assert kubernetes_version("whatever", {"kube_tag": "v1.29.2-cern.1"}) == "v1.29.2"
    assert kubernetes_version("kubernetes-1.25.3-3-multi", {}) == "v1.25.3"


def test_fails_kubernetes_version_unknown() -> None:
    with pytest.raises(
        DefinitionError, match="cannot tell the Kubernetes version of template 'mine'"
    ):
        kubernetes_version("mine", {"kube_tag": "latest"})


# --- the generated code ----------------------------------------------------------------------


def test_generated_modules_snapshot(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str], snapshot: SnapshotAssertion
) -> None:
    root = project(make_project)
    assert run(root, str(FIXTURES), *DERIVE) == 0
    out = capsys.readouterr().out
    assert "has no place in the model" not in out
    edh = (root / "clusters" / "edh.py").read_text()
    assert 'role="worker"' in edh  # nodegroup_v1's role, kept
    assert "docker_volume_size_gb=50" in edh  # cluster_v1's docker_volume_size, kept
    for name in ("ais.py", "edh.py", "_imported_templates.py"):
        assert (root / "clusters" / name).read_text() == snapshot(name=name)


def test_generated_modules_pass_ruff_and_reimport_is_identical(
    make_project: ProjectFactory,
) -> None:
    root = project(make_project)
    assert run(root, str(FIXTURES), *DERIVE) == 0
    first = tree_hash(root / "clusters")
    assert run(root, str(FIXTURES), *DERIVE) == 0
    assert tree_hash(root / "clusters") == first
    ruff_ok(*(root / "clusters").glob("*.py"))


def test_clusters_are_adopted_and_may_start_observing(make_project: ProjectFactory) -> None:
    root = project(make_project)
    assert run(root, str(FIGURE_10), *DERIVE, "--observe", "--verify") == 0
    assert main(["--root", str(root), "synth"]) == 0
    path = next((root / "dist" / "dev").rglob("clusterv1_*k8s-ais-batch-dev-multi-v25.yaml"))
    body = yaml.safe_load(path.read_text())
    assert body["metadata"]["annotations"]["crossplane.io/external-name"] == (
        "k8s-ais-batch-dev-multi-v25"
    )
    assert body["spec"]["deletionPolicy"] == "Orphan"
    assert body["spec"]["managementPolicies"] == ["Observe"]
    provider = next((root / "dist" / "dev").rglob("providerconfig_*jeedy-ais.yaml"))
    annotations = yaml.safe_load(provider.read_text())["metadata"]["annotations"]
    assert annotations["fleet.openstack/auth-url"] == "<auth_url>"
    assert annotations["fleet.openstack/identity-api-version"] == "<identity_api_version>"


def test_out_puts_every_cluster_in_one_module(make_project: ProjectFactory) -> None:
    root = project(make_project, catalog=True)
    assert (
        run(root, str(FIXTURES), "--out", str(root / "clusters" / "migrated.py"), "--verify") == 0
    )
    assert sorted(p.name for p in (root / "clusters").glob("*.py")) == [
        "__init__.py",
        "_templates.py",
        "migrated.py",
    ]
    source = (root / "clusters" / "migrated.py").read_text()
    assert "from clusters._templates import MULTI_1_25_3, SINGLE_1_25_3" in source
    assert source.count("MagnumCluster(") == len(ALL_FIXTURES)


# --- fidelity ----------------------------------------------------------------------------------


@pytest.mark.parametrize("derive", [True, False], ids=["derived", "catalog"])
@pytest.mark.parametrize("fixture", ALL_FIXTURES, ids=lambda p: p.parent.name)
def test_every_fixture_value_is_rendered_unchanged(
    make_project: ProjectFactory, fixture: Path, derive: bool
) -> None:
    root = project(make_project, catalog=not derive)
    config = FleetConfig.load(root)
    result = plan_import(
        config, ImportOptions(paths=[fixture], derive_templates=derive, template_uuids=UUIDS)
    )
    assert [d.cluster.source for d in result.clusters] == [str(fixture)]
    assert verify(config, result) == []


def test_a_derived_catalog_keeps_the_attributes_a_state_import_wrote(
    make_project: ProjectFactory,
) -> None:
    """The tfvars import rewrites the generated catalog with its derived templates; a
    template a state import wrote there keeps its Magnum attributes (image, flavor, ...)."""
    earlier = (
        '"""Generated by `fleet import tfstate` (templates): re-import to update."""\n\n'
        "from fleet import ClusterTemplate\n\n"
        "PAWS_127D = ClusterTemplate(\n"
        '    name="paws-127d",\n'
        '    kubernetes_version="v1.27.8",\n'
        '    uuid="7f44d9f2-3162-4af3-af88-bfe56159c5b7",\n'
        '    image="Fedora-CoreOS-38",\n'
        '    flavor="g4.cores8.ram32.disk20",\n'
        '    keypair="paws-magnum-vm",\n'
        "    docker_volume_size_gb=80,\n"
        "    master_lb_enabled=False,\n"
        ")\n"
    )
    root = make_project({"clusters/_imported_templates.py": earlier})
    result = plan_import(
        FleetConfig.load(root),
        ImportOptions(paths=[FIGURE_10], derive_templates=True, template_uuids=UUIDS),
    )
    catalog = result.files[root / "clusters" / "_imported_templates.py"]
    namespace: dict[str, Any] = {}
    exec(compile(catalog, "_imported_templates.py", "exec"), namespace)
    kept = namespace["PAWS_127D"]
    assert kept.magnum_attributes() == {
        "image": "Fedora-CoreOS-38",
        "flavor": "g4.cores8.ram32.disk20",
        "keypair_id": "paws-magnum-vm",
        "docker_volume_size": 80,
        "master_lb_enabled": False,
    }
    assert "KUBERNETES_1_25_3_3_MULTI = ClusterTemplate(" in catalog


def test_verify_catches_a_changed_value_and_writes_nothing(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    # Another module patches the imported cluster after its declaration: verify must see it.
    tamper = """
        from fleet import Fleet, JsonPatch


        def define(fleet: Fleet) -> None:
            if "k8s-ais-batch-dev-multi-v25" not in {d.construct_id for d in fleet.declarations()}:
                return  # the fleet before the import
            cluster = fleet.declaration("k8s-ais-batch-dev-multi-v25")
            cluster.add_json_patch(
                JsonPatch.replace("/spec/forProvider/labels/calico_tag", "v9"), kind="ClusterV1"
            )
    """
    root = make_project({"clusters/zz_tamper.py": tamper})
    before = tree_hash(root)
    assert run(root, str(FIGURE_10), *DERIVE, "--verify") == 1
    err = capsys.readouterr().err
    assert (
        f"{FIGURE_10}:54: labels.calico_tag: tfvars has 'v3.24.5', the rendered ClusterV1 "
        "k8s-ais-batch-dev-multi-v25 label has 'v9'"
    ) in err
    assert "nothing written" in err
    assert tree_hash(root) == before


# --- the property: any label value round-trips, and the code holds declarations only ---------

_ALLOWED_NODES = (
    ast.Module, ast.Expr, ast.Constant, ast.ImportFrom, ast.alias, ast.FunctionDef,
    ast.arguments, ast.arg, ast.Name, ast.Load, ast.Store, ast.Assign, ast.Call, ast.keyword,
    ast.Dict, ast.List,
)  # fmt: skip
_KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=40).filter(
    lambda k: (
        k not in ("min_node_count", "max_node_count", "auto_scaling_enabled")
        and not is_credential_field(k)
    )
)
"""Label keys, but the autoscaler's (their values are counts and a switch, checked apart)
and credential fields (``secret``, ``password``...: their values are refused, whatever they
are, tests/test_secrets_in_errors.py)."""
# Any value the fleet accepts: a placeholder (`<...>`) in Magnum labels is refused (see
# test_import_refuses_a_placeholder_label below), and so is credential material.
_VALUES = st.text().filter(lambda v: not PLACEHOLDER.search(v) and credential_in(v) is None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labels=st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=4), group_label=_VALUES)
@example(labels={"a": "${"}, group_label="%{")  # python-hcl2 needs a "}" after "$${"
@example(labels={"a": "%{", "b": "}"}, group_label="$${ ${")
@example(labels={"secrets_count": "0"}, group_label="0")  # a key near a credential field's
def test_any_label_value_round_trips_and_the_code_is_only_declarations(
    labels: dict[str, str], group_label: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "clusters").mkdir()
        (root / "pyproject.toml").write_text(PYPROJECT)
        (root / "clusters" / "__init__.py").write_text("")
        source = tfvars(
            root,
            f"""\
            project_name = "P"
            keypair = "k"
            cluster_name = "k8s-x-dev"
            cluster_template_name = "kubernetes-1.25.3-3"
            flavor = "m"
            node_count = "1"
            nodegroups_list = [
              {{ name = "g", flavor_id = "m", node_count = "1",
                 labels = {{ "note" = {encode_string(group_label)} }} }}
            ]
            labels = {{
            """
            + "".join(f"  {encode_string(k)} = {encode_string(v)}\n" for k, v in labels.items())
            + "}\n",
        )
        config = FleetConfig.load(root)
        result = plan_import(
            config, ImportOptions(paths=[source], derive_templates=True, template_uuids=UUIDS)
        )
        for text in result.files.values():
            assert text.startswith(f'"""{GENERATED}')
            for node in ast.walk(ast.parse(text)):
                assert isinstance(node, _ALLOWED_NODES), ast.dump(node)
        for path, text in result.files.items():
            path.write_text(text, encoding="utf-8")
        with project_modules(root, "clusters"):
            fleet = load_fleet(config)
        cluster = next(c for c in fleet.declarations() if isinstance(c, MagnumCluster))
        cluster_v1, group_v1 = (yaml.safe_load(to_yaml(m.body)) for m in cluster.render("dev"))
        assert cluster_v1["spec"]["forProvider"]["labels"] == labels
        assert group_v1["spec"]["forProvider"]["labels"] == {"note": group_label}
        ruff_ok(*result.files)


def test_import_refuses_a_placeholder_label(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(make_project)
    text = MINIMAL.replace('"cern-geneva-a"', '"<availability_zone>"')
    tfvars(tmp_path, text)
    before = tree_hash(root)
    assert run(root, str(tmp_path / "in"), *DERIVE) == 2
    err = capsys.readouterr().err
    assert err.count("error: ") == 1
    assert "label 'availability_zone' holds the placeholder '<availability_zone>'" in err
    assert tree_hash(root) == before


@pytest.mark.parametrize("value", ['a"b', "a'b", '"\'"', "\x00\x85\u2028", "x" * 300, "é" * 80])
def test_string_literals_are_exact_and_ruff_formatted(tmp_path: Path, value: str) -> None:
    path = tmp_path / "m.py"
    path.write_text("\n".join(['"""M."""', "", *statement(value, target="X")]) + "\n")
    assert ast.literal_eval(py_str(value)) == value
    ruff_ok(path)


# --- bad input: one failing test each -----------------------------------------------------------


def fails(root: Path, capsys: pytest.CaptureFixture[str], *args: str, code: int = 2) -> str:
    before = tree_hash(root)
    assert run(root, *args) == code
    assert tree_hash(root) == before  # nothing written
    return capsys.readouterr().err


def test_fails_malformed_hcl_with_file_and_line(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tfvars(tmp_path, 'cluster_name = "k8s-x-dev"\nflavor = \nnode_count = "1"\n')
    err = fails(project(make_project), capsys, str(FIXTURES), str(bad), *DERIVE)
    assert f"error: {bad}:2: malformed HCL at column" in err


def test_fails_missing_cluster_name(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tfvars(tmp_path, MINIMAL.replace('cluster_name = "k8s-x-dev"', ""))
    err = fails(project(make_project), capsys, str(bad), *DERIVE)
    assert f"error: {bad}: cluster_name: missing cluster_name" in err


def test_fails_missing_cluster_template_name(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tfvars(tmp_path, MINIMAL.replace('cluster_template_name = "kubernetes-1.25.3-3"', ""))
    err = fails(project(make_project), capsys, str(bad), *DERIVE)
    assert f"error: {bad}: cluster_template_name: missing cluster_template_name" in err


def test_fails_unknown_template_without_derive(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tfvars(tmp_path, MINIMAL.replace("kubernetes-1.25.3-3", "kubernetes-1.25.3-4"))
    err = fails(project(make_project, catalog=True), capsys, str(bad))
    assert (
        "unknown cluster template 'kubernetes-1.25.3-4'; did you mean 'kubernetes-1.25.3-3'?" in err
    )
    assert f"error: {bad}:4: cluster_template_name:" in err


def test_fails_not_a_number(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tfvars(tmp_path, MINIMAL.replace('node_count = "1"', 'node_count = "1.5"'))
    err = fails(project(make_project), capsys, str(bad), *DERIVE)
    assert f"error: {bad}:6: node_count: must be a whole number, got '1.5'" in err


def test_fails_merge_labels_not_a_bool(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    group = 'nodegroups_list = [{ name = "g", flavor_id = "m", node_count = 1, merge_labels = "x"}]'
    bad = tfvars(tmp_path, MINIMAL + group + "\n")
    err = fails(project(make_project), capsys, str(bad), *DERIVE)
    assert "nodegroups_list[g].merge_labels: must be true or false, got 'x'" in err


def test_fails_interpolation_in_a_value(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tfvars(tmp_path, MINIMAL.replace('"cern-geneva-a"', '"${var.zone}"'))
    err = fails(project(make_project), capsys, str(bad), *DERIVE)
    assert f"error: {bad}:7: labels.availability_zone: template ${{...}} is not a value" in err


def test_fails_reference_instead_of_a_value(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tfvars(tmp_path, MINIMAL.replace('flavor = "m2.large"', "flavor = var.flavor"))
    err = fails(project(make_project), capsys, str(bad), *DERIVE)
    assert (
        f"error: {bad}:5: flavor: must be a literal value, got the expression '${{var.flavor}}'"
        in err
    )


def test_fails_key_set_twice(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tfvars(tmp_path, MINIMAL + 'flavor = "m2.small"\n')
    err = fails(project(make_project), capsys, str(bad), *DERIVE)
    assert f"error: {bad}:8: flavor: set twice (first on line 5)" in err


def test_fails_label_that_is_not_a_string(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tfvars(tmp_path, MINIMAL.replace('"cern-geneva-a"', "3"))
    err = fails(project(make_project), capsys, str(bad), *DERIVE)
    assert "labels: label values must be quoted strings, got 3 for 'availability_zone'" in err


def test_fails_same_cluster_twice(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tfvars(tmp_path, MINIMAL, cluster="one")
    second = tfvars(tmp_path, MINIMAL, cluster="two")
    err = fails(project(make_project), capsys, str(first), str(second), *DERIVE)
    assert (
        f"error: {second}:3: cluster_name: cluster 'k8s-x-dev' is also declared in {first}" in err
    )


def test_fails_environment_not_in_the_name(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tfvars(tmp_path, MINIMAL.replace("k8s-x-dev", "k8s-x-dev-prod"))
    err = fails(project(make_project), capsys, str(bad), *DERIVE)
    assert "its name holds several (dev, prod) of dev, test, prod; use --environment" in err
    root = project(make_project)
    assert run(root, str(bad), *DERIVE, "--environment", "prod", "--verify") == 0
    assert 'environments=["prod"]' in (root / "clusters" / "ais.py").read_text()


def test_fails_unknown_environment_option(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    err = fails(project(make_project), capsys, str(FIGURE_10), "--environment", "qa")
    assert "--environment: unknown environment 'qa' (configured: dev, test, prod)" in err


def test_fails_cluster_lacks_a_base_label_of_its_catalog_template(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tfvars(tmp_path, MINIMAL)  # the catalog's template has 59 base labels
    err = fails(project(make_project, catalog=True), capsys, str(bad))
    assert f"error: {bad}:7: labels: lacks base label(s) admission_control_list, " in err


def test_fails_module_written_by_hand(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    by_hand = '"""Written by a person."""\n\n\ndef define(fleet):\n    pass\n'
    root = make_project({"clusters/ais.py": by_hand})
    err = fails(root, capsys, str(FIGURE_10), *DERIVE)
    assert "ais.py: exists and was not written by `fleet import`" in err


def test_fails_reimport_that_would_drop_a_cluster(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(make_project)
    assert run(root, *map(str, (FIXTURES / "ais").glob("*/terraform.tfvars")), *DERIVE) == 0
    capsys.readouterr()
    err = fails(root, capsys, str(FIGURE_10), *DERIVE)
    assert (
        "it declares k8s-ais-batch-prod-multi-v25 (prod), k8s-ais-web-test-v25 (test), "
        "which this input lacks" in err
    )


def test_fails_project_shared_by_two_communities(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tfvars(tmp_path, MINIMAL, community="batch")
    err = fails(project(make_project), capsys, str(FIGURE_10), str(other), *DERIVE)
    assert "OpenStack project 'JEEDY AIS' is also used from ais.py (import them together" in err


def test_definition_errors_are_collected_across_files(tmp_path: Path) -> None:
    one = tfvars(tmp_path, "flavor = 1\n", cluster="one")
    two = tfvars(tmp_path, "flavor = 1\n", cluster="two")
    with pytest.raises(DefinitionErrors) as raised:
        plan_import(FleetConfig(root=tmp_path), ImportOptions(paths=[one, two]))
    assert {e.where for e in raised.value.errors} == {str(one), str(two), f"{one}:1", f"{two}:1"}


def test_a_later_import_extends_the_derived_templates_without_changing_their_base(
    make_project: ProjectFactory,
) -> None:
    root = project(make_project)
    assert run(root, *map(str, sorted((FIXTURES / "ais").glob("*/*.tfvars"))), *DERIVE) == 0
    catalog = root / "clusters" / "_imported_templates.py"
    first = catalog.read_text()
    edh = map(str, sorted((FIXTURES / "edh").glob("*/*.tfvars")))
    assert run(root, *edh, *DERIVE, "--verify") == 0
    second = catalog.read_text()
    # The base labels stay (the ais module was written against them); the lists grow.
    assert first.split("optional_labels")[0] == second.split("optional_labels")[0]
    single = second.split('name="kubernetes-1.25.3-3",')[1].split("ClusterTemplate(")[0]
    assert 'optional_labels=["report_banner"]' in single
    assert '"nvidia_gpu_enabled"' in single.split("changing_labels")[1]
    assert main(["--root", str(root), "synth"]) == 0


def test_fails_derived_template_without_uuid(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """tfvars name the template; Magnum stores its UUID (openstack/magnum
    ``magnum/api/controllers/v1/cluster.py``), so a derived template needs one."""
    err = fails(project(make_project), capsys, str(FIGURE_10), "--derive-templates")
    assert f"error: {FIGURE_10}:" in err
    assert (
        "cluster_template_name: template 'kubernetes-1.25.3-3-multi' has no UUID (tfvars name "
        "the template, Magnum stores its UUID): pass --template-uuid "
        "kubernetes-1.25.3-3-multi=<uuid>"
    ) in err
    assert "or the Terraform state of its clusters (--state, or fleet import tfstate)" in err


def test_fails_template_uuid_not_a_uuid(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    err = fails(
        project(make_project),
        capsys,
        str(FIGURE_10),
        "--derive-templates",
        "--template-uuid",
        "kubernetes-1.25.3-3-multi=kubernetes-1.25.3-3-multi",
    )
    assert "--template-uuid: kubernetes-1.25.3-3-multi: not a Magnum UUID" in err


@pytest.mark.parametrize("project_name", ["per env", "ALL", "Fleet"])
def test_a_project_named_like_a_name_the_module_uses_gets_its_own_variable(
    project_name: str, make_project: ProjectFactory, tmp_path: Path
) -> None:
    # `per env` would be `per_env = OpenStackProject(...)`, shadowing the per_env the
    # declaration then calls (the import refused: 'OpenStackProject' object is not
    # callable); `all` a builtin; `fleet` define's argument.
    root = project(make_project)
    text = MINIMAL.replace("JEEDY AIS", project_name)
    tfvars(tmp_path, text, cluster="dev")
    tfvars(
        tmp_path,
        text.replace("k8s-x-dev", "k8s-x-prod").replace('node_count = "1"', 'node_count = "2"'),
        cluster="prod",
    )
    uuid = "kubernetes-1.25.3-3=0e9c5a47-d4a4-4d0b-9d61-b1d0e6e4d1e1"
    assert run(root, str(tmp_path / "in"), "--derive-templates", "--template-uuid", uuid) == 0
    module = (root / "clusters" / "ais.py").read_text()
    variable = "project_" + project_name.lower().replace(" ", "_")
    assert f"    {variable} = OpenStackProject(" in module
    assert "node_count=per_env(dev=1, prod=2)" in module
    assert main(["--root", str(root), "synth"]) == 0


def test_an_autoscaled_cluster_imports_its_bounds_as_min_and_max(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The labels turn Magnum's autoscaler on and bound it: MagnumCluster takes the bounds as
    # min_node_count/max_node_count (the labels it refuses in labels=); the import failed.
    root = project(make_project)
    text = MINIMAL.replace(
        'labels = { "availability_zone" : "cern-geneva-a" }',
        'labels = { "availability_zone" : "cern-geneva-a", "auto_scaling_enabled" : "true",'
        ' "min_node_count" : "1", "max_node_count" : "5" }',
    )
    tfvars(tmp_path, text)
    uuid = "kubernetes-1.25.3-3=0e9c5a47-d4a4-4d0b-9d61-b1d0e6e4d1e1"
    args = (str(tmp_path / "in"), "--derive-templates", "--template-uuid", uuid, "--verify")
    assert run(root, *args) == 0, capsys.readouterr().err
    module = (root / "clusters" / "ais.py").read_text()
    assert "min_node_count=1," in module and "max_node_count=5," in module
    assert '"min_node_count"' not in module and '"max_node_count"' not in module
    assert main(["--root", str(root), "synth"]) == 0
    folder = root / "dist/dev/clusters/k8s-x-dev"
    (path,) = folder.glob("clusterv1_*.yaml")
    rendered = yaml.safe_load(path.read_text())
    assert rendered["spec"]["forProvider"]["labels"] == {
        "availability_zone": "cern-geneva-a",
        "auto_scaling_enabled": "true",
        "min_node_count": "1",
        "max_node_count": "5",
    }
    assert rendered["spec"]["initProvider"] == {"nodeCount": 1}


def test_autoscaler_bounds_the_fleet_cannot_write_name_the_labels(
    make_project: ProjectFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(make_project)
    text = MINIMAL.replace(
        'labels = { "availability_zone" : "cern-geneva-a" }',
        'labels = { "auto_scaling_enabled" : "true", "max_node_count" : "5" }',
    )
    bad = tfvars(tmp_path, text)
    assert run(root, str(tmp_path / "in"), "--derive-templates") == 2
    err = capsys.readouterr().err
    assert (
        f"error: {bad}:7: labels: holds max_node_count='5' with auto_scaling_enabled='true': "
        "MagnumCluster writes these labels only from min_node_count and max_node_count"
    ) in err
    assert err.count("error: ") == 1
