"""MagnumCluster, NodeGroup, OpenStackProject and ClusterTemplate: output and input checks."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from crd_samples import SEED_LABELS as FIGURE_12_LABELS
from crd_samples import SEED_TEMPLATE_UUID

from fleet import (
    ClusterTemplate,
    DefinitionError,
    DefinitionErrors,
    DeletionPolicy,
    Fleet,
    FleetConfig,
    JsonPatch,
    MagnumCluster,
    ManagementPolicy,
    NodeGroup,
    OpenStackProject,
    ResolvedMagnum,
    TemplateCatalog,
    per_env,
)

PROTECTED = {"argocd.argoproj.io/sync-options": "Prune=false,Delete=false"}
TPL_UUID = "5a0c9d3e-1f2b-4c6d-8e7f-9a0b1c2d3e4f"


def small_template(name: str = "tpl-small") -> ClusterTemplate:
    return ClusterTemplate(
        name=name,
        kubernetes_version="v1.29.2",
        base_labels={"kube_tag": "v1.29.2", "manila_enabled": "false"},
        optional_labels=["availability_zone"],
        changing_labels=["manila_enabled"],
        uuid=TPL_UUID,
    )


def small_cluster(fleet: Fleet, **overrides: Any) -> MagnumCluster:
    construct_id = overrides.pop("id", "c1")
    project = (
        overrides.pop("project", None)
        or fleet.node.try_find_child("proj")
        or OpenStackProject(fleet, "proj", project_name="P")
    )
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
    return MagnumCluster(fleet, construct_id, **args)


def bodies(fleet: Fleet, environment: str) -> dict[tuple[str, str], dict[str, Any]]:
    fleet.run_phases()  # projects find their clusters in the prepare phase
    return {
        (m.kind, m.name): m.body for c in fleet.declarations() for m in c.manifests(environment)
    }


def seed_fleet(fleet: Fleet) -> None:
    template = ClusterTemplate(
        name="kubernetes-1.25.3-3-multi",
        kubernetes_version="v1.25.3",
        base_labels=FIGURE_12_LABELS,
        uuid=SEED_TEMPLATE_UUID,
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
    """Figure 12, but ``clusterTemplateId`` is the template's UUID: Magnum normalises the
    template to its UUID on create (openstack/magnum ``magnum/api/controllers/v1/cluster.py``,
    ``cluster.cluster_template_id = cluster_template.uuid``) and terraform-provider-openstack
    v3.4.0 reads it back (``openstack/resource_openstack_containerinfra_cluster_v1.go``,
    ``d.Set("cluster_template_id", s.ClusterTemplateID)``); a name there is a diff every poll,
    which the provider's Update turns into ``clusters.Upgrade``."""
    seed_fleet(fleet)
    cluster = bodies(fleet, "dev")[("ClusterV1", "k8s-ais-batch-dev-multi-v25")]
    assert cluster == {
        "apiVersion": "containerinfra.openstack.crossplane.io/v1alpha1",
        "kind": "ClusterV1",
        "metadata": {
            "annotations": {
                "crossplane.io/external-name": "k8s-ais-batch-dev-multi-v25",
                "fleet.openstack/cluster-template": "kubernetes-1.25.3-3-multi",
                "fleet.openstack/kubernetes-version": "v1.25.3",
                **PROTECTED,
            },
            "name": "k8s-ais-batch-dev-multi-v25",
        },
        "spec": {
            "deletionPolicy": "Orphan",
            "forProvider": {
                "clusterTemplateId": SEED_TEMPLATE_UUID,
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
                    # After the ClusterV1 (tests/test_health_checks.py).
                    "argocd.argoproj.io/sync-wave": "1",
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
                    "key": "credentials",
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
    """An autoscaled group's size is only its size at creation: ``spec.initProvider``.

    upjet v2.2.0 ``pkg/controller/external_tfpluginsdk.go`` (``filterInitExclusiveDiffs``)
    drops diffs on keys set only in initProvider once the resource exists, so Crossplane
    does not resize the group back; min/max stay in forProvider, where the provider updates
    them in place (terraform-provider-openstack v3.4.0
    ``openstack/resource_openstack_containerinfra_nodegroup_v1.go``: no ForceNew)."""
    small_cluster(
        fleet,
        node_groups=[
            NodeGroup(
                name="burst", flavor="m2.large", node_count=1, min_node_count=0, max_node_count=4
            ),
            NodeGroup(name="fixed", flavor="m2.large", node_count=2),
        ],
    )
    spec = bodies(fleet, "dev")[("NodegroupV1", "c1-burst")]["spec"]
    fp = spec["forProvider"]
    assert (fp["minNodeCount"], fp["maxNodeCount"]) == (0, 4)
    assert "nodeCount" not in fp
    assert spec["initProvider"] == {"nodeCount": 1}
    assert spec["managementPolicies"] == ["Observe", "Create", "Update"]
    fixed = bodies(fleet, "dev")[("NodegroupV1", "c1-fixed")]["spec"]
    assert fixed["forProvider"]["nodeCount"] == 2
    assert "initProvider" not in fixed
    assert "managementPolicies" not in fixed


def test_autoscaled_pools_are_not_late_initialized(fleet: Fleet) -> None:
    """upjet v2.2.0 ``pkg/controller/external_tfpluginsdk.go`` (``Observe``) late-initializes
    when the policies hold ``LateInitialize`` or ``*``, and provider-openstack v0.9.0
    ``apis/cluster/containerinfra/v1alpha1/zz_nodegroupv1_terraformed.go`` (``LateInitialize``)
    copies every observed value into an empty forProvider field: ``nodeCount`` would land in
    forProvider and the provider would resize the pool back after the autoscaler. So an
    autoscaled pool gets every policy but LateInitialize; Delete only where it is not
    orphaned (crossplane-runtime v2.1.0 ``pkg/reconciler/managed/policies.go``: a custom
    list with Delete overrides Orphan)."""
    small_cluster(
        fleet,
        deletion_protection=False,
        node_count=1,
        min_node_count=1,
        max_node_count=3,
        node_groups=[
            NodeGroup(name="b", flavor="f", node_count=1, min_node_count=0, max_node_count=4)
        ],
    )
    for kind, name in (("ClusterV1", "c1"), ("NodegroupV1", "c1-b")):
        spec = bodies(fleet, "dev")[(kind, name)]["spec"]
        assert spec["managementPolicies"] == ["Observe", "Create", "Update", "Delete"]
        assert spec["deletionPolicy"] == "Delete"


def test_declared_policies_win_over_the_autoscaling_default(fleet: Fleet) -> None:
    small_cluster(fleet, min_node_count=1, max_node_count=3, management_policies=["Observe"])
    spec = bodies(fleet, "dev")[("ClusterV1", "c1")]["spec"]
    assert spec["managementPolicies"] == ["Observe"]


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


def test_template_by_name_from_the_fleets_catalog(fleet: Fleet) -> None:
    cluster = small_cluster(fleet, template="tpl-by-name")  # before the template is added
    TemplateCatalog.of(fleet).add(small_template("tpl-by-name"))
    fleet.run_phases()
    assert cluster.template.name == "tpl-by-name"
    assert bodies(fleet, "dev")[("ClusterV1", "c1")]["spec"]["forProvider"]["labels"] == {
        "kube_tag": "v1.29.2",
        "manila_enabled": "false",
    }


def test_a_template_a_cluster_uses_is_known_by_name(fleet: Fleet) -> None:
    small_cluster(fleet, template=small_template("tpl-used"))
    by_name = small_cluster(fleet, id="c2", name="c2", template="tpl-used")
    fleet.run_phases()
    assert by_name.template.name == "tpl-used"


def test_two_fleets_never_see_each_others_templates(tmp_path: Path) -> None:
    one, two = Fleet(FleetConfig(root=tmp_path)), Fleet(FleetConfig(root=tmp_path))
    TemplateCatalog.of(one).add(small_template("tpl-shared-name"))
    # the same name, other content: no clash, the fleets are apart
    TemplateCatalog.of(two).add(
        ClusterTemplate(name="tpl-shared-name", kubernetes_version="v1.30.1", uuid=TPL_UUID)
    )
    small_cluster(one, template="tpl-shared-name")
    small_cluster(two, template="tpl-shared-name")
    small_cluster(two, id="c2", name="c2", template="tpl-only-in-one")
    TemplateCatalog.of(one).add(small_template("tpl-only-in-one"))
    one.run_phases()
    with pytest.raises(DefinitionErrors) as e:
        two.run_phases()
    assert [(x.field, x.message) for x in e.value.errors] == [
        (
            "template",
            "unknown cluster template 'tpl-only-in-one' (the fleet knows the templates its "
            "clusters use and those added with TemplateCatalog.of(fleet).add(...))",
        )
    ]
    assert TemplateCatalog.of(one).names() == ["tpl-only-in-one", "tpl-shared-name"]
    assert TemplateCatalog.of(two).names() == ["tpl-shared-name"]


# --- one failing test per validation rule -------------------------------------------


def test_fails_unknown_template_in_prepare_naming_the_cluster(fleet: Fleet) -> None:
    TemplateCatalog.of(fleet).add(small_template("kubernetes-1.29.2-1"))
    small_cluster(fleet, template="kubernetes-1.29.2-2")
    with pytest.raises(
        DefinitionErrors,
        match=r"test_magnum_cluster\.py:\d+ \(c1\): template: unknown cluster template "
        r"'kubernetes-1.29.2-2'; did you mean 'kubernetes-1.29.2-1'\?$",
    ):
        fleet.run_phases()


def test_fails_reading_a_template_given_by_name_before_prepare(fleet: Fleet) -> None:
    TemplateCatalog.of(fleet).add(small_template("tpl-later"))
    cluster = small_cluster(fleet, template="tpl-later")
    with pytest.raises(DefinitionError, match=r"\(c1\): template: template 'tpl-later' is "):
        cluster.template.name  # noqa: B018


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


def test_fails_node_group_name_magnum_cannot_find() -> None:
    """Magnum takes any 1..255 characters, but reads ``7`` as the node group's id
    (openstack/magnum 22.0.0 ``magnum/objects/nodegroup.py`` ``NodeGroup.get``)."""
    with pytest.raises(DefinitionError, match="name: the provider cannot find node group '7'"):
        NodeGroup(name="7", flavor="f", node_count=1)


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
    """openstack/magnum 22.0.0 ``magnum/api/controllers/v1/cluster.py``: a letter first."""
    with pytest.raises(DefinitionError, match="name: Magnum refuses the cluster name '8s_c'"):
        small_cluster(fleet, name="8s_c")


def test_fails_bad_deletion_policy(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="deletion_policy: must be one of Orphan, Delete"):
        small_cluster(fleet, deletion_policy="Keep")


def test_fails_bad_create_timeout(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="create_timeout_minutes: must be 1 or more, got 0"):
        small_cluster(fleet, create_timeout_minutes=0)


def test_fails_bad_kubernetes_version() -> None:
    with pytest.raises(DefinitionError, match=r"kubernetes_version: must look like v1\.25\.3"):
        ClusterTemplate(name="t", kubernetes_version="latest")


def test_fails_template_redeclared_differently_in_one_fleet(fleet: Fleet) -> None:
    small_cluster(fleet, template=small_template("tpl-twice"))
    other = ClusterTemplate(name="tpl-twice", kubernetes_version="v1.30.0")
    with pytest.raises(DefinitionError, match="declared twice with different content") as e:
        small_cluster(fleet, id="c2", name="c2", template=other)
    assert e.value.where == other.where
    assert re.search(r"\(first at (tests/)?test_magnum_cluster\.py:\d+\)$", e.value.message)
    TemplateCatalog.of(fleet).add(small_template("tpl-twice"))  # the same content: one template


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


# --- template UUIDs (issue 12, item 3) ----------------------------------------------


def test_template_uuid_per_region(fleet: Fleet) -> None:
    """A mapping gives the template's UUID per OpenStack region: the region of the
    cluster's project. Template UUIDs differ between clouds (each Magnum generates its own,
    openstack/magnum ``magnum/objects/cluster_template.py``)."""
    template = ClusterTemplate(
        name="tpl-regions",
        kubernetes_version="v1.29.2",
        uuid={"cern": TPL_UUID, "wigner": "7d0e1f2a-3b4c-4d5e-8f6a-7b8c9d0e1f2a"},
    )
    wigner = OpenStackProject(fleet, "w", project_name="W", region="wigner")
    small_cluster(fleet, template=template, project=wigner)
    cluster = bodies(fleet, "dev")[("ClusterV1", "c1")]
    assert cluster["spec"]["forProvider"]["clusterTemplateId"] == (
        "7d0e1f2a-3b4c-4d5e-8f6a-7b8c9d0e1f2a"
    )
    assert cluster["metadata"]["annotations"]["fleet.openstack/cluster-template"] == "tpl-regions"


def test_openstack_region_is_the_clusters_region(fleet: Fleet) -> None:
    """``openstack_region`` (ClusterV1 ``region``) is where the cluster is: what ``region()``
    says (registration labels, ``fleet ls``) and where the template's UUID is looked up.
    terraform-provider-openstack v3.4.0 ``openstack/util.go`` ``GetRegion``: the resource's
    ``region``, else the provider's (the credentials' region, the project's)."""
    template = ClusterTemplate(
        name="tpl-regions",
        kubernetes_version="v1.29.2",
        uuid={"cern": TPL_UUID, "wigner": "7d0e1f2a-3b4c-4d5e-8f6a-7b8c9d0e1f2a"},
    )
    cern = OpenStackProject(fleet, "cern", project_name="C", region="cern")
    cluster = small_cluster(
        fleet,
        template=template,
        project=cern,
        environments=["dev", "prod"],
        name="c1-{env}",
        openstack_region=per_env(prod="wigner", default="cern"),
    )
    plain = MagnumCluster(
        fleet,
        "c2",
        name="c2",
        environments=["dev"],
        project=cern,
        template=template,
        flavor="m2.small",
        keypair="key",
        node_count=1,
    )
    assert (cluster.region("dev"), cluster.region("prod")) == ("cern", "wigner")
    for env, uuid in (("dev", TPL_UUID), ("prod", "7d0e1f2a-3b4c-4d5e-8f6a-7b8c9d0e1f2a")):
        for_provider = bodies(fleet, env)[("ClusterV1", f"c1-{env}")]["spec"]["forProvider"]
        assert for_provider["region"] == cluster.region(env)
        assert for_provider["clusterTemplateId"] == uuid
    assert plain.region("dev") == "cern"  # the project's, and nothing rendered
    assert "region" not in bodies(fleet, "dev")[("ClusterV1", "c2")]["spec"]["forProvider"]


def test_fails_template_without_uuid_for_region(fleet: Fleet) -> None:
    template = ClusterTemplate(
        name="tpl-cern-only", kubernetes_version="v1.29.2", uuid={"cern": TPL_UUID}
    )
    wigner = OpenStackProject(fleet, "w", project_name="W", region="wigner")
    with pytest.raises(DefinitionError) as info:
        small_cluster(fleet, template=template, project=wigner)
    line = str(info.value)
    assert "\n" not in line
    assert re.search(r"test_magnum_cluster\.py:\d+ \(c1\): template: ", line)
    assert "'tpl-cern-only' has no UUID for region 'wigner' (it has one for cern)" in line
    assert "openstack coe cluster template show tpl-cern-only -f value -c uuid" in line
    assert "fleet import tfstate" in line


def test_fails_template_without_any_uuid(fleet: Fleet) -> None:
    template = ClusterTemplate(name="tpl-no-uuid", kubernetes_version="v1.29.2")
    with pytest.raises(DefinitionError, match=r"template: template 'tpl-no-uuid' has no UUID"):
        small_cluster(fleet, template=template)


@pytest.mark.parametrize(
    "uuid", ["kubernetes-1.25.3-3", "5A0C9D3E-1F2B-4C6D-8E7F-9A0B1C2D3E4F", {"cern": "x"}, 7]
)
def test_fails_template_uuid_not_a_uuid(uuid: Any) -> None:
    with pytest.raises(DefinitionError, match=r"\(template tpl-bad-uuid\): uuid: "):
        ClusterTemplate(name="tpl-bad-uuid", kubernetes_version="v1.29.2", uuid=uuid)


# --- Magnum's autoscaler on default-worker (issue 12, item 11) -----------------------


def test_autoscaled_cluster_sets_magnum_labels_and_init_node_count(fleet: Fleet) -> None:
    """Magnum's autoscaler is switched on by the cluster label ``auto_scaling_enabled`` and
    bounded by the labels ``min_node_count``/``max_node_count``, for ``default-worker`` only
    (openstack/magnum 22.0.0 ``magnum/drivers/common/templates/kubernetes/fragments/
    enable-auto-scaling.sh``: ``--nodes=${MIN_NODE_COUNT}:${MAX_NODE_COUNT}:default-worker``;
    ``magnum/drivers/heat/k8s_fedora_template_def.py`` copies the labels). Label values are
    strings (the CRD's labels are map[string]string). ``nodeCount`` goes to initProvider so
    that upjet (``pkg/controller/external_tfpluginsdk.go``, ``filterInitExclusiveDiffs``)
    does not resize the group back after the autoscaler."""
    cluster = small_cluster(fleet, node_count=2, min_node_count=1, max_node_count=5)
    spec = bodies(fleet, "dev")[("ClusterV1", "c1")]["spec"]
    labels = spec["forProvider"]["labels"]
    assert (
        labels["auto_scaling_enabled"],
        labels["min_node_count"],
        labels["max_node_count"],
    ) == ("true", "1", "5")
    assert "nodeCount" not in spec["forProvider"]
    assert spec["initProvider"] == {"nodeCount": 2}
    assert spec["managementPolicies"] == ["Observe", "Create", "Update"]
    default = cluster.node_pools("dev")[0]
    assert (default.name, default.min_node_count, default.max_node_count) == (
        "default-worker",
        1,
        5,
    )
    assert cluster.resolved("dev").autoscaled


def test_fixed_size_cluster_keeps_node_count_in_for_provider(fleet: Fleet) -> None:
    small_cluster(fleet, node_count=3)
    spec = bodies(fleet, "dev")[("ClusterV1", "c1")]["spec"]
    assert spec["forProvider"]["nodeCount"] == 3
    assert "initProvider" not in spec
    assert "auto_scaling_enabled" not in spec["forProvider"]["labels"]


def test_fails_autoscaling_with_only_one_bound(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"max_node_count: an autoscaled cluster needs both"):
        small_cluster(fleet, min_node_count=1)


def test_fails_autoscaling_bound_label_set_by_hand(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"label 'max_node_count' is set from min_node_count"):
        small_cluster(fleet, labels={"max_node_count": "4"}, allow_extra_labels=True)


def test_fails_template_autoscaling_without_bounds(fleet: Fleet) -> None:
    template = ClusterTemplate(
        name="tpl-autoscaled",
        kubernetes_version="v1.29.2",
        base_labels={"auto_scaling_enabled": "True"},
        uuid=TPL_UUID,
    )
    with pytest.raises(DefinitionError, match=r"min_node_count: the template turns on"):
        small_cluster(fleet, template=template)


def test_fails_cluster_node_count_outside_bounds(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match=r"node_count 9 is outside \[1, 5\]"):
        small_cluster(fleet, node_count=9, min_node_count=1, max_node_count=5)


# --- pause, policies, node groups added later, resolved state ------------------------


def test_paused_environments_carry_crossplane_pause_annotation(fleet: Fleet) -> None:
    """crossplane-runtime v2.1.0 ``pkg/meta/meta.go``: ``IsPaused`` is
    ``annotations["crossplane.io/paused"] == "true"`` (the exact string), and the managed
    reconciler (``pkg/reconciler/managed/reconciler.go``) then stops with ReconcilePaused."""
    small_cluster(
        fleet,
        environments=["dev", "prod"],
        name="c1-{env}",
        paused=["prod"],
        node_groups=[NodeGroup(name="a", flavor="f", node_count=1)],
    )
    for kind, name in (("ClusterV1", "c1-prod"), ("NodegroupV1", "c1-prod-a")):
        assert (
            bodies(fleet, "prod")[(kind, name)]["metadata"]["annotations"]["crossplane.io/paused"]
            == "true"
        )
    for kind, name in (("ClusterV1", "c1-dev"), ("NodegroupV1", "c1-dev-a")):
        assert (
            "crossplane.io/paused"
            not in bodies(fleet, "dev")[(kind, name)]["metadata"]["annotations"]
        )


def test_policies_accept_enums_and_strings(fleet: Fleet) -> None:
    cluster = small_cluster(
        fleet,
        deletion_policy=DeletionPolicy.DELETE,
        deletion_protection=False,
        management_policies=[ManagementPolicy.OBSERVE, "Create"],
    )
    spec = bodies(fleet, "dev")[("ClusterV1", "c1")]["spec"]
    assert spec["deletionPolicy"] == "Delete"
    assert spec["managementPolicies"] == ["Observe", "Create"]
    # Plain strings in the render: the YAML writer must not see enum types.
    assert type(spec["deletionPolicy"]) is str
    assert all(type(p) is str for p in spec["managementPolicies"])
    assert cluster.deletion_policy is DeletionPolicy.DELETE


def test_fails_delete_policy_with_orphan(fleet: Fleet) -> None:
    """crossplane-runtime v2.1.0 ``pkg/reconciler/managed/policies.go``
    (``LegacyManagementPoliciesResolver.ShouldDelete``): a management policy list other
    than ``["*"]`` that holds ``Delete`` deletes the external resource whatever the
    deletionPolicy says."""
    with pytest.raises(DefinitionError, match=r"management_policies: a list with Delete"):
        small_cluster(fleet, management_policies=["Observe", "Delete"])


def test_all_policies_keep_orphan(fleet: Fleet) -> None:
    """``["*"]`` leaves the decision to deletionPolicy (same source as above)."""
    small_cluster(fleet, management_policies=["*"])
    assert bodies(fleet, "dev")[("ClusterV1", "c1")]["spec"]["deletionPolicy"] == "Orphan"


def test_add_node_group_appends_and_renders(fleet: Fleet) -> None:
    cluster = small_cluster(fleet, node_groups=[NodeGroup(name="a", flavor="f", node_count=1)])
    cluster.add_node_group(NodeGroup(name="b", flavor="g", node_count=2))
    assert [g.name for g in cluster.node_groups] == ["a", "b"]
    assert [p.name for p in cluster.node_pools("dev")] == ["default-worker", "a", "b"]
    with pytest.raises(DefinitionError, match="duplicate node group name 'a'"):
        cluster.add_node_group(NodeGroup(name="a", flavor="f", node_count=1))
    with pytest.raises(DefinitionError, match=r"node_groups\[c\]\.node_count: must be 0 or more"):
        cluster.add_node_group(NodeGroup(name="c", flavor="f", node_count=-1))
    assert [g.name for g in cluster.node_groups] == ["a", "b"]
    assert bodies(fleet, "dev")[("NodegroupV1", "c1-b")]["spec"]["forProvider"]["nodeCount"] == 2


def test_resolved_state_is_typed_and_frozen(fleet: Fleet) -> None:
    cluster = small_cluster(fleet, flavor="m2.small", keypair="k")
    state = cluster.resolved("dev")
    assert isinstance(state, ResolvedMagnum)
    assert (state.flavor, state.master_flavor, state.keypair, state.template_uuid) == (
        "m2.small",
        "m2.small",
        "k",
        TPL_UUID,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.flavor = "other"  # type: ignore[misc]


def test_adopting_by_uuid_keeps_the_magnum_name(fleet: Fleet) -> None:
    """Adoption by UUID: upjet's external name for ``openstack_containerinfra_cluster_v1``
    is the Terraform ID (provider-openstack v0.9.0 ``config/external_name.go``:
    ``config.IdentifierFromProvider``), which is the Magnum UUID; ``forProvider.name`` stays
    the cluster's name (ForceNew in terraform-provider-openstack v3.4.0)."""
    uuid = "9d7c1c2a-3b4e-4f5a-8b6c-7d8e9f0a1b2c"
    small_cluster(
        fleet, external_name=uuid, node_groups=[NodeGroup(name="a", flavor="f", node_count=1)]
    )
    cluster = bodies(fleet, "dev")[("ClusterV1", "c1")]
    assert cluster["metadata"]["annotations"]["crossplane.io/external-name"] == uuid
    assert cluster["spec"]["forProvider"]["name"] == "c1"
    group = bodies(fleet, "dev")[("NodegroupV1", "c1-a")]
    assert group["spec"]["forProvider"]["clusterId"] == uuid
    assert group["metadata"]["annotations"]["crossplane.io/external-name"] == f"{uuid}/a"


# --- label values Magnum would apply literally (#21 item 7) ----------------------------------


@pytest.mark.parametrize(
    "value", ["<container_infra_prefix>", "registry.example.org/<team>/", "<x>"]
)
def test_a_template_label_holding_a_placeholder_is_refused(value: str) -> None:
    """openstack/magnum stable/2025.1 ``magnum/drivers/heat/k8s_fedora_template_def.py``
    ``get_params`` copies label values into the Heat parameters as they are."""
    with pytest.raises(DefinitionError) as caught:
        ClusterTemplate(
            name="t",
            kubernetes_version="v1.29.2",
            base_labels={"kube_tag": "v1.29.2", "container_infra_prefix": value},
        )
    line = caught.value.line()
    assert re.match(r"^.*test_magnum_cluster\.py:\d+ \(template t\): base_labels: ", line)
    assert f"label 'container_infra_prefix' holds the placeholder {value!r}" in line


def test_a_container_infra_prefix_must_end_in_a_slash() -> None:
    """openstack/magnum stable/2025.1 ``magnum/drivers/k8s_fedora_coreos_v1/templates/
    kubecluster.yaml``: ``container_infra_prefix`` has ``allowed_pattern: "^$|.*/"``."""
    with pytest.raises(DefinitionError, match=r"write 'registry\.example\.org/magnum/'$"):
        ClusterTemplate(
            name="t",
            kubernetes_version="v1.29.2",
            base_labels={"container_infra_prefix": "registry.example.org/magnum"},
        )
    for fine in ("", "registry.example.org/magnum/"):
        ClusterTemplate(
            name=f"t{len(fine)}",
            kubernetes_version="v1.29.2",
            base_labels={"container_infra_prefix": fine},
        )


def test_cluster_and_node_group_labels_holding_placeholders_are_refused(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError) as caught:
        small_cluster(fleet, labels={"availability_zone": "<zone>"})
    error = caught.value
    assert error.field == "labels"
    assert error.where.endswith("(c1)")
    assert "label 'availability_zone' holds the placeholder '<zone>'" in error.message
    with pytest.raises(DefinitionError, match=r"\(node group a\): labels: label 'x'"):
        NodeGroup(name="a", flavor="m2.small", node_count=1, labels={"x": "<value>"})


def test_the_example_fleet_renders_no_placeholder(hybrid_rendered: Path) -> None:
    """The fixture fleet's templates (a copy of the example's) carry no redacted label."""
    found = [
        f"{path}: {line.strip()}"
        for path in sorted((hybrid_rendered / "dist").rglob("*.yaml"))
        for line in path.read_text().splitlines()
        if re.search(r":\s+'?<[^<>]+>'?$", line)
    ]
    assert found == []
