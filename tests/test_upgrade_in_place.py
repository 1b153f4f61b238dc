"""27-upgrade-in-place: a Magnum cluster's template changes in place with the Cluster API
drivers, and is refused with Heat; one test per upstream fact the behaviour rests on (each
names its repository, file and tag or commit; docs/upstream-behaviour.md has the detail).

Through the public API: ``ClusterTemplate(driver=...)``, ``fleet.testing.diff``, and the
``fleet upgrade plan`` command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest
from builders import magnum, oke
from crd_samples import crds_dir
from support import HYBRID, REPO

from fleet import ClusterTemplate, MagnumDriver, MagnumDriverName, NodeGroup, testing
from fleet.checks.crds import load_crds
from fleet.cli.main import main
from fleet.clouds.magnum.drivers import PROVIDES, DriverFamily, family_of
from fleet.clouds.magnum.plugin import FORCE_NEW_DATA
from fleet.core.errors import DefinitionError
from fleet.core.fleet import Fleet
from fleet.platform.upjet import load_force_new_table

MAGNUM = "containerinfra.openstack.crossplane.io"


def template(name: str, version: str, **kwargs: Any) -> ClusterTemplate:
    """A template of ``version`` with ``kube_tag`` among its labels (a UUID from its name)."""
    digits = "".join(c for c in version if c.isdigit()).ljust(12, "0")[:12]
    serial = f"{sum(map(ord, name)):08x}"[-8:]
    return ClusterTemplate(
        name=name,
        kubernetes_version=version,
        base_labels={"kube_tag": version, "monitoring_enabled": "true"},
        uuid={"cern": f"{serial}-0000-4000-8000-{digits}"},
        **kwargs,
    )


def one_cluster(tpl: ClusterTemplate, **overrides: Any) -> Fleet:
    app = testing.fleet(environments=["dev"])
    magnum(app, "web", template=tpl, **overrides)
    return app


def errors_of(before: ClusterTemplate, after: ClusterTemplate, **overrides: Any) -> list[str]:
    return testing.diff(one_cluster(before, **overrides), one_cluster(after, **overrides)).errors


def for_provider(app: Fleet) -> dict[str, Any]:
    body: dict[str, Any] = testing.synth(app).get("ClusterV1", "web-dev")
    return body


# --- the acceptance ---------------------------------------------------------------------


def test_capi_helm_template_change_of_a_live_cluster_is_an_in_place_upgrade() -> None:
    before = template("capi-1.30", "v1.30.4", driver="k8s_capi_helm_v1")
    after = template("capi-1.31", "v1.31.2", driver="k8s_capi_helm_v1")
    out = testing.diff(one_cluster(before), one_cluster(after))
    assert out.errors == []
    [upgrade] = [f for f in out.findings if "clusterTemplateId" in f.message]
    assert upgrade.level == "warning"
    assert "an in-place upgrade by k8s_capi_helm_v1" in upgrade.message
    assert "capi-1.30 (v1.30.4) -> capi-1.31 (v1.31.2)" in upgrade.message
    assert "magnum-capi-helm moves the cluster to the template" in upgrade.message
    assert "NodegroupV1 has no template" in upgrade.message
    # the template's labels (kube_tag) changed too: create-only, so only a note
    assert any(
        f.level == "note" and "spec.initProvider.labels.kube_tag" in f.message for f in out.findings
    )


def test_vexxhost_template_change_is_in_place_and_for_provider_has_no_kube_tag() -> None:
    before = template("ubuntu-1.30", "v1.30.4", driver="k8s_cluster_api_ubuntu")
    after = template("ubuntu-1.31", "v1.31.2", driver="k8s_cluster_api_ubuntu")
    out = testing.diff(one_cluster(before), one_cluster(after))
    assert out.errors == []
    assert any("an in-place upgrade by k8s_cluster_api_ubuntu" in f.message for f in out.findings)
    body = for_provider(one_cluster(after))
    assert "labels" not in body["spec"]["forProvider"]
    assert "kube_tag" not in str(body["spec"]["forProvider"])
    assert body["spec"]["initProvider"]["labels"]["kube_tag"] == "v1.31.2"
    # no late initialization: it would copy the labels back into forProvider
    assert body["spec"]["managementPolicies"] == ["Observe", "Create", "Update"]


def test_heat_template_change_is_refused() -> None:
    before = template("heat-1.25", "v1.25.3", driver="k8s_fedora_coreos_v1")
    after = template("heat-1.26", "v1.26.9", driver="k8s_fedora_coreos_v1")
    errors = errors_of(before, after)
    assert any("Magnum's Heat driver (k8s_fedora_coreos_v1) refuses" in e for e in errors)
    assert any("blue/green" in e for e in errors)
    # today's rule stands too: the labels are in forProvider, and ForceNew
    assert any("spec.forProvider.labels.kube_tag" in e and "ForceNew" in e for e in errors)


def test_heat_to_capi_template_change_is_refused_naming_blue_green() -> None:
    before = template("heat-1.25", "v1.25.3", driver="k8s_fedora_coreos_v1")
    after = template("capi-1.26", "v1.26.9", driver="k8s_capi_helm_v1")
    errors = [e for e in errors_of(before, after) if "clusterTemplateId" in e]
    assert len(errors) == 1
    assert "Heat driver (k8s_fedora_coreos_v1) refuses" in errors[0]
    assert "Upgrade a Heat-driver Magnum cluster (blue/green)" in errors[0]


def _files(root: Path) -> list[Path]:
    return sorted(p.relative_to(root) for p in root.rglob("*") if "__pycache__" not in p.parts)


def test_upgrade_plan_runs_on_the_example_fleet(capsys: pytest.CaptureFixture[str]) -> None:
    """The example fleet (``clusters/``, a copy of the fixture fleet ``hybrid``, which is its
    one source: tests/test_example_fleet.py) declares a rollout; its plan is read-only. Its
    OKE clusters upgrade in place in two steps; its Magnum clusters' templates declare no
    driver, so Heat rules apply: blue/green, onto the target's Cluster API template."""
    before = sorted(
        p.relative_to(HYBRID) for p in HYBRID.rglob("*") if "__pycache__" not in p.parts
    )
    assert main(["--root", str(HYBRID), "upgrade", "plan"]) == 0
    out = capsys.readouterr().out
    assert "target kubernetes-1.31" in out
    assert "test/oke-sso-test  OKE  in place  v1.30.1 -> v1.31.1" in out
    assert "dev/k8s-sso-dev-v25  Magnum  blue/green  kubernetes-1.25.3-3 (v1.25.3) -> " in out
    assert "its driver is not known, so Heat rules apply" in out
    assert "19 clusters: 15 blue/green, 4 in place; 0 of 5 steps promoted." in out
    assert main(["--root", str(HYBRID), "upgrade", "plan", "--format", "json"]) == 0
    after = _files(HYBRID)
    assert after == before


