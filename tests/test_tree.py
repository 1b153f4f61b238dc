"""The construct tree: scopes, ids per scope, paths in errors, immutability, lifecycle."""

from __future__ import annotations

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
    FleetCluster,
    FleetPackage,
    GitPath,
    JsonPatch,
    MagnumCluster,
    NodeGroup,
    OciClusterIdentity,
    OpenStackProject,
    TemplateCatalog,
    testing,
)


def template() -> ClusterTemplate:
    return ClusterTemplate(
        name="tpl-tree",
        kubernetes_version="v1.29.2",
        uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
        base_labels={"kube_tag": "v1.29.2"},
    )


def cluster(scope: Any, construct_id: str = "web", **overrides: Any) -> MagnumCluster:
    args: dict[str, Any] = {
        "name": f"{construct_id}-{{env}}",
        "environments": ["dev"],
        "project": overrides.pop("project", None)
        or OpenStackProject(scope, f"{construct_id}-project", project_name="P", region="cern"),
        "template": "tpl-tree",
        "flavor": "m2.large",
        "keypair": "key",
        "node_count": 1,
    }
    args.update(overrides)
    return MagnumCluster(scope, construct_id, **args)


@pytest.fixture
def app(tmp_path: Path) -> Fleet:
    fleet = testing.fleet(environments=["dev", "prod"], root=tmp_path)
    TemplateCatalog.of(fleet).add(template())  # clusters name it: template="tpl-tree"
    return fleet


class Team(Component):
    """A reusable component: a team's project and cluster in one class."""

    def __init__(self, scope: Any, construct_id: str, *, env: str) -> None:
        super().__init__(scope, construct_id, environments=[env])
        self.project = OpenStackProject(self, "project", project_name=f"TEAM {env}")
        self.cluster = cluster(
            self, "batch", name=f"{construct_id}-batch", environments=None, project=self.project
        )


def test_a_component_holds_declarations_and_ids_are_per_scope(app: Fleet) -> None:
    dev = Team(app, "team-dev", env="dev")
    prod = Team(app, "team-prod", env="prod")
    assert dev.cluster.node.path == "team-dev/batch"
    assert prod.cluster.node.path == "team-prod/batch"
    assert dev.cluster.environments == ("dev",)  # inherited from the component
    assert [c.node.id for c in dev.node.children] == ["project", "batch"]
    assert dev.node.scope is app and dev.cluster.node.scope is dev
    assert app.node.try_find_child("team-dev") is dev
    assert app.node.try_find_child("nope") is None
    out = testing.synth(app)
    assert out.names("ClusterV1") == ["team-dev-batch", "team-prod-batch"]
    assert out.get("ClusterV1", "team-prod-batch")["metadata"]["name"] == "team-prod-batch"


def test_find_all_is_parents_first_in_creation_order(app: Fleet) -> None:
    Team(app, "a", env="dev")
    Team(app, "b", env="prod")
    paths = [c.node.path for c in app.node.find_all()]
    assert paths == ["", "a", "a/project", "a/batch", "b", "b/project", "b/batch"]


def test_a_declaration_can_be_a_scope(app: Fleet) -> None:
    parent = cluster(app, "web")
    child = cluster(parent, "web2", environments=None)
    assert child.node.path == "web/web2"
    assert child.environments == parent.environments == ("dev",)


# --- names taken from ids -------------------------------------------------------------------


class Platform(Component):
    """A component with objects named by their ids: a project, an identity, a package."""

    def __init__(self, scope: Any, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, environments=["dev"], **kwargs)
        self.project = OpenStackProject(self, "project", project_name=f"TEAM {construct_id}")
        self.cluster = cluster(
            self, "batch", name=f"{construct_id}-batch", environments=None, project=self.project
        )
        self.identity = OciClusterIdentity(self, "oci", principal_secret="principal")
        self.package = FleetPackage(
            self, "monitoring", namespace="monitoring", source=GitPath(path="monitoring")
        )


def test_a_component_used_twice_names_its_objects_after_its_id(app: Fleet) -> None:
    a, b = Platform(app, "team-a"), Platform(app, "team-b")
    top = OpenStackProject(app, "project", project_name="TOP")  # top level: the id, as before
    assert (a.project.name, b.project.name, top.name) == (
        "team-a-project",
        "team-b-project",
        "project",
    )
    assert (a.identity.name, a.package.name) == ("team-a-oci", "team-a-monitoring")
    assert a.project.credentials.name == "team-a-project-openstack-credentials"
    out = testing.synth(app)
    assert out.names("ProviderConfig", env="dev") == ["team-a-project", "team-b-project"]
    assert out.get("ClusterV1", "team-b-batch")["spec"]["providerConfigRef"] == {
        "name": "team-b-project"
    }


