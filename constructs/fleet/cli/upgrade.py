"""``fleet upgrade plan`` and ``fleet upgrade promote``: the fleet's upgrade rollout
(:mod:`fleet.upgrades`) on the command line.

``plan`` prints, ring by ring, every cluster's path to the target (in place in which steps,
blue/green or refused and why) and what each promotion step waits for; ``--format json``
for machines. ``promote`` asks the gate (:mod:`fleet.upgrades.gate`: the previous step
committed, the previous ring soaked since the commit that promoted it, its clusters
converged per ``fleet status``), then writes the next step into the state file and renders
``dist/`` (``fleet synth``): one commit for a pull request, whose ``fleet diff`` shows that
ring's changes and nothing else.

Exit codes: 0 planned, promoted or nothing left to promote; 1 the gate refused (each
reason on its own line); 2 bad input (no rollout declared, a bad definition or state file).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from fleet.clouds.upgrades import PathMode
from fleet.core.config import FleetConfig
from fleet.core.errors import FleetError
from fleet.core.fleet import Fleet
from fleet.core.secrets import redact
from fleet.core.words import plural
from fleet.upgrades.rings import Member
from fleet.upgrades.rollout import Rollout, Step
from fleet.upgrades.state import parse_state

if TYPE_CHECKING:  # the plan, the gate and the status view are imported when they run
    from fleet.upgrades.gate import PromotedAt, Promotion, Unconverged
    from fleet.upgrades.plan import RolloutPlan
    from fleet.views.status import ClusterStatus
    from fleet.views.status.read import ClientFactory

EXIT_OK, EXIT_REFUSED = 0, 1
MODES = {
    PathMode.IN_PLACE: "in place",
    PathMode.BLUE_GREEN: "blue/green",
    PathMode.REFUSED: "refused",
    PathMode.CURRENT: "at target",
    PathMode.UNTARGETED: "no target",
}


def rollout_of(fleet: Fleet) -> Rollout:
    """The fleet's rollout, or the error saying how to declare one."""
    found = Rollout.of(fleet)
    if found is None:
        raise FleetError(
            "the fleet declares no upgrade rollout: add Rollout(fleet, ..., rings=[...], "
            'targets=[...]) to a module of clusters/ (docs/guide.md, "Upgrade Kubernetes '
            'across the fleet")'
        )
    return found


def render_plan(result: RolloutPlan, rollout: Rollout, out: TextIO) -> None:
    """The plan as text."""
    from fleet.upgrades.plan import StepStatus, soak_text

    out.write(
        f"Upgrade rollout {rollout.context}: target {result.target} (state: {result.state})\n"
    )
    if result.next is None:
        out.write("Every step is promoted: the rollout of this target is complete.\n")
    else:
        out.write(f"Next: {result.next.describe()} (`fleet upgrade promote`)\n")
    for ring in result.rings:
        at = (
            f"at step {ring.progress.step} of {ring.progress.target}"
            if ring.progress
            else "not promoted"
        )
        out.write(f"\nring {ring.ring.name} (soak {soak_text(ring.ring)}): {at}\n")
        for s in ring.steps:
            out.write(
                f"  step {s.step.step} of {s.step.of} [{s.status.value}]"
                + ("" if s.status is StepStatus.PROMOTED else f": waits for {s.waits_for}")
                + "\n"
            )
        for c in ring.clusters:
            path = c.path
            label = c.member.label
            shown = f"{path.current} -> {path.target}" if path.target else path.current
            out.write(f"  {label}  {c.cloud}  {MODES[path.mode]}  {shown}\n")
            out.write(f"      why: {path.why}\n")
            for i, step in enumerate(path.steps, start=1):
                if len(step.changes) == 1:
                    out.write(f"      step {i}, {step.title}: {step.changes[0]}\n")
                    continue
                out.write(f"      step {i}, {step.title}:\n")
                for change in step.changes:
                    out.write(f"        {change}\n")
    counts = result.counts()
    total = sum(counts.values())
    parts = ", ".join(f"{n} {MODES[PathMode(m)]}" for m, n in sorted(counts.items()))
    promoted = sum(1 for r in result.rings for s in r.steps if s.status is StepStatus.PROMOTED)
    steps = sum(len(r.steps) for r in result.rings)
    out.write(
        f"\n{plural(total, 'cluster')}: {parts or 'none'}; {promoted} of "
        f"{plural(steps, 'step')} promoted.\n"
    )