# --- the driver of a template -------------------------------------------------------------


def test_the_driver_names_are_typed_as_precisely_as_they_are_checked() -> None:
    assert set(get_args(MagnumDriverName)) == {d.value for d in MagnumDriver}
    for wrong in ("k8s_capi_helm_v2", "swarm_fedora_atomic_v2", 1):
        with pytest.raises(DefinitionError, match="driver: must be a MagnumDriver or one of") as e:
            template("x", "v1.30.1", driver=wrong)
        assert "'k8s_capi_helm_v1'" in str(e.value) and "test_upgrade_in_place.py" in str(e.value)


def test_heat_drivers_are_those_magnum_registered_for_kubernetes() -> None:
    """openstack/magnum ``setup.cfg`` ``[entry_points] magnum.drivers`` at 12.0.0 (the
    Kubernetes Heat drivers ``k8s_fedora_atomic_v1``, ``k8s_fedora_coreos_v1``,
    ``k8s_coreos_v1``, ``k8s_fedora_ironic_v1``; swarm and mesos are no Kubernetes), at
    18.0.0 to 22.0.0 and stable/2026.1 (9f9c4b9f) only ``k8s_fedora_coreos_v1``; on master
    (5a492d64) the entry-point group moved to ``pyproject.toml`` and is empty (commit
    31b84327, "Remove Heat driver and k8s_fedora_coreos_v1 driver", merged 2026-05-13;
    ``releasenotes/notes/drop-heat-driver-3c45429c61a33b1c.yaml``). Deprecated in 20.0.0
    (2025.1): ``releasenotes/notes/deprecate-heat-driver-930d999afde1eece.yaml``."""
    heat = {d.value for d in MagnumDriver if family_of(d) is DriverFamily.HEAT}
    assert heat == {
        "k8s_fedora_atomic_v1",
        "k8s_fedora_coreos_v1",
        "k8s_coreos_v1",
        "k8s_fedora_ironic_v1",
    }


