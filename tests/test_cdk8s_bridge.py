"""The cdk8s bridge: a declaration whose scope is a cdk8s construct joins its fleet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fleet import (
    ClusterTemplate,
    Component,
    DefinitionError,
    DefinitionErrors,
    Fleet,
    MagnumCluster,
    OpenStackProject,
    TemplateCatalog,
    testing,
)


def magnum(scope: Any, construct_id: str, project: OpenStackProject, **kw: Any) -> MagnumCluster:
    return MagnumCluster(
        scope,
        construct_id,
        name=kw.pop("name", construct_id),
        project=project,
        template="tpl-bridge",
        flavor="m2.small",
        keypair="k",
        node_count=1,
        **kw,
    )


@pytest.fixture
def app(tmp_path: Path) -> Fleet:
    fleet = testing.fleet(environments=["dev", "prod"], root=tmp_path)
    template = ClusterTemplate(
        name="tpl-bridge",
        kubernetes_version="v1.29.2",
        uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
        base_labels={"k": "v"},
    )
    TemplateCatalog.of(fleet).add(template)
    return fleet


def test_a_declaration_in_an_environment_chart_takes_its_environment(app: Fleet) -> None:
    project = OpenStackProject(app, "proj", project_name="P")
    web = magnum(app.environment("prod"), "web", project)
    assert web.environments == ("prod",)
    assert web.node.path == "prod/web"
    ref = app.declaration("prod/web", MagnumCluster)
    out = testing.synth(app)
    assert ref.get() is web  # a declaration in a chart is found by its cdk8s path
    assert out.names("ClusterV1", env="prod") == ["web"]
    assert out.names("ClusterV1", env="dev") == []
    # rendered by the fleet as plain dicts, into the cluster's folder (not cdk8s's extra/)
    assert out.find("ClusterV1", "web").folder == "clusters/web"


def test_a_users_construct_subclass_holds_declarations(app: Fleet) -> None:
    import cdk8s
    from constructs import Construct

    class Team(Construct):
        def __init__(self, scope: Construct, construct_id: str, project: OpenStackProject) -> None:
            super().__init__(scope, construct_id)
            self.cluster = magnum(self, "batch", project, name=f"{construct_id}-batch")
            cdk8s.ApiObject(
                self, "ns", api_version="v1", kind="Namespace", metadata={"name": construct_id}
            )

    project = OpenStackProject(app, "proj", project_name="P")
    team = Team(app.environment("dev"), "team-a", project)
    assert team.cluster.node.path == "dev/team-a/batch"
    assert team.cluster.environments == ("dev",)
    out = testing.synth(app)
    assert out.get("ClusterV1", "team-a-batch", env="dev")["metadata"]["name"] == "team-a-batch"
    # the id reserved in the cdk8s tree renders nothing of its own in cdk8s
    assert out.names("Namespace", env="dev") == ["team-a"]


def test_the_id_is_reserved_in_the_cdk8s_tree(app: Fleet) -> None:
    import cdk8s

    project = OpenStackProject(app, "proj", project_name="P")
    chart = app.environment("dev")
    cdk8s.ApiObject(chart, "web", api_version="v1", kind="Namespace", metadata={"name": "w"})
    with pytest.raises(DefinitionError) as e:
        magnum(chart, "web", project)
    assert e.value.field == "id"
    assert "duplicate declaration 'web' in cdk8s construct 'dev'" in e.value.message
    assert "test_cdk8s_bridge.py:" in e.value.where


def test_two_cdk8s_objects_of_one_name_name_their_construct_paths(app: Fleet) -> None:
    import cdk8s
    from constructs import Construct

    for team in ("team-a", "team-b"):
        scope = Construct(app.environment("dev"), team)
        cdk8s.ApiObject(scope, "ns", api_version="v1", kind="Namespace", metadata={"name": "same"})
    cdk8s.ApiObject(
        app.environment("dev"), "other", api_version="v1", kind="Namespace", metadata={"name": "o"}
    )
    with pytest.raises(DefinitionErrors) as e:
        testing.synth(app, ["dev"])
    [error] = e.value.errors
    assert error.line() == (
        "cdk8s dev/team-b/ns: name: two objects Namespace same in dev: the other is "
        "cdk8s dev/team-a/ns"
    )


def test_an_explicit_environment_must_be_the_charts(app: Fleet) -> None:
    project = OpenStackProject(app, "proj", project_name="P")
    with pytest.raises(DefinitionError, match="environments: 'dev' is not one of the scope"):
        magnum(app.environment("prod"), "web", project, environments=["dev"])


def test_a_chart_outside_the_fleet_is_refused(app: Fleet) -> None:
    import cdk8s

    project = OpenStackProject(app, "proj", project_name="P")
    foreign = cdk8s.Chart(cdk8s.App(), "elsewhere")
    with pytest.raises(DefinitionError, match="scope: a cdk8s scope must be inside one of"):
        magnum(foreign, "web", project)


def test_a_component_in_a_chart_passes_the_environment_down(app: Fleet) -> None:
    team = Component(app.environment("dev"), "team")
    project = OpenStackProject(team, "proj", project_name="P")
    web = magnum(team, "web", project)
    assert (web.node.path, web.environments) == ("dev/team/web", ("dev",))
    assert project.environments == ("dev",)


def test_a_fleet_with_components_never_imports_cdk8s(tmp_path: Path) -> None:
    script = f"""
import sys
from pathlib import Path
from fleet import (ClusterTemplate, Component, MagnumCluster, OpenStackProject,
                   TemplateCatalog, testing)
app = testing.fleet(root=Path({str(tmp_path)!r}))
TemplateCatalog.of(app).add(
    ClusterTemplate(name="t", kubernetes_version="v1.29.2", base_labels={{"k": "v"}},
                    uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59")
)
team = Component(app, "team", environments=["dev"])
p = OpenStackProject(team, "p", project_name="P")
MagnumCluster(team, "c", name="c", project=p, template="t", flavor="f", keypair="k",
              node_count=1)
assert testing.synth(app).names("ClusterV1") == ["c"]
print(sorted(m for m in ("cdk8s", "jsii", "constructs") if m in sys.modules))
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