def test_names_from_ids_follow_nested_prefixes_and_name_pins_one(app: Fleet) -> None:
    org = Component(app, "org", environments=["dev"])
    team = Component(org, "team-a", prefix="a")
    bare = Component(app, "bare", prefix="")
    assert OpenStackProject(team, "project", project_name="P").name == "org-a-project"
    assert OpenStackProject(bare, "project", project_name="P").name == "project"
    pinned = OpenStackProject(team, "pinned", project_name="P", name="legacy-name")
    assert pinned.name == "legacy-name"
    # A declaration used as a scope gives no prefix: only Components do.
    web = cluster(app, "web")
    assert OpenStackProject(web, "inner", project_name="P").name == "inner"


def test_a_component_id_that_is_no_name_prefix_fails_where_a_name_is_derived(app: Fleet) -> None:
    team = Component(app, "Team_A", environments=["dev"])
    assert OpenStackProject(team, "pinned", project_name="P", name="p").name == "p"
    with pytest.raises(DefinitionError) as e:
        OpenStackProject(team, "project", project_name="P")
    assert (e.value.field, e.value.where.endswith("(Team_A/project)")) == ("name", True)
    assert e.value.message.startswith(
        "the name taken from the id is prefixed by component 'Team_A', whose id 'Team_A' is no "
        "valid name prefix: pass name=, or give the component a prefix="
    )
    with pytest.raises(DefinitionError, match=r"\(bad\): prefix: must be lower-case letters"):
        Component(app, "bad", prefix="Bad_")


def test_a_duplicate_id_in_one_scope_names_both_places(app: Fleet) -> None:
    team = Team(app, "team", env="dev")
    with pytest.raises(DefinitionError) as e:
        OpenStackProject(team, "project", project_name="again")
    assert e.value.field == "id"
    assert "duplicate declaration 'project' in construct 'team'" in e.value.message
    assert "test_tree.py:" in e.value.message  # where the first one was declared


def test_a_duplicate_id_from_one_line_run_twice_never_points_at_itself(app: Fleet) -> None:
    def project(scope: Any) -> OpenStackProject:
        return OpenStackProject(scope, "p", project_name="P")

    project(app)
    call_line = sys._getframe().f_lineno + 2
    with pytest.raises(DefinitionError) as e:
        project(app)
    assert e.value.message.startswith(
        "duplicate declaration 'p' (this line ran twice for one scope; again when called from "
    )
    assert e.value.message.endswith(f"test_tree.py:{call_line})")
    assert "first at" not in e.value.message


def test_two_objects_of_one_name_from_one_component_line_name_both_paths(app: Fleet) -> None:
    for team in ("team-a", "team-b"):
        Platform(app, team)
    OpenStackProject(app, "again", project_name="P", name="team-a-project")
    cluster(app, "again-web", project=app.declaration("again", OpenStackProject))
    with pytest.raises(DefinitionErrors) as e:
        testing.synth(app, ["dev"])
    [error] = e.value.errors
    assert error.where.endswith("(again)")
    assert error.message.startswith(
        "two objects ProviderConfig team-a-project in dev: the other is "
    )
    assert error.message.endswith("(team-a/project)")


def test_two_objects_from_one_declaration_say_so(app: Fleet) -> None:
    groups = [NodeGroup(name=n, flavor="f", node_count=1) for n in ("a", "b")]
    web = cluster(app, node_groups=groups)
    OpenStackProject(app, "proj", project_name="P")
    web.add_json_patch(JsonPatch.replace("/metadata/name", "same"), kind="NodegroupV1")
    with pytest.raises(DefinitionErrors) as e:
        testing.synth(app, ["dev"])
    [error] = e.value.errors
    assert error.where.endswith("(web)")
    assert error.message == (
        "two objects NodegroupV1 same in dev: both rendered by this declaration (a json patch, "
        "or a name given twice?)"
    )