def test_capi_helm_entry_point() -> None:
    """openstack/magnum-capi-helm 1.4.0 (2d2f04bc) ``setup.cfg``: ``magnum.drivers =
    k8s_capi_helm_v1 = magnum_capi_helm.driver:Driver``; ``driver.py`` ``provides`` (vm,
    ubuntu | flatcar, kubernetes)."""
    assert family_of(MagnumDriver.K8S_CAPI_HELM_V1) is DriverFamily.CAPI_HELM
    assert {k for k, d in PROVIDES if d is MagnumDriver.K8S_CAPI_HELM_V1} == {
        ("vm", "ubuntu", "kubernetes"),
        ("vm", "flatcar", "kubernetes"),
    }


def test_magnum_cluster_api_entry_points() -> None:
    """vexxhost/magnum-cluster-api v0.38.1 (3890a362) ``pyproject.toml``
    ``[project.entry-points."magnum.drivers"]``: ``k8s_cluster_api_ubuntu``, ``_ubuntu_focal``,
    ``_debian``, ``_flatcar``, ``_rockylinux``; ``magnum_cluster_api/driver.py`` ``provides``
    one os each."""
    vexxhost = {d.value for d in MagnumDriver if family_of(d) is DriverFamily.CLUSTER_API}
    assert vexxhost == {
        "k8s_cluster_api_ubuntu",
        "k8s_cluster_api_ubuntu_focal",
        "k8s_cluster_api_debian",
        "k8s_cluster_api_flatcar",
        "k8s_cluster_api_rockylinux",
    }


def test_a_template_declares_its_driver() -> None:
    """openstack/magnum ``magnum/api/controllers/v1/cluster_template.py``: ``driver =
    wtypes.StringType(...)``, "Driver name set explicitly" (commit 8a30ad34, Magnum 18.0.0)."""
    decision = template("t", "v1.30.4", driver="k8s_capi_helm_v1").driver_decision
    assert decision.driver is MagnumDriver.K8S_CAPI_HELM_V1
    assert decision.how == "declared"
    assert decision.in_place


def test_without_driver_the_distro_decides_only_when_one_driver_provides_it() -> None:
    """openstack/magnum stable/2026.1 ``magnum/drivers/common/driver.py`` ``get_driver``:
    without a driver name, the one registered for (server_type, os, coe); two drivers
    registering one tuple overwrite each other in ``get_drivers`` (which one depends on the
    installation), so the fleet does not guess; without a distro, Heat rules, and it says so."""
    coreos = template("t", "v1.25.3", cluster_distro="fedora-coreos").driver_decision
    assert coreos.driver is MagnumDriver.K8S_FEDORA_COREOS_V1 and coreos.how == "os_distro"
    focal = template("t", "v1.30.4", cluster_distro="ubuntu-focal").driver_decision
    assert focal.driver is MagnumDriver.K8S_CLUSTER_API_UBUNTU_FOCAL
    ubuntu = template("t", "v1.30.4", cluster_distro="ubuntu").driver_decision
    assert ubuntu.driver is None and ubuntu.family is DriverFamily.HEAT
    assert "k8s_capi_helm_v1 and k8s_cluster_api_ubuntu" in ubuntu.reason
    assert "declare ClusterTemplate(driver=...)" in ubuntu.reason
    unknown = template("t", "v1.30.4").driver_decision
    assert unknown.driver is None and "neither driver= nor cluster_distro" in unknown.reason
    # the decision is in the render for fleet diff: a known driver only
    known = for_provider(one_cluster(template("t", "v1.25.3", cluster_distro="fedora-coreos")))
    assert known["metadata"]["annotations"]["fleet.openstack/magnum-driver"] == (
        "k8s_fedora_coreos_v1"
    )
    unset = for_provider(one_cluster(template("t", "v1.25.3")))
    assert "fleet.openstack/magnum-driver" not in unset["metadata"]["annotations"]


