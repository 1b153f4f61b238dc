"""Rendering: a fleet's declarations and cdk8s constructs -> one environment's objects."""

from __future__ import annotations

from collections.abc import Sequence

from fleet.core import layout
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.fleet import Fleet
from fleet.core.manifest import Identity, Manifest
from fleet.pipeline.yaml_canonical import SelfContainingObject
from fleet.pipeline.yaml_fast import fast_to_yaml

EXTRA_FOLDER = layout.EXTRA
"""The folder of ``dist/<env>/`` the objects of user cdk8s constructs go to."""


def render_environment(fleet: Fleet, environment: str) -> list[Manifest]:
    """Every object of ``environment``: fleet declarations, then user cdk8s constructs.

    Runs the fleet's phases first (once; :meth:`Fleet.run_phases`) if nothing did."""
    fleet.run_phases()
    out: list[Manifest] = []
    for construct in fleet.declarations():
        out.extend(construct.manifests(environment))
    out.extend(fleet.user_manifests(environment, EXTRA_FOLDER))
    return out


def check_unique(manifests: Sequence[Manifest]) -> None:
    """Two objects with one identity (or one file) in an environment fail, naming both; so
    does an object whose kind, namespace or name would put its file outside its folder.

    Runs before anything of the environment is written or staged (the name check proper,
    ``checks/references.py``, runs with the environment's other checks, after objects that
    passed theirs may have been staged: :class:`~fleet.pipeline.writer.Staging`)."""
    seen: dict[Identity | str, Manifest] = {}
    errors: list[DefinitionError] = []
    for m in manifests:
        named = m.group + m.kind + m.namespace + m.name
        if "/" in named or "\0" in named:
            parts = (
                ("apiVersion", m.group),
                ("kind", m.kind),
                ("metadata.namespace", m.namespace),
                ("metadata.name", m.name),
            )
            field, value = next((f, v) for f, v in parts if "/" in v or "\0" in v)
            errors.append(
                DefinitionError(
                    f"{value!r} in {m.environment} cannot name a file: a '/' (or NUL) in it "
                    "would put the object's file elsewhere; Kubernetes names hold none",
                    where=m.source,
                    field=field,
                )
            )
            continue
        for key in (m.identity, m.relpath.lower()):
            first = seen.get(key)
            if first is not None:
                # The error is located at the second: name the first, never itself again.
                other = (
                    f"the other is {first.source}"
                    if first.source != m.source
                    else "both rendered by this declaration (a json patch, or a name given twice?)"
                )
                errors.append(
                    DefinitionError(
                        f"two objects {m.kind} {m.namespace + '/' if m.namespace else ''}"
                        f"{m.name} in {m.environment}: {other}",
                        where=m.source,
                        field="name",
                    )
                )
                break
            seen[key] = m
    if errors:
        raise DefinitionErrors(errors)


def object_yaml(m: Manifest) -> bytes:
    """The canonical YAML of ``m``; an object that holds itself is its declaration's error."""
    try:
        return fast_to_yaml(m.body)
    except SelfContainingObject as e:
        raise DefinitionError(f"{m.describe()}: {e}", where=m.source, field="body") from None


def to_files(manifests: Sequence[Manifest]) -> dict[str, bytes]:
    """The files of one environment: relative path -> canonical YAML."""
    return {m.relpath: object_yaml(m) for m in manifests}
