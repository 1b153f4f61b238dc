"""MagnumCluster, NodeGroup, OpenStackProject and ClusterTemplate: output and input checks."""

from __future__ import annotations

from typing import Any

import pytest
from crd_samples import SEED_LABELS as FIGURE_12_LABELS

from fleet import (
    ClusterTemplate,
    DefinitionError,
    DefinitionErrors,
    Fleet,
    JsonPatch,
    MagnumCluster,
    NodeGroup,
    OpenStackProject,
    per_env,
)

PROTECTED = {"argocd.argoproj.io/sync-options": "Prune=false,Delete=false"}


def small_template(name: str = "tpl-small") -> ClusterTemplate:
    return ClusterTemplate(
        name=name,
        kubernetes_version="v1.29.2",
        base_labels={"kube_tag": "v1.29.2", "manila_enabled": "false"},
        optional_labels=["availability_zone"],
        changing_labels=["manila_enabled"],
    )


def small_cluster(fleet: Fleet, **overrides: Any) -> MagnumCluster:
    project = overrides.pop("project", None) or OpenStackProject(fleet, "proj", project_name="P")
    args: dict[str, Any] = {
        "name": "c1",
        "environments": ["dev"],
        "project": project,
        "template": small_template(),
        "flavor": "m2.small",
        "keypair": "key",
        "node_count": 1,
    }
    args.update(overrides)
    return MagnumCluster(fleet, "c1", **args)


def bodies(fleet: Fleet, environment: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (m.kind, m.name): m.body for c in fleet.declarations() for m in c.manifests(environment)
    }


def seed_fleet(fleet: Fleet) -> None:
    template = ClusterTemplate(
        name="kubernetes-1.25.3-3-multi",
        kubernetes_version="v1.25.3",
        base_labels=FIGURE_12_LABELS,
    )
    jeedy = OpenStackProject(fleet, "jeedy-ais", project_name="JEEDY AIS")
    MagnumCluster(
        fleet,
        "ais-batch",
        name="k8s-ais-batch-{env}-multi-v25",
        environments=["dev"],
        project=jeedy,
        template=template,
        flavor="m2.xlarge",
        keypair="shared-jeedy-key",
        create_timeout_minutes=60,
        master_count=1,
        node_count=1,
        node_groups=[
            NodeGroup(
                name=f"zone-{z}-xlarge",
                flavor="m2.xlarge",
                node_count=n,
                availability_zone=f"cern-geneva-{z}",
            )
            for z, n in (("a", 1), ("b", 2), ("c", 2))
        ],
    )


def test_seed_cluster_matches_figure_12(fleet: Fleet) -> None:
    seed_fleet(fleet)
    cluster = bodies(fleet, "dev")[("ClusterV1", "k8s-ais-batch-dev-multi-v25")]
    assert cluster == {
        "apiVersion": "containerinfra.openstack.crossplane.io/v1alpha1",
        "kind": "ClusterV1",
        "metadata": {
            "annotations": {
                "crossplane.io/external-name": "k8s-ais-batch-dev-multi-v25",
                **PROTECTED,
            },
            "name": "k8s-ais-batch-dev-multi-v25",
        },
        "spec": {
            "deletionPolicy": "Orphan",
            "forProvider": {
                "clusterTemplateId": "kubernetes-1.25.3-3-multi",
                "createTimeout": 60,
                "flavor": "m2.xlarge",
                "keypair": "shared-jeedy-key",
                "labels": FIGURE_12_LABELS,
                "masterCount": 1,
                "masterFlavor": "m2.xlarge",
                "mergeLabels": True,
                "name": "k8s-ais-batch-dev-multi-v25",
                "nodeCount": 1,
            },
            "providerConfigRef": {"name": "jeedy-ais"},
            "writeConnectionSecretToRef": {
                "name": "k8s-ais-batch-dev-multi-v25",
                "namespace": "crossplane-clusters",
            },
        },
    }


def test_seed_node_groups_match_figure_13(fleet: Fleet) -> None:
    seed_fleet(fleet)
    rendered = bodies(fleet, "dev")
    for zone, count in (("a", 1), ("b", 2), ("c", 2)):
        name = f"k8s-ais-batch-dev-multi-v25-zone-{zone}-xlarge"
        assert rendered[("NodegroupV1", name)] == {
            "apiVersion": "containerinfra.openstack.crossplane.io/v1alpha1",
            "kind": "NodegroupV1",
            "metadata": {
                "annotations": {
                    "crossplane.io/external-name": (
                        f"k8s-ais-batch-dev-multi-v25/zone-{zone}-xlarge"
                    ),
                    **PROTECTED,
                },
                "name": name,
            },
            "spec": {
                "deletionPolicy": "Orphan",
                "forProvider": {
                    "clusterId": "k8s-ais-batch-dev-multi-v25",
                    "flavorId": "m2.xlarge",
                    "labels": {"availability_zone": f"cern-geneva-{zone}"},
                    "mergeLabels": True,
                    "name": f"zone-{zone}-xlarge",
                    "nodeCount": count,
                },
                "providerConfigRef": {"name": "jeedy-ais"},
            },
        }


