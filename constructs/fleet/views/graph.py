"""The fleet as a diagram: bootstrap order and structure, in Mermaid or Graphviz DOT.

Pure: a :class:`Graph` is built from the rendered manifests (and, when given, the
loaded :class:`~fleet.Fleet` for cluster details), then written as text. The bootstrap
order comes from the ArgoCD ``Application`` objects in the manifests, their sync-wave
annotations and the folders their sources point at, so it is true to ``dist/``
whatever the bootstrap constructs choose to render.

A large fleet's graph is past what Mermaid draws (:data:`MERMAID_MAX_EDGES` arrows,
:data:`MERMAID_MAX_TEXT` characters): :func:`fitted_mermaid` then draws
:func:`summary_graph`, with groups of similar objects as one node each.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleet.clouds.base import FleetCluster, NodePoolSummary
from fleet.core import layout
from fleet.core.fleet import Fleet
from fleet.core.manifest import Identity, Manifest
from fleet.views.inventory import node_totals

ARGO_GROUP = "argoproj.io"
REGISTRATION_GROUP = "cluster.argocd.crossplane.io"
SYNC_WAVE = layout.SYNC_WAVE
CLUSTERS_FOLDER = layout.CLUSTERS + "/"
CLUSTER_LABEL = "fleet/cluster"

FORMATS = ("mermaid", "dot")

MERMAID_MAX_EDGES = 500
"""Mermaid's default ``maxEdges``: a flowchart with more arrows is an error ("Edge limit
exceeded"). GitHub and GitLab keep the default, and a diagram cannot raise it (it is a
secure setting)."""
MERMAID_MAX_TEXT = 50_000
"""Mermaid's default ``maxTextSize``: characters of diagram text it reads at most."""
GROUPINGS = ("account", "cloud")
"""How :func:`summary_graph` groups clusters, finest first: by cloud and account (OpenStack
project, OCI compartment), or by cloud alone."""

# shape name -> (Mermaid opening, closing), Graphviz shape
_SHAPES: dict[str, tuple[str, str, str]] = {
    "box": ("[", "]", "box"),
    "round": ("(", ")", "box"),
    "app": ("([", "])", "box"),
    "wave": ("((", "))", "circle"),
    "registration": ("{{", "}}", "hexagon"),
    "package": ("[[", "]]", "component"),
    "object": ("[", "]", "note"),
}


@dataclass(frozen=True)
class Node:
    """A box in the diagram; ``lines`` are shown one under the other."""

    id: str
    lines: tuple[str, ...]
    shape: str = "box"
    dashed: bool = False


@dataclass(frozen=True)
class Edge:
    """An arrow; dashed arrows are relations rather than steps."""

    source: str
    target: str
    label: str = ""
    dashed: bool = False


@dataclass
class Group:
    """A labelled box around nodes and nested groups (a Mermaid subgraph, a DOT cluster)."""

    id: str
    label: str
    nodes: list[Node] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)

    def is_empty(self) -> bool:
        """No node here or below."""
        return not self.nodes and all(g.is_empty() for g in self.groups)


@dataclass
class Graph:
    """Groups, loose nodes and edges, in the order they are written; ``notes`` become
    comments at the top (one line each)."""

    groups: list[Group] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _Ids:
    """Readable, unique, deterministic ids (``[A-Za-z0-9_]``) for arbitrary keys."""

    def __init__(self) -> None:
        self._by_key: dict[str, str] = {}
        self._used: set[str] = set()

    def __call__(self, *parts: str) -> str:
        key = "\0".join(parts)
        found = self._by_key.get(key)
        if found is not None:
            return found
        base = re.sub(r"[^A-Za-z0-9]+", "_", "_".join(parts)).strip("_") or "n"
        if base[0].isdigit():
            base = "n" + base
        candidate, n = base, 2
        while candidate in self._used:
            candidate, n = f"{base}_{n}", n + 1
        self._used.add(candidate)
        self._by_key[key] = candidate
        return candidate


# --- reading the rendered ArgoCD objects ---------------------------------------------


