"""One Magnum cluster per datacenter, each in its own OpenStack project with its own template,
as one declaration (#19: "the same cluster in several environments becomes one declaration
with per_env"): ``MagnumCluster(project=per_env(...), template=per_env(...))``.

The shape is toolforge/paws @ e8f6524e (tests/fixtures/terraform/real/paws): one OpenTofu
configuration applied per Cloud VPS datacenter, each with its own project and template.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fleet import (
    ArgoCd,
    ClusterTemplate,
    DefinitionError,
    DefinitionErrors,
    Fleet,
    MagnumCluster,
    OpenStackProject,
    SecretKeyRef,
    TemplateCatalog,
    per_env,
    testing,
)
from fleet.views.graph import fleet_graph, to_mermaid
from fleet.views.inventory import inventory

DEV_UUID = "52cf344f-36f7-48ee-bdce-37889c33fd5c"
PROD_UUID = "7f44d9f2-3162-4af3-af88-bfe56159c5b7"
DEV_TEMPLATE = ClusterTemplate(
    name="paws-dev-127d",
    kubernetes_version="v1.27.8",
    base_labels={"kube_tag": "v1.27.8-rancher2"},
    uuid=DEV_UUID,
    flavor="g4.cores1.ram2.disk20",
    keypair="paws-magnum-vm",
)
PROD_TEMPLATE = ClusterTemplate(
    name="paws-127d",
    kubernetes_version="v1.27.8",
    base_labels={"kube_tag": "v1.27.8-rancher2"},
    uuid=PROD_UUID,
    flavor="g4.cores8.ram32.disk20",
    keypair="paws-magnum-vm",
)
MAGNUM = "containerinfra.openstack.crossplane.io"
CREDENTIALS = SecretKeyRef(name="argocd", namespace="crossplane-system", key="authToken")


def app(tmp_path: Path) -> Fleet:
    return testing.fleet(environments=["dev", "prod"], root=tmp_path)


def projects(fleet: Fleet, **declared: Any) -> tuple[OpenStackProject, OpenStackProject]:
    return (
        OpenStackProject(
            fleet, "pawsdev", project_name="pawsdev", region="codfw1dev-r", **declared
        ),
        OpenStackProject(fleet, "paws", project_name="paws", region="eqiad1-r", **declared),
    )


def paws(fleet: Fleet, **overrides: Any) -> MagnumCluster:
    """paws' cluster as one declaration: per_env name, project, template and node_count."""
    if "project" not in overrides:
        dev, prod = projects(fleet)
        overrides["project"] = per_env(dev=dev, prod=prod)
    args: dict[str, Any] = {
        "name": per_env(dev="paws-dev-127d", prod="paws-127d"),
        "environments": ["dev", "prod"],
        "template": per_env(dev=DEV_TEMPLATE, prod=PROD_TEMPLATE),
        "node_count": per_env(dev=2, prod=5),
        "inherit_from_template": True,
        "merge_labels": False,
    }
    args.update(overrides)
    return MagnumCluster(fleet, "paws-127d", **args)


def cluster_v1(out: testing.SynthOutput, env: str) -> dict[str, Any]:
    (body,) = [m.body for m in out.all("ClusterV1", env=env)]
    return body


# --- the render --------------------------------------------------------------------------------


def test_each_environment_renders_its_template_and_project(tmp_path: Path) -> None:
    fleet = app(tmp_path)
    paws(fleet)
    out = testing.synth(fleet, validate=True)  # references: each ProviderConfig is there
    for env, uuid, template, config in (
        ("dev", DEV_UUID, "paws-dev-127d", "pawsdev"),
        ("prod", PROD_UUID, "paws-127d", "paws"),
    ):
        body = cluster_v1(out, env)
        assert body["spec"]["forProvider"]["clusterTemplateId"] == uuid
        assert body["spec"]["providerConfigRef"] == {"name": config}
        assert body["metadata"]["annotations"]["fleet.openstack/cluster-template"] == template
        # A project renders only where a cluster uses it.
        assert out.names("ProviderConfig", env=env) == [config]


def test_a_single_project_and_template_render_as_before(tmp_path: Path) -> None:
    fleet = app(tmp_path)
    project = OpenStackProject(fleet, "p", project_name="P")
    cluster = paws(fleet, name="paws-{env}", project=project, template=PROD_TEMPLATE, node_count=1)
    out = testing.synth(fleet)
    assert out.names("ProviderConfig") == ["p", "p"]
    assert {
        cluster_v1(out, e)["spec"]["forProvider"]["clusterTemplateId"] for e in ("dev", "prod")
    } == {PROD_UUID}
    assert cluster.project is project and cluster.template is PROD_TEMPLATE