def test_provider_config_holds_a_secret_reference_only(fleet: Fleet) -> None:
    project = OpenStackProject(
        fleet, "jeedy-ais", project_name="JEEDY AIS", auth_url="<auth_url>", region="cern"
    )
    small_cluster(fleet, project=project)
    assert bodies(fleet, "dev")[("ProviderConfig", "jeedy-ais")] == {
        "apiVersion": "openstack.crossplane.io/v1beta1",
        "kind": "ProviderConfig",
        "metadata": {
            "name": "jeedy-ais",
            "annotations": {
                "fleet.openstack/project-name": "JEEDY AIS",
                "fleet.openstack/auth-url": "<auth_url>",
                "fleet.openstack/region": "cern",
                **PROTECTED,
            },
        },
        "spec": {
            "credentials": {
                "source": "Secret",
                "secretRef": {
                    "key": "clouds.yaml",
                    "name": "jeedy-ais-openstack-credentials",
                    "namespace": "crossplane-system",
                },
            }
        },
    }


def test_project_renders_only_where_its_clusters_are(fleet: Fleet) -> None:
    small_cluster(fleet, environments=["test"])
    assert ("ProviderConfig", "proj") in bodies(fleet, "test")
    assert bodies(fleet, "dev") == {}


def test_per_environment_values(fleet: Fleet) -> None:
    small_cluster(
        fleet,
        name="c1-{env}",
        environments=["dev", "prod"],
        node_count=per_env(dev=1, prod=5),
        flavor=per_env(dev="m2.small", default="m2.large"),
        labels=per_env(dev={}, prod={"manila_enabled": "true"}),
    )
    dev = bodies(fleet, "dev")[("ClusterV1", "c1-dev")]["spec"]["forProvider"]
    prod = bodies(fleet, "prod")[("ClusterV1", "c1-prod")]["spec"]["forProvider"]
    assert (dev["nodeCount"], dev["flavor"], dev["labels"]["manila_enabled"]) == (
        1,
        "m2.small",
        "false",
    )
    assert (prod["nodeCount"], prod["flavor"], prod["labels"]["manila_enabled"]) == (
        5,
        "m2.large",
        "true",
    )
    assert bodies(fleet, "test") == {}


def test_cluster_labels_override_template_labels(fleet: Fleet) -> None:
    small_cluster(fleet, labels={"manila_enabled": "true", "availability_zone": "az-1"})
    labels = bodies(fleet, "dev")[("ClusterV1", "c1")]["spec"]["forProvider"]["labels"]
    assert labels == {"kube_tag": "v1.29.2", "manila_enabled": "true", "availability_zone": "az-1"}


def test_autoscaling_node_group_renders_min_and_max(fleet: Fleet) -> None:
    small_cluster(
        fleet,
        node_groups=[
            NodeGroup(
                name="burst", flavor="m2.large", node_count=1, min_node_count=0, max_node_count=4
            )
        ],
    )
    fp = bodies(fleet, "dev")[("NodegroupV1", "c1-burst")]["spec"]["forProvider"]
    assert (fp["nodeCount"], fp["minNodeCount"], fp["maxNodeCount"]) == (1, 0, 4)


def test_unprotected_cluster_is_deleted_with_its_object(fleet: Fleet) -> None:
    small_cluster(fleet, deletion_protection=False, management_policies=["Observe"])
    cluster = bodies(fleet, "dev")[("ClusterV1", "c1")]
    assert cluster["spec"]["deletionPolicy"] == "Delete"
    assert cluster["spec"]["managementPolicies"] == ["Observe"]
    assert "argocd.argoproj.io/sync-options" not in cluster["metadata"]["annotations"]


def test_json_patch_escape_hatch(fleet: Fleet) -> None:
    cluster = small_cluster(fleet)
    cluster.add_json_patch(
        JsonPatch.add("/spec/forProvider/dockerVolumeSize", 50), kind="ClusterV1"
    )
    assert (
        bodies(fleet, "dev")[("ClusterV1", "c1")]["spec"]["forProvider"]["dockerVolumeSize"] == 50
    )
    assert "dockerVolumeSize" not in str(bodies(fleet, "dev")[("ProviderConfig", "proj")])


def test_template_by_name_from_catalog(fleet: Fleet) -> None:
    small_template("tpl-by-name")
    cluster = small_cluster(fleet, template="tpl-by-name")
    assert cluster.template.name == "tpl-by-name"


# --- one failing test per validation rule -------------------------------------------


