"""Subcommands that installed plug-ins add, through their entry points (#30 "Slots instead of
lists": the command line was a fixed list).

The plug-in here is a real installed distribution: a package and its ``.dist-info`` (PEP 376
``METADATA``, ``entry_points.txt``) in a site folder on the path, found by
``importlib.metadata`` exactly as pip's install would be.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fleet.cli.main import build_parser, main
from fleet.core.commands import COMMANDS_GROUP

PLUGIN = '''\
"""A plug-in distribution's commands."""

from fleet.plugin import FleetConfig, FleetError, Subparsers


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser("hello", help="say hello to the fleet's environments")
    p.add_argument("--name", default="fleet")
    p.set_defaults(handler=hello)


def hello(args, config: FleetConfig) -> int:
    print(f"hello {args.name}: {', '.join(config.environments)}")
    return 0


def add_failing(sub: Subparsers) -> None:
    p = sub.add_parser("fail", help="fails like bad input")
    p.set_defaults(handler=fail)


def fail(args, config: FleetConfig) -> int:
    raise FleetError("clusters/x.py:3: nothing to greet")


def add_nothing(sub: Subparsers) -> None:
    sub.add_parser("quiet")  # no handler


def add_synth(sub: Subparsers) -> None:
    raise AssertionError("a plug-in must never replace a built-in command")
'''

ENTRY_POINTS = f"""\
[{COMMANDS_GROUP}]
hello = fleet_hello:add_parser
fail = fleet_hello:add_failing
quiet = fleet_hello:add_nothing
broken = fleet_hello:does_not_exist
synth = fleet_hello:add_synth
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A site folder holding the installed distribution ``fleet-hello`` 1.0."""
    folder = tmp_path / "site"
    (folder / "fleet_hello").mkdir(parents=True)
    (folder / "fleet_hello" / "__init__.py").write_text(PLUGIN)
    info = folder / "fleet_hello-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fleet-hello\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    (info / "top_level.txt").write_text("fleet_hello\n")
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "clusters").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.fleet]\nenvironments = ["dev", "prod"]\n')
    return root


def _fleet(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    script = Path(sys.executable).with_name("fleet")
    return subprocess.run(
        [str(script), *args], capture_output=True, text=True, env=env, check=False, timeout=120
    )


def test_an_installed_plugin_adds_its_command(site: Path, project: Path) -> None:
    done = _fleet(site, "--root", str(project), "hello", "--name", "team")
    assert (done.returncode, done.stdout) == (0, "hello team: dev, prod\n"), done.stderr
    listed = _fleet(site, "--help")
    assert "say hello to the fleet's environments" in listed.stdout
    assert "fails like bad input" in listed.stdout
    # The broken ones cost a warning each; the tool's commands are untouched.
    warnings = [line for line in listed.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        "warning: plug-in command 'broken' (fleet_hello:does_not_exist, from fleet-hello 1.0) "
        "not added: AttributeError: module 'fleet_hello' has no attribute 'does_not_exist'",
        "warning: plug-in command 'quiet' (fleet_hello:add_nothing, from fleet-hello 1.0) not "
        "added: it must add a subcommand named 'quiet' with set_defaults(handler=...)",
        "warning: plug-in command 'synth' (fleet_hello:add_synth, from fleet-hello 1.0) not "
        "added: 'synth' is a built-in command's name",
    ]
    assert "quiet" not in listed.stdout.split("options:")[0]


def test_a_plugin_command_fails_like_any_other(site: Path, project: Path) -> None:
    done = _fleet(site, "--root", str(project), "fail")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == "error: clusters/x.py:3: nothing to greet"
    assert "Traceback" not in done.stderr


def test_in_process_the_parser_has_it(
    site: Path, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(site))
    warned: list[str] = []
    parser = build_parser(warned.append)
    args = parser.parse_args(["--root", str(project), "hello"])
    assert args.handler.__module__ == "fleet_hello"
    assert len(warned) == 3
    assert main(["--root", str(project), "hello", "--name", "x"]) == 0
    assert capsys.readouterr().out == "hello x: dev, prod\n"


def test_without_plugins_there_is_no_warning(project: Path) -> None:
    warned: list[str] = []
    parser = build_parser(warned.append)
    assert warned == []
    assert "synth" in textwrap.dedent(parser.format_help())
