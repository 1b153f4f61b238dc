"""The synth pipeline end to end: discovery, uniqueness, determinism, atomic writes, CLIs."""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import HYBRID, REPO, tree_hash

from fleet import FleetConfig
from fleet.cli.main import main
from fleet.pipeline import writer
from fleet.pipeline.synth import synthesize
from fleet.pipeline.writer import read_tree, write_environment

CLUSTER = """\
from fleet import ClusterTemplate, Fleet, MagnumCluster, OpenStackProject

T = ClusterTemplate(name="tpl", kubernetes_version="v1.29.2", base_labels={"kube_tag": "v1"},
                    uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59")


def define(fleet: Fleet) -> None:
    p = OpenStackProject(fleet, "proj-{suffix}", project_name="P")
    MagnumCluster(fleet, "{id}", name="{name}", environments=["dev"], project=p, template=T,
                  flavor="m2.small", keypair="k", node_count={count})
"""


def cluster_module(*, id: str = "c1", name: str = "c1", count: str = "1", suffix: str = "a") -> str:
    values = {"{id}": id, "{name}": name, "{count}": count, "{suffix}": suffix}
    out = CLUSTER
    for key, value in values.items():
        out = out.replace(key, value)
    return out


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), cwd=cwd, capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_render_is_deterministic() -> None:
    config = FleetConfig.load(HYBRID)
    assert synthesize(config).files == synthesize(config).files


def test_app_py_from_another_directory_gives_the_same_bytes(example_project: Path) -> None:
    shutil.copy(REPO / "app.py", example_project / "app.py")
    before = tree_hash(example_project / "dist")
    shutil.rmtree(example_project / "dist")
    result = run(sys.executable, str(example_project / "app.py"), cwd=Path("/"))
    assert result.returncode == 0, result.stderr
    assert tree_hash(example_project / "dist") == before
    assert "Traceback" not in result.stderr and "end-of-life" not in result.stderr.lower()