def test_a_template_by_name_and_a_project_by_reference_per_environment(tmp_path: Path) -> None:
    """A name is looked up among the fleet's templates, a reference resolved, once every
    ``define()`` has run (the project is declared after the cluster here)."""
    fleet = app(tmp_path)
    dev = OpenStackProject(fleet, "pawsdev", project_name="pawsdev")
    cluster = paws(
        fleet,
        project=per_env(dev=dev, prod=fleet.declaration("paws", OpenStackProject)),
        template=per_env(dev=DEV_TEMPLATE, prod="paws-127d"),
    )
    OpenStackProject(fleet, "paws", project_name="paws")
    TemplateCatalog.of(fleet).add(PROD_TEMPLATE)
    out = testing.synth(fleet, validate=True)
    assert cluster_v1(out, "prod")["spec"]["forProvider"]["clusterTemplateId"] == PROD_UUID
    assert cluster_v1(out, "prod")["spec"]["providerConfigRef"] == {"name": "paws"}
    assert cluster.resolved("prod").template is PROD_TEMPLATE
    assert cluster.project_for("prod").project_name == "paws"
    assert cluster.template_for("dev") is DEV_TEMPLATE


def test_a_missing_environment_names_the_argument(tmp_path: Path) -> None:
    fleet = app(tmp_path)
    dev, _ = projects(fleet)
    with pytest.raises(DefinitionError) as e:
        paws(fleet, project=per_env(dev=dev))
    assert "project: no value for environment 'prod' (given for: dev) and no default" in str(
        e.value
    )
    with pytest.raises(DefinitionError, match="template: no value for environment 'prod'"):
        paws(
            testing.fleet(environments=["dev", "prod"], root=tmp_path),
            template=per_env(dev=DEV_TEMPLATE),
        )


def test_a_per_env_key_that_is_no_environment_is_refused(tmp_path: Path) -> None:
    fleet = app(tmp_path)
    with pytest.raises(DefinitionError, match=r"template: per_env key 'prd' is not an environment"):
        paws(fleet, template=per_env(dev=DEV_TEMPLATE, prd=PROD_TEMPLATE))


def test_a_wrong_kind_in_a_per_env_is_refused(tmp_path: Path) -> None:
    fleet = app(tmp_path)
    dev, _ = projects(fleet)
    wrong = r"project\[prod\]: must be an OpenStackProject or a reference to an OpenStackProject"
    with pytest.raises(DefinitionError, match=wrong):
        paws(fleet, project=per_env(dev=dev, prod="paws"))
    with pytest.raises(DefinitionError, match="must be an OpenStackProject or a reference"):
        paws(fleet, project=per_env(dev=dev, prod=fleet.declaration("x", MagnumCluster)))


def test_reading_the_one_project_of_a_per_env_cluster_says_how(tmp_path: Path) -> None:
    fleet = app(tmp_path)
    cluster = paws(fleet)
    with pytest.raises(DefinitionError, match=r"project differs per environment: read project_for"):
        cluster.project  # noqa: B018
    with pytest.raises(DefinitionError, match=r"template differs per environment: read template_"):
        cluster.template  # noqa: B018


# --- one Magnum name, or two clouds --------------------------------------------------------------


def test_two_projects_in_two_environments_are_two_clouds(tmp_path: Path) -> None:
    """The same Magnum name in both environments, each through its own OpenStack project
    (paws: one project per datacenter): two Magnum clusters, no conflict."""
    fleet = app(tmp_path)
    dev = OpenStackProject(fleet, "a", project_name="pawsdev")
    prod = OpenStackProject(fleet, "b", project_name="paws")
    paws(fleet, name="paws-127d", project=per_env(dev=dev, prod=prod))
    out = testing.synth(fleet, validate=True)
    assert out.names("ClusterV1") == ["paws-127d", "paws-127d"]


def test_two_projects_that_declare_one_project_are_one_cloud(tmp_path: Path) -> None:
    """Two declarations of one project (same name, nothing else declared): only the Secrets
    could tell them apart, which the render cannot read, so it takes the user's word."""
    fleet = app(tmp_path)
    dev = OpenStackProject(fleet, "a", project_name="paws")
    prod = OpenStackProject(fleet, "b", project_name="paws")
    paws(fleet, name="paws-127d", project=per_env(dev=dev, prod=prod))
    with pytest.raises(DefinitionErrors) as e:
        fleet.run_phases()
    (error,) = e.value.errors
    assert "projects 'a' and 'b' declare the same project, region and auth_url" in str(error)

    apart = app(tmp_path / "apart")
    dev = OpenStackProject(apart, "a", project_name="paws", separate_clouds=True)
    prod = OpenStackProject(apart, "b", project_name="paws", separate_clouds=True)
    paws(apart, name="paws-127d", project=per_env(dev=dev, prod=prod))
    assert testing.synth(apart, validate=True).names("ClusterV1") == ["paws-127d", "paws-127d"]


