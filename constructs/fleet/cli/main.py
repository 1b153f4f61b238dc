"""The ``fleet`` command line: ``fleet synth``, the subcommands other modules add, and those
installed plug-ins publish (entry-point group ``fleet.commands``: :mod:`fleet.cli.commands`)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from fleet.cli.commands import add_plugin_commands
from fleet.cli.diff import add_parser as _add_diff
from fleet.cli.distribution import version_line
from fleet.cli.graph import add_parser as _add_graph
from fleet.cli.imports import add_parser as _add_import
from fleet.cli.init import add_parser as _add_init
from fleet.cli.ls import add_parser as _add_ls
from fleet.cli.status import add_parser as _add_status
from fleet.cli.upgrade import add_parser as _add_upgrade
from fleet.cli.validate import add_parsers as _add_validate
from fleet.core.commands import Handler, Registrar, Subparsers
from fleet.core.config import FleetConfig
from fleet.core.errors import FleetError
from fleet.core.redact import redact
from fleet.core.words import plural

if TYPE_CHECKING:  # the pipeline is imported by the commands that run it (cdk8s is slow)
    from fleet.pipeline.synth import Synth

EXIT_OK, EXIT_CHECK, EXIT_INPUT = 0, 1, 2
EXIT_SIGNAL = 128
"""Exit code of a command stopped by signal N: ``EXIT_SIGNAL + N`` (the shell's convention)."""


def _synth(args: argparse.Namespace, config: FleetConfig) -> int:
    from fleet.pipeline import synth as pipeline
    from fleet.pipeline.progress import Progress

    started: float = args.started
    with Progress() as progress:  # shows only when the synth takes longer than 2 s
        if not args.check:
            progress.expect(len(set(args.env or config.environments)))  # the writes
        result = pipeline.synthesize(
            config,
            args.env or None,
            jobs=args.jobs,
            use_cache=False if args.no_cache else None,
            progress=progress,
            write=not args.check,
        )
    if result.crds_dir is None:
        print(
            "note: schemas not checked (no CRDs: run `fleet crds pull` or set FLEET_CRDS_DIR)",
            file=sys.stderr,
        )
    if args.check:
        differing = pipeline.drift(config, result)
        if differing:
            print(pipeline.drift_report(config, differing))
            return EXIT_CHECK
        print(f"dist/ is up to date ({plural(result.object_count, 'object')})")
        return EXIT_OK
    elapsed = time.perf_counter() - started
    print(synth_summary(config, result, elapsed))
    return EXIT_OK


def synth_summary(config: FleetConfig, result: Synth, seconds: float) -> str:
    """The line ``fleet synth`` ends with: what it rendered, how many files of ``dist/`` it
    changed (none: it says dist/ is up to date), and how long it took."""
    rendered = (
        f"{plural(result.object_count, 'object')} in {plural(len(result.files), 'environment')}"
    )
    took = f"{seconds:.1f} s" if seconds >= 0.95 else f"{seconds:.2f} s"
    if not result.changed_files:
        return f"{config.dist}/ is up to date: {rendered}, no file changed ({took})"
    changed = plural(result.changed_files, "file")
    return f"wrote {rendered} to {config.dist}/ in {took} ({changed} changed)"


def _add_synth(sub: Subparsers) -> None:
    p = sub.add_parser("synth", help="render the fleet into dist/")
    p.add_argument("--env", action="append", metavar="NAME", help="only this environment")
    p.add_argument("--check", action="store_true", help="exit 1 if dist/ differs from the sources")
    p.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="processes rendering environments (default: $FLEET_JOBS, else by fleet size)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="ignore .fleet/cache/synth (as $FLEET_NO_CACHE=1); the output is the same",
    )
    p.set_defaults(handler=_synth)


SUBCOMMANDS: tuple[Registrar, ...] = (
    _add_synth,
    _add_ls,
    _add_status,
    _add_graph,
    _add_diff,
    _add_upgrade,
    _add_import,
    _add_validate,
    _add_init,
)
"""The tool's own subcommands; installed plug-ins add theirs through entry points."""


def _warn(line: str) -> None:
    print(f"warning: {line}", file=sys.stderr)


def build_parser(warn: Callable[[str], None] = _warn) -> argparse.ArgumentParser:
    """The argument parser with every subcommand, the plug-ins' included (one that cannot
    be added is one ``warn`` line)."""
    parser = argparse.ArgumentParser(prog="fleet", description="Fleet-as-code for Kubernetes.")
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(os.environ.get("FLEET_ROOT", ".")),
        help="the fleet project (default: the current folder)",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument(
        "--version",
        action="version",
        version=version_line(),
        help="print the installed version of the tool and exit",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for add in SUBCOMMANDS:
        add(sub)
    add_plugin_commands(sub, warn)
    for name, p in sub.choices.items():
        if name != "help":
            p.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that every ``with`` block cleans up (a synth removes
    what it staged in ``dist/``) instead of the process dying on the spot."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


@contextmanager
def _terminable() -> Iterator[None]:
    """SIGTERM raises :class:`_Terminated` while the command runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    started = time.perf_counter()
    parser = build_parser()
    args = parser.parse_args(argv)
    args.started = started
    try:
        with _terminable():
            # `fleet init` makes a project: whatever pyproject.toml is here is not its own
            reads_config = getattr(args, "reads_config", True)
            if reads_config and not args.root.is_dir():
                raise FleetError(f"--root {args.root}: not a folder (the fleet project)")
            config = (
                FleetConfig.load(args.root)
                if reads_config
                else FleetConfig(root=args.root.resolve())
            )
            handler: Handler = args.handler
            return handler(args, config)
    except KeyboardInterrupt as e:
        # Ctrl-C or SIGTERM: every cleanup ran on the way here; no traceback.
        if args.debug:
            traceback.print_exc()
        print("error: interrupted", file=sys.stderr)
        return EXIT_SIGNAL + (signal.SIGTERM if isinstance(e, _Terminated) else signal.SIGINT)
    except FleetError as e:
        # DefinitionErrors and InvalidObjects render one problem per line.
        if args.debug:
            traceback.print_exc()
        for line in str(e).splitlines():
            # Every error line, whatever raised it (a schema problem quotes the value it
            # rejected): never a credential on the terminal or in a CI log.
            print(f"error: {redact(line)}", file=sys.stderr)
        return EXIT_INPUT


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
