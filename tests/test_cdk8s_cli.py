"""``npx cdk8s synth``, the entry point cdk8s users know, through the real cdk8s-cli.

cdk8s-cli 2.207.60 (``node_modules/cdk8s-cli/lib/cli/index.js``) first checks the npm
registry for a newer version of itself, unless ``--check-upgrade false`` or
``CDK8S_CHECK_UPGRADE=false`` (yargs ``.env('CDK8S')``): it prints an upgrade notice, or,
when the registry cannot be reached, the Node stack trace of ``cdk8s.Yaml.load``'s child
process. The repository's ``.npmrc`` sets that variable in every Node process npx starts.
The check keeps its answer in ``~/.cdk8s-cli.version`` for 30 minutes (``lib/upgrades.js``):
a fresh one saying 999.0.0 makes the notice appear whenever the check runs, with no network
at all; so a run without the notice is one where the check did not run, online or offline.

An app that exits non-zero makes cdk8s-cli print its own stack trace (``lib/util.js``,
``shell``); ``app.py`` exits 0 without creating the output folder instead, which cdk8s-cli
reports in one line and exit code 1.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import HYBRID, REPO

NPX = shutil.which("npx")
UPGRADE_NOTICE = "A new version 999.0.0 of cdk8s-cli is available"
PROGRESS = re.compile(r"^synth: \[\d+/\d+\] ")
"""fleet's progress lines, on a machine slow enough for the synth to take over 2 s."""


def stderr_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    """What the run printed on stderr, fleet's progress lines aside."""
    return [line for line in result.stderr.splitlines() if not PROGRESS.match(line)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The fixture fleet as a cdk8s project: this repository's app.py, .npmrc, Node tooling."""
    if NPX is None or not (REPO / "node_modules" / "cdk8s-cli").is_dir():
        pytest.fail("npx and node_modules/cdk8s-cli are needed: run `make setup`")
    root = tmp_path / "project"
    shutil.copytree(HYBRID, root, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("app.py", ".npmrc", "package.json"):
        shutil.copy(REPO / name, root / name)
    (root / "node_modules").symlink_to(REPO / "node_modules")
    cdk8s_yaml = (REPO / "cdk8s.yaml").read_text()
    assert "app: .venv/bin/python app.py\n" in cdk8s_yaml
    (root / "cdk8s.yaml").write_text(
        cdk8s_yaml.replace(".venv/bin/python", sys.executable)  # this virtualenv
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / ".cdk8s-cli.version").write_text("999.0.0")  # what the upgrade check would say
    return root


def npx_synth(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CDK8S_", "NODE_OPTIONS"))}
    env["HOME"] = str(root.parent / "home")
    return subprocess.run(
        [str(NPX), "cdk8s", "synth", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_synth_prints_no_upgrade_notice_and_no_stack_trace(project: Path) -> None:
    result = npx_synth(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert stderr_lines(result) == []
    assert result.stdout.splitlines() == ["Synthesizing application", "  - .cdk8s.out/fleet.yaml"]
    assert (project / "dist" / "prod" / "bootstrap").is_dir()


def test_without_the_npmrc_the_upgrade_check_runs(project: Path) -> None:
    """The control: the same run without .npmrc shows the notice the check would print."""
    (project / ".npmrc").unlink()
    result = npx_synth(project, "--app", "true")
    assert UPGRADE_NOTICE in result.stderr


def test_a_definition_error_is_fleets_line_and_a_non_zero_exit(project: Path) -> None:
    module = project / "clusters" / "jeedy_ais.py"
    module.write_text(module.read_text().replace('flavor="m2.xlarge"', 'flavor=""', 1))
    result = npx_synth(project)
    assert result.returncode == 1
    lines = stderr_lines(result)
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith("error: clusters/jeedy_ais.py:")
    assert lines[1] == 'ERROR: synthesis failed, app expected to create ".cdk8s.out"'
    assert not (project / "dist").exists()
