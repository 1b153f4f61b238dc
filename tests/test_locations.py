"""Definition locations (``file:line``) name the line a declaration was written on."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from fleet import FleetConfig, testing
from fleet.core.values import _line_of
from fleet.pipeline.synth import synthesize


def test_locations_are_the_lines_python_reports_in_a_long_function() -> None:
    # A long generated function, like a declarations module of many clusters: each call's
    # location must be the line frame.f_lineno reports for the calling frame.
    calls = "".join(
        f"    out.append(\n        where(\n            {i},\n        )\n    )\n    x{i} = [{i}]\n"
        for i in range(400)
    )
    source = f"def define(where):\n    out = []\n{calls}    return out\n"
    namespace: dict[str, object] = {}
    exec(compile(source, "generated.py", "exec"), namespace)

    def where(_: int) -> tuple[int | None, int]:
        frame = sys._getframe(1)
        return _line_of(frame.f_code, frame.f_lasti), frame.f_lineno

    found = namespace["define"](where)  # type: ignore[operator]
    assert len(found) == 400
    assert len({line for _, line in found}) == 400
    for ours, pythons in found:
        assert ours == pythons


def test_caller_location_skips_the_library_frames(make_project) -> None:  # type: ignore[no-untyped-def]
    source = textwrap.dedent(
        """
        from fleet import ClusterTemplate, Fleet, MagnumCluster, NodeGroup, OpenStackProject


        def define(fleet: Fleet) -> None:
            project = OpenStackProject(fleet, "p", project_name="P", region="cern")
            template = ClusterTemplate(
                name="t-1",
                kubernetes_version="v1.25.3",
                uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
            )
            MagnumCluster(
                fleet,
                "c",
                name="k8s-c-{env}",
                environments=["dev"],
                project=project,
                template=template,
                flavor="m2.large",
                keypair="k",
                node_count=1,
                node_groups=[
                    NodeGroup(name="zone-a", flavor="m2.large", node_count=1),
                ],
            )
        """
    )
    root = make_project({"clusters/located.py": source})
    fleet = testing.load_repository(FleetConfig.load(root))
    cluster = fleet.declaration("c")
    assert cluster.where == "clusters/located.py:12"
    assert cluster.node_groups[0].where == "clusters/located.py:23"  # type: ignore[attr-defined]


ARGUMENT_LINES = """\
from fleet import ClusterTemplate, Fleet, MagnumCluster, NodeGroup, OkeNodePool, OpenStackProject

