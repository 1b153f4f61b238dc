"""``fleet graph``: bootstrap order and structure as Mermaid and DOT; the touched part."""

# ruff: noqa: E501  (exact expected output, line for line)

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import HYBRID
from syrupy.assertion import SnapshotAssertion

from fleet import (
    ClusterTemplate,
    Fleet,
    FleetConfig,
    MagnumCluster,
    Manifest,
    NodeGroup,
    OpenStackProject,
    testing,
)
from fleet.cli.main import main
from fleet.views.graph import (
    fleet_graph,
    package_targets,
    registered_cluster,
    render,
    sync_wave,
    syncs,
    to_dot,
    to_mermaid,
    touched_graph,
    touched_subgraph,
)

REPO = Path(__file__).resolve().parents[1]
APP = "argoproj.io/v1alpha1"

UUID = "3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59"


def _app(
    name: str, path: str, *, wave: int | None = None, recurse: bool = False, env: str = "dev"
) -> Manifest:
    metadata: dict[str, Any] = {"name": name, "namespace": "argocd"}
    if wave is not None:
        metadata["annotations"] = {"argocd.argoproj.io/sync-wave": str(wave)}
    source: dict[str, Any] = {"repoURL": "https://git.example/fleet.git", "path": path}
    if recurse:
        source["directory"] = {"recurse": True}
    body = {
        "apiVersion": APP,
        "kind": "Application",
        "metadata": metadata,
        "spec": {"source": source},
    }
    return Manifest(env, body, "bootstrap", "test")


def _registration(name: str, labels: dict[str, str]) -> Manifest:
    body = {
        "apiVersion": "cluster.argocd.crossplane.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {"forProvider": {"labels": labels}},
    }
    return Manifest("dev", body, f"clusters/{name}", "test")


def _appset(name: str, generators: list[dict[str, Any]]) -> Manifest:
    body = {
        "apiVersion": APP,
        "kind": "ApplicationSet",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {"generators": generators},
    }
    return Manifest("dev", body, "packages", "test")


def _tiny(tmp_path: Path) -> tuple[Fleet, list[Manifest]]:
    """One cluster, a root Application with three steps in waves -1, 0, 1, a package."""
    fleet = Fleet(FleetConfig(root=tmp_path, environments=("dev",)))
    project = OpenStackProject(fleet, "proj", project_name="PROJ")
    MagnumCluster(
        fleet,
        "web",
        name="web",
        environments=["dev"],
        project=project,
        template=ClusterTemplate(name="k8s-1.30", kubernetes_version="v1.30.1", uuid=UUID),
        flavor="m1",
        keypair="k",
        node_count=1,
        node_groups=[NodeGroup(name="a", flavor="m2", node_count=2)],
    )
    manifests = [
        *testing.synth(fleet, ["dev"]).all(),
        _app("root", "dist/dev/bootstrap"),
        _app("platform", "dist/dev/platform", wave=-1),
        _app("clusters", "dist/dev/clusters", wave=0, recurse=True),
        _app("packages", "dist/dev/packages", wave=1),
        _registration("web", {"team": "a"}),
        _appset("monitoring", [{"clusters": {"selector": {"matchLabels": {"team": "a"}}}}]),
    ]
    return fleet, manifests


