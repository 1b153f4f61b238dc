"""``fleet import tfvars``: a cloud's own tfvars layout (:class:`fleet.clouds.importer.
TfvarsImporter`) planned by its importer, then rendered inside the fleet with every check
(:mod:`fleet.importers.render_check`) before anything is written, and, with ``--verify``,
every input value compared with the render by the importer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fleet.clouds.importer import CloudImporter, TfvarsImporter, TfvarsOptions, TfvarsPlan
from fleet.core.config import FleetConfig
from fleet.core.errors import FleetError
from fleet.importers.fleet_view import access
from fleet.importers.registry import cloud_importers
from fleet.importers.render_check import check_render
from fleet.pipeline.synth import Synth


@dataclass(frozen=True, kw_only=True)
class TfvarsImport:
    """What a tfvars import decided, and its render (checked)."""

    plan: TfvarsPlan
    synth: Synth


def tfvars_importer(importers: Sequence[CloudImporter]) -> TfvarsImporter:
    """The one tfvars layout the importers read (an error when none or several do)."""
    found = [i.tfvars for i in importers if i.tfvars is not None]
    if len(found) != 1:
        names = ", ".join(i.name for i in importers if i.tfvars is not None) or "none"
        raise FleetError(f"fleet import tfvars needs exactly one tfvars layout (found: {names})")
    return found[0]


def plan_tfvars_import(
    config: FleetConfig,
    options: TfvarsOptions,
    importers: Sequence[CloudImporter] | None = None,
) -> TfvarsImport:
    """Parse the input, decide every file and render it in the fleet; raises
    DefinitionErrors (each naming the input value), writes nothing."""
    every = tuple(cloud_importers() if importers is None else importers)
    plan = tfvars_importer(every).plan(config, options, access(config))
    # Rendered with every check of `fleet synth` and `fleet validate` before anything is
    # written: an import never leaves a module that fails them.
    synth = check_render(config, plan.files, plan.environments, plan.translate, every)
    return TfvarsImport(plan=plan, synth=synth)
