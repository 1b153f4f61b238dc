"""References: declarations named by id or path in define(), resolved after every define().

The fixture fleet ``order`` has modules that reach both ways: ``a_patches.py`` patches and
registers clusters that ``z_clusters.py`` declares, ``z_clusters.py`` uses the project and
the template of ``m_platform.py``, and ``b_patches.py`` patches a field ``a_patches.py`` set.
"""

from __future__ import annotations

import importlib
import itertools
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from support import FIXTURE_FLEETS

from fleet import (
    ArgoRegistration,
    Aspects,
    ClusterTemplate,
    DefinitionError,
    DefinitionErrors,
    Fleet,
    FleetCluster,
    FleetConfig,
    JsonPatch,
    MagnumCluster,
    NodeGroup,
    OciManagedCluster,
    OpenStackProject,
    Ref,
    TemplateCatalog,
    testing,
)
from fleet.core.values import location_root
from fleet.pipeline.render import check_unique, render_environment, to_files

ORDER = FIXTURE_FLEETS / "order"
UUID = "3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59"


@contextmanager
def _clusters_package(root: Path) -> Iterator[None]:
    """``clusters`` imported fresh from ``root``, and forgotten afterwards."""

    def purge() -> None:
        for name in [m for m in sys.modules if m == "clusters" or m.startswith("clusters.")]:
            del sys.modules[name]

    purge()
    saved = list(sys.path)
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        purge()
        sys.path[:] = saved


def render_in_order(root: Path, modules: Sequence[str]) -> dict[str, dict[str, bytes]]:
    """Every environment's files, the modules' ``define()`` called in ``modules`` order."""
    config = FleetConfig.load(root)
    fleet = Fleet(config)
    out = {}
    with location_root(root):
        with _clusters_package(root):
            for name in modules:
                importlib.import_module(f"clusters.{name}").define(fleet)
        fleet.run_phases()
        for env in fleet.environment_names:
            manifests = render_environment(fleet, env)
            check_unique(manifests)
            out[env] = to_files(manifests)
    return out


def test_every_module_order_renders_the_same_bytes() -> None:
    modules = sorted(p.stem for p in (ORDER / "clusters").glob("[!_]*.py"))
    assert modules == ["a_patches", "b_patches", "m_platform", "z_clusters"]
    by_file_name = render_in_order(ORDER, modules)
    for order in itertools.permutations(modules):
        assert render_in_order(ORDER, order) == by_file_name, order
    # ... and it is what `fleet synth` renders
    rendered = testing.synth_repository(FleetConfig.load(ORDER), validate=False, use_cache=False)
    assert rendered.files == by_file_name


def test_mutators_called_on_references_apply_in_file_order() -> None:
    files = render_in_order(ORDER, ["z_clusters", "m_platform", "b_patches", "a_patches"])
    web = files["prod"][
        "clusters/web-prod/clusterv1_containerinfra.openstack.crossplane.io_web-prod.yaml"
    ]
    assert b"labels:\n    tier: b\n" in web  # a_patches adds tier: a, b_patches replaces it
    assert b"    owner: b\n" in web  # so do their Aspects
    assert (
        "clusters/web-prod/nodegroupv1_containerinfra.openstack.crossplane.io_web-prod-zone-b.yaml"
        in files["prod"]
    )
    registration = files["prod"]["clusters/api/cluster_cluster.argocd.crossplane.io_api.yaml"]
    assert b"project: api" in registration  # cluster="team/api": by path, declared later
    assert "platform/providerconfig_openstack.crossplane.io_shared.yaml" in files["dev"]


# --- the reference API ------------------------------------------------------------------------


def template() -> ClusterTemplate:
    return ClusterTemplate(name="tpl-ref", kubernetes_version="v1.29.2", uuid=UUID)


def cluster(app: Fleet, construct_id: str = "web", **overrides: Any) -> MagnumCluster:
    args: dict[str, Any] = {
        "name": f"{construct_id}-{{env}}",
        "environments": ["dev"],
        "project": app.declaration("proj", OpenStackProject),
        "template": template(),
        "flavor": "m2.large",
        "keypair": "k",
        "node_count": 1,
    }
    args.update(overrides)
    return MagnumCluster(app, construct_id, **args)


