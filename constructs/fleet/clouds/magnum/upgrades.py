"""What a change of a live Magnum cluster's template does, by driver: an in-place upgrade
(the Cluster API drivers, one minor version at a time) or a refusal naming the blue/green
path (the Heat drivers, another driver, a skipped minor, a downgrade). One judgement, used
by ``fleet diff`` (:data:`UPGRADE_RULE`, on the rendered ClusterV1) and by the upgrade
rollout's plan (:mod:`fleet.clouds.magnum.rollout`, on the declared templates).

Sources (docs/upstream-behaviour.md has the detail): terraform-provider-openstack v3.4.0
``resource_openstack_containerinfra_cluster_v1.go`` (``cluster_template_id`` is not ForceNew;
its change calls ``clusters.Upgrade`` at microversion 1.8, since v1.53.0, PR #1598);
openstack/magnum ``conductor/handlers/cluster_conductor.py`` ``cluster_upgrade`` (the driver
of the cluster's current template upgrades it), ``drivers/heat/driver.py`` ``upgrade_cluster``
(NotSupported since 18.0.0), ``api/controllers/v1/cluster_actions.py`` ``_upgrade`` (a
node group other than the default only to the cluster's template); openstack/magnum-capi-helm
1.4.0 and vexxhost/magnum-cluster-api v0.38.1 ``driver.py`` ``upgrade_cluster``;
kubernetes-sigs/cluster-api v1.12.11 ``controlplane/kubeadm/internal/webhooks/
kubeadmcontrolplane.go`` ``validateVersion`` and ``internal/webhooks/cluster.go``
``validateTopologyVersionUpdate`` (a skipped minor refused; the topology refuses a decrease).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fleet.clouds.magnum.changes import CONTAINERINFRA
from fleet.clouds.magnum.drivers import (
    DRIVER_NAMES,
    DriverFamily,
    MagnumDriver,
    family_of,
    version_tuple,
)
from fleet.clouds.magnum.render import KUBERNETES_VERSION, MAGNUM_DRIVER, TEMPLATE_NAME
from fleet.clouds.magnum.template import is_uuid
from fleet.core.manifest import dig
from fleet.platform.changes import Change, ChangeRule, Verdict
from fleet.platform.upjet import Level

HEAT_GUIDE = 'docs/guide.md, "Upgrade a Heat-driver Magnum cluster (blue/green)"'
ROLLOUT_GUIDE = 'docs/guide.md, "Upgrade Kubernetes across the fleet"'
SOURCE = (
    "terraform-provider-openstack v3.4.0 openstack/resource_openstack_containerinfra_cluster_v1.go "
    "(Update: clusters.Upgrade); openstack/magnum conductor/handlers/cluster_conductor.py "
    "(cluster_upgrade), drivers/heat/driver.py (upgrade_cluster); openstack/magnum-capi-helm "
    "1.4.0, vexxhost/magnum-cluster-api v0.38.1 driver.py (upgrade_cluster); "
    "kubernetes-sigs/cluster-api v1.12.11 (KubeadmControlPlane and Cluster webhooks)"
)

WHAT_THE_DRIVER_DOES = {
    DriverFamily.CAPI_HELM: (
        "magnum-capi-helm moves the cluster to the template and re-applies its Helm release "
        "with the Kubernetes version of the template image's kube_version property: Cluster "
        "API replaces the control plane's nodes, then those of every node group (all of them "
        "in the one upgrade); the labels stay as they are"
    ),
    DriverFamily.CLUSTER_API: (
        "magnum-cluster-api rewrites kube_tag in the cluster's labels and in every node "
        "group's, gives every node group the template's image and rolls the whole cluster "
        "(it ignores the node group of the request); the fleet renders those fields "
        "create-only, so the rewrite is no drift"
    ),
}
"""What each Cluster API driver's ``upgrade_cluster`` does."""

IN_SHORT = {
    DriverFamily.CAPI_HELM: (
        "Magnum's upgrade action; the driver re-applies the cluster's Helm release at the "
        "template image's kube_version (control plane, then every node group), labels untouched"
    ),
    DriverFamily.CLUSTER_API: (
        "Magnum's upgrade action; the driver rewrites kube_tag in the cluster's and every node "
        "group's labels and rolls every node group onto the template's image"
    ),
}
"""The same, in one line (for plans)."""

NODE_GROUPS = (
    "a node group cannot be upgraded on its own from the fleet (`openstack coe cluster "
    "upgrade --nodegroup`): NodegroupV1 has no template, its image_id is ForceNew and its "
    "Update changes only node counts, and Magnum upgrades a node group other than the "
    "default one only to the cluster's template"
)


@dataclass(frozen=True)
class TemplateSide:
    """One side of a change of template: the template, its driver and version as known."""

    name: str
    driver: MagnumDriver | None
    version: str | None
    unknown_because: str = ""
    """Why the driver is not known (when it is not)."""

    def shown(self) -> str:
        """``kubernetes-1.31 (v1.31.2)``."""
        return f"{self.name} ({self.version})" if self.version else self.name


@dataclass(frozen=True)
class UpgradeJudgement:
    """What a change of template does to a live cluster."""

    in_place: bool
    level: Level
    message: str


