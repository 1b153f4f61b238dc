"""``fleet diff --format markdown`` ends with the part of the bootstrap a change touches."""

from __future__ import annotations

from pathlib import Path

from test_cli_diff import definition, diff, make_repo, write_project

from fleet.cli.diff import SECTIONS
from fleet.cli.graph import MAX_DRAWN_OBJECTS, diff_section


def test_the_section_is_listed_once_and_nothing_is_appended_on_import() -> None:
    """The diff report's sections are an explicit tuple: importing ``fleet graph`` adds
    nothing to process-wide state (#30)."""
    assert SECTIONS.count(diff_section) == 1
    assert isinstance(SECTIONS, tuple)


def test_markdown_report_draws_changed_and_removed_objects(tmp_path: Path) -> None:
    root = make_repo(tmp_path, definition())
    write_project(root, definition(nodes=3, alpha_envs='["dev"]'))
    code, out, err = diff(root, "--format", "markdown")
    assert code == 1, out + err  # alpha-prod is removed: the deletion guard fails
    section = out.split("#### Where the change lands\n\n", 1)[1]
    diagram = section.split("```mermaid\n", 1)[1].split("```\n", 1)[0]
    assert diagram.startswith("flowchart LR\n")
    assert '  subgraph dev["dev"]\n' in diagram
    assert '  subgraph prod["prod"]\n' in diagram
    assert '["ClusterV1<br/>alpha-dev"]' in diagram  # changed
    assert '["ClusterV1<br/>alpha-prod"]' in diagram  # removed, placed from the base
    assert '["NodegroupV1<br/>alpha-prod-zone-a"]' in diagram
    assert "beta" not in diagram  # untouched


def test_text_report_has_no_diagram(tmp_path: Path) -> None:
    root = make_repo(tmp_path, definition())
    write_project(root, definition(nodes=3))
    code, out, _ = diff(root)
    assert code == 0
    assert "Where the change lands" not in out
    assert "mermaid" not in out


def test_too_many_objects_are_not_drawn(tmp_path: Path) -> None:
    many = MAX_DRAWN_OBJECTS + 1
    source = definition() + (
        f"    for i in range({many}):\n"
        '        MagnumCluster(fleet, f"many-{i}", name=f"many-{i}", environments=["dev"],\n'
        '                      project=demo, template=T, flavor="m1", keypair="k", node_count=1)\n'
    )
    root = make_repo(tmp_path, definition())
    write_project(root, source)
    code, out, err = diff(root, "--format", "markdown")
    assert code == 0, out + err
    assert (
        f"#### Where the change lands\n\n{many} objects change, too many "
        "to draw; run `fleet graph` for the whole bootstrap."
    ) in out
    assert "```mermaid" not in out
