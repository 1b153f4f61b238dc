"""``fleet diff``: what a change does to the rendered fleet, with the pull-request guards.

The command line of :func:`fleet.pipeline.diff.diff_revision` (which says where the base's
objects come from and what each guard does): the report as text or Markdown
(:mod:`fleet.views.diff_report`), with the sections of :data:`SECTIONS`.

Exit codes: 0 nothing guarded changes; 1 a guard failed (a cluster-bearing object would
be deleted, a cloud provider's ForceNew field or an external name changes, or with ``--strict``
a field another CRD calls immutable changes); 2 bad input (a definition,
the base revision, or the base's render).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fleet.checks.crds import ENV_VAR as CRDS_ENV_VAR
from fleet.cli.graph import diff_section
from fleet.core.config import FleetConfig
from fleet.pipeline.git import DEFAULT_BRANCH

if TYPE_CHECKING:  # imported when `fleet diff` runs, not by every command's parser
    from fleet.pipeline.diff import DiffContext
    from fleet.views.diff_report import ReportSection

EXIT_OK, EXIT_CHECK = 0, 1

SectionProvider = Callable[["DiffContext"], "ReportSection | None"]
"""A report section another feature adds (None: nothing to show)."""

SECTIONS: tuple[SectionProvider, ...] = (diff_section,)
"""The report's extra sections, in order: where the change lands in the bootstrap
(``fleet graph``, Markdown only)."""


def run_diff(args: argparse.Namespace, config: FleetConfig) -> int:
    """``fleet diff``: render base and working tree, compare, guard, report."""
    from fleet.pipeline.diff import diff_revision
    from fleet.views.diff_report import render_markdown, render_text

    result = diff_revision(config, args.base, crds=args.crds, strict=args.strict)
    markdown = args.format == "markdown"
    context = result.context(markdown=markdown)
    sections = [s for s in (provider(context) for provider in SECTIONS) if s is not None]
    diff, findings, title = result.diff, result.findings, result.title
    if markdown:
        sys.stdout.write(render_markdown(diff, findings, title=title, extra_sections=sections))
        # The comment goes to a file or an API; the CI log still says why the job failed.
        for finding in findings:
            if finding.level != "note":
                print(finding.line(), file=sys.stderr)
    else:
        sys.stdout.write(
            render_text(
                diff,
                findings,
                title=title.replace("`", ""),
                extra_sections=sections,
                verbose=args.verbose,
            )
        )
    return EXIT_CHECK if result.failed else EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``fleet diff`` to the command line."""
    p = sub.add_parser(
        "diff",
        help="compare the rendered fleet with a base revision; guard cluster deletions",
    )
    p.add_argument(
        "--base",
        metavar="REF",
        help=f"the revision to compare with (default: the merge-base of HEAD and {DEFAULT_BRANCH})",
    )
    p.add_argument(
        "--format",
        choices=("text", "markdown"),
        default="text",
        help="text (default), or Markdown for a merge-request comment",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 also when a field changes that a CRD's description calls immutable "
        "(the ForceNew fields of a cloud's provider always fail)",
    )
    p.add_argument(
        "--verbose",
        action="store_true",
        help="list every object of a grouped guard finding (the Markdown report always does)",
    )
    p.add_argument(
        "--crds",
        type=Path,
        metavar="DIR",
        help=f"CRD folder for the immutable-field guard (default: ${CRDS_ENV_VAR}, else the "
        "packaged CRDs)",
    )
    p.set_defaults(handler=run_diff)