def test_two_projects_that_declare_one_keystone_project_are_one_cloud(tmp_path: Path) -> None:
    fleet = app(tmp_path)
    same = {"auth_url": "https://keystone.example.org/v3", "project_id": "p1", "region": "r"}
    dev = OpenStackProject(fleet, "a", project_name="paws", **same)
    prod = OpenStackProject(fleet, "b", project_name="paws", **same)
    paws(fleet, name="paws-127d", project=per_env(dev=dev, prod=prod))
    with pytest.raises(DefinitionErrors) as e:
        fleet.run_phases()
    (error,) = e.value.errors
    assert str(error).endswith(
        "(paws-127d): name: environments dev and prod both render Magnum cluster 'paws-127d' "
        "in the same OpenStack project (project 'paws', region 'r'; projects 'a' and 'b' "
        "declare the same project, region and auth_url): each management cluster would adopt "
        "and reconcile the same cluster; put {env} in the name, or set separate_clouds=True "
        "on both projects if their credentials reach another cloud or project"
    )


def test_one_project_in_one_environment_stays_one_cloud(tmp_path: Path) -> None:
    """Two declarations in one environment, through two projects of one declared identity:
    one management cluster, both adopt the Magnum cluster (as before per_env)."""
    fleet = app(tmp_path)
    dev = OpenStackProject(fleet, "a", project_name="paws")
    other = OpenStackProject(fleet, "b", project_name="paws")
    paws(fleet, name="paws-127d", project=per_env(dev=dev, prod=other))
    MagnumCluster(
        fleet,
        "again",
        name="paws-127d",
        environments=["dev"],
        project=other,
        template=DEV_TEMPLATE,
        node_count=1,
        object_name="again",
    )
    with pytest.raises(DefinitionErrors) as e:
        fleet.run_phases()
    assert "Magnum cluster 'paws-127d' (dev) is also reached by cluster" in str(e.value)
    assert "both objects would adopt and reconcile the same cluster; rename one" in str(e.value)


# --- what the fleet shows per environment ----------------------------------------------------


def test_ls_graph_and_registration_per_environment(tmp_path: Path) -> None:
    fleet = app(tmp_path)
    paws(fleet)
    ArgoCd(fleet, "argocd", server_addr="argocd-server.argocd.svc:443", credentials=CREDENTIALS)
    out = testing.synth(fleet)
    rows = {row.environment: row for row in inventory(fleet)}
    assert (rows["dev"].account, rows["dev"].template) == ("pawsdev", "paws-dev-127d")
    assert (rows["prod"].account, rows["prod"].template) == ("paws", "paws-127d")
    # The workers' flavor is the template's (the cluster sets none): shown, as inherited.
    worker = rows["prod"].node_pools[0]
    assert (worker.machine_size, worker.size_inherited) == ("g4.cores8.ram32.disk20", True)
    assert rows["prod"].to_dict()["node_pools"][0]["machine_size_inherited"] is True
    graph = to_mermaid(fleet_graph(out.manifests, fleet=fleet))
    assert 'dev_cluster_paws_dev_127d["magnum paws-dev-127d<br/>2 nodes"]' in graph
    assert 'prod_cluster_paws_127d["magnum paws-127d<br/>5 nodes"]' in graph
    assert '("default-worker: 2 x g4.cores1.ram2.disk20 (inherited)")' in graph
    for env, template, region in (
        ("dev", "paws-dev-127d", "codfw1dev-r"),
        ("prod", "paws-127d", "eqiad1-r"),
    ):
        (registration,) = [
            m.body
            for m in out.all("Cluster", env=env)
            if m.api_version.startswith("cluster.argocd")
        ]
        labels = registration["spec"]["forProvider"]["labels"]
        assert (labels["fleet/template"], labels["fleet/region"]) == (template, region)


# --- fleet diff: a project changed in one environment is still a move ----------------------


def test_a_project_changed_in_one_environment_is_a_move_there_only(tmp_path: Path) -> None:
    """magnum ``_add_tenant_filters``: the cluster is not found in the new project, the
    provider creates a second one (:mod:`fleet.clouds.magnum.changes`); and the old
    ProviderConfig, which the base's ClusterV1 uses, is a deletion the guard refuses. What
    ``fleet diff`` says (``testing.diff``: every guard), and nothing else."""
    base_fleet = app(tmp_path)
    paws(base_fleet)
    head_fleet = app(tmp_path)
    _, prod = projects(head_fleet)
    moved = OpenStackProject(head_fleet, "codfw", project_name="codfw", region="codfw1dev-r")
    paws(head_fleet, project=per_env(dev=moved, prod=prod))
    out = testing.diff(base_fleet, head_fleet)
    assert all(f.level == "error" for f in out.findings)
    [move] = [f for f in out.findings if f.subject.startswith("ClusterV1 ")]
    assert (move.level, move.environment, move.subject) == (
        "error",
        "dev",
        f"ClusterV1 paws-dev-127d ({MAGNUM})",
    )
    assert move.message.startswith('spec.providerConfigRef: "pawsdev" -> "codfw" may move')
    [removed] = [f for f in out.findings if f is not move]
    assert removed.message.startswith(
        "ProviderConfig pawsdev (renamed to codfw?) removed (1 object in dev); "
    )
    assert "it can only go once nothing uses it" in removed.message
    [dev, prod_diff] = out.diff.environments
    assert [(r.kind, r.name) for r in dev.removed] == [("ProviderConfig", "pawsdev")]
    assert not prod_diff.removed and not prod_diff.changed
