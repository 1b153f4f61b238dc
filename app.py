"""Renders the fleet into dist/: ``python app.py`` (or ``npx cdk8s synth``)."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent

if __name__ == "__main__":
    # cdk8s-cli runs this with the project as the working directory and deletes its own
    # output folder (.cdk8s.out, see cdk8s.yaml) first; dist/ is always written here.
    os.chdir(ROOT)
    if os.environ.get("CDK8S_OUTDIR"):  # cdk8s-cli checks that the app created it
        Path(os.environ["CDK8S_OUTDIR"]).mkdir(parents=True, exist_ok=True)
    from fleet.cli.main import main

    sys.exit(main(["--root", str(ROOT), "synth", *sys.argv[1:]]))
