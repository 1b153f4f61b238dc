"""The join: declared clusters, rendered as ``fleet synth`` renders them, with what is live.

For each selected environment: render it (which objects each declared cluster owns, and
its Application), list the kinds ``fleet status`` reads on its management cluster (each
environment in its own thread; one kind failing does not stop the others, an unreachable
server stops that environment), then make one :class:`ClusterStatus` per declared cluster
and list the orphans: live objects that an Application of the environment's ArgoCD tracks
(``argocd.argoproj.io/tracking-id``, argo-cd v3.5.1 ``util/argo/resource_tracking.go``:
``<application>:<group>/<kind>:<namespace>/<name>``) and that nothing renders any more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fleet.argocd.live import APPLICATIONS, CONNECTION_STATE, REGISTRATIONS
from fleet.clouds.base import FleetCluster
from fleet.core import layout
from fleet.core.config import FleetConfig
from fleet.core.fleet import Fleet
from fleet.core.manifest import Identity, Manifest
from fleet.platform.live import Finding, LiveKind, Verdict
from fleet.views.status import argo
from fleet.views.status.kube import Connection, KubeClient, LiveClient, ReadError
from fleet.views.status.model import (
    ClusterStatus,
    EnvironmentRead,
    FleetStatus,
    ObjectRef,
    Orphan,
    Selection,
    first,
)
from fleet.views.status.revisions import History

TRACKING = "argocd.argoproj.io/tracking-id"
"""ArgoCD's annotation on every object it applies (annotation tracking, the fleet's
``application.resourceTrackingMethod``)."""

UNREACHABLE = frozenset({"unreachable", "timeout"})
"""Read problems a wait tries again (the others need a person: RBAC, CRDs, credentials)."""

ClientFactory = Callable[[str], LiveClient]
"""Makes the client of one environment's management cluster (raises ReadError)."""


def kube_clients(
    config: FleetConfig,
    *,
    context: str | None = None,
    kubeconfig: Path | None = None,
    connect_timeout: float | None = None,
    read_timeout: float | None = None,
) -> ClientFactory:
    """Clients over the Kubernetes Python client: per environment its context from
    ``[tool.fleet.contexts]`` (``context`` overrides it for all), from ``kubeconfig`` (else
    ``$KUBECONFIG`` / ``~/.kube/config``)."""

    def make(environment: str) -> LiveClient:
        extra: dict[str, float] = {}
        if connect_timeout is not None:
            extra["connect_timeout"] = connect_timeout
        if read_timeout is not None:
            extra["read_timeout"] = read_timeout
        return KubeClient(
            Connection(
                environment=environment,
                context=context or config.context_for(environment),
                kubeconfig=kubeconfig,
                **extra,
            )
        )

    return make


def _identity(body: Mapping[str, Any]) -> Identity:
    api_version = str(body.get("apiVersion", ""))
    group = api_version.split("/", 1)[0] if "/" in api_version else "core"
    meta = body.get("metadata") or {}
    return (group, str(body.get("kind", "")), str(meta.get("namespace") or ""), str(meta["name"]))


@dataclass
class _Live:
    """What was read of one environment."""

    context: str = ""
    objects: dict[Identity, dict[str, Any]] = field(default_factory=dict)
    unread: dict[tuple[str, str], str] = field(default_factory=dict)
    """(group, kind) -> the problem line, for kinds that could not be read."""
    problems: list[str] = field(default_factory=list)
    read: set[tuple[str, str]] = field(default_factory=set)
    unreachable: bool = False


def _read(
    environment: str, kinds: Sequence[LiveKind], needed: set[tuple[str, str]], make: ClientFactory
) -> _Live:
    live = _Live()
    try:
        client = make(environment)
    except ReadError as e:
        live.problems.append(str(e))
        live.unread = {(k.group, k.kind): str(e) for k in kinds}
        live.unreachable = e.problem in UNREACHABLE
        return live
    live.context = client.context
    for i, kind in enumerate(kinds):
        try:
            items = client.list(kind)
        except ReadError as e:
            if e.problem == "missing-crd" and (kind.group, kind.kind) not in needed:
                continue  # nothing selected renders it: no CRD, no objects, no orphans
            live.problems.append(str(e))
            live.unread[(kind.group, kind.kind)] = str(e)
            live.unreachable = live.unreachable or e.problem in UNREACHABLE
            if e.fatal:
                for rest in kinds[i + 1 :]:
                    live.unread[(rest.group, rest.kind)] = str(e)
                break
            continue
        live.read.add((kind.group, kind.kind))
        for item in items:
            if (item.get("metadata") or {}).get("name"):
                item.setdefault("apiVersion", kind.api_version)
                item.setdefault("kind", kind.kind)
                live.objects[_identity(item)] = item
    return live