def _annotations(m: Manifest) -> Mapping[str, Any]:
    annotations = m.body.get("metadata", {}).get("annotations") or {}
    return annotations if isinstance(annotations, Mapping) else {}


def sync_wave(m: Manifest) -> int:
    """The object's ArgoCD sync wave (0 when not annotated or not a number)."""
    try:
        return int(str(_annotations(m).get(SYNC_WAVE, "0")).strip())
    except ValueError:
        return 0


def _is_application(m: Manifest) -> bool:
    return m.group == ARGO_GROUP and m.kind == "Application"


def _sources(app: Manifest) -> list[Mapping[str, Any]]:
    spec = app.body.get("spec") or {}
    sources = [spec["source"]] if isinstance(spec.get("source"), Mapping) else []
    sources += [s for s in spec.get("sources") or [] if isinstance(s, Mapping)]
    return sources


def source_paths(app: Manifest) -> list[tuple[str, bool]]:
    """(path, recurse) of each directory source of an Application, normalised."""
    out = []
    for source in _sources(app):
        path = source.get("path")
        if not isinstance(path, str):
            continue
        path = path.strip().strip("/")
        while path.startswith("./"):
            path = path[2:]
        directory = source.get("directory") or {}
        out.append((path, bool(directory.get("recurse", False))))
    return out


def repo_path(m: Manifest, *, dist: str) -> str:
    """Where ``m``'s file sits in the repository (``dist/dev/clusters/x/...yaml``)."""
    return f"{dist.strip('/')}/{m.environment}/{m.relpath}"


def syncs(app: Manifest, m: Manifest, *, dist: str) -> bool:
    """Whether ``app`` (a directory Application) applies ``m``'s file."""
    file = repo_path(m, dist=dist)
    for path, recurse in source_paths(app):
        prefix = f"{path}/" if path not in ("", ".") else ""
        if file.startswith(prefix):
            rest = file[len(prefix) :]
            if recurse or "/" not in rest:
                return True
    return False


def _directory(file: str) -> str | None:
    """The folder part of a repository path (None for a file at the top)."""
    return file.rsplit("/", 1)[0] if "/" in file else None


class _Appliers:
    """Which Applications apply which objects, found through the objects' folders.

    :func:`syncs` only looks at the folder of an object's file (a file name holds no
    slash), so each Application is matched against the folders once, a recursive one
    against every folder, instead of against every object: at 1,000 clusters (one
    Application each, 10,000 objects) that is ten million tests per environment fewer.
    """

    def __init__(self, manifests: Sequence[Manifest], *, dist: str) -> None:
        self.dist = dist
        self.apps = [m for m in manifests if _is_application(m)]
        """The Applications, in the order of the manifests."""
        self._objects: dict[str | None, int] = defaultdict(int)
        for m in manifests:
            self._objects[_directory(repo_path(m, dist=dist))] += 1
        self._folders: dict[int, list[str | None]] = {}
        self._by_folder: dict[str | None, list[Manifest]] = defaultdict(list)
        for app in self.apps:
            folders = self._applied(app)
            self._folders[id(app)] = folders
            for folder in folders:
                self._by_folder[folder].append(app)

    def _applied(self, app: Manifest) -> list[str | None]:
        """The folders (holding objects) whose files ``app`` applies, as :func:`syncs` says."""
        out: list[str | None] = []
        for path, recurse in source_paths(app):
            if path in ("", "."):
                # every repository path holds a slash: only a recursive source applies it
                out.extend(self._objects if recurse else [f for f in self._objects if f is None])
            elif recurse:
                below = f"{path}/"
                out.extend(
                    f for f in self._objects if f is not None and (f == path or f.startswith(below))
                )
            elif path in self._objects:
                out.append(path)
        return list(dict.fromkeys(out))

    def appliers(self, m: Manifest) -> list[Manifest]:
        """The Applications that apply ``m``, in the order of the manifests."""
        folder = _directory(repo_path(m, dist=self.dist))
        if folder in self._objects:
            return self._by_folder.get(folder, [])
        return [a for a in self.apps if syncs(a, m, dist=self.dist)]

    def count(self, app: Manifest) -> int:
        """How many of the manifests ``app`` (one of :attr:`apps`) applies."""
        return sum(self._objects[f] for f in self._folders[id(app)])