def test_fails_unknown_template(fleet: Fleet) -> None:
    small_template("kubernetes-1.29.2-1")
    with pytest.raises(
        DefinitionError,
        match=r"unknown cluster template 'kubernetes-1.29.2-2'.*did you mean 'kubernetes-1.29.2-1'",
    ):
        small_cluster(fleet, template="kubernetes-1.29.2-2")


def test_fails_label_typo_with_hint(fleet: Fleet) -> None:
    with pytest.raises(
        DefinitionError, match=r"label 'manila_enable' .*did you mean 'manila_enabled'"
    ):
        small_cluster(fleet, labels={"manila_enable": "true"})


def test_extra_labels_allowed_when_asked(fleet: Fleet) -> None:
    small_cluster(fleet, labels={"custom": "x"}, allow_extra_labels=True)
    assert (
        bodies(fleet, "dev")[("ClusterV1", "c1")]["spec"]["forProvider"]["labels"]["custom"] == "x"
    )


def test_fails_label_value_not_a_string(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="label values are strings"):
        small_cluster(fleet, labels={"manila_enabled": True})


def test_fails_negative_node_count(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"node_count: must be 0 or more, got -1"):
        small_cluster(fleet, node_count=-1)


def test_fails_negative_node_group_count(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"node_groups\[a\]\.node_count: must be 0 or more"):
        small_cluster(fleet, node_groups=[NodeGroup(name="a", flavor="f", node_count=-2)])


def test_fails_zero_masters(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"master_count: must be 1 or more"):
        small_cluster(fleet, master_count=0)


def test_fails_min_above_max(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"min_node_count 5 is above max_node_count 2"):
        small_cluster(
            fleet,
            node_groups=[
                NodeGroup(name="a", flavor="f", node_count=2, min_node_count=5, max_node_count=2)
            ],
        )


def test_fails_count_outside_autoscaling_range(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"node_count 9 is outside \[0, 4\]"):
        small_cluster(
            fleet,
            node_groups=[
                NodeGroup(name="a", flavor="f", node_count=9, min_node_count=0, max_node_count=4)
            ],
        )


def test_fails_duplicate_node_group(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="duplicate node group name 'a'"):
        small_cluster(
            fleet,
            node_groups=[NodeGroup(name="a", flavor="f", node_count=1)] * 2,
        )


def test_fails_node_group_without_flavor() -> None:
    with pytest.raises(DefinitionError, match="flavor: a node group needs a flavor"):
        NodeGroup(name="a", flavor="", node_count=1)


def test_fails_node_group_bad_name() -> None:
    with pytest.raises(DefinitionError, match="name: must be lower-case"):
        NodeGroup(name="Zone_A", flavor="f", node_count=1)


def test_fails_duplicate_declaration(fleet: Fleet) -> None:
    small_cluster(fleet)
    with pytest.raises(DefinitionError, match="duplicate declaration 'c1'"):
        small_cluster(fleet, project=OpenStackProject(fleet, "proj2", project_name="P2"))


def test_fails_unknown_environment(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="unknown environment 'staging'"):
        small_cluster(fleet, environments=["staging"])


def test_fails_per_env_value_missing(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="no value for environment 'prod'"):
        small_cluster(fleet, environments=["dev", "prod"], node_count=per_env(dev=1))


def test_fails_bad_cluster_name(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="name: must be lower-case"):
        small_cluster(fleet, name="K8s_Cluster")


def test_fails_bad_deletion_policy(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="deletion_policy: must be one of Orphan, Delete"):
        small_cluster(fleet, deletion_policy="Keep")


def test_fails_bad_create_timeout(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="create_timeout_minutes: must be more than 0"):
        small_cluster(fleet, create_timeout_minutes=0)


def test_fails_bad_kubernetes_version() -> None:
    with pytest.raises(DefinitionError, match=r"kubernetes_version: must look like v1\.25\.3"):
        ClusterTemplate(name="t", kubernetes_version="latest")


def test_fails_template_redeclared_differently() -> None:
    small_template("tpl-twice")
    with pytest.raises(DefinitionError, match="declared twice with different content"):
        ClusterTemplate(name="tpl-twice", kubernetes_version="v1.30.0")


def test_fails_changing_label_outside_base() -> None:
    with pytest.raises(DefinitionError, match="changing labels must be base labels: x"):
        ClusterTemplate(name="t2", kubernetes_version="v1.30.0", changing_labels=["x"])


def test_errors_name_the_definition_line(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"test_magnum_cluster\.py:\d+ \(c1\): node_count"):
        small_cluster(fleet, node_count=-1)


def test_several_problems_reported_together(fleet: Fleet) -> None:
    with pytest.raises(DefinitionErrors) as info:
        small_cluster(fleet, node_count=-1, labels={"typo_label": "x"})
    assert len(info.value.errors) == 2
