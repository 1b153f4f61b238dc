"""``fleet init [DIR]``: start a fleet repository that depends on this tool as a package.

Like ``cdk8s init``: writes the project's files from the templates in ``fleet/scaffold/``
(``*.tmpl``; ``{{name}}``-style placeholders), renders ``dist/`` once, so the new repository
passes its own ``make synth`` and ``make test`` from the first commit, and runs
``git init -b main`` unless the folder is already inside a git repository.

The new ``pyproject.toml`` depends on a release of the tool a CI runner can install: by
default the version installed here (``fleet-as-code==X.Y.Z``, from the package index, or from
a team's own index with ``--index-url``), or, when pip recorded a VCS install (PEP 610), that
repository at the installed commit (``fleet-as-code @ git+https://...@<commit>``).
``--tool-source`` sets another (a version, a wheel URL, a git URL); a path or a ``file://`` URL
is refused, since only this machine could install it. ``uv lock`` then pins that release and
everything under it, each with its sha256, in the new ``uv.lock``
(:mod:`fleet.cli.tool_lock`); when the release cannot be had, ``fleet init`` stops there and
says the two ways to give it. A ``renovate.json`` proposes bumps of the tool and of the lock.
The pinned CRDs ship inside the package, so the new repository holds none.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

from fleet.cli.distribution import (
    DIST_NAME,
    declared_requirements,
    direct_url,
    installed_version,
)
from fleet.cli.tool_lock import (
    LOCK_FILE,
    MAKE_HELP,
    TOOL_FAILURE,
    check_url,
    index_table,
    lock_project,
    toml_string,
)
from fleet.core.config import FleetConfig
from fleet.core.errors import FleetError
from fleet.core.secrets import credential_in, redact
from fleet.core.words import plural

SCAFFOLD = Path(__file__).resolve().parent.parent / "scaffold"
TEMPLATE_SUFFIX = ".tmpl"
RENAMED = {"gitignore": ".gitignore", "npmrc": ".npmrc"}
"""Template files whose name differs in the project (a packaged dotfile is easily lost)."""
CI_FILES = {
    "gitlab": ("gitlab-ci.yml", ".gitlab-ci.yml"),
    "github": ("github-actions.yml", ".github/workflows/fleet.yml"),
}
DEV_TOOLS = ("mypy", "pytest", "ruff", "syrupy", "types-pyyaml")
"""The tool's pinned dev dependencies a fleet repository needs too."""
DEFAULT_REPO_URL = "https://git.example.org/platform/fleet.git"
ALLOWED_EXISTING = {".git"}
REMOTE_SCHEMES = ("https://", "http://", "git+https://", "git+ssh://")
"""Where a CI runner can install the tool from (besides a version on the package index);
``http://`` on a loopback host only (:func:`fleet.cli.tool_lock.check_url`)."""
_VERSION = re.compile(r"\d+(\.\d+)*([.-]?\w+)*")


def running_requirement() -> str:
    """The requirement that installs the running tool again, wherever CI runs.

    A VCS install over the network (PEP 610 ``direct_url.json``) pins that repository at
    the installed commit, and a wheel installed from an ``https://`` URL that URL (its
    sha256, which the installer recorded, is then checked against the lock's:
    :func:`running_wheel_sha256`); anything else (an index, an editable checkout) pins the
    installed version on the package index.
    """
    version = installed_version()
    if version is None:
        raise FleetError(
            f"the running fleet is not an installed {DIST_NAME} distribution, so there is no "
            f"version to pin; pass --tool-source {DIST_NAME}==X.Y.Z or git+https://...@<tag>"
        )
    recorded = direct_url() or {}
    url = str(recorded.get("url", ""))
    vcs = recorded.get("vcs_info")
    if isinstance(vcs, dict) and url.startswith(("https://", "ssh://")):
        return f"{DIST_NAME} @ {vcs.get('vcs', 'git')}+{url}@{vcs['commit_id']}"
    if isinstance(recorded.get("archive_info"), dict) and url.startswith("https://"):
        return f"{DIST_NAME} @ {url}"
    return f"{DIST_NAME}=={version}"


