"""The values ``fleet status`` reports: per declared cluster, per environment, per fleet.

Pure data with the verdicts: :meth:`ClusterStatus.converged` is what a promotion gate asks
of one cluster, :meth:`FleetStatus.converged` of a selection. JSON through ``to_dict``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleet.clouds.base import FleetCluster
from fleet.core.words import plural
from fleet.platform.live import Finding, Verdict, worst
from fleet.views.status.revisions import RevisionState


@dataclass(frozen=True, kw_only=True)
class Selection:
    """Which declared clusters to read: environments, object names, and predicates.

    Empty ``environments``/``clusters`` mean all. ``filters`` are further predicates on
    (cluster, environment); a ring of the upgrade rollout is one (``--ring`` adds it where
    rings exist): ``Selection(filters=(ring.contains,))``.
    """

    environments: tuple[str, ...] = ()
    clusters: tuple[str, ...] = ()
    """Object names (``fleet ls``'s cluster column) or construct ids."""
    filters: tuple[Callable[[FleetCluster, str], bool], ...] = ()

    def matches(self, cluster: FleetCluster, environment: str) -> bool:
        """Whether ``cluster`` in ``environment`` is selected."""
        if self.environments and environment not in self.environments:
            return False
        if self.clusters and not {
            cluster.object_name(environment),
            cluster.construct_id,
        } & set(self.clusters):
            return False
        return all(f(cluster, environment) for f in self.filters)


@dataclass(frozen=True, kw_only=True)
class ObjectRef:
    """One object, by the API server's key, in one environment."""

    environment: str
    group: str
    kind: str
    namespace: str
    name: str

    def describe(self) -> str:
        """``Kind namespace/name``."""
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}"

    def to_dict(self) -> dict[str, Any]:
        """The reference for JSON."""
        return {
            "environment": self.environment,
            "group": self.group,
            "kind": self.kind,
            "namespace": self.namespace or None,
            "name": self.name,
        }


@dataclass(frozen=True, kw_only=True)
class Orphan:
    """A live object the fleet's ArgoCD tracks that no declaration renders any more."""

    ref: ObjectRef
    application: str
    """The Application its ArgoCD tracking annotation names."""

    def to_dict(self) -> dict[str, Any]:
        """The orphan for JSON."""
        return {**self.ref.to_dict(), "application": self.application}


@dataclass(frozen=True, kw_only=True)
class ApplicationView:
    """What ArgoCD says about a cluster's Application."""

    name: str
    namespace: str
    present: bool
    sync: str | None = None
    """``status.sync.status``: Synced, OutOfSync, Unknown."""
    revision: str | None = None
    """``status.sync.revision``: the commit ArgoCD compared with."""
    expected: str | None = None
    """The last commit that changed ``dist/<env>/``."""
    revision_state: RevisionState = RevisionState.UNKNOWN
    health: str | None = None
    health_message: str = ""
    operation: str | None = None
    """``status.operationState.phase``: Running, Succeeded, Failed, Error, Terminating."""
    operation_message: str = ""
    retry_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The Application's view for JSON."""
        return {
            "name": self.name,
            "namespace": self.namespace,
            "present": self.present,
            "sync": self.sync,
            "revision": self.revision,
            "expected_revision": self.expected,
            "revision_state": self.revision_state.value,
            "health": self.health,
            "health_message": self.health_message,
            "operation": self.operation,
            "operation_message": self.operation_message,
            "retry_count": self.retry_count,
        }


