"""The entry point of a fleet repository's ``app.py``, the program cdk8s-cli runs."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from fleet.cli.main import main


def cdk8s_app(app_file: str, argv: list[str] | None = None) -> int:
    """Render the fleet whose ``app.py`` is ``app_file`` into its ``dist/``; the exit code.

    ``python app.py`` and ``npx cdk8s synth`` both end here. The project is the folder of
    ``app_file``, whatever the working directory; ``argv`` (default: the command line's
    arguments) goes to ``fleet synth``.
    """
    root = Path(app_file).resolve().parent
    # cdk8s-cli runs the app with the project as the working directory and deletes its own
    # output folder (.cdk8s.out, see cdk8s.yaml) first; dist/ is always written here.
    os.chdir(root)
    arguments = sys.argv[1:] if argv is None else argv
    status = main(["--root", str(root), "synth", *arguments])
    outdir = os.environ.get("CDK8S_OUTDIR")
    if outdir and not Path(outdir).exists():
        # Run by `npx cdk8s synth`. cdk8s-cli prints a Node stack trace for an app that
        # exits non-zero; for one that exits 0 without creating the output folder it says
        # "synthesis failed" and exits 1. fleet's own error lines are on stderr already.
        if status == 0:
            # cdk8s-cli lists the YAML files of its output folder ("No manifests
            # synthesized" when there are none): say where the manifests went.
            Path(outdir).mkdir(parents=True)
            (Path(outdir) / "fleet.yaml").write_text("# the manifests are in dist/<environment>/\n")
        return 0
    return status
