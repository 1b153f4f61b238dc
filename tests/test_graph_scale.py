"""``fleet graph`` on a large fleet: within Mermaid's limits (arrows, characters), summarized
when the full graph is not; the index of which Application applies what."""

# ruff: noqa: E501  (exact expected output, line for line)

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from support import HYBRID, REPO
from test_graph import MERMAID, _app, _tiny

from fleet import Fleet, FleetConfig, Manifest
from fleet.cli.main import main
from fleet.pipeline.discovery import load_fleet
from fleet.pipeline.render import render_environment
from fleet.views.graph import (
    MERMAID_MAX_EDGES,
    MERMAID_MAX_TEXT,
    Appliers,
    fitted_mermaid,
    fleet_graph,
    summary_graph,
    syncs,
    to_dot,
    to_mermaid,
)

sys.path.insert(0, str(REPO / "benchmarks"))
import fleet_gen

ARROW = re.compile(r"^  \S+ (-->|-\.->)(\|\"[^\"]*\"\|)? \S+$", re.M)


def arrows(mermaid: str) -> int:
    """The edges Mermaid counts against ``maxEdges``: one per arrow line."""
    return len(ARROW.findall(mermaid))


Rendered = tuple[Fleet, dict[str, list[Manifest]]]


def generated(root: Path, clusters: int, envs: int) -> Rendered:
    """The benchmark's hybrid fleet (80% Magnum over 10 projects, 20% OKE), rendered."""
    fleet_gen.write_project(root, clusters=clusters, envs=envs)
    fleet = load_fleet(FleetConfig.load(root))
    return fleet, {env: render_environment(fleet, env) for env in fleet.environment_names}


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    """20 clusters in one environment: 16 Magnum over 10 projects, 4 OKE."""
    return generated(tmp_path_factory.mktemp("small"), 20, 1)


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    """300 clusters in each of 3 environments: thousands of arrows drawn in full."""
    return generated(tmp_path_factory.mktemp("large"), 300, 3)


def test_arrows_counts_every_edge_line() -> None:
    assert arrows(MERMAID) == 13
    assert arrows(MERMAID) == MERMAID.count("-->") + MERMAID.count("-.->")


def test_a_small_fleet_is_drawn_in_full(tmp_path: Path) -> None:
    fleet, manifests = _tiny(tmp_path)
    fitted = fitted_mermaid({"dev": manifests}, fleet=fleet, hint="never shown")
    assert fitted.text == MERMAID
    assert fitted.notes == ()


def test_the_example_fleet_is_drawn_in_full(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(HYBRID), "graph"]) == 0
    out, err = capsys.readouterr()
    assert "%%" not in out
    assert err == ""
    assert main(["--root", str(HYBRID), "graph", "--full"]) == 0
    assert capsys.readouterr().out == out


def test_over_the_arrow_limit_clusters_are_grouped_by_cloud_and_account(small: Rendered) -> None:
    fleet, manifests = small
    full = to_mermaid(fleet_graph(manifests, fleet=fleet))
    assert arrows(full) > 100
    fitted = fitted_mermaid(manifests, fleet=fleet, max_edges=100, hint="Try --full.")
    assert arrows(fitted.text) <= 100
    assert fitted.text == to_mermaid(summary_graph(manifests, fleet=fleet)).replace(
        "flowchart LR\n", "flowchart LR\n" + "".join(f"%% {n}\n" for n in fitted.notes), 1
    )
    assert fitted.notes == (
        f"Summarized: drawn in full, this graph has {arrows(full)} arrows "
        "(Mermaid draws at most 100).",
        "Clusters are grouped by cloud and account; node pools, cluster Applications, "
        "ArgoCD registrations and packages are counted.",
        "Try --full.",
    )
    text = fitted.text
    # cluster i is OKE when i % 5 == 4, else Magnum in project i % 10: projects 4 and 9
    # hold none; groups come in the order their first cluster is declared
    groups = re.findall(r'^    subgraph dev_clusters_\w+\["([^"]+)"\]$', text, re.M)
    assert groups == [
        *(f"magnum BENCH {i}" for i in range(4)),
        "oke ocid1.compartment.oc1..aaaaaaaabenchdevexample",
        *(f"magnum BENCH {i}" for i in range(5, 9)),
    ]
    counts = [int(n) for n in re.findall(r'\["(\d+) clusters?<br/>', text)]
    assert counts == [2, 2, 2, 2, 4, 2, 2, 2, 2]
    assert "dev_pool_" not in text and "node pools, " in text
    assert "k8s-bench-00000-dev" not in text  # no cluster is named
    assert '{{"2 ArgoCD Clusters"}}' in text
    # the 20 cluster Applications are one node, after the clusters wave
    assert text.count("20 Applications, one per cluster<br/>dist/dev/clusters/*") == 1
    assert len(re.findall(r"dev_wave_\w+ --> dev_apps_\w+", text)) == 1