def _cluster_folder(m: Manifest) -> str | None:
    """``x`` for an object in ``clusters/x/...``."""
    if not m.folder.startswith(CLUSTERS_FOLDER):
        return None
    return m.folder[len(CLUSTERS_FOLDER) :].split("/", 1)[0] or None


def registered_cluster(registration: Manifest, clusters: Collection[str]) -> str | None:
    """Which of ``clusters`` a provider-argocd ``Cluster`` registers.

    By its folder (``clusters/<name>/``), else its ``fleet/cluster`` label, else the
    ArgoCD cluster name, else its own name; None when none is a known cluster.
    """
    for_provider = (registration.body.get("spec") or {}).get("forProvider") or {}
    labels = for_provider.get("labels") or {}
    for candidate in (
        _cluster_folder(registration),
        labels.get(CLUSTER_LABEL),
        for_provider.get("name"),
        registration.name,
    ):
        if candidate in clusters:
            return str(candidate)
    return None


def _selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if (
            (op == "In" and labels.get(key) not in values)
            or (op == "NotIn" and present and labels.get(key) in values)
            or (op == "Exists" and not present)
            or (op == "DoesNotExist" and present)
        ):
            return False
    return True


def _cluster_selectors(generators: Iterable[Any]) -> list[Mapping[str, Any]]:
    """The selectors of every ``clusters`` generator, nested matrix/merge ones included."""
    out: list[Mapping[str, Any]] = []
    for gen in generators:
        if not isinstance(gen, Mapping):
            continue
        clusters = gen.get("clusters")
        if isinstance(clusters, Mapping):
            out.append(clusters.get("selector") or {})
        for nested in ("matrix", "merge"):
            inner = gen.get(nested)
            if isinstance(inner, Mapping):
                out.extend(_cluster_selectors(inner.get("generators") or []))
    return out


def package_targets(appset: Manifest, registrations: Sequence[Manifest]) -> list[Manifest]:
    """The registrations an ApplicationSet's ``clusters`` generators select."""
    selectors = _cluster_selectors((appset.body.get("spec") or {}).get("generators") or [])
    out = []
    for reg in registrations:
        labels = ((reg.body.get("spec") or {}).get("forProvider") or {}).get("labels") or {}
        if any(_selector_matches(s, labels) for s in selectors):
            out.append(reg)
    return out


# --- building the graph --------------------------------------------------------------


def _pool_line(pool: NodePoolSummary) -> str:
    totals = node_totals([pool]).text()
    return f"{pool.name}: {totals} x {pool.machine_size}"


def _app_lines(app: Manifest, objects: int) -> tuple[str, ...]:
    lines = [f"Application {app.name}"]
    for source in _sources(app):
        if isinstance(source.get("chart"), str):
            lines.append(f"chart {source['chart']} {source.get('targetRevision', '')}".strip())
    paths = [p for p, _ in source_paths(app)]
    if paths:
        lines.append(", ".join(paths))
        lines.append(_plural(objects, "object"))
    return tuple(lines)