def test_an_unknown_driver_gets_heat_rules_and_a_note_asking_for_it() -> None:
    errors = errors_of(template("a", "v1.30.4"), template("b", "v1.31.2"))
    [refusal] = [e for e in errors if "clusterTemplateId" in e]
    assert "driver is not known" in refusal
    assert "declare it (ClusterTemplate(driver=...)) in a change of its own first" in refusal


def test_magnum_upgrades_with_the_driver_of_the_current_template() -> None:
    """openstack/magnum master (5a492d64) and stable/2026.1
    ``magnum/conductor/handlers/cluster_conductor.py`` ``cluster_upgrade``: ``ct =
    conductor_utils.retrieve_cluster_template(context, cluster)`` (the cluster's current
    template) picks the driver, then ``cluster_driver.upgrade_cluster(..., cluster_template,
    ...)`` with the new one: a cluster never changes driver in place."""
    before = template("helm-1.30", "v1.30.4", driver="k8s_capi_helm_v1")
    after = template("ubuntu-1.30", "v1.30.4", driver="k8s_cluster_api_ubuntu")
    [refusal] = [e for e in errors_of(before, after) if "clusterTemplateId" in e]
    assert "Magnum upgrades a cluster with the driver of its current template" in refusal
    assert "blue/green" in refusal


def test_the_heat_driver_refuses_upgrades() -> None:
    """openstack/magnum stable/2026.1 ``magnum/drivers/heat/driver.py``
    ``FedoraKubernetesDriver.upgrade_cluster``: ``raise exception.NotSupported(operation=
    'Upgrading a cluster that uses the Magnum Heat driver')`` (commit 2fd3059f, 18.0.0)."""
    before = template("heat-a", "v1.25.3", cluster_distro="fedora-coreos")
    after = template("heat-b", "v1.25.3", cluster_distro="fedora-coreos")
    assert any("refuses every in-place upgrade" in e for e in errors_of(before, after))


def test_a_skipped_minor_version_is_refused() -> None:
    """Magnum itself checks no version (master ``magnum/api/controllers/v1/cluster_actions.py``
    ``_upgrade``; magnum-capi-helm 1.4.0 ``upgrade_cluster``: "TODO(mkjpryor) check that the
    upgrade is viable e.g. not ... more than one minor version"); Cluster API refuses it:
    kubernetes-sigs/cluster-api v1.12.11 ``controlplane/kubeadm/internal/webhooks/
    kubeadmcontrolplane.go`` ``validateVersion`` ("cannot update Kubernetes version from %s to
    %s", ceiling minor + 2), ``internal/webhooks/cluster.go`` ``validateTopologyVersionUpdate``
    (magnum-cluster-api's ClusterClass topology: "version cannot be increased", and
    "version cannot be decreased")."""
    for driver in ("k8s_capi_helm_v1", "k8s_cluster_api_ubuntu"):
        before = template("a", "v1.29.8", driver=driver)
        after = template("b", "v1.31.2", driver=driver)
        [refusal] = [e for e in errors_of(before, after) if "clusterTemplateId" in e]
        assert "skips 1.30" in refusal and "cannot update Kubernetes version" in refusal
        down = [e for e in errors_of(after, before) if "clusterTemplateId" in e]
        assert len(down) == 1 and "a downgrade" in down[0]
    patch = errors_of(
        template("a", "v1.30.2", driver="k8s_capi_helm_v1"),
        template("b", "v1.31.9", driver="k8s_capi_helm_v1"),
    )
    assert patch == []


