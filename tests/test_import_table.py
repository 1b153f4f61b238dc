"""#30: what ``fleet import tfstate`` reads of a resource is its declaration class's option
table (``terraform=`` and the import columns), and nothing else.

A field added as one ``option()`` entry is imported with no other edit (a test-only
subclass of ``MagnumCluster`` stands for the next release's table); a state attribute that
neither the table nor the importer's drop list accounts for is refused on one line naming
the state file, the address and the attribute (exit 2, nothing written), never silently
left out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_fleet
from support import HYBRID

from fleet import FleetConfig, MagnumCluster
from fleet.cli.main import main
from fleet.clouds.importer import StateRequest
from fleet.clouds.magnum.importer.importer import MagnumImporter
from fleet.clouds.magnum.importer.resources import CLUSTER, Tables
from fleet.core.errors import DefinitionErrors
from fleet.core.options import option
from fleet.importers.fleet_view import access
from fleet.importers.registry import cloud_importers
from fleet.importers.state_import import StateOptions, plan_state_import
from fleet.terraform.attributes import CARRIED, DEFAULT
from fleet.terraform.state import StateFile, read_state_file

REAL = Path(__file__).parent / "fixtures" / "terraform" / "real"
PPOULIOT = REAL / "ppouliot-magnum-clusters" / "state" / "terraform.tfstate"
NEW_ATTRIBUTE = "extra_volume_size"
"""An attribute a newer terraform-provider-openstack could add (v3.4.0 has none of it)."""


class NextMagnumCluster(MagnumCluster):
    """``MagnumCluster`` with one more field, declared as one ``option()`` entry."""

    extra_volume_size: int | None = option(
        default=None,
        terraform=NEW_ATTRIBUTE,
        cloud_default=0,
        minimum=1,
        doc="A second volume per node, in GB (test only).",
    )


def state_with(tmp_path: Path, **changes: Any) -> Path:
    """The ppouliot state with its cluster's attributes changed."""
    document = json.loads(PPOULIOT.read_text())
    for resource in document["resources"]:
        if resource["type"] == CLUSTER:
            resource["instances"][0]["attributes"].update(changes)
    path = tmp_path / "dev.tfstate"
    path.write_text(json.dumps(document))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_fleet(HYBRID, tmp_path / "project")


def read_one(state: Path, importer: Any) -> StateFile:
    """``state`` read with the types of ``importer``'s tables."""
    schemas = {t: spec.schema() for t, spec in importer.specs.items()}
    return read_state_file(state, schemas, environment="dev")


def request(root: Path, state: Path, importer: MagnumImporter) -> StateRequest:
    """A state import of ``state`` into the fleet at ``root``."""
    config = FleetConfig.load(root)
    return StateRequest(
        config=config,
        files=[read_one(state, importer)],
        environment=None,
        configurations={},
        fleet=access(config),
    )


def planned_keywords(root: Path, state: Path, importer: MagnumImporter) -> dict[str, Any]:
    """The keywords of the one cluster of ``state``, as ``importer`` declares it."""
    config = FleetConfig.load(root)
    planner = importer.plan_states(request(root, state, importer))
    existing = access(config).existing({})
    notes: dict[tuple[str, str], list[str]] = {}
    planner.prepare(existing, notes)
    assert planner.errors() == []
    (member,) = planner.members(existing, {}, notes)
    return member.keywords


def test_an_option_added_to_the_table_is_imported_with_no_other_edit(
    project: Path, tmp_path: Path
) -> None:
    importer = MagnumImporter(tables=Tables(cluster=NextMagnumCluster))
    # Read with the table's type (int), placed by the table, decided by its columns.
    spec = importer.specs[CLUSTER]
    assert spec.schema().attributes[NEW_ATTRIBUTE] == "int"
    state = state_with(tmp_path, **{NEW_ATTRIBUTE: 40})
    keywords = planned_keywords(project, state, importer)
    assert keywords[NEW_ATTRIBUTE] == 40
    (cluster,) = importer.plan_states(request(project, state, importer)).clusters
    decided = {v.attribute: v for v in cluster.values}  # type: ignore[attr-defined]
    assert (decided[NEW_ATTRIBUTE].fate, decided[NEW_ATTRIBUTE].rule) == (
        CARRIED,
        "not Magnum's default",
    )
    # The column cloud_default=0: Magnum's default is left out, as the table says.
    zero = state_with(tmp_path, **{NEW_ATTRIBUTE: 0})
    assert NEW_ATTRIBUTE not in planned_keywords(project, zero, importer)
    (zero_cluster,) = importer.plan_states(request(project, zero, importer)).clusters
    fates = {v.attribute: v.fate for v in zero_cluster.values}  # type: ignore[attr-defined]
    assert fates[NEW_ATTRIBUTE] == DEFAULT


def test_the_built_in_table_refuses_the_attribute_it_does_not_know(
    project: Path, tmp_path: Path
) -> None:
    (importer,) = [i for i in cloud_importers() if CLUSTER in i.specs]
    state = state_with(tmp_path, **{NEW_ATTRIBUTE: 40})
    with pytest.raises(DefinitionErrors) as caught:
        plan_state_import(FleetConfig.load(project), StateOptions(states=[(state, "dev")]))
    (error,) = caught.value.errors
    assert error.where == f"{state} {CLUSTER}.cluster_1[0]"
    assert error.field == NEW_ATTRIBUTE
    assert "neither imported nor dropped by the Magnum importer" in error.message
    # The same state is imported once the table has the option (the test above).
    (resource,) = [r for r in read_one(state, importer).resources if r.type == CLUSTER]
    assert importer.specs[CLUSTER].unplaced(resource) == [NEW_ATTRIBUTE]
    assert (
        MagnumImporter(tables=Tables(cluster=NextMagnumCluster)).specs[CLUSTER].unplaced(resource)
        == []
    )


def test_the_command_refuses_it_on_one_line_and_writes_nothing(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = state_with(tmp_path, **{NEW_ATTRIBUTE: 40, "created_at": "2019-01-01T00:00:00Z"})
    before = sorted(p.name for p in (project / "clusters").iterdir())
    code = main(["--root", str(project), "import", "tfstate", "--state", f"dev={state}"])
    captured = capsys.readouterr()
    assert code == 2
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1, captured.err
    (line,) = lines
    assert str(state) in line and f"{CLUSTER}.cluster_1" in line and NEW_ATTRIBUTE in line
    assert "40" not in line  # the value is never shown: it may be a secret
    assert "Traceback" not in captured.err
    assert sorted(p.name for p in (project / "clusters").iterdir()) == before
    # A dropped attribute (Magnum's timestamp) is not refused: only the unknown one is.
    assert "created_at" not in line
