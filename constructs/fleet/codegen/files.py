"""The files an import writes: which modules an import wrote (and may replace), what a
person added above their constants (kept when an import rewrites them), and paths as
messages show them."""

from __future__ import annotations

import ast
from pathlib import Path

from fleet.codegen.layout import GENERATED_PREFIX
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError


def generated_module(path: Path, title: str = "") -> bool:
    """Whether ``path`` is a module an import wrote (of ``title``'s community, if given):
    its first line is a one-line docstring (read as the literal it is) that says so."""
    try:
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    except (OSError, UnicodeDecodeError):
        return False
    if not (first.startswith(f'"""{GENERATED_PREFIX}') and first.endswith('"""')):
        return False
    try:
        about = ast.literal_eval(first)
    except (SyntaxError, ValueError):
        return False
    return isinstance(about, str) and title in about


def check_writable(path: Path, errors: list[DefinitionError]) -> None:
    """Only a module an import generated may be replaced."""
    if not path.exists():
        return
    try:
        generated = path.read_text(encoding="utf-8").startswith(f'"""{GENERATED_PREFIX}')
    except (OSError, UnicodeDecodeError):
        generated = False
    if not generated:
        errors.append(
            DefinitionError(
                "exists and was not written by `fleet import`; choose another --out",
                where=str(path),
            )
        )


def earlier_comments(path: Path) -> dict[str, tuple[str, ...]]:
    """The comment above each module-level assignment of a generated module (kept when an
    import rewrites it), by variable."""
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError):
        return {}
    lines = text.split("\n")
    found: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            above: list[str] = []
            number = node.lineno - 2
            while number >= 0 and (lines[number].startswith("# ") or lines[number] == "#"):
                above.insert(0, lines[number][2:].removesuffix("  # noqa: E501").rstrip("\r"))
                number -= 1
            found[node.targets[0].id] = tuple(above)
    return found


def relative(path: Path, config: FleetConfig) -> str:
    """``path`` relative to the project, for messages (as given when outside it)."""
    try:
        return str(path.relative_to(config.root.resolve()))
    except ValueError:
        return str(path)
