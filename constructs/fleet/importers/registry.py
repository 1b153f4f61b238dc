"""Which importers ``fleet import`` has: one small look-up, through the clouds' plug-ins
(``CloudPlugin.importer``), so that the rest of ``fleet.importers`` names no cloud.

The built-in clouds' importers come first, then those of the cloud distributions installed
beside the tool: each names its cluster class (or its plug-in) under the entry-point group
:data:`~fleet.clouds.base.CLOUDS_GROUP` (``fleet.clouds``), read in entry-point name order.
One that cannot be loaded, or names something else, costs one warning line (given to
``warn``), never the command.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import TYPE_CHECKING

from fleet.clouds.base import (
    CLOUDS_GROUP,
    CloudPlugin,
    FleetCluster,
    ImporterEntry,
    ImportHelp,
    ImportOption,
    cloud_plugins,
)
from fleet.core.commands import distribution
from fleet.core.secrets import redact

if TYPE_CHECKING:  # loaded by ImporterEntry.load(); `fleet import --help` needs only the data
    from fleet.clouds.importer import CloudImporter

Warn = Callable[[str], None]
"""Where a warning line goes (``warning: `` is added by the default, :func:`stderr`)."""


def stderr(line: str) -> None:
    """A warning line on standard error, as ``fleet`` prints its warnings."""
    print(f"warning: {line}", file=sys.stderr)


def _quiet(line: str) -> None:
    del line


def installed_plugins(warn: Warn = _quiet) -> list[CloudPlugin]:
    """The plug-ins of the installed cloud distributions (entry-point group ``fleet.clouds``,
    in name order): each entry names a :class:`FleetCluster` subclass (its ``plugin``) or a
    :class:`CloudPlugin`; one that cannot be loaded or names anything else is one ``warn``
    line, and left out."""
    found: list[CloudPlugin] = []
    for entry in sorted(metadata.entry_points(group=CLOUDS_GROUP), key=lambda e: e.name):
        origin = distribution(entry)
        head = f"cloud plug-in {entry.name!r} ({entry.value}, from {origin}) not loaded"
        try:
            loaded = entry.load()
        except Exception as e:  # a plug-in's own bug: the built-in importers still work
            warn(f"{head}: {type(e).__name__}: {redact(str(e))}")
            continue
        if isinstance(loaded, type) and issubclass(loaded, FleetCluster):
            loaded = loaded.plugin
        if not isinstance(loaded, CloudPlugin):
            warn(f"{head}: it names neither a FleetCluster subclass nor a CloudPlugin")
            continue
        found.append(loaded)
    return found


def importer_entries(warn: Warn = _quiet) -> tuple[ImporterEntry, ...]:
    """The importers ``fleet import`` has: the built-in clouds' (``cloud_plugins()`` of no
    fleet), then the installed cloud plug-ins' (:func:`installed_plugins`), each once, in
    that order; a cloud without one has none. An import reads Terraform, not a fleet's
    declarations, so the candidates are the installed clouds, whichever the fleet uses."""
    found: list[ImporterEntry] = []
    plugins = [plugin for _, plugin in cloud_plugins()] + installed_plugins(warn)
    for plugin in plugins:
        if plugin.importer is not None and plugin.importer not in found:
            found.append(plugin.importer)
    return tuple(found)


def cloud_importers() -> tuple[CloudImporter, ...]:
    """Every importer, loaded."""
    return tuple(entry.load() for entry in importer_entries())


def import_help(entries: Sequence[ImporterEntry]) -> ImportHelp:
    """What ``fleet import``'s help says of ``entries`` (:func:`importer_entries`): the one
    importer's, or each importer's joined."""
    helps = [entry.help for entry in entries]
    if len(helps) == 1:
        return helps[0]

    def joined(attribute: str) -> str:
        return "; ".join(dict.fromkeys(v for h in helps if (v := getattr(h, attribute))))

    return ImportHelp(
        tfstate=joined("tfstate") or "clusters from Terraform state",
        tfstate_description=joined("tfstate_description"),
        tfvars=joined("tfvars"),
        tfvars_description=joined("tfvars_description"),
        tfvars_state=joined("tfvars_state"),
        template_uuid=joined("template_uuid"),
    )


def import_options(entries: Sequence[ImporterEntry]) -> tuple[ImportOption, ...]:
    """The options ``entries`` (:func:`importer_entries`) declare for ``fleet import
    tfstate`` (each flag once, the first importer's)."""
    found: dict[str, ImportOption] = {}
    for entry in entries:
        for option in entry.options:
            found.setdefault(option.flag, option)
    return tuple(found.values())