MERMAID = (
    "flowchart LR\n"
    '  subgraph dev["dev"]\n'
    "    direction TB\n"
    '    subgraph dev_bootstrap["bootstrap"]\n'
    "      direction TB\n"
    '      dev_app_argocd_root(["Application root<br/>dist/dev/bootstrap<br/>4 objects"])\n'
    '      dev_app_argocd_platform(["Application platform<br/>dist/dev/platform<br/>1 object"])\n'
    '      dev_app_argocd_clusters(["Application clusters<br/>dist/dev/clusters<br/>3 objects"])\n'
    '      dev_app_argocd_packages(["Application packages<br/>dist/dev/packages<br/>1 object"])\n'
    '      dev_wave_argocd_root_m1(("wave -1"))\n'
    '      dev_wave_argocd_root_0(("wave 0"))\n'
    '      dev_wave_argocd_root_1(("wave 1"))\n'
    "    end\n"
    '    subgraph dev_clusters_web["web"]\n'
    "      direction TB\n"
    '      dev_cluster_web["magnum k8s-1.30<br/>3 nodes"]\n'
    '      dev_pool_web_default_worker("default-worker: 1 x m1")\n'
    '      dev_pool_web_a("a: 2 x m2")\n'
    '      dev_registration_web{{"ArgoCD Cluster web"}}\n'
    "    end\n"
    '    subgraph dev_packages["packages"]\n'
    "      direction TB\n"
    '      dev_package_argocd_monitoring[["ApplicationSet monitoring"]]\n'
    "    end\n"
    "  end\n"
    "  dev_app_argocd_root --> dev_wave_argocd_root_m1\n"
    "  dev_wave_argocd_root_m1 --> dev_app_argocd_platform\n"
    "  dev_wave_argocd_root_m1 --> dev_wave_argocd_root_0\n"
    "  dev_wave_argocd_root_0 --> dev_app_argocd_clusters\n"
    "  dev_wave_argocd_root_0 --> dev_wave_argocd_root_1\n"
    "  dev_wave_argocd_root_1 --> dev_app_argocd_packages\n"
    "  dev_cluster_web --> dev_pool_web_default_worker\n"
    "  dev_cluster_web --> dev_pool_web_a\n"
    "  dev_app_argocd_clusters -.-> dev_cluster_web\n"
    '  dev_cluster_web -.->|"registered"| dev_registration_web\n'
    "  dev_app_argocd_clusters -.-> dev_registration_web\n"
    "  dev_app_argocd_packages -.-> dev_package_argocd_monitoring\n"
    '  dev_package_argocd_monitoring -.->|"deploys to"| dev_cluster_web\n'
)

DOT = (
    "digraph fleet {\n"
    "  rankdir=LR;\n"
    '  node [shape=box, fontname="Helvetica"];\n'
    '  edge [fontname="Helvetica"];\n'
    "  subgraph cluster_dev {\n"
    '    label="dev";\n'
    "    subgraph cluster_dev_bootstrap {\n"
    '      label="bootstrap";\n'
    '      dev_app_argocd_root [label="Application root\\ndist/dev/bootstrap\\n4 objects", shape=box, style="rounded"];\n'
    '      dev_app_argocd_platform [label="Application platform\\ndist/dev/platform\\n1 object", shape=box, style="rounded"];\n'
    '      dev_app_argocd_clusters [label="Application clusters\\ndist/dev/clusters\\n3 objects", shape=box, style="rounded"];\n'
    '      dev_app_argocd_packages [label="Application packages\\ndist/dev/packages\\n1 object", shape=box, style="rounded"];\n'
    '      dev_wave_argocd_root_m1 [label="wave -1", shape=circle];\n'
    '      dev_wave_argocd_root_0 [label="wave 0", shape=circle];\n'
    '      dev_wave_argocd_root_1 [label="wave 1", shape=circle];\n'
    "    }\n"
    "    subgraph cluster_dev_clusters_web {\n"
    '      label="web";\n'
    '      dev_cluster_web [label="magnum k8s-1.30\\n3 nodes", shape=box];\n'
    '      dev_pool_web_default_worker [label="default-worker: 1 x m1", shape=box, style="rounded"];\n'
    '      dev_pool_web_a [label="a: 2 x m2", shape=box, style="rounded"];\n'
    '      dev_registration_web [label="ArgoCD Cluster web", shape=hexagon];\n'
    "    }\n"
    "    subgraph cluster_dev_packages {\n"
    '      label="packages";\n'
    '      dev_package_argocd_monitoring [label="ApplicationSet monitoring", shape=component];\n'
    "    }\n"
    "  }\n"
    "  dev_app_argocd_root -> dev_wave_argocd_root_m1;\n"
    "  dev_wave_argocd_root_m1 -> dev_app_argocd_platform;\n"
    "  dev_wave_argocd_root_m1 -> dev_wave_argocd_root_0;\n"
    "  dev_wave_argocd_root_0 -> dev_app_argocd_clusters;\n"
    "  dev_wave_argocd_root_0 -> dev_wave_argocd_root_1;\n"
    "  dev_wave_argocd_root_1 -> dev_app_argocd_packages;\n"
    "  dev_cluster_web -> dev_pool_web_default_worker;\n"
    "  dev_cluster_web -> dev_pool_web_a;\n"
    "  dev_app_argocd_clusters -> dev_cluster_web [style=dashed];\n"
    '  dev_cluster_web -> dev_registration_web [label="registered", style=dashed];\n'
    "  dev_app_argocd_clusters -> dev_registration_web [style=dashed];\n"
    "  dev_app_argocd_packages -> dev_package_argocd_monitoring [style=dashed];\n"
    '  dev_package_argocd_monitoring -> dev_cluster_web [label="deploys to", style=dashed];\n'
    "}\n"
)


