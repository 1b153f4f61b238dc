"""``fleet init [DIR]``: start a fleet repository that depends on this tool as a package.

Like ``cdk8s init``: writes the project's files from the templates in ``fleet/scaffold/``
(``*.tmpl``; ``{{name}}``-style placeholders), copies the pinned CRDs (``crds.lock.yaml``,
``crds/``) and the Node lock file from the tool's source tree, and renders ``dist/`` once,
so the new repository passes its own ``make synth`` and ``make test`` from the first commit.

The tool is not on PyPI: the new ``pyproject.toml`` depends on ``fleet @ <url>``, a local
checkout (``file://``) or a git URL pinned to a revision (``git+https://...@<rev>``), set by
``--tool-source`` and defaulting to where the running tool comes from.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from fleet.checks.crds import LOCK_FILE, VENDOR_DIR, verify_vendored
from fleet.core.config import FleetConfig
from fleet.core.errors import FleetError
from fleet.core.words import plural

SCAFFOLD = Path(__file__).resolve().parent.parent / "scaffold"
TEMPLATE_SUFFIX = ".tmpl"
RENAMED = {"gitignore": ".gitignore"}
"""Template files whose name differs in the project (a packaged dotfile is easily lost)."""
CI_FILES = {
    "gitlab": ("gitlab-ci.yml", ".gitlab-ci.yml"),
    "github": ("github-actions.yml", ".github/workflows/fleet.yml"),
}
DEV_TOOLS = ("pytest", "ruff", "syrupy")
"""The tool's pinned dev dependencies a fleet repository needs too."""
DEFAULT_REPO_URL = "https://git.example.org/platform/fleet.git"
ALLOWED_EXISTING = {".git"}


@dataclass(frozen=True)
class ToolSource:
    """Where the new project installs the tool from, and the tool's source tree if local."""

    requirement: str
    """``fleet @ <url>``."""
    tree: Path | None
    """A checkout of the tool (holding crds.lock.yaml, crds/ and package-lock.json), if known."""


