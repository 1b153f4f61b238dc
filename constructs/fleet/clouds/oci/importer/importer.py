"""``fleet import tfstate`` for OKE, standalone until the clouds' importer hook lands:
read the states, plan one declaration per cluster, render them, verify every carried value,
and write one generated module."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fleet.clouds.oci.importer.planner import CALLS, PlannedCluster, plan_cluster, report_of
from fleet.clouds.oci.importer.reader import read_states
from fleet.clouds.oci.importer.verify import declare, mismatches
from fleet.codegen.layout import GENERATED_PREFIX, INDENT, blocks, module, statement
from fleet.codegen.source_check import Shape, check_source
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors

SHAPE = Shape(
    docstring_prefix=GENERATED_PREFIX,
    calls=CALLS,
    module_calls=frozenset(),
    lookups=frozenset(),
)
"""What the generated OKE module may hold (checked before it is written)."""


@dataclass(frozen=True)
class OkeImport:
    """The planned clusters, the module's text and the report."""

    clusters: tuple[PlannedCluster, ...]
    text: str
    report: tuple[str, ...]


def plan_oke_import(
    config: FleetConfig,
    states: Sequence[tuple[Path, str | None]],
    *,
    environment: str | None = None,
    module_name: str = "oke_imported.py",
) -> OkeImport:
    """Read ``states`` (path, ``--state ENV=`` environment), plan, render and verify;
    raises DefinitionErrors (every problem at once), writes nothing."""
    if environment is not None:
        config.check_environment(environment, field="--environment")
    found = read_states(states)
    if not found:
        raise DefinitionError(
            "no oci_containerengine_cluster in the states: nothing to import",
            where=", ".join(str(p) for p, _ in states),
        )
    errors: list[DefinitionError] = []
    planned: list[PlannedCluster] = []
    taken: set[str] = set()
    for oke in found:
        try:
            planned.append(plan_cluster(oke, config, environment, taken))
        except DefinitionError as e:
            errors.append(e)
    if errors:
        raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
    for p, cluster in zip(planned, declare(config, planned), strict=True):
        rendered = cluster.render(p.environment)
        errors.extend(
            DefinitionError(line + " (checked before writing: a bug of the importer)")
            for line in mismatches(p, rendered)
        )
    if errors:
        raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
    text = module_text(planned)
    check_source(text, SHAPE, package=config.clusters, catalog=False, where=module_name)
    return OkeImport(clusters=tuple(planned), text=text, report=tuple(report_of(planned)))


def module_text(planned: Sequence[PlannedCluster]) -> str:
    """The generated module: ``define(fleet)`` declaring every planned cluster."""
    body = [
        "def define(fleet: Fleet) -> None:",
        f'{INDENT}"""Declare the imported OKE clusters."""',
        *blocks(*(statement(p.call, calls=CALLS, indent=INDENT) for p in planned)),
    ]
    used = sorted({"Fleet", *CALLS} & {"Fleet", *_callees(planned)})
    return module(
        about=f"{GENERATED_PREFIX}tfstate` (OKE): re-import to update.",
        names={"fleet": used},
        body=["", *body],
    )


def _callees(planned: Sequence[PlannedCluster]) -> set[str]:
    from fleet.codegen.layout import callees

    found: set[str] = set()
    for p in planned:
        found |= callees(p.call)
    return found