def test_a_group_node_counts_clusters_pools_and_nodes(small: Rendered) -> None:
    fleet, manifests = small
    text = to_mermaid(summary_graph(manifests, fleet=fleet, by="cloud"))
    # Magnum (i % 5 != 4): 4 node groups each; in dev, default-worker has 2 + i % 4 nodes
    # (56 over the 16) and each zone group 1 (48)
    assert (
        '    dev_cluster_magnum["16 clusters<br/>8 accounts<br/>kubernetes-1.25.3-3-multi<br/>'
        '64 node pools, 104 nodes"]\n'
    ) in text
    # OKE (i = 4, 9, 14, 19): "system" has 2 + i % 4 nodes (14), "batch" 3 + i % 4 (18):
    # OKE pools have a fixed size
    assert (
        '    dev_cluster_oke["4 clusters<br/>1 account<br/>v1.30.1<br/>8 node pools, 32 nodes"]\n'
    ) in text


def test_grouping_by_cloud_when_accounts_are_too_many(small: Rendered) -> None:
    fleet, manifests = small
    by_account = to_mermaid(summary_graph(manifests, fleet=fleet))
    fitted = fitted_mermaid(manifests, fleet=fleet, max_edges=arrows(by_account) - 1)
    assert "Clusters are grouped by cloud;" in fitted.notes[1]
    assert re.findall(r'^    subgraph dev_clusters_\w+\["([^"]+)"\]$', fitted.text, re.M) == [
        "magnum",
        "oke",
    ]
    assert arrows(fitted.text) < arrows(by_account)


def test_over_the_text_limit_is_summarized_too(small: Rendered) -> None:
    fleet, manifests = small
    full = to_mermaid(fleet_graph(manifests, fleet=fleet))
    fitted = fitted_mermaid(manifests, fleet=fleet, max_text=len(full) - 1)
    assert fitted.notes[0] == (
        f"Summarized: drawn in full, this graph has {len(full):,} characters "
        f"(Mermaid reads at most {len(full) - 1:,})."
    )
    assert len(fitted.text) < len(full) - 1
    assert fitted_mermaid(manifests, fleet=fleet, max_text=len(full)).text == full


def test_too_large_even_summarized_says_so(small: Rendered) -> None:
    fleet, manifests = small
    fitted = fitted_mermaid(manifests, fleet=fleet, max_edges=3)
    coarsest = to_mermaid(summary_graph(manifests, fleet=fleet, by="cloud"))
    assert (
        fitted.notes[-1]
        == f"Even summarized, it has {arrows(coarsest)} arrows (Mermaid draws at most 3)."
    )
    assert "Clusters are grouped by cloud;" in fitted.notes[1]


def test_summary_is_deterministic(small: Rendered, tmp_path: Path) -> None:
    fleet, manifests = small
    again = generated(tmp_path / "again", 20, 1)
    first = fitted_mermaid(manifests, fleet=fleet, max_edges=100)
    assert fitted_mermaid(again[1], fleet=again[0], max_edges=100) == first


def test_summary_of_the_tiny_fleet(tmp_path: Path) -> None:
    fleet, manifests = _tiny(tmp_path)
    assert to_mermaid(summary_graph({"dev": manifests}, fleet=fleet)) == (
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
        '    subgraph dev_clusters_magnum_PROJ["magnum PROJ"]\n'
        "      direction TB\n"
        '      dev_cluster_magnum_PROJ["1 cluster<br/>k8s-1.30<br/>2 node pools, 3 nodes"]\n'
        '      dev_registrations_magnum_PROJ{{"1 ArgoCD Cluster"}}\n'
        "    end\n"
        '    subgraph dev_packages["packages"]\n'
        "      direction TB\n"
        '      dev_package[["1 ApplicationSet<br/>monitoring"]]\n'
        "    end\n"
        "  end\n"
        "  dev_app_argocd_root --> dev_wave_argocd_root_m1\n"
        "  dev_wave_argocd_root_m1 --> dev_app_argocd_platform\n"
        "  dev_wave_argocd_root_m1 --> dev_wave_argocd_root_0\n"
        "  dev_wave_argocd_root_0 --> dev_app_argocd_clusters\n"
        "  dev_wave_argocd_root_0 --> dev_wave_argocd_root_1\n"
        "  dev_wave_argocd_root_1 --> dev_app_argocd_packages\n"
        "  dev_app_argocd_clusters -.-> dev_cluster_magnum_PROJ\n"
        '  dev_cluster_magnum_PROJ -.->|"registered"| dev_registrations_magnum_PROJ\n'
        "  dev_app_argocd_clusters -.-> dev_registrations_magnum_PROJ\n"
        "  dev_app_argocd_packages -.-> dev_package\n"
        '  dev_package -.->|"deploys to 1 cluster"| dev_cluster_magnum_PROJ\n'
    )


