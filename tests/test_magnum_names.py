"""Real Magnum names (#19 item 2): Magnum's rules decide what is refused; the Magnum name is
rendered byte for byte where Magnum reads it; everything Kubernetes names takes a derived
(or pinned) DNS-1123 object name, checked for collisions. One Magnum name in several
environments of one project is refused (#21 item 2d).

Magnum's rules are those of openstack/magnum 22.0.0: ``magnum/api/controllers/v1/cluster.py``
(``name = wtypes.StringType(min_length=1, max_length=242, pattern='^[a-zA-Z][a-zA-Z0-9_.-]*$')``),
``magnum/api/controllers/v1/nodegroup.py`` and ``cluster_template.py`` (1..255, no pattern),
``magnum/objects/nodegroup.py`` ``NodeGroup.get`` (an int-like identifier is the id, a
UUID-like one the UUID), ``magnum/api/utils.py`` ``get_resource``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from builders import argocd
from support import REPO, tree_hash

from fleet import (
    ClusterTemplate,
    DefinitionError,
    DefinitionErrors,
    Fleet,
    MagnumCluster,
    NodeGroup,
    OpenStackProject,
    per_env,
    testing,
)
from fleet.cli.main import main
from fleet.clouds.magnum.names import int_like, uuid_like
from fleet.core.names import is_dns_label, is_label_value, label_value_from, object_name_from

REAL = REPO / "tests" / "fixtures" / "terraform" / "real"
UUID = "5a0c9d3e-1f2b-4c6d-8e7f-9a0b1c2d3e4f"
CLUSTER_UUID = "9137cd9f-cdd3-4f2c-bc3b-2d4b5155954f"
GROUP_UUID = "73c82c01-ba49-47b9-b43f-245b8640fbbc"


def template(name: str = "tpl", **overrides: Any) -> ClusterTemplate:
    args: dict[str, Any] = {
        "name": name,
        "kubernetes_version": "v1.26.8",
        "base_labels": {"kube_tag": "v1.26.8"},
        "uuid": UUID,
    }
    args.update(overrides)
    return ClusterTemplate(**args)


def cluster(app: Fleet, construct_id: str = "c", **overrides: Any) -> MagnumCluster:
    project = app.node.try_find_child("p") or OpenStackProject(app, "p", project_name="P")
    args: dict[str, Any] = {
        "name": construct_id,
        "environments": ["dev"],
        "project": project,
        "template": template(),
        "node_count": 1,
    }
    args.update(overrides)
    return MagnumCluster(app, construct_id, **args)


def only(out: testing.SynthOutput, kind: str) -> dict[str, Any]:
    (body,) = [m.body for m in out.all(kind)]
    return body


# --- the real fixtures' names --------------------------------------------------------------


def real_names() -> dict[str, list[tuple[str, bool]]]:
    """Every Magnum name of the real-Terraform fixtures (expected.yaml, written by hand from
    the states), by kind, with whether it is already a DNS-1123 label (``dns_label``)."""
    out: dict[str, list[tuple[str, bool]]] = {"cluster": [], "node group": [], "template": []}
    for path in sorted(REAL.glob("*/expected.yaml")):
        data = yaml.safe_load(path.read_text())
        for t in data.get("templates") or []:
            out["template"].append((t["magnum_name"], is_dns_label(t["magnum_name"])))
        for c in data.get("clusters") or []:
            for env in c["environments"].values():
                out["cluster"].append((env["magnum_name"], env["dns_label"]))
                for g in env.get("node_groups") or []:
                    out["node group"].append((g["magnum_name"], g["dns_label"]))
    return out


REAL_NAMES = real_names()


def test_the_real_fixtures_hold_non_dns_names() -> None:
    assert ("Cluster", False) in REAL_NAMES["cluster"]
    assert ("cluster_1", False) in REAL_NAMES["cluster"]
    assert ("user-m3.large", False) in REAL_NAMES["node group"]
    assert ("Kubernetes v1.26.8", False) in REAL_NAMES["template"]


@pytest.mark.parametrize("magnum_name,dns_label", REAL_NAMES["cluster"])
def test_every_real_cluster_name_renders_byte_identical(
    tmp_path: Path, magnum_name: str, dns_label: bool
) -> None:
    app = testing.fleet(environments=["dev"], root=tmp_path)
    cluster(app, "c", name=magnum_name)
    body = only(testing.synth(app, validate=True), "ClusterV1")
    assert body["spec"]["forProvider"]["name"] == magnum_name
    assert body["metadata"]["annotations"]["crossplane.io/external-name"] == magnum_name
    name = body["metadata"]["name"]
    assert is_dns_label(name)
    assert (name == magnum_name) is dns_label


@pytest.mark.parametrize("magnum_name,dns_label", REAL_NAMES["node group"])
def test_every_real_node_group_name_renders_byte_identical(
    tmp_path: Path, magnum_name: str, dns_label: bool
) -> None:
    app = testing.fleet(environments=["dev"], root=tmp_path)
    cluster(
        app,
        "c",
        name="Cluster",
        node_groups=[NodeGroup(name=magnum_name, flavor="f", node_count=1)],
    )
    body = only(testing.synth(app, validate=True), "NodegroupV1")
    assert body["spec"]["forProvider"]["name"] == magnum_name
    assert body["spec"]["forProvider"]["clusterId"] == "Cluster"
    assert (
        body["metadata"]["annotations"]["crossplane.io/external-name"] == f"Cluster/{magnum_name}"
    )
    suffix = body["metadata"]["name"].removeprefix("cluster-")
    assert is_dns_label(suffix)
    assert (suffix == magnum_name) is dns_label


@pytest.mark.parametrize("magnum_name,dns_label", REAL_NAMES["template"])
def test_every_real_template_name_is_kept_and_labelled_validly(
    tmp_path: Path, magnum_name: str, dns_label: bool
) -> None:
    app = testing.fleet(environments=["dev"], root=tmp_path)
    argocd(app)
    cluster(app, "c", template=template(magnum_name))
    out = testing.synth(app, validate=True)
    assert only(out, "ClusterV1")["metadata"]["annotations"][
        "fleet.openstack/cluster-template"
    ] == (magnum_name)
    registration = out.get("Cluster", "c")["spec"]["forProvider"]
    label = registration["labels"]["fleet/template"]
    assert is_label_value(label)
    if is_label_value(magnum_name):
        assert label == magnum_name
        assert "annotations" not in registration
    else:
        assert registration["annotations"] == {"fleet/template": magnum_name}


def test_cluster_named_like_terraforms_renders_every_kubernetes_name_from_the_object_name(
    tmp_path: Path,
) -> None:
    """ralgar/homelab's ``Cluster`` and a 2i2c node group ``user-m3.large``: the Magnum names
    go only where Magnum reads them (forProvider.name, the external names, clusterId)."""
    app = testing.fleet(environments=["dev"], root=tmp_path)
    argocd(app)
    cluster(
        app,
        "homelab",
        name="Cluster",
        template=template("Kubernetes v1.26.8"),
        node_groups=[NodeGroup(name="user-m3.large", flavor="m3.large", node_count=1)],
    )
    out = testing.synth(app, validate=True)
    body = out.get("ClusterV1", "cluster")
    assert body["spec"]["forProvider"]["name"] == "Cluster"
    assert body["spec"]["writeConnectionSecretToRef"]["name"] == "cluster"
    group = out.get("NodegroupV1", "cluster-user-m3-large")
    assert group["spec"]["forProvider"]["name"] == "user-m3.large"
    assert {m.folder for m in out.all() if m.kind in ("ClusterV1", "NodegroupV1")} == {
        "clusters/cluster"
    }
    registration = out.get("Cluster", "cluster")["spec"]["forProvider"]
    assert registration["name"] == "cluster"
    assert registration["labels"]["fleet/cluster"] == "cluster"
    assert registration["labels"]["fleet/template"] == "Kubernetes-v1.26.8"
    assert registration["config"]["kubeconfigSecretRef"]["name"] == "cluster"
    apps = [m.name for m in out.all("Application") if m.name.endswith("-cluster-cluster")]
    assert len(apps) == 1


def test_fleet_ls_shows_the_object_name_and_the_magnum_name(tmp_path: Path) -> None:
    from fleet.views.inventory import inventory

    app = testing.fleet(environments=["dev"], root=tmp_path)
    cluster(app, "c", name="cluster_1")
    app.run_phases()
    (row,) = inventory(app)
    assert (row.cluster, row.cloud_name) == ("cluster-1", "cluster_1")
    assert "magnum name 'cluster_1'" in row.notes()
    assert row.to_dict()["cloud_name"] == "cluster_1"


# --- the derivation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,expected",
    [
        ("Cluster", "cluster"),
        ("cluster_1", "cluster-1"),
        ("user-m3.large", "user-m3-large"),
        ("Kubernetes v1.26.8", "kubernetes-v1-26-8"),
        ("k8s--a__b..c", "k8s-a-b-c"),
        ("_edge_", "edge"),
        ("Zone É", "zone"),
        ("paws-dev-127d", "paws-dev-127d"),
    ],
)
def test_object_name_rule(name: str, expected: str) -> None:
    assert object_name_from(name) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Kubernetes v1.26.8", "Kubernetes-v1.26.8"),
        ("kubernetes-1.25.3-3-multi", "kubernetes-1.25.3-3-multi"),
        ("  a  b  ", "a-b"),
        ("-x_", "x"),
        ("日本", ""),
        ("a" * 62 + "_b", "a" * 62),
    ],
)
def test_label_value_rule(text: str, expected: str) -> None:
    assert label_value_from(text) == expected
    assert is_label_value(label_value_from(text))


@pytest.mark.parametrize("name", [n for kind in REAL_NAMES.values() for n, dns in kind if dns])
def test_a_dns_label_is_its_own_object_name(name: str) -> None:
    assert object_name_from(name) == name


# --- collisions and pins -------------------------------------------------------------------


def test_two_clusters_deriving_one_object_name_fail_naming_both(fleet: Fleet) -> None:
    cluster(fleet, "a", name="cluster_1")
    cluster(fleet, "b", name="Cluster-1", openstack_region="other")
    with pytest.raises(DefinitionErrors) as e:
        fleet.run_phases()
    message = str(e.value)
    assert (
        "(b): name: object name 'cluster-1' in dev (derived from 'Cluster-1') is also " in message
    )
    assert "cluster 'a' (derived from 'cluster_1') at " in message
    assert "pin another with object_name= on one of them" in message


def test_a_pinned_object_name_resolves_the_collision(tmp_path: Path) -> None:
    app = testing.fleet(environments=["dev", "prod"], root=tmp_path)
    cluster(app, "a", name="cluster_1-{env}", environments=["dev", "prod"])
    cluster(
        app,
        "b",
        name="Cluster-1-{env}",
        environments=["dev", "prod"],
        object_name="cluster-1b-{env}",
        openstack_region="other",
    )
    out = testing.synth(app, validate=True)
    assert out.names("ClusterV1", env="prod") == ["cluster-1-prod", "cluster-1b-prod"]
    body = out.get("ClusterV1", "cluster-1b-prod")
    assert body["spec"]["forProvider"]["name"] == "Cluster-1-prod"
    assert out.find("ClusterV1", "cluster-1b-prod").folder == "clusters/cluster-1b-prod"


def test_object_name_per_environment(tmp_path: Path) -> None:
    app = testing.fleet(environments=["dev", "prod"], root=tmp_path)
    cluster(
        app,
        "a",
        name=per_env(dev="Dev_A", prod="Prod_A"),
        environments=["dev", "prod"],
        object_name=per_env(dev="a-dev", prod="a-prod"),
    )
    out = testing.synth(app)
    assert out.names("ClusterV1") == ["a-dev", "a-prod"]


def test_a_bad_pin_is_refused(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"object_name: must be lower-case .* got 'Web'"):
        cluster(fleet, "a", name="Web", object_name="Web")


def test_a_name_too_long_to_derive_asks_for_a_pin(tmp_path: Path) -> None:
    long = "K" + "x" * 80  # Magnum takes 242
    with pytest.raises(DefinitionError, match=r"name: the Kubernetes name derived from .* has 81 "):
        cluster(testing.fleet(environments=["dev"], root=tmp_path), "a", name=long)
    app = testing.fleet(environments=["dev"], root=tmp_path)
    cluster(app, "b", name=long, object_name="short")
    body = testing.synth(app).get("ClusterV1", "short")
    assert body["spec"]["forProvider"]["name"] == long


def test_two_node_groups_deriving_one_object_name_fail_naming_both(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError) as e:
        cluster(
            fleet,
            "a",
            node_groups=[
                NodeGroup(name="user-m3.large", flavor="f", node_count=1),
                NodeGroup(name="user-m3_large", flavor="f", node_count=1),
            ],
        )
    message = str(e.value)
    assert "node group user-m3_large): object_name: node groups 'user-m3.large' (" in message
    assert "both have the object name 'user-m3-large'" in message
    assert "NodeGroup(object_name=...)" in message


def test_a_pinned_node_group_object_name(tmp_path: Path) -> None:
    app = testing.fleet(environments=["dev"], root=tmp_path)
    cluster(
        app,
        "a",
        node_groups=[
            NodeGroup(name="user-m3.large", flavor="f", node_count=1),
            NodeGroup(name="user-m3_large", flavor="f", node_count=1, object_name="user-m3-l2"),
        ],
    )
    out = testing.synth(app, validate=True)
    assert out.names("NodegroupV1") == ["a-user-m3-l2", "a-user-m3-large"]


def test_a_node_group_added_later_is_checked_for_collisions(fleet: Fleet) -> None:
    c = cluster(fleet, "a", node_groups=[NodeGroup(name="user.a", flavor="f", node_count=1)])
    with pytest.raises(DefinitionError, match="both have the object name 'user-a'"):
        c.add_node_group(NodeGroup(name="user_a", flavor="f", node_count=1))


# --- Magnum's rules: what is refused -------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["1cluster", "_c", "-c", ".c", "a b", "a/b", "a:b", "clüster", "c\n", "a" * 243]
)
def test_magnum_refuses_these_cluster_names(fleet: Fleet, name: str) -> None:
    with pytest.raises(DefinitionError, match="name: Magnum refuses the cluster name"):
        cluster(fleet, "a", name=name)


@pytest.mark.parametrize("name", ["Cluster", "cluster_1", "k8s.v1", "a-", "a" * 242])
def test_magnum_takes_these_cluster_names(tmp_path: Path, name: str) -> None:
    app = testing.fleet(environments=["dev"], root=tmp_path)
    cluster(app, "a", name=name, object_name="a" if len(name) > 63 else None)
    assert only(testing.synth(app), "ClusterV1")["spec"]["forProvider"]["name"] == name


def test_a_uuid_like_cluster_name_only_for_a_cluster_adopted_by_uuid(tmp_path: Path) -> None:
    name = "deadbeefdeadbeefdeadbeefdeadbeef"  # a letter first: Magnum takes it, reads a UUID
    assert uuid_like(name)
    with pytest.raises(DefinitionError, match=r"Magnum reads 'deadbeef.*' as a UUID"):
        cluster(testing.fleet(environments=["dev"], root=tmp_path), "a", name=name)
    app = testing.fleet(environments=["dev"], root=tmp_path)
    cluster(app, "b", name=name, external_name=CLUSTER_UUID)
    body = only(testing.synth(app), "ClusterV1")
    assert body["spec"]["forProvider"]["name"] == name


@pytest.mark.parametrize(
    "name,why",
    [
        ("7", "reads an integer"),
        ("-12", "reads an integer"),
        (GROUP_UUID, "reads it as the node group's UUID"),
        ("a/b", "'/' changes the URL"),
        ("a?b", "'\\?' changes the URL"),
        ("a#b", "'#' changes the URL"),
        ("a%20b", "'%' changes the URL"),
    ],
)
def test_node_group_names_the_provider_cannot_find(name: str, why: str) -> None:
    with pytest.raises(DefinitionError, match=f"name: the provider cannot find node group .*{why}"):
        NodeGroup(name=name, flavor="f", node_count=1)
    # adopted by Terraform's id, the name is only compared: fine
    NodeGroup(name=name, flavor="f", node_count=1, external_name=f"{CLUSTER_UUID}/{GROUP_UUID}")


@pytest.mark.parametrize("name", ["07", "Zone A", "user-m3.large", "x" * 255])
def test_magnum_takes_these_node_group_names(name: str) -> None:
    assert not int_like(name)  # oslo's is_int_like: str(int("07")) is "7", not "07"
    NodeGroup(name=name, flavor="f", node_count=1, object_name="x" if len(name) > 63 else None)


@pytest.mark.parametrize("name", ["", "x" * 256])
def test_magnum_refuses_these_node_group_names(name: str) -> None:
    with pytest.raises(DefinitionError, match="name: Magnum refuses a node group name of"):
        NodeGroup(name=name, flavor="f", node_count=1)


def test_magnum_refuses_a_template_name_over_255() -> None:
    with pytest.raises(DefinitionError, match="name: Magnum refuses a cluster template name of"):
        template("t" * 256)
    template("t" * 255)


def test_an_external_name_that_is_another_name_is_refused(fleet: Fleet) -> None:
    with pytest.raises(
        DefinitionError, match="external_name: 'Other' is neither the cluster's Magnum UUID nor"
    ):
        cluster(fleet, "a", name="Cluster", external_name="Other")
    cluster(fleet, "b", name="Cluster", external_name="Cluster", openstack_region="x")


# --- one Magnum name in several environments (#21 item 2d) ---------------------------------


def two_envs(app: Fleet, **overrides: Any) -> MagnumCluster:
    return cluster(app, "x", **{"name": "k8s-x", "environments": ["dev", "prod"], **overrides})


def refusal(app: Fleet) -> str:
    """The one error of the prepare phase."""
    with pytest.raises(DefinitionErrors) as e:
        app.run_phases()
    (error,) = e.value.errors
    return str(error)


def test_one_magnum_name_in_two_environments_of_one_project_is_refused(fleet: Fleet) -> None:
    """Magnum finds a cluster by name within the project (magnum 22.0.0
    ``magnum/db/sqlalchemy/api.py`` ``get_cluster_by_name``), and provider-openstack v0.9.0
    adopts what it finds (``config/external_name.go``: the Terraform id is the external
    name): both management clusters would reconcile one Magnum cluster."""
    two_envs(fleet)
    assert refusal(fleet).endswith(
        "(x): name: environments dev and prod both render Magnum cluster 'k8s-x' in the same "
        "OpenStack project (project 'P'): each management cluster would adopt and reconcile "
        "the same cluster; put {env} in the name, or set separate_clouds=True on project 'p' "
        "if each environment's credentials reach another cloud or project"
    )


def test_two_declarations_reaching_one_magnum_cluster_are_refused(fleet: Fleet) -> None:
    cluster(fleet, "a", name="web", environments=["dev"])
    cluster(fleet, "b", name="web", environments=["prod"])
    message = refusal(fleet)
    assert (
        "(b): name: Magnum cluster 'web' (prod) is also reached by cluster 'a' ('web', dev, "
        in message
    )
    assert "; rename one, or set separate_clouds=True on project 'p' if each" in message


def test_two_objects_of_one_environment_reaching_one_magnum_cluster(fleet: Fleet) -> None:
    """Pinned object names do not make two Magnum clusters of one name."""
    cluster(fleet, "a", name="web", object_name="a")
    cluster(fleet, "b", name="Web", object_name="b")
    message = refusal(fleet)
    assert "Magnum cluster 'Web' (dev) is also reached by cluster 'a' ('web', dev, " in message
    assert message.endswith(
        "(project 'P'): both objects would adopt and reconcile the same cluster; rename one"
    )


def test_names_that_differ_only_in_case_are_one_name_for_magnum(fleet: Fleet) -> None:
    """Magnum's tables are MySQL ``utf8`` (``magnum/db/sqlalchemy/models.py`` ``table_args``),
    whose default collation compares without case."""
    two_envs(fleet, name=per_env(dev="Web", prod="web"), object_name="web-{env}")
    assert "render Magnum cluster 'Web' and 'web' in the same" in refusal(fleet)


def test_the_same_uuid_in_two_environments_is_refused(fleet: Fleet) -> None:
    two_envs(fleet, external_name=CLUSTER_UUID)
    assert "environments dev and prod both render Magnum" in refusal(fleet)


@pytest.mark.parametrize(
    "overrides",
    [
        {"name": "k8s-x-{env}"},
        {"openstack_region": per_env(dev="east", prod="west")},
        {"external_name": per_env(dev=CLUSTER_UUID, prod=UUID)},
        {"retired": ["dev"]},
    ],
    ids=["env-in-name", "two-regions", "two-uuids", "retired-in-one"],
)
def test_one_name_in_two_environments_where_they_are_different_clusters(
    tmp_path: Path, overrides: dict[str, Any]
) -> None:
    app = testing.fleet(environments=["dev", "prod"], root=tmp_path)
    two_envs(app, **overrides)
    testing.synth(app, validate=True)


def test_a_project_whose_environments_are_separate_clouds(tmp_path: Path) -> None:
    app = testing.fleet(environments=["dev", "prod"], root=tmp_path)
    OpenStackProject(app, "p", project_name="P", separate_clouds=True)
    two_envs(app)
    out = testing.synth(app, validate=True)
    assert out.names("ClusterV1") == ["k8s-x", "k8s-x"]


def test_separate_clouds_do_not_separate_two_objects_of_one_environment(fleet: Fleet) -> None:
    OpenStackProject(fleet, "p", project_name="P", separate_clouds=True)
    two_envs(fleet)
    cluster(fleet, "other", name="K8s-x", environments=["prod"], object_name="other")
    message = refusal(fleet)  # both declared on one line (the helper's): by path
    assert "(x): name: Magnum cluster 'k8s-x' (prod) is also reached by cluster 'other'" in message
    assert "both objects would adopt and reconcile the same cluster; rename one" in message


def test_the_synth_refuses_it_in_one_line_and_leaves_dist_alone(
    make_project: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    good = CLUSTER_MODULE.replace("NAME", "k8s-x-{env}")
    root = make_project({"clusters/x.py": good})
    assert main(["--root", str(root), "synth"]) == 0
    before = tree_hash(root / "dist")
    capsys.readouterr()
    (root / "clusters" / "x.py").write_text(CLUSTER_MODULE.replace("NAME", "k8s-x"))
    assert main(["--root", str(root), "synth"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: clusters/x.py:")
    assert "environments dev and prod both render Magnum cluster 'k8s-x'" in err[0]
    assert tree_hash(root / "dist") == before


CLUSTER_MODULE = """\
from fleet import ClusterTemplate, Fleet, MagnumCluster, OpenStackProject


def define(fleet: Fleet) -> None:
    MagnumCluster(
        fleet,
        "x",
        name="NAME",
        environments=["dev", "prod"],
        project=OpenStackProject(fleet, "p", project_name="P"),
        template=ClusterTemplate(
            name="Kubernetes v1.26.8", kubernetes_version="v1.26.8",
            uuid="5a0c9d3e-1f2b-4c6d-8e7f-9a0b1c2d3e4f",
        ),
        node_count=1,
    )
"""


def test_a_package_selecting_a_template_by_its_magnum_name_is_told_the_label(fleet: Fleet) -> None:
    from fleet import FleetPackage, GitPath

    with pytest.raises(
        DefinitionError,
        match=r"match_labels: label 'fleet/template': value must be .* got 'Kubernetes v1\.26\.8' "
        r"\(the fleet's fleet/template label holds 'Kubernetes-v1\.26\.8' for it\)",
    ):
        FleetPackage(
            fleet,
            "pkg",
            source=GitPath(repo_url="https://git.example.org/p.git", path="p"),
            namespace="p",
            match_labels={"fleet/template": "Kubernetes v1.26.8"},
        )
