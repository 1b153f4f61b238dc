"""``fleet ls``: inventory rows from the definitions, and the table/JSON/CSV output."""

from __future__ import annotations

import csv
import dataclasses
import fcntl
import io
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from support import HYBRID

from fleet import (
    ArgoCd,
    ClusterTemplate,
    DefinitionError,
    Fleet,
    FleetConfig,
    MagnumCluster,
    NodeGroup,
    NodePoolSummary,
    OpenStackProject,
    SecretKeyRef,
    per_env,
    testing,
)
from fleet.cli.ls import default_format, render_table
from fleet.cli.main import main
from fleet.clouds.oci.plugin import short_ocid
from fleet.views.inventory import (
    NodeTotals,
    clusters,
    inventory,
    node_totals,
    to_csv,
    to_json,
)

REPO = Path(__file__).resolve().parents[1]
TEMPLATE = ClusterTemplate(
    name="k8s-1.30", kubernetes_version="v1.30.1", uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59"
)


def _tiny(tmp_path: Path) -> Fleet:
    """Two environments; a plain, an autoscaled, an unregistered and a retired cluster."""
    fleet = Fleet(FleetConfig(root=tmp_path, environments=("dev", "prod")))
    # ArgoCD only in dev: nothing is registered in prod
    ArgoCd(
        fleet,
        "argocd",
        environments=["dev"],
        server_addr="argocd-server.argocd.svc:443",
        credentials=SecretKeyRef(name="argocd", namespace="crossplane-system", key="authToken"),
    )
    project = OpenStackProject(fleet, "proj", project_name="PROJ")
    common = dict(project=project, template=TEMPLATE, flavor="m1", keypair="k")
    MagnumCluster(
        fleet,
        "web",
        name="web-{env}",
        environments=["dev", "prod"],
        node_count=1,
        node_groups=[
            NodeGroup(name="a", flavor="m2", node_count=per_env(dev=1, prod=3)),
            NodeGroup(name="burst", flavor="m3", node_count=0, min_node_count=0, max_node_count=5),
        ],
        **common,  # type: ignore[arg-type]
    )
    MagnumCluster(
        fleet,
        "lab",
        name="lab",
        environments=["dev"],
        node_count=1,
        node_groups=[NodeGroup(name="a", flavor="m2", node_count=2)],
        register_in_argocd=False,
        deletion_protection=False,
        **common,  # type: ignore[arg-type]
    )
    MagnumCluster(
        fleet,
        "old",
        name="old",
        environments=["prod"],
        node_count=1,
        retired=True,
        **common,  # type: ignore[arg-type]
    )
    return fleet


def _pool(
    name: str, count: int | None, low: int | None = None, high: int | None = None
) -> NodePoolSummary:
    return NodePoolSummary(
        name=name,
        machine_size="m",
        node_count=count,
        min_node_count=low,
        max_node_count=high,
        placement=(),
    )


def test_node_totals_fixed_pools() -> None:
    totals = node_totals([_pool("a", 1), _pool("b", 2)])
    assert totals == NodeTotals(nodes=3, min_nodes=None, max_nodes=None)
    assert totals.text() == "3"


def test_node_totals_autoscaled_pool_counts_fixed_pools_in_both_bounds() -> None:
    totals = node_totals([_pool("a", 2), _pool("b", 1, 0, 5)])
    assert totals == NodeTotals(nodes=3, min_nodes=2, max_nodes=7)
    assert totals.text() == "3 (2..7)"


def test_node_totals_unknown_count_left_to_the_autoscaler() -> None:
    totals = node_totals([_pool("a", 2), _pool("b", None, 1, 4)])
    assert totals == NodeTotals(nodes=None, min_nodes=3, max_nodes=6)
    assert totals.text() == "3..6"


def test_node_totals_no_pools() -> None:
    assert node_totals([]).text() == "0"


def test_rows_per_environment_in_configured_order(tmp_path: Path) -> None:
    rows = inventory(_tiny(tmp_path))
    assert [(r.environment, r.cluster) for r in rows] == [
        ("dev", "web-dev"),
        ("dev", "lab"),
        ("prod", "web-prod"),
        ("prod", "old"),
    ]
    assert [r.cells() for r in rows] == [
        {
            "cluster": "web-dev",
            "cloud": "magnum",
            "version": "k8s-1.30",
            "nodes": "2 (2..7)",
            "account": "PROJ",
            "notes": "",
        },
        {
            "cluster": "lab",
            "cloud": "magnum",
            "version": "k8s-1.30",
            "nodes": "3",
            "account": "PROJ",
            "notes": "not in ArgoCD, unprotected",
        },
        {
            "cluster": "web-prod",
            "cloud": "magnum",
            "version": "k8s-1.30",
            "nodes": "4 (4..9)",
            "account": "PROJ",
            "notes": "not in ArgoCD",  # no ArgoCd in prod
        },
        {
            "cluster": "old",
            "cloud": "magnum",
            "version": "k8s-1.30",
            "nodes": "1",
            "account": "PROJ",
            "notes": "retired",  # renders nothing, so nothing registers it: not repeated
        },
    ]