def test_errors_name_file_line_and_construct_path(app: Fleet) -> None:
    team = Component(app, "team", environments=["dev"])
    with pytest.raises(DefinitionError) as e:
        # a template object: one given by name is looked up, and its inputs checked, later
        cluster(team, "batch", environments=None, node_count=-1, template=template())
    assert e.value.where.startswith("tests/test_tree.py:") or "test_tree.py:" in e.value.where
    assert e.value.where.endswith("(team/batch)")


def test_a_component_narrows_environments_never_widens_them(app: Fleet) -> None:
    team = Component(app, "team", environments=["dev"])
    with pytest.raises(DefinitionError, match=r"environments: 'prod' is not one of the scope"):
        cluster(team, "batch", environments=["prod"])


def test_a_cluster_in_the_fleet_still_needs_environments(app: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"environments: required"):
        cluster(app, "web", environments=None)


def test_the_scope_must_be_a_construct(app: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"scope: the scope must be the Fleet"):
        OpenStackProject("fleet", "p", project_name="P")  # type: ignore[arg-type]


def test_fleet_declaration_finds_by_path_or_unique_id(app: Fleet) -> None:
    by_path = app.declaration("team-dev/batch", MagnumCluster)  # before it is declared
    dev = Team(app, "team-dev", env="dev")
    Team(app, "team-prod", env="prod")
    lookup_line = sys._getframe().f_lineno + 1
    by_id = app.declaration("project", OpenStackProject)
    with pytest.raises(DefinitionErrors) as e:
        app.run_phases()
    assert by_path.get() is dev.cluster
    [error] = e.value.errors
    assert error.message == (
        "2 declarations have id 'project'; name one by its path ('team-dev/project', "
        "'team-prod/project')"
    )
    assert error.where.endswith(f"test_tree.py:{lookup_line}") and error.field == "id"
    assert not by_id.is_resolved


def test_unknown_declaration_names_the_caller_and_the_nearest_id(app: Fleet) -> None:
    cluster(app, "ais-batch")
    app.declaration("ais-bacth")
    with pytest.raises(DefinitionErrors) as e:
        app.run_phases()
    [error] = e.value.errors
    assert "test_tree.py:" in error.where
    assert error.message == (
        "no declaration with id 'ais-bacth' (did you mean 'ais-batch' or 'ais-batch-project'?)"
    )


def test_find_child_offers_did_you_mean(app: Fleet) -> None:
    Team(app, "team", env="dev")
    with pytest.raises(DefinitionError) as e:
        app.node.find_child("taem")
    assert "test_tree.py:" in e.value.where
    assert "the fleet has no child 'taem' (did you mean 'team'?)" in e.value.message


def test_metadata_keeps_where_it_was_added(app: Fleet) -> None:
    c = cluster(app)
    c.node.add_metadata("owner", "team-a")
    [entry] = c.node.metadata
    assert (entry.type, entry.data) == ("owner", "team-a")
    assert "test_tree.py:" in entry.where


# --- immutability ---------------------------------------------------------------------------


def test_assigning_an_input_after_construction_fails(app: Fleet) -> None:
    c = cluster(app)
    other = ClusterTemplate(
        name="tpl-other", kubernetes_version="v1.30.1", uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59"
    )
    with pytest.raises(DefinitionError) as e:
        c.template = other
    assert e.value.field == "template"
    assert "MagnumCluster is immutable once constructed" in e.value.message
    assert e.value.where.endswith("(web)") and "test_tree.py:" in e.value.where
    app.run_phases()  # a template given by name is looked up once every define() ran
    assert c.template.name == "tpl-tree"


def test_deleting_an_attribute_fails(app: Fleet) -> None:
    c = cluster(app)
    with pytest.raises(DefinitionError, match="immutable"):
        del c.deletion_protection


def test_fleet_labels_cannot_be_changed_in_place(app: Fleet) -> None:
    c = cluster(app, fleet_labels={"tier": "gold"})
    with pytest.raises(TypeError):
        c.fleet_labels["tier"] = "bronze"  # type: ignore[index]


def test_json_patch_after_the_tree_is_locked_fails(app: Fleet) -> None:
    c = cluster(app)
    c.add_json_patch(JsonPatch.add("/metadata/labels", {"a": "b"}), kind="ClusterV1")
    out = testing.synth(app)  # runs the phases: the tree is locked
    assert out.get("ClusterV1", "web-dev")["metadata"]["labels"] == {"a": "b"}
    assert c.node.locked
    with pytest.raises(DefinitionError, match=r"add_json_patch: add_json_patch\(\) after the tree"):
        c.add_json_patch(JsonPatch.add("/metadata/labels", {"c": "d"}))


