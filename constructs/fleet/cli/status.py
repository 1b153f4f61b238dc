"""``fleet status``: is my change live? The declared clusters joined with the management
clusters (ArgoCD, Crossplane, Cluster API), as a table (on a terminal) or JSON.

Exit codes. Without ``--wait``: 0 when every selected environment could be read, 1 when
one could not (its line names what to fix). With ``--wait``: 0 once every selected cluster
converged at its declared version; 1 as soon as something failed (or a read problem that
waiting cannot fix: RBAC, CRDs, credentials); 3 when the timeout passes while something is
still progressing (1 when the management cluster stayed unreachable).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from fleet.core.config import FleetConfig
from fleet.core.secrets import redact
from fleet.platform.live import Finding, Verdict

if TYPE_CHECKING:  # the status view is imported when the command runs, not by `fleet synth`
    from fleet.core.fleet import Fleet
    from fleet.views.status import ClusterStatus, FleetStatus, Selection
    from fleet.views.status.read import ClientFactory

FORMATS = ("table", "json")
EXIT_CONVERGED, EXIT_FAILED, EXIT_PROGRESSING = 0, 1, 3
DEFAULT_TIMEOUT = 1800.0
POLL_SECONDS = 15.0
"""How often ``--wait`` reads again."""
TABLE_WIDTH = 100
"""The table fits this many columns (wider terminals too: the messages wrap below rows)."""

HEADERS = ("cluster", "cloud", "version", "live", "argocd", "health", "reg", "state")
SHRINKABLE = ("argocd", "live", "version", "health")
"""Columns that wrap, in the order they give up width when the table is too wide."""


def default_format(stream: TextIO) -> str:
    """``table`` on a terminal, ``json`` otherwise (pipes, CI)."""
    isatty = getattr(stream, "isatty", None)
    return "table" if callable(isatty) and isatty() else "json"


def _argocd(row: ClusterStatus) -> str:
    from fleet.views.status.revisions import RevisionState

    app = row.application
    if app is None:
        return "-" if not row.unread else "?"
    if not app.present:
        return "missing"
    text = app.sync or "?"
    if app.revision:
        text += f" {app.revision[:7]}"
    if app.revision_state is RevisionState.BEHIND:
        text += " behind"
    return text


def cells(row: ClusterStatus) -> dict[str, str]:
    """The row as the table shows it."""
    live = row.live_version or ("?" if row.unread else "-")
    registered = {True: "yes", False: "no", None: "-"}[row.registered]
    health = row.application.health if row.application and row.application.health else "-"
    return {
        "cluster": row.cluster,
        "cloud": row.cloud,
        "version": row.declared_version,
        "live": live,
        "argocd": _argocd(row),
        "health": health,
        "reg": registered,
        "state": row.verdict.value,
    }


def describe(finding: Finding) -> str:
    """A finding as one (long) line: the object, the condition, since when, the message."""
    what = finding.what
    if finding.reason:
        what += f" ({finding.reason})"
    since = f" since {finding.since}" if finding.since else ""
    message = f": {finding.message}" if finding.message else ""
    return f"{finding.kind} {finding.name}: {what}{since}{message}"


def _widths(rows: Sequence[dict[str, str]], width: int) -> tuple[dict[str, int], int]:
    """Each column's width and the gap between columns: two spaces when the table fits,
    else one, else the wrappable columns give up width down to their longest word."""
    need = {h: max([len(h), *(len(r[h]) for r in rows)]) for h in HEADERS}
    gap = 2 if sum(need.values()) + 2 * (len(HEADERS) - 1) <= width else 1
    over = sum(need.values()) + gap * (len(HEADERS) - 1) - width
    for column in SHRINKABLE:
        if over <= 0:
            break
        longest_word = max([len(column)] + [len(w) for r in rows for w in r[column].split()])
        give = min(over, need[column] - longest_word)
        if give > 0:
            need[column] -= give
            over -= give
    return need, gap


STYLES = {
    Verdict.CONVERGED: "green",
    Verdict.PROGRESSING: "yellow",
    Verdict.FAILED: "bold red",
    Verdict.UNKNOWN: "magenta",
}


def render_table(status: FleetStatus, *, stream: TextIO, width: int = TABLE_WIDTH) -> None:
    """The status as a table of at most ``width`` columns: a heading per environment, a
    line per cluster, and below a cluster that has not converged its first problem,
    whole, wrapped; then the orphans and the declared objects that are not live."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=stream, width=width, highlight=False, soft_wrap=False)
    table_cells = [cells(r) for r in status.clusters]
    widths, gap = _widths(table_cells, width)

    def line(values: dict[str, str], *, header: bool = False, style: str | None = None) -> None:
        table = Table(
            box=None, show_header=False, pad_edge=False, padding=(0, gap, 0, 0), expand=False
        )
        for h in HEADERS:
            table.add_column(width=widths[h], no_wrap=h not in SHRINKABLE, overflow="fold")
        row = [Text(values[h], style="bold" if header else "") for h in HEADERS]
        if style:
            row[-1] = Text(values["state"], style=style)
        table.add_row(*row)
        console.print(table)

    by_env: dict[str, list[int]] = {}
    for i, r in enumerate(status.clusters):
        by_env.setdefault(r.environment, []).append(i)
    for read in status.environments:
        context = f" ({read.context})" if read.context else ""
        indexes = by_env.get(read.environment, [])
        console.print(
            Text(f"{read.environment}{context}: {len(indexes)} declared", style="bold underline")
        )
        for line_ in read.problems:
            console.print(indent(f"not read: {redact(line_)}", 2, width))
        if indexes:
            line({h: h for h in HEADERS}, header=True)
        for i in indexes:
            row = status.clusters[i]
            line(table_cells[i], style=STYLES[row.verdict])
            problem = row.problem
            if problem is not None:
                console.print(indent(describe(problem), 4, width))
    if status.orphans:
        console.print(
            Text(
                "orphans (live, tracked by the fleet's ArgoCD, rendered by no declaration):",
                style="bold",
            )
        )
        for o in status.orphans:
            console.print(
                indent(
                    f"{o.ref.environment}: {o.ref.describe()} (Application {o.application})",
                    2,
                    width,
                )
            )
    if status.missing:
        console.print(Text("declared, not live:", style="bold"))
        for m in status.missing:
            console.print(indent(f"{m.environment}: {m.describe()}", 2, width))
    console.print(Text(status.summary()))