@dataclass(frozen=True, kw_only=True)
class ClusterStatus:
    """One declared cluster in one environment, joined with what is live."""

    environment: str
    cluster: str
    """Its object name."""
    construct_id: str
    cloud: str
    declared_version: str
    live_version: str | None
    version_matches: bool | None
    """None: the live version is not known (not read, or not set yet)."""
    application: ApplicationView | None
    registered: bool | None
    """None: not declared to be registered in ArgoCD (or not read)."""
    missing: tuple[ObjectRef, ...] = ()
    """Objects its declaration renders that are not live."""
    findings: tuple[Finding, ...] = ()
    """Why it has not converged, the first failure first."""
    unread: tuple[str, ...] = ()
    """Read problems that leave its state unknown (one line each)."""

    @property
    def verdict(self) -> Verdict:
        """Failed, unknown (something could not be read), progressing, or converged."""
        found = [f.verdict for f in self.findings]
        if self.unread:
            found.append(Verdict.UNKNOWN)
        return worst(found)

    def converged(self) -> bool:
        """Whether the cluster runs what it declares: ArgoCD synced the last change and is
        healthy, every object is live and ready, and the live version is the declared one."""
        return self.verdict is Verdict.CONVERGED

    @property
    def problem(self) -> Finding | None:
        """The first failure, else the first thing still in progress; None once converged."""
        return self.findings[0] if self.findings else None

    def to_dict(self) -> dict[str, Any]:
        """The row for JSON."""
        return {
            "environment": self.environment,
            "cluster": self.cluster,
            "id": self.construct_id,
            "cloud": self.cloud,
            "verdict": self.verdict.value,
            "declared_version": self.declared_version,
            "live_version": self.live_version,
            "version_matches": self.version_matches,
            "registered": self.registered,
            "application": self.application.to_dict() if self.application else None,
            "problem": self.problem.to_dict() if self.problem else None,
            "findings": [f.to_dict() for f in self.findings],
            "missing": [m.to_dict() for m in self.missing],
            "unread": list(self.unread),
        }


@dataclass(frozen=True, kw_only=True)
class EnvironmentRead:
    """How reading one environment's management cluster went."""

    environment: str
    context: str
    problems: tuple[str, ...] = ()
    """One line per failed read, naming what to fix."""
    unreachable: bool = False
    """Whether the management cluster could not be reached (or did not answer) at all: a
    wait may try again; any other problem needs a person."""

    def to_dict(self) -> dict[str, Any]:
        """The environment for JSON."""
        return {
            "environment": self.environment,
            "context": self.context,
            "problems": list(self.problems),
            "unreachable": self.unreachable,
        }


@dataclass(frozen=True, kw_only=True)
class FleetStatus:
    """The declared fleet (a selection of it) joined with the live management clusters."""

    clusters: tuple[ClusterStatus, ...]
    orphans: tuple[Orphan, ...] = ()
    environments: tuple[EnvironmentRead, ...] = ()
    read_at: str = field(default="", compare=False)
    """When it was read (UTC, RFC 3339)."""

    @property
    def problems(self) -> list[str]:
        """Every read problem, one line each."""
        return [p for e in self.environments for p in e.problems]

    @property
    def missing(self) -> list[ObjectRef]:
        """Declared objects that are not live, over all clusters."""
        return [m for c in self.clusters for m in c.missing]

    @property
    def verdict(self) -> Verdict:
        """The worst cluster verdict (unknown when an environment could not be read)."""
        found = [c.verdict for c in self.clusters]
        if self.problems:
            found.append(Verdict.UNKNOWN)
        return worst(found)

    def converged(self) -> bool:
        """Whether every selected cluster converged, and everything could be read."""
        return self.verdict is Verdict.CONVERGED

    def summary(self) -> str:
        """``3 clusters: 2 converged, 1 progressing; 1 orphan``."""
        counts: dict[str, int] = {}
        for c in self.clusters:
            counts[c.verdict.value] = counts.get(c.verdict.value, 0) + 1
        parts = [f"{n} {v}" for v in (x.value for x in Verdict) if (n := counts.get(v, 0))]
        text = plural(len(self.clusters), "cluster") + (": " + ", ".join(parts) if parts else "")
        if self.orphans:
            text += f"; {plural(len(self.orphans), 'orphan')}"
        if self.missing:
            text += f"; {plural(len(self.missing), 'declared object')} missing"
        return text

    def to_dict(self) -> dict[str, Any]:
        """The whole status for JSON."""
        return {
            "verdict": self.verdict.value,
            "read_at": self.read_at,
            "environments": [e.to_dict() for e in self.environments],
            "clusters": [c.to_dict() for c in self.clusters],
            "orphans": [o.to_dict() for o in self.orphans],
            "missing": [m.to_dict() for m in self.missing],
        }


def first(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    """``findings`` with the failures first (their order kept), then the rest."""
    failed = [f for f in findings if f.verdict is Verdict.FAILED]
    return (*failed, *(f for f in findings if f.verdict is not Verdict.FAILED))
