"""``fleet validate`` and ``fleet crds pull``.

Register both with ``add_parsers(subparsers)``. Handlers take ``(args, config)`` and return
the exit code: 0 clean, 1 a check found a problem (invalid object, dangling reference,
secret material, refused CRD download); bad input raises FleetError (exit 2 in ``fleet.cli.main``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fleet.checks.crds import PACKAGED_CRDS, PACKAGED_LOCK, CrdPullError, pull, resolve_crds_dir
from fleet.checks.problem import InvalidObjects
from fleet.core.config import FleetConfig
from fleet.core.words import plural


def _validate(args: argparse.Namespace, config: FleetConfig) -> int:
    from fleet.pipeline import synth as pipeline

    crds_dir = resolve_crds_dir(args.crds)
    try:
        # The synth's checks (every one of Checks.of(fleet).all), against these CRDs.
        result = pipeline.synthesize(config, args.env or None, crds_dir=crds_dir)
    except InvalidObjects as e:
        for problem in e.problems:
            print(f"error: {problem.line()}", file=sys.stderr)
        print(
            f"{plural(len(e.problems), 'problem')} in {plural(e.objects, 'object')}",
            file=sys.stderr,
        )
        return 1
    print(f"{plural(result.object_count, 'object')} valid against the CRDs in {crds_dir}")
    for line in _warnings(config):
        print(f"warning: {line}", file=sys.stderr)
    return 0


def _warnings(config: FleetConfig) -> list[str]:
    """Each cluster's warnings (:meth:`fleet.clouds.base.FleetCluster.warnings`)."""
    from fleet.clouds.base import FleetCluster
    from fleet.pipeline.discovery import load_fleet

    return [
        line
        for decl in load_fleet(config).declarations()
        if isinstance(decl, FleetCluster)
        for line in decl.warnings()
    ]


def _pull(args: argparse.Namespace, config: FleetConfig) -> int:
    lock = args.lock or PACKAGED_LOCK
    cache = args.into or lock.parent / PACKAGED_CRDS.name
    try:
        result = pull(lock, cache)
    except CrdPullError as exc:
        for line in exc.result.refused:
            print(f"error: {line}", file=sys.stderr)
        print(
            f"wrote {len(exc.result.written)}, kept {len(exc.result.unchanged)}, "
            f"refused {plural(len(exc.result.refused), 'CRD file')} in {cache}",
            file=sys.stderr,
        )
        return 1
    print(
        f"wrote {len(result.written)}, kept {plural(len(result.unchanged), 'CRD file')} in {cache}"
    )
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``fleet validate`` and ``fleet crds pull``."""
    p = sub.add_parser(
        "validate",
        help="check rendered objects against the CRDs, references and the secret guard",
    )
    p.add_argument(
        "--crds",
        type=Path,
        default=None,
        metavar="DIR",
        help="CRD folder (default: $FLEET_CRDS_DIR, else the CRDs pinned in the fleet package)",
    )
    p.add_argument("--env", action="append", metavar="NAME", help="only this environment")
    p.set_defaults(handler=_validate)

    crds = sub.add_parser("crds", help="manage the pinned upstream CRDs")
    crds_sub = crds.add_subparsers(dest="crds_command", required=True)
    pull_parser = crds_sub.add_parser(
        "pull",
        help="download the CRDs pinned in crds.lock.yaml into the crds/ folder beside it "
        "(sha256-checked)",
    )
    pull_parser.add_argument(
        "--lock",
        type=Path,
        default=None,
        help="lock file to read (default: the fleet package's own, fleet/data/crds.lock.yaml)",
    )
    pull_parser.add_argument(
        "--into",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder to write (default: crds/ beside the lock file)",
    )
    pull_parser.set_defaults(handler=_pull)
