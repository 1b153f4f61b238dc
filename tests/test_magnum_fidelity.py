"""What a cluster declares renders as Terraform had it (#19, so the importer can declare
what the state holds): attributes left to the template, labels as declared, autoscaling by
labels without bounds, create-only arguments (``ignore_changes``), create timeouts, and a
node group's ``clusterId`` that agrees with its external name.

Every render is validated against the pinned provider-openstack v0.9.0 CRDs, CEL rules
included (``testing.synth(validate=True)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fleet import (
    ClusterTemplate,
    DefinitionError,
    Fleet,
    MagnumCluster,
    NodeGroup,
    OpenStackProject,
    testing,
)
from fleet.views.graph.structure import pool_line
from fleet.views.inventory import inventory

UUID = "eb51bc46-6fbe-436b-b3be-4747c0d435dd"
CLUSTER_UUID = "39e033d9-4548-4861-a98d-6ce725c7b527"
GROUP_UUID = "73c82c01-ba49-47b9-b43f-245b8640fbbc"
OBSERVE_CREATE_UPDATE = ["Observe", "Create", "Update"]

# The labels of stackhpc/terraform-magnum's template (tests/fixtures/terraform/real/
# stackhpc-terraform-magnum/expected.yaml: template_labels): autoscaling on, no bounds.
STACKHPC_LABELS = {
    "auto_scaling_enabled": "true",
    "cinder_csi_enabled": "true",
    "kube_tag": "v1.18.2",
    "use_podman": "true",
}


def template(**overrides: Any) -> ClusterTemplate:
    args: dict[str, Any] = {
        "name": "Kubernetes v1.26.8",
        "kubernetes_version": "v1.26.8",
        "base_labels": {"kube_tag": "v1.26.8", "hw_cpu_mode": "host-model"},
        "uuid": UUID,
    }
    args.update(overrides)
    return ClusterTemplate(**args)


def declare(app: Fleet, **overrides: Any) -> MagnumCluster:
    args: dict[str, Any] = {
        "name": "Cluster",
        "environments": ["dev"],
        "project": OpenStackProject(app, "p", project_name="P"),
        "template": template(),
        "node_count": 1,
    }
    args.update(overrides)
    return MagnumCluster(app, "c", **args)


def render(tmp_path: Path, **overrides: Any) -> testing.SynthOutput:
    app = testing.fleet(environments=["dev"], root=tmp_path)
    declare(app, **overrides)
    return testing.synth(app, validate=True)


def spec(tmp_path: Path, kind: str = "ClusterV1", **overrides: Any) -> dict[str, Any]:
    (body,) = [m.body for m in render(tmp_path, **overrides).all(kind)]
    return dict(body["spec"])


# --- attributes left to the template -------------------------------------------------------


def test_a_cluster_that_leaves_everything_to_its_template(tmp_path: Path) -> None:
    """paws: flavor, keypair, labels, volume and network from the template. Magnum copies
    them (magnum 22.0.0 ``api/controllers/v1/cluster.py`` ``_post``); terraform-provider-
    openstack v3.4.0 marks them Optional+Computed, so leaving them out is no diff."""
    for_provider = spec(tmp_path, inherit_from_template=True)["forProvider"]
    assert for_provider == {
        "clusterTemplateId": UUID,
        "createTimeout": 60,
        "masterCount": 1,
        "mergeLabels": True,
        "name": "Cluster",
        "nodeCount": 1,
    }


def test_without_inherit_the_template_labels_and_master_flavor_render(tmp_path: Path) -> None:
    """The fleet's default (unchanged): the template's base labels and master flavor =
    flavor, explicit in the render."""
    for_provider = spec(tmp_path, flavor="m1.xlarge")["forProvider"]
    assert for_provider["labels"] == {"kube_tag": "v1.26.8", "hw_cpu_mode": "host-model"}
    assert (for_provider["flavor"], for_provider["masterFlavor"]) == ("m1.xlarge", "m1.xlarge")
    assert "keypair" not in for_provider


@pytest.mark.parametrize("labels", [None, {}])
def test_no_labels_and_empty_labels_are_the_same_to_magnum(
    tmp_path: Path, labels: dict[str, str] | None
) -> None:
    """Magnum: ``if cluster.labels == wtypes.Unset or not cluster.labels: cluster.labels =
    cluster_template.labels`` (``_post``): ``{}`` is no labels, so nothing renders."""
    for_provider = spec(tmp_path, inherit_from_template=True, labels=labels)["forProvider"]
    assert "labels" not in for_provider


def test_declared_labels_render_as_declared(tmp_path: Path) -> None:
    """ralgar/homelab (module): ``labels = {hw_cpu_mode}`` with ``merge_labels``."""
    for_provider = spec(
        tmp_path,
        inherit_from_template=True,
        labels={"hw_cpu_mode": "host-passthrough"},
        merge_labels=True,
        flavor="m1.xlarge",
    )["forProvider"]
    assert for_provider["labels"] == {"hw_cpu_mode": "host-passthrough"}
    assert for_provider["mergeLabels"] is True
    assert for_provider["flavor"] == "m1.xlarge"
    assert "masterFlavor" not in for_provider  # the template's (a flavor UUID in ralgar's)


def test_merge_labels_false_renders_as_declared(tmp_path: Path) -> None:
    assert spec(tmp_path, merge_labels=False)["forProvider"]["mergeLabels"] is False


def test_an_inherited_flavor_shows_as_such(tmp_path: Path) -> None:
    app = testing.fleet(environments=["dev"], root=tmp_path)
    declare(app, inherit_from_template=True)
    app.run_phases()
    (row,) = inventory(app)
    (worker,) = row.node_pools
    assert worker.machine_size is None
    assert row.to_dict()["node_pools"][0]["machine_size"] is None
    assert pool_line(worker) == "default-worker: 1 x (inherited size)"


@pytest.mark.parametrize("minutes", [1, 15, 600])
def test_create_timeout_renders_as_declared(tmp_path: Path, minutes: int) -> None:
    """stackhpc/terraform-magnum: ``create_timeout = 15`` (ForceNew in terraform-provider-
    openstack v3.4.0: rendered as the state has it)."""
    assert spec(tmp_path, create_timeout_minutes=minutes)["forProvider"]["createTimeout"] == (
        minutes
    )


# --- autoscaling ---------------------------------------------------------------------------


def test_autoscaling_by_a_label_without_bounds(tmp_path: Path) -> None:
    """stackhpc/terraform-magnum: ``auto_scaling_enabled = "true"`` in the cluster's labels
    and no min/max labels (Magnum's Heat defaults apply). The labels stay byte-identical
    (labels are ForceNew), and Crossplane never enforces nodeCount: initProvider, no
    LateInitialize (upjet v2.2.0 ``pkg/controller/external_tfpluginsdk.go``:
    ``filterInitExclusiveDiffs``; ``Observe``: ``policyHasLateInit``)."""
    s = spec(
        tmp_path,
        template=template(base_labels=STACKHPC_LABELS),
        inherit_from_template=True,
        labels={**STACKHPC_LABELS, "etcd_tag": "v3.4.6"},
        allow_extra_labels=True,
        create_only=("node_count",),
    )
    assert s["forProvider"]["labels"] == {**STACKHPC_LABELS, "etcd_tag": "v3.4.6"}
    assert "nodeCount" not in s["forProvider"]
    assert s["initProvider"] == {"nodeCount": 1}
    assert s["managementPolicies"] == OBSERVE_CREATE_UPDATE


def test_autoscaling_by_a_label_without_bounds_needs_them_or_create_only(fleet: Fleet) -> None:
    with pytest.raises(
        DefinitionError,
        match=r"min_node_count: the cluster's labels turn on Magnum's autoscaler "
        r"\(auto_scaling_enabled='true'\): set min_node_count and max_node_count, or "
        r"create_only=\('node_count',\)",
    ):
        declare(fleet, labels={"auto_scaling_enabled": "true"}, allow_extra_labels=True)


def test_autoscaling_from_the_template_with_its_bounds(tmp_path: Path) -> None:
    """2i2c: the template has ``auto_scaling_enabled`` and ``min_node_count``; the cluster
    declares neither bound. ``fleet ls`` shows the template's."""
    app = testing.fleet(environments=["dev"], root=tmp_path)
    labels = {"auto_scaling_enabled": "true", "min_node_count": "1", "kube_tag": "v1.33.2"}
    declare(
        app,
        template=template(base_labels=labels),
        inherit_from_template=True,
        create_only=["node_count"],
    )
    out = testing.synth(app, validate=True)
    s = out.get("ClusterV1", "cluster")["spec"]
    assert "labels" not in s["forProvider"]  # the template's
    assert s["initProvider"] == {"nodeCount": 1}
    (row,) = inventory(app)
    worker = row.node_pools[0]
    assert (worker.min_node_count, worker.max_node_count) == (1, None)


@pytest.mark.parametrize("merge_labels,autoscaled", [(True, True), (False, False)])
def test_the_templates_switch_counts_only_where_magnum_keeps_the_templates_labels(
    tmp_path: Path, merge_labels: bool, autoscaled: bool
) -> None:
    """Given labels without ``merge_labels``, Magnum keeps only those (``_post``), so the
    template's ``auto_scaling_enabled`` no longer applies."""
    app = testing.fleet(environments=["dev"], root=tmp_path)
    c = declare(
        app,
        template=template(base_labels={"auto_scaling_enabled": "true", "kube_tag": "v1"}),
        inherit_from_template=True,
        labels={"kube_tag": "v1"},
        merge_labels=merge_labels,
        create_only=("node_count",),
    )
    assert c.resolved("dev").autoscaled is autoscaled
    assert ("auto_scaling_enabled" in c.resolved("dev").magnum_labels) is autoscaled


def test_declared_bounds_keep_a_switch_spelled_otherwise(tmp_path: Path) -> None:
    """With bounds, the fleet adds the labels; an ``auto_scaling_enabled`` the template
    already turns on keeps its spelling (``True``): a changed value is a changed ForceNew
    label."""
    s = spec(
        tmp_path,
        template=template(base_labels={"auto_scaling_enabled": "True"}),
        node_count=2,
        min_node_count=1,
        max_node_count=4,
    )
    assert s["forProvider"]["labels"] == {
        "auto_scaling_enabled": "True",
        "min_node_count": "1",
        "max_node_count": "4",
    }
    assert s["initProvider"] == {"nodeCount": 2}


def test_an_autoscaler_label_that_says_off_stays_a_label(tmp_path: Path) -> None:
    """zephyrproject-rtos/infrastructure: ``auto_scaling_enabled = "False"``: no autoscaler,
    so nodeCount is enforced as usual."""
    s = spec(tmp_path, labels={"auto_scaling_enabled": "False"}, allow_extra_labels=True)
    assert s["forProvider"]["labels"]["auto_scaling_enabled"] == "False"
    assert s["forProvider"]["nodeCount"] == 1
    assert "initProvider" not in s and "managementPolicies" not in s


def test_bounds_with_a_label_that_says_off_contradict(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="labels: label auto_scaling_enabled='no' keeps"):
        declare(
            fleet,
            labels={"auto_scaling_enabled": "no"},
            allow_extra_labels=True,
            min_node_count=1,
            max_node_count=3,
        )


def test_autoscaled_node_groups_keep_their_bounds_and_create_only_count(tmp_path: Path) -> None:
    """2i2c: node groups ``core`` 1..5 and ``user-m3.large`` 1..100, adopted by Terraform's
    ids: bounds enforced, the count only at creation (Magnum's Cluster API driver hands
    min != max to the cluster autoscaler: stackhpc/magnum-capi-helm ``driver.py``
    ``_get_autoscale_values``)."""
    s = spec(
        tmp_path,
        "NodegroupV1",
        name="binder-pythia-cluster",
        external_name=CLUSTER_UUID,
        node_groups=[
            NodeGroup(
                name="user-m3.large",
                flavor="m3.large",
                node_count=1,
                min_node_count=1,
                max_node_count=100,
                role="notebook",
                labels={"hub.jupyter.org/node-purpose": "user"},
                external_name=f"{CLUSTER_UUID}/{GROUP_UUID}",
            )
        ],
    )
    assert s["forProvider"]["clusterId"] == CLUSTER_UUID
    assert (s["forProvider"]["minNodeCount"], s["forProvider"]["maxNodeCount"]) == (1, 100)
    assert s["initProvider"] == {"nodeCount": 1}
    assert s["managementPolicies"] == OBSERVE_CREATE_UPDATE


# --- create-only arguments (Terraform's ignore_changes) ------------------------------------


def test_a_node_groups_node_count_under_ignore_changes(tmp_path: Path) -> None:
    """zephyr: ``lifecycle { ignore_changes = [node_count] }`` on every node group."""
    s = spec(
        tmp_path,
        "NodegroupV1",
        node_groups=[
            NodeGroup(
                name="az1-linux-x64",
                flavor="m1.4xlarge",
                node_count=3,
                create_only=("node_count",),
                labels={"availability_zone": "az1"},
            )
        ],
    )
    assert "nodeCount" not in s["forProvider"]
    assert s["initProvider"] == {"nodeCount": 3}
    assert s["managementPolicies"] == OBSERVE_CREATE_UPDATE


def test_a_clusters_node_count_under_ignore_changes(tmp_path: Path) -> None:
    s = spec(tmp_path, create_only=("node_count",), deletion_protection=False)
    assert s["initProvider"] == {"nodeCount": 1}
    assert "nodeCount" not in s["forProvider"]
    # without Orphan, Delete belongs in the list (crossplane-runtime v2.1.0
    # pkg/reconciler/managed/policies.go: [Observe, Create, Update, Delete] is supported)
    assert s["managementPolicies"] == [*OBSERVE_CREATE_UPDATE, "Delete"]
    assert s["deletionPolicy"] == "Delete"


def test_any_forprovider_argument_may_be_create_only(tmp_path: Path) -> None:
    """The CRDs have every forProvider field in initProvider; the CEL rule that wants
    ``clusterTemplateId`` is met by ``initProvider.clusterTemplateId``."""
    s = spec(
        tmp_path,
        flavor="m1",
        keypair="k",
        create_only=("template", "labels", "flavor", "master_flavor", "keypair", "master_count"),
    )
    assert set(s["initProvider"]) == {
        "clusterTemplateId",
        "labels",
        "flavor",
        "masterFlavor",
        "keypair",
        "masterCount",
    }
    assert not set(s["initProvider"]) & set(s["forProvider"])
    assert s["forProvider"]["name"] == "Cluster"


def test_create_only_of_an_argument_left_out_renders_nothing(tmp_path: Path) -> None:
    s = spec(tmp_path, create_only=("flavor",))
    assert "flavor" not in s["forProvider"] and "initProvider" not in s
    assert s["managementPolicies"] == OBSERVE_CREATE_UPDATE


@pytest.mark.parametrize(
    "cls,keyword,why",
    [
        (MagnumCluster, "name", "the name is how Magnum and the provider know it"),
        (MagnumCluster, "project", "it is not an argument Magnum receives"),
        (MagnumCluster, "fleet_labels", "it is not an argument Magnum receives"),
        (MagnumCluster, "flavour", "not an argument of MagnumCluster \\(did you mean 'flavor'"),
        (NodeGroup, "name", "the name is how Magnum and the provider know it"),
        (NodeGroup, "availability_zone", "it renders as the availability_zone label"),
        (NodeGroup, "retired", "it is not an argument Magnum receives"),
    ],
)
def test_what_cannot_be_create_only(fleet: Fleet, cls: type, keyword: str, why: str) -> None:
    with pytest.raises(
        DefinitionError, match=f"create_only: '{keyword}' cannot be create-only: {why}"
    ):
        if cls is NodeGroup:
            NodeGroup(name="a", flavor="f", node_count=1, create_only=(keyword,))
        else:
            declare(fleet, create_only=(keyword,))


def test_create_only_refuses_late_initialization(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="management_policies: late initialization"):
        declare(fleet, create_only=("node_count",), management_policies=["*"])


def test_create_only_is_a_list(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError, match="create_only: must be a list of str, got str"):
        declare(fleet, create_only="node_count")


# --- a node group's clusterId and external name --------------------------------------------


def test_a_fleet_created_node_group_uses_the_cluster_name_in_both(tmp_path: Path) -> None:
    """terraform-provider-openstack v3.4.0 ``resource_openstack_containerinfra_nodegroup_v1.go``:
    Create sends ``cluster_id`` as given and sets the id to ``<cluster_id>/<UUID>``; Read
    sets ``cluster_id`` from that id (``parsePairedIDs``). A node group the fleet creates
    for a cluster it created has ``clusterId`` = the cluster's Magnum name, and its
    Terraform id starts with that name: the two agree."""
    s = spec(
        tmp_path,
        "NodegroupV1",
        node_groups=[NodeGroup(name="user-m3.large", flavor="f", node_count=1)],
    )
    assert s["forProvider"]["clusterId"] == "Cluster"


def test_adopted_by_uuid_the_cluster_id_is_the_cluster_uuid(tmp_path: Path) -> None:
    out = render(
        tmp_path,
        external_name=CLUSTER_UUID,
        node_groups=[
            NodeGroup(
                name="core", flavor="f", node_count=1, external_name=f"{CLUSTER_UUID}/{GROUP_UUID}"
            ),
            NodeGroup(name="new", flavor="f", node_count=1),
        ],
    )
    groups = {m.body["spec"]["forProvider"]["name"]: m.body for m in out.all("NodegroupV1")}
    for body in groups.values():
        assert body["spec"]["forProvider"]["clusterId"] == CLUSTER_UUID
    external = "crossplane.io/external-name"
    assert groups["core"]["metadata"]["annotations"][external] == f"{CLUSTER_UUID}/{GROUP_UUID}"
    assert groups["new"]["metadata"]["annotations"][external] == f"{CLUSTER_UUID}/new"


@pytest.mark.parametrize(
    "cluster_external,group_external",
    [
        (None, f"{CLUSTER_UUID}/{GROUP_UUID}"),
        (CLUSTER_UUID, GROUP_UUID),
        (CLUSTER_UUID, f"{CLUSTER_UUID}/"),
    ],
    ids=["cluster-by-name", "no-cluster-part", "no-group-part"],
)
def test_a_node_group_external_name_that_disagrees_with_cluster_id_is_refused(
    fleet: Fleet, cluster_external: str | None, group_external: str
) -> None:
    with pytest.raises(
        DefinitionError, match="external_name: node group 'core' \\(dev\\): external name"
    ):
        declare(
            fleet,
            external_name=cluster_external,
            node_groups=[
                NodeGroup(name="core", flavor="f", node_count=1, external_name=group_external)
            ],
        )
