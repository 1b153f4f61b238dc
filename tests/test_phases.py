"""Phases after every define(): Aspects, prepare() lookups, validations; no module order."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fleet import (
    ArgoRegistration,
    Aspects,
    ClusterTemplate,
    Component,
    DefinitionErrors,
    Fleet,
    FleetCluster,
    FleetConfig,
    JsonPatch,
    MagnumCluster,
    OpenStackProject,
    TemplateCatalog,
    testing,
)
from fleet.core.tree import TreeConstruct
from fleet.pipeline.synth import synthesize

PRELUDE = """\
from fleet import (ArgoCd, ArgoRegistration, Aspects, ClusterTemplate, Component, Fleet,
                   MagnumCluster, OpenStackProject, SecretKeyRef, TemplateCatalog)
"""

CLUSTERS = (
    PRELUDE
    + """
def define(fleet: Fleet) -> None:
    TemplateCatalog.of(fleet).add(
        ClusterTemplate(name="tpl", kubernetes_version="v1.29.2", base_labels={"kube_tag": "v1"},
                        uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59")
    )
    p = OpenStackProject(fleet, "proj", project_name="P")
    for env in ("dev", "prod"):
        MagnumCluster(fleet, f"zeta-{env}", name=f"zeta-{env}", environments=[env], project=p,
                      template="tpl", flavor="m2.small", keypair="k", node_count=1)
"""
)

# Loaded before clusters.py (a < z): it looks at declarations that do not exist yet when
# its define() runs.
REGISTRATIONS = (
    PRELUDE
    + """
class ProdLabel:
    def visit(self, node: object) -> None:
        from fleet import FleetCluster
        if isinstance(node, FleetCluster) and "prod" in node.environments:
            node.node.add_validation(
                lambda: [] if "tier" in node.fleet_labels else ["a prod cluster needs tier"]
            )


def define(fleet: Fleet) -> None:
    ArgoCd(fleet, "argocd", server_addr="argocd:443",
           credentials=SecretKeyRef(name="a", namespace="argocd", key="t"))
    ArgoRegistration(fleet, "zeta-dev-reg", cluster="zeta-dev", labels={"team": "z"})
    Aspects.of(fleet).add(ProdLabel())
"""
)


def test_a_module_loaded_first_sees_clusters_of_a_later_module(
    make_project: Callable[[dict[str, str]], Path],
) -> None:
    """a_registrations.py registers, by id, a cluster that z_clusters.py declares; before the
    phases this needed the modules in the other order."""
    root = make_project(
        {
            "clusters/a_registrations.py": REGISTRATIONS.replace(
                "Aspects.of(fleet).add(ProdLabel())", "pass"
            ),
            "clusters/z_clusters.py": CLUSTERS,
        }
    )
    fleet = testing.load_repository(FleetConfig.load(root))
    reg = fleet.declaration("zeta-dev-reg", ArgoRegistration).get()
    assert reg.environments == ("dev",)
    out = testing.synth(fleet)
    body = out.get("Cluster", "zeta-dev", env="dev")
    assert body["spec"]["forProvider"]["labels"]["team"] == "z"
    # zeta-prod is registered by the ArgoCd's default registration, without the label
    prod = out.get("Cluster", "zeta-prod", env="prod")
    assert "team" not in prod["spec"]["forProvider"]["labels"]


def test_an_aspect_policy_sees_every_module_and_fails_with_the_path(
    make_project: Callable[[dict[str, str]], Path],
) -> None:
    root = make_project(
        {"clusters/a_registrations.py": REGISTRATIONS, "clusters/z_clusters.py": CLUSTERS}
    )
    with pytest.raises(DefinitionErrors) as e:
        testing.load_repository(FleetConfig.load(root))
    [error] = e.value.errors
    assert error.line().startswith("clusters/z_clusters.py:")
    assert error.line().endswith("(zeta-prod): validation: a prod cluster needs tier")


def test_parallel_workers_run_the_same_phases(
    make_project: Callable[[dict[str, str]], Path],
) -> None:
    """Spawned workers load the fleet again: the registration by id, resolved in their own
    prepare phase, renders the same bytes as serially."""
    root = make_project(
        {
            "clusters/a_registrations.py": REGISTRATIONS.replace(
                "Aspects.of(fleet).add(ProdLabel())", "pass"
            ),
            "clusters/z_clusters.py": CLUSTERS,
        }
    )
    config = FleetConfig.load(root)
    serial = synthesize(config, validate=False, jobs=1, use_cache=False).files
    parallel = synthesize(config, validate=False, jobs=2, use_cache=False).files
    assert serial == parallel
    assert any("zeta-dev" in path for path in serial["dev"])


def test_registration_of_an_unknown_id_fails_in_prepare_with_did_you_mean(tmp_path: Path) -> None:
    app = build(tmp_path)
    ArgoRegistration(app, "reg", cluster="wbe")
    with pytest.raises(DefinitionErrors) as e:
        testing.synth(app)
    [error] = e.value.errors
    assert error.field == "cluster"
    assert error.where.endswith("(reg)")
    assert "no declaration with id 'wbe' (did you mean 'web'?)" in error.message


def test_registration_by_id_of_a_project_is_refused(tmp_path: Path) -> None:
    app = build(tmp_path)
    ArgoRegistration(app, "reg", cluster="proj")
    with pytest.raises(DefinitionErrors, match="'proj' is an OpenStackProject, not a FleetCluster"):
        testing.synth(app)


def build(tmp_path: Path) -> Fleet:
    app = testing.fleet(environments=["dev", "prod"], root=tmp_path)
    template = ClusterTemplate(
        name="tpl-ph",
        kubernetes_version="v1.29.2",
        uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
        base_labels={"kube_tag": "v1"},
    )
    TemplateCatalog.of(app).add(template)
    p = OpenStackProject(app, "proj", project_name="P")
    MagnumCluster(
        app,
        "web",
        name="web-{env}",
        environments=["dev", "prod"],
        project=p,
        template="tpl-ph",
        flavor="m2.small",
        keypair="k",
        node_count=1,
    )
    return app


class Tag:
    """An aspect that patches: an annotation on every ClusterV1 below its scope."""

    def __init__(self, key: str, value: str) -> None:
        self.key, self.value = key, value
        self.visited: list[str] = []

    def visit(self, node: TreeConstruct) -> None:
        self.visited.append(node.node.path)
        if isinstance(node, FleetCluster):
            node.add_json_patch(
                JsonPatch.add(f"/metadata/annotations/{self.key}", self.value), kind="ClusterV1"
            )


def test_aspects_apply_to_their_scope_and_below_parents_first(tmp_path: Path) -> None:
    app = build(tmp_path)
    team = Component(app, "team", environments=["dev"])
    MagnumCluster(
        team,
        "batch",
        name="batch",
        project=app.declaration("proj", OpenStackProject),
        template="tpl-ph",
        flavor="m2.small",
        keypair="k",
        node_count=1,
    )
    everywhere, team_only = Tag("fleet", "yes"), Tag("team", "yes")
    Aspects.of(app).add(everywhere)
    Aspects.of(team).add(team_only)
    out = testing.synth(app)
    assert everywhere.visited == ["", "proj", "web", "team", "team/batch"]
    assert team_only.visited == ["team", "team/batch"]
    batch = out.get("ClusterV1", "batch")["metadata"]["annotations"]
    web = out.get("ClusterV1", "web-dev")["metadata"]["annotations"]
    assert (batch["fleet"], batch["team"]) == ("yes", "yes")
    assert web["fleet"] == "yes" and "team" not in web


def test_a_validation_object_reports_each_message_at_its_declaration(tmp_path: Path) -> None:
    app = build(tmp_path)

    class NeedsTwoNodes:
        def validate(self) -> list[str]:
            return ["node_count must be 2 or more", "and a second problem"]

    app.declaration("web").defer(lambda web: web.node.add_validation(NeedsTwoNodes()))
    with pytest.raises(DefinitionErrors) as e:
        testing.synth(app)
    lines = [x.line() for x in e.value.errors]
    assert len(lines) == 2
    assert all("test_phases.py:" in line and "(web): validation: " in line for line in lines)


def test_an_aspect_without_visit_is_refused(tmp_path: Path) -> None:
    app = build(tmp_path)
    from fleet import DefinitionError

    bad: Any = object()
    with pytest.raises(DefinitionError, match="aspect: an aspect needs a visit"):
        Aspects.of(app).add(bad)
