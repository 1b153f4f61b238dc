"""``fleet upgrade promote``'s gate: may the next promotion step be written now?

The next step (:meth:`Rollout.next_step`) may be promoted once the step before it is
committed, and

* when it starts a new ring: the previous ring soaked its minimum time since the commit that
  promoted its last step (git's committer time of that commit on the first-parent history:
  when it landed), and every cluster that step changed is converged at the target;
* when it is a later step of the same ring (OKE's node pools): every cluster the earlier
  step changed is converged (the control planes run the new version).

Converged is what ``fleet status`` says (:meth:`fleet.views.status.ClusterStatus.converged`:
ArgoCD synced the last change and is healthy, every object is live and ready, the live
version is the declared one). The inputs come from outside (git, the live clusters), so the
decision itself is pure: :func:`decide`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from fleet.clouds.upgrades import PathMode
from fleet.upgrades.plan import soak_text
from fleet.upgrades.rings import Member
from fleet.upgrades.rollout import Rollout, Step
from fleet.upgrades.state import RolloutState

PromotedAt = Callable[[Step], tuple[str, datetime] | None]
"""The commit (sha, committer time) that promoted a step, None when none did yet."""
Unconverged = Callable[[Sequence[Member]], list[tuple[Member, str]]]
"""The members that are not converged, each with why (one line)."""


@dataclass(frozen=True)
class Promotion:
    """The gate let ``step`` through: ``state`` is the state file once it is promoted."""

    step: Step
    state: RolloutState
    changed: tuple[Member, ...]
    """The clusters the step changes."""


@dataclass(frozen=True)
class Refusal:
    """The gate refused: why, one line each (the first says what to do)."""

    step: Step | None
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Complete:
    """Every step of every target is promoted."""

    target: str


def changed_by(rollout: Rollout, step: Step) -> list[Member]:
    """The clusters whose render ``step`` changes (in place, with that many steps)."""
    return [
        m
        for m in rollout.members_of(step.ring)
        if (p := rollout.path(step.target, m)).mode is PathMode.IN_PLACE
        and len(p.steps) >= step.step
    ]


def _duration(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    hours, rest = divmod(seconds, 3600)
    return f"{hours} h {rest // 60:02d} min"


def decide(
    rollout: Rollout,
    *,
    now: datetime,
    promoted_at: PromotedAt,
    unconverged: Unconverged,
) -> Promotion | Refusal | Complete:
    """The gate's verdict on the next step of ``rollout``."""
    step = rollout.next_step()
    if step is None:
        return Complete(rollout.target.name)
    promotion = Promotion(
        step,
        rollout.current.with_progress(step.ring.name, step.progress),
        tuple(changed_by(rollout, step)),
    )
    previous = rollout.previous(step)
    if previous is None:
        return promotion
    landed = promoted_at(previous)
    if landed is None:
        return Refusal(
            step,
            (
                f"the promotion of {previous.describe()} is not committed on this branch's "
                f"first-parent history ({rollout.state_shown}): merge it first, then promote "
                f"{step.describe()}",
            ),
        )
    sha, when = landed
    if previous.ring != step.ring and previous.target == step.target:
        soaked = now - when
        if soaked < previous.ring.soak:
            return Refusal(
                step,
                (
                    f"ring {previous.ring.name} has soaked {_duration(soaked)} since "
                    f"{sha[:12]} promoted it ({when.isoformat()}); it must soak "
                    f"{soak_text(previous.ring)}: promote {step.describe()} after "
                    f"{(when + previous.ring.soak).isoformat()}",
                ),
            )
    waiting = unconverged(changed_by(rollout, previous))
    if waiting:
        lines = [
            f"{len(waiting)} cluster(s) of ring {previous.ring.name} not converged at "
            f"{previous.describe()} (`fleet status --ring {previous.ring.name}`); promote "
            f"{step.describe()} once they are:"
        ]
        lines += [f"{m.label}: {why}" for m, why in waiting]
        return Refusal(step, tuple(lines))
    return promotion
