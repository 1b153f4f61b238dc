"""The synth pipeline: declarations -> manifests -> checks -> bytes -> dist/."""

from __future__ import annotations

import multiprocessing
import os
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fleet.checks.references import check_references
from fleet.checks.schema import _SCHEMALESS, Problem, validate_manifests
from fleet.checks.secret_guard import find_secret_material
from fleet.checks.validation import InvalidObjects, available_crds_dir
from fleet.core import layout
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors, FleetError
from fleet.core.fleet import Fleet
from fleet.core.manifest import Identity, Manifest
from fleet.pipeline import cache as synth_cache
from fleet.pipeline.discovery import load_fleet
from fleet.pipeline.progress import Progress
from fleet.pipeline.writer import diff_tree, write_environment
from fleet.pipeline.yaml_fast import fast_to_yaml

EXTRA_FOLDER = layout.EXTRA
JOBS_VAR = "FLEET_JOBS"
PARALLEL_SOURCE_BYTES = 256 * 1024
"""Declarations larger than this (about 200 clusters) render environments in parallel
when ``jobs`` is not given: below it, starting a worker (Python, cdk8s, Node, loading the
fleet again) costs more than it saves (measured in docs/performance.md)."""


@dataclass(frozen=True)
class Synth:
    """The rendered fleet: per environment, its objects and the files they become.

    ``crds_dir`` is the CRD folder the objects were validated against (None: schemas
    were not checked, because no CRDs were available or validation was off).
    """

    manifests: dict[str, list[Manifest]]
    files: dict[str, dict[str, bytes]]
    crds_dir: Path | None = None
    cache_hits: int = 0
    """Objects whose YAML (and check verdicts) came from ``.fleet/cache/synth``."""

    @property
    def object_count(self) -> int:
        """How many objects all environments hold together."""
        return sum(len(m) for m in self.manifests.values())


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
    """Two objects with one identity (or one file) in an environment fail, naming both."""
    seen: dict[Identity | str, Manifest] = {}
    errors: list[DefinitionError] = []
    for m in manifests:
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


def to_files(manifests: Sequence[Manifest]) -> dict[str, bytes]:
    """The files of one environment: relative path -> canonical YAML."""
    return {m.relpath: fast_to_yaml(m.body) for m in manifests}


@dataclass(frozen=True)
class _Checks:
    """What is the same for every environment of one synth (sent to workers)."""

    config: FleetConfig
    validate: bool
    crds_dir: Path | None
    use_cache: bool


@dataclass
class _Rendered:
    """One environment, rendered, converted and checked (a worker's answer)."""

    environment: str
    manifests: list[Manifest]
    files: dict[str, bytes]
    schema: list[Problem] = field(default_factory=list)
    references: list[Problem] = field(default_factory=list)
    secrets: list[Problem] = field(default_factory=list)
    cache_hits: int = 0


def _environment(fleet: Fleet, environment: str, checks: _Checks) -> _Rendered:
    """Render ``environment``, then YAML and per-object checks, from the cache when it has them."""
    rendered = render_environment(fleet, environment)
    check_unique(rendered)
    store = synth_cache.SynthCache(checks.config.root, environment, active=checks.use_cache)
    verdict = (
        synth_cache.crds_digest(checks.crds_dir, _SCHEMALESS)
        if checks.validate and checks.use_cache
        else ""
    )
    files: dict[str, bytes] = {}
    entries: list[tuple[bytes, bytes, str]] = []
    unchecked: list[Manifest] = []
    for m in rendered:
        key = synth_cache.object_key(m.body) if store.active else b""
        entry = store.get(key) if store.active else None
        data, passed = entry if entry is not None else (fast_to_yaml(m.body), "")
        files[m.relpath] = data
        entries.append((key, data, passed))
        if checks.validate and (not verdict or passed != verdict):
            unchecked.append(m)
    out = _Rendered(environment, rendered, files, cache_hits=store.hits)
    if checks.validate:
        if checks.crds_dir is not None:
            out.schema = validate_manifests(unchecked, crds_dir=checks.crds_dir)
        out.references = check_references(rendered)
        out.secrets = find_secret_material(unchecked)
    clean = checks.validate and not out.schema and not out.secrets
    if store.active:
        for key, data, passed in entries:
            store.put(key, (data, verdict if clean else passed))
        store.save()
    return out


def _declarations_size(config: FleetConfig) -> int:
    folder = config.clusters_dir
    if not folder.is_dir():
        return 0
    return sum(p.stat().st_size for p in folder.rglob("*.py"))


def choose_jobs(config: FleetConfig, environments: int, jobs: int | None = None) -> int:
    """How many processes render: ``jobs``, else ``$FLEET_JOBS``, else by fleet size.

    Parallel only pays for large fleets (each worker loads the whole fleet itself), so
    by default a fleet whose declarations are under PARALLEL_SOURCE_BYTES renders serially.
    """
    if jobs is None and os.environ.get(JOBS_VAR):
        try:
            jobs = int(os.environ[JOBS_VAR])
        except ValueError:
            raise FleetError(
                f"${JOBS_VAR} must be a number, got {os.environ[JOBS_VAR]!r}"
            ) from None
    if jobs is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        large = _declarations_size(config) >= PARALLEL_SOURCE_BYTES
        jobs = min(cpus or 1, environments) if large else 1
    if jobs < 1:
        raise FleetError(f"jobs must be 1 or more, got {jobs}")
    return max(1, min(jobs, environments))