def test_capi_helm_upgrades_by_template_with_the_images_kube_version_labels_untouched() -> None:
    """openstack/magnum-capi-helm 1.4.0 ``magnum_capi_helm/driver.py``: ``upgrade_cluster``
    sets ``cluster.cluster_template_id = cluster_template.uuid``, marks every node group
    UPDATE_IN_PROGRESS and calls ``_update_helm_release``, whose values take
    ``kubernetesVersion`` from ``_get_kube_version(image)`` (the image's ``kube_version``
    property) and one ``machineImageId`` for the cluster; the cluster's labels are not
    touched. So the template is the upgrade, and a template-derived label rendered in
    forProvider would be ForceNew drift: labels render create-only."""
    tpl = template("capi-1.30", "v1.30.4", driver="k8s_capi_helm_v1")
    body = for_provider(one_cluster(tpl, labels={"monitoring_enabled": "false"}))
    assert "labels" not in body["spec"]["forProvider"]
    assert body["spec"]["initProvider"]["labels"] == {
        "kube_tag": "v1.30.4",
        "monitoring_enabled": "false",
    }
    assert body["metadata"]["annotations"]["fleet.openstack/kubernetes-version"] == "v1.30.4"


def test_magnum_cluster_api_rewrites_kube_tag_and_node_group_images() -> None:
    """vexxhost/magnum-cluster-api v0.38.1 ``magnum_cluster_api/driver.py`` ``upgrade_cluster``:
    ``cluster.labels["kube_tag"] = cluster_template.labels["kube_tag"]`` and, for every node
    group, ``ng.image_id = cluster_template.image_id`` and ``ng.labels["kube_tag"] = ...``
    ("we ignore the `nodegroup` parameter and upgrade the entire cluster at once"). Both are
    ForceNew on NodegroupV1 (terraform-provider-openstack v3.4.0
    ``resource_openstack_containerinfra_nodegroup_v1.go``): the node groups of such a
    cluster render them create-only, a Cluster API Helm cluster's do not."""
    group = NodeGroup(name="gpu", flavor="g1", node_count=1, image_id="img-1.30", labels={"a": "b"})
    vexx = template("ubuntu-1.30", "v1.30.4", driver="k8s_cluster_api_ubuntu")
    out = testing.synth(one_cluster(vexx, node_groups=[group]))
    ng = out.get("NodegroupV1", "web-dev-gpu")
    assert "imageId" not in ng["spec"]["forProvider"]
    assert "labels" not in ng["spec"]["forProvider"]
    assert ng["spec"]["initProvider"] == {"imageId": "img-1.30", "labels": {"a": "b"}}
    helm = template("capi-1.30", "v1.30.4", driver="k8s_capi_helm_v1")
    ng = testing.synth(one_cluster(helm, node_groups=[group])).get("NodegroupV1", "web-dev-gpu")
    assert ng["spec"]["forProvider"]["imageId"] == "img-1.30"


def test_template_id_is_updatable_and_its_change_is_magnums_upgrade_action() -> None:
    """terraform-provider-openstack v3.4.0 (4fd8eba1)
    ``openstack/resource_openstack_containerinfra_cluster_v1.go``: ``cluster_template_id``
    has ``ForceNew: false``; ``resourceContainerInfraClusterV1Update``: ``if
    d.HasChange("cluster_template_id")`` -> ``clusters.Upgrade`` at
    ``containerInfraV1ClusterUpgradeMinMicroversion`` ("1.8",
    ``containerinfra_shared_v1.go``); since v1.53.0 (PR #1598, commit ca003d4b)."""
    table = load_force_new_table(FORCE_NEW_DATA)
    assert "clusterTemplateId" in table.updatable[(MAGNUM, "ClusterV1")]
    assert "clusterTemplateId" not in table.kinds[(MAGNUM, "ClusterV1")]


