"""The package's shape: layers import only downwards, and outside ``clouds/`` the code
names no cloud (#22, #30: a cloud is one package, its importer included)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from support import REPO

PACKAGE = REPO / "constructs" / "fleet"

FLOORS = {
    "core": 0,
    "platform": 1,
    "terraform": 1,
    "codegen": 1,
    "clouds": 2,
    "checks": 3,
    "argocd": 3,
    "upgrades": 3,
    "guards": 4,
    "pipeline": 5,
    "views": 5,
    "importers": 6,
    "cli": 7,
    "testing": 7,
    "plugin": 7,
    "scaffold": 7,
}
"""core <- platform/terraform/codegen <- clouds <- checks/argocd <- guards <- pipeline/views <-
importers <- cli, and the public faces over everything: ``testing`` (tests) and ``plugin``
(the extension API).

``terraform/`` (reading Terraform as data) and ``codegen/`` (generated Python, checked) sit
below ``clouds/``: each cloud's importer reads and writes through them.

The diff guards sit above the object checks: they reuse the checks' reference rules and CRD
index, and neither checks nor argocd knows a change."""

FACADE = PACKAGE / "__init__.py"
"""``fleet/__init__.py`` only re-exports the public API (every cloud's constructs too)."""

CLOUD_WORDS = frozenset({"openstack", "magnum", "capoci", "capo", "oci", "ocid", "ocid1", "oke"})
"""Words that name a cloud, its provider, its kinds or its ids (``OCIManagedCluster``:
``oci``; ``ocid1.``)."""
CLOUD_KINDS = ("ClusterV1", "NodegroupV1", "ClustertemplateV1", "ClusterTemplateV1")
"""Kinds of one cloud's provider whose words alone name no cloud (Magnum's, through
provider-openstack: ``ClusterV1`` is ``cluster`` and ``v1``)."""


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p != FACADE)


def _layer(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: Path) -> set[str]:
    """Every ``fleet.<layer>`` a module imports, at module level or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == "fleet":
                names = [f"fleet.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "fleet" and len(parts) > 1:
                found.add(parts[1])
    return found


def test_every_module_is_on_a_floor() -> None:
    assert {_layer(p) for p in _modules()} <= set(FLOORS)


def test_no_module_imports_upwards_or_sideways() -> None:
    wrong = []
    for path in _modules():
        layer = _layer(path)
        for target in _imports(path):
            if target != layer and FLOORS.get(target, 99) >= FLOORS[layer]:
                wrong.append(f"{path.relative_to(PACKAGE)} imports fleet.{target}")
    assert wrong == []


def _words(text: str) -> list[str]:
    """``OCIManagedCluster`` -> oci, managed, cluster; ``provider-openstack`` -> ..."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def cloud_names_in_code(source: str) -> list[tuple[int, str]]:
    """(line, token) of every name or string (not a docstring, not a comment) that names a
    cloud."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    skip = {tokenize.NL, tokenize.COMMENT}
    statement_start = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    out = []
    for i, tok in enumerate(tokens):
        if tok.type not in (tokenize.NAME, tokenize.STRING) and tok.type != getattr(
            tokenize, "FSTRING_MIDDLE", -1
        ):
            continue
        if tok.type == tokenize.STRING:
            before = next((t for t in reversed(tokens[:i]) if t.type not in skip), None)
            after = next((t for t in tokens[i + 1 :] if t.type not in skip), None)
            if (before is None or before.type in statement_start) and (
                after is not None and after.type == tokenize.NEWLINE
            ):
                continue  # a docstring (or a bare string statement)
        # ``oci://`` is the Open Container Initiative's registry scheme, not Oracle's cloud.
        if CLOUD_WORDS & set(_words(tok.string.replace("oci://", "://"))) or any(
            kind in tok.string for kind in CLOUD_KINDS
        ):
            out.append((tok.start[0], tok.string))
    return out


def test_the_scan_finds_cloud_names_in_code_and_not_in_docstrings() -> None:
    source = '''"""Docstring about Magnum and OKE."""
# a comment on OpenStack
KINDS = ("OCIManagedCluster", "stroke")  # 'stroke' is not 'oke'
MESSAGE = "expected a ClusterV1"
def f(x: int) -> str:
    """CAPOCI, in a docstring."""
    return f"provider-openstack:{x}"
capoci_config_secret = None
'''
    found = [token for _, token in cloud_names_in_code(source)]
    assert found[0] == '"OCIManagedCluster"'
    assert "capoci_config_secret" in found
    assert any("provider-openstack" in t for t in found)
    assert '"expected a ClusterV1"' in found
    assert len(found) == 4


def test_no_module_outside_clouds_names_a_cloud() -> None:
    """``importers/`` included (#30): the importers are found through the clouds' plug-ins
    (``CloudPlugin.importer``) and their help text is the plug-in's."""
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {token}"
        for path in _modules()
        if _layer(path) != "clouds"
        for line, token in cloud_names_in_code(path.read_text())
    ]
    assert found == []


MAX_LINES = 800
"""No module of the package over 800 lines (the developers' guide; aim for fewer than 500)."""


def test_no_module_is_over_800_lines() -> None:
    too_long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES:
            too_long.append(f"{path.relative_to(PACKAGE)}: {lines} lines")
    assert too_long == []