def test_the_table_shows_oci_ids_by_their_unique_end() -> None:
    """The OKE plug-in's ``short_account`` (the views name no cloud)."""
    ocid = "ocid1.compartment.oc1..aaaaaaaa" + "q" * 50 + "x7w2kd9pzm"
    assert short_ocid(ocid) == "…x7w2kd9pzm"
    assert short_ocid("JEEDY AIS") == "JEEDY AIS"
    assert short_ocid("ocid1.x") == "ocid1.x"


def test_rows_for_one_environment(tmp_path: Path) -> None:
    rows = inventory(_tiny(tmp_path), environments=["prod"])
    assert [r.cluster for r in rows] == ["web-prod", "old"]


def test_fails_unknown_environment(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError, match="unknown environment 'stage'"):
        inventory(_tiny(tmp_path), environments=["stage"])


def test_json_has_every_field(tmp_path: Path) -> None:
    data = json.loads(to_json(inventory(_tiny(tmp_path), environments=["dev"])))
    assert data[0] == {
        "environment": "dev",
        "cluster": "web-dev",
        "cloud_name": "web-dev",
        "id": "web",
        "cloud": "magnum",
        "template": "k8s-1.30",
        "kubernetes_version": "v1.30.1",
        "node_pools": [
            {
                "name": "default-worker",
                "machine_size": "m1",
                "machine_size_inherited": False,
                "node_count": 1,
                "min_node_count": None,
                "max_node_count": None,
                "placement": [],
            },
            {
                "name": "a",
                "machine_size": "m2",
                "machine_size_inherited": False,
                "node_count": 1,
                "min_node_count": None,
                "max_node_count": None,
                "placement": [],
            },
            {
                "name": "burst",
                "machine_size": "m3",
                "machine_size_inherited": False,
                "node_count": 0,
                "min_node_count": 0,
                "max_node_count": 5,
                "placement": [],
            },
        ],
        "nodes": 2,
        "min_nodes": 2,
        "max_nodes": 7,
        "account": "PROJ",
        "registered_in_argocd": True,
        "deletion_protection": True,
        "retired": False,
        "source": data[0]["source"],
    }
    assert "test_inventory.py:" in data[0]["source"]


def test_csv_exact(tmp_path: Path) -> None:
    assert to_csv(inventory(_tiny(tmp_path))) == (
        "environment,cluster,cloud,template,kubernetes_version,node_pools,nodes,min_nodes,"
        "max_nodes,account,registered_in_argocd,deletion_protection,retired,cloud_name\n"
        "dev,web-dev,magnum,k8s-1.30,v1.30.1,default-worker a burst,2,2,7,PROJ,true,true,false,"
        "web-dev\n"
        "dev,lab,magnum,k8s-1.30,v1.30.1,default-worker a,3,,,PROJ,false,false,false,lab\n"
        "prod,web-prod,magnum,k8s-1.30,v1.30.1,default-worker a burst,4,4,9,PROJ,false,true,false,"
        "web-prod\n"
        "prod,old,magnum,k8s-1.30,v1.30.1,default-worker,1,,,PROJ,false,true,true,old\n"
    )


def test_table_shows_every_row_under_its_environment(tmp_path: Path) -> None:
    out = io.StringIO()
    render_table(inventory(_tiny(tmp_path)), stream=out, width=100)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["cluster", "cloud", "template/version", "nodes", "account", "notes"]
    assert lines[1].strip() == "dev: 2 clusters"
    assert lines[2].split() == ["web-dev", "magnum", "k8s-1.30", "2", "(2..7)", "PROJ"]
    assert lines[3].split()[:5] == ["lab", "magnum", "k8s-1.30", "3", "PROJ"]
    assert lines[3].endswith("  not in ArgoCD, unprotected")
    assert lines[4].strip() == "prod: 2 clusters"
    assert lines[6].split() == ["old", "magnum", "k8s-1.30", "1", "PROJ", "retired"]
    assert len(lines) == 7


def test_table_fits_100_columns_without_cutting_a_name(example: Path) -> None:
    """The fixture fleet (OKE compartments, autoscaled pools) on a 100-column terminal:
    every name whole, and every line within 100 columns."""
    out = io.StringIO()
    rows = inventory(testing.load_repository(FleetConfig.load(example)))
    render_table(rows, stream=out, width=100)
    text = out.getvalue()
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert len(lines) == 1 + len({r.environment for r in rows}) + len(rows)  # none wraps
    for row in rows:
        line = next(line for line in lines if line.startswith(row.cluster + " "))
        for cell in (row.cluster, row.version, row.totals.text(), row.account_label):
            assert f" {cell} " in f" {line} ", (cell, line)
    assert text.count("…") == sum(1 for r in rows if r.account.startswith("ocid1."))


