"""``fleet init``: a new fleet repository that passes its own synth, lint and tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from support import REPO, tree_hash

from fleet.cli.init import SCAFFOLD, scaffold_files, tool_source
from fleet.cli.main import main
from fleet.core.errors import FleetError

RUFF = Path(sys.executable).with_name("ruff")


def run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``fleet init`` into an empty folder, with the default tool source (this checkout)."""
    target = tmp_path_factory.mktemp("init") / "our-fleet"
    assert main(["init", str(target)]) == 0
    return target


def test_the_project_depends_on_the_tool_and_vendors_the_crds(project: Path) -> None:
    data = tomllib.loads((project / "pyproject.toml").read_text())
    assert data["project"]["name"] == "our-fleet"
    assert data["project"]["dependencies"] == [f"fleet @ {REPO.as_uri()}"]
    dev = data["project"]["optional-dependencies"]["dev"]
    ours = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert set(dev) <= set(ours["project"]["optional-dependencies"]["dev"])  # same pins
    assert data["tool"]["fleet"]["environments"] == ["dev", "test", "prod"]
    assert (project / "crds.lock.yaml").read_bytes() == (REPO / "crds.lock.yaml").read_bytes()
    assert tree_hash(project / "crds") == tree_hash(REPO / "crds")
    for name in ("Makefile", ".gitignore", ".gitlab-ci.yml", "app.py", "cdk8s.yaml"):
        assert (project / name).is_file(), name
    assert sorted(p.name for p in (project / "clusters").glob("*.py")) == [
        "__init__.py",
        "example.py",
        "platform.py",
    ]
    assert not (project / "constructs").exists()


def test_the_project_passes_its_own_synth_lint_and_tests(project: Path) -> None:
    """What its ``make synth`` and ``make test`` run, with this virtualenv's tools."""
    assert main(["--root", str(project), "synth", "--check"]) == 0
    assert (project / "dist" / "prod" / "bootstrap").is_dir()
    for argv in ([str(RUFF), "check", "."], [str(RUFF), "format", "--check", "."]):
        result = run(*argv, cwd=project)
        assert result.returncode == 0, result.stdout + result.stderr
    result = run(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout and "skipped" not in result.stdout


def test_its_tests_fail_when_dist_is_stale(project: Path, tmp_path: Path) -> None:
    """The generated invariant tests are real: a hand edit in dist/ makes them fail."""
    copy = tmp_path / "copy"
    ignore = shutil.ignore_patterns(".fleet", "__pycache__")
    shutil.copytree(project, copy, ignore=ignore)
    victim = next((copy / "dist" / "dev").rglob("clusterv1_*.yaml"))
    victim.write_text(victim.read_text().replace("nodeCount: 1", "nodeCount: 7"))
    result = run(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", cwd=copy)
    assert result.returncode == 1
    assert "test_dist_is_what_the_sources_render" in result.stdout


def test_the_scaffold_copies_what_the_repository_keeps_working(project: Path) -> None:
    """The templates that mirror this repository's files stay identical to them."""
    same = {
        "app.py": "app.py",
        "cdk8s.yaml": "cdk8s.yaml",
        "package.json": "package.json",
        "tests/test_fleet_invariants.py": "tests/test_fleet_invariants.py",
        ".gitlab-ci.yml": "examples/ci/gitlab-ci.yml",
    }
    for ours, theirs in same.items():
        assert (project / ours).read_bytes() == (REPO / theirs).read_bytes(), ours
    github = scaffold_files("github")
    assert (
        github[".github/workflows/fleet.yml"].read_bytes()
        == (REPO / "examples" / "ci" / "github-actions.yml").read_bytes()
    )
    assert ".gitlab-ci.yml" not in github and ".gitlab-ci.yml" not in scaffold_files("none")


def test_the_scaffold_is_package_data() -> None:
    packaged = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = packaged["package-data"]["fleet"]
    templates = {p.relative_to(SCAFFOLD.parent).as_posix() for p in SCAFFOLD.rglob("*.tmpl")}
    assert templates
    for path in templates:
        assert any(Path(path).match(pattern) for pattern in patterns), path


def test_tool_sources(tmp_path: Path) -> None:
    assert tool_source(str(REPO)).requirement == f"fleet @ {REPO.as_uri()}"
    assert tool_source(str(REPO)).tree == REPO
    git = "git+https://git.example.org/platform/fleet-tool.git@0123abc"
    assert tool_source(git).requirement == f"fleet @ {git}"
    assert tool_source(f"fleet @ {git}").tree is None
    with pytest.raises(FleetError, match="no such folder"):
        tool_source(str(tmp_path / "missing"))
    with pytest.raises(FleetError, match="not a checkout of the fleet tool"):
        tool_source(str(tmp_path))


def test_init_refuses_a_folder_that_is_not_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    before = tree_hash(tmp_path)
    assert main(["init", str(tmp_path)]) == 2
    assert "not empty (notes.txt); fleet init starts a new repository" in capsys.readouterr().err
    assert tree_hash(tmp_path) == before


def test_init_without_a_checkout_of_the_tool_says_what_to_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git = "git+https://git.example.org/platform/fleet-tool.git@0123abc"
    assert main(["init", str(tmp_path / "new"), "--tool-source", git]) == 2
    assert "pass --tool-source PATH of one" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def test_a_failed_render_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fleet.pipeline import synth as pipeline

    def broken(*args: object, **kwargs: object) -> None:
        raise FleetError("clusters/example.py:1: broken")

    monkeypatch.setattr(pipeline, "synthesize", broken)
    (tmp_path / "existing" / ".git").mkdir(parents=True)
    assert main(["init", str(tmp_path / "existing")]) == 2
    assert [p.name for p in (tmp_path / "existing").iterdir()] == [".git"]
    assert main(["init", str(tmp_path / "new")]) == 2
    assert not (tmp_path / "new").exists()
    assert "error: clusters/example.py:1: broken" in capsys.readouterr().err