def running_wheel_sha256(requirement: str) -> str | None:
    """The sha256 the installer recorded for the running tool's wheel (PEP 610
    ``archive_info``) when ``requirement`` pins that wheel's URL; else None."""
    recorded = direct_url() or {}
    archive = recorded.get("archive_info")
    if not isinstance(archive, dict) or requirement != f"{DIST_NAME} @ {recorded.get('url')}":
        return None
    hashes = archive.get("hashes")
    if isinstance(hashes, dict) and hashes.get("sha256"):
        return str(hashes["sha256"])
    legacy = str(archive.get("hash", ""))
    return legacy.removeprefix("sha256=") if legacy.startswith("sha256=") else None


def check_locked_wheel(requirement: str, locked_sha256: str | None) -> None:
    """Raises FleetError when the lock holds another file than the wheel running here,
    downloaded from the same URL (replaced on the server, or swapped on the way)."""
    running = running_wheel_sha256(requirement)
    if running and locked_sha256 and running != locked_sha256:
        raise FleetError(
            f"{requirement}: the wheel there now (sha256:{locked_sha256}) is not the one this "
            f"fleet was installed from (sha256:{running}); a released wheel never changes: "
            "ask who publishes it, and pin the release you trust"
        )


def requirement_from(value: str) -> str:
    """``--tool-source``: ``X.Y.Z``, ``fleet-as-code==X.Y.Z``, a ``git+https://...@<rev>``
    URL, a wheel's ``https://`` URL, or ``fleet-as-code @ <such a URL>``; a requirement line.

    Raises FleetError for what a CI runner could not install: a path, a ``file://`` URL,
    a git URL without a revision, plain ``http://`` off the loopback, a URL with credentials.
    """
    value = value.strip()
    if _VERSION.fullmatch(value):
        return f"{DIST_NAME}=={value}"
    if re.fullmatch(rf"{re.escape(DIST_NAME)}\s*==\s*\S+", value):
        return re.sub(r"\s+", "", value)
    url = re.sub(rf"^{re.escape(DIST_NAME)}\s*@\s*", "", value)
    if not url.startswith(REMOTE_SCHEMES):
        raise FleetError(
            f"--tool-source {value}: a CI runner cannot install that; give a released "
            f"version ({DIST_NAME}==X.Y.Z) or a git URL pinned to a tag or commit "
            "(git+https://...@<tag>), never a path or file:// URL"
        )
    if url.startswith("git+") and not re.search(r"@[^/@]+$", url.split("://", 1)[1]):
        raise FleetError(f"--tool-source {value}: pin a tag or commit (...git@<tag>)")
    if url.startswith(("https://", "http://")):
        check_url("--tool-source", url)
    return f"{DIST_NAME} @ {url}"


def index_from(value: str | None, requirement: str) -> str | None:
    """``--index-url``: the team index the version pin ``requirement`` is taken from, or
    None. Raises FleetError for a URL a CI runner could not use, or with a URL pin (which
    names its own source)."""
    if value is None:
        return None
    if " @ " in requirement:
        raise FleetError(
            f"--index-url {value}: the tool is pinned by URL ({requirement}), which names its "
            "own source; --index-url is for a version pin (X.Y.Z)"
        )
    return check_url("--index-url", value.strip())


def _dev_pins() -> dict[str, str]:
    """The tool's own pins (its ``dev`` extra), by lower-case name."""
    pins: dict[str, str] = {}
    for spec in declared_requirements("dev"):
        pins[re.split(r"[=<>!~ \[]", spec, maxsplit=1)[0].lower()] = spec
    return pins


def dev_requirements() -> list[str]:
    """The tool's own pins (its ``dev`` extra) of :data:`DEV_TOOLS`."""
    pins = _dev_pins()
    return [pins.get(name, name) for name in DEV_TOOLS]