T = ClusterTemplate(name="t-1", kubernetes_version="v1.25.3",
                    uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59")


def define(fleet: Fleet) -> None:
    project = OpenStackProject(fleet, "p", project_name="P")
    MagnumCluster(
        fleet,
        "c",
        name="k8s-c-{env}",
        environments=["dev"],
        project=project,
        template=T,
        {argument}
        flavor="m2.large",
        keypair="k",
        node_count=1,
    )
"""


@pytest.mark.parametrize(
    ("argument", "field", "message"),
    [
        # the argument checker (a str for an int), before anything is built
        ('master_count="3",', "master_count", "must be an integer"),
        # a bound of the option's table
        ("create_timeout_minutes=0,", "create_timeout_minutes", "must be 1 or more"),
        # an unknown keyword, with did-you-mean
        ("flavour='x',", "flavour", "unknown keyword argument"),
        # the declaration's own check, after the argument checks passed
        ('labels={"min_node_count": "1"},', "labels", "is set from min_node_count"),
        # a per_env key that is no environment
        ("master_count=per_env(dve=1),", "master_count", "per_env key 'dve'"),
        # a nested value's own check: its line inside the nested call
        (
            'node_groups=[NodeGroup(\n        name="default-worker", flavor="f", node_count=1)],',
            "name",
            "the node group Magnum creates",
        ),
    ],
)
def test_an_error_about_an_argument_names_its_line(  # type: ignore[no-untyped-def]
    make_project, argument: str, field: str, message: str
) -> None:
    from fleet.core.errors import DefinitionError, DefinitionErrors

    source = ARGUMENT_LINES.replace("{argument}", argument).replace(
        "import ClusterTemplate,", "import ClusterTemplate, per_env,"
    )
    lines = source.splitlines()
    # the line the argument's keyword (or the nested argument, the last of that name) is on
    wanted = max(i for i, text in enumerate(lines, 1) if text.lstrip().startswith(f"{field}="))
    assert wanted > lines.index("    MagnumCluster(") + 1  # not the call's first line
    root = make_project({"clusters/located.py": source})
    with pytest.raises((DefinitionError, DefinitionErrors)) as caught:
        testing.load_repository(FleetConfig.load(root))
    errors = getattr(caught.value, "errors", [caught.value])
    (error,) = [e for e in errors if e.field.split("[")[0] == field]
    assert error.where.split(" ")[0] == f"clusters/located.py:{wanted}", error.line()
    assert message in error.message


def test_a_one_line_call_and_an_unknown_file_keep_the_call_line() -> None:
    """Without the source (a module made by exec), the call's line is the fallback."""
    from fleet.core.errors import DefinitionError

    source = (
        "from fleet import NodeGroup\n"
        "def make():\n"
        "    return NodeGroup(\n"
        "        name='a',\n"
        "        flavor='f',\n"
        "        node_count='x',\n"
        "    )\n"
    )
    namespace: dict[str, object] = {}
    exec(compile(source, "<generated>", "exec"), namespace)
    with pytest.raises(DefinitionError) as caught:
        namespace["make"]()  # type: ignore[operator]
    assert caught.value.where.startswith("<generated>:3 ")


def test_a_construct_with_its_own_init_names_the_arguments_line(make_project) -> None:  # type: ignore[no-untyped-def]
    from fleet.core.errors import DefinitionErrors

    source = textwrap.dedent(
        """
        from fleet import Fleet, OpenStackProject


        def define(fleet: Fleet) -> None:
            OpenStackProject(
                fleet,
                "p",
                project_name="P",
                name="Not A DNS Name",
            )
        """
    )
    root = make_project({"clusters/located.py": source})
    with pytest.raises(DefinitionErrors) as caught:
        testing.load_repository(FleetConfig.load(root))
    (error,) = caught.value.errors
    assert error.where == "clusters/located.py:10 (p)", error.line()
    assert error.field == "name"


def test_loading_a_fleet_does_not_move_the_locations_of_another(
    make_project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    # A fleet built in Python (a user's unit test) names its lines relative to the current
    # folder, whatever other project this process loaded before; a loaded fleet's errors
    # raised later (a check of its own) stay relative to its project.
    from fleet import OpenStackProject
    from fleet.core.errors import FleetError
    from fleet.testing import fleet as empty_fleet

    def where() -> str:
        with pytest.raises(FleetError) as e:
            OpenStackProject(empty_fleet(), "p", project_name="P", region=3)  # type: ignore[arg-type]
        return str(e.value).split(" ")[0]

    monkeypatch.chdir(Path(__file__).parent.parent)
    before = where()
    assert before.startswith("tests/test_locations.py:")
    root = make_project(
        {
            "clusters/checks.py": (
                "from fleet import Check, Checks\n\n\n"
                "def mine(manifests, context):\n"
                "    raise ValueError('no')\n\n\n"
                "def define(fleet):\n"
                "    Checks.of(fleet).add(Check(name='mine', scope='environment', run=mine))\n"
            )
        }
    )
    (root / "clusters" / "c.py").write_text(
        "from fleet import ClusterTemplate, MagnumCluster, OpenStackProject\n\n"
        "T = ClusterTemplate(name='t', kubernetes_version='v1.29.2',\n"
        "                    uuid='3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59')\n\n\n"
        "def define(fleet):\n"
        "    p = OpenStackProject(fleet, 'p', project_name='P')\n"
        "    MagnumCluster(fleet, 'c', name='c', environments=['dev'], project=p, template=T,\n"
        "                  flavor='m2.small', keypair='k', node_count=1)\n"
    )
    config = FleetConfig.load(root)
    testing.load_repository(config)
    assert where() == before
    with pytest.raises(FleetError, match=r"^clusters/checks\.py:5: check mine: "):
        synthesize(config, ["dev"], jobs=1, use_cache=False)
    assert where() == before
