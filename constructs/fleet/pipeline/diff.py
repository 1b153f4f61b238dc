"""The ``fleet diff`` use case: what a change does to the rendered fleet, and the guards.

The base revision's objects are its committed ``dist/``, read from git
(:func:`fleet.pipeline.git.committed_dist`): ``fleet synth --check`` in CI keeps it what the
base's sources render, whichever tool version rendered them, and it works the same in a
fleet that installs the tool as a package. Only a base without a ``dist/`` is rendered: by
its own ``constructs/fleet`` when it has one (the library may have changed too), else by the
installed tool, in a temporary ``git worktree``, in a subprocess; a base without
``clusters/`` is empty. The working tree is rendered in-process. The two are compared object
by object (:mod:`fleet.guards.diff`), then every guard runs (:func:`guard`): deletion (what
bears a cluster), force-new and immutable fields, external names, create-only fields and the
plug-ins' change rules. :func:`diff_revision` does all of it for a project in git;
:func:`guard` alone serves renders held in memory (``fleet.testing.diff``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from fleet.checks.crds import ENV_VAR as CRDS_ENV_VAR
from fleet.checks.crds import index_cache_dir, load_crds, resolve_crds_dir
from fleet.clouds.base import FleetCluster, guard_plugins
from fleet.core.config import FleetConfig
from fleet.core.errors import FleetError
from fleet.core.fleet import Fleet
from fleet.core.manifest import Identity, Manifest
from fleet.guards.change_rules import change_rule_guard, change_rules
from fleet.guards.deletion import (
    DefinitionSources,
    cluster_bearing_kinds,
    deletions,
    grouped_by_source,
    is_cluster_bearing,
    unused_objects,
)
from fleet.guards.diff import Files, Finding, FleetDiff, Tree, compare_files, parse_files
from fleet.guards.force_new import external_name_guard, force_new_guard
from fleet.guards.immutable import (
    create_only_guard,
    declared_create_only,
    immutable_fields,
    immutable_guard,
)
from fleet.pipeline.discovery import load_fleet
from fleet.pipeline.git import (
    GitError,
    committed_dist,
    git,
    git_bytes,
    git_toplevel,
    resolve_base,
)
from fleet.pipeline.render import render_environment, to_files
from fleet.pipeline.synth import Synth, synthesize
from fleet.pipeline.writer import read_tree
from fleet.platform.plugins import Platform, PluginSet

BASE_RENDER_TIMEOUT_S = 900

Retired = Mapping[tuple[str, Identity], str]
"""(environment, identity) -> definition, for every object that retiring took away."""


@dataclass(frozen=True)
class DiffContext:
    """Everything a report section may draw on."""

    config: FleetConfig
    diff: FleetDiff
    head: Synth
    base_files: Files
    head_files: Files
    markdown: bool

    @cached_property
    def base_tree(self) -> Tree:
        """Every object of the base revision, parsed (on first use: it costs a parse)."""
        return parse_files(self.base_files)

    @cached_property
    def head_tree(self) -> Tree:
        """Every object of the working tree, parsed (on first use)."""
        return parse_files(self.head_files)


@dataclass(frozen=True)
class RevisionDiff:
    """What ``fleet diff`` found between a base revision and the working tree."""

    config: FleetConfig
    sha: str
    """The base revision's commit."""
    described: str
    """How the base was chosen (``merge-base with main``, or the ``--base`` given)."""
    origin: str
    """Where the base's objects came from (its committed ``dist/``, or its render)."""
    base_files: Files
    head: Synth
    diff: FleetDiff
    findings: list[Finding]
    """Every guard's findings, errors first."""

    @property
    def title(self) -> str:
        """The report's title (Markdown: the sha in backquotes)."""
        return f"Base `{self.sha[:12]}` ({self.described}; {self.origin}) -> working tree."

    @property
    def failed(self) -> bool:
        """Whether a guard found an error (``fleet diff`` exits 1)."""
        return any(f.level == "error" for f in self.findings)

    def context(self, *, markdown: bool) -> DiffContext:
        """What a report section draws on, for a report in Markdown or text."""
        return DiffContext(
            self.config, self.diff, self.head, self.base_files, self.head.files, markdown
        )


def base_files(repo: Path, sha: str, project: Path, *, crds_dir: Path | None) -> tuple[Files, str]:
    """The base revision's objects, and where they came from (for the report's title).

    Its committed ``dist/`` when it has one, else its render (:func:`render_base`).
    """
    committed = committed_dist(repo, sha, project)
    if committed is not None:
        return committed, "its committed dist/"
    return render_base(repo, sha, project, crds_dir=crds_dir), "rendered: it has no dist/"