def project_name(folder: Path) -> str:
    """A valid Python (and npm) project name from the folder's name."""
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
    """Project path -> template, for every file ``fleet init`` writes."""
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
    target: Path,
    requirement: str,
    *,
    ci: str = "gitlab",
    repo_url: str = DEFAULT_REPO_URL,
    index_url: str | None = None,
) -> list[Path]:
    """Write a new fleet repository into ``target`` (missing or empty); the files written
    (all but ``uv.lock``, which :func:`fleet.cli.tool_lock.lock_project` writes).

    ``requirement`` is the project's dependency on the tool (:func:`running_requirement`),
    taken from ``index_url`` only when given. Raises FleetError, writing nothing, when
    ``target`` is not empty.
    """
    _check_target(target)
    values = {
        "name": project_name(target.resolve()),
        "tool_requirement": toml_string(requirement),
        "tool_index": index_table(index_url),
        "tool_help": MAKE_HELP,
        "tool_failure": TOOL_FAILURE,
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
    return written


def git_init(target: Path) -> str:
    """``git init -b main`` in ``target`` unless it is inside a repository; what was done."""
    git = shutil.which("git")
    if git is None:
        return "git not found: run `git init -b main` there yourself"
    inside = subprocess.run(
        [git, "-C", str(target), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
    )
    if inside.returncode == 0:
        return f"inside the git repository {inside.stdout.strip()}: no git init"
    subprocess.run([git, "init", "--quiet", "-b", "main", str(target)], check=True)
    return "git init -b main"


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
    requirement = requirement_from(args.tool_source) if args.tool_source else running_requirement()
    index_url = index_from(args.index_url, requirement)
    problem = credential_in(args.repo_url)
    if problem:
        raise FleetError(f"--repo-url {redact(args.repo_url)}: {problem}")
    _check_target(target)
    existed = target.exists()
    try:
        written = init_project(
            target, requirement, ci=args.ci, repo_url=args.repo_url, index_url=index_url
        )
        locked = lock_project(target, requirement, index_url)  # first: the tool must be had
        check_locked_wheel(requirement, locked.sha256)
        written.append(target / LOCK_FILE)
        new = FleetConfig.load(target)
        result = pipeline.synthesize(new, write=True)
    except OSError as e:  # a folder it cannot write in
        _remove(target, existed)
        raise FleetError(f"{target}: cannot write: {e.strerror or e}") from None
    except BaseException:  # a bad input, Ctrl-C: nothing half-made is left behind
        _remove(target, existed)
        raise
    if result.crds_dir is None:
        print("note: schemas not checked (no CRDs in the fleet package)", file=sys.stderr)
    git = git_init(target)
    count = plural(len(written), "file")
    print(f"wrote a fleet repository in {target} ({count}; {git})")
    print(f"  depends on {requirement}")
    digest = f"sha256:{locked.sha256}" if locked.sha256 else "no sha256: its source serves none"
    print(
        f"  locked {DIST_NAME} {locked.version} from {locked.source} ({digest}) and "
        f"{plural(locked.packages - 1, 'other distribution')} in {LOCK_FILE}"
    )
    print(f"  rendered {plural(result.object_count, 'object')} into {new.dist}/")
    where = "" if target.resolve() == Path.cwd().resolve() else f"cd {target}, "
    print(
        f"next: {where}copy clusters/_example.py to a module of your own (see its "
        "docstring), make synth && make test, then commit everything (dist/ too)"
    )
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``fleet init`` to the command line."""
    p = sub.add_parser("init", help="start a new fleet repository that uses this tool")
    p.add_argument("dir", nargs="?", default=".", help="the new repository (missing or empty)")
    p.add_argument(
        "--tool-source",
        metavar="VERSION|URL",
        help=f"the tool release the project installs: X.Y.Z ({DIST_NAME}==X.Y.Z on the "
        "package index), a wheel's https:// URL, or git+https://...@<tag> (default: the "
        "version running now)",
    )
    p.add_argument(
        "--index-url",
        metavar="URL",
        help=f"the package index of your team that serves {DIST_NAME} (a PEP 503 simple "
        "index, https://): the version pin is taken from there only (default: the public "
        "index)",
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
    p.set_defaults(handler=_run_init, reads_config=False)  # the project is the one it makes