def indent(text: str, spaces: int, width: int) -> Any:
    """``text`` wrapped at ``width`` at spaces (a longer word is split, never cut), every
    line indented by ``spaces``, no trailing blanks."""
    from rich.text import Text

    lines = textwrap.wrap(
        text,
        width,
        initial_indent=" " * spaces,
        subsequent_indent=" " * spaces,
        break_on_hyphens=False,
    )
    return Text("\n".join(lines), no_wrap=True)


def to_json(status: FleetStatus) -> str:
    """The status as indented JSON (:meth:`FleetStatus.to_dict`), newline-terminated."""
    return json.dumps(status.to_dict(), indent=2) + "\n"


def wait_exit(status: FleetStatus) -> int | None:
    """The exit code ``--wait`` ends with now, or None to keep waiting."""
    if any(c.verdict is Verdict.FAILED for c in status.clusters):
        return EXIT_FAILED
    if any(e.problems and not e.unreachable for e in status.environments):
        return EXIT_FAILED
    if status.converged():
        return EXIT_CONVERGED
    return None


def run_status(
    config: FleetConfig,
    selection: Selection,
    *,
    clients: ClientFactory,
    fmt: str,
    wait: bool,
    timeout: float,
    interval: float = POLL_SECONDS,
    out: TextIO,
    err: TextIO,
    fleet: Fleet | None = None,
) -> int:
    """Read (and with ``wait``, read again until a verdict or ``timeout``), print, and
    return the exit code (see the module's docstring). ``fleet``: the fleet already loaded
    (else it is loaded from ``config``)."""
    from fleet.pipeline.discovery import load_fleet
    from fleet.views.status import read_status

    fleet = fleet or load_fleet(config)
    started = time.monotonic()
    while True:
        status = read_status(fleet, selection, clients=clients)
        if not wait:
            code = EXIT_FAILED if status.problems else EXIT_CONVERGED
            break
        decided = wait_exit(status)
        elapsed = time.monotonic() - started
        if decided is not None:
            code = decided
            break
        if elapsed + interval > timeout:
            unreachable = any(e.unreachable for e in status.environments)
            code = EXIT_FAILED if unreachable else EXIT_PROGRESSING
            print(
                f"timeout: after {elapsed:.0f} s, {status.summary()}"
                + (" (a management cluster is unreachable)" if unreachable else ""),
                file=err,
            )
            break
        print(f"waiting ({elapsed:.0f} s): {status.summary()}", file=err)
        time.sleep(interval)
    if fmt == "table":
        render_table(status, stream=out)
    else:
        out.write(to_json(status))
    for problem in status.problems:
        print(f"error: {redact(problem)}", file=err)
    return code