def test_mermaid_exact(tmp_path: Path) -> None:
    fleet, manifests = _tiny(tmp_path)
    assert to_mermaid(fleet_graph({"dev": manifests}, fleet=fleet)) == MERMAID


def test_dot_exact(tmp_path: Path) -> None:
    fleet, manifests = _tiny(tmp_path)
    assert to_dot(fleet_graph({"dev": manifests}, fleet=fleet)) == DOT


def _order(mermaid: str) -> list[str]:
    """The app each wave node leads to, in the order of the wave chain."""
    return [
        line.split(" --> ")[1].removeprefix("dev_app_argocd_")
        for line in mermaid.splitlines()
        if "_wave_" in line.split(" --> ")[0] and " --> dev_app_" in line
    ]


def test_bootstrap_order_follows_the_sync_waves(tmp_path: Path) -> None:
    _, manifests = _tiny(tmp_path)
    assert _order(to_mermaid(fleet_graph({"dev": manifests}))) == [
        "platform",
        "clusters",
        "packages",
    ]
    moved = [
        _app("platform", "dist/dev/platform", wave=5) if m.name == "platform" else m
        for m in manifests
    ]
    assert _order(to_mermaid(fleet_graph({"dev": moved}))) == ["clusters", "packages", "platform"]


def test_apps_in_one_wave_share_the_wave_node(tmp_path: Path) -> None:
    apps = [
        _app("root", "dist/dev/bootstrap"),
        _app("b", "dist/dev/b", wave=1),
        _app("a", "dist/dev/a", wave=1),
    ]
    text = to_mermaid(fleet_graph({"dev": apps}))
    assert "  dev_wave_argocd_root_1 --> dev_app_argocd_a\n" in text
    assert "  dev_wave_argocd_root_1 --> dev_app_argocd_b\n" in text
    assert text.count('(("wave 1"))') == 1


def test_sync_wave_default_and_garbage() -> None:
    assert sync_wave(_app("a", "p")) == 0
    assert sync_wave(_app("a", "p", wave=-2)) == -2
    odd = _app("a", "p")
    odd.body["metadata"]["annotations"] = {"argocd.argoproj.io/sync-wave": "soon"}
    assert sync_wave(odd) == 0


def test_syncs_follows_directory_recurse() -> None:
    deep = Manifest("dev", {"kind": "X", "metadata": {"name": "x"}}, "clusters/web", "t")
    top = Manifest("dev", {"kind": "X", "metadata": {"name": "y"}}, "clusters", "t")
    assert syncs(_app("c", "dist/dev/clusters", recurse=True), deep, dist="dist")
    assert not syncs(_app("c", "dist/dev/clusters"), deep, dist="dist")
    assert syncs(_app("c", "./dist/dev/clusters/"), top, dist="dist")
    assert not syncs(_app("c", "dist/test/clusters", recurse=True), deep, dist="dist")
    assert syncs(_app("c", "out/dev/clusters/web"), deep, dist="out")


@pytest.mark.parametrize(
    ("generators", "selected"),
    [
        ([{"clusters": {}}], ["a", "b"]),
        ([{"clusters": {"selector": {"matchLabels": {"team": "x"}}}}], ["a"]),
        (
            [
                {
                    "clusters": {
                        "selector": {
                            "matchExpressions": [
                                {"key": "team", "operator": "In", "values": ["x", "y"]}
                            ]
                        }
                    }
                }
            ],
            ["a", "b"],
        ),
        (
            [
                {
                    "clusters": {
                        "selector": {
                            "matchExpressions": [
                                {"key": "team", "operator": "NotIn", "values": ["x"]}
                            ]
                        }
                    }
                }
            ],
            ["b"],
        ),
        (
            [
                {
                    "clusters": {
                        "selector": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}
                    }
                }
            ],
            ["b"],
        ),
        (
            [
                {
                    "clusters": {
                        "selector": {
                            "matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]
                        }
                    }
                }
            ],
            ["a"],
        ),
        (
            [
                {
                    "matrix": {
                        "generators": [
                            {"git": {"repoURL": "r"}},
                            {"clusters": {"selector": {"matchLabels": {"team": "y"}}}},
                        ]
                    }
                }
            ],
            ["b"],
        ),
        ([{"list": {"elements": []}}], []),
    ],
)
def test_package_targets(generators: list[dict[str, Any]], selected: list[str]) -> None:
    registrations = [
        _registration("a", {"team": "x"}),
        _registration("b", {"team": "y", "gpu": "true"}),
    ]
    targets = package_targets(_appset("p", generators), registrations)
    assert [r.name for r in targets] == selected


