"""What a change touches: the changed objects and the Applications and waves that apply them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from fleet.core.manifest import Identity, Manifest
from fleet.views.graph.argo import Appliers
from fleet.views.graph.bootstrap import draw_bootstrap, leaf_apps, objects_of
from fleet.views.graph.model import Edge, Graph, Group, Ids, Node
from fleet.views.graph.write import to_mermaid


def touched_graph(
    manifests: Iterable[Manifest] | Mapping[str, Sequence[Manifest]],
    changed: Collection[tuple[str, Identity]],
    *,
    dist: str = "dist",
) -> Graph:
    """The part of the bootstrap a change touches: per environment, the changed objects
    (grouped by cluster folder) and the chain of Applications and waves that applies them.

    ``manifests`` should hold the objects of both sides of the change, so that removed
    objects can be placed too.
    """
    flat = (
        [m for ms in manifests.values() for m in ms]
        if isinstance(manifests, Mapping)
        else list(manifests)
    )
    by_env: dict[str, list[Manifest]] = defaultdict(list)
    seen: set[tuple[str, Identity]] = set()
    for m in flat:
        key = (m.environment, m.identity)
        if key not in seen:  # a changed object is in both sides; place it once
            seen.add(key)
            by_env[m.environment].append(m)
    graph = Graph()
    ids = Ids()
    for env in sorted({env for env, _ in changed}, key=_env_order(by_env)):
        rendered = by_env.get(env, [])
        wanted = {identity for e, identity in changed if e == env}
        env_group = Group(ids(env), env)
        graph.groups.append(env_group)
        bootstrap = Group(ids(env, "bootstrap"), "bootstrap")
        appliers = Appliers(rendered, dist=dist)
        app_ids = draw_bootstrap(env, rendered, graph, bootstrap, ids, appliers, only=wanted)
        env_group.groups.append(bootstrap)
        folders: dict[str, Group] = {}
        for m in objects_of(rendered, wanted):
            if m.identity in app_ids:
                continue  # a changed Application is already in the bootstrap group
            folder = m.folder or "(top)"
            group = folders.get(folder)
            if group is None:
                group = folders[folder] = Group(ids(env, "folder", folder), folder)
                env_group.groups.append(group)
            node_id = ids(env, m.kind, m.namespace, m.name)
            ns = f"{m.namespace}/" if m.namespace else ""
            group.nodes.append(Node(node_id, (m.kind, f"{ns}{m.name}"), shape="object"))
            for app_id in leaf_apps(app_ids, appliers, m):
                graph.edges.append(Edge(app_id, node_id, dashed=True))
    return graph


def _env_order(by_env: Mapping[str, Sequence[Manifest]]) -> Any:
    order = {env: i for i, env in enumerate(by_env)}
    return lambda env: (order.get(env, len(order)), env)


def touched_subgraph(
    manifests: Iterable[Manifest] | Mapping[str, Sequence[Manifest]],
    changed_identities: Collection[tuple[str, Identity]],
    *,
    dist: str = "dist",
) -> str:
    """A fenced Mermaid block of what a change touches, for Markdown ("" if nothing).

    ``changed_identities`` are ``(environment, (group, kind, namespace, name))`` pairs.
    """
    if not changed_identities:
        return ""
    diagram = to_mermaid(touched_graph(manifests, changed_identities, dist=dist))
    return f"```mermaid\n{diagram}```\n"
