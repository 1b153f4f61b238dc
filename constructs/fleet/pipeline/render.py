"""Rendering: the declarations and user cdk8s constructs of a fleet -> one environment's objects."""

from __future__ import annotations

from collections.abc import Sequence

from fleet.core import layout
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.fleet import Fleet
from fleet.core.manifest import Identity, Manifest

EXTRA_FOLDER = layout.EXTRA
"""The folder of ``dist/<env>/`` the objects of user cdk8s constructs go to."""


def render_environment(fleet: Fleet, environment: str) -> list[Manifest]:
    """Every object of ``environment``: fleet declarations, then user cdk8s constructs.

    Runs the fleet's phases first (once; :meth:`Fleet.run_phases`) if nothing did."""
    fleet.run_phases()
    out: list[Manifest] = []
    for construct in fleet.declarations():
        out.extend(construct.manifests(environment))
    for body in fleet.user_objects(environment):
        out.append(Manifest(environment, body, EXTRA_FOLDER, f"cdk8s chart {environment}"))
    return out


def check_unique(manifests: Sequence[Manifest]) -> None:
    """Two objects with one identity (or one file) in an environment fail, naming both."""
    seen: dict[Identity | str, Manifest] = {}
    errors: list[DefinitionError] = []
    for m in manifests:
        for key in (m.identity, m.relpath.lower()):
            first = seen.get(key)
            if first is not None:
                errors.append(
                    DefinitionError(
                        f"two objects {m.kind} {m.namespace + '/' if m.namespace else ''}"
                        f"{m.name} in {m.environment}: {first.source} and {m.source}",
                        where=m.source,
                        field="name",
                    )
                )
                break
            seen[key] = m
    if errors:
        raise DefinitionErrors(errors)
