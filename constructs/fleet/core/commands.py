"""The contract of a ``fleet`` subcommand, the tool's own and a plug-in's.

A subcommand is a function that registers its parser on the ``fleet`` parser's subparsers
(:data:`Registrar`) and sets ``handler`` on it: ``handler(args, config) -> exit code``
(:data:`Handler`; 0 success, 1 a check found a problem, 2 bad input, which a
:class:`~fleet.core.errors.FleetError` also gives). A plug-in distribution publishes one
under the entry-point group :data:`COMMANDS_GROUP`, named after its subcommand, the way
``tk-<name>`` executables extend tanka::

    # the plug-in's pyproject.toml
    [project.entry-points."fleet.commands"]
    hello = "fleet_hello.cli:add_parser"

    # fleet_hello/cli.py
    def add_parser(sub):
        p = sub.add_parser("hello", help="say hello to the fleet")
        p.set_defaults(handler=lambda args, config: print("hello") or 0)

``fleet hello`` then runs it with the fleet's configuration (``--root``, ``--debug`` and
the error handling of every command).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from importlib import metadata
from typing import TypeAlias

from fleet.core.config import FleetConfig

COMMANDS_GROUP = "fleet.commands"
"""The entry-point group of the subcommands plug-ins add."""

Handler = Callable[[argparse.Namespace, FleetConfig], int]
"""What a subcommand runs: ``handler(args, config)``, returning the exit code."""

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""The ``fleet`` parser's subparsers (``argparse.ArgumentParser.add_subparsers()``)."""

Registrar: TypeAlias = Callable[[Subparsers], None]
"""What registers a subcommand: adds its parser to the subparsers, with ``handler`` set."""


def distribution(entry: metadata.EntryPoint) -> str:
    """The installed distribution that publishes ``entry``, as a warning names it
    (``fleet-hello 1.0``; ``unknown`` when the entry point has none)."""
    dist = entry.dist
    return f"{dist.metadata['Name']} {dist.version}" if dist is not None else "unknown"