def render_base(repo: Path, sha: str, project: Path, *, crds_dir: Path | None) -> Files:
    """The base revision rendered by its own ``constructs/fleet`` (else by the installed
    tool); empty if it has no ``clusters/`` folder.

    ``project`` is the fleet project's folder relative to the repository root.
    """
    scratch = Path(tempfile.mkdtemp(prefix="fleet-diff-"))
    worktree = scratch / "base"
    try:
        git(repo, "worktree", "add", "--detach", "--quiet", str(worktree), sha)
        try:
            return _synth_base(worktree / project, sha, crds_dir=crds_dir)
        finally:
            try:
                git(repo, "worktree", "remove", "--force", str(worktree))
            except GitError:
                shutil.rmtree(worktree, ignore_errors=True)
                git(repo, "worktree", "prune")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _synth_base(root: Path, sha: str, *, crds_dir: Path | None) -> Files:
    constructs = root / "constructs"
    try:
        clusters = FleetConfig.load(root).clusters_dir
    except FleetError:
        clusters = root / "clusters"
    if not clusters.is_dir():
        return {}
    env = dict(os.environ)
    if (constructs / "fleet").is_dir():
        # The base's own library renders the base's definitions, whatever is installed.
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(constructs), os.environ.get("PYTHONPATH", "")) if p
        )
    env.pop("FLEET_ROOT", None)
    if crds_dir is not None:
        env[CRDS_ENV_VAR] = str(crds_dir)
    # The worktree has no node_modules; fleet.core.nodejs set JSII_NODE when fleet was imported.
    if os.environ.get("JSII_NODE"):
        env["JSII_NODE"] = os.environ["JSII_NODE"]
    # `-c` rather than `-m fleet.cli`: older revisions' cli.py has no __main__ block.
    code = "import sys; from fleet.cli.main import main; sys.exit(main(sys.argv[1:]))"
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, "--root", str(root), "synth"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=BASE_RENDER_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise FleetError(
            f"rendering the base revision {sha[:12]} took over {BASE_RENDER_TIMEOUT_S} s"
        ) from None
    if proc.returncode != 0:
        output = [line for line in proc.stderr.splitlines() if line.strip()]
        detail = "; ".join(output[-5:]) or f"exit {proc.returncode}"
        raise FleetError(f"cannot render the base revision {sha[:12]}: {detail}")
    dist = FleetConfig.load(root).dist_dir
    return {
        p.name: read_tree(p)
        for p in sorted(dist.iterdir() if dist.is_dir() else [])
        if p.is_dir() and not p.name.startswith(".")
    }


def retired_objects(
    config: FleetConfig, head: Synth | None = None
) -> dict[tuple[str, Identity], str]:
    """(environment, identity) -> definition, for every object that retiring took away
    from the fleet of ``config`` (loaded here; ``head``, the working tree's render, when
    given): :func:`retired_in`."""
    return retired_in(load_fleet(config), config.environments, head.manifests if head else None)


def retired_in(
    fleet: Fleet,
    environments: Sequence[str],
    head: Mapping[str, list[Manifest]] | None = None,
) -> dict[tuple[str, Identity], str]:
    """(environment, identity) -> definition, for every object that retiring took away.

    The fleet as it is (``head``, its render, when given; else rendered here) is compared
    with a render reviving (``Fleet.revive_retired``: every cluster retired in an
    environment, and every retired node pool, renders as if it were not); what only the
    second render holds is what retirement removed: the objects of the cluster or node pool
    and whatever other declarations render for it (a cluster's ArgoCD registration, for
    one). Projects and identities are not retired: a retired cluster still uses them, so
    their ProviderConfigs and OCIClusterIdentities stay in both renders. Once the last
    retired definition is removed, the ProviderConfig (or identity) goes too: the guard lets
    it, as nothing in the base revision uses it (:func:`fleet.guards.deletion.unused_objects`).
    """
    if not any(isinstance(c, FleetCluster) and c.retires_anything() for c in fleet.declarations()):
        return {}
    envs = list(environments)
    actual = {
        env: {
            m.identity for m in (head[env] if head is not None else render_environment(fleet, env))
        }
        for env in envs
    }
    fleet.revive_retired = True
    try:
        revived = {env: render_environment(fleet, env) for env in envs}
    finally:
        fleet.revive_retired = False
    return {
        (env, m.identity): m.source
        for env, manifests in revived.items()
        for m in manifests
        if m.identity not in actual[env]
    }


def definition_sources(repo: Path, sha: str, config: FleetConfig, head: Synth) -> DefinitionSources:
    """What tells where removed objects were defined: the declaration modules the change
    deletes or edits, as they were in the base revision, and the working tree's sources."""
    modules: dict[str, str] = {}
    try:
        folder = config.clusters_dir.resolve().relative_to(repo)
        changed = git(repo, "diff", "--name-only", "--no-renames", sha, "--", folder.as_posix())
    except (ValueError, GitError):
        changed = ""
    for path in changed.splitlines():
        if not path.endswith(".py"):
            continue
        try:
            text = git_bytes(repo, "show", f"{sha}:{path}").decode("utf-8", errors="replace")
        except GitError:
            continue  # new in the working tree
        try:
            shown = (repo / path).relative_to(config.root.resolve()).as_posix()
        except ValueError:
            shown = path
        modules[shown] = text
    return DefinitionSources(
        base_modules=modules,
        head={(env, m.identity): m.source for env, ms in head.manifests.items() for m in ms},
    )