def _render(fleet: Fleet, environment: str) -> list[Manifest]:
    """Every object ``fleet synth`` writes into ``dist/<environment>/`` (as
    :func:`fleet.pipeline.render.render_environment` renders them, without the layers above)."""
    fleet.run_phases()
    out: list[Manifest] = []
    for construct in fleet.declarations():
        out.extend(construct.manifests(environment))
    out.extend(fleet.user_manifests(environment, layout.EXTRA))
    return out


def _kinds(clusters: Iterable[FleetCluster]) -> list[LiveKind]:
    seen: dict[tuple[str, str], LiveKind] = {}
    for kind in (APPLICATIONS, REGISTRATIONS):
        seen[(kind.group, kind.kind)] = kind
    for cluster in clusters:
        for kind in type(cluster).plugin.status.kinds:
            seen.setdefault((kind.group, kind.kind), kind)
    return list(seen.values())


def _application(manifests: Sequence[Manifest], path: str) -> Manifest | None:
    for m in manifests:
        if (m.group, m.kind) == (APPLICATIONS.group, APPLICATIONS.kind):
            source = (m.body.get("spec") or {}).get("source") or {}
            if source.get("path") == path:
                return m
    return None


def _tracked_app(body: Mapping[str, Any]) -> str | None:
    value = ((body.get("metadata") or {}).get("annotations") or {}).get(TRACKING)
    if not isinstance(value, str) or value.count(":") < 2:
        return None
    return value.split(":", 1)[0]


@dataclass(frozen=True)
class _Env:
    """One environment to read: its render and selected clusters."""

    name: str
    manifests: list[Manifest]
    placed: list[FleetCluster]
    selected: list[FleetCluster]


