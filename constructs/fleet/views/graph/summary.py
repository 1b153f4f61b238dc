"""A large fleet's graph within Mermaid's limits: clusters grouped by cloud and account."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from fleet.clouds.base import FleetCluster
from fleet.core.fleet import Fleet
from fleet.core.manifest import Manifest
from fleet.core.words import plural
from fleet.views.graph.argo import CLUSTERS_FOLDER, source_paths, sources
from fleet.views.graph.bootstrap import apps_for, draw_bootstrap
from fleet.views.graph.model import Edge, Graph, Group, Ids, Node
from fleet.views.graph.structure import environments, fleet_graph
from fleet.views.graph.write import to_mermaid
from fleet.views.inventory import node_totals

MERMAID_MAX_EDGES = 500
"""Mermaid's default ``maxEdges``: a flowchart with more arrows is an error ("Edge limit
exceeded"). GitHub and GitLab keep the default, and a diagram cannot raise it (it is a
secure setting)."""
MERMAID_MAX_TEXT = 50_000
"""Mermaid's default ``maxTextSize``: characters of diagram text it reads at most."""
GROUPINGS = ("account", "cloud")
"""How :func:`summary_graph` groups clusters, finest first: by cloud and account (OpenStack
project, OCI compartment), or by cloud alone."""


def _cluster_app(env: str, dist: str) -> Callable[[Manifest], bool]:
    """Whether an Application applies one cluster's folder and nothing else."""
    prefix = f"{dist.strip('/')}/{env}/{CLUSTERS_FOLDER}"

    def check(app: Manifest) -> bool:
        paths = [p for p, _ in source_paths(app)]
        if not paths or len(paths) != len(sources(app)):
            return False  # no folder, or a Helm chart too
        owners = set()
        for path in paths:
            if not path.startswith(prefix):
                return False
            owners.add(path[len(prefix) :].split("/", 1)[0])
        return len(owners) == 1 and "" not in owners

    return check


def _summary_lines(
    env: str, names: Sequence[str], declared: Mapping[str, FleetCluster], by: str
) -> tuple[str, ...]:
    members = [declared[n] for n in names if n in declared]
    retired = [c for c in members if c.is_retired(env)]
    head = plural(len(names), "cluster") + (f", {len(retired)} retired" if retired else "")
    lines = [head]
    if by == "cloud" and members:
        lines.append(plural(len({c.account(env) for c in members}), "account"))
    versions = list(
        dict.fromkeys(c.template_name(env) or c.kubernetes_version(env) for c in members)
    )
    if versions:
        shown = ", ".join(versions[:3])
        lines.append(shown + (f" and {len(versions) - 3} more" if len(versions) > 3 else ""))
    pools = [p for c in members if c not in retired for p in c.node_pools(env)]
    if pools:
        lines.append(f"{plural(len(pools), 'node pool')}, {node_totals(pools).text()} nodes")
    return tuple(lines)


