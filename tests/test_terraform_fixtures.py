"""The real-Terraform fixtures (tests/fixtures/terraform/real, Magnum; real-oke, OKE) are
what they claim to be.

Each fixture's HCL is written for this project after a public repository (named, with the
commit read, in PROVENANCE.md), and its states are what Terraform would hold after applying
that HCL. Checked here: the provenance names repository, commit and licence; every HCL file
parses (python-hcl2, as the importer reads it); every state file is the format its name
says; every resource, data source and module instance of a state is declared in the HCL at
the same address, repeated the same way (``count`` for an integer key, ``for_each`` for a
string key); every single Magnum block of the HCL is in a state. What an import of them must
produce is in each fixture's expected.yaml, for the importer's own tests.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import hcl2
import pytest
import yaml

REAL = Path(__file__).parent / "fixtures" / "terraform" / "real"
REAL_OKE = Path(__file__).parent / "fixtures" / "terraform" / "real-oke"
FIXTURES = sorted(p for folder in (REAL, REAL_OKE) for p in folder.iterdir() if p.is_dir())
STATES = sorted(p for d in FIXTURES for p in (d / "state").iterdir())
MODELLED_ON = re.compile(r"Modelled on: ([\w.-]+/[\w.-]+) @ `([0-9a-f]{40})`")
# HCL files: configuration, variable files (also the .example/.sample ones a README tells
# to copy) and partial backend configurations.
HCL_PATTERNS = ("*.tf", "*.tfvars", "*.tfvars.*", "*-backend.conf")
HCL_FILES = sorted(
    {
        p
        for d in FIXTURES
        for folder in ("source", "synthetic")
        for pattern in HCL_PATTERNS
        for p in (d / folder).rglob(pattern)
    }
)
MODULE_STEP = re.compile(r'module\.(\w+)(?:\[(\d+|"[^"]*")\])?')

# How a block repeats: "one", "count" or "for_each".
Repeat = str
# (module path, "resource" | "data", type, name) of a block, or of a state resource.
Address = tuple[tuple[str, ...], str, str, str]


def _unquote(text: str) -> str:
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


def _repeat(body: dict[str, Any]) -> Repeat:
    return "count" if "count" in body else "for_each" if "for_each" in body else "one"


def _repeat_of_key(key: object) -> Repeat:
    return "one" if key is None else "count" if isinstance(key, int) else "for_each"


def _declared(
    folder: Path, path: tuple[str, ...] = ()
) -> tuple[dict[Address, Repeat], dict[tuple[str, ...], Repeat]]:
    """The blocks of a root folder and of the modules it calls (read through their source)."""
    blocks: dict[Address, Repeat] = {}
    modules: dict[tuple[str, ...], Repeat] = {}
    for file in sorted(folder.glob("*.tf")):
        with file.open(encoding="utf-8") as f:
            document = hcl2.load(f)
        for kind in ("resource", "data"):
            for entry in document.get(kind, []):
                for type_, named in entry.items():
                    for name, body in named.items():
                        address = (path, kind, _unquote(type_), _unquote(name))
                        blocks[address] = _repeat(body)
        for entry in document.get("module", []):
            for quoted, body in entry.items():
                child = (*path, _unquote(quoted))
                modules[child] = _repeat(body)
                child_blocks, child_modules = _declared(
                    (folder / _unquote(body["source"])).resolve(), child
                )
                blocks.update(child_blocks)
                modules.update(child_modules)
    return blocks, modules


def _state_resources(path: Path) -> list[tuple[Address, list[tuple[str, Repeat]], Repeat]]:
    """Each resource instance of a state: its address, module steps, and how it repeats."""
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    found: list[tuple[Address, list[tuple[str, Repeat]], Repeat]] = []

    def add(module: str, mode: str, type_: str, name: str, key: object) -> None:
        steps = [
            (m.group(1), _repeat_of_key(None if m.group(2) is None else json.loads(m.group(2))))
            for m in MODULE_STEP.finditer(module)
        ]
        kind = "data" if mode == "data" else "resource"
        address = (tuple(s[0] for s in steps), kind, type_, name)
        found.append((address, steps, _repeat_of_key(key)))

    if "values" in document:

        def walk(module: dict[str, Any]) -> None:
            for r in module.get("resources", []):
                add(module.get("address", ""), r["mode"], r["type"], r["name"], r.get("index"))
            for child in module.get("child_modules", []):
                walk(child)

        walk(document["values"]["root_module"])
    else:
        for r in document["resources"]:
            for instance in r["instances"]:
                add(
                    r.get("module", ""),
                    r["mode"],
                    r["type"],
                    r["name"],
                    instance.get("index_key"),
                )
    return found


def _roots(fixture: Path) -> list[Path]:
    expected = yaml.safe_load((fixture / "expected.yaml").read_text(encoding="utf-8"))
    source = expected["import"]["source"]
    return [fixture / s for s in ([source] if isinstance(source, str) else source)]


def test_there_are_real_fixtures_from_six_repositories() -> None:
    found = [MODELLED_ON.search((d / "PROVENANCE.md").read_text()) for d in FIXTURES]
    names = {m.group(1) for m in found if m}
    assert len(names) >= 6, names


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_provenance_names_repository_commit_and_licence(fixture: Path) -> None:
    text = (fixture / "PROVENANCE.md").read_text(encoding="utf-8")
    modelled_on = MODELLED_ON.search(text)
    assert modelled_on, f"{fixture.name}: no 'Modelled on: owner/name @ `<40-hex commit>`'"
    assert f"https://github.com/{modelled_on.group(1)}" in text
    assert "(read, not copied)" in text
    assert "Licence" in text
    assert any((fixture / "source").rglob("*.tf")), f"{fixture.name}: no .tf under source/"


@pytest.mark.parametrize("path", HCL_FILES, ids=lambda p: str(p.relative_to(p.parents[3])))
def test_hcl_files_parse(path: Path) -> None:
    with path.open(encoding="utf-8") as f:
        document = hcl2.load(f)
    assert document, f"{path}: nothing parsed"


@pytest.mark.parametrize("path", STATES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_state_files_are_the_format_their_name_says(path: Path) -> None:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if path.name.endswith(".show.json"):
        assert document["format_version"] == "1.0"
        assert isinstance(document["values"]["root_module"], dict)
    else:
        assert path.suffix == ".tfstate", path
        assert document["version"] == 4
        assert isinstance(document["resources"], list)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_expected_yaml_names_only_state_files_that_exist(fixture: Path) -> None:
    expected = yaml.safe_load((fixture / "expected.yaml").read_text(encoding="utf-8"))
    assert expected["fixture"] == fixture.name
    listed = {s["path"] for s in expected["import"]["states"]}
    on_disk = {f"state/{p.name}" for p in (fixture / "state").iterdir()}
    assert listed == on_disk
    assert all(root.is_dir() for root in _roots(fixture)), expected["import"]["source"]


def _fits(
    address: Address,
    steps: list[tuple[str, Repeat]],
    repeat: Repeat,
    blocks: dict[Address, Repeat],
    modules: dict[tuple[str, ...], Repeat],
) -> bool:
    """The HCL declares this state resource, and its modules, repeated the same way."""
    path: tuple[str, ...] = ()
    for name, step_repeat in steps:
        path = (*path, name)
        if modules.get(path) != step_repeat:
            return False
    return blocks.get(address) == repeat


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_every_state_resource_is_declared_in_the_hcl(fixture: Path) -> None:
    roots = [_declared(root) for root in _roots(fixture)]
    problems = [
        f"{state.name}: {address} ({repeat})"
        for state in sorted((fixture / "state").iterdir())
        for address, steps, repeat in _state_resources(state)
        if not any(_fits(address, steps, repeat, *root) for root in roots)
    ]
    assert not problems, f"{fixture.name}: not in the HCL, or repeated otherwise: {problems}"


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_every_single_magnum_block_is_in_a_state(fixture: Path) -> None:
    in_states = {
        address
        for state in (fixture / "state").iterdir()
        for address, _steps, _repeat in _state_resources(state)
    }
    missing = [
        address
        for blocks, modules in (_declared(root) for root in _roots(fixture))
        for address, repeat in blocks.items()
        if address[2].startswith("openstack_containerinfra_")
        and repeat == "one"
        and all(modules[address[0][: i + 1]] == "one" for i in range(len(address[0])))
        and address not in in_states
    ]
    assert not missing, f"{fixture.name}: Magnum blocks of the HCL that no state holds: {missing}"
