"""Definition locations (``file:line``) name the line a declaration was written on."""

from __future__ import annotations

import sys
import textwrap

from fleet.core.config import FleetConfig
from fleet.core.values import _line_of
from fleet.pipeline.discovery import load_fleet


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
    fleet = load_fleet(FleetConfig.load(root))
    cluster = fleet.declaration("c")
    assert cluster.where == "clusters/located.py:12"
    assert cluster.node_groups[0].where == "clusters/located.py:23"  # type: ignore[attr-defined]