def _bootstrap(
    env: str,
    manifests: Sequence[Manifest],
    graph: Graph,
    group: Group,
    ids: _Ids,
    appliers: _Appliers,
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
        applying = {a.identity for m in _objects(manifests, only) for a in appliers.appliers(m)}
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
            group.nodes.append(Node(node_id, _app_lines(app, appliers.count(app)), shape="app"))
        else:
            members = folds[key]
            node_id = ids(env, "apps", *(name for _, _, _, name in key[0]), str(key[1]))
            if app is members[0]:
                objects = sum(appliers.count(a) for a in members)
                group.nodes.append(Node(node_id, _folded_lines(members, objects), shape="app"))
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


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _folded_lines(apps: Sequence[Manifest], objects: int) -> tuple[str, ...]:
    """What a node standing for several Applications says: how many, where, how much."""
    lines = [f"{_plural(len(apps), 'Application')}, one per cluster"]
    paths = list(dict.fromkeys(p for a in apps for p, _ in source_paths(a)))
    above = {p.rsplit("/", 1)[0] for p in paths}
    if len(paths) > 1 and len(above) == 1:
        lines.append(f"{above.pop()}/*")
    elif len(paths) == 1:
        lines.append(paths[0])
    lines.append(_plural(objects, "object"))
    return tuple(lines)


def _objects(manifests: Sequence[Manifest], identities: Collection[Identity]) -> list[Manifest]:
    return [m for m in manifests if m.identity in identities]


def _leaf_apps(apps: Mapping[Identity, str], appliers: _Appliers, m: Manifest) -> list[str]:
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


@dataclass
class _Environment:
    """One environment's clusters, registrations and packages, as the graph sees them."""

    name: str
    rendered: Sequence[Manifest]
    appliers: _Appliers
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


def _environments(
    manifests: Mapping[str, Sequence[Manifest]], fleet: Fleet | None, dist: str
) -> Iterable[_Environment]:
    clusters: list[FleetCluster] = (
        [c for c in fleet.declarations() if isinstance(c, FleetCluster)] if fleet else []
    )
    for env, rendered in manifests.items():
        folders: dict[str, list[Manifest]] = defaultdict(list)
        for m in rendered:
            folder = _cluster_folder(m)
            if folder:
                folders[folder].append(m)
        declared = {c.cluster_name(env): c for c in clusters if env in c.environments}
        names = list(declared) + [f for f in folders if f not in declared]
        known = set(names)
        registrations: dict[str, list[Manifest]] = defaultdict(list)
        for m in rendered:
            if m.group == REGISTRATION_GROUP and m.kind == "Cluster":
                owner = registered_cluster(m, known)
                if owner is not None:
                    registrations[owner].append(m)
        packages = [m for m in rendered if m.group == ARGO_GROUP and m.kind == "ApplicationSet"]
        yield _Environment(
            env,
            rendered,
            _Appliers(rendered, dist=dist),
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
    ids = _Ids()
    for e in _environments(manifests, fleet, dist):
        env = e.name
        env_group = Group(ids(env), env)
        graph.groups.append(env_group)
        bootstrap = Group(ids(env, "bootstrap"), "bootstrap")
        app_ids = _bootstrap(env, e.rendered, graph, bootstrap, ids, e.appliers)
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
                    group.nodes.append(Node(pool_id, (_pool_line(pool),), shape="round"))
                    graph.edges.append(Edge(node_id, pool_id))
            else:
                group.nodes.append(Node(node_id, (name,)))
            for app_id in _apps_for(app_ids, e.appliers, e.own(name)):
                graph.edges.append(Edge(app_id, node_id, dashed=True))
            for reg in e.registrations[name]:
                reg_id = ids(env, "registration", reg.namespace, reg.name)
                group.nodes.append(
                    Node(reg_id, (f"ArgoCD Cluster {reg.name}",), shape="registration")
                )
                graph.edges.append(Edge(node_id, reg_id, "registered", dashed=True))
                for app_id in _apps_for(app_ids, e.appliers, [reg]):
                    graph.edges.append(Edge(app_id, reg_id, dashed=True))

        if e.packages:
            group = Group(ids(env, "packages"), "packages")
            env_group.groups.append(group)
            for appset in e.packages:
                pkg_id = ids(env, "package", appset.namespace, appset.name)
                group.nodes.append(
                    Node(pkg_id, (f"ApplicationSet {appset.name}",), shape="package")
                )
                for app_id in _apps_for(app_ids, e.appliers, [appset]):
                    graph.edges.append(Edge(app_id, pkg_id, dashed=True))
                for target in e.targets(appset):
                    graph.edges.append(Edge(pkg_id, cluster_ids[target], "deploys to", dashed=True))
    return graph


def _cluster_app(env: str, dist: str) -> Callable[[Manifest], bool]:
    """Whether an Application applies one cluster's folder and nothing else."""
    prefix = f"{dist.strip('/')}/{env}/{CLUSTERS_FOLDER}"

    def check(app: Manifest) -> bool:
        paths = [p for p, _ in source_paths(app)]
        if not paths or len(paths) != len(_sources(app)):
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
    head = _plural(len(names), "cluster") + (f", {len(retired)} retired" if retired else "")
    lines = [head]
    if by == "cloud" and members:
        lines.append(_plural(len({c.account(env) for c in members}), "account"))
    versions = list(
        dict.fromkeys(c.template_name(env) or c.kubernetes_version(env) for c in members)
    )
    if versions:
        shown = ", ".join(versions[:3])
        lines.append(shown + (f" and {len(versions) - 3} more" if len(versions) > 3 else ""))
    pools = [p for c in members if c not in retired for p in c.node_pools(env)]
    if pools:
        lines.append(f"{_plural(len(pools), 'node pool')}, {node_totals(pools).text()} nodes")
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
    ids = _Ids()
    for e in _environments(manifests, fleet, dist):
        env = e.name
        env_group = Group(ids(env), env)
        graph.groups.append(env_group)
        bootstrap = Group(ids(env, "bootstrap"), "bootstrap")
        fold = _cluster_app(env, dist)
        app_ids = _bootstrap(env, e.rendered, graph, bootstrap, ids, e.appliers, fold=fold)
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
            for app_id in _apps_for(app_ids, e.appliers, own):
                graph.edges.append(Edge(app_id, node_id, dashed=True))
            registrations = [r for name in names for r in e.registrations[name]]
            if registrations:
                reg_id = ids(env, "registrations", *key)
                group.nodes.append(
                    Node(
                        reg_id,
                        (_plural(len(registrations), "ArgoCD Cluster"),),
                        shape="registration",
                    )
                )
                graph.edges.append(Edge(node_id, reg_id, "registered", dashed=True))
                for app_id in _apps_for(app_ids, e.appliers, registrations):
                    graph.edges.append(Edge(app_id, reg_id, dashed=True))

        if e.packages:
            group = Group(ids(env, "packages"), "packages")
            env_group.groups.append(group)
            pkg_id = ids(env, "package")
            names = [p.name for p in e.packages]
            shown = names if len(names) <= 5 else [*names[:4], f"and {len(names) - 4} more"]
            lines = (_plural(len(names), "ApplicationSet"), *shown)
            group.nodes.append(Node(pkg_id, lines, shape="package"))
            for app_id in _apps_for(app_ids, e.appliers, e.packages):
                graph.edges.append(Edge(app_id, pkg_id, dashed=True))
            reached: dict[str, set[str]] = defaultdict(set)
            for appset in e.packages:
                for target in e.targets(appset):
                    reached[group_ids[target]].add(target)
            for target_id, clusters in reached.items():
                label = f"deploys to {_plural(len(clusters), 'cluster')}"
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
    graph.notes.append(f"Even summarized, it has {still}.")
    return FittedMermaid(to_mermaid(graph), tuple(graph.notes))


def _apps_for(
    app_ids: Mapping[Identity, str], appliers: _Appliers, objects: Sequence[Manifest]
) -> list[str]:
    """Ids of the Applications that apply any of ``objects``, in first-seen order."""
    out: list[str] = []
    for m in objects:
        for app_id in _leaf_apps(app_ids, appliers, m):
            if app_id not in out:
                out.append(app_id)
    return out


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
    ids = _Ids()
    for env in sorted({env for env, _ in changed}, key=_env_order(by_env)):
        rendered = by_env.get(env, [])
        wanted = {identity for e, identity in changed if e == env}
        env_group = Group(ids(env), env)
        graph.groups.append(env_group)
        bootstrap = Group(ids(env, "bootstrap"), "bootstrap")
        appliers = _Appliers(rendered, dist=dist)
        app_ids = _bootstrap(env, rendered, graph, bootstrap, ids, appliers, only=wanted)
        env_group.groups.append(bootstrap)
        folders: dict[str, Group] = {}
        for m in _objects(rendered, wanted):
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
            for app_id in _leaf_apps(app_ids, appliers, m):
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


# --- writing -------------------------------------------------------------------------


def _mermaid_text(lines: Sequence[str]) -> str:
    def one(line: str) -> str:
        return (
            line.replace("&", "#amp;")
            .replace('"', "#quot;")
            .replace("<", "#lt;")
            .replace(">", "#gt;")
        )

    return "<br/>".join(one(line) for line in lines)


def to_mermaid(graph: Graph) -> str:
    """A Mermaid flowchart (GitHub and GitLab render it in a ```mermaid block)."""
    out = ["flowchart LR", *(f"%% {note}" for note in graph.notes)]
    dashed: list[str] = []

    def node(n: Node, indent: str) -> None:
        opening, closing, _ = _SHAPES[n.shape]
        out.append(f'{indent}{n.id}{opening}"{_mermaid_text(n.lines)}"{closing}')
        if n.dashed:
            dashed.append(n.id)

    def group(g: Group, indent: str) -> None:
        if g.is_empty():
            return
        out.append(f'{indent}subgraph {g.id}["{_mermaid_text([g.label])}"]')
        out.append(f"{indent}  direction TB")
        for n in g.nodes:
            node(n, indent + "  ")
        for inner in g.groups:
            group(inner, indent + "  ")
        out.append(f"{indent}end")

    for g in graph.groups:
        group(g, "  ")
    for n in graph.nodes:
        node(n, "  ")
    for e in graph.edges:
        arrow = "-.->" if e.dashed else "-->"
        label = f'|"{_mermaid_text([e.label])}"|' if e.label else ""
        out.append(f"  {e.source} {arrow}{label} {e.target}")
    if dashed:
        out.append("  classDef retired stroke-dasharray: 5 5")
        out.append(f"  class {','.join(dashed)} retired")
    return "\n".join(out) + "\n"


def _dot_text(lines: Sequence[str]) -> str:
    return "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in lines)


def to_dot(graph: Graph) -> str:
    """A Graphviz digraph (``dot -Tsvg``); groups become clusters."""
    out = [
        "digraph fleet {",
        *(f"  // {note}" for note in graph.notes),
        "  rankdir=LR;",
        '  node [shape=box, fontname="Helvetica"];',
        '  edge [fontname="Helvetica"];',
    ]

    def node(n: Node, indent: str) -> None:
        style = ', style="dashed"' if n.dashed else ""
        rounded = ', style="rounded"' if n.shape in ("round", "app") and not n.dashed else ""
        out.append(
            f'{indent}{n.id} [label="{_dot_text(n.lines)}", shape={_SHAPES[n.shape][2]}'
            f"{style}{rounded}];"
        )

    def group(g: Group, indent: str) -> None:
        if g.is_empty():
            return
        out.append(f"{indent}subgraph cluster_{g.id} {{")
        out.append(f'{indent}  label="{_dot_text([g.label])}";')
        for n in g.nodes:
            node(n, indent + "  ")
        for inner in g.groups:
            group(inner, indent + "  ")
        out.append(f"{indent}}}")

    for g in graph.groups:
        group(g, "  ")
    for n in graph.nodes:
        node(n, "  ")
    for e in graph.edges:
        attrs = []
        if e.label:
            attrs.append(f'label="{_dot_text([e.label])}"')
        if e.dashed:
            attrs.append("style=dashed")
        suffix = f" [{', '.join(attrs)}]" if attrs else ""
        out.append(f"  {e.source} -> {e.target}{suffix};")
    out.append("}")
    return "\n".join(out) + "\n"


def render(graph: Graph, fmt: str) -> str:
    """``graph`` as ``mermaid`` or ``dot`` text."""
    if fmt == "dot":
        return to_dot(graph)
    if fmt == "mermaid":
        return to_mermaid(graph)
    raise ValueError(f"unknown graph format {fmt!r} (known: {', '.join(FORMATS)})")