@pytest.fixture
def app(tmp_path: Path) -> Fleet:
    return testing.fleet(environments=["dev", "prod"], root=tmp_path)


def test_a_reference_is_typed_and_resolves_in_prepare(app: Fleet) -> None:
    web: Ref[MagnumCluster] = app.declaration("web", MagnumCluster)
    assert not web.is_resolved and repr(web) == "Ref[MagnumCluster]('web', unresolved)"
    declared = cluster(app)
    OpenStackProject(app, "proj", project_name="P")  # after the cluster that uses it
    out = testing.synth(app)
    assert web.is_resolved and web.get() is declared
    assert web.environments == ("dev",)  # resolved: attributes read through
    assert declared.project.name == "proj"
    assert out.names("ProviderConfig", env="dev") == ["proj"]
    assert out.names("ProviderConfig", env="prod") == []  # where its clusters are only
    # After the phases, a look-up resolves at once.
    assert app.declaration("proj", OpenStackProject).get() is declared.project


def test_reading_a_reference_in_define_fails_naming_the_read_and_the_look_up(
    app: Fleet,
) -> None:
    lookup_line = sys._getframe().f_lineno + 1
    web = app.declaration("web", MagnumCluster)
    with pytest.raises(DefinitionError) as e:
        web.environments  # noqa: B018
    assert e.value.field == "environments"
    assert "test_refs.py:" in e.value.where
    assert e.value.message == (
        f"'web' (looked up at {e.value.where.rpartition(':')[0]}:{lookup_line}) is resolved once "
        "every define() has run: pass the reference on, call its mutators (applied then), or "
        "read it in an Aspect or prepare()"
    )
    with pytest.raises(DefinitionError, match=r"get\(\): 'web' \(looked up at "):
        web.get()
    assert getattr(web, "environments", None) is None  # probing treats it as absent
    cluster_ = cluster(app)
    with pytest.raises(DefinitionError, match=r"project: 'proj' \(looked up at "):
        cluster_.project  # noqa: B018


def test_an_unknown_id_fails_in_prepare_at_the_look_up_with_did_you_mean(app: Fleet) -> None:
    cluster(app)
    OpenStackProject(app, "proj", project_name="P")
    lookup_line = sys._getframe().f_lineno + 1
    app.declaration("wbe", MagnumCluster).add_json_patch(JsonPatch.remove("/spec"))
    with pytest.raises(DefinitionErrors) as e:
        app.run_phases()
    [error] = e.value.errors
    assert error.where.endswith(f"test_refs.py:{lookup_line}") and error.field == "id"
    assert error.message == "no declaration with id 'wbe' (did you mean 'web'?)"
    with pytest.raises(DefinitionErrors):  # the same errors, again
        testing.synth(app)


def test_a_reference_of_another_kind_fails(app: Fleet) -> None:
    OpenStackProject(app, "proj", project_name="P")
    app.declaration("proj", MagnumCluster)
    with pytest.raises(DefinitionErrors, match=r"id: 'proj' is an OpenStackProject, not a Magnum"):
        app.run_phases()


def test_mutators_on_a_reference_apply_in_prepare_before_aspects(app: Fleet) -> None:
    web = app.declaration("web", MagnumCluster)
    web.add_node_group(NodeGroup(name="zone-b", flavor="m2.large", node_count=1))
    web.add_json_patch(JsonPatch.add("/metadata/labels", {"tier": "gold"}), kind="ClusterV1")
    web.defer(lambda c: c.add_node_group(NodeGroup(name="zone-c", flavor="m2.large", node_count=2)))
    seen: list[list[str]] = []

    class Groups:
        def visit(self, node: object) -> None:
            if isinstance(node, MagnumCluster):
                seen.append([g.name for g in node.node_groups])

    Aspects.of(app).add(Groups())
    cluster(app, node_groups=[NodeGroup(name="zone-a", flavor="m2.large", node_count=1)])
    OpenStackProject(app, "proj", project_name="P")
    out = testing.synth(app)
    assert seen == [["zone-a", "zone-b", "zone-c"]]
    assert out.names("NodegroupV1") == ["web-dev-zone-a", "web-dev-zone-b", "web-dev-zone-c"]
    assert out.get("ClusterV1", "web-dev")["metadata"]["labels"] == {"tier": "gold"}