def test_without_the_fleet_clusters_are_one_group(tmp_path: Path) -> None:
    _, manifests = _tiny(tmp_path)
    text = to_mermaid(summary_graph({"dev": manifests}))
    assert '    subgraph dev_clusters["clusters"]\n' in text
    assert '      dev_cluster["1 cluster"]\n' in text


def test_unknown_grouping() -> None:
    with pytest.raises(ValueError, match="unknown grouping 'team'"):
        summary_graph({}, by="team")


def test_notes_are_comments_in_both_formats(tmp_path: Path) -> None:
    fleet, manifests = _tiny(tmp_path)
    graph = fleet_graph({"dev": manifests}, fleet=fleet)
    graph.notes = ["one", "two"]
    assert to_mermaid(graph).startswith("flowchart LR\n%% one\n%% two\n  subgraph dev")
    assert to_dot(graph).startswith("digraph fleet {\n  // one\n  // two\n  rankdir=LR;\n")


def test_a_realistic_fleet_stays_within_mermaid_limits(large: Rendered) -> None:
    fleet, manifests = large
    full = fleet_graph(manifests, fleet=fleet)
    assert len(full.edges) > 10 * MERMAID_MAX_EDGES
    fitted = fitted_mermaid(manifests, fleet=fleet, hint="hint")
    assert fitted.notes[0].startswith(
        f"Summarized: drawn in full, this graph has {len(full.edges):,} arrows"
    )
    assert "grouped by cloud and account" in fitted.notes[1]
    assert arrows(fitted.text) < MERMAID_MAX_EDGES
    assert len(fitted.text) < MERMAID_MAX_TEXT
    # every cluster is counted once, in its environment
    for env in ("dev", "test", "prod"):
        counts = re.findall(rf'      {env}_cluster_\w+\["(\d+) clusters?<br/>', fitted.text)
        assert sum(int(n) for n in counts) == 300, env
        assert f"300 Applications, one per cluster<br/>dist/{env}/clusters/*" in fitted.text


def test_cli_summarizes_a_large_fleet_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "bench"
    fleet_gen.write_project(root, clusters=100, envs=1)
    assert main(["--root", str(root), "graph"]) == 0
    out, err = capsys.readouterr()
    assert arrows(out) <= MERMAID_MAX_EDGES
    assert out.startswith("flowchart LR\n%% Summarized: drawn in full, this graph has ")
    assert "%% For every object: fleet graph --env NAME" in out
    assert err.startswith("note: Summarized: drawn in full, this graph has ")
    assert "--full" in err and "--format dot" in err
    assert main(["--root", str(root), "graph", "--full"]) == 0
    full, err = capsys.readouterr()
    assert arrows(full) > MERMAID_MAX_EDGES
    assert "%%" not in full and err == ""
    assert main(["--root", str(root), "graph", "--format", "dot"]) == 0
    dot, err = capsys.readouterr()
    assert dot.count(" -> ") == arrows(full)
    assert "  // " not in dot and err == ""


# --- which Application applies what, by folder ------------------------------------------


def _object(folder: str, name: str) -> Manifest:
    return Manifest(
        "dev", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}, folder, "t"
    )


def _check_appliers(manifests: list[Manifest], dist: str = "dist") -> None:
    """The index says what :func:`syncs` says, for every Application and object."""
    index = Appliers(manifests, dist=dist)
    for m in manifests:
        assert index.appliers(m) == [a for a in index.apps if syncs(a, m, dist=dist)], m
    for app in index.apps:
        assert index.count(app) == sum(1 for m in manifests if syncs(app, m, dist=dist)), app


def test_appliers_agree_with_syncs_on_odd_paths() -> None:
    apps = [
        _app("root", "dist/dev/bootstrap"),
        _app("all", "", recurse=True),
        _app("dot", "."),
        _app("slashes", "./dist/dev/clusters/"),
        _app("deep", "dist/dev/clusters", recurse=True),
        _app("one", "dist/dev/clusters/web"),
        _app("prefix", "dist/dev/clusters/we", recurse=True),
        _app("other", "dist/test/clusters", recurse=True),
    ]
    objects = [
        _object("clusters/web", "a"),
        _object("clusters/web/inner", "b"),
        _object("clusters/webby", "c"),
        _object("clusters", "d"),
        _object("", "e"),
    ]
    _check_appliers([*apps, *objects])
    _check_appliers([*apps, *objects], dist="")
    index = Appliers([*apps, *objects], dist="dist")
    assert [a.name for a in index.appliers(objects[0])] == ["all", "deep", "one"]
    assert [a.name for a in index.appliers(objects[2])] == ["all", "deep"]


def test_appliers_agree_with_syncs_on_the_example_fleet() -> None:
    fleet = load_fleet(FleetConfig.load(HYBRID))
    for env in fleet.environment_names:
        _check_appliers(render_environment(fleet, env))
