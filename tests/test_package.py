"""The wheel holds the whole tool: installed into an empty virtualenv, with no checkout of the
tool anywhere on its path and no Node.js, it starts a fleet repository, renders it and
validates it against the CRDs it carries.

The wheel is built from a copy of the sources (``pip wheel --no-build-isolation``, with the
``setuptools`` pinned in the dev extra); its dependencies come from pip's cache or the
package index, like any install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import REPO

from fleet.cli.distribution import DIST_NAME, installed_version

SOURCES = ("pyproject.toml", "README.md", "constructs")


@dataclass(frozen=True)
class Installed:
    """A virtualenv with the wheel installed, and how to run things in it."""

    wheel: Path
    venv: Path
    env: dict[str, str]
    """No checkout, no Node: PATH is the virtualenv's bin and a folder holding only git."""
    work: Path

    def run(self, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """``argv`` with the virtualenv's programs, in ``cwd`` (default: an empty folder)."""
        program = self.venv / "bin" / argv[0]
        return subprocess.run(
            [str(program), *argv[1:]],
            cwd=cwd or self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )


def _pip(*args: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pip", "--quiet", *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


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
    _pip("wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", str(wheels), str(source))
    shutil.rmtree(source)  # nothing of the tool's sources is left on the machine but the wheel
    (wheel,) = wheels.glob("*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    _pip("--python", str(venv / "bin" / "python"), "install", str(wheel))
    tools = base / "tools"  # git for `fleet init`, and nothing else: no node, no npx
    tools.mkdir()
    git = shutil.which("git")
    assert git is not None
    (tools / "git").symlink_to(git)
    home = base / "home"
    home.mkdir()
    env = {"PATH": f"{venv / 'bin'}:{tools}", "HOME": str(home), "LANG": "C.UTF-8"}
    work = base / "work"
    work.mkdir()
    yield Installed(wheel, venv, env, work)


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


def test_init_synth_and_validate_without_a_checkout_or_node(installed: Installed) -> None:
    """The README's quick start for a team, with the installed wheel only."""
    project = installed.work / "our-fleet"
    init = installed.run("fleet", "init", str(project))
    assert init.returncode == 0, init.stdout + init.stderr
    pyproject = tomllib.loads((project / "pyproject.toml").read_text())
    assert pyproject["project"]["dependencies"] == [f"{DIST_NAME}=={installed_version()}"]
    assert (project / ".git").is_dir()

    # The first cluster, from the example; then the pin and the dev tools, as CI installs them.
    example = (project / "clusters" / "_example.py").read_text()
    (project / "clusters" / "web.py").write_text(example)
    requirements = [
        *pyproject["project"]["dependencies"],
        *pyproject["project"]["optional-dependencies"]["dev"],
    ]
    _pip("--python", str(installed.venv / "bin" / "python"), "install", *requirements)
    synth = installed.run("fleet", "synth", cwd=project)
    assert synth.returncode == 0, synth.stdout + synth.stderr
    assert "schemas not checked" not in synth.stderr
    assert list((project / "dist" / "prod" / "clusters").glob("k8s-example-web-prod/*.yaml"))
    crds = installed.run("python", "-c", "import fleet.checks.crds as c; print(c.PACKAGED_CRDS)")
    validate = installed.run("fleet", "validate", cwd=project)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert validate.stdout.endswith(f"valid against the CRDs in {crds.stdout.strip()}\n")
    assert crds.stdout.startswith(str(installed.venv))
    for argv in (
        ("ruff", "check", "."),
        ("ruff", "format", "--check", "."),
        ("mypy",),
        ("pytest", "-q"),
    ):
        result = installed.run(*argv, cwd=project)
        assert result.returncode == 0, (argv, result.stdout + result.stderr)
    pull = installed.run("fleet", "crds", "pull", cwd=project)  # all present: no download
    assert pull.returncode == 0, pull.stderr
    assert pull.stdout.startswith("wrote 0, kept ")

    # An object the CRD refuses: validate and synth fail, dist/ stays as it was.
    broken = example.replace("    MagnumCluster(\n", "    web = MagnumCluster(\n", 1)
    broken = broken.replace("from fleet import ", "from fleet import JsonPatch, ", 1)
    patch = 'JsonPatch.add("/spec/forProvider/notAField", 1), kind="ClusterV1"'
    broken += f"    web.add_json_patch({patch})\n"
    (project / "clusters" / "web.py").write_text(broken)
    before = sorted((p, p.read_bytes()) for p in (project / "dist").rglob("*") if p.is_file())
    validate = installed.run("fleet", "validate", cwd=project)
    assert validate.returncode == 1, validate.stdout + validate.stderr
    assert "spec.forProvider.notAField" in validate.stderr
    synth = installed.run("fleet", "synth", cwd=project)
    assert synth.returncode == 2
    assert "spec.forProvider.notAField" in synth.stderr
    assert "Traceback" not in synth.stderr
    after = sorted((p, p.read_bytes()) for p in (project / "dist").rglob("*") if p.is_file())
    assert after == before


def test_nothing_of_the_checkout_is_on_the_path(installed: Installed) -> None:
    code = "import sys; print('\\n'.join(sys.path))"
    paths = installed.run("python", "-c", code).stdout.split()
    assert not [p for p in paths if p.startswith(str(REPO))]
    assert "PYTHONPATH" not in installed.env and os.fspath(REPO) not in installed.env["PATH"]