def _blue_green(what: str) -> str:
    return (
        f"{what}. Instead, blue/green: declare a new cluster (a new name) with the new "
        "template, move the workloads, then retire this one (" + HEAT_GUIDE + ")"
    )


def judge_template_change(old: TemplateSide, new: TemplateSide) -> UpgradeJudgement:
    """An in-place upgrade (a warning: every node is replaced) or a refusal (an error that
    names the blue/green path)."""
    change = f"template {old.shown()} -> {new.shown()}"
    if old.driver is None:
        return UpgradeJudgement(
            False,
            "error",
            _blue_green(
                f"{change}: the cluster's driver is not known ({old.unknown_because}), so the "
                "fleet applies the Heat rules (Magnum's Heat drivers refuse every upgrade); "
                "if it is a Cluster API driver, declare it (ClusterTemplate(driver=...)) in a "
                "change of its own first, so that the base revision records it"
            ),
        )
    family = family_of(old.driver)
    if family is DriverFamily.HEAT:
        return UpgradeJudgement(
            False,
            "error",
            _blue_green(
                f"{change}: Magnum's Heat driver ({old.driver.value}) refuses every in-place "
                "upgrade since Magnum 18.0.0 (drivers/heat/driver.py upgrade_cluster: "
                "NotSupported), and the provider would retry the upgrade on every poll"
            ),
        )
    if new.driver != old.driver:
        other = new.driver.value if new.driver else f"unknown ({new.unknown_because})"
        return UpgradeJudgement(
            False,
            "error",
            _blue_green(
                f"{change}: the new template's driver is {other}, the cluster's is "
                f"{old.driver.value}; Magnum upgrades a cluster with the driver of its "
                "current template (conductor/handlers/cluster_conductor.py cluster_upgrade), "
                "so a cluster never changes driver in place"
            ),
        )
    before = version_tuple(old.version or "")
    after = version_tuple(new.version or "")
    if before is not None and after is not None:
        if after < before:
            return UpgradeJudgement(
                False,
                "error",
                f"{change}: a downgrade; Kubernetes does not support one (Cluster API's "
                'topology webhook refuses it, "version cannot be decreased"; etcd and the '
                "API's stored versions do not go back). Keep the template, or build a new "
                f"cluster at the older version ({HEAT_GUIDE})",
            )
        if after[0] != before[0] or after[1] > before[1] + 1:
            skipped = ", ".join(f"{before[0]}.{m}" for m in range(before[1] + 1, after[1]))
            return UpgradeJudgement(
                False,
                "error",
                f"{change} skips {skipped or 'a major version'}: Kubernetes upgrades one minor "
                "version at a time, and Cluster API refuses the skip (KubeadmControlPlane "
                'webhook: "cannot update Kubernetes version from ... to ..."), leaving the '
                "cluster UPDATE_FAILED. Upgrade through a template of each minor version in "
                f"turn ({ROLLOUT_GUIDE})",
            )
    return UpgradeJudgement(
        True,
        "warning",
        f"{change}: an in-place upgrade by {old.driver.value}. The provider calls Magnum's "
        f"upgrade action (microversion 1.8); {WHAT_THE_DRIVER_DOES[family]}. Note that "
        f"{NODE_GROUPS}",
    )


def _side(body: object) -> TemplateSide:
    annotations = dig(body, "metadata", "annotations")
    annotations = annotations if isinstance(annotations, dict) else {}
    given = annotations.get(TEMPLATE_NAME)
    name = str(given or dig(body, "spec", "forProvider", "clusterTemplateId"))
    driver = annotations.get(MAGNUM_DRIVER)
    version = annotations.get(KUBERNETES_VERSION)
    known = driver if isinstance(driver, str) and driver in DRIVER_NAMES else None
    return TemplateSide(
        name=name,
        driver=MagnumDriver(known) if known else None,
        version=str(version) if version else None,
        unknown_because=(
            ""
            if known
            else f"{MAGNUM_DRIVER} is not set: template {name!r} declares no driver and none "
            "follows from its cluster_distro, or the objects were rendered before the fleet "
            "knew drivers"
        ),
    )


def judge_template_id(change: Change) -> Sequence[Verdict]:
    """A ClusterV1 whose ``clusterTemplateId`` changes: from a name to the template's UUID
    no change at all (Magnum stores the UUID), else :func:`judge_template_change` on the
    annotations both sides render."""
    old = dig(change.old, "spec", "forProvider", "clusterTemplateId")
    new = dig(change.new, "spec", "forProvider", "clusterTemplateId")
    if old == new or old is None or new is None:
        return ()
    if is_uuid(new) and not is_uuid(old):
        return (
            (
                "note",
                f"spec.forProvider.clusterTemplateId: {old} -> {new}: the template's UUID "
                "replaces its name; Magnum stores the UUID already, so the provider sees no "
                "change (no upgrade)",
            ),
        )
    judged = judge_template_change(_side(change.old), _side(change.new))
    return ((judged.level, f"spec.forProvider.clusterTemplateId: {judged.message}"),)


UPGRADE_RULE = ChangeRule(
    groups=tuple(CONTAINERINFRA),
    kinds=("ClusterV1",),
    paths=(("spec", "forProvider", "clusterTemplateId"),),
    judge=judge_template_id,
    source=SOURCE,
)
"""What ``fleet diff`` says of a live Magnum cluster whose template changes."""
