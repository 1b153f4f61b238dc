"""The `fleet` command line, and the entry point of a fleet repository's ``app.py``."""

from fleet.cli.app import cdk8s_app
from fleet.cli.main import main, run

__all__ = ["cdk8s_app", "main", "run"]
