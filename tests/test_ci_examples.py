"""The example pipelines in ``examples/ci/`` run only commands that exist.

Every ``fleet`` command line they hold is parsed by the real argument parser (an unknown
subcommand or option fails), the cheap ones also run for real against a copy of the
example fleet, and every ``make`` target they call is in the Makefile.
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import HYBRID

from fleet.cli.main import build_parser, main

REPO = Path(__file__).resolve().parents[1]
GITLAB = REPO / "examples" / "ci" / "gitlab-ci.yml"
GITHUB = REPO / "examples" / "ci" / "github-actions.yml"

# GitLab keywords that are not jobs
GITLAB_GLOBAL = {"stages", "default", "workflow", "variables", "include", "image", "cache"}


def _lines(script: Any) -> Iterator[str]:
    """Shell lines of a script (a string or a list of strings), comments dropped."""
    for chunk in [script] if isinstance(script, str) else script or []:
        for line in str(chunk).splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                yield line


def gitlab_lines() -> list[str]:
    config = yaml.safe_load(GITLAB.read_text())
    out = list(_lines(config.get("default", {}).get("before_script")))
    for name, job in config.items():
        if name in GITLAB_GLOBAL or not isinstance(job, dict):
            continue
        for key in ("before_script", "script", "after_script"):
            out.extend(_lines(job.get(key)))
    return out


def github_lines() -> list[str]:
    config = yaml.safe_load(GITHUB.read_text())
    return [
        line
        for job in config["jobs"].values()
        for step in job["steps"]
        for line in _lines(step.get("run"))
    ]


PIPELINES = {"gitlab": gitlab_lines, "github": github_lines}


def commands(lines: list[str], program: str) -> list[list[str]]:
    """The argv of every ``program ...`` line, without the output redirection."""
    out = []
    for line in lines:
        words = shlex.split(line, comments=True)
        if words and words[0] == program:
            if ">" in words:
                words = words[: words.index(">")]
            out.append(words[1:])
    return out


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_runs_the_whole_loop(pipeline: str) -> None:
    """setup, synth --check, validate, the tests, and the diff as Markdown in a file."""
    lines = PIPELINES[pipeline]()
    fleet = [" ".join(argv) for argv in commands(lines, "fleet")]
    assert "make setup" in lines
    assert "synth --check" in fleet
    assert "validate" in fleet
    assert "make test" in lines  # ruff, mypy --strict on clusters/, pytest
    diff = [line for line in lines if line.startswith("fleet diff ")]
    assert len(diff) == 1
    assert "--format markdown" in diff[0]
    assert diff[0].endswith("> fleet-diff.md")


def test_gitlab_keeps_the_diff_as_an_artifact_and_comments_it() -> None:
    config = yaml.safe_load(GITLAB.read_text())
    assert config["diff"]["artifacts"]["paths"] == ["fleet-diff.md"]
    assert config["diff"]["artifacts"]["when"] == "always"
    comment = " ".join(config["diff-comment"]["script"])
    assert "body@fleet-diff.md" in comment
    assert "/merge_requests/$CI_MERGE_REQUEST_IID/notes" in comment
    assert {s for job in config.values() if isinstance(job, dict) for s in [job.get("stage")]} >= {
        "check",
        "review",
    }
    assert set(config["stages"]) == {"check", "review"}


def test_github_keeps_the_diff_as_an_artifact_and_comments_it() -> None:
    config = yaml.safe_load(GITHUB.read_text())
    steps = config["jobs"]["diff"]["steps"]
    upload = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert upload and upload[0]["with"]["path"] == "fleet-diff.md"
    assert any("gh pr comment" in str(s.get("run", "")) for s in steps)
    assert config["jobs"]["diff"]["permissions"]["pull-requests"] == "write"


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_every_fleet_command_parses(pipeline: str) -> None:
    argvs = commands(PIPELINES[pipeline](), "fleet")
    assert argvs
    for argv in argvs:
        args = build_parser().parse_args(argv)  # SystemExit(2) on an unknown option
        assert callable(args.handler), argv


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize(
    "makefile", [REPO / "Makefile", REPO / "constructs/fleet/scaffold/Makefile.tmpl"]
)
def test_every_make_target_exists(pipeline: str, makefile: Path) -> None:
    """In this repository's Makefile and in the one ``fleet init`` writes."""
    targets = set(re.findall(r"^([A-Za-z][\w-]*):", makefile.read_text(), re.M))
    for argv in commands(PIPELINES[pipeline](), "make"):
        assert set(argv) <= targets, argv


def test_synth_check_runs_for_real(tmp_path: Path) -> None:
    """The cheap check, as the pipelines run it, on a copy of the example fleet."""
    root = tmp_path / "example"
    root.mkdir()
    shutil.copy(HYBRID / "pyproject.toml", root)
    shutil.copytree(HYBRID / "clusters", root / "clusters", ignore=shutil.ignore_patterns("__py*"))
    assert main(["--root", str(root), "synth"]) == 0
    for pipeline in PIPELINES.values():
        assert ["synth", "--check"] in commands(pipeline(), "fleet")
    assert main(["--root", str(root), "synth", "--check"]) == 0
    next(root.glob("dist/*/clusters/*/*.yaml")).write_text("edited: by hand\n")
    assert main(["--root", str(root), "synth", "--check"]) == 1
