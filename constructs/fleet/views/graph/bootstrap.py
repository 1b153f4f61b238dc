"""Drawing the bootstrap: the root Application, its sync waves and the Applications of each."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence

from fleet.core.manifest import Identity, Manifest
from fleet.core.words import plural
from fleet.views.graph.argo import Appliers, source_paths, sources, sync_wave, syncs
from fleet.views.graph.model import Edge, Graph, Group, Ids, Node


def app_lines(app: Manifest, objects: int) -> tuple[str, ...]:
    """What an Application's node says: its name, chart, folders and object count."""
    lines = [f"Application {app.name}"]
    for source in sources(app):
        if isinstance(source.get("chart"), str):
            lines.append(f"chart {source['chart']} {source.get('targetRevision', '')}".strip())
    paths = [p for p, _ in source_paths(app)]
    if paths:
        lines.append(", ".join(paths))
        lines.append(plural(objects, "object"))
    return tuple(lines)


def draw_bootstrap(
    env: str,
    manifests: Sequence[Manifest],
    graph: Graph,
    group: Group,
    ids: Ids,
    appliers: Appliers,
    *,
    only: Collection[Identity] | None = None,
    fold: Callable[[Manifest], bool] | None = None,
) -> dict[Identity, str]:
    """Adds root -> waves -> Applications for ``env``; returns the id of each app.

    ``only``: keep just the Applications on the path to these objects. ``fold``: the
    Applications (of those that apply no other) drawn as one node per parent and wave.
    """
    apps = appliers.apps
    parents: dict[Identity, list[Manifest]] = {}
    children: dict[Identity, list[Manifest]] = defaultdict(list)
    for app in apps:
        parents[app.identity] = [p for p in appliers.appliers(app) if p.identity != app.identity]
    for app in apps:
        for parent_id in dict.fromkeys(p.identity for p in parents[app.identity]):
            children[parent_id].append(app)
    keep: set[Identity] | None = None
    if only is not None:
        keep = set()
        applying = {a.identity for m in objects_of(manifests, only) for a in appliers.appliers(m)}
        frontier = [a for a in apps if a.identity in applying]
        while frontier:
            app = frontier.pop()
            if app.identity not in keep:
                keep.add(app.identity)
                frontier.extend(parents[app.identity])
    folds: dict[tuple[tuple[Identity, ...], int], list[Manifest]] = defaultdict(list)
    folded: dict[Identity, tuple[tuple[Identity, ...], int]] = {}
    if fold is not None:
        for app in apps:
            if not children.get(app.identity) and fold(app):
                by = tuple(dict.fromkeys(p.identity for p in parents[app.identity]))
                folded[app.identity] = (by, sync_wave(app))
                folds[by, sync_wave(app)].append(app)
    node_ids: dict[Identity, str] = {}
    for app in apps:
        if keep is not None and app.identity not in keep:
            continue
        key = folded.get(app.identity)
        if key is None:
            node_id = ids(env, "app", app.namespace, app.name)
            group.nodes.append(Node(node_id, app_lines(app, appliers.count(app)), shape="app"))
        else:
            members = folds[key]
            node_id = ids(env, "apps", *(name for _, _, _, name in key[0]), str(key[1]))
            if app is members[0]:
                objects = sum(appliers.count(a) for a in members)
                group.nodes.append(Node(node_id, folded_lines(members, objects), shape="app"))
        node_ids[app.identity] = node_id
    # children of each app, ordered by wave: app -> wave a -> wave b -> ...
    for parent in apps:
        if parent.identity not in node_ids:
            continue
        by_wave: dict[int, list[Manifest]] = defaultdict(list)
        for child in children[parent.identity]:
            if child.identity in node_ids:
                by_wave[sync_wave(child)].append(child)
        previous = node_ids[parent.identity]
        for wave in sorted(by_wave):
            wave_id = ids(
                env, "wave", parent.namespace, parent.name, f"m{-wave}" if wave < 0 else str(wave)
            )
            group.nodes.append(Node(wave_id, (f"wave {wave}",), shape="wave"))
            graph.edges.append(Edge(previous, wave_id))
            previous = wave_id
            drawn: set[str] = set()  # folded Applications share a node and its arrow
            for child in sorted(by_wave[wave], key=lambda a: a.name):
                child_id = node_ids[child.identity]
                if child.identity in folded:
                    if child_id in drawn:
                        continue
                    drawn.add(child_id)
                graph.edges.append(Edge(wave_id, child_id))
    return node_ids


def folded_lines(apps: Sequence[Manifest], objects: int) -> tuple[str, ...]:
    """What a node standing for several Applications says: how many, where, how much."""
    lines = [f"{plural(len(apps), 'Application')}, one per cluster"]
    paths = list(dict.fromkeys(p for a in apps for p, _ in source_paths(a)))
    above = {p.rsplit("/", 1)[0] for p in paths}
    if len(paths) > 1 and len(above) == 1:
        lines.append(f"{above.pop()}/*")
    elif len(paths) == 1:
        lines.append(paths[0])
    lines.append(plural(objects, "object"))
    return tuple(lines)


def objects_of(manifests: Sequence[Manifest], identities: Collection[Identity]) -> list[Manifest]:
    """The manifests of ``identities``, in order."""
    return [m for m in manifests if m.identity in identities]


def leaf_apps(apps: Mapping[Identity, str], appliers: Appliers, m: Manifest) -> list[str]:
    """Ids of the innermost Applications that apply ``m``.

    An Application that applies another Application which also applies ``m`` (an
    app-of-apps whose source recurses) is left out: the arrow comes from the step.
    """
    syncing = [a for a in appliers.appliers(m) if a.identity in apps and a.identity != m.identity]
    return [
        apps[a.identity]
        for a in syncing
        if not any(b is not a and syncs(a, b, dist=appliers.dist) for b in syncing)
    ]


def apps_for(
    app_ids: Mapping[Identity, str], appliers: Appliers, objects: Sequence[Manifest]
) -> list[str]:
    """Ids of the Applications that apply any of ``objects``, in first-seen order."""
    out: list[str] = []
    for m in objects:
        for app_id in leaf_apps(app_ids, appliers, m):
            if app_id not in out:
                out.append(app_id)
    return out
