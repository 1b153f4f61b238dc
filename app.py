"""Renders the fleet into dist/: ``python app.py`` (or ``npx cdk8s synth``)."""

import sys

if __name__ == "__main__":
    from fleet.cli import cdk8s_app

    sys.exit(cdk8s_app(__file__))
