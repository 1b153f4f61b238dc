"""Benchmark the construct tree: microseconds per node, against a jsii construct.

Usage: ``python benchmarks/tree_bench.py [--nodes N] [--repeat R] [--jsii] [--json]``

Measures, best of R runs, per node (CPU time of this process, which a loaded machine
disturbs less than wall time; jsii in wall time, its work is in the Node process):

* ``node_us``: the tree's own part of every construct, ``scope.node.add_child`` (id
  check, duplicate check, path, the node), 10 children per scope;
* ``component_us``: ``Component(scope, id)``, the plain scope (caller location, id
  check, node, environments), 10 components per scope;
* ``project_us``: ``OpenStackProject(fleet, id, ...)``, the smallest declaration (the
  node, the sealing, the keyword check and the project's own checks);
* ``magnum_us``: a ``MagnumCluster`` with one node group (mostly its input checks:
  the tree is a small part of it);
* ``phases_us``: ``fleet.run_phases()`` per declaration (lock, an Aspect visiting every
  node, the prepare hooks, the validations);
* with ``--jsii``: ``jsii_construct_us``, a ``constructs.Construct(chart, id)`` created
  through jsii in Node.js (``import cdk8s`` and the first chart not timed).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fleet import (
    Aspects,
    ClusterTemplate,
    Component,
    Fleet,
    FleetConfig,
    MagnumCluster,
    NodeGroup,
    OpenStackProject,
)
from fleet.core.tree import TreeConstruct


def best(repeat: int, run: Callable[[], float]) -> float:
    """The smallest of ``repeat`` timings."""
    return min(run() for _ in range(repeat))


def new_fleet(root: Path) -> Fleet:
    """An empty fleet of three environments."""
    return Fleet(FleetConfig(root=root))


class _Bare(TreeConstruct):
    pass


def time_nodes(root: Path, nodes: int) -> float:
    fleet = new_fleet(root)
    scopes = [Component(fleet, f"scope-{i}") for i in range(nodes // 10 + 1)]
    hosts = [_Bare() for _ in range(nodes)]
    start = time.process_time()
    for i, host in enumerate(hosts):
        host.node = scopes[i // 10].node.add_child(host, f"c-{i}", "bench")
    return (time.process_time() - start) / nodes * 1e6


def time_components(root: Path, nodes: int) -> float:
    fleet = new_fleet(root)
    scopes = [Component(fleet, f"scope-{i}") for i in range(nodes // 10 + 1)]
    start = time.process_time()
    for i in range(nodes):
        Component(scopes[i // 10], f"c-{i}")
    return (time.process_time() - start) / nodes * 1e6


def time_projects(root: Path, nodes: int) -> float:
    fleet = new_fleet(root)
    start = time.process_time()
    for i in range(nodes):
        OpenStackProject(fleet, f"p-{i}", project_name="P")
    return (time.process_time() - start) / nodes * 1e6


def time_clusters(root: Path, nodes: int) -> float:
    fleet = new_fleet(root)
    template = ClusterTemplate(
        name="tpl",
        kubernetes_version="v1.29.2",
        uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
        base_labels={"kube_tag": "v1"},
    )
    project = OpenStackProject(fleet, "p", project_name="P")
    group = [NodeGroup(name="zone-a", flavor="m2.small", node_count=1)]
    start = time.process_time()
    for i in range(nodes):
        MagnumCluster(
            fleet,
            f"c-{i}",
            name=f"c-{i}",
            environments=["dev", "prod"],
            project=project,
            template=template,
            flavor="m2.small",
            keypair="k",
            node_count=1,
            node_groups=group,
        )
    return (time.process_time() - start) / nodes * 1e6


class _Count:
    def __init__(self) -> None:
        self.seen = 0

    def visit(self, node: Any) -> None:
        self.seen += 1


def time_phases(root: Path, nodes: int) -> float:
    fleet = new_fleet(root)
    teams = [Component(fleet, f"team-{i}") for i in range(nodes // 10 + 1)]
    for i in range(nodes):
        project = OpenStackProject(teams[i // 10], f"p-{i}", project_name="P")
        project.node.add_validation(list)
    Aspects.of(fleet).add(_Count())
    start = time.process_time()
    fleet.run_phases()
    return (time.process_time() - start) / nodes * 1e6


def time_jsii(nodes: int) -> float:
    import cdk8s
    from constructs import Construct

    chart = cdk8s.Chart(cdk8s.App(), "bench")
    Construct(chart, "warm-up")
    start = time.perf_counter()
    for i in range(nodes):
        Construct(chart, f"c-{i}")
    return (time.perf_counter() - start) / nodes * 1e6


def main() -> None:
    """Run the benchmark and print a table or one line of JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jsii", action="store_true", help="also time jsii constructs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        n, r = args.nodes, args.repeat
        result = {
            "nodes": n,
            "node_us": best(r, lambda: time_nodes(root, n)),
            "component_us": best(r, lambda: time_components(root, n)),
            "project_us": best(r, lambda: time_projects(root, n)),
            "magnum_us": best(r, lambda: time_clusters(root, min(n, 2_000))),
            "phases_us": best(r, lambda: time_phases(root, n)),
        }
        if args.jsii:
            result["jsii_construct_us"] = best(r, lambda: time_jsii(min(n, 1_000)))
    if args.json:
        print(json.dumps({k: round(v, 2) for k, v in result.items()}))
        return
    for key, value in result.items():
        print(f"{key:>20}  {value:10.2f}")


if __name__ == "__main__":
    main()