def test_constructs_folder_does_not_shadow_the_constructs_library() -> None:
    # constructs/ (the source root of `fleet`) has no __init__.py, so from the repo root
    # `import constructs` still finds the upstream library that cdk8s needs.
    assert not (REPO / "constructs" / "__init__.py").exists()
    code = "import constructs, cdk8s; print(constructs.__file__); cdk8s.App()"
    result = run(sys.executable, "-c", code, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert "site-packages" in result.stdout


def test_app_py_runs_from_a_copy_with_a_constructs_folder(example_project: Path) -> None:
    shutil.copy(REPO / "app.py", example_project / "app.py")
    shutil.copytree(
        REPO / "constructs",
        example_project / "constructs",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    result = run(sys.executable, "app.py", cwd=example_project)
    assert result.returncode == 0, result.stderr
    assert "No module named 'constructs._jsii'" not in result.stderr


def test_synth_check_passes_then_reports_drift(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--root", str(example_project), "synth", "--check"]) == 0
    victim = next((example_project / "dist" / "dev").rglob("clusterv1_*.yaml"))
    victim.write_text(victim.read_text().replace("nodeCount: 1", "nodeCount: 7"))
    extra = example_project / "dist" / "dev" / "stray.yaml"
    extra.write_text("kind: Stray\n")
    capsys.readouterr()
    assert main(["--root", str(example_project), "synth", "--check"]) == 1
    out = capsys.readouterr().out
    assert str(victim.relative_to(example_project)) in out
    assert "dist/dev/stray.yaml" in out


def test_failed_synth_leaves_dist_untouched(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_hash(example_project / "dist")
    (example_project / "clusters" / "zz_broken.py").write_text(
        cluster_module(id="broken", name="broken", count="-3")
    )
    assert main(["--root", str(example_project), "synth"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    # The argument's line (node_count is on the call's second line), not the call's first.
    assert err == [
        "error: clusters/zz_broken.py:10 (broken): node_count: must be 0 or more, got -3 (dev)"
    ]
    assert tree_hash(example_project / "dist") == before


def test_duplicate_identity_names_both_definitions(
    make_project, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    root = make_project(
        {
            "clusters/a.py": cluster_module(id="one", name="same", suffix="a"),
            "clusters/b.py": cluster_module(id="two", name="same", suffix="b"),
        }
    )
    assert main(["--root", str(root), "synth"]) == 2
    err = capsys.readouterr().err
    assert "cluster name 'same' in dev is also that of cluster 'one'" in err
    assert "clusters/a.py" in err and "clusters/b.py" in err
    assert not (root / "dist").exists()


def test_unknown_keyword_is_reported_at_its_line(
    make_project, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    root = make_project({"clusters/a.py": cluster_module().replace("node_count=", "node_cont=")})
    assert main(["--root", str(root), "synth"]) == 2
    err = capsys.readouterr().err
    assert "clusters/a.py:10: node_cont: unknown keyword" in err  # the keyword's own line
    assert "Traceback" not in err


def test_debug_shows_the_traceback(make_project, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    root = make_project({"clusters/a.py": cluster_module(count="-1")})
    assert main(["--root", str(root), "synth", "--debug"]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_new_module_is_discovered_without_registration(make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project({"clusters/a.py": cluster_module()})
    assert main(["--root", str(root), "synth"]) == 0
    (root / "clusters" / "b.py").write_text(cluster_module(id="c2", name="c2", suffix="b"))
    assert main(["--root", str(root), "synth"]) == 0
    files = read_tree(root / "dist" / "dev")
    assert any("c2" in path for path in files) and any("c1" in path for path in files)


def test_user_cdk8s_constructs_land_in_their_environment(make_project) -> None:  # type: ignore[no-untyped-def]
    extra = """\
    import cdk8s
    from fleet import Fleet


    def define(fleet: Fleet) -> None:
        cdk8s.ApiObject(fleet.environment("test"), "ns", api_version="v1", kind="Namespace",
                        metadata={"name": "crossplane-clusters"})
    """
    root = make_project({"clusters/a.py": cluster_module(), "clusters/extra.py": extra})
    assert main(["--root", str(root), "synth"]) == 0
    test_files = read_tree(root / "dist" / "test")
    assert test_files == {
        "extra/namespace_core_crossplane-clusters.yaml": (
            b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: crossplane-clusters\n"
        )
    }
    assert "extra/namespace_core_crossplane-clusters.yaml" not in read_tree(root / "dist" / "dev")


def test_node_starts_only_for_a_fleet_that_uses_cdk8s_constructs(example_project: Path) -> None:
    # The example fleet is declarations only: synth must not import cdk8s (which starts
    # Node.js, 0.3 s); a module that adds cdk8s constructs gets the App on first use.
    code = (
        "import sys; from fleet.cli.main import main; rc = main(sys.argv[1:]); "
        "print('cdk8s' in sys.modules, 'jsii' in sys.modules); sys.exit(rc)"
    )
    result = run(sys.executable, "-c", code, "--root", str(example_project), "synth", cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "False False"
    (example_project / "clusters" / "zz_extra.py").write_text(
        "import cdk8s\n\n\ndef define(fleet):\n"
        "    cdk8s.ApiObject(fleet.environment('dev'), 'ns', api_version='v1', kind='Namespace',"
        " metadata={'name': 'extra'})\n"
    )
    result = run(sys.executable, "-c", code, "--root", str(example_project), "synth", cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "True True"
    assert (example_project / "dist" / "dev" / "extra" / "namespace_core_extra.yaml").is_file()


def test_writer_replaces_the_environment_and_removes_stale_files(tmp_path: Path) -> None:
    write_environment(tmp_path, "dev", {"a/x.yaml": b"1", "b.yaml": b"2"})
    write_environment(tmp_path, "dev", {"a/y.yaml": b"3"})
    assert read_tree(tmp_path / "dev") == {"a/y.yaml": b"3"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev"]


def test_concurrent_writers_do_not_interleave(tmp_path: Path) -> None:
    def write(n: int) -> None:
        for i in range(20):
            write_environment(tmp_path, "dev", {f"f{n}.yaml": str(i).encode()})

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(write, [1, 2]))
    assert len(read_tree(tmp_path / "dev")) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev"]


def test_unconfigured_environment_folder_is_removed(example_project: Path) -> None:
    (example_project / "dist" / "staging").mkdir()
    (example_project / "dist" / "staging" / "x.yaml").write_text("a: 1\n")
    # the temporary file of a write interrupted before the environment was unconfigured
    (example_project / "dist" / "staging" / f"{writer.TEMP_PREFIX}1-2-0").write_text("a:")
    assert main(["--root", str(example_project), "synth", "--check"]) == 1
    assert main(["--root", str(example_project), "synth"]) == 0
    assert not (example_project / "dist" / "staging").exists()


STALL = """\
import os
import time

from fleet import Check, Checks


def stall(manifests, context):
    if manifests[0].environment == "prod":  # the last one: dev and test are staged by now
        open(os.environ["FLEET_TEST_STALLED"], "w").close()
        time.sleep(120)
    return []


def define(fleet):
    Checks.of(fleet).add(Check(name="stall", scope="environment", run=stall))
"""


def _as_in_a_terminal() -> None:
    """Ctrl-C as a terminal's foreground job receives it: a test runner started as a
    background job of a non-interactive shell (``.ci/run &``) has SIGINT ignored, which its
    children inherit, and Python then never installs its SIGINT handler (POSIX: an ignored
    signal stays ignored across exec)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(
    ("signum", "jobs", "group"),
    [(signal.SIGTERM, "1", False), (signal.SIGINT, "2", True)],
    ids=["SIGTERM", "Ctrl-C-with-a-worker"],
)
def test_an_interrupted_synth_leaves_no_trace(
    make_project, tmp_path: Path, signum: int, jobs: str, group: bool
) -> None:  # type: ignore[no-untyped-def]
    # Stopped while the last environment is checked (in a worker with 2 jobs): what was
    # staged for dev and test is removed, dist/ is as it was (absent), one line, no traceback
    # (a Ctrl-C reaches the whole process group: the workers and the staging helper too).
    everywhere = 'environments=["dev", "test", "prod"]'
    module = cluster_module(name="c1-{env}").replace('environments=["dev"]', everywhere)
    root = make_project({"clusters/a.py": module, "clusters/zz_stall.py": STALL})
    stalled = tmp_path / "stalled"
    env = {**os.environ, "FLEET_TEST_STALLED": str(stalled), "FLEET_JOBS": jobs}
    fleet = Path(sys.executable).with_name("fleet")
    proc = subprocess.Popen(
        [str(fleet), "synth"],
        cwd=root,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_as_in_a_terminal,
    )
    deadline = time.monotonic() + 120
    while not (stalled.exists() and list((root / "dist").glob(".test.new-*"))):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    if group:
        os.killpg(proc.pid, signum)
    else:
        proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, err
    assert [line for line in err.splitlines() if not line.startswith("synth: [")] == [
        "error: interrupted"
    ]
    assert not (root / "dist").exists()


def test_a_folder_in_dist_that_a_synth_did_not_write_is_kept(example_project: Path) -> None:
    # Only YAML-only real folders are stale environments: notes, scripts or a symlink to a
    # folder elsewhere are not the tool's to delete (nor reported by --check).
    dist = example_project / "dist"
    (dist / "notes").mkdir()
    (dist / "notes" / "README.md").write_text("ours\n")
    outside = example_project / "elsewhere"
    outside.mkdir()
    (outside / "x.yaml").write_text("a: 1\n")
    (dist / "linked").symlink_to(outside)
    assert main(["--root", str(example_project), "synth", "--check"]) == 0
    assert main(["--root", str(example_project), "synth"]) == 0
    assert (dist / "notes" / "README.md").read_text() == "ours\n"
    assert (dist / "linked").is_symlink() and (outside / "x.yaml").is_file()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda dist: dist.write_text("x\n"), "error: dist: is a file, not a folder"),
        (lambda dist: dist.symlink_to("nowhere"), "error: dist: is a symlink to nothing"),
    ],
    ids=["file", "dangling-symlink"],
)
def test_an_output_folder_that_is_not_one_is_refused_before_rendering(
    make_project, capsys: pytest.CaptureFixture[str], make: Callable[[Path], None], message: str
) -> None:  # type: ignore[no-untyped-def]
    root = make_project({"clusters/a.py": cluster_module()})
    make(root / "dist")
    before = os.readlink(root / "dist") if (root / "dist").is_symlink() else None
    assert main(["--root", str(root), "synth"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(message), err
    if before is None:
        assert (root / "dist").read_text() == "x\n"
    else:
        assert os.readlink(root / "dist") == before
    assert sorted(p.name for p in root.iterdir()) == ["clusters", "dist", "pyproject.toml"]


def test_a_write_that_fails_is_one_line(
    make_project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    # A read-only or full disk (tests may run as root, for whom no folder is read-only).
    root = make_project({"clusters/a.py": cluster_module()})

    def full(path: str, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)

    monkeypatch.setattr(writer, "_write_file", full)
    monkeypatch.setattr(writer.Staging, "add", lambda *args: False)  # not staged
    assert main(["--root", str(root), "synth"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert re.fullmatch(
        r"error: dist/dev: cannot write: No space left on device \(dist/\.dev\.new-[^ ]+\)",
        err[0],
    )
    assert not (root / "dist").exists()  # as it was: the staging folder and dist/ are gone


def test_synth_says_how_many_files_it_changed(
    make_project, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    root = make_project({"clusters/a.py": cluster_module()})
    summary = r"(\d+) objects in 3 environments"
    assert main(["--root", str(root), "synth"]) == 0
    first = re.fullmatch(
        rf"wrote {summary} to dist/ in \d+\.\d+ s \((\d+) files changed\)\n",
        capsys.readouterr().out,
    )
    assert first is not None
    files = sum(len(read_tree(root / "dist" / env)) for env in ("dev", "test", "prod"))
    assert int(first[1]) == int(first[2]) == files  # one file per object, all new

    assert main(["--root", str(root), "synth"]) == 0
    assert re.fullmatch(
        rf"dist/ is up to date: {summary}, no file changed \(\d+\.\d+ s\)\n",
        capsys.readouterr().out,
    )

    victim = next((root / "dist" / "dev").rglob("*.yaml"))
    victim.write_text("changed: by hand\n")
    (root / "dist" / "dev" / "stray.yaml").write_text("a: 1\n")
    assert main(["--root", str(root), "synth"]) == 0
    assert capsys.readouterr().out.endswith(" (2 files changed)\n")  # one written, one deleted


def test_a_name_with_a_slash_writes_nothing_anywhere(
    make_project, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    # Its file would be staged (first writes start while rendering) before the name check,
    # which runs with the environment's checks: outside dist/ with enough '..'.
    extra = """\
    import cdk8s
    from fleet import Fleet


    def define(fleet: Fleet) -> None:
        cdk8s.ApiObject(fleet.environment("dev"), "cm", api_version="v1", kind="ConfigMap",
                        metadata={"name": "x/../../../../escaped/pwned", "namespace": "default"})
    """
    root = make_project({"clusters/a.py": cluster_module(), "clusters/extra.py": extra})
    assert main(["--root", str(root), "synth"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: cdk8s chart dev: metadata.name: 'x/../../../../escaped/pwned' in dev cannot "
        "name a file: a '/' (or NUL) in it would put the object's file elsewhere; Kubernetes "
        "names hold none"
    ]
    assert sorted(p.name for p in root.iterdir()) == ["clusters", "pyproject.toml"]


def test_single_environment_synth_leaves_the_others(example_project: Path) -> None:
    before = tree_hash(example_project / "dist" / "prod")
    shutil.rmtree(example_project / "dist" / "dev")
    assert main(["--root", str(example_project), "synth", "--env", "dev"]) == 0
    assert (example_project / "dist" / "dev").is_dir()
    assert tree_hash(example_project / "dist" / "prod") == before


@pytest.mark.skipif(shutil.which("npx") is None, reason="npm is part of make setup")
def test_cdk8s_cli_synth_yields_the_same_dist(example_project: Path) -> None:
    for name in ("app.py", "cdk8s.yaml", "package.json", "package-lock.json"):
        shutil.copy(REPO / name, example_project / name)
    os.symlink(REPO / "node_modules", example_project / "node_modules")
    os.symlink(REPO / ".venv", example_project / ".venv")
    expected = tree_hash(example_project / "dist")
    shutil.rmtree(example_project / "dist")
    env = {**os.environ, "CDK8S_CHECK_UPGRADE": "false"}
    result = run("npx", "--no-install", "cdk8s", "synth", cwd=example_project, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert tree_hash(example_project / "dist") == expected
    assert "end-of-life" not in (result.stdout + result.stderr).lower()