def _tool_tree(path: Path) -> Path | None:
    """``path`` if it is a checkout of this tool: a pyproject.toml whose project is ``fleet``."""
    try:
        data = tomllib.loads((path / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return path if data.get("project", {}).get("name") == "fleet" else None


def running_tool_source() -> ToolSource:
    """Where the running tool comes from: its source checkout, else pip's record (PEP 610)."""
    tree = _tool_tree(Path(__file__).resolve().parents[3])
    if tree is not None:
        return ToolSource(f"fleet @ {tree.as_uri()}", tree)
    try:
        recorded = importlib.metadata.distribution("fleet").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        recorded = None
    if recorded:
        info = json.loads(recorded)
        url = str(info.get("url", ""))
        vcs = info.get("vcs_info") or {}
        if vcs:
            return ToolSource(f"fleet @ {vcs.get('vcs', 'git')}+{url}@{vcs['commit_id']}", None)
        if url.startswith("file://"):
            return tool_source(url)
    raise FleetError(
        "cannot tell where the running fleet tool was installed from; pass --tool-source "
        "PATH or URL (a checkout, or git+https://...@<revision>)"
    )


def tool_source(value: str) -> ToolSource:
    """``--tool-source``: a local checkout, a ``file://`` or ``git+...`` URL, or ``fleet @ ...``."""
    value = value.strip()
    if value.startswith("fleet @ ") or value.startswith("fleet@"):
        url = value.split("@", 1)[1].strip()
    else:
        url = value
    if "://" not in url:
        path = Path(url).expanduser().resolve()
        if not path.is_dir():
            raise FleetError(f"--tool-source {value}: no such folder (or give a URL)")
        url = path.as_uri()
    tree = None
    if url.startswith("file://"):
        tree = _tool_tree(Path(url.removeprefix("file://")))
        if tree is None:
            raise FleetError(f"--tool-source {value}: not a checkout of the fleet tool")
    return ToolSource(f"fleet @ {url}", tree)


def dev_requirements() -> list[str]:
    """The tool's own pins (its ``dev`` extra) of :data:`DEV_TOOLS`."""
    pins: dict[str, str] = {}
    try:
        requires = importlib.metadata.requires("fleet") or []
    except importlib.metadata.PackageNotFoundError:
        requires = []
    for line in requires:
        spec, _, marker = line.partition(";")
        name = re.split(r"[=<>!~ \[]", spec.strip(), maxsplit=1)[0].lower()
        if name in DEV_TOOLS and "dev" in marker:
            pins[name] = spec.strip()
    return [pins.get(name, name) for name in DEV_TOOLS]


def project_name(folder: Path) -> str:
    """A valid Python project name from the folder's name."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", folder.name).strip("-._").lower()
    return name or "fleet-repository"


def _render(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    left = re.search(r"\{\{\w+\}\}", text)
    if left:
        raise FleetError(f"scaffold template placeholder {left.group(0)} has no value")
    return text


def scaffold_files(ci: str) -> dict[str, Path]:
    """Project path -> template, for every file ``fleet init`` writes from a template."""
    skip = {template for key, (template, _) in CI_FILES.items() if key != ci}
    out: dict[str, Path] = {}
    for template in sorted(SCAFFOLD.rglob("*" + TEMPLATE_SUFFIX)):
        relative = template.relative_to(SCAFFOLD).as_posix().removesuffix(TEMPLATE_SUFFIX)
        if relative in skip:
            continue
        if ci in CI_FILES and relative == CI_FILES[ci][0]:
            relative = CI_FILES[ci][1]
        out[RENAMED.get(relative, relative)] = template
    return out


def _check_target(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise FleetError(f"{target}: exists and is not a folder")
    if target.is_dir():
        present = sorted(p.name for p in target.iterdir() if p.name not in ALLOWED_EXISTING)
        if present:
            shown = ", ".join(present[:5]) + (", ..." if len(present) > 5 else "")
            raise FleetError(f"{target}: not empty ({shown}); fleet init starts a new repository")


def init_project(
    target: Path, source: ToolSource, *, ci: str = "gitlab", repo_url: str = DEFAULT_REPO_URL
) -> list[Path]:
    """Write a new fleet repository into ``target`` (missing or empty); the files written.

    Raises FleetError, writing nothing, when ``target`` is not empty or the tool's source
    tree (for the pinned CRDs and the Node lock file) is unknown or incomplete.
    """
    _check_target(target)
    tree = source.tree
    if tree is None:
        raise FleetError(
            "fleet init copies the pinned CRDs (crds.lock.yaml, crds/) and package-lock.json "
            "from a checkout of the tool: pass --tool-source PATH of one (or install the tool "
            "from a local checkout)"
        )
    lock, vendored, node_lock = tree / LOCK_FILE, tree / VENDOR_DIR, tree / "package-lock.json"
    for needed in (lock, vendored, node_lock):
        if not needed.exists():
            raise FleetError(f"{needed}: missing in the tool's checkout {tree}")
    verify_vendored(vendored, lock)
    values = {
        "name": project_name(target.resolve()),
        "tool_requirement": source.requirement,
        "dev_requirements": "\n".join(f'    "{r}",' for r in dev_requirements()),
        "repo_url": repo_url,
    }
    written: list[Path] = []
    target.mkdir(parents=True, exist_ok=True)
    for relative, template in scaffold_files(ci).items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_render(template.read_text(), values))
        written.append(path)
    shutil.copy(lock, target / LOCK_FILE)
    shutil.copytree(vendored, target / VENDOR_DIR)
    shutil.copy(node_lock, target / "package-lock.json")
    written += [target / LOCK_FILE, target / VENDOR_DIR, target / "package-lock.json"]
    return written


def _remove(target: Path, existed: bool) -> None:
    """Undo ``fleet init`` in ``target``: everything but what was allowed there before."""
    if not existed:
        shutil.rmtree(target, ignore_errors=True)
        return
    for path in target.iterdir():
        if path.name not in ALLOWED_EXISTING:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def _run_init(args: argparse.Namespace, config: FleetConfig) -> int:
    from fleet.pipeline import synth as pipeline

    target = Path(args.dir)
    source = tool_source(args.tool_source) if args.tool_source else running_tool_source()
    existed = target.exists()
    written = init_project(target, source, ci=args.ci, repo_url=args.repo_url)
    new = FleetConfig.load(target)
    try:
        result = pipeline.synthesize(new)
        pipeline.write(new, result)
    except FleetError:
        _remove(target, existed)  # nothing half-made is left behind
        raise
    count = plural(len(written), "file or folder", "files and folders")
    print(f"wrote a fleet repository in {target} ({count})")
    print(f"  depends on {source.requirement}")
    print(f"  rendered {plural(result.object_count, 'object')} into {new.dist}/")
    print(f"next: cd {target} && make synth && make test, then commit everything (dist/ too)")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``fleet init`` to the command line."""
    p = sub.add_parser("init", help="start a new fleet repository that uses this tool")
    p.add_argument("dir", nargs="?", default=".", help="the new repository (missing or empty)")
    p.add_argument(
        "--tool-source",
        metavar="PATH|URL",
        help="where the project installs the tool from: a checkout, file:// or "
        "git+https://...@<revision> (default: where the running tool comes from)",
    )
    p.add_argument(
        "--ci",
        choices=(*CI_FILES, "none"),
        default="gitlab",
        help="the CI pipeline to write: .gitlab-ci.yml (default) or a GitHub workflow",
    )
    p.add_argument(
        "--repo-url",
        default=DEFAULT_REPO_URL,
        help="the git URL ArgoCD reads the repository from ([tool.fleet] repo_url)",
    )
    p.set_defaults(handler=_run_init)