def guard(
    diff: FleetDiff,
    base_files: Files,
    head_files: Files,
    *,
    retired: Callable[[], Retired],
    sources: Callable[[], DefinitionSources],
    crds_dir: Path | None,
    plugins: PluginSet,
    strict: bool = False,
) -> list[Finding]:
    """Every guard's findings on ``diff`` (of ``base_files`` and ``head_files``), errors
    first: deletions (``retired`` and ``sources`` are asked only when needed: a removed
    cluster-bearing object, a deletion to attribute), ForceNew fields and external names,
    create-only fields, the plug-ins' change rules, and the fields the CRDs of ``crds_dir``
    call immutable (a warning without CRDs; with ``strict`` they fail). The clouds the
    guards know are ``plugins`` (:func:`~fleet.clouds.base.guard_plugins`: the compared
    fleets' and the built-in clouds')."""
    kinds = cluster_bearing_kinds(plugins)
    removes_bearing = any(
        is_cluster_bearing(ref, kinds) for env in diff.environments for ref in env.removed
    )
    # Loading the fleet again costs a second import of every definition: only when needed.
    retired_found = retired() if removes_bearing else {}
    unused = unused_objects(diff, base_files, plugins) if removes_bearing else frozenset()
    judged = deletions(diff, retired=retired_found, kinds=kinds, unused=unused, plugins=plugins)
    # One finding per definition module (each object in its details), not one per object.
    findings = grouped_by_source(judged, sources() if judged else None, plugins)
    findings += force_new_guard(diff, plugins=plugins) + external_name_guard(diff)
    findings += create_only_guard(diff, base_files, head_files, declared_create_only(plugins))
    findings += change_rule_guard(diff, base_files, head_files, rules=change_rules(plugins))
    if crds_dir is None:
        findings.append(
            Finding(
                "warning",
                "",
                "",
                "immutable-field guard skipped: no CRDs (run `fleet crds pull`, "
                f"pass --crds DIR or set {CRDS_ENV_VAR})",
            )
        )
    elif any(env.changed for env in diff.environments):
        index = load_crds(crds_dir, cache_dir=index_cache_dir())
        immutable = immutable_fields(index)
        findings += immutable_guard(diff, immutable=immutable, strict=strict, plugins=plugins)
    order = {"error": 0, "warning": 1, "note": 2}
    return sorted(findings, key=lambda f: order[f.level])


def crds_dir_for(crds: Path | None, *, strict: bool) -> Path | None:
    """The CRD folder of the immutable-field guard: ``crds`` (``--crds``), else the
    configured or packaged one; None when there is none, unless ``crds`` was given or the
    diff is ``strict`` (then the error saying why)."""
    try:
        return resolve_crds_dir(crds).resolve()
    except FleetError:
        if strict or crds is not None:
            raise
        return None


def diff_revision(
    config: FleetConfig, base: str | None = None, *, crds: Path | None = None, strict: bool = False
) -> RevisionDiff:
    """``fleet diff``: the base revision (``base``, default the merge-base with main) and the
    working tree, rendered, compared and guarded."""
    repo = git_toplevel(config.root)
    sha, described = resolve_base(repo, base)
    crds_dir = crds_dir_for(crds, strict=strict)
    head = synthesize(config)
    base_objects, origin = base_files(repo, sha, config.root.relative_to(repo), crds_dir=crds_dir)
    diff = compare_files(base_objects, head.files, order=config.environments)
    findings = guard(
        diff,
        base_objects,
        head.files,
        retired=lambda: retired_objects(config, head),
        sources=lambda: definition_sources(repo, sha, config, head),
        crds_dir=crds_dir,
        plugins=guard_plugins(head.plugins),
        strict=strict,
    )
    return RevisionDiff(config, sha, described, origin, base_objects, head, diff, findings)


def diff_renders(
    base: Mapping[str, Sequence[Manifest]],
    head: Mapping[str, list[Manifest]],
    fleet: Fleet,
    *,
    crds: Path | None = None,
    strict: bool = False,
    base_fleet: Fleet | None = None,
) -> tuple[FleetDiff, list[Finding]]:
    """The comparison and every guard's findings from ``base``'s objects to ``head``'s
    (``fleet``'s render), per environment, held in memory: what :func:`diff_revision` finds,
    with the files as ``dist/`` would hold them and without git. Removed objects are
    attributed to the head's definitions only (there is no base revision to read edited
    modules from). The guards know the plug-ins of ``fleet`` and of ``base_fleet`` (the
    base's, when it was loaded), and the built-in clouds'."""
    base_files = {env: to_files(ms) for env, ms in base.items()}
    head_files = {env: to_files(ms) for env, ms in head.items()}
    crds_dir = crds_dir_for(crds, strict=strict)
    diff = compare_files(base_files, head_files, order=fleet.environment_names)
    findings = guard(
        diff,
        base_files,
        head_files,
        retired=lambda: retired_in(fleet, list(head), head),
        sources=lambda: DefinitionSources(
            head={(env, m.identity): m.source for env, ms in head.items() for m in ms}
        ),
        crds_dir=crds_dir,
        plugins=guard_plugins(
            *(Platform.of(f).plugins for f in (fleet, base_fleet) if f is not None)
        ),
        strict=strict,
    )
    return diff, findings
