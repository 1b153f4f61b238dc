"""``fleet graph``: the bootstrap order and the fleet's structure as Mermaid or DOT."""

from __future__ import annotations

import argparse
import posixpath
import sys
from typing import TYPE_CHECKING

from fleet.core.config import FleetConfig
from fleet.core.manifest import Manifest
from fleet.core.words import plural

if TYPE_CHECKING:  # imported when `fleet graph` or `fleet diff` runs, not by the parser
    from fleet.pipeline.diff import DiffContext
    from fleet.views.diff_report import ReportSection

# The choices and limits `fleet graph --help` names: those of fleet.views.graph (FORMATS,
# MERMAID_MAX_EDGES, MERMAID_MAX_TEXT; tests/test_cli_lazy.py checks they are the same),
# written here so that building the parser does not import the graph views, which every
# command but `fleet graph` and `fleet diff` would pay for.
FORMATS = ("mermaid", "dot")
MERMAID_MAX_EDGES = 500
MERMAID_MAX_TEXT = 50_000


def _graph(args: argparse.Namespace, config: FleetConfig) -> int:
    from fleet.pipeline.discovery import load_fleet
    from fleet.pipeline.render import check_unique, render_environment
    from fleet.views.graph import fitted_mermaid, fleet_graph, render

    fleet = load_fleet(config)
    envs = list(args.env or config.environments)
    for env in envs:
        fleet.check_environment(env)
    manifests = {}
    for env in envs:
        rendered = render_environment(fleet, env)
        check_unique(rendered)
        manifests[env] = rendered
    if args.format != "mermaid" or args.full:
        sys.stdout.write(render(fleet_graph(manifests, fleet=fleet, dist=config.dist), args.format))
        return 0
    fitted = fitted_mermaid(manifests, fleet=fleet, dist=config.dist, hint=FULL_GRAPH_HINT)
    sys.stdout.write(fitted.text)
    for note in fitted.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


FULL_GRAPH_HINT = (
    "For every object: fleet graph --env NAME (one environment), --format dot "
    "(Graphviz has no such limit) or --full."
)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``fleet graph``."""
    p = sub.add_parser(
        "graph",
        help="draw the bootstrap order and the fleet's structure",
        description="The bootstrap order (root Application, sync waves, Applications) and "
        "the fleet's structure (environments, clusters, node pools, registrations, "
        "packages) as a Mermaid flowchart (paste it in a ```mermaid block: GitHub and "
        "GitLab render it) or Graphviz DOT. A Mermaid graph over Mermaid's limits is "
        "summarized: clusters grouped by cloud and account, the rest counted.",
    )
    p.add_argument("--env", action="append", metavar="NAME", help="only this environment")
    p.add_argument("--format", choices=FORMATS, default="mermaid", help="mermaid (default) or dot")
    p.add_argument(
        "--full",
        action="store_true",
        help=f"draw every object even past Mermaid's limits ({MERMAID_MAX_EDGES} arrows, "
        f"{MERMAID_MAX_TEXT:,} characters), where a larger fleet is summarized: for a "
        "renderer with higher maxEdges and maxTextSize",
    )
    p.set_defaults(handler=_graph)


MAX_DRAWN_OBJECTS = 60
"""Above this many changed objects the diagram would be unreadable (and GitHub refuses
diagrams over 500 edges): the section says so instead."""


def diff_section(context: DiffContext) -> ReportSection | None:
    """``fleet diff --format markdown``: where the change lands in the bootstrap.

    Per environment, the changed objects and the Applications and waves that apply
    them; removed objects are placed with the base revision's Applications.
    """
    if not context.markdown:
        return None
    from fleet.views.diff_report import ReportSection
    from fleet.views.graph import touched_subgraph

    changed = [
        (env.environment, ref.identity)
        for env in context.diff.environments
        for ref in (*env.added, *env.removed, *(c.after for c in env.changed))
    ]
    if not changed:
        return None
    title = "Where the change lands"
    if len(changed) > MAX_DRAWN_OBJECTS:
        return ReportSection(
            title,
            f"{plural(len(changed), 'object')} change, too many to draw; run `fleet graph` for the "
            "whole bootstrap.",
        )
    base = [
        Manifest(env, dict(body), posixpath.dirname(relpath), "base")
        for env, files in context.base_tree.items()
        for relpath, body in files.items()
        if body.get("kind")
    ]
    head = [m for ms in context.head.manifests.values() for m in ms]
    # the head first: an object on both sides is placed where it is now
    body = touched_subgraph([*head, *base], changed, dist=context.config.dist)
    return ReportSection(title, body)
