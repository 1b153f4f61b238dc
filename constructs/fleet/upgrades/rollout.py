"""An upgrade rollout, declared in Python: ordered rings, the targets, and the committed state
that says how far each ring has been promoted (:class:`Rollout`).

The rollout applies itself as an Aspect of the fleet, after every declaration's
``prepare()``: each cluster of a promoted ring takes its target (each cloud's
:class:`~fleet.clouds.upgrades.CloudTarget` changes what it renders), step by step; a cluster
of a ring not promoted renders what it declares. Promotion steps run in one order: for each
target (oldest first), for each ring, its steps (OKE: the control plane, then the node pools;
Magnum: the template). :meth:`Rollout.next_step` is the first one not promoted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from fleet.clouds.base import FleetCluster
from fleet.clouds.upgrades import CloudTarget, PathMode, UpgradePath
from fleet.core.declaration import FleetConstruct
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.fleet import Fleet
from fleet.core.manifest import Manifest
from fleet.core.options import option, value_type
from fleet.core.tree import Aspects, TreeConstruct
from fleet.core.values import caller_location
from fleet.upgrades.rings import Member, Ring, membership
from fleet.upgrades.state import Progress, RolloutState, read_state

DEFAULT_STATE = "rollout.yaml"
TARGET_NAME = re.compile(r"^(?=.{1,63}$)[a-z0-9]([a-z0-9._-]*[a-z0-9])?$")


@value_type
class UpgradeTarget:
    """What the fleet upgrades to: one part per cloud (``MagnumTarget``: the template per
    Magnum driver and region; ``OkeTarget``: the Kubernetes version and node image per OCI
    region). ``name`` is how the state file and plans name it (``kubernetes-1.31``)."""

    argument_noun: ClassVar[str] = "target"

    name: str = option(doc="The target's name (a DNS label, ``kubernetes-1.31``).")
    clouds: Sequence[CloudTarget] = option(doc="Each cloud's part (one CloudTarget per cloud).")
    where: str = option(default="", init=False, compare=False, doc="Where it was declared.")

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", caller_location())
        ctx = f"{self.where} (target {self.name})"
        if not isinstance(self.name, str) or not TARGET_NAME.match(self.name):
            raise DefinitionError(
                "must be lower-case letters, digits, '.', '_' and '-', starting and ending "
                f"with a letter or digit, at most 63 characters; got {self.name!r}",
                where=ctx,
                field="name",
            )
        if not self.clouds:
            raise DefinitionError("give each cloud's part", where=ctx, field="clouds")
        kinds = [type(c).__name__ for c in self.clouds]
        for kind in kinds:
            if kinds.count(kind) > 1:
                raise DefinitionError(f"{kind} is given twice", where=ctx, field="clouds")
        for cloud in self.clouds:
            cloud.check(where=ctx)
        object.__setattr__(self, "clouds", tuple(self.clouds))

    def cloud_for(self, cluster: FleetCluster) -> CloudTarget | None:
        """This target's part for ``cluster``'s cloud (None: the target says nothing of it)."""
        return next((c for c in self.clouds if c.handles(cluster)), None)


@dataclass(frozen=True)
class Step:
    """One promotion step: ``ring`` takes step ``step`` (of ``of``) of ``target``."""

    target: UpgradeTarget
    ring: Ring
    step: int
    of: int

    @property
    def progress(self) -> Progress:
        """The ring's progress once this step is promoted."""
        return Progress(self.target.name, self.step)

    def describe(self) -> str:
        """``ring dev, step 1 of 2 of kubernetes-1.31``."""
        return f"ring {self.ring.name}, step {self.step} of {self.of} of {self.target.name}"


class _One:
    """The fleet's one rollout."""

    def __init__(self) -> None:
        self.rollout: Rollout | None = None


class _ApplyRollout:
    """The Aspect that applies the rollout once, when it visits the fleet."""

    def __init__(self, rollout: Rollout) -> None:
        self.rollout = rollout

    def visit(self, node: TreeConstruct) -> None:
        if isinstance(node, Fleet):
            self.rollout.apply()


