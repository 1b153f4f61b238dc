"""Which importers ``fleet import`` has: one small look-up, through the clouds' plug-ins
(``CloudPlugin.importer``), so that the rest of ``fleet.importers`` names no cloud."""

from __future__ import annotations

from fleet.clouds.base import ImporterEntry, ImportHelp, ImportOption, cloud_plugins
from fleet.clouds.importer import CloudImporter


def importer_entries() -> tuple[ImporterEntry, ...]:
    """The importers of the clouds the installed package provides (the built-in clouds'
    plug-ins: ``cloud_plugins()`` of no fleet), in their order (each once; a cloud without
    one has none). An import reads Terraform, not a fleet's declarations, so the candidates
    are the package's clouds, whichever the fleet already uses."""
    found: list[ImporterEntry] = []
    for _, plugin in cloud_plugins():
        if plugin.importer is not None and plugin.importer not in found:
            found.append(plugin.importer)
    return tuple(found)


def cloud_importers() -> tuple[CloudImporter, ...]:
    """Every importer, loaded."""
    return tuple(entry.load() for entry in importer_entries())


def import_help() -> ImportHelp:
    """What ``fleet import``'s help says: the one importer's, or each importer's joined."""
    helps = [entry.help for entry in importer_entries()]
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


def import_options() -> tuple[ImportOption, ...]:
    """The options the importers declare for ``fleet import tfstate`` (each flag once, the
    first importer's)."""
    found: dict[str, ImportOption] = {}
    for entry in importer_entries():
        for option in entry.options:
            found.setdefault(option.flag, option)
    return tuple(found.values())
