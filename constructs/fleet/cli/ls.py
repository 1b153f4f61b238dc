"""``fleet ls``: the fleet's inventory as a table (on a terminal), JSON or CSV."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from fleet.core.config import FleetConfig
from fleet.views.inventory import COLUMNS, InventoryRow, inventory, to_csv, to_json

FORMATS = ("table", "json", "csv")

HEADERS = {
    "environment": "env",
    "cluster": "cluster",
    "cloud": "cloud",
    "version": "template/version",
    "node_pools": "pools",
    "nodes": "nodes",
    "account": "project/compartment",
    "argocd": "argocd",
    "protected": "protected",
}


def default_format(stream: TextIO) -> str:
    """``table`` when ``stream`` is a terminal, else ``json`` (for pipes and scripts)."""
    isatty = getattr(stream, "isatty", None)
    return "table" if callable(isatty) and isatty() else "json"


def render_table(rows: Sequence[InventoryRow], *, stream: TextIO, width: int | None = None) -> None:
    """Print ``rows`` as a rich table to ``stream``."""
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in COLUMNS:
        table.add_column(
            HEADERS[column],
            no_wrap=column in ("cluster", "nodes"),
            justify="right" if column in ("node_pools", "nodes") else "left",
        )
    for row in rows:
        cells = row.cells()
        style = "dim" if row.retired else None
        table.add_row(*(cells[c] for c in COLUMNS), style=style)
    Console(file=stream, width=width, highlight=False).print(table)


def _ls(args: argparse.Namespace, config: FleetConfig) -> int:
    from fleet.pipeline.discovery import load_fleet

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
