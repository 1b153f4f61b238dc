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
    if status == 0 and os.environ.get("CDK8S_OUTDIR"):
        # cdk8s-cli checks that the app created its output folder and lists the YAML files
        # in it ("No manifests synthesized" when there are none): say where they went.
        out = Path(os.environ["CDK8S_OUTDIR"])
        out.mkdir(parents=True, exist_ok=True)
        (out / "fleet.yaml").write_text("# the manifests are in dist/<environment>/\n")
    sys.exit(status)
