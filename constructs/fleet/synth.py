"""The synth pipeline: declarations -> manifests -> checks -> bytes -> dist/."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fleet.config import FleetConfig
from fleet.discovery import load_fleet
from fleet.errors import DefinitionError, DefinitionErrors
from fleet.fleet import Fleet
from fleet.manifest import Identity, Manifest
from fleet.render import to_yaml
from fleet.validation import InvalidObjects, available_crds_dir, check_all
from fleet.writer import diff_tree, write_environment

EXTRA_FOLDER = "extra"


@dataclass(frozen=True)
class Synth:
    """The rendered fleet: per environment, its objects and the files they become.

    ``crds_dir`` is the CRD folder the objects were validated against (None: schemas
    were not checked, because no CRDs were available or validation was off).
    """

    manifests: dict[str, list[Manifest]]
    files: dict[str, dict[str, bytes]]
    crds_dir: Path | None = None

    @property
    def object_count(self) -> int:
        """How many objects all environments hold together."""
        return sum(len(m) for m in self.manifests.values())


def render_environment(fleet: Fleet, environment: str) -> list[Manifest]:
    """Every object of ``environment``: fleet declarations, then user cdk8s constructs."""
    out: list[Manifest] = []
    for construct in fleet.declarations():
        out.extend(construct.manifests(environment))
    chart = fleet.environment(environment)
    for body in chart.user_objects():
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


def to_files(manifests: Sequence[Manifest]) -> dict[str, bytes]:
    """The files of one environment: relative path -> canonical YAML."""
    return {m.relpath: to_yaml(m.body) for m in manifests}


def synthesize(
    config: FleetConfig, environments: Sequence[str] | None = None, *, validate: bool = True
) -> Synth:
    """Load the declarations and render ``environments`` (all when None), checked.

    With ``validate``, every object is checked against its CRD (when CRDs are
    available), references and the secret guard. Raises DefinitionError(s) for bad
    definitions and InvalidObjects for objects that fail a check; writes nothing.
    """
    fleet = load_fleet(config)
    envs = list(environments or config.environments)
    for env in envs:
        fleet.environment(env)  # unknown environment: a clear error
    manifests: dict[str, list[Manifest]] = {}
    for env in envs:
        rendered = render_environment(fleet, env)
        check_unique(rendered)
        manifests[env] = rendered
    crds_dir = None
    if validate:
        crds_dir = available_crds_dir(config)
        problems = check_all([m for ms in manifests.values() for m in ms], crds_dir=crds_dir)
        if problems:
            raise InvalidObjects(problems)
    files = {env: to_files(ms) for env, ms in manifests.items()}
    return Synth(manifests=manifests, files=files, crds_dir=crds_dir)


def stale_environments(config: FleetConfig, synth: Synth) -> list[str]:
    """Folders in ``dist/`` of environments that are no longer configured."""
    dist = config.dist_dir
    if not dist.is_dir() or set(synth.files) != set(config.environments):
        return []
    return sorted(
        p.name
        for p in dist.iterdir()
        if p.is_dir() and not p.name.startswith(".") and p.name not in config.environments
    )


def write(config: FleetConfig, synth: Synth) -> None:
    """Write every rendered environment; remove environments no longer configured."""
    for env, files in synth.files.items():
        write_environment(config.dist_dir, env, files)
    for env in stale_environments(config, synth):
        shutil.rmtree(config.dist_dir / env)


def drift(config: FleetConfig, synth: Synth) -> list[str]:
    """``<env>/<path>`` of every file in ``dist/`` that differs from what ``synth`` renders."""
    out = [
        f"{env}/{path}"
        for env, files in synth.files.items()
        for path in diff_tree(config.dist_dir / env, files)
    ]
    out.extend(f"{env}/" for env in stale_environments(config, synth))
    return out