# --- parallel rendering -------------------------------------------------------------------
# Workers are spawned, never forked: forking after `import cdk8s` breaks jsii's Node
# process. Each worker imports the fleet package and loads the declarations itself, once,
# and renders the environments it is given.

_WORKER_FLEET: dict[Path, Fleet] = {}


def _in_worker(checks: _Checks, environment: str) -> _Rendered | tuple[str, Any]:
    """Render one environment in a worker; fleet errors come back as plain data."""
    try:
        fleet = _WORKER_FLEET.get(checks.config.root)
        if fleet is None:
            fleet = _WORKER_FLEET[checks.config.root] = load_fleet(checks.config)
        return _environment(fleet, environment, checks)
    except DefinitionErrors as e:  # exceptions with keyword fields do not unpickle
        return ("definitions", [(x.message, x.where, x.field) for x in e.errors])
    except DefinitionError as e:
        return ("definitions", [(e.message, e.where, e.field)])
    except FleetError as e:
        return ("fleet", str(e))


def _raise_remote(error: tuple[str, Any]) -> None:
    kind, data = error
    if kind == "definitions":
        raise DefinitionErrors([DefinitionError(m, where=w, field=f) for m, w, f in data])
    raise FleetError(data)


def _render_parallel(
    checks: _Checks, envs: list[str], jobs: int, progress: Progress
) -> Iterator[_Rendered]:
    """The first environments in this process, the others in ``jobs - 1`` workers.

    This process takes the larger share: a worker first pays for starting Python, cdk8s
    and Node, which this process has done already.
    """
    share = -(-len(envs) // jobs)
    here, there = envs[:share], envs[share:]
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes=min(jobs - 1, len(there))) as pool:
        results = [pool.apply_async(_in_worker, (checks, env)) for env in there]
        yield from _render_serial(checks, here, progress)
        for result in results:
            answer = result.get()
            if isinstance(answer, tuple):
                _raise_remote(answer)
            else:
                yield answer


def _render_serial(checks: _Checks, envs: list[str], progress: Progress) -> Iterator[_Rendered]:
    fleet = load_fleet(checks.config)
    progress.advance("loaded the declarations")
    for env in envs:
        yield _environment(fleet, env, checks)


def _all(results: Sequence[_Rendered], kind: str) -> list[Problem]:
    return [p for r in results for p in getattr(r, kind)]


def synthesize(
    config: FleetConfig,
    environments: Sequence[str] | None = None,
    *,
    validate: bool = True,
    jobs: int | None = None,
    use_cache: bool | None = None,
    progress: Progress | None = None,
) -> Synth:
    """Load the declarations and render ``environments`` (all when None), checked.

    With ``validate``, every object is checked against its CRD (when CRDs are
    available), references and the secret guard. Raises DefinitionError(s) for bad
    definitions and InvalidObjects for objects that fail a check; writes nothing.

    ``jobs`` processes render environments in parallel (default: :func:`choose_jobs`);
    ``use_cache`` (default: on unless ``$FLEET_NO_CACHE``) reuses the YAML and the
    check verdicts of objects that rendered identically before (:mod:`fleet.pipeline.cache`).
    Every combination gives the same bytes.
    """
    envs = list(environments or config.environments)
    for env in envs:
        config.check_environment(env)
    crds_dir = available_crds_dir() if validate else None
    checks = _Checks(
        config=config,
        validate=validate,
        crds_dir=crds_dir.resolve() if crds_dir else None,
        use_cache=synth_cache.enabled() if use_cache is None else use_cache,
    )
    progress = progress or Progress.silent()
    workers = choose_jobs(config, len(envs), jobs)
    progress.expect(len(envs) + 1)
    if workers > 1:
        stream = _render_parallel(checks, envs, workers, progress)
    else:
        stream = _render_serial(checks, envs, progress)
    done: dict[str, _Rendered] = {}
    for result in stream:
        done[result.environment] = result
        progress.advance(f"rendered {result.environment}")
    ordered = [done[env] for env in envs]
    # The order of fleet.validation.check_all: schemas, references, secrets. Checks run per
    # environment here (references never cross one) so that the per-object verdicts of
    # unchanged objects come from the cache; a new check must be added here as well.
    problems = [*_all(ordered, "schema"), *_all(ordered, "references"), *_all(ordered, "secrets")]
    if problems:
        raise InvalidObjects(problems)
    return Synth(
        manifests={r.environment: r.manifests for r in ordered},
        files={r.environment: r.files for r in ordered},
        crds_dir=crds_dir,
        cache_hits=sum(r.cache_hits for r in ordered),
    )


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


def write(config: FleetConfig, synth: Synth, *, progress: Progress | None = None) -> None:
    """Write every rendered environment; remove environments no longer configured.

    ``progress`` advances once per environment; the caller announces those steps
    (``expect``) before the synth starts, so the total shown never grows.
    """
    for env, files in synth.files.items():
        write_environment(config.dist_dir, env, files)
        if progress is not None:
            progress.advance(f"wrote {env}")
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
