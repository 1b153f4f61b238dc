"""Git plumbing for ``fleet diff``: the repository, the base revision, and the files of a
revision read from git objects (``git ls-tree`` and one ``git cat-file --batch``) without a
checkout."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

from fleet.core.config import FleetConfig
from fleet.core.errors import FleetError

if TYPE_CHECKING:  # `fleet diff --help` reads DEFAULT_BRANCH: no diff model for that
    from fleet.guards.diff import Files

DEFAULT_BRANCH = "main"


class GitError(FleetError):
    """A git command failed (not a repository, unknown revision, ...)."""


def git(repo: Path, *args: str) -> str:
    """``git -C repo args``'s output, stripped; GitError naming the command on failure."""
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise GitError(f"git {' '.join(args)}: {detail}")
    return proc.stdout.strip()


def git_bytes(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """``git -C repo args``'s output as bytes (``stdin`` fed to it)."""
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=False
    )
    if proc.returncode != 0:
        lines = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {' '.join(args)}: {(lines or [f'exit {proc.returncode}'])[-1]}")
    return proc.stdout


def git_toplevel(path: Path) -> Path:
    """The root of the git work tree holding ``path``."""
    try:
        return Path(git(path, "rev-parse", "--show-toplevel")).resolve()
    except GitError as e:
        raise FleetError(f"fleet diff needs a git repository at {path}: {e}") from None


def resolve_base(repo: Path, ref: str | None) -> tuple[str, str]:
    """(commit sha, how to describe it) for ``--base REF`` or the merge-base with main."""
    if ref is None:
        try:
            sha = git(repo, "merge-base", "HEAD", DEFAULT_BRANCH)
        except GitError as e:
            raise FleetError(
                f"no merge-base of HEAD and {DEFAULT_BRANCH!r} ({e}); "
                "pass --base REF (for example --base origin/main)"
            ) from None
        return sha, f"merge-base with {DEFAULT_BRANCH}"
    try:
        sha = git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except GitError:
        raise FleetError(f"--base {ref}: not a commit in {repo}") from None
    return sha, ref


def _base_dist_name(repo: Path, sha: str, project: Path) -> str:
    """``[tool.fleet] dist`` of the base revision (``dist`` when it does not say)."""
    default = FleetConfig.dist
    try:
        text = git_bytes(repo, "show", f"{sha}:{(project / 'pyproject.toml').as_posix()}")
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
    listing = git_bytes(repo, "ls-tree", "-r", "-z", "--full-tree", sha, "--", prefix or ".")
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
    batch = git_bytes(
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


def file_history(repo: Path, path: Path) -> list[tuple[str, int, str | None]]:
    """Every commit of ``HEAD``'s first-parent history that changed ``path`` (a path inside
    ``repo``), oldest first: (sha, committer time in seconds since the epoch, the file's
    text at that commit, None where the commit deleted it). First-parent: a merge commit
    counts as the change it brought, at the time it was merged."""
    try:
        rel = path.resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        return []
    try:
        log = git(repo, "log", "--first-parent", "--format=%H %ct", "--", rel)
    except GitError:
        return []  # no commits yet
    out: list[tuple[str, int, str | None]] = []
    for line in reversed(log.splitlines()):
        sha, _, seconds = line.partition(" ")
        try:
            text: str | None = git_bytes(repo, "show", f"{sha}:{rel}").decode(
                "utf-8", errors="replace"
            )
        except GitError:
            text = None
        out.append((sha, int(seconds), text))
    return out
