"""The wheel holds the whole tool: installed into an empty virtualenv, with no checkout of the
tool anywhere on its path and no Node.js, it starts a fleet repository that locks the tool and
everything under it, installs exactly that lock, renders and validates.

The wheel is built from a copy of the sources (``uv build --no-build-isolation``, with the
locked setuptools of this virtualenv) and installed with its dependencies as this
repository's ``uv.lock`` pins them (``uv export``, hashes included, then ``uv pip install
--require-hashes``). A team publishes that wheel to a package index: here it is served by a
PEP 503 index on the loopback (the wheel's sha256 in its link, as real indexes give it),
``fleet init --index-url`` locks the new repository against it, and the new repository's own
``make setup`` (pip bootstraps the locked uv with its hashes, uv installs the lock), ``make
synth`` and ``make test`` run. Every other distribution comes from the public index, or
from uv's and pip's caches, like any install.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path
from typing import Any

import pytest
from support import REPO, installed_distributions, locked_versions, normalise

from fleet.cli.distribution import DIST_NAME, installed_version
from fleet.cli.tool_lock import MAKE_HELP

SOURCES = ("pyproject.toml", "README.md", "constructs")
UV = Path(sys.executable).with_name("uv")
BASE_PYTHON = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
"""The Python a fleet repository's ``make setup`` starts from (with its pip), not this
virtualenv's."""
RECIPE_TOOLS = ("make", "rm", "mkdir", "cat", "grep", "touch", "git")
"""What the new repository's Makefile runs besides Python and uv: no node, no npm."""
NETWORK_VARIABLES = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)