def test_a_deferred_mutators_error_names_the_line_that_called_it(app: Fleet) -> None:
    cluster(app, node_groups=[NodeGroup(name="zone-a", flavor="m2.large", node_count=1)])
    OpenStackProject(app, "proj", project_name="P")
    call_line = sys._getframe().f_lineno + 1
    app.declaration("web", MagnumCluster).add_node_group(
        NodeGroup(name="zone-a", flavor="m2.large", node_count=1)
    )
    with pytest.raises(DefinitionErrors) as e:
        app.run_phases()
    [error] = e.value.errors
    assert error.where.endswith(f"test_refs.py:{call_line} (web)")
    assert (error.field, error.message) == ("node_groups", "duplicate node group name 'zone-a'")


def test_every_clouds_pool_mutator_is_recorded_on_a_reference(app: Fleet) -> None:
    for kind, name in ((MagnumCluster, "add_node_group"), (OciManagedCluster, "add_node_pool")):
        deferred = getattr(app.declaration("web", kind), name)
        assert callable(deferred) and deferred.__name__ == "deferred"


def test_a_mistyped_mutator_fails_at_once_with_did_you_mean(app: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"add_node_grup: MagnumCluster has no method "):
        app.declaration("web", MagnumCluster).add_node_grup  # noqa: B018


def test_an_aspect_sees_a_registration_by_id_placed_in_its_clusters_environments(
    app: Fleet,
) -> None:
    seen: dict[str, tuple[str, ...]] = {}

    class Environments:
        def visit(self, node: object) -> None:
            if isinstance(node, (ArgoRegistration, FleetCluster)):
                seen[node.node.path] = node.environments

    Aspects.of(app).add(Environments())
    ArgoRegistration(app, "reg", cluster="web")
    cluster(app, environments=["prod"])
    OpenStackProject(app, "proj", project_name="P")
    app.run_phases()
    assert seen == {"reg": ("prod",), "web": ("prod",)}


def test_a_template_by_name_comes_from_any_module(app: Fleet) -> None:
    cluster(app, template="tpl-ref")
    OpenStackProject(app, "proj", project_name="P")
    TemplateCatalog.of(app).add(template())
    assert (
        testing.synth(app).get("ClusterV1", "web-dev")["spec"]["forProvider"]["clusterTemplateId"]
        == UUID
    )


def test_type_checkers_see_the_kind(tmp_path: Path) -> None:
    """mypy --strict on a user module: the reference's type, its target's, and a mistake."""
    module = tmp_path / "user_fleet.py"
    module.write_text(
        "from fleet import Fleet, MagnumCluster, NodeGroup, OpenStackProject, Ref\n"
        "\n"
        "\n"
        "def define(fleet: Fleet) -> None:\n"
        '    web = fleet.declaration("web", MagnumCluster)\n'
        "    reveal_type(web)\n"
        "    reveal_type(web.get())\n"
        '    project: Ref[OpenStackProject] = fleet.declaration("web", MagnumCluster)\n'
        '    web.defer(lambda c: c.add_node_group(NodeGroup(name="a", flavor="f", node_count=1)))\n'
        '    web.defer(lambda c: c.add_node_group("a"))\n'
    )
    root = Path(__file__).resolve().parents[1]
    # A process of its own: the suite's other tests move sys.path and the location root.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", str(module)],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    out, status = result.stdout, result.returncode
    lines = [line.split(": ", 1)[1] for line in out.splitlines() if "user_fleet.py:" in line]
    assert status == 1 and len(lines) == 4, (out, result.stderr)
    assert lines == [
        'note: Revealed type is "fleet.core.refs.Ref[fleet.clouds.magnum.cluster.MagnumCluster]"',
        'note: Revealed type is "fleet.clouds.magnum.cluster.MagnumCluster"',
        'error: Argument 2 to "declaration" of "Fleet" has incompatible type '
        '"type[MagnumCluster]"; expected "type[OpenStackProject]"  [arg-type]',
        'error: Argument 1 to "add_node_group" of "MagnumCluster" has incompatible type "str"; '
        'expected "NodeGroup"  [arg-type]',
    ]