def test_no_declaration_after_the_tree_is_locked(app: Fleet) -> None:
    cluster(app)
    testing.synth(app)
    with pytest.raises(DefinitionError, match=r"id: cannot add 'late' to the fleet: the tree is"):
        OpenStackProject(app, "late", project_name="P")


# --- lifecycle keywords ---------------------------------------------------------------------


def test_lifecycle_keywords_keep_their_names(app: Fleet) -> None:
    c = cluster(
        app,
        deletion_protection=False,
        register_in_argocd=True,
        retired=["dev"],
        fleet_labels={"tier": "gold"},
    )
    assert isinstance(c, FleetCluster)
    assert (c.deletion_protection, c.register_in_argocd) == (False, True)
    assert c.retired_environments == frozenset({"dev"})
    assert dict(c.fleet_labels) == {"tier": "gold"}
    assert c.deletion_policy == "Delete"  # follows deletion_protection


def test_an_unknown_keyword_fails_naming_it(app: Fleet) -> None:
    with pytest.raises(DefinitionError) as e:
        cluster(app, deletion_protected=False)
    assert e.value.field == "deletion_protected"
    assert e.value.message == (
        "unknown keyword argument of MagnumCluster (did you mean 'deletion_protection'?)"
    )
    assert "test_tree.py:" in e.value.where


def test_an_unknown_keyword_of_a_node_group_free_cluster_in_oke(app: Fleet) -> None:
    from fleet import OciManagedCluster

    with pytest.raises(DefinitionError) as e:
        OciManagedCluster(app, "oke", name="oke", retierd=True)  # type: ignore[call-arg]
    assert (e.value.field, "did you mean 'retired'?" in e.value.message) == ("retierd", True)


def test_phase_errors_are_raised_again(app: Fleet) -> None:
    c = cluster(app)
    c.node.add_validation(lambda: ["always wrong"])
    for _ in range(2):
        with pytest.raises(DefinitionErrors, match="validation: always wrong"):
            testing.synth(app)


def test_node_groups_render_through_testing(app: Fleet) -> None:
    cluster(app, node_groups=[NodeGroup(name="zone-a", flavor="m2.large", node_count=2)])
    out = testing.synth(app, ["dev"])
    assert out.names("NodegroupV1", env="dev") == ["web-dev-zone-a"]


def test_a_users_subclass_passing_kwargs_on_still_works_and_is_checked(app: Fleet) -> None:
    class GoldCluster(MagnumCluster):
        def __init__(self, scope: Any, construct_id: str, **kwargs: Any) -> None:
            super().__init__(scope, construct_id, fleet_labels={"tier": "gold"}, **kwargs)

    project = OpenStackProject(app, "p", project_name="P")
    common: dict[str, Any] = {
        "name": "gold",
        "environments": ["dev"],
        "project": project,
        "template": "tpl-tree",
        "flavor": "m2.large",
        "keypair": "key",
        "node_count": 1,
    }
    gold = GoldCluster(app, "gold", **common)
    assert dict(gold.fleet_labels) == {"tier": "gold"}
    with pytest.raises(DefinitionError) as e:
        GoldCluster(app, "gold2", flavour="x", **common)
    assert e.value.field == "flavour"


def test_add_node_group_works_until_the_tree_is_locked(app: Fleet) -> None:
    c = cluster(app)
    c.add_node_group(NodeGroup(name="zone-b", flavor="m2.large", node_count=1))
    assert testing.synth(app).names("NodegroupV1") == ["web-dev-zone-b"]
    with pytest.raises(DefinitionError, match=r"add_node_group: add_node_group\(\) after the tree"):
        c.add_node_group(NodeGroup(name="zone-c", flavor="m2.large", node_count=1))
    assert [g.name for g in c.node_groups] == ["zone-b"]


def test_assigning_any_cloud_cluster_input_fails_after_construction(app: Fleet) -> None:
    """The sealing is in the base: every declaration, whatever its cloud, is immutable."""
    c = cluster(app)
    for name in ("node_groups", "environments", "project", "deletion_policy"):
        with pytest.raises(DefinitionError, match="immutable once constructed"):
            setattr(c, name, None)
