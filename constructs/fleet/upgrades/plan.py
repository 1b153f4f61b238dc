"""``fleet upgrade plan``: the whole path of every cluster to the rollout's target, ring by
ring: what changes, in place or blue/green and why, in which promotion step (OKE: the control
plane before the node pools), and what each step waits for. Pure data (JSON through
``to_dict``); the command line prints it."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from fleet.clouds.upgrades import PathMode, UpgradePath
from fleet.core.words import plural
from fleet.upgrades.rings import Member, Ring
from fleet.upgrades.rollout import Rollout, Step
from fleet.upgrades.state import Progress


class StepStatus(enum.StrEnum):
    """Where a promotion step is."""

    PROMOTED = "promoted"
    NEXT = "next"
    """The step ``fleet upgrade promote`` writes next (once its wait is over)."""
    WAITING = "waiting"


def soak_text(ring: Ring) -> str:
    """``2 days``, ``36 hours``, ``90 minutes``, ``none``."""
    seconds = int(ring.soak.total_seconds())
    if not seconds:
        return "none"
    if seconds and seconds % 86400 == 0:
        return plural(seconds // 86400, "day")
    if seconds and seconds % 3600 == 0:
        return plural(seconds // 3600, "hour")
    return plural(seconds // 60, "minute")


def waits_for(rollout: Rollout, step: Step) -> str:
    """What must be true before ``step`` is promoted (one sentence)."""
    previous = rollout.previous(step)
    if previous is None:
        return "nothing: it is the first step"
    if previous.ring == step.ring:
        return (
            f"the clusters of ring {step.ring.name} run step {previous.step} (`fleet status`: "
            "converged), the control planes before the node pools"
        )
    if previous.target != step.target:
        return (
            f"target {previous.target.name} promoted to every ring and converged in ring "
            f"{previous.ring.name}"
        )
    return (
        f"ring {previous.ring.name} converged at the target (`fleet status`) and soaked "
        f"{soak_text(previous.ring)} since the commit that promoted its last step"
    )


@dataclass(frozen=True)
class StepPlan:
    """One promotion step of a ring."""

    step: Step
    status: StepStatus
    waits_for: str

    def to_dict(self) -> dict[str, Any]:
        """The step for JSON."""
        return {
            "target": self.step.target.name,
            "step": self.step.step,
            "of": self.step.of,
            "status": self.status.value,
            "waits_for": self.waits_for,
        }


@dataclass(frozen=True)
class ClusterPlan:
    """One cluster (in one environment) and its path to the target."""

    member: Member
    cloud: str
    path: UpgradePath

    def to_dict(self) -> dict[str, Any]:
        """The cluster for JSON."""
        cluster = self.member.cluster
        return {
            "environment": self.member.environment,
            "cluster": cluster.object_name(self.member.environment),
            "id": cluster.node.path,
            "cloud": self.cloud,
            **self.path.to_dict(),
        }


@dataclass(frozen=True)
class RingPlan:
    """One ring: where it is, its steps, its clusters."""

    ring: Ring
    progress: Progress | None
    steps: tuple[StepPlan, ...]
    clusters: tuple[ClusterPlan, ...]

    def to_dict(self) -> dict[str, Any]:
        """The ring for JSON."""
        return {
            "ring": self.ring.name,
            "soak_seconds": int(self.ring.soak.total_seconds()),
            "promoted": (
                {"target": self.progress.target, "step": self.progress.step}
                if self.progress
                else None
            ),
            "steps": [s.to_dict() for s in self.steps],
            "clusters": [c.to_dict() for c in self.clusters],
        }


@dataclass(frozen=True)
class RolloutPlan:
    """The rollout's plan for its target."""

    target: str
    state: str
    rings: tuple[RingPlan, ...]
    next: Step | None

    def to_dict(self) -> dict[str, Any]:
        """The plan for JSON."""
        return {
            "target": self.target,
            "state": self.state,
            "next": (
                {
                    "target": self.next.target.name,
                    "ring": self.next.ring.name,
                    "step": self.next.step,
                    "of": self.next.of,
                }
                if self.next
                else None
            ),
            "rings": [r.to_dict() for r in self.rings],
        }

    def counts(self) -> dict[str, int]:
        """Clusters per mode (``in-place``: 3, ...)."""
        out: dict[str, int] = {}
        for ring in self.rings:
            for c in ring.clusters:
                out[c.path.mode.value] = out.get(c.path.mode.value, 0) + 1
        return out


def plan(rollout: Rollout) -> RolloutPlan:
    """The plan of ``rollout`` for its target (the last one), from the fleet as synthesized
    (its phases run)."""
    target = rollout.target
    following = rollout.next_step()
    rings: list[RingPlan] = []
    for ring in rollout.rings:
        steps = tuple(
            StepPlan(
                s,
                StepStatus.PROMOTED
                if rollout.done(s)
                else StepStatus.NEXT
                if s == following
                else StepStatus.WAITING,
                waits_for(rollout, s),
            )
            for s in rollout.sequence()
            if s.ring == ring and s.target == target
        )
        clusters = tuple(
            ClusterPlan(
                m,
                cloud.cloud_noun
                if (cloud := target.cloud_for(m.cluster))
                else type(m.cluster).cloud,
                rollout.path(target, m),
            )
            for m in rollout.members_of(ring)
        )
        rings.append(RingPlan(ring, rollout.current.progress(ring.name), steps, clusters))
    return RolloutPlan(target.name, rollout.state_shown, tuple(rings), following)


def blocked(plan: RolloutPlan) -> list[ClusterPlan]:
    """The clusters the promotions do not upgrade: blue/green, refused."""
    return [
        c
        for r in plan.rings
        for c in r.clusters
        if c.path.mode in (PathMode.BLUE_GREEN, PathMode.REFUSED)
    ]
