"""Fixture fleets for tests, in one line each, like cdk8s ``Testing``.

Example::

    from fleet import testing

    app = testing.fleet(environments=["dev", "prod"])
    MagnumCluster(app, "web", name="web-{env}", environments=["dev"], ...)
    out = testing.synth(app)
    out.get("ClusterV1", "web-dev", env="dev")["spec"]["forProvider"]["nodeCount"]

``synth`` runs what ``fleet synth`` runs before writing (the phases, the render, the
one-identity check; with ``validate=True`` the schema, reference and secret checks too)
and returns the objects in memory: nothing is written.

``diff`` says what ``fleet diff`` would say of a change from one fleet to another (the same
declarations before and after an edit)::

    before, after = build(testing.fleet()), build(testing.fleet(), node_count=3)
    out = testing.diff(before, after)
    assert out.errors == []

A fleet repository's own tests (``tests/test_fleet_invariants.py``, which ``fleet init``
writes) render the repository itself, as ``fleet synth`` does, and compare it with the
committed ``dist/``::

    config = FleetConfig.load(ROOT)
    out = testing.synth_repository(config)
    assert out.drift() == [], out.drift_report()
    assert testing.validate_repository(config) == []

Everything here is the contract a fleet's tests are written against: the modules under it
may move, these names stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.checks.problem import InvalidObjects
from fleet.core.config import DEFAULT_ENVIRONMENTS, FleetConfig
from fleet.core.fleet import Fleet
from fleet.core.manifest import Manifest
from fleet.core.tree import did_you_mean
from fleet.guards.deletion import PLATFORM_BEARING_KINDS as _PLATFORM_BEARING_KINDS

if TYPE_CHECKING:
    from fleet.guards.diff import Finding, FleetDiff

__all__ = [
    "PLATFORM_BEARING_KINDS",
    "DiffOutput",
    "InvalidObjects",
    "KindPattern",
    "RepositoryOutput",
    "SynthOutput",
    "cluster_bearing_kinds",
    "diff",
    "fleet",
    "load_repository",
    "read_dist",
    "reading_problems",
    "synth",
    "synth_repository",
    "validate_repository",
]

KindPattern = tuple[str, str]
"""(API group, kind) as ``fnmatch`` patterns: ``("*", "ProviderConfig")``."""

PLATFORM_BEARING_KINDS: tuple[KindPattern, ...] = _PLATFORM_BEARING_KINDS
"""The cluster-bearing kinds of the platform itself, whatever the clouds: ArgoCD's cluster
registrations (provider-argocd's ``Cluster``) and every ``ProviderConfig``."""


def fleet(
    *,
    environments: Sequence[str] = DEFAULT_ENVIRONMENTS,
    root: Path | None = None,
    repo_url: str = FleetConfig.repo_url,
    revision: str = FleetConfig.revision,
) -> Fleet:
    """An empty fleet with ``environments``, rooted in ``root`` (default: the current
    folder; synth writes nothing there)."""
    config = FleetConfig(
        root=(root or Path.cwd()).resolve(),
        environments=tuple(environments),
        repo_url=repo_url,
        revision=revision,
    )
    return Fleet(config)


@dataclass(frozen=True)
class SynthOutput:
    """The rendered objects of a fleet, per environment, with lookups for assertions."""

    manifests: dict[str, list[Manifest]]

    def all(self, kind: str | None = None, *, env: str | None = None) -> list[Manifest]:
        """Every object (of ``kind``, in ``env``), in render order."""
        return [
            m
            for e, ms in self.manifests.items()
            if env is None or e == env
            for m in ms
            if kind is None or m.kind == kind
        ]

    def find(
        self, kind: str, name: str, *, env: str | None = None, namespace: str | None = None
    ) -> Manifest:
        """The one object ``kind``/``name`` (in ``env``, ``namespace``); a KeyError that
        lists the names of that kind when there is none, or when ``env`` is needed."""
        hits = [
            m
            for m in self.all(kind, env=env)
            if m.name == name and (namespace is None or m.namespace == namespace)
        ]
        if len(hits) == 1:
            return hits[0]
        if hits:
            envs = ", ".join(sorted({m.environment for m in hits}))
            raise KeyError(f"{kind} {name!r} is in several environments ({envs}); pass env=")
        names = sorted({m.name for m in self.all(kind, env=env)})
        where = f" in {env}" if env else ""
        raise KeyError(
            f"no {kind} {name!r}{where}{did_you_mean(name, names)} "
            f"({len(names)} {kind} objects{where})"
        )

    def get(
        self, kind: str, name: str, *, env: str | None = None, namespace: str | None = None
    ) -> dict[str, Any]:
        """The body of the one object ``kind``/``name`` (see :meth:`find`)."""
        return self.find(kind, name, env=env, namespace=namespace).body

    def names(self, kind: str, *, env: str | None = None) -> list[str]:
        """The names of the objects of ``kind`` (in ``env``), sorted."""
        return sorted(m.name for m in self.all(kind, env=env))


def synth(
    app: Fleet, environments: Sequence[str] | None = None, *, validate: bool = False
) -> SynthOutput:
    """Run the phases and render ``environments`` (all when None) of ``app``, in memory.

    Raises what ``fleet synth`` would: DefinitionError(s) for bad declarations, and with
    ``validate`` :class:`InvalidObjects` (a FleetError whose ``problems`` are the objects
    that fail a check; schemas need CRDs: ``$FLEET_CRDS_DIR``).
    """
    from fleet.checks.registry import CheckContext, Checks, check_environments
    from fleet.checks.schema import available_crds_dir
    from fleet.pipeline.render import check_unique, render_environment

    envs = list(environments or app.environment_names)
    out: dict[str, list[Manifest]] = {}
    for env in envs:
        app.check_environment(env)
        rendered = render_environment(app, env)
        check_unique(rendered)
        out[env] = rendered
    if validate:
        context = CheckContext.of(app, available_crds_dir())
        problems = check_environments(Checks.of(app).all, out, context)
        if problems:
            raise InvalidObjects(problems, objects=sum(len(ms) for ms in out.values()))
    return SynthOutput(out)


@dataclass(frozen=True)
class DiffOutput:
    """What ``fleet diff`` found between two renders: the objects added, removed and
    changed per environment (``diff``) and every guard's findings, errors first."""

    diff: FleetDiff
    findings: list[Finding]

    @property
    def errors(self) -> list[str]:
        """The findings that fail ``fleet diff`` (exit 1), one line each."""
        return [f.line() for f in self.findings if f.level == "error"]

    def report(self, *, title: str = "Base -> head.", verbose: bool = False) -> str:
        """The text report ``fleet diff`` prints (``verbose``: each object of a grouped
        finding too)."""
        from fleet.views.diff_report import render_text

        return render_text(self.diff, self.findings, title=title, verbose=verbose)


def diff(
    base: Fleet | SynthOutput,
    head: Fleet,
    environments: Sequence[str] | None = None,
    *,
    strict: bool = False,
    crds_dir: Path | None = None,
) -> DiffOutput:
    """What ``fleet diff`` says of the change from ``base`` (a fleet, or its
    :func:`synth`) to ``head``, in ``environments`` (all of ``head``'s when None): both
    rendered in memory, compared object by object as ``dist/`` files, and judged by every
    guard (deletions, ForceNew, immutable and create-only fields, external names, the
    plug-ins' change rules). ``crds_dir`` is the immutable-field guard's CRD folder
    (default: the configured or packaged one); with ``strict`` a field a CRD calls
    immutable fails. Raises what :func:`synth` raises for either fleet.
    """
    from fleet.pipeline.diff import diff_renders

    envs = list(environments or head.environment_names)
    before = base if isinstance(base, SynthOutput) else synth(base, envs)
    after = synth(head, envs)
    found, findings = diff_renders(
        {env: before.manifests.get(env, []) for env in envs},
        after.manifests,
        head,
        crds=crds_dir,
        strict=strict,
        base_fleet=base if isinstance(base, Fleet) else None,
    )
    return DiffOutput(found, findings)


@dataclass(frozen=True)
class RepositoryOutput(SynthOutput):
    """A fleet repository rendered as ``fleet synth`` renders it (nothing written): its
    objects per environment (the lookups of :class:`SynthOutput`) and the ``dist/`` files
    they become (``files[env][path]``, ``path`` relative to ``dist/<env>/``)."""

    config: FleetConfig
    files: dict[str, dict[str, bytes]]

    def drift(self) -> list[str]:
        """``<env>/<path>`` of every file of the committed ``dist/`` that is not what the
        sources render (added, changed or removed; ``<env>/`` for the folder of an
        environment no longer configured): what ``fleet synth --check`` finds. Empty when
        ``dist/`` is up to date."""
        from fleet.pipeline.synth import Synth, drift

        return drift(self.config, Synth(manifests=self.manifests, files=self.files))

    def drift_report(self) -> str:
        """What ``fleet synth --check`` prints when ``dist/`` is stale: the files that
        differ, then the command that fixes them ("" when nothing differs)."""
        from fleet.pipeline.synth import drift_report

        differing = self.drift()
        return drift_report(self.config, differing) if differing else ""


def load_repository(config: FleetConfig) -> Fleet:
    """The repository's fleet as ``fleet synth`` loads it: every module of its
    ``clusters/`` imported fresh, its ``define(fleet)`` called, the phases run (the tree
    locked, its declarations prepared and validated). Raises DefinitionError(s) for bad
    declarations."""
    from fleet.pipeline.discovery import load_fleet

    return load_fleet(config)


def synth_repository(
    config: FleetConfig,
    environments: Sequence[str] | None = None,
    *,
    validate: bool = True,
    crds_dir: Path | None = None,
    use_cache: bool | None = None,
) -> RepositoryOutput:
    """Render the repository of ``config`` as ``fleet synth --check`` does, writing nothing:
    its ``clusters/`` loaded, ``environments`` (all when None) rendered into the bytes of
    their ``dist/`` files and, with ``validate``, every check of the fleet run (schemas
    against ``crds_dir``, default ``$FLEET_CRDS_DIR`` else the packaged CRDs, skipped when
    there are none; references; bootstrap waves; the secret guard; the fleet's own).

    ``use_cache`` (default: on unless ``$FLEET_NO_CACHE``) reuses the verdicts of objects
    that rendered identically before; the bytes are the same either way. Raises
    DefinitionError(s) for bad declarations and, with ``validate``, :class:`InvalidObjects`
    for objects that fail a check (see :func:`validate_repository` for them as lines).
    """
    from fleet.pipeline.synth import synthesize

    found = synthesize(
        config, environments, validate=validate, crds_dir=crds_dir, use_cache=use_cache
    )
    return RepositoryOutput(manifests=found.manifests, config=config, files=found.files)


def validate_repository(
    config: FleetConfig, environments: Sequence[str] | None = None, *, crds_dir: Path | None = None
) -> list[str]:
    """What ``fleet validate`` reports of the repository of ``config``: one line per problem
    (``<env>: <Kind ns/name>: <field>: <message> (defined at <source>)``) of every check of
    the fleet, run without the cache; empty when every object passes. Schemas are always
    checked: against ``crds_dir``, else ``$FLEET_CRDS_DIR``, else the CRDs pinned in the
    fleet package, and a missing folder is an error (FleetError), never a skipped check."""
    from fleet.checks.crds import resolve_crds_dir
    from fleet.pipeline.synth import synthesize

    try:
        synthesize(config, environments, crds_dir=resolve_crds_dir(crds_dir), use_cache=False)
    except InvalidObjects as e:
        return [p.line() for p in e.problems]
    return []


def read_dist(config: FleetConfig, env: str) -> dict[str, bytes]:
    """The committed ``dist/<env>/`` of the repository of ``config``: every file's bytes by
    its path relative to that folder (POSIX, sorted; empty when the folder does not
    exist)."""
    from fleet.pipeline.writer import read_tree

    return read_tree(config.dist_dir / env)


def reading_problems(data: bytes | str) -> list[str]:
    """What in the YAML ``data`` may not read as written, one line each: anchors and
    aliases, and plain scalars that PyYAML reads as strings but Kubernetes (go-yaml v2),
    go-yaml v3, ruamel.yaml or a YAML 1.2 reader may read as another type. Empty for what
    ``fleet synth`` writes."""
    from fleet.pipeline.yaml_canonical import reading_problems as problems

    return problems(data)


def cluster_bearing_kinds(app: Fleet | None = None) -> tuple[KindPattern, ...]:
    """Every kind whose deletion would delete or cut off a cluster, as ``fleet diff``
    guards them: the kinds each cluster class of ``app``'s clouds (and of the built-in
    clouds, always) declares bearing, the kinds their plug-ins protect, then
    :data:`PLATFORM_BEARING_KINDS`. ``app``: a loaded fleet (:func:`load_repository`);
    None: the built-in clouds only."""
    from fleet.clouds.base import guard_plugins
    from fleet.guards.deletion import cluster_bearing_kinds as bearing
    from fleet.platform.plugins import Platform

    if app is None:
        return bearing()
    return bearing(guard_plugins(Platform.of(app).plugins))