def test_labels_are_force_new_and_read_back_merged() -> None:
    """terraform-provider-openstack v3.4.0 ``resource_openstack_containerinfra_cluster_v1.go``:
    ``labels`` is ``TypeMap``, Optional, ForceNew, Computed, and the Read sets it from Magnum
    (with ``merge_labels``: ``containerInfraV1GetLabelsMerged``, ``containerinfra_shared_v1.go``:
    the labels added, skipped and overridden against the template, plus the configured
    ones); so after magnum-cluster-api rewrites kube_tag, a kube_tag in forProvider differs
    from what the Read returns: ForceNew for ever. Heat-rule clusters keep labels in
    forProvider, and a label change there is refused."""
    table = load_force_new_table(FORCE_NEW_DATA)
    labels = table.kinds[(MAGNUM, "ClusterV1")]["labels"]
    assert labels.map and labels.computed
    heat = template("heat", "v1.25.3", driver="k8s_fedora_coreos_v1")
    errors = errors_of(heat, heat, labels={}) + errors_of(
        heat, heat, labels={"monitoring_enabled": "false"}
    )
    assert errors == []  # the same labels: nothing changes
    changed = testing.diff(
        one_cluster(heat, labels={}), one_cluster(heat, labels={"monitoring_enabled": "false"})
    ).errors
    assert any("labels.monitoring_enabled" in e and "ForceNew" in e for e in changed)


def test_provider_openstack_has_the_template_id_and_init_provider_labels() -> None:
    """crossplane-contrib/provider-openstack v0.9.0 (c0f2ee9b)
    ``apis/cluster/containerinfra/v1alpha1/zz_clusterv1_types.go``: ``ClusterTemplateID``
    (``clusterTemplateId``) and ``Labels`` in ``ClusterV1Parameters`` and
    ``ClusterV1InitParameters``; the vendored CRD carries both paths."""
    index = load_crds(crds_dir())
    crd = index.get(f"{MAGNUM}/v1alpha1", "ClusterV1")
    assert crd is not None
    spec = crd.schema["properties"]["spec"]["properties"]
    assert "clusterTemplateId" in spec["forProvider"]["properties"]
    assert "labels" in spec["initProvider"]["properties"]
    assert (
        "imageId"
        in (
            index.get(f"{MAGNUM}/v1alpha1", "NodegroupV1").schema  # type: ignore[union-attr]
        )["properties"]["spec"]["properties"]["initProvider"]["properties"]
    )


def test_upjet_drops_init_provider_differences_and_refuses_replacement() -> None:
    """crossplane/upjet v2.2.0 (a6c942a4) ``pkg/controller/external_tfpluginsdk.go``:
    ``filterInitExclusiveDiffs`` deletes, once the resource exists, every diff attribute
    under a key set in ``spec.initProvider`` and not in ``spec.forProvider``
    (``getTerraformIgnoreChanges``, ``pkg/controller/ignored_tfpluginsdk.go``; for ``labels``
    that is ``labels`` and every ``labels.*``, ``labels.%`` included), before ``Update``'s
    ``assertNoForceNew`` ("refuse to update the external resource because the following
    update requires replacing it"). A change of initProvider labels is a note."""
    helm = template("capi-1.30", "v1.30.4", driver="k8s_capi_helm_v1")
    out = testing.diff(
        one_cluster(helm, labels={}), one_cluster(helm, labels={"monitoring_enabled": "false"})
    )
    assert out.errors == []
    [note] = [f for f in out.findings if "initProvider" in f.message]
    assert note.level == "note" and "used only to create the object" in note.message


def test_a_user_late_initialization_policy_is_refused_for_capi_clusters() -> None:
    """upjet v2.2.0 ``Observe`` (``policyHasLateInit``) would copy the live labels into
    forProvider, where a driver's rewrite is ForceNew drift."""
    helm = template("capi-1.30", "v1.30.4", driver="k8s_capi_helm_v1")
    with pytest.raises(DefinitionError, match="the labels of a cluster of a Cluster API driver"):
        testing.synth(one_cluster(helm, management_policies=["*"]))


