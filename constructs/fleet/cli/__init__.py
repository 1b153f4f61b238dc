"""The `fleet` command line."""

from fleet.cli.main import main, run

__all__ = ["main", "run"]
