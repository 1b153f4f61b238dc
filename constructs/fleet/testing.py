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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.core.config import DEFAULT_ENVIRONMENTS, FleetConfig
from fleet.core.fleet import Fleet
from fleet.core.manifest import Manifest
from fleet.core.tree import did_you_mean

if TYPE_CHECKING:
    from fleet.guards.diff import Finding, FleetDiff

__all__ = ["DiffOutput", "SynthOutput", "diff", "fleet", "synth"]


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
    ``validate`` InvalidObjects for objects that fail a check (schemas need CRDs:
    ``$FLEET_CRDS_DIR``).
    """
    from fleet.checks.problem import InvalidObjects
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
