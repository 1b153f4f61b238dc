"""The tool's own installs are ``uv.lock``: every distribution, transitive ones included, at one
version with its sha256; ``make setup`` installs exactly that and refuses a lock that does not
match ``pyproject.toml``; ``make lock`` refreshes it.

uv's behaviour relied on here (uv 0.13.9, astral-sh/uv): ``uv lock --check`` exits 1 when the
lock does not satisfy the project's requirements and, with ``--offline``, decides that from
the lock alone; ``uv sync --locked`` installs the lock's artifacts and checks each against the
lock's hash; a registry that serves no hash leaves none in the lock (so the test below would
catch such an index).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging import tags
from packaging.utils import parse_wheel_filename
from support import REPO, installed_distributions, locked_versions

LOCK = REPO / "uv.lock"
UV = Path(sys.executable).with_name("uv")
STALE = (
    "error: uv.lock does not match the dependencies in pyproject.toml: "
    "run `make lock`, then commit uv.lock"
)


def _packages() -> list[dict[str, object]]:
    packages: list[dict[str, object]] = tomllib.loads(LOCK.read_text())["package"]
    return packages


def make(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``make ARGV`` in ``cwd``, as a person runs it (not as a sub-make of ``make test``)."""
    outer = ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEFILES")
    return subprocess.run(
        ["make", "--no-print-directory", *argv],
        env={k: v for k, v in os.environ.items() if k not in outer},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _own_lines(stderr: str) -> list[str]:
    """What the Makefile said, without make's own closing ``make: *** [...] Error 2``."""
    return [line for line in stderr.splitlines() if not re.match(r"make(\[\d+\])?: \*\*\*", line)]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """What ``make setup`` reads first: the Makefile, pyproject.toml and uv.lock."""
    for name in ("Makefile", "pyproject.toml", "uv.lock"):
        shutil.copy(REPO / name, tmp_path / name)
    return tmp_path


def test_every_distribution_of_this_virtualenv_is_locked_at_its_version() -> None:
    """31-locked: what ``make setup`` installed (pip, setuptools and the project counted)."""
    installed = installed_distributions(Path(sys.prefix))
    locked = locked_versions(LOCK)
    assert "fleet-as-code" in installed and "uv" in installed
    assert {n: v for n, v in installed.items() if locked.get(n) != v} == {}
    assert "pip" not in installed  # uv installs without it, and keeps none it did not put


def test_the_lock_holds_a_sha256_for_every_file_of_every_distribution() -> None:
    files = 0
    for package in _packages():
        source = package["source"]
        assert isinstance(source, dict)
        if "editable" in source:  # the checkout itself
            assert package["name"] == "fleet-as-code"
            continue
        assert set(source) == {"registry"}, package["name"]
        assert source["registry"] == "https://pypi.org/simple", package["name"]
        wheels = package.get("wheels", [])
        assert isinstance(wheels, list) and wheels, package["name"]  # never only an sdist
        for artifact in [*wheels, package.get("sdist") or {"hash": "sha256:" + "0" * 64}]:
            assert isinstance(artifact, dict)
            assert str(artifact["hash"]).startswith("sha256:"), package["name"]
            assert len(str(artifact["hash"])) == len("sha256:") + 64
            files += 1
    assert files > 100


@pytest.mark.parametrize("minor", [11, 12, 13])
def test_every_distribution_has_a_wheel_for_linux_x86_64(minor: int) -> None:
    """The platform we support and test (Linux x86-64, glibc 2.36 as on Debian 12, CPython
    3.11 here and 3.12 in a fleet repository's CI images, 3.13): every distribution has a
    wheel it installs, so no install there builds anything from source. (The lock is
    universal: it also holds the wheels of other platforms that the projects publish.)"""
    platforms = [f"manylinux_2_{glibc}_x86_64" for glibc in range(36, 4, -1)]
    platforms += ["manylinux2014_x86_64", "manylinux1_x86_64"]
    supported = {
        *tags.cpython_tags((3, minor), platforms=platforms),
        *tags.compatible_tags((3, minor), platforms=platforms),
    }
    for package in _packages():
        wheels = package.get("wheels")
        if not isinstance(wheels, list):
            continue  # the checkout itself
        names = [str(w["url"]).rsplit("/", 1)[1] for w in wheels]
        assert any(supported & parse_wheel_filename(n)[3] for n in names), package["name"]


def test_the_wheel_metadata_keeps_the_direct_pins_and_the_lock_pins_them_too() -> None:
    """A lock is for installs: pyproject.toml keeps its ``==`` pins (the wheel's metadata is
    built from them: tests/test_package.py), and the lock holds each at that version."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    locked = locked_versions(LOCK)
    pins = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    for pin in pins:
        name, _, version = pin.partition("==")
        assert version, pin
        assert locked[re.sub(r"[-_.]+", "-", name).lower()] == version, pin  # PEP 503


def test_a_dependency_added_without_relocking_fails_setup_in_one_line(checkout: Path) -> None:
    """The check runs offline, before the virtualenv is touched (none is made here)."""
    pyproject = checkout / "pyproject.toml"
    text = pyproject.read_text()
    pyproject.write_text(text.replace('    "uv==', '    "attrs==26.1.0",\n    "uv==', 1))
    result = make("setup", f"UV={UV}", cwd=checkout)
    assert result.returncode == 2
    assert _own_lines(result.stderr) == [STALE]
    assert result.stdout == ""
    assert not (checkout / ".venv").exists()

    # `make lock` is the fix: afterwards the same check passes, and the lock pins the new one
    relock = make("lock", f"UV={UV}", cwd=checkout)
    assert relock.returncode == 0, relock.stderr
    check = subprocess.run(
        [str(UV), "lock", "--check", "--offline"], cwd=checkout, capture_output=True, check=False
    )
    assert check.returncode == 0, check.stderr
    assert locked_versions(checkout / "uv.lock")["attrs"] == "26.1.0"


def test_a_pin_moved_without_relocking_fails_too(checkout: Path) -> None:
    pyproject = checkout / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"rich==15.0.0"', '"rich==14.0.0"'))
    result = make("setup", f"UV={UV}", cwd=checkout)
    assert (result.returncode, _own_lines(result.stderr)) == (2, [STALE])


def test_a_missing_lock_is_said_in_one_line(checkout: Path) -> None:
    (checkout / "uv.lock").unlink()
    result = make("setup", f"UV={UV}", cwd=checkout)
    assert result.returncode == 2
    assert _own_lines(result.stderr) == [
        "error: uv.lock is missing: it is part of the repository (git checkout -- uv.lock)"
    ]


def test_the_bootstrap_installs_the_locked_uv_with_its_hashes(checkout: Path) -> None:
    """On a fresh checkout pip installs uv from the line the Makefile derives from uv.lock:
    the locked version, and the sha256 of every wheel of it (pip refuses any other file)."""
    result = make(
        "--eval",
        "print-pin: ; @$(UV_PIN)",
        "print-pin",
        f"PYTHON={sys.executable}",
        cwd=checkout,
    )
    assert result.returncode == 0, result.stderr
    (uv,) = [p for p in _packages() if p["name"] == "uv"]
    wheels = uv["wheels"]
    assert isinstance(wheels, list)
    expected = [f"uv=={uv['version']}", *(f"--hash={w['hash']}" for w in wheels)]
    assert result.stdout.split() == expected
    version = subprocess.run([str(UV), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.split()[1] == uv["version"]  # the uv this virtualenv runs


def test_a_lock_uv_cannot_read_is_not_called_stale(checkout: Path) -> None:
    """Only a lock that does not match (uv's exit 1) is; anything else is uv's own words."""
    lock = checkout / "uv.lock"
    lock.write_text(lock.read_text() + "<<<<<<< HEAD\n")  # a merge left half done
    result = make("setup", f"UV={UV}", cwd=checkout)
    assert result.returncode == 2
    assert STALE not in result.stderr
    assert "Failed to parse `uv.lock`" in result.stderr
