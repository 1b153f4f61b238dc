"""``fleet graph``: the bootstrap order and the fleet's structure as Mermaid or DOT."""

from __future__ import annotations

import argparse
import sys

from fleet.config import FleetConfig
from fleet.graph import FORMATS, fleet_graph, render


def _graph(args: argparse.Namespace, config: FleetConfig) -> int:
    from fleet.discovery import load_fleet
    from fleet.synth import check_unique, render_environment

    fleet = load_fleet(config)
    envs = list(args.env or config.environments)
    for env in envs:
        fleet.environment(env)  # unknown environment: a clear error
    manifests = {}
    for env in envs:
        rendered = render_environment(fleet, env)
        check_unique(rendered)
        manifests[env] = rendered
    graph = fleet_graph(manifests, fleet=fleet, dist=config.dist)
    sys.stdout.write(render(graph, args.format))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``fleet graph``."""
    p = sub.add_parser(
        "graph",
        help="draw the bootstrap order and the fleet's structure",
        description="The bootstrap order (root Application, sync waves, Applications) and "
        "the fleet's structure (environments, clusters, node pools, registrations, "
        "packages) as a Mermaid flowchart (paste it in a ```mermaid block: GitHub and "
        "GitLab render it) or Graphviz DOT.",
    )
    p.add_argument("--env", action="append", metavar="NAME", help="only this environment")
    p.add_argument("--format", choices=FORMATS, default="mermaid", help="mermaid (default) or dot")
    p.set_defaults(handler=_graph)
