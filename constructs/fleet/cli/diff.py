"""``fleet diff``: what a change does to the rendered fleet, with the pull-request guards.

The base revision's objects are its committed ``dist/``, read from git (``git ls-tree`` and
one ``git cat-file --batch``): ``fleet synth --check`` in CI keeps it what the base's
sources render, whichever tool version rendered them, and it works the same in a fleet that
installs the tool as a package. Only a base without a ``dist/`` is rendered: by its own
``constructs/fleet`` when it has one (the library may have changed too), else by the
installed tool, in a temporary ``git worktree``, in a subprocess; a base without
``clusters/`` is empty. The working tree is rendered in-process. The two are compared object
by object (:mod:`fleet.checks.diff`) and reported as text or Markdown
(:mod:`fleet.views.diff_report`).

Exit codes: 0 nothing guarded changes; 1 a guard failed (a cluster-bearing object would
be deleted, a cloud provider's ForceNew field or an external name changes, or with ``--strict``
a field another CRD calls immutable changes); 2 bad input (a definition,
the base revision, or the base's render).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from fleet.checks.change_rules import change_rule_guard, change_rules
from fleet.checks.crds import ENV_VAR as CRDS_ENV_VAR
from fleet.checks.crds import index_cache_dir, load_crds, resolve_crds_dir
from fleet.checks.deletion import (
    DefinitionSources,
    cluster_bearing_kinds,
    deletions,
    grouped_by_source,
    is_cluster_bearing,
    unused_objects,
)
from fleet.checks.diff import Files, Finding, FleetDiff, Tree, compare_files, parse_files
from fleet.checks.force_new import external_name_guard, force_new_guard
from fleet.checks.immutable import (
    create_only_guard,
    declared_create_only,
    immutable_fields,
    immutable_guard,
)
from fleet.clouds.base import FleetCluster, guard_plugins
from fleet.core.config import FleetConfig
from fleet.core.errors import FleetError
from fleet.core.manifest import Identity
from fleet.pipeline.discovery import load_fleet
from fleet.pipeline.render import render_environment
from fleet.pipeline.synth import Synth, synthesize
from fleet.pipeline.writer import read_tree
from fleet.views.diff_report import ReportSection, render_markdown, render_text

EXIT_OK, EXIT_CHECK = 0, 1
DEFAULT_BRANCH = "main"
BASE_RENDER_TIMEOUT_S = 900


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


SectionProvider = Callable[[DiffContext], ReportSection | None]

EXTRA_SECTIONS: list[SectionProvider] = []
"""Report sections other features add (append a provider; None means nothing to show)."""


class GitError(FleetError):
    """A git command failed (not a repository, unknown revision, ...)."""


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise GitError(f"git {' '.join(args)}: {detail}")
    return proc.stdout.strip()


def git_toplevel(path: Path) -> Path:
    """The root of the git work tree holding ``path``."""
    try:
        return Path(_git(path, "rev-parse", "--show-toplevel")).resolve()
    except GitError as e:
        raise FleetError(f"fleet diff needs a git repository at {path}: {e}") from None


def resolve_base(repo: Path, ref: str | None) -> tuple[str, str]:
    """(commit sha, how to describe it) for ``--base REF`` or the merge-base with main."""
    if ref is None:
        try:
            sha = _git(repo, "merge-base", "HEAD", DEFAULT_BRANCH)
        except GitError as e:
            raise FleetError(
                f"no merge-base of HEAD and {DEFAULT_BRANCH!r} ({e}); "
                "pass --base REF (for example --base origin/main)"
            ) from None
        return sha, f"merge-base with {DEFAULT_BRANCH}"
    try:
        sha = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except GitError:
        raise FleetError(f"--base {ref}: not a commit in {repo}") from None
    return sha, ref


def _git_bytes(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=False
    )
    if proc.returncode != 0:
        lines = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {' '.join(args)}: {(lines or [f'exit {proc.returncode}'])[-1]}")
    return proc.stdout


def _base_dist_name(repo: Path, sha: str, project: Path) -> str:
    """``[tool.fleet] dist`` of the base revision (``dist`` when it does not say)."""
    default = FleetConfig.dist
    try:
        text = _git_bytes(repo, "show", f"{sha}:{(project / 'pyproject.toml').as_posix()}")
        table = tomllib.loads(text.decode()).get("tool", {}).get("fleet", {})
    except (GitError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return default
    dist = table.get("dist", default)
    return dist if isinstance(dist, str) and dist else default


def committed_dist(repo: Path, sha: str, project: Path) -> Files | None:
    """The base revision's committed ``dist/``: ``{env: {relpath: bytes}}``, None if it has none.

    Like :func:`fleet.pipeline.writer.read_tree` on each ``dist/<env>/`` folder (hidden
    top-level folders skipped), read from git objects without a checkout.
    """
    prefix = (project / _base_dist_name(repo, sha, project)).as_posix()
    prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
    listing = _git_bytes(repo, "ls-tree", "-r", "-z", "--full-tree", sha, "--", prefix or ".")
    blobs: list[tuple[str, str, str]] = []  # (env, relpath, object id)
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        _mode, kind, oid = meta.decode().split()
        path = raw_path.decode("utf-8", errors="surrogateescape")
        env, _, relpath = path[len(prefix) :].partition("/")
        if kind != "blob" or not relpath or env.startswith("."):
            continue
        blobs.append((env, relpath, oid))
    if not blobs:
        return None
    batch = _git_bytes(
        repo, "cat-file", "--batch", stdin="".join(f"{oid}\n" for *_, oid in blobs).encode()
    )
    files: dict[str, dict[str, bytes]] = {}
    offset = 0
    for env, relpath, oid in blobs:
        header_end = batch.index(b"\n", offset)
        got, kind, size = batch[offset:header_end].decode().split()
        if got != oid or kind != "blob":
            raise GitError(f"git cat-file --batch: expected blob {oid}, got {got} {kind}")
        start = header_end + 1
        files.setdefault(env, {})[relpath] = batch[start : start + int(size)]
        offset = start + int(size) + 1  # the content is followed by a newline
    return {env: dict(sorted(tree.items())) for env, tree in sorted(files.items())}


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
        _git(repo, "worktree", "add", "--detach", "--quiet", str(worktree), sha)
        try:
            return _synth_base(worktree / project, sha, crds_dir=crds_dir)
        finally:
            try:
                _git(repo, "worktree", "remove", "--force", str(worktree))
            except GitError:
                shutil.rmtree(worktree, ignore_errors=True)
                _git(repo, "worktree", "prune")
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
    """(environment, identity) -> definition, for every object that retiring took away.

    The fleet as it is (``head``, the working tree's render, when given; else rendered
    here) is compared with a render reviving (``Fleet.revive_retired``: every
    cluster retired in an environment, and every retired node pool, renders as if it were
    not); what only the second render holds is what retirement removed: the objects of the
    cluster or node pool and whatever other declarations render for it (a cluster's ArgoCD
    registration, for one). Projects and identities are not retired: a retired cluster
    still uses them, so their ProviderConfigs and OCIClusterIdentities stay in both renders.
    Once the last retired definition is removed, the ProviderConfig (or identity) goes too:
    the guard lets it, as nothing in the base revision uses it
    (:func:`fleet.checks.deletion.unused_objects`).
    """
    fleet = load_fleet(config)
    if not any(isinstance(c, FleetCluster) and c.retires_anything() for c in fleet.declarations()):
        return {}
    envs = config.environments
    actual = {
        env: {m.identity for m in (head.manifests[env] if head else render_environment(fleet, env))}
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
        changed = _git(repo, "diff", "--name-only", "--no-renames", sha, "--", folder.as_posix())
    except (ValueError, GitError):
        changed = ""
    for path in changed.splitlines():
        if not path.endswith(".py"):
            continue
        try:
            text = _git_bytes(repo, "show", f"{sha}:{path}").decode("utf-8", errors="replace")
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


def _guards(
    args: argparse.Namespace,
    config: FleetConfig,
    diff: FleetDiff,
    crds_dir: Path | None,
    base_files: Files,
    head: Synth,
    base: tuple[Path, str],
) -> list[Finding]:
    plugins = guard_plugins(head.plugins)  # the head fleet's and the built-in clouds'
    kinds = cluster_bearing_kinds(plugins)
    removes_bearing = any(
        is_cluster_bearing(ref, kinds) for env in diff.environments for ref in env.removed
    )
    # Loading the fleet again costs a second import of every definition: only when needed.
    retired = retired_objects(config, head) if removes_bearing else {}
    unused = unused_objects(diff, base_files, plugins) if removes_bearing else frozenset()
    judged = deletions(diff, retired=retired, kinds=kinds, unused=unused, plugins=plugins)
    # One finding per definition module (each object in its details), not one per object.
    sources = definition_sources(*base, config, head) if judged else None
    findings = grouped_by_source(judged, sources, plugins)
    findings += force_new_guard(diff, plugins=plugins) + external_name_guard(diff)
    findings += create_only_guard(diff, base_files, head.files, declared_create_only(plugins))
    findings += change_rule_guard(diff, base_files, head.files, rules=change_rules(plugins))
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
        findings += immutable_guard(diff, immutable=immutable, strict=args.strict, plugins=plugins)
    order = {"error": 0, "warning": 1, "note": 2}
    return sorted(findings, key=lambda f: order[f.level])


def _crds_dir(args: argparse.Namespace, config: FleetConfig) -> Path | None:
    try:
        return resolve_crds_dir(args.crds).resolve()
    except FleetError:
        if args.strict or args.crds is not None:
            raise
        return None


def run_diff(args: argparse.Namespace, config: FleetConfig) -> int:
    """``fleet diff``: render base and working tree, compare, guard, report."""
    repo = git_toplevel(config.root)
    sha, described = resolve_base(repo, args.base)
    crds_dir = _crds_dir(args, config)
    head = synthesize(config)
    base, origin = base_files(repo, sha, config.root.relative_to(repo), crds_dir=crds_dir)
    diff = compare_files(base, head.files, order=config.environments)
    findings = _guards(args, config, diff, crds_dir, base, head, (repo, sha))
    markdown = args.format == "markdown"
    context = DiffContext(config, diff, head, base, head.files, markdown)
    sections = [s for s in (provider(context) for provider in EXTRA_SECTIONS) if s is not None]
    title = f"Base `{sha[:12]}` ({described}; {origin}) -> working tree."
    if markdown:
        sys.stdout.write(render_markdown(diff, findings, title=title, extra_sections=sections))
        # The comment goes to a file or an API; the CI log still says why the job failed.
        for finding in findings:
            if finding.level != "note":
                print(finding.line(), file=sys.stderr)
    else:
        sys.stdout.write(
            render_text(
                diff,
                findings,
                title=title.replace("`", ""),
                extra_sections=sections,
                verbose=args.verbose,
            )
        )
    return EXIT_CHECK if any(f.level == "error" for f in findings) else EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``fleet diff`` to the command line."""
    p = sub.add_parser(
        "diff",
        help="compare the rendered fleet with a base revision; guard cluster deletions",
    )
    p.add_argument(
        "--base",
        metavar="REF",
        help=f"the revision to compare with (default: the merge-base of HEAD and {DEFAULT_BRANCH})",
    )
    p.add_argument(
        "--format",
        choices=("text", "markdown"),
        default="text",
        help="text (default), or Markdown for a merge-request comment",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 also when a field changes that a CRD's description calls immutable "
        "(the ForceNew fields of a cloud's provider always fail)",
    )
    p.add_argument(
        "--verbose",
        action="store_true",
        help="list every object of a grouped guard finding (the Markdown report always does)",
    )
    p.add_argument(
        "--crds",
        type=Path,
        metavar="DIR",
        help=f"CRD folder for the immutable-field guard (default: ${CRDS_ENV_VAR}, else the "
        "packaged CRDs)",
    )
    p.set_defaults(handler=run_diff)