def test_oke_control_plane_one_minor_at_a_time_pools_after() -> None:
    """oracle/cluster-api-provider-oci v0.24.0 (909e19f4) ``cloud/scope/
    managed_control_plane.go`` ``UpdateControlPlane`` sends ``spec.version`` to OKE's
    UpdateCluster unchecked (``api/v1beta2/ocimanagedcontrolplane_webhook.go`` has no version
    rule); ``managed_machine_pool.go`` sends each pool's. The rule is Kubernetes':
    kubernetes/website (01bc0975) ``content/en/releases/version-skew-policy.md`` ("require
    kube-apiserver to not skip minor versions when upgrading"; "kubelet must not be newer
    than kube-apiserver"). What the tool already enforced: a pool newer than the control
    plane in one render (``OciManagedCluster._resolve_pool``); not a skip, nor both moving in
    one change."""

    def fleet_at(version: str, pool_version: str | None = None) -> Fleet:
        app = testing.fleet(environments=["dev"])
        oke(app, kubernetes_version=version)
        if pool_version is not None:  # pools follow the control plane unless pinned
            app = testing.fleet(environments=["dev"])
            from fleet import OkeNodePool

            oke(
                app,
                kubernetes_version=version,
                node_pools=[
                    OkeNodePool(
                        name="general", ocpus=1, node_count=3, kubernetes_version=pool_version
                    )
                ],
            )
        return app

    skip = testing.diff(fleet_at("v1.29.3"), fleet_at("v1.31.1")).errors
    assert any("skips a minor version" in e for e in skip)
    down = testing.diff(fleet_at("v1.31.1"), fleet_at("v1.30.1")).errors
    assert any("cannot downgrade a control plane" in e for e in down)
    together = testing.diff(fleet_at("v1.30.1"), fleet_at("v1.31.1")).errors
    assert any("in the same change as the control plane's upgrade" in e for e in together)
    first = testing.diff(fleet_at("v1.30.1"), fleet_at("v1.31.1", "v1.30.1"))
    assert first.errors == []
    assert any("in-place upgrade of the OKE control plane" in f.message for f in first.findings)
    then = testing.diff(fleet_at("v1.31.1", "v1.30.1"), fleet_at("v1.31.1"))
    assert then.errors == []


def test_the_guide_names_what_node_groups_can_express(tmp_path: Path) -> None:
    """``openstack coe cluster upgrade --nodegroup``: Magnum master
    ``magnum/api/controllers/v1/cluster_actions.py`` ``_upgrade`` upgrades a node group other
    than the default one only to the cluster's template ("Nodegroup %s can be upgraded only
    to match cluster's template"), and terraform-provider-openstack v3.4.0's NodegroupV1 has
    no template attribute and updates only node counts
    (``resource_openstack_containerinfra_nodegroup_v1.go`` Update)."""
    guide = (REPO / "docs" / "guide.md").read_text()
    assert "--nodegroup" in guide
    assert "NodegroupV1" in guide


def test_declaring_the_driver_of_a_live_cluster_passes_fleet_diff() -> None:
    """What the guide says of a merge request that only adds ``driver=``: the annotation,
    the labels moving to ``spec.initProvider`` (notes), the management policies; no error."""
    out = testing.diff(
        one_cluster(template("t", "v1.30.4")),
        one_cluster(template("t", "v1.30.4", driver="k8s_capi_helm_v1")),
    )
    assert out.errors == []
    [change] = out.diff.environments[0].changed
    paths = {".".join(map(str, c.path[:3])) for c in change.fields}
    assert paths == {
        "metadata.annotations.fleet.openstack/magnum-driver",
        "spec.forProvider.labels",
        "spec.initProvider.labels",
        "spec.managementPolicies",
    }
    assert [f.level for f in out.findings] == ["note", "note"]