def test_without_the_fleet_clusters_come_from_their_folders(tmp_path: Path) -> None:
    _, manifests = _tiny(tmp_path)
    text = to_mermaid(fleet_graph({"dev": manifests}))
    assert '      dev_cluster_web["web"]\n' in text
    assert "dev_pool_" not in text


def test_retired_cluster_is_dashed_and_renders_nothing(tmp_path: Path) -> None:
    fleet = Fleet(FleetConfig(root=tmp_path, environments=("dev",)))
    project = OpenStackProject(fleet, "proj", project_name="PROJ")
    MagnumCluster(
        fleet,
        "old",
        name="old",
        environments=["dev"],
        project=project,
        template=ClusterTemplate(name="k8s-1.30", kubernetes_version="v1.30.1", uuid=UUID),
        flavor="m1",
        keypair="k",
        node_count=1,
        node_groups=[NodeGroup(name="a", flavor="m2", node_count=2)],
        retired=True,
    )
    graph = fleet_graph(testing.synth(fleet, ["dev"]).manifests, fleet=fleet)
    text = to_mermaid(graph)
    assert '      dev_cluster_old["magnum k8s-1.30<br/>retired: renders nothing"]\n' in text
    assert text.endswith("  class dev_cluster_old retired\n")
    assert "dev_pool_" not in text
    assert (
        'dev_cluster_old [label="magnum k8s-1.30\\nretired: renders nothing", shape=box, style="dashed"];'
        in to_dot(graph)
    )


def test_labels_are_escaped() -> None:
    odd = _app('say "hi" <b>', "dist/dev/x")
    graph = fleet_graph({"dev": [odd]})
    assert '"Application say #quot;hi#quot; #lt;b#gt;<br/>' in to_mermaid(graph)
    assert 'label="Application say \\"hi\\" <b>\\n' in to_dot(graph)


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown graph format 'svg'"):
        render(fleet_graph({}), "svg")


NODEGROUP = ("containerinfra.openstack.crossplane.io", "NodegroupV1", "", "web-a")


def test_touched_subgraph_exact(tmp_path: Path) -> None:
    _, manifests = _tiny(tmp_path)
    assert touched_subgraph(manifests, [("dev", NODEGROUP)]) == (
        "```mermaid\n"
        "flowchart LR\n"
        '  subgraph dev["dev"]\n'
        "    direction TB\n"
        '    subgraph dev_bootstrap["bootstrap"]\n'
        "      direction TB\n"
        '      dev_app_argocd_root(["Application root<br/>dist/dev/bootstrap<br/>4 objects"])\n'
        '      dev_app_argocd_clusters(["Application clusters<br/>dist/dev/clusters<br/>3 objects"])\n'
        '      dev_wave_argocd_root_0(("wave 0"))\n'
        "    end\n"
        '    subgraph dev_folder_clusters_web["clusters/web"]\n'
        "      direction TB\n"
        '      dev_NodegroupV1_web_a["NodegroupV1<br/>web-a"]\n'
        "    end\n"
        "  end\n"
        "  dev_app_argocd_root --> dev_wave_argocd_root_0\n"
        "  dev_wave_argocd_root_0 --> dev_app_argocd_clusters\n"
        "  dev_app_argocd_clusters -.-> dev_NodegroupV1_web_a\n"
        "```\n"
    )


def test_touched_subgraph_nothing_changed(tmp_path: Path) -> None:
    _, manifests = _tiny(tmp_path)
    assert touched_subgraph(manifests, []) == ""