@dataclass(frozen=True)
class Installed:
    """A virtualenv with the wheel installed, and how to run things in it."""

    wheel: Path
    venv: Path
    env: dict[str, str]
    """No checkout, no Node: PATH is the virtualenv's bin and a folder holding only git."""
    work: Path
    network: dict[str, str]
    """What uv and pip read to reach the package index: this machine's certificates,
    proxies, ``UV_*``/``PIP_*`` settings, and its uv and pip caches."""
    tools: Path
    """:data:`RECIPE_TOOLS`, and nothing else."""

    def run(
        self, *argv: str, cwd: Path | None = None, network: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """``argv`` with the virtualenv's programs, in ``cwd`` (default: an empty folder)."""
        program = self.venv / "bin" / argv[0]
        return subprocess.run(
            [str(program), *argv[1:]],
            cwd=cwd or self.work,
            env={**self.env, **self.network} if network else self.env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )

    def make(self, project: Path, *argv: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
        """``make ARGV`` in a fleet repository, as its CI runs it: the tools a runner has
        (no Node), its Python, the network."""
        env = {**self.env, **self.network, "PATH": str(self.tools), **extra_env}
        return subprocess.run(
            ["make", "--no-print-directory", f"PYTHON={BASE_PYTHON}", *argv],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )


def _run(*argv: str | Path, cwd: Path | None = None) -> str:
    result = subprocess.run(
        [str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=900, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _network() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in NETWORK_VARIABLES}
    env.update({k: v for k, v in os.environ.items() if k.startswith(("UV_", "PIP_"))})
    env["UV_CACHE_DIR"] = _run(UV, "cache", "dir").strip()
    env["PIP_CACHE_DIR"] = _run(BASE_PYTHON, "-m", "pip", "cache", "dir").strip()
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("package")
    source = base / "source"
    source.mkdir()
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
            shutil.copytree(path, source / name, ignore=ignore)
        else:
            shutil.copy(path, source / name)
    wheels = base / "wheels"
    build = ("build", "--quiet", "--wheel", "--no-build-isolation", "--python", sys.executable)
    _run(UV, *build, "--out-dir", wheels, source)
    shutil.rmtree(source)  # nothing of the tool's sources is left on the machine but the wheel
    (wheel,) = wheels.glob("*.whl")
    venv = base / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    requirements = base / "requirements.txt"
    export = ("export", "--frozen", "--no-emit-project", "--no-dev", "--format", "requirements-txt")
    _run(UV, *export, "--quiet", "--output-file", requirements, cwd=REPO)
    _run(
        UV, "pip", "install", "--quiet", "--python", python, "--require-hashes", "-r", requirements
    )
    _run(UV, "pip", "install", "--quiet", "--python", python, "--no-deps", wheel)
    tools = base / "tools"  # git for `fleet init`, what make recipes run, and nothing else
    tools.mkdir()
    for name in RECIPE_TOOLS:
        found = shutil.which(name)
        assert found is not None, name
        (tools / name).symlink_to(found)
    home = base / "home"
    home.mkdir()
    env = {"PATH": f"{venv / 'bin'}:{tools}", "HOME": str(home), "LANG": "C.UTF-8"}
    work = base / "work"
    work.mkdir()
    yield Installed(wheel, venv, env, work, _network(), tools)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def index(installed: Installed, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A team's package index serving the wheel (PEP 503 simple API), on the loopback."""
    root = tmp_path_factory.mktemp("index")
    (root / "files").mkdir()
    shutil.copy(installed.wheel, root / "files")
    digest = hashlib.sha256(installed.wheel.read_bytes()).hexdigest()
    page = root / "simple" / DIST_NAME / "index.html"
    page.parent.mkdir(parents=True)
    name = installed.wheel.name
    page.write_text(f'<a href="../../files/{name}#sha256={digest}">{name}</a>\n')
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/simple/"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def repository(installed: Installed, index: str) -> Path:
    """``fleet init --index-url`` with the installed wheel, then the new repository's own
    ``make setup``: the lock it wrote, installed."""
    project = installed.work / "our-fleet"
    init = installed.run("fleet", "init", str(project), "--index-url", index, network=True)
    assert init.returncode == 0, init.stdout + init.stderr
    setup = installed.make(project, "setup")
    assert setup.returncode == 0, setup.stdout + setup.stderr
    return project


def _lock(project: Path) -> list[dict[str, Any]]:
    packages: list[dict[str, Any]] = tomllib.loads((project / "uv.lock").read_text())["package"]
    return packages


def _own_lines(stderr: str) -> list[str]:
    """What the Makefile said, without make's closing ``make: *** [...] Error 2``."""
    return [line for line in stderr.splitlines() if not re.match(r"make(\[\d+\])?: \*\*\*", line)]


def test_the_wheel_holds_every_file_of_the_package(installed: Installed) -> None:
    """Sources, the scaffold (dotfile templates included), the CRDs and their lock, data."""
    package = REPO / "constructs"
    expected = {
        p.relative_to(package).as_posix()
        for p in (package / "fleet").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
    assert expected - names == set()
    assert "fleet/data/crds.lock.yaml" in names
    assert "fleet/scaffold/npmrc.tmpl" in names
    assert installed.wheel.name == f"fleet_as_code-{installed_version()}-py3-none-any.whl"


def test_the_wheel_metadata_keeps_the_direct_pins(installed: Installed) -> None:
    """A lock is for installs, not for the published package: the wheel requires what
    pyproject.toml pins, each ``==`` as written, and nothing of the lock's transitive ones."""
    with zipfile.ZipFile(installed.wheel) as wheel:
        (meta,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        message = Parser().parsestr(wheel.read(meta).decode())
    requires = message.get_all("Requires-Dist") or []
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    runtime = [r for r in requires if "extra ==" not in r]
    assert runtime == project["dependencies"]
    dev = [r.split(";")[0].strip() for r in requires if "extra ==" in r]
    assert dev == project["optional-dependencies"]["dev"]


def test_the_installed_tool_is_the_wheel_and_says_its_version(installed: Installed) -> None:
    where = installed.run("python", "-c", "import fleet; print(fleet.__file__)")
    assert where.stdout.startswith(str(installed.venv)), where.stdout + where.stderr
    version = installed.run("fleet", "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout == f"fleet {installed_version()} ({DIST_NAME})\n"
    # cdk8s is installed, and cannot start here: jsii finds no Node.js. Every fleet command
    # below runs all the same.
    cdk8s = installed.run("python", "-c", "import cdk8s")
    assert cdk8s.returncode == 1
    assert "No such file or directory: 'node'" in cdk8s.stderr
    assert shutil.which("node", path=installed.env["PATH"]) is None
    # its dependencies are the ones this repository locks, at the locked versions
    ours = locked_versions(REPO / "uv.lock")
    theirs = installed_distributions(installed.venv)
    assert {n: v for n, v in theirs.items() if ours.get(n) != v} == {}


def test_init_locks_the_tool_from_the_team_index_with_its_hash(
    installed: Installed, index: str, repository: Path
) -> None:
    """uv.lock pins the tool (the wheel the index serves, its sha256) and everything under
    it, each distribution with a sha256 for every file; pyproject.toml takes the tool from
    that index only."""
    pyproject = tomllib.loads((repository / "pyproject.toml").read_text())
    assert pyproject["project"]["dependencies"] == [f"{DIST_NAME}=={installed_version()}"]
    assert pyproject["tool"]["uv"]["sources"] == {DIST_NAME: {"index": "fleet"}}
    assert (repository / ".git").is_dir() and (repository / "renovate.json").is_file()
    packages = _lock(repository)
    (tool,) = [p for p in packages if p["name"] == DIST_NAME]
    digest = hashlib.sha256(installed.wheel.read_bytes()).hexdigest()
    assert tool["version"] == installed_version()
    assert tool["source"] == {"registry": index}
    assert [w["hash"] for w in tool["wheels"]] == [f"sha256:{digest}"]
    others = [p for p in packages if p["name"] not in (DIST_NAME, "our-fleet")]
    assert {"uv", "cdk8s", "jsii", "mypy", "ruff"} <= {p["name"] for p in others}
    for package in others:
        assert package["source"] == {"registry": "https://pypi.org/simple"}, package["name"]
        for artifact in [*package["wheels"], *([package["sdist"]] if "sdist" in package else [])]:
            assert artifact["hash"].startswith("sha256:"), package["name"]


def test_the_new_repository_installs_exactly_its_lock(repository: Path) -> None:
    """31-locked, in a repository made by ``fleet init``: every distribution its ``make
    setup`` put in ``.venv`` is in uv.lock at that version (nothing of the repository itself,
    no pip: uv installs neither)."""
    installed = installed_distributions(repository / ".venv")
    locked = locked_versions(repository / "uv.lock")
    assert {n: v for n, v in installed.items() if locked.get(n) != v} == {}
    assert {DIST_NAME, "uv", "mypy"} <= set(installed)
    assert "pip" not in installed and normalise("our-fleet") not in installed
    # The uv that installed it is the locked one too, bootstrapped by pip with its hashes.
    boot = repository / ".fleet" / "uv" / "requirements.txt"
    assert boot.read_text().startswith(f"uv=={locked['uv']} --hash=sha256:")


def test_init_synth_and_validate_without_a_checkout_or_node(
    installed: Installed, repository: Path
) -> None:
    """The README's quick start for a team, with the repository's own locked virtualenv."""
    project = repository
    venv = project / ".venv"
    # The first cluster, from the example.
    example = (project / "clusters" / "_example.py").read_text()
    (project / "clusters" / "web.py").write_text(example)
    synth = installed.make(project, "synth")
    assert synth.returncode == 0, synth.stdout + synth.stderr
    assert "schemas not checked" not in synth.stderr
    assert list((project / "dist" / "prod" / "clusters").glob("k8s-example-web-prod/*.yaml"))
    python = str(venv / "bin" / "python")
    code = "import fleet.checks.crds as c; print(c.PACKAGED_CRDS)"
    crds = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    assert crds.stdout.startswith(str(venv))
    fleet = str(venv / "bin" / "fleet")

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, cwd=project, env=installed.env, capture_output=True, text=True, check=False
        )

    validate = run(fleet, "validate")
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert validate.stdout.endswith(f"valid against the CRDs in {crds.stdout.strip()}\n")
    test = installed.make(project, "test")  # ruff, mypy --strict, pytest
    assert test.returncode == 0, test.stdout + test.stderr
    pull = run(fleet, "crds", "pull")  # all present: no download
    assert pull.returncode == 0, pull.stderr
    assert pull.stdout.startswith("wrote 0, kept ")

    # An object the CRD refuses: validate and synth fail, dist/ stays as it was.
    broken = example.replace("    MagnumCluster(\n", "    web = MagnumCluster(\n", 1)
    broken = broken.replace("from fleet import ", "from fleet import JsonPatch, ", 1)
    patch = 'JsonPatch.add("/spec/forProvider/notAField", 1), kind="ClusterV1"'
    broken += f"    web.add_json_patch({patch})\n"
    (project / "clusters" / "web.py").write_text(broken)
    before = sorted((p, p.read_bytes()) for p in (project / "dist").rglob("*") if p.is_file())
    validate = run(fleet, "validate")
    assert validate.returncode == 1, validate.stdout + validate.stderr
    assert "spec.forProvider.notAField" in validate.stderr
    synth = run(fleet, "synth")
    assert synth.returncode == 2
    assert "spec.forProvider.notAField" in synth.stderr
    assert "Traceback" not in synth.stderr
    after = sorted((p, p.read_bytes()) for p in (project / "dist").rglob("*") if p.is_file())
    assert after == before
    (project / "clusters" / "web.py").unlink()


def test_a_dependency_added_without_relocking_fails_its_setup_in_one_line(
    installed: Installed, repository: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(repository, copy, ignore=shutil.ignore_patterns(".venv", ".fleet", ".git"))
    pyproject = copy / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("dev = [\n", 'dev = [\n    "six",\n', 1))
    result = installed.make(copy, "setup", f"UV={repository / '.venv' / 'bin' / 'uv'}")
    assert result.returncode == 2
    assert _own_lines(result.stderr) == [
        "error: uv.lock does not match the dependencies in pyproject.toml: "
        "run `make lock`, then commit uv.lock"
    ]
    assert not (copy / ".venv").exists()


def test_its_setup_says_the_two_ways_first_when_the_tool_cannot_be_downloaded(
    installed: Installed, repository: Path, index: str, tmp_path: Path
) -> None:
    """The lock names an index that is gone (offline here, so that nothing but the tool is
    missing: the rest is in uv's cache): the first line is what to do, then uv's reasons."""
    copy = tmp_path / "copy"
    shutil.copytree(repository, copy, ignore=shutil.ignore_patterns(".venv", ".fleet", ".git"))
    served = index.removesuffix("simple/")
    moved = served.replace("127.0.0.1", "localhost")  # another URL: nothing of it in uv's cache
    for name in ("pyproject.toml", "uv.lock"):
        path = copy / name
        path.write_text(path.read_text().replace(served, moved))
    uv = repository / ".venv" / "bin" / "uv"
    result = installed.make(copy, "setup", f"UV={uv}", UV_OFFLINE="1")
    assert result.returncode == 2, result.stdout + result.stderr
    lines = _own_lines(result.stderr)
    assert lines[0] == f"error: {MAKE_HELP}"
    assert f"Failed to download `{DIST_NAME}=={installed_version()}`" in lines[1]


def test_nothing_of_the_checkout_is_on_the_path(installed: Installed) -> None:
    code = "import sys; print('\\n'.join(sys.path))"
    paths = installed.run("python", "-c", code).stdout.split()
    assert not [p for p in paths if p.startswith(str(REPO))]
    assert "PYTHONPATH" not in installed.env and os.fspath(REPO) not in installed.env["PATH"]
