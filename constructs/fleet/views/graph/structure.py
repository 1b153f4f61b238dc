"""The whole fleet as a graph: per environment, its bootstrap, clusters (with what the
declarations say about them), registrations and packages."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from fleet.clouds.base import FleetCluster, NodePoolSummary
from fleet.core.fleet import Fleet
from fleet.core.manifest import Manifest
from fleet.views.graph.argo import (
    ARGO_GROUP,
    REGISTRATION_GROUP,
    Appliers,
    cluster_folder,
    package_targets,
    registered_cluster,
)
from fleet.views.graph.bootstrap import apps_for, draw_bootstrap
from fleet.views.graph.model import Edge, Graph, Group, Ids, Node
from fleet.views.inventory import node_totals


def pool_line(pool: NodePoolSummary) -> str:
    """``name: 3 x flavor`` for a node pool (``flavor (inherited)`` where the pool inherits
    it, ``(inherited size)`` where its size is not known)."""
    totals = node_totals([pool]).text()
    size = pool.machine_size or "(inherited size)"
    if pool.machine_size and pool.size_inherited:
        size += " (inherited)"
    return f"{pool.name}: {totals} x {size}"


@dataclass
class EnvironmentView:
    """One environment's clusters, registrations and packages, as the graph sees them."""

    name: str
    rendered: Sequence[Manifest]
    appliers: Appliers
    declared: dict[str, FleetCluster]
    """The clusters placed in the environment, by their name there."""
    names: list[str]
    """Every cluster: the declared ones, then the folders of undeclared ones."""
    folders: dict[str, list[Manifest]]
    registrations: dict[str, list[Manifest]]
    """The provider-argocd ``Cluster`` objects of each cluster."""
    packages: list[Manifest]
    """The ApplicationSets."""

    def own(self, name: str) -> list[Manifest]:
        """The objects in the cluster's folder, its registration left out."""
        return [m for m in self.folders.get(name, []) if m not in self.registrations[name]]

    def targets(self, appset: Manifest) -> list[str]:
        """The clusters a package deploys to (once per registration selected)."""
        every_registration = [r for regs in self.registrations.values() for r in regs]
        known = set(self.names)
        found = (registered_cluster(r, known) for r in package_targets(appset, every_registration))
        return [name for name in found if name is not None]


def environments(
    manifests: Mapping[str, Sequence[Manifest]], fleet: Fleet | None, dist: str
) -> Iterable[EnvironmentView]:
    """Each environment of ``manifests``, with what the graph needs to know about it."""
    clusters: list[FleetCluster] = (
        [c for c in fleet.declarations() if isinstance(c, FleetCluster)] if fleet else []
    )
    for env, rendered in manifests.items():
        folders: dict[str, list[Manifest]] = defaultdict(list)
        for m in rendered:
            folder = cluster_folder(m)
            if folder:
                folders[folder].append(m)
        declared = {c.object_name(env): c for c in clusters if env in c.environments}
        names = list(declared) + [f for f in folders if f not in declared]
        known = set(names)
        registrations: dict[str, list[Manifest]] = defaultdict(list)
        for m in rendered:
            if m.group == REGISTRATION_GROUP and m.kind == "Cluster":
                owner = registered_cluster(m, known)
                if owner is not None:
                    registrations[owner].append(m)
        packages = [m for m in rendered if m.group == ARGO_GROUP and m.kind == "ApplicationSet"]
        yield EnvironmentView(
            env,
            rendered,
            Appliers(rendered, dist=dist),
            declared,
            names,
            folders,
            registrations,
            packages,
        )


def fleet_graph(
    manifests: Mapping[str, Sequence[Manifest]],
    *,
    fleet: Fleet | None = None,
    dist: str = "dist",
) -> Graph:
    """The bootstrap order and structure of each environment in ``manifests``.

    Per environment: root Application -> sync waves -> Applications; clusters (with
    cloud, template or version, node pools from ``fleet`` when given), their ArgoCD
    registrations, and the packages (ApplicationSets) with the clusters they select.
    """
    graph = Graph()
    ids = Ids()
    for e in environments(manifests, fleet, dist):
        env = e.name
        env_group = Group(ids(env), env)
        graph.groups.append(env_group)
        bootstrap = Group(ids(env, "bootstrap"), "bootstrap")
        app_ids = draw_bootstrap(env, e.rendered, graph, bootstrap, ids, e.appliers)
        env_group.groups.append(bootstrap)

        cluster_ids: dict[str, str] = {}
        for name in e.names:
            cluster = e.declared.get(name)
            node_id = ids(env, "cluster", name)
            cluster_ids[name] = node_id
            group = Group(ids(env, "clusters", name), name)
            env_group.groups.append(group)
            if cluster is not None:
                version = cluster.template_name(env) or cluster.kubernetes_version(env)
                # the group's title is the name; the node says what the cluster is
                lines = [f"{cluster.cloud} {version}"]
                retired = cluster.is_retired(env)
                if retired:
                    lines.append("retired: renders nothing")
                else:
                    lines.append(f"{node_totals(cluster.node_pools(env)).text()} nodes")
                group.nodes.append(Node(node_id, tuple(lines), dashed=retired))
                for pool in cluster.node_pools(env) if not retired else []:
                    pool_id = ids(env, "pool", name, pool.name)
                    group.nodes.append(Node(pool_id, (pool_line(pool),), shape="round"))
                    graph.edges.append(Edge(node_id, pool_id))
            else:
                group.nodes.append(Node(node_id, (name,)))
            for app_id in apps_for(app_ids, e.appliers, e.own(name)):
                graph.edges.append(Edge(app_id, node_id, dashed=True))
            for reg in e.registrations[name]:
                reg_id = ids(env, "registration", reg.namespace, reg.name)
                group.nodes.append(
                    Node(reg_id, (f"ArgoCD Cluster {reg.name}",), shape="registration")
                )
                graph.edges.append(Edge(node_id, reg_id, "registered", dashed=True))
                for app_id in apps_for(app_ids, e.appliers, [reg]):
                    graph.edges.append(Edge(app_id, reg_id, dashed=True))

        if e.packages:
            group = Group(ids(env, "packages"), "packages")
            env_group.groups.append(group)
            for appset in e.packages:
                pkg_id = ids(env, "package", appset.namespace, appset.name)
                group.nodes.append(
                    Node(pkg_id, (f"ApplicationSet {appset.name}",), shape="package")
                )
                for app_id in apps_for(app_ids, e.appliers, [appset]):
                    graph.edges.append(Edge(app_id, pkg_id, dashed=True))
                for target in e.targets(appset):
                    graph.edges.append(Edge(pkg_id, cluster_ids[target], "deploys to", dashed=True))
    return graph