def test_touched_graph_places_objects_of_both_sides_once(tmp_path: Path) -> None:
    _, manifests = _tiny(tmp_path)
    removed = Manifest(
        "dev",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gone", "namespace": "ns"}},
        "platform",
        "base",
    )
    changed = [("dev", NODEGROUP), ("dev", removed.identity)]
    text = to_mermaid(touched_graph({"dev": [*manifests, removed, *manifests]}, changed))
    assert text.count('["NodegroupV1<br/>web-a"]') == 1
    assert '["ConfigMap<br/>ns/gone"]' in text
    assert "  dev_app_argocd_platform -.-> dev_ConfigMap_ns_gone\n" in text
    assert "dev_app_argocd_packages" not in text


@pytest.fixture(scope="module")
def example() -> tuple[Fleet, dict[str, list[Manifest]]]:
    fleet = testing.load_repository(FleetConfig.load(HYBRID))
    return fleet, testing.synth(fleet).manifests


@pytest.mark.parametrize("fmt", ["mermaid", "dot"])
def test_example_fleet_snapshot(
    example: tuple[Fleet, dict[str, list[Manifest]]], fmt: str, snapshot: SnapshotAssertion
) -> None:
    fleet, manifests = example
    assert render(fleet_graph(manifests, fleet=fleet), fmt) == snapshot


def test_example_graph_names_every_cluster_and_node_pool(
    example: tuple[Fleet, dict[str, list[Manifest]]],
) -> None:
    fleet, manifests = example
    text = to_mermaid(fleet_graph(manifests, fleet=fleet))
    for construct in fleet.declarations():
        if isinstance(construct, MagnumCluster) or hasattr(construct, "node_pools"):
            for env in construct.environments:
                assert f'["{construct.cluster_name(env)}"]' in text  # type: ignore[attr-defined]
                for pool in construct.node_pools(env):  # type: ignore[attr-defined]
                    assert f'("{pool.name}: ' in text


def test_cli_graph(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(HYBRID), "graph", "--env", "prod"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("flowchart LR\n")
    assert '  subgraph prod["prod"]\n' in text
    assert 'subgraph dev["dev"]' not in text
    assert main(["--root", str(HYBRID), "graph", "--format", "dot"]) == 0
    assert capsys.readouterr().out.startswith("digraph fleet {\n")


def test_cli_graph_unknown_environment(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(HYBRID), "graph", "--env", "stage"]) == 2
    assert "unknown environment 'stage'" in capsys.readouterr().err


def test_registration_outside_the_cluster_folder_is_found_by_label_or_name() -> None:
    by_label = _registration("x", {"fleet/cluster": "web"})
    by_label = Manifest("dev", by_label.body, "registrations", "t")
    by_name = Manifest("dev", _registration("db", {}).body, "registrations", "t")
    stray = Manifest("dev", _registration("gone", {}).body, "registrations", "t")
    assert registered_cluster(by_label, ["web", "db"]) == "web"
    assert registered_cluster(by_name, ["web", "db"]) == "db"
    assert registered_cluster(stray, ["web", "db"]) is None
    objects = [
        Manifest(
            "dev",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n}},
            f"clusters/{n}",
            "t",
        )
        for n in ("web", "db")
    ]
    apps = [
        _app("root", "dist/dev/bootstrap"),
        _app("registrations", "dist/dev/registrations", wave=5),
    ]
    text = to_mermaid(fleet_graph({"dev": [*objects, *apps, by_label, by_name, stray]}))
    assert '  dev_cluster_web -.->|"registered"| dev_registration_x\n' in text
    assert '  dev_cluster_db -.->|"registered"| dev_registration_db\n' in text
    assert "  dev_app_argocd_registrations -.-> dev_registration_x\n" in text
    assert "dev_registration_gone" not in text


def test_helm_chart_application() -> None:
    chart = _app("crossplane", "unused", wave=1)
    chart.body["spec"]["source"] = {
        "repoURL": "https://charts.crossplane.io/stable",
        "chart": "crossplane",
        "targetRevision": "2.3.4",
    }
    text = to_mermaid(fleet_graph({"dev": [_app("root", "dist/dev/bootstrap"), chart]}))
    assert (
        'dev_app_argocd_crossplane(["Application crossplane<br/>chart crossplane 2.3.4"])' in text
    )