def ring_selection(fleet: Fleet, ring: str, selection: Selection) -> Selection:
    """``selection`` narrowed to the clusters of the upgrade rollout's ring ``ring``
    (:meth:`fleet.upgrades.rings.Ring.contains`); a fleet without a rollout, or a ring
    it does not have, is bad input."""
    from dataclasses import replace

    from fleet.cli.upgrade import rollout_of

    fleet.run_phases()
    chosen = rollout_of(fleet).ring(ring)
    return replace(selection, filters=(*selection.filters, chosen.contains))


def _status(args: argparse.Namespace, config: FleetConfig) -> int:
    from fleet.pipeline.discovery import load_fleet
    from fleet.views.status import Selection, kube_clients

    selection = Selection(
        environments=tuple(args.env or ()),
        clusters=tuple(args.cluster or ()),
    )
    fleet = load_fleet(config)
    if args.ring:
        selection = ring_selection(fleet, args.ring, selection)
    clients = kube_clients(config, context=args.context, kubeconfig=args.kubeconfig)
    return run_status(
        config,
        selection,
        clients=clients,
        fmt=args.format or default_format(sys.stdout),
        wait=args.wait,
        timeout=args.timeout,
        out=sys.stdout,
        err=sys.stderr,
        fleet=fleet,
    )


def _seconds(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, got {text}")
    return value


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``fleet status``."""
    p = sub.add_parser(
        "status",
        help="is my change live? the declared clusters joined with the management clusters",
        description="One row per declared cluster: its environment and cloud, declared and "
        "live Kubernetes version, ArgoCD's sync (the commit it has against the last commit "
        "that changed dist/<env>/), health, ArgoCD registration, and the first failing "
        "condition with its whole message and since when. Lists orphans (live objects the "
        "fleet's ArgoCD tracks that nothing declares any more) and declared objects that "
        "are not live. Read-only: needs the ClusterRole fleet-status-reader of "
        "dist/<env>/platform/. Each environment is read through its kubeconfig context "
        "([tool.fleet.contexts]). Exit codes: 0 read (--wait: converged), 1 a read problem "
        "(--wait: something failed), 3 (--wait) still progressing at the timeout.",
    )
    p.add_argument("--env", action="append", metavar="NAME", help="only this environment")
    p.add_argument(
        "--cluster",
        action="append",
        metavar="NAME",
        help="only this cluster (its name, as `fleet ls` shows it, or its construct id)",
    )
    p.add_argument(
        "--ring",
        metavar="NAME",
        help="only the clusters of this ring of the upgrade rollout (fleet upgrade plan "
        "lists the rings)",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="table (a terminal's default, 100 columns) or json (the default when piped: "
        "every row with all its findings, the orphans, missing objects and read problems)",
    )
    p.add_argument(
        "--wait",
        action="store_true",
        help="read again every 15 s until every selected cluster converged at its declared "
        "version (exit 0), something failed (exit 1), or the timeout passed (exit 3)",
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"how long --wait waits (default {DEFAULT_TIMEOUT:.0f})",
    )
    p.add_argument(
        "--context",
        metavar="CTX",
        help="the kubeconfig context for every selected environment (instead of "
        "[tool.fleet.contexts])",
    )
    p.add_argument(
        "--kubeconfig",
        type=Path,
        metavar="PATH",
        help="the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)",
    )
    p.set_defaults(handler=_status)