def _plan(args: argparse.Namespace, config: FleetConfig) -> int:
    from fleet.pipeline.discovery import load_fleet
    from fleet.upgrades.plan import plan

    fleet = load_fleet(config)
    rollout = rollout_of(fleet)
    result = plan(rollout)
    if args.format == "json":
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, sort_keys=True) + "\n")
    else:
        render_plan(result, rollout, sys.stdout)
    return EXIT_OK


def promoted_at_from_git(rollout: Rollout, repo: Path) -> PromotedAt:
    """When each step was promoted: the first commit of ``HEAD``'s first-parent history
    whose state file has the ring at that step or further (git's committer time)."""
    from fleet.pipeline.git import file_history

    history = file_history(repo, rollout.state_path)

    def at(step: Step) -> tuple[str, datetime] | None:
        wanted = (rollout.index(step.target.name), step.step)
        for sha, seconds, text in history:
            if text is None:
                continue
            try:
                state = parse_state(text, source=f"{sha[:12]}:{rollout.state_shown}")
            except FleetError:
                continue
            progress = state.progress(step.ring.name)
            if progress is None or progress.target not in [t.name for t in rollout.targets]:
                continue
            if (rollout.index(progress.target), progress.step) >= wanted:
                return sha, datetime.fromtimestamp(seconds, tz=UTC)
        return None

    return at


def run_promote(
    config: FleetConfig,
    *,
    now: datetime,
    unconverged: Callable[[Fleet], Unconverged],
    dry_run: bool,
    out: TextIO,
    err: TextIO,
) -> int:
    """Ask the gate, then write the next step and render ``dist/`` (not with ``dry_run``)."""
    from fleet.pipeline.discovery import load_fleet
    from fleet.pipeline.git import GitError, git_toplevel
    from fleet.upgrades.gate import Complete, Refusal, decide

    fleet = load_fleet(config)
    rollout = rollout_of(fleet)
    try:
        repo = git_toplevel(config.root)
    except FleetError as e:
        raise FleetError(f"fleet upgrade promote reads the promotions from git: {e}") from None
    try:
        verdict = decide(
            rollout,
            now=now,
            promoted_at=promoted_at_from_git(rollout, repo),
            unconverged=unconverged(fleet),
        )
    except GitError as e:
        raise FleetError(str(e)) from None
    if isinstance(verdict, Complete):
        out.write(f"Nothing to promote: every ring runs every step of {verdict.target}.\n")
        return EXIT_OK
    if isinstance(verdict, Refusal):
        for reason in verdict.reasons:
            print(f"refused: {reason}", file=err)
        return EXIT_REFUSED
    return _write(config, rollout, verdict, dry_run=dry_run, out=out)


def _write(
    config: FleetConfig, rollout: Rollout, promotion: Promotion, *, dry_run: bool, out: TextIO
) -> int:
    step = promotion.step
    verb = "Would promote" if dry_run else "Promoted"
    out.write(f"{verb} {step.describe()} ({rollout.state_shown}):\n")
    for member in promotion.changed:
        upgrade = rollout.path(step.target, member)
        title = upgrade.steps[step.step - 1].title
        out.write(f"  {member.label}: {title}: {upgrade.current} -> {upgrade.target}\n")
    if not promotion.changed:
        out.write("  (no cluster of the ring changes at this step)\n")
    if dry_run:
        return EXIT_OK
    path = rollout.state_path
    before = path.read_text(encoding="utf-8") if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(promotion.state.dump(), encoding="utf-8")
    from fleet.pipeline.synth import synthesize

    try:
        result = synthesize(config, write=True)
    except BaseException:
        # The state and dist/ go together: leave neither half-promoted.
        if before is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(before, encoding="utf-8")
        raise
    out.write(
        f"Wrote {rollout.state_shown} and {config.dist}/ "
        f"({plural(result.changed_files or 0, 'file')} "
        f"changed). Commit both in one pull request: `fleet diff` shows ring "
        f"{step.ring.name}'s changes only.\n"
    )
    return EXIT_OK


