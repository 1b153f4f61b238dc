"""``fleet ls``: the fleet's inventory as a table (on a terminal), JSON or CSV."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from fleet.core.config import FleetConfig
from fleet.core.words import plural

if TYPE_CHECKING:  # imported when `fleet ls` runs, not by every command's parser
    from fleet.views.inventory import InventoryRow

FORMATS = ("table", "json", "csv")

HEADERS = {
    "cluster": "cluster",
    "cloud": "cloud",
    "version": "template/version",
    "nodes": "nodes",
    "account": "account",
    "notes": "notes",
}
NO_WRAP = ("cluster", "cloud", "version", "nodes")
"""Names and numbers are never cut; project names and notes wrap at spaces, and a template
name too long for the terminal wraps after a ``-`` (:func:`_wrap_at_hyphens`)."""
HYPHENATED = "version"
MIN_HYPHENATED = 16
"""The template column is never made narrower than this to fit the terminal."""


def default_format(stream: TextIO) -> str:
    """``table`` when ``stream`` is a terminal, else ``json`` (for pipes and scripts)."""
    isatty = getattr(stream, "isatty", None)
    return "table" if callable(isatty) and isatty() else "json"


def render_table(rows: Sequence[InventoryRow], *, stream: TextIO, width: int | None = None) -> None:
    """Print ``rows`` as a table to ``stream``, under a heading per environment.

    ``width`` defaults to the terminal's. Nothing is cut: a template name that does not
    fit wraps after one of its ``-`` (the JSON and CSV formats carry it whole); when the
    table still does not fit, it is as wide as the names need (the terminal wraps the lines).
    """
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from fleet.views.inventory import COLUMNS

    table = Table(box=None, header_style="bold", pad_edge=False, padding=(0, 1))
    for column in COLUMNS:
        table.add_column(
            HEADERS[column],
            no_wrap=column in NO_WRAP,
            justify="right" if column == "nodes" else "left",
        )
    counts = Counter(row.environment for row in rows)
    headings = [f"{env}: {plural(count, 'cluster')}" for env, count in counts.items()]
    cells = [row.cells() for row in rows]
    console = Console(file=stream, width=width, highlight=False)
    needed = _least_width(cells, headings)
    if needed > console.width:
        longest = _least_width(cells, headings, only=HYPHENATED)
        fits = max(MIN_HYPHENATED, longest - (needed - console.width))
        if fits < longest:
            for c in cells:
                c[HYPHENATED] = _wrap_at_hyphens(c[HYPHENATED], fits)
            needed = _least_width(cells, headings)
    if needed > console.width:
        console = Console(file=stream, width=needed, highlight=False)
    for i, row in enumerate(rows):
        if i == 0 or row.environment != rows[i - 1].environment:
            heading = headings[list(counts).index(row.environment)]
            table.add_row(Text(heading, style="bold underline"))
        table.add_row(*(cells[i][c] for c in COLUMNS), style="dim" if row.retired else None)
    console.print(table)


def _wrap_at_hyphens(value: str, width: int) -> str:
    """``value`` in lines of at most ``width`` characters, each ending after a ``-`` when
    one is in reach (else cut at ``width``)."""
    lines: list[str] = []
    while len(value) > width:
        cut = value.rfind("-", 0, width) + 1 or width
        lines.append(value[:cut])
        value = value[cut:]
    return "\n".join([*lines, value])


def _least_width(
    cells: Sequence[dict[str, str]], headings: Sequence[str], *, only: str = ""
) -> int:
    """The narrowest the table (or its column ``only``) can be without cutting a name or
    breaking a word (nor a line of a cell that holds several)."""
    from rich.cells import cell_len

    from fleet.views.inventory import COLUMNS

    total = 0 if only else 2 * (len(COLUMNS) - 1)  # the padding between columns
    for column in [only] if only else COLUMNS:
        values = [HEADERS[column], *(c[column] for c in cells)]
        if column == COLUMNS[0]:
            values += headings
        if column in NO_WRAP:
            values = [line for value in values for line in value.splitlines()]
        else:
            values = [word for value in values for word in value.split()]
        total += max((cell_len(v) for v in values), default=0)
    return total


def _ls(args: argparse.Namespace, config: FleetConfig) -> int:
    from fleet.pipeline.discovery import load_fleet
    from fleet.views.inventory import inventory, to_csv, to_json

    rows = inventory(load_fleet(config), environments=args.env or None)
    out = sys.stdout
    fmt = args.format or default_format(out)
    if fmt == "table":
        if rows:
            render_table(rows, stream=out)
        else:
            print("no clusters", file=out)
    elif fmt == "csv":
        out.write(to_csv(rows))
    else:
        out.write(to_json(rows))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``fleet ls``."""
    p = sub.add_parser(
        "ls",
        help="list the fleet's clusters",
        description="The fleet's inventory from the definitions, one row per cluster and "
        "environment. Default format: table on a terminal, json otherwise.",
    )
    p.add_argument("--env", action="append", metavar="NAME", help="only this environment")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="table, json or csv (default: table on a terminal, else json)",
    )
    p.set_defaults(handler=_ls)