class Rollout(FleetConstruct):
    """How Kubernetes upgrades move through the fleet: ``rings`` in order, ``targets`` (the
    last is the current one; earlier ones stay while a ring still runs them), and ``state``,
    the committed file (relative to the fleet's root) that says how far each ring has been
    promoted. One per fleet; it renders nothing itself.

    Every cluster, in every environment where it is not retired, is in exactly one ring
    (else an error naming it). A cluster of a promoted ring renders its target, up to the
    promoted step; never older than what it declares (a target that is not newer leaves it
    alone). ``fleet upgrade plan`` prints the path of every cluster; ``fleet upgrade promote``
    writes the next step into ``state`` once the previous ring soaked and converged.

    Example::

        Rollout(
            fleet, "upgrades",
            rings=[
                Ring(name="canary", environments=["dev"], clusters=["edh-dev"],
                     soak=timedelta(days=1)),
                Ring(name="dev", environments=["dev"], exclude=["edh-dev"],
                     soak=timedelta(days=2)),
                Ring(name="prod", environments=["prod"], soak=timedelta(0)),
            ],
            targets=[UpgradeTarget(name="kubernetes-1.31", clouds=[
                MagnumTarget(templates={"k8s_capi_helm_v1": CAPI_1_31}),
                OkeTarget(releases={"eu-frankfurt-1": OkeRelease(
                    kubernetes_version="v1.31.1", node_image_id="ocid1.image.oc1...")}),
            ])],
        )
    """

    rings: Sequence[Ring] = option(doc="The rings, in the order they take a target.")
    targets: Sequence[UpgradeTarget] = option(
        doc="The targets, oldest first; the last is the one being rolled out."
    )
    state: str = option(
        default=DEFAULT_STATE,
        nonempty=True,
        doc="The state file, relative to the fleet's root (written by `fleet upgrade promote`).",
    )

    def __post_init__(self) -> None:
        """The rings and targets checked, the state read and checked against them."""
        super().__post_init__()
        ctx = self.context
        one = self.fleet.catalog(_One)
        if one.rollout is not None:
            raise DefinitionError(
                f"a fleet has one rollout; another is declared at {one.rollout.context}",
                where=ctx,
                field="rings",
            )
        if not self.rings:
            raise DefinitionError("give the rings, in order", where=ctx, field="rings")
        if not self.targets:
            raise DefinitionError("give the target", where=ctx, field="targets")
        for field_name, items in (("rings", self.rings), ("targets", self.targets)):
            names = [getattr(i, "name", None) for i in items]
            twice = sorted({str(n) for n in names if names.count(n) > 1})
            if twice:
                raise DefinitionError(
                    f"{', '.join(twice)} is given twice", where=ctx, field=field_name
                )
        for ring in self.rings:
            for env in ring.environments:
                self.fleet.config.check_environment(env, where=ring.context, field="environments")
        relative = Path(self.state)
        if relative.is_absolute() or ".." in relative.parts:
            raise DefinitionError(
                f"must be a path inside the fleet's repository (it is committed), got "
                f"{self.state!r}",
                where=ctx,
                field="state",
            )
        self.state_path: Path = self.fleet.config.root / relative
        self.state_shown: str = self.state
        self.current: RolloutState = read_state(self.state_path, shown=self.state_shown)
        self._check_state()
        self._members: list[Member] = []
        self._recorded: dict[tuple[str, str, str], UpgradePath] = {}
        one.rollout = self
        Aspects.of(self.fleet).add(_ApplyRollout(self))

    def _check_state(self) -> None:
        rings = {r.name for r in self.rings}
        targets = [t.name for t in self.targets]
        for name, progress in self.current.rings.items():
            at = f"{self.state_shown}:{self.current.lines.get(name, 1)}"
            if name not in rings:
                raise DefinitionError(
                    f"ring {name!r} is not a ring of the rollout at {self.context} "
                    f"(rings: {', '.join(r.name for r in self.rings)})",
                    where=at,
                    field="state",
                )
            if progress.target not in targets:
                raise DefinitionError(
                    f"ring {name!r} runs target {progress.target!r}, which the rollout at "
                    f"{self.context} no longer declares: keep it in targets= (before "
                    f"{targets[-1]!r}) until every ring has moved past it",
                    where=at,
                    field="state",
                )

    @classmethod
    def of(cls, fleet: Fleet) -> Rollout | None:
        """The fleet's rollout, if it declares one."""
        return fleet.catalog(_One).rollout

    def render(self, environment: str) -> list[Manifest]:
        """Nothing: the rollout changes what its clusters render."""
        return []

    # --- applying it ------------------------------------------------------------------

    @property
    def target(self) -> UpgradeTarget:
        """The target being rolled out (the last one)."""
        return self.targets[-1]

    def index(self, target: str) -> int:
        """The position of target ``target`` in :attr:`targets`."""
        return [t.name for t in self.targets].index(target)

    def apply(self) -> None:
        """Put every cluster in its ring, and make each cluster of a promoted ring render its
        targets up to the promoted step (the Aspect calls it once)."""
        clusters = [d for d in self.fleet.declarations() if isinstance(d, FleetCluster)]
        self._members = membership(self.rings, clusters, where=self.context)
        errors: list[DefinitionError] = []
        for member in self._members:
            progress = self.current.progress(member.ring.name)
            if progress is None:
                continue
            last = self.index(progress.target)
            for i, target in enumerate(self.targets[: last + 1]):
                cloud = target.cloud_for(member.cluster)
                path = self.path(target, member)
                steps = len(path.steps) if i < last else min(progress.step, len(path.steps))
                if cloud is None or path.mode is not PathMode.IN_PLACE or not steps:
                    continue
                try:
                    cloud.apply(member.cluster, member.environment, steps)
                except DefinitionErrors as e:
                    errors.extend(e.errors)
                except DefinitionError as e:
                    errors.append(e)
        for ring in self.rings:
            progress = self.current.progress(ring.name)
            if progress is not None:
                steps = self.steps(self.targets[self.index(progress.target)], ring)
                if progress.step > steps:
                    errors.append(
                        DefinitionError(
                            f"ring {ring.name!r} is at step {progress.step} of "
                            f"{progress.target!r}, which has {steps} for it",
                            where=f"{self.state_shown}:{self.current.lines.get(ring.name, 1)}",
                            field="state",
                        )
                    )
        if errors:
            raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)

    # --- reading it -------------------------------------------------------------------

    @property
    def members(self) -> list[Member]:
        """Every cluster (per environment) with its ring, in ring order."""
        return list(self._members)

    def ring(self, name: str) -> Ring:
        """The ring called ``name``."""
        found = next((r for r in self.rings if r.name == name), None)
        if found is None:
            raise DefinitionError(
                f"no ring {name!r} (rings: {', '.join(r.name for r in self.rings)})",
                where=self.context,
                field="rings",
            )
        return found

    def members_of(self, ring: Ring) -> list[Member]:
        """The clusters of ``ring``."""
        return [m for m in self._members if m.ring.name == ring.name]

    def path(self, target: UpgradeTarget, member: Member) -> UpgradePath:
        """``target``'s path for ``member``: as it was when applied, or from what the cluster
        renders now for a target its ring has not taken."""
        key = (target.name, member.cluster.node.path, member.environment)
        found = self._recorded.get(key)
        if found is None:
            cloud = target.cloud_for(member.cluster)
            found = (
                cloud.path(member.cluster, member.environment)
                if cloud is not None
                else UpgradePath(
                    PathMode.UNTARGETED,
                    member.cluster.kubernetes_version(member.environment),
                    "",
                    f"target {target.name!r} has no part for {type(member.cluster).__name__}",
                )
            )
            self._recorded[key] = found
        return found

    def steps(self, target: UpgradeTarget, ring: Ring) -> int:
        """How many promotion steps ``ring`` takes for ``target`` (at least one)."""
        counts = [
            len(p.steps)
            for m in self.members_of(ring)
            if (p := self.path(target, m)).mode is PathMode.IN_PLACE
        ]
        return max([1, *counts])

    def sequence(self) -> list[Step]:
        """Every promotion step, in the order they are promoted."""
        out: list[Step] = []
        for target in self.targets:
            for ring in self.rings:
                count = self.steps(target, ring)
                out.extend(Step(target, ring, s, count) for s in range(1, count + 1))
        return out

    def done(self, step: Step) -> bool:
        """Whether ``step`` is promoted in the state."""
        progress = self.current.progress(step.ring.name)
        if progress is None:
            return False
        at = (self.index(progress.target), progress.step)
        return at >= (self.index(step.target.name), step.step)

    def next_step(self) -> Step | None:
        """The first step not promoted (None: the rollout is complete)."""
        return next((s for s in self.sequence() if not self.done(s)), None)

    def previous(self, step: Step) -> Step | None:
        """The step promoted just before ``step`` (None for the first)."""
        steps = self.sequence()
        i = next(i for i, s in enumerate(steps) if s == step)
        return steps[i - 1] if i else None
