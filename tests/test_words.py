"""Counted nouns in messages, and a command line that uses them."""

from __future__ import annotations

import pytest
from conftest import ProjectFactory

from fleet.cli.main import main
from fleet.core.words import plural


def test_plural() -> None:
    assert [plural(n, "environment") for n in (0, 1, 2)] == [
        "0 environments",
        "1 environment",
        "2 environments",
    ]
    assert plural(1, "CRD file") == "1 CRD file"
    assert plural(3, "entry", "entries") == "3 entries"


def test_synth_of_one_environment_says_environment(
    make_project: ProjectFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_project({"clusters/empty.py": "def define(fleet):\n    pass\n"})
    assert main(["--root", str(root), "synth", "--env", "dev"]) == 0
    out = capsys.readouterr().out
    assert "0 objects in 1 environment, no file changed" in out, out
