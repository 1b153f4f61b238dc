"""``fleet synth`` and ``python app.py`` import what a synth needs, not every subcommand.

``fleet.cli.main`` builds one parser with every subcommand, so it imports every
``fleet.cli`` module; each keeps its ``add_parser`` to argparse set-up and imports the
machinery it runs (diff guards and report, graph views, importers, upgrade plan and gate,
inventory, status view) in its handler. Where ``PYTHONDONTWRITEBYTECODE=1`` (CI runners,
this project's machines) each process compiles every module it imports: before this test,
``fleet synth`` paid 0.2-0.27 s of CPU for 46 modules it never ran (docs/performance.md,
issues 26 and 30). A synth runs here in a fresh interpreter, which lists its
``sys.modules``. The help texts these commands print are pinned by their own tests
(test_cli_diff, test_graph, test_inventory, test_status, test_rollout, test_state_import).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import copy_fleet
from support import HYBRID, REPO

NOT_FOR_SYNTH = (
    "fleet.pipeline.diff",
    "fleet.guards",
    "fleet.views",
    "fleet.importers",
    "fleet.clouds.importer",
    "fleet.terraform",
    "fleet.codegen",
    "fleet.upgrades.gate",
    "fleet.upgrades.plan",
    "rich",
)
"""Module names (and their submodules) only other commands run: ``fleet diff`` (its
pipeline, guards and report), ``fleet graph``, ``ls`` and ``status`` (``fleet.views``),
``fleet import`` (the importers, what a cloud's importer is built from, Terraform's
state and the code writer), ``fleet upgrade`` (plan and gate); ``rich`` draws the tables."""

IMPORTED_FOR_HELP = ("fleet.importers", "fleet.importers.registry")
"""What of those a synth imports: the importers' help texts and options are data on the
clouds' plug-ins, which ``fleet import``'s parser reads through the registry (the package
holds a docstring)."""

LIST_MODULES = "print(json.dumps(sorted(sys.modules)))"


def _not_for_synth(modules: list[str]) -> list[str]:
    return [
        m
        for m in modules
        if m not in IMPORTED_FOR_HELP
        and any(m == p or m.startswith(p + ".") for p in NOT_FOR_SYNTH)
    ]


def _modules_after(code: str, cwd: Path) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-c", f"import json, sys\n{code}\n{LIST_MODULES}"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    modules: list[str] = json.loads(run.stdout.splitlines()[-1])
    assert "fleet.pipeline.synth" in modules  # it did synthesize
    return modules


def test_fleet_synth_imports_no_other_command(tmp_path: Path) -> None:
    root = copy_fleet(HYBRID, tmp_path / "project")
    code = (
        "from fleet.cli.main import main\n"
        f"assert main(['--root', {str(root)!r}, 'synth', '--jobs', '1']) == 0"
    )
    modules = _modules_after(code, tmp_path)
    assert (root / "dist").is_dir()
    assert _not_for_synth(modules) == []
    # every subcommand was added to the parser all the same
    assert {"fleet.cli.diff", "fleet.cli.graph", "fleet.cli.upgrade"} <= set(modules)


def test_python_app_py_imports_no_other_command(tmp_path: Path) -> None:
    root = copy_fleet(HYBRID, tmp_path / "project")
    shutil.copy(REPO / "constructs" / "fleet" / "scaffold" / "app.py.tmpl", root / "app.py")
    code = (
        "import runpy\n"
        "sys.argv = ['app.py', '--jobs', '1']\n"
        "try:\n"
        "    runpy.run_path('app.py', run_name='__main__')\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code\n"
    )
    modules = _modules_after(code, root)
    assert (root / "dist").is_dir()
    assert _not_for_synth(modules) == []


def test_the_check_sees_a_subcommand_module() -> None:
    """The filter above names what ``fleet diff`` and ``fleet graph`` import."""
    code = "import fleet.cli.diff, fleet.pipeline.diff, fleet.views.graph"
    run = subprocess.run(
        [sys.executable, "-c", f"import json, sys\n{code}\n{LIST_MODULES}"],
        capture_output=True,
        text=True,
        check=True,
    )
    found = _not_for_synth(json.loads(run.stdout))
    assert {"fleet.pipeline.diff", "fleet.views.graph", "fleet.guards.diff"} <= set(found)


def test_graph_help_names_the_views_limits() -> None:
    """``fleet graph --help`` names the choices and limits of :mod:`fleet.views.graph`
    without importing it: the copies in :mod:`fleet.cli.graph` are the same values."""
    from fleet.cli import graph as cli_graph
    from fleet.views import graph as views_graph

    assert cli_graph.FORMATS == views_graph.FORMATS
    assert cli_graph.MERMAID_MAX_EDGES == views_graph.MERMAID_MAX_EDGES
    assert cli_graph.MERMAID_MAX_TEXT == views_graph.MERMAID_MAX_TEXT