def status_check(
    clients: ClientFactory | None = None,
) -> Callable[[Fleet], Unconverged]:
    """The gate's convergence check: ``fleet status``'s verdict (:mod:`fleet.views.status`).

    The members are read in one :func:`~fleet.views.status.read_status` call (one
    :class:`~fleet.views.status.Selection` of exactly them); a member is converged when its
    row is (:meth:`~fleet.views.status.ClusterStatus.converged`: ArgoCD synced the last
    commit that changed its ``dist/<env>/`` and is healthy, every object is live and ready,
    the live version is the declared one, which for a promoted ring is the target). A
    member without a row (its environment could not be read) is not converged: the read
    problem is the reason. ``clients`` as ``read_status`` takes it (default: kubeconfig).
    """

    def make(fleet: Fleet) -> Unconverged:
        def unconverged(members: Sequence[Member]) -> list[tuple[Member, str]]:
            if not members:
                return []
            from fleet.views.status import Selection, read_status

            def key(m: Member) -> tuple[str, str]:
                return (m.environment, m.cluster.object_name(m.environment))

            wanted = {key(m) for m in members}
            selection = Selection(
                environments=tuple(sorted({m.environment for m in members})),
                filters=(lambda c, env: (env, c.object_name(env)) in wanted,),
            )
            status = read_status(fleet, selection, clients=clients)
            rows = {(r.environment, r.cluster): r for r in status.clusters}
            problems = {e.environment: e.problems for e in status.environments}
            out: list[tuple[Member, str]] = []
            for m in members:
                row = rows.get(key(m))
                if row is None:
                    why = "; ".join(problems.get(m.environment, ())) or "fleet status read no row"
                    out.append((m, f"unknown: {redact(why)}"))
                elif not row.converged():
                    out.append((m, _why(row)))
            return out

        return unconverged

    return make


def _why(row: ClusterStatus) -> str:
    """One line: the verdict, the versions, the first problem (as ``fleet status`` says)."""
    from fleet.cli.status import describe

    live = row.live_version or "?"
    text = f"{row.verdict.value} (declared {row.declared_version}, live {live})"
    if row.problem is not None:
        text += f": {describe(row.problem)}"
    elif row.unread:
        text += f": not read: {row.unread[0]}"
    return redact(text)


def _promote(args: argparse.Namespace, config: FleetConfig) -> int:
    from fleet.views.status import kube_clients

    clients = kube_clients(config, context=args.context, kubeconfig=args.kubeconfig)
    return run_promote(
        config,
        now=datetime.now(tz=UTC),
        unconverged=status_check(clients),
        dry_run=args.dry_run,
        out=sys.stdout,
        err=sys.stderr,
    )


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``fleet upgrade plan`` and ``fleet upgrade promote``."""
    p = sub.add_parser(
        "upgrade",
        help="the upgrade rollout: plan it, promote its next step",
        description="The fleet's upgrade rollout (a Rollout in clusters/: rings, targets, "
        "the state file). Exit codes: 0 done, 1 the gate refused a promotion, 2 bad input.",
    )
    actions = p.add_subparsers(dest="action", required=True)
    plan_p = actions.add_parser(
        "plan",
        help="every cluster's path to the target, ring by ring, and what each step waits for",
    )
    plan_p.add_argument("--format", choices=("text", "json"), default="text")
    plan_p.set_defaults(handler=_plan)
    promote_p = actions.add_parser(
        "promote",
        help="write the next promotion step (state file and dist/) once its ring may take it",
        description="Refuses while the previous step is not committed, the previous ring has "
        "not soaked its minimum time since the commit that promoted it, or one of its "
        "clusters is not converged at the target (fleet status).",
    )
    promote_p.add_argument(
        "--dry-run", action="store_true", help="say what would be promoted; write nothing"
    )
    promote_p.add_argument(
        "--context",
        metavar="CTX",
        help="the kubeconfig context for every environment the gate reads (instead of "
        "[tool.fleet.contexts]; as fleet status)",
    )
    promote_p.add_argument(
        "--kubeconfig",
        type=Path,
        metavar="PATH",
        help="the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)",
    )
    promote_p.set_defaults(handler=_promote)
    for parser in (plan_p, promote_p):
        parser.add_argument("--debug", action="store_true", help="show tracebacks")