def test_table_wider_than_the_terminal_rather_than_cut(tmp_path: Path) -> None:
    rows = inventory(_tiny(tmp_path))
    long = "k8s-" + "very-long-cluster-name-" * 4 + "prod"
    out = io.StringIO()
    render_table([dataclasses.replace(rows[0], cluster=long)], stream=out, width=60)
    assert long in out.getvalue()


def test_a_long_template_name_wraps_after_a_hyphen_to_fit(tmp_path: Path) -> None:
    rows = inventory(_tiny(tmp_path))
    template = "kubernetes-1.29.2-fedora-coreos-38-calico-multi-az-gpu-nvidia-a100-v7"
    rows = [dataclasses.replace(r, template=template) for r in rows]
    assert rows[0].version == template
    for width in (100, 80):
        out = io.StringIO()
        render_table(rows, stream=out, width=width)
        lines = out.getvalue().splitlines()
        assert max(len(line) for line in lines) <= width
        start = next(i for i, line in enumerate(lines) if line.startswith("web-dev "))
        column = lines[0].index("template/version")
        pieces = [lines[start].split()[2]]
        for line in lines[start + 1 :]:
            if line[:column].strip():  # the next row
                break
            pieces.append(line[column:].split()[0])
        assert len(pieces) > 1 and all(p.endswith("-") for p in pieces[:-1])
        assert "".join(pieces) == template  # whole, in order


def test_default_format_is_table_only_on_a_terminal() -> None:
    assert default_format(io.StringIO()) == "json"
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "w", closefd=False) as tty:
            assert default_format(tty) == "table"
    finally:
        os.close(master)
        os.close(slave)


@pytest.fixture
def example(tmp_path: Path) -> Path:
    root = tmp_path / "example"
    root.mkdir()
    shutil.copy(HYBRID / "pyproject.toml", root / "pyproject.toml")
    shutil.copytree(
        HYBRID / "clusters", root / "clusters", ignore=shutil.ignore_patterns("__pycache__")
    )
    return root


def test_cli_piped_output_is_json(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(example), "ls", "--env", "test"]) == 0
    data = json.loads(capsys.readouterr().out)
    clusters = [row["cluster"] for row in data]
    assert {"k8s-ais-batch-test-multi-v25", "k8s-ais-ci-test-v25"} <= set(clusters)
    assert "k8s-edh-dev-v25" not in clusters  # a dev-only cluster
    assert {row["environment"] for row in data} == {"test"}
    ci = next(row for row in data if row["cluster"] == "k8s-ais-ci-test-v25")
    assert (ci["nodes"], ci["template"]) == (3, "kubernetes-1.25.3-3")


def test_cli_csv(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(example), "ls", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    fleet = testing.load_repository(FleetConfig.load(example))
    expected = [
        (env, c.cluster_name(env))
        for env in fleet.environment_names
        for c in clusters(fleet)
        if env in c.environments
    ]
    assert [(r["environment"], r["cluster"]) for r in rows] == expected
    assert {r["cloud"] for r in rows} <= {"magnum", "oke"}


def test_cli_unknown_environment_is_bad_input(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--root", str(example), "ls", "--env", "stage"]) == 2
    assert "unknown environment 'stage'" in capsys.readouterr().err


def test_cli_on_a_terminal_prints_a_table(example: Path) -> None:
    """A real pseudo-terminal: no --format gives the rich table, not JSON."""
    master, slave = pty.openpty()
    # a terminal of 100 columns: the table fits, nothing is cut
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 100, 0, 0))
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "fleet"), "--root", str(example), "ls", "--env", "prod"],
        stdout=slave,
        stderr=subprocess.PIPE,
        env={k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")},
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closes when the process exits
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    text = re.sub(r"\x1b\[[0-9;]*m", "", b"".join(chunks).decode())  # colours and bold
    assert not text.lstrip().startswith("[")
    assert "template/version" in text
    assert "k8s-ais-batch-prod-multi-v25" in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_argocd_column_is_true_to_what_renders() -> None:
    """A row says registered exactly when dist/ holds the provider-argocd Cluster."""
    fleet = testing.load_repository(FleetConfig.load(HYBRID))
    rows = inventory(fleet)
    rendered = {
        (env, m.name)
        for env, manifests in testing.synth(fleet).manifests.items()
        for m in manifests
        if m.group == "cluster.argocd.crossplane.io" and m.kind == "Cluster"
    }
    assert rendered
    assert {(r.environment, r.cluster) for r in rows if r.registered_in_argocd} == rendered
