"""Types an editor and a type checker see in a user's repository: mypy --strict and pyright.

``fixtures/typing/user_fleet.py`` is a user's module: correct declarations of every public
construct and value type, then known mistakes (an unknown keyword, a str for an int, a single
NodeGroup for a list, a per_env of the wrong type, a missing argument). Each checker, run as
a user runs it (the installed package, its ``py.typed``; not this repository's settings),
must report exactly the marked lines and reveal the constructed types: constructors are
typed through ``typing.dataclass_transform`` on the declarations' metaclass, whose
``__call__`` returns the class. Where the two checkers differ (the line of an unknown keyword
in a call over several lines; pyright's silence on argument types in a call whose keywords
do not match), the sample marks each checker's own lines, as docs/guide.md ("Editor setup")
tells users.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO

SAMPLE = Path(__file__).parent / "fixtures" / "typing" / "user_fleet.py"
NODE = REPO / "node_modules" / ".bin" / "node"
PYRIGHT = REPO / "node_modules" / "pyright" / "index.js"
PYRIGHT_RULES = {"reportCallIssue": "call-arg", "reportArgumentType": "arg-type"}


def _marks(kind: str) -> set[tuple[int, str]]:
    """(line, code) of every ``# kind: code`` mark of the sample."""
    out = set()
    for number, line in enumerate(SAMPLE.read_text().splitlines(), start=1):
        match = re.search(rf"# {kind}: ([\w\[\]-]+)", line)
        if match:
            out.add((number, match.group(1)))
    return out


def _short(type_name: str) -> str:
    """``fleet.core.values.PerEnv[int]`` -> ``PerEnv[int]``."""
    return re.sub(r"\b(?:\w+\.)+(\w+)", r"\1", type_name)


def _errors(checker: str) -> set[tuple[int, str]]:
    """The errors ``checker`` must report: the lines both report, and its own."""
    return _marks("error") | _marks("only-" + checker)


def test_the_sample_has_each_kind_of_mistake() -> None:
    assert len(_marks("error")) == 8
    assert {code for _, code in _marks("error")} == {"call-arg", "arg-type"}
    # an unknown keyword in two calls over several lines, one also with a wrong type
    assert sorted(code for _, code in _marks("only-mypy")) == ["arg-type", "call-arg", "call-arg"]
    assert sorted(code for _, code in _marks("only-pyright")) == ["call-arg", "call-arg"]
    assert len(_marks("reveal")) == 7


def test_mypy_strict_in_a_users_repository(tmp_path: Path) -> None:
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(config),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-error-summary",
            str(SAMPLE),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    errors, revealed = set(), set()
    for line in result.stdout.splitlines():
        error = re.match(r".*user_fleet\.py:(\d+): error: .*\[([\w-]+)\]$", line)
        note = re.match(r'.*user_fleet\.py:(\d+): note: Revealed type is "(.*)"$', line)
        if error:
            errors.add((int(error.group(1)), error.group(2)))
        elif note:
            revealed.add((int(note.group(1)), _short(note.group(2))))
        else:
            assert ": note: " in line, line  # no other kind of message (import errors, ...)
    assert errors == _errors("mypy"), result.stdout
    assert revealed == _marks("reveal"), result.stdout


def test_pyright_in_a_users_repository(tmp_path: Path) -> None:
    assert PYRIGHT.exists(), "pyright (package.json) is not installed: run `npm ci`"
    result = subprocess.run(
        [str(NODE), str(PYRIGHT), "--outputjson", "--pythonpath", sys.executable, str(SAMPLE)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    report = json.loads(result.stdout)
    errors, revealed = set(), set()
    for d in report["generalDiagnostics"]:
        line = d["range"]["start"]["line"] + 1
        if d["severity"] == "error":
            errors.add((line, PYRIGHT_RULES.get(d.get("rule", ""), d.get("rule", "?"))))
        elif d["severity"] == "information":
            match = re.match(r'Type of ".*" is "(.*)"$', d["message"])
            assert match, d["message"]
            revealed.add((line, match.group(1)))
        else:
            pytest.fail(f"unexpected diagnostic: {d}")
    assert errors == _errors("pyright"), result.stdout
    assert revealed == _marks("reveal"), result.stdout


def test_the_package_ships_its_py_typed_marker() -> None:
    import tomllib

    import fleet

    assert (Path(fleet.__file__).parent / "py.typed").is_file()
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "py.typed" in data["tool"]["setuptools"]["package-data"]["fleet"]
