"""Renders the fleet into dist/: ``python app.py`` (or ``npx cdk8s synth``)."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent

if __name__ == "__main__":
    # cdk8s-cli runs this with the project as the working directory and deletes its own
    # output folder (.cdk8s.out, see cdk8s.yaml) first; dist/ is always written here.
    os.chdir(ROOT)
    from fleet.cli.main import main

    status = main(["--root", str(ROOT), "synth", *sys.argv[1:]])
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
        sys.exit(0)
    sys.exit(status)
