"""Shared fixtures: the repository, and small throw-away fleet projects."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from support import HYBRID

from fleet import Fleet, FleetConfig

settings.register_profile("ci", derandomize=True, database=None)
"""CI (``.ci/run``) draws the property tests' examples from a fixed seed, so a run on a fresh
machine is repeatable; a developer's run explores new examples each time."""
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

GIT_LOCAL_ENV = tuple(
    subprocess.run(
        ["git", "rev-parse", "--local-env-vars"], capture_output=True, text=True, check=False
    ).stdout.split()
)
"""The variables that tie git to one repository (``git rev-parse --local-env-vars``)."""


@pytest.fixture(autouse=True, scope="session")
def _git_of_the_test_only() -> Iterator[None]:
    """Tests (and ``fleet init``, ``fleet diff`` under test) that run git in a temp folder act
    on that folder, even when the suite itself runs from git (``git rebase --exec``, a
    hook), which sets ``GIT_DIR`` and the like: else they would write into this repository.
    Session-wide, so that fixtures of every scope see it."""
    with pytest.MonkeyPatch.context() as patch:
        for name in GIT_LOCAL_ENV:
            patch.delenv(name, raising=False)
        yield


PYPROJECT = """\
[tool.fleet]
environments = ["dev", "test", "prod"]
"""


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    """An empty fleet with the default environments, rooted in a temp folder."""
    return Fleet(FleetConfig(root=tmp_path))


ProjectFactory = Callable[[dict[str, str]], Path]


@pytest.fixture
def make_project(tmp_path: Path) -> ProjectFactory:
    """Writes a minimal fleet project: ``{"clusters/x.py": source, ...}`` -> its root."""

    def make(files: dict[str, str]) -> Path:
        root = tmp_path / "project"
        (root / "clusters").mkdir(parents=True, exist_ok=True)
        (root / "pyproject.toml").write_text(PYPROJECT)
        (root / "clusters" / "__init__.py").write_text("")
        for relpath, source in files.items():
            path = root / relpath
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source))
        return root

    return make


def copy_fleet(source: Path, root: Path) -> Path:
    """Copy a fleet project's config, declarations and (when present) dist/ to ``root``."""
    root.mkdir(parents=True)
    shutil.copy(source / "pyproject.toml", root / "pyproject.toml")
    shutil.copytree(
        source / "clusters", root / "clusters", ignore=shutil.ignore_patterns("__pycache__")
    )
    if (source / "dist").is_dir():
        shutil.copytree(source / "dist", root / "dist")
    return root


@pytest.fixture(scope="session")
def hybrid_rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture fleet ``hybrid`` with its dist/ rendered by ``fleet synth`` (once)."""
    from fleet.cli.main import main

    root = copy_fleet(HYBRID, tmp_path_factory.mktemp("hybrid") / "project")
    assert main(["--root", str(root), "synth", "--no-cache"]) == 0
    return root


@pytest.fixture
def example_project(tmp_path: Path, hybrid_rendered: Path) -> Path:
    """A copy of the fixture fleet ``hybrid``: declarations, config and rendered dist/."""
    return copy_fleet(hybrid_rendered, tmp_path / "example")
