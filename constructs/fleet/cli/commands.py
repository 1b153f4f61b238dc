"""Subcommands that installed plug-ins add, found through their entry points.

A distribution publishes a :data:`~fleet.core.commands.Registrar` under the entry-point
group :data:`~fleet.core.commands.COMMANDS_GROUP` (``fleet.commands``), named after its
subcommand (:mod:`fleet.core.commands` shows one). ``fleet`` loads each when it builds its
parser, in name order. A plug-in never replaces a built-in command, and one that cannot be
loaded or does not register what it is named after costs one warning line, not the other
commands: ``fleet synth`` works with a broken plug-in installed.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata

from fleet.core.commands import COMMANDS_GROUP, Subparsers, distribution
from fleet.core.secrets import redact


def _origin(entry: metadata.EntryPoint) -> str:
    return f"plug-in command {entry.name!r} ({entry.value}, from {distribution(entry)})"


def _forget(sub: Subparsers, name: str) -> None:
    """Take ``name`` out of ``sub`` again (its parser and its line in ``--help``)."""
    sub.choices.pop(name, None)
    sub._choices_actions = [a for a in sub._choices_actions if a.dest != name]


def add_plugin_commands(sub: Subparsers, warn: Callable[[str], None]) -> list[str]:
    """Register every installed plug-in's subcommand on ``sub``; the names registered.
    Each one that cannot be is one ``warn(line)``, and left out."""
    added: list[str] = []
    for entry in sorted(metadata.entry_points(group=COMMANDS_GROUP), key=lambda e: e.name):
        origin = _origin(entry)
        if entry.name in sub.choices:
            what = "another plug-in's" if entry.name in added else "a built-in command's"
            warn(f"{origin} not added: {entry.name!r} is {what} name")
            continue
        try:
            register = entry.load()
            register(sub)
        except Exception as e:  # a plug-in's own bug: the other commands still work
            warn(f"{origin} not added: {type(e).__name__}: {redact(str(e))}")
            _forget(sub, entry.name)
            continue
        parser = sub.choices.get(entry.name)
        if parser is None or parser.get_default("handler") is None:
            warn(
                f"{origin} not added: it must add a subcommand named {entry.name!r} with "
                "set_defaults(handler=...)"
            )
            _forget(sub, entry.name)
            continue
        added.append(entry.name)
    return added
