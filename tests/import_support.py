"""The tfvars import's plan and verify as the tests call them: the Magnum importer's
tfvars layout planned (not rendered), and rendered in the fleet then compared, as
``fleet import tfvars --verify`` does (``fleet.importers.tfvars_import``)."""

from __future__ import annotations

from fleet.clouds.importer import TfvarsOptions as ImportOptions
from fleet.clouds.magnum.importer.tfvars_plan import ImportResult, MagnumTfvars
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError
from fleet.importers.fleet_view import access
from fleet.importers.render_check import check_render

__all__ = ["ImportOptions", "ImportResult", "plan_import", "verify"]


def plan_import(config: FleetConfig, options: ImportOptions) -> ImportResult:
    """The Magnum tfvars layout's plan (not rendered yet)."""
    return MagnumTfvars().plan(config, options, access(config))


def verify(config: FleetConfig, result: ImportResult) -> list[DefinitionError]:
    """``result`` rendered in the fleet, every tfvars value compared with the render."""
    synth = check_render(config, result.files, result.environments, result.translate)
    return result.verify(synth.manifests)