def read_status(
    fleet: Fleet,
    selection: Selection | None = None,
    *,
    clients: ClientFactory | None = None,
) -> FleetStatus:
    """The selected declared clusters joined with their environments' management
    clusters (``clients`` makes each environment's client: by default
    :func:`kube_clients` of the fleet's configuration). Never raises for what the live
    side does: read problems are in :attr:`FleetStatus.environments`, one line each."""
    selection = selection or Selection()
    config = fleet.config
    for env in selection.environments:
        fleet.check_environment(env)
    make = clients or kube_clients(config)
    history = History(config.root)
    envs: list[_Env] = []
    for env in fleet.environment_names:
        if selection.environments and env not in selection.environments:
            continue
        placed = [
            c for c in fleet.declarations() if isinstance(c, FleetCluster) and env in c.environments
        ]
        selected = [c for c in placed if not c.is_retired(env) and selection.matches(c, env)]
        if (selection.clusters or selection.filters) and not selected:
            continue
        envs.append(_Env(env, _render(fleet, env), placed, selected))

    def job(e: _Env) -> _Live:
        needed = {
            (m.group, m.kind)
            for c in e.selected
            for m in e.manifests
            if m.folder == c.folder(e.name)
        } | {(APPLICATIONS.group, APPLICATIONS.kind)}
        return _read(e.name, _kinds(e.placed), needed, make)

    with ThreadPoolExecutor(max_workers=max(1, len(envs))) as pool:
        lives = list(pool.map(job, envs))
    rows: list[ClusterStatus] = []
    orphans: list[Orphan] = []
    reads: list[EnvironmentRead] = []
    for e, live in zip(envs, lives, strict=True):
        reads.append(
            EnvironmentRead(
                environment=e.name,
                context=live.context or (config.context_for(e.name) or ""),
                problems=tuple(live.problems),
                unreachable=live.unreachable,
            )
        )
        expected = history.expected(f"{config.dist}/{e.name}")
        kinds = {(k.group, k.kind): k for k in _kinds(e.placed)}
        for cluster in e.selected:
            rows.append(_cluster_status(config, e, cluster, live, kinds, expected, history))
        orphans.extend(_orphans(config, e, live, selection))
    return FleetStatus(
        clusters=tuple(rows),
        orphans=tuple(orphans),
        environments=tuple(reads),
        read_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def _cluster_status(
    config: FleetConfig,
    e: _Env,
    cluster: FleetCluster,
    live: _Live,
    kinds: Mapping[tuple[str, str], LiveKind],
    expected: Any,
    history: History,
) -> ClusterStatus:
    env = e.name
    folder = cluster.folder(env)
    owned = [m for m in e.manifests if m.folder == folder and (m.group, m.kind) in kinds]
    unread = sorted(
        {live.unread[(m.group, m.kind)] for m in owned if (m.group, m.kind) in live.unread}
    )
    app_manifest = _application(e.manifests, layout.environment_path(config.dist, env, folder))
    app_view = None
    found: list[Finding] = []
    if app_manifest is not None:
        app_unread = live.unread.get((APPLICATIONS.group, APPLICATIONS.kind))
        if app_unread:
            unread.append(app_unread)
        else:
            app_live = live.objects.get(app_manifest.identity)
            app_view = argo.view(
                app_manifest.name, app_manifest.namespace, app_live, expected, history
            )
            found.extend(argo.findings(app_view, app_live))
    missing: list[ObjectRef] = []
    object_findings: list[Finding] = []
    registered: bool | None = None
    for m in owned:
        if (m.group, m.kind) in live.unread:
            continue
        body = live.objects.get(m.identity)
        if body is None:
            ref = ObjectRef(
                environment=env, group=m.group, kind=m.kind, namespace=m.namespace, name=m.name
            )
            missing.append(ref)
            object_findings.append(
                Finding(
                    verdict=Verdict.PROGRESSING,
                    kind=m.kind,
                    name=m.name,
                    what="present",
                    message=f"{ref.describe()} is declared and not live yet",
                )
            )
            if (m.group, m.kind) == (REGISTRATIONS.group, REGISTRATIONS.kind):
                registered = False
            continue
        rules = kinds[(m.group, m.kind)].rules
        judged = rules.judge(m.kind, body) if rules is not None else []
        if (m.group, m.kind) == (REGISTRATIONS.group, REGISTRATIONS.kind):
            judged.extend(_connection(m.name, body))
            registered = not judged
        object_findings.extend(judged)
    live_version, matches, version_findings = _version(cluster, env, owned, live)
    return ClusterStatus(
        environment=env,
        cluster=cluster.object_name(env),
        construct_id=cluster.construct_id,
        cloud=cluster.cloud,
        declared_version=cluster.kubernetes_version(env),
        live_version=live_version,
        version_matches=matches,
        application=app_view,
        registered=registered,
        missing=tuple(missing),
        findings=first([*object_findings, *found, *version_findings]),
        unread=tuple(unread),
    )


def _connection(name: str, body: Mapping[str, Any]) -> list[Finding]:
    node: Any = body
    for key in CONNECTION_STATE:
        node = node.get(key) if isinstance(node, Mapping) else None
    if isinstance(node, Mapping) and node.get("status") == "Failed":
        return [
            Finding(
                verdict=Verdict.FAILED,
                kind=REGISTRATIONS.kind,
                name=name,
                what="connectionState",
                reason="Failed",
                message=str(node.get("message") or ""),
                since=str(node["attemptedAt"]) if node.get("attemptedAt") else None,
            )
        ]
    return []


def _version(
    cluster: FleetCluster, env: str, owned: Sequence[Manifest], live: _Live
) -> tuple[str | None, bool | None, list[Finding]]:
    status = type(cluster).plugin.status
    where = status.version
    if where is None:
        return None, None, []
    holder = next((m for m in owned if (m.group, m.kind) == (where.group, where.kind)), None)
    if holder is None or (where.group, where.kind) in live.unread:
        return None, None, []
    body = live.objects.get(holder.identity)
    if body is None:
        return None, None, []
    declared = cluster.kubernetes_version(env)
    found = where.read(body)
    if found is None:
        return (
            None,
            None,
            [
                Finding(
                    verdict=Verdict.PROGRESSING,
                    kind=holder.kind,
                    name=holder.name,
                    what="version",
                    message=f"no live version yet ({'.'.join(where.path)} is not set)",
                )
            ],
        )
    if status.same_version(declared, found):
        return found, True, []
    return (
        found,
        False,
        [
            Finding(
                verdict=Verdict.PROGRESSING,
                kind=holder.kind,
                name=holder.name,
                what="version",
                reason="NotYet",
                message=f"runs {found}, declared {declared} ({'.'.join(where.path)})",
            )
        ],
    )


def _orphans(config: FleetConfig, e: _Env, live: _Live, selection: Selection) -> list[Orphan]:
    rendered = {m.identity for m in e.manifests}
    apps = {
        m.name for m in e.manifests if (m.group, m.kind) == (APPLICATIONS.group, APPLICATIONS.kind)
    }
    root = _application(e.manifests, layout.environment_path(config.dist, e.name, layout.BOOTSTRAP))
    if root is not None:
        # Applications the root created and that no longer render (pruned later, or kept).
        apps |= {
            ident[3]
            for ident, body in live.objects.items()
            if (ident[0], ident[1]) == (APPLICATIONS.group, APPLICATIONS.kind)
            and _tracked_app(body) == root.name
        }
    if selection.clusters or selection.filters:
        apps = {
            m.name
            for c in e.selected
            if (
                m := _application(
                    e.manifests, layout.environment_path(config.dist, e.name, c.folder(e.name))
                )
            )
        }
    out: list[Orphan] = []
    for ident, body in sorted(live.objects.items()):
        app = _tracked_app(body)
        if app is None or app not in apps or ident in rendered:
            continue
        group, kind, namespace, name = ident
        out.append(
            Orphan(
                ref=ObjectRef(
                    environment=e.name, group=group, kind=kind, namespace=namespace, name=name
                ),
                application=app,
            )
        )
    return out
