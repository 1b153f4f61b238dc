"""What a cloud contributes to an upgrade rollout (:mod:`fleet.upgrades`): a
:class:`CloudTarget` says, for one of its clusters in one environment, the path to the
target (:class:`UpgradePath`: in place in steps, blue/green, refused, nothing to do) and
applies each step to the cluster's render. Generic: no cloud is named here; each cloud
fills it in (``clouds/<cloud>/rollout.py``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, ClassVar

from fleet.clouds.base import FleetCluster


class PathMode(enum.StrEnum):
    """How a cluster reaches the target."""

    IN_PLACE = "in-place"
    """The promotion steps change the cluster's objects; its controllers upgrade it."""
    BLUE_GREEN = "blue-green"
    """Its cloud cannot upgrade it in place: a new cluster, declared by a person."""
    REFUSED = "refused"
    """An in-place upgrade its cloud refuses (a skipped minor version): not applied."""
    CURRENT = "current"
    """It runs the target (or newer) already."""
    UNTARGETED = "untargeted"
    """The target says nothing for it (no template of its driver, no release of its region)."""


@dataclass(frozen=True)
class PathStep:
    """One promotion step of one cluster: what it changes."""

    title: str
    """``control plane``, ``node pools``, ``template``."""
    changes: tuple[str, ...]
    """One line per changed thing (``spec.version v1.30.1 -> v1.31.1``)."""

    def to_dict(self) -> dict[str, Any]:
        """The step for JSON."""
        return {"title": self.title, "changes": list(self.changes)}


@dataclass(frozen=True)
class UpgradePath:
    """What a target means for one cluster in one environment."""

    mode: PathMode
    current: str
    """What it runs before the target (``kubernetes-1.30 (v1.30.2)``, ``v1.30.1``)."""
    target: str
    """What the target gives it ("" when nothing)."""
    why: str
    """One sentence: why this mode (the driver and how the fleet knows it, the refusal)."""
    steps: tuple[PathStep, ...] = field(default=())
    """The promotion steps, in order (in place only)."""

    def to_dict(self) -> dict[str, Any]:
        """The path for JSON."""
        return {
            "mode": self.mode.value,
            "current": self.current,
            "target": self.target,
            "why": self.why,
            "steps": [s.to_dict() for s in self.steps],
        }


class CloudTarget:
    """One cloud's part of an :class:`~fleet.upgrades.rollout.UpgradeTarget` (subclasses are
    value types: ``MagnumTarget``, ``OkeTarget``)."""

    cloud_noun: ClassVar[str] = ""
    """How plans name the cloud."""

    def handles(self, cluster: FleetCluster) -> bool:
        """Whether ``cluster`` is of this target's cloud."""
        raise NotImplementedError

    def path(self, cluster: FleetCluster, environment: str) -> UpgradePath:
        """The path from what ``cluster`` renders now in ``environment`` to this target."""
        raise NotImplementedError

    def apply(self, cluster: FleetCluster, environment: str, steps: int) -> None:
        """Make ``cluster`` render the first ``steps`` steps of :meth:`path` in
        ``environment`` (called from the rollout's Aspect, where mutators are allowed)."""
        raise NotImplementedError

    def check(self, *, where: str) -> None:
        """Raise the DefinitionError for a target that cannot be right (a template keyed
        under another driver than its own, say)."""
