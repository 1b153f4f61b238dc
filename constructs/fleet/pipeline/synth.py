"""The synth pipeline: declarations -> manifests -> checks -> bytes -> dist/."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import multiprocessing
import os
import shutil
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fleet.argocd.argo_cd import ArgoCd
from fleet.checks.crds import plugin_crds, unvalidated_versions
from fleet.checks.problem import InvalidObjects, Problem
from fleet.checks.registry import CheckContext, Checks, collect, run_checks, verdict_key
from fleet.checks.schema import available_crds_dir
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors, FleetError
from fleet.core.fleet import Fleet
from fleet.core.manifest import Manifest
from fleet.core.values import location_root
from fleet.pipeline import cache as synth_cache
from fleet.pipeline.discovery import load_fleet
from fleet.pipeline.progress import Progress
from fleet.pipeline.render import check_unique, object_yaml, render_environment
from fleet.pipeline.writer import TEMP_PREFIX, Staging, diff_tree, write_environment
from fleet.platform.plugins import Platform, PluginSet

JOBS_VAR = "FLEET_JOBS"
PARALLEL_SOURCE_BYTES = 256 * 1024
"""Declarations larger than this (about 200 clusters) render environments in parallel
when ``jobs`` is not given: below it, starting a worker (Python, cdk8s, Node, loading the
fleet again) costs more than it saves (measured in docs/performance.md)."""
BATCH = 1000
"""Objects converted to YAML and checked together: once they all passed the object checks,
their files may be staged for writing (:class:`~fleet.pipeline.writer.Staging`)."""

Stage = Callable[[str, list[tuple[str, bytes]]], None]
"""``stage(environment, [(relative path, bytes), ...])``: files that passed every object check."""


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
    changed_files: int | None = None
    """With ``synthesize(..., write=True)``: files created, replaced or deleted in ``dist/``
    (0: it held the rendered bytes already); None when nothing was written."""
    plugins: PluginSet = field(default_factory=PluginSet)
    """The rendered fleet's plug-ins (``Platform.of(fleet).plugins``): what ``fleet diff``'s
    guards know about its clouds."""

    @property
    def object_count(self) -> int:
        """How many objects all environments hold together."""
        return sum(len(m) for m in self.manifests.values())


@dataclass(frozen=True)
class _Settings:
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
    problems: dict[str, list[Problem]] = field(default_factory=dict)
    """Check name -> its problems, in registry order (:func:`fleet.checks.registry.run_checks`)."""
    cache_hits: int = 0
    staged: bool = False
    """Every file went to ``stage`` (:func:`_environment`)."""


def _deploys_what_is_validated(fleet: Fleet, environment: str, crds_dir: Path | None) -> None:
    """Refuse an ``ArgoCd(versions=...)`` that deploys another release of a component than
    the one whose CRDs ``crds_dir`` (or a plug-in's own pinned folder) holds: its objects
    would be checked against schemas the deployed release does not serve (issue 21:
    validate against the deployed versions)."""
    if crds_dir is None:
        return
    folders = (crds_dir, *plugin_crds(Platform.of(fleet).plugins))
    for argocd in fleet.declarations():
        if not isinstance(argocd, ArgoCd) or environment not in argocd.environments:
            continue
        for folder in folders:
            for name, version, release in unvalidated_versions(argocd.versions, folder):
                if not release:
                    raise DefinitionError(
                        f"{version!r} deploys {name} {version}, but no crds.lock.yaml beside "
                        f"{folder} pins the release its CRDs are of, so its objects cannot be "
                        f"validated against what is deployed: vendor the CRDs of {version} in "
                        "a crds/ folder beside a crds.lock.yaml of your own (`fleet crds pull "
                        "--lock`) and set FLEET_CRDS_DIR to it",
                        where=argocd.context,
                        field=f"versions[{name}]",
                    )
                raise DefinitionError(
                    f"{version!r} deploys {name} {version}, but the CRDs its objects are "
                    f"validated against are of {release} (the crds.lock.yaml beside {folder}): "
                    f"deploy {release}, or vendor the CRDs of {version} in a crds/ folder "
                    "beside a crds.lock.yaml of your own (`fleet crds pull --lock`) and set "
                    "FLEET_CRDS_DIR",
                    where=argocd.context,
                    field=f"versions[{name}]",
                )


def _environment(
    fleet: Fleet, environment: str, settings: _Settings, stage: Stage | None = None
) -> _Rendered:
    """Render ``environment``, then its YAML and the fleet's checks, from the cache when it
    has an object's YAML and "no problem" verdict (of the cacheable checks).

    YAML and the object checks go :data:`BATCH` objects at a time, and while they find
    nothing each batch's files go to ``stage``, so that a first write can start before
    the environment is done; the environment checks run on every object at the end."""
    _deploys_what_is_validated(fleet, environment, settings.crds_dir)
    rendered = render_environment(fleet, environment)
    check_unique(rendered)
    store = synth_cache.SynthCache(settings.config.root, environment, active=settings.use_cache)
    checks = Checks.of(fleet).all if settings.validate else ()
    context = CheckContext.of(fleet, settings.crds_dir)
    verdict = verdict_key(checks, context) if settings.validate and store.active else ""
    per_object = [c for c in checks if c.scope == "object"]
    problems: dict[str, list[Problem]] = {c.name: [] for c in checks}
    files: dict[str, bytes] = {}
    entries: list[tuple[bytes, bytes, str]] = []
    staged = stage is not None
    for start in range(0, len(rendered), BATCH):
        batch = rendered[start : start + BATCH]
        unchecked: list[Manifest] = []
        for m in batch:
            key = synth_cache.object_key(m.body) if store.active else b""
            entry = store.get(key) if store.active else None
            data, passed = entry if entry is not None else (object_yaml(m), "")
            files[m.relpath] = data
            entries.append((key, data, passed))
            if settings.validate and (not verdict or passed != verdict):
                unchecked.append(m)
        for name, found in run_checks(per_object, batch, context, unchecked=unchecked).items():
            problems[name] += found
            staged = staged and not found
        if stage is not None and staged:
            stage(environment, [(m.relpath, files[m.relpath]) for m in batch])
    per_environment = [c for c in checks if c.scope != "object"]
    for name, found in run_checks(per_environment, rendered, context).items():
        problems[name] += found
    out = _Rendered(environment, rendered, files, problems, store.hits, staged)
    clean = settings.validate and not any(problems[c.name] for c in checks if c.cacheable)
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


class _GcPause:
    """Python's cyclic garbage collector paused from :meth:`start` to the end of the
    ``with`` block (then as it was).

    A synth builds one large graph of objects that live until it ends (rendered objects,
    YAML, verdicts); the collector examined all of them again each time the heap had grown
    by a quarter: 0.34 s of 2.4 s of CPU in a cold synth of 1,000 clusters, 0.24 s of
    1.4 s in an incremental one. Rendering and checking make little cyclic garbage (about
    50,000 objects, left to the collector once it runs again). The pause starts after
    the declarations are loaded: ``define()`` is the user's code, and collecting during
    loading costs 0.03 s.
    """

    def __init__(self) -> None:
        self._paused = False

    def start(self) -> None:
        """Pause the collector (if it runs) until the ``with`` block ends."""
        if not self._paused and gc.isenabled():
            gc.disable()
            self._paused = True

    def __enter__(self) -> _GcPause:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._paused:
            gc.enable()
            self._paused = False


# --- parallel rendering -------------------------------------------------------------------
# Workers are spawned, never forked: forking after `import cdk8s` breaks jsii's Node
# process. Each worker imports the fleet package and loads the declarations itself, once,
# and renders the environments it is given.

_WORKER_FLEET: dict[Path, Fleet] = {}


def _in_worker(settings: _Settings, environment: str) -> _Rendered | tuple[str, Any]:
    """Render one environment in a worker; fleet errors come back as plain data."""
    try:
        fleet = _WORKER_FLEET.get(settings.config.root)
        if fleet is None:
            fleet = _WORKER_FLEET[settings.config.root] = load_fleet(settings.config)
        with _GcPause() as pause, location_root(settings.config.root):
            pause.start()
            return _environment(fleet, environment, settings)
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


@contextlib.contextmanager
def _interrupts_ignored() -> Iterator[None]:
    """SIGINT ignored in this block (main thread only), so that processes started in it
    ignore it too: a Ctrl-C (sent to the whole process group) interrupts this process,
    which stops them, rather than each worker printing a traceback of its own."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _render_parallel(
    settings: _Settings,
    envs: list[str],
    jobs: int,
    progress: Progress,
    stage: Stage | None,
    loaded: Callable[[Fleet], None],
) -> Iterator[_Rendered]:
    """The first environments in this process, the others in ``jobs - 1`` workers.

    This process takes the larger share: a worker first pays for starting Python, cdk8s
    and Node, which this process has done already.
    """
    share = -(-len(envs) // jobs)
    here, there = envs[:share], envs[share:]
    context = multiprocessing.get_context("spawn")
    with _interrupts_ignored():
        pool = context.Pool(processes=min(jobs - 1, len(there)))
    with pool:
        results = [pool.apply_async(_in_worker, (settings, env)) for env in there]
        yield from _render_serial(settings, here, progress, stage, loaded)
        for result in results:
            answer = result.get()
            if isinstance(answer, tuple):
                _raise_remote(answer)
            else:
                yield answer


def _render_serial(
    settings: _Settings,
    envs: list[str],
    progress: Progress,
    stage: Stage | None,
    loaded: Callable[[Fleet], None],
) -> Iterator[_Rendered]:
    """Load the declarations (then call ``loaded`` with them) and render ``envs`` in this
    process."""
    fleet = load_fleet(settings.config)
    loaded(fleet)
    progress.advance("loaded the declarations")
    for env in envs:
        yield _environment(fleet, env, settings, stage)


def synthesize(
    config: FleetConfig,
    environments: Sequence[str] | None = None,
    *,
    validate: bool = True,
    jobs: int | None = None,
    use_cache: bool | None = None,
    crds_dir: Path | None = None,
    progress: Progress | None = None,
    write: bool = False,
) -> Synth:
    """Load the declarations and render ``environments`` (all when None), checked.

    With ``validate``, every check of the fleet runs (``Checks.of(fleet).all``: the
    schemas against ``crds_dir``, default :func:`~fleet.checks.schema.available_crds_dir`,
    and skipped without CRDs; references; bootstrap waves; the secret guard; the fleet's
    own). Raises DefinitionError(s) for bad definitions and InvalidObjects for objects that
    fail a check; writes nothing then.

    ``jobs`` processes render environments in parallel (default: :func:`choose_jobs`);
    ``use_cache`` (default: on unless ``$FLEET_NO_CACHE``) reuses the YAML and the
    check verdicts of objects that rendered identically before (:mod:`fleet.pipeline.cache`).
    Every combination gives the same bytes.

    ``write``: when every check passed, also write ``dist/`` as :func:`write` does; the
    first write of an environment (no folder for it yet) is staged while the synth still
    renders (:class:`~fleet.pipeline.writer.Staging`), so the disk and Python work at once.
    """
    envs = list(dict.fromkeys(environments or config.environments))
    for env in envs:
        config.check_environment(env)
    if write:
        _check_writable(config)
    if not validate:
        crds_dir = None
    elif crds_dir is None:
        crds_dir = available_crds_dir()
    settings = _Settings(
        config=config,
        validate=validate,
        crds_dir=crds_dir.resolve() if crds_dir else None,
        use_cache=synth_cache.enabled() if use_cache is None else use_cache,
    )
    progress = progress or Progress.silent()
    workers = choose_jobs(config, len(envs), jobs)
    progress.expect(len(envs) + 1)
    staging = Staging(config.dist_dir, envs) if write else None
    failed = False  # once a check found something, the synth fails: nothing more to stage

    def stage(environment: str, files: list[tuple[str, bytes]]) -> None:
        if staging is not None and not failed:
            staging.add(environment, files)

    # Locations in errors (a fleet's own check that raises) relative to this project.
    with (
        _GcPause() as gc_pause,
        staging or contextlib.nullcontext(),
        location_root(config.root),
    ):
        sink = stage if staging is not None else None
        plugins: list[PluginSet] = []

        def loaded(fleet: Fleet) -> None:
            plugins.append(Platform.of(fleet).plugins)
            gc_pause.start()

        if workers > 1:
            stream = _render_parallel(settings, envs, workers, progress, sink, loaded)
        else:
            stream = _render_serial(settings, envs, progress, sink, loaded)
        done: dict[str, _Rendered] = {}
        for result in stream:
            done[result.environment] = result
            progress.advance(f"rendered {result.environment}")
            failed = failed or any(result.problems.values())
            if sink is not None and not result.staged:  # rendered by a worker
                sink(result.environment, list(result.files.items()))
        ordered = [done[env] for env in envs]
        problems = collect([r.problems for r in ordered])
        if problems:
            raise InvalidObjects(problems, objects=sum(len(r.manifests) for r in ordered))
        synth = Synth(
            manifests={r.environment: r.manifests for r in ordered},
            files={r.environment: r.files for r in ordered},
            crds_dir=crds_dir,
            cache_hits=sum(r.cache_hits for r in ordered),
            plugins=plugins[0],
        )
        if staging is not None:
            synth = dataclasses.replace(
                synth, changed_files=_write(config, synth, progress, staging)
            )
    return synth


def stale_environments(config: FleetConfig, synth: Synth) -> list[str]:
    """Folders in ``dist/`` of environments that are no longer configured.

    Only folders a synth could have written: real folders (not symlinks) that hold YAML
    files only. Anything else in ``dist/`` is someone else's, and is neither deleted nor
    reported.
    """
    dist = config.dist_dir
    if not dist.is_dir() or set(synth.files) != set(config.environments):
        return []
    return sorted(
        p.name
        for p in dist.iterdir()
        if not p.name.startswith(".")
        and p.name not in config.environments
        and p.is_dir()
        and not p.is_symlink()
        and _yaml_only(p)
    )


def _yaml_only(folder: Path) -> bool:
    """Whether every file under ``folder`` is a ``.yaml`` file (as a synth writes them, or
    the temporary file of an interrupted write)."""
    return all(
        name.endswith(".yaml") or name.startswith(TEMP_PREFIX)
        for _, _, filenames in os.walk(folder)
        for name in filenames
    )


def write(config: FleetConfig, synth: Synth, *, progress: Progress | None = None) -> int:
    """Write every rendered environment; remove environments no longer configured.
    Returns how many files it created, replaced or deleted.

    ``progress`` advances once per environment; the caller announces those steps
    (``expect``) before the synth starts, so the total shown never grows.
    (``synthesize(..., write=True)`` does this too, with a head start for first writes.)
    """
    return _write(config, synth, progress, None)


def _check_writable(config: FleetConfig) -> None:
    """Refuse, before rendering, an output folder that is something else (a file, a
    symlink to nothing)."""
    dist = config.dist_dir
    if os.path.lexists(dist) and not dist.is_dir():
        what = "a symlink to nothing" if not dist.exists() else "a file"
        raise FleetError(f"{config.dist}: is {what}, not a folder (the output folder)")


def _write(
    config: FleetConfig, synth: Synth, progress: Progress | None, staging: Staging | None
) -> int:
    _check_writable(config)
    target = config.dist
    changed = 0
    try:
        for env, files in synth.files.items():
            target = f"{config.dist}/{env}"
            changed += write_environment(config.dist_dir, env, files, staging=staging)
            if progress is not None:
                progress.advance(f"wrote {env}")
        for env in stale_environments(config, synth):
            target = f"{config.dist}/{env}"
            changed += sum(len(names) for _, _, names in os.walk(config.dist_dir / env))
            shutil.rmtree(config.dist_dir / env)
    except OSError as e:
        # A read-only or full disk, a folder of another user: what and where, no traceback.
        path = f" ({os.path.relpath(e.filename, config.root)})" if e.filename else ""
        raise FleetError(f"{target}: cannot write: {e.strerror or e}{path}") from None
    return changed


def drift(config: FleetConfig, synth: Synth) -> list[str]:
    """``<env>/<path>`` of every file in ``dist/`` that differs from what ``synth`` renders."""
    out = [
        f"{env}/{path}"
        for env, files in synth.files.items()
        for path in diff_tree(config.dist_dir / env, files)
    ]
    out.extend(f"{env}/" for env in stale_environments(config, synth))
    return out


def drift_report(config: FleetConfig, differing: Sequence[str]) -> str:
    """What ``fleet synth --check`` says when ``dist/`` is stale: the files, then the fix.

    ``differing`` is :func:`drift`'s list (``<env>/<path>``).
    """
    from fleet.core.words import plural

    lines = [f"dist/ is not what the sources render ({plural(len(differing), 'file')} differ):"]
    lines += [f"  {config.dist}/{path}" for path in differing]
    lines.append("run `fleet synth` and commit dist/")
    return "\n".join(lines)