def summary_graph(
    manifests: Mapping[str, Sequence[Manifest]],
    *,
    fleet: Fleet | None = None,
    dist: str = "dist",
    by: str = "account",
) -> Graph:
    """:func:`fleet_graph` folded for a large fleet: a few dozen arrows per environment.

    Per environment the clusters are grouped ``by`` cloud and account (OpenStack project,
    OCI compartment), or by ``cloud`` alone; each group is one node with its cluster
    count, versions, node pools and nodes, plus one node counting its ArgoCD
    registrations. The Applications that each apply one cluster's folder are one node
    per wave, and the packages one node, with an arrow to each group they deploy to.
    """
    if by not in GROUPINGS:
        raise ValueError(f"unknown grouping {by!r} (known: {', '.join(GROUPINGS)})")
    graph = Graph()
    ids = Ids()
    for e in environments(manifests, fleet, dist):
        env = e.name
        env_group = Group(ids(env), env)
        graph.groups.append(env_group)
        bootstrap = Group(ids(env, "bootstrap"), "bootstrap")
        fold = _cluster_app(env, dist)
        app_ids = draw_bootstrap(env, e.rendered, graph, bootstrap, ids, e.appliers, fold=fold)
        env_group.groups.append(bootstrap)

        groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for name in e.names:
            cluster = e.declared.get(name)
            key: tuple[str, ...] = ()
            if cluster is not None:
                key = (cluster.cloud,) if by == "cloud" else (cluster.cloud, cluster.account(env))
            groups[key].append(name)
        group_ids: dict[str, str] = {}
        for key, names in groups.items():
            node_id = ids(env, "cluster", *key)
            group = Group(ids(env, "clusters", *key), " ".join(key) or "clusters")
            env_group.groups.append(group)
            members = [e.declared[n] for n in names if n in e.declared]
            group.nodes.append(
                Node(
                    node_id,
                    _summary_lines(env, names, e.declared, by),
                    dashed=bool(members) and all(c.is_retired(env) for c in members),
                )
            )
            for name in names:
                group_ids[name] = node_id
            own = [m for name in names for m in e.own(name)]
            for app_id in apps_for(app_ids, e.appliers, own):
                graph.edges.append(Edge(app_id, node_id, dashed=True))
            registrations = [r for name in names for r in e.registrations[name]]
            if registrations:
                reg_id = ids(env, "registrations", *key)
                group.nodes.append(
                    Node(
                        reg_id,
                        (plural(len(registrations), "ArgoCD Cluster"),),
                        shape="registration",
                    )
                )
                graph.edges.append(Edge(node_id, reg_id, "registered", dashed=True))
                for app_id in apps_for(app_ids, e.appliers, registrations):
                    graph.edges.append(Edge(app_id, reg_id, dashed=True))

        if e.packages:
            group = Group(ids(env, "packages"), "packages")
            env_group.groups.append(group)
            pkg_id = ids(env, "package")
            names = [p.name for p in e.packages]
            shown = names if len(names) <= 5 else [*names[:4], f"and {len(names) - 4} more"]
            lines = (plural(len(names), "ApplicationSet"), *shown)
            group.nodes.append(Node(pkg_id, lines, shape="package"))
            for app_id in apps_for(app_ids, e.appliers, e.packages):
                graph.edges.append(Edge(app_id, pkg_id, dashed=True))
            reached: dict[str, set[str]] = defaultdict(set)
            for appset in e.packages:
                for target in e.targets(appset):
                    reached[group_ids[target]].add(target)
            for target_id, clusters in reached.items():
                label = f"deploys to {plural(len(clusters), 'cluster')}"
                graph.edges.append(Edge(pkg_id, target_id, label, dashed=True))
    return graph


@dataclass(frozen=True)
class FittedMermaid:
    """A Mermaid flowchart within Mermaid's limits, and why it is summarized (if it is)."""

    text: str
    notes: tuple[str, ...] = ()
    """Empty when the graph is drawn in full; also the comments at the top of ``text``."""


def _overflow(graph: Graph, max_edges: int, max_text: int) -> tuple[str, str]:
    """The Mermaid text, and what of Mermaid's limits it is over ("" when none)."""
    text = to_mermaid(graph)
    if len(graph.edges) > max_edges:
        return text, f"{len(graph.edges):,} arrows (Mermaid draws at most {max_edges:,})"
    if len(text) > max_text:
        return text, f"{len(text):,} characters (Mermaid reads at most {max_text:,})"
    return text, ""


def fitted_mermaid(
    manifests: Mapping[str, Sequence[Manifest]],
    *,
    fleet: Fleet | None = None,
    dist: str = "dist",
    max_edges: int = MERMAID_MAX_EDGES,
    max_text: int = MERMAID_MAX_TEXT,
    hint: str = "",
) -> FittedMermaid:
    """:func:`fleet_graph` as Mermaid when it is within ``max_edges`` arrows and
    ``max_text`` characters, else the finest :func:`summary_graph` that is.

    A summary starts with comments saying so, what the full graph was over, and
    ``hint`` (how to get every object); if even the coarsest summary is over, it is
    returned anyway and says that too.
    """
    text, over = _overflow(fleet_graph(manifests, fleet=fleet, dist=dist), max_edges, max_text)
    if not over:
        return FittedMermaid(text)
    for by in GROUPINGS:
        graph = summary_graph(manifests, fleet=fleet, dist=dist, by=by)
        grouping = "cloud and account" if by == "account" else "cloud"
        graph.notes = [
            f"Summarized: drawn in full, this graph has {over}.",
            f"Clusters are grouped by {grouping}; node pools, cluster Applications, "
            "ArgoCD registrations and packages are counted.",
        ]
        if hint:
            graph.notes.append(hint)
        text, still = _overflow(graph, max_edges, max_text)
        if not still:
            return FittedMermaid(text, tuple(graph.notes))
        if by == GROUPINGS[-1]:
            # The coarsest summary is returned anyway, saying it is still over.
            graph.notes.append(f"Even summarized, it has {still}.")
            return FittedMermaid(to_mermaid(graph), tuple(graph.notes))
    raise AssertionError("GROUPINGS is empty")
