"""Magnum's part of an upgrade target (:class:`MagnumTarget`): the template per Magnum driver
and region, and the path of each cluster to it. A cluster of a Cluster API driver takes the
target template of its driver in one step (an in-place upgrade, judged like ``fleet diff``
judges it: :func:`fleet.clouds.magnum.upgrades.judge_template_change`); a cluster of a Heat
driver, or of an unknown driver, is listed for blue/green."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from fleet.clouds.base import FleetCluster
from fleet.clouds.magnum.cluster import MagnumCluster
from fleet.clouds.magnum.drivers import (
    MagnumDriver,
    MagnumDriverName,
    check_driver,
    version_tuple,
)
from fleet.clouds.magnum.template import ClusterTemplate
from fleet.clouds.magnum.upgrades import (
    HEAT_GUIDE,
    IN_SHORT,
    TemplateSide,
    judge_template_change,
)
from fleet.clouds.upgrades import CloudTarget, PathMode, PathStep, UpgradePath
from fleet.core.errors import DefinitionError
from fleet.core.options import option, value_type

Templates = Mapping[
    MagnumDriver | MagnumDriverName, ClusterTemplate | Mapping[str, ClusterTemplate]
]


def _side(template: ClusterTemplate) -> TemplateSide:
    decision = template.driver_decision
    return TemplateSide(
        template.name, decision.driver, template.kubernetes_version, decision.reason
    )


def _shown(template: ClusterTemplate) -> str:
    return f"{template.name} ({template.kubernetes_version})"


@value_type
class MagnumTarget(CloudTarget):
    """The Magnum templates a target moves clusters to: per Magnum driver, one template, or
    one per OpenStack region (the region of the cluster: ``openstack_region``, else its
    project's). Each template must be of the driver it is given for (``driver=``, or the one
    driver of its ``cluster_distro``). Example::

        MagnumTarget(templates={
            "k8s_capi_helm_v1": CAPI_1_31,
            "k8s_cluster_api_ubuntu": {"cern": VEXX_1_31_CERN, "lhc": VEXX_1_31_LHC},
        })
    """

    cloud_noun: ClassVar[str] = "Magnum"
    argument_noun: ClassVar[str] = "Magnum target"

    templates: Templates = option(doc="Per Magnum driver: the template, or region -> template.")

    def check(self, *, where: str) -> None:
        """Each key a driver, each template of that driver."""
        for key, given in self.templates.items():
            driver = check_driver(key, where=where)
            by_region = given if isinstance(given, Mapping) else {"": given}
            for template in by_region.values():
                decision = template.driver_decision
                if decision.driver != driver:
                    raise DefinitionError(
                        f"template {template.name!r} ({template.where}) is given for driver "
                        f"{key!r}, but its driver is {decision.described()}",
                        where=where,
                        field="templates",
                    )

    def handles(self, cluster: FleetCluster) -> bool:
        """Magnum clusters."""
        return isinstance(cluster, MagnumCluster)

    def template(self, driver: MagnumDriver, region: str) -> ClusterTemplate | None:
        """The target template of ``driver`` in ``region`` (None: the target has none)."""
        given = next((t for k, t in self.templates.items() if k == driver.value), None)
        if isinstance(given, Mapping):
            return given.get(region)
        return given

    def _cluster(self, cluster: FleetCluster) -> MagnumCluster:
        assert isinstance(cluster, MagnumCluster)  # handles() chose it
        return cluster

    def path(self, cluster: FleetCluster, environment: str) -> UpgradePath:
        """In place (one step: the template), blue/green (Heat, unknown driver), refused (a
        skipped minor, no UUID in the region), current, or untargeted."""
        magnum = self._cluster(cluster)
        current = magnum.template_for(environment)
        decision = current.driver_decision
        region = magnum.region(environment)
        if not decision.in_place:
            options = [
                f"{t.name} ({d.value})"
                for d in MagnumDriver
                if (t := self.template(d, region)) is not None and t.driver_decision.in_place
            ]
            onto = f" (the target's: {', '.join(options)})" if options else ""
            why = (
                f"Magnum's Heat driver ({decision.driver.value}, {decision.how_shown}) refuses "
                "in-place upgrades"
                if decision.driver is not None
                else f"its driver is not known, so Heat rules apply ({decision.reason})"
            )
            return UpgradePath(
                PathMode.BLUE_GREEN,
                _shown(current),
                ", ".join(options),
                f"{why}: declare a new cluster with a Cluster API template"
                f"{onto}, move the workloads, retire this one ({HEAT_GUIDE})",
            )
        assert decision.driver is not None
        target = self.template(decision.driver, region)
        if target is None:
            return UpgradePath(
                PathMode.UNTARGETED,
                _shown(current),
                "",
                f"the target has no template of driver {decision.driver.value} for region "
                f"{region!r}",
            )
        before = version_tuple(current.kubernetes_version)
        after = version_tuple(target.kubernetes_version)
        if target == current or (before and after and after <= before):
            return UpgradePath(
                PathMode.CURRENT,
                _shown(current),
                _shown(target),
                "it runs the target's version or a newer one (a rollout never downgrades)",
            )
        judged = judge_template_change(_side(current), _side(target))
        if not judged.in_place:
            return UpgradePath(PathMode.REFUSED, _shown(current), _shown(target), judged.message)
        uuid = target.uuid_for(region)
        if uuid is None:
            return UpgradePath(
                PathMode.REFUSED,
                _shown(current),
                _shown(target),
                target.missing_uuid_error(region, where=target.where).message,
            )
        name = magnum.object_name(environment)
        return UpgradePath(
            PathMode.IN_PLACE,
            _shown(current),
            _shown(target),
            f"{decision.driver.value} ({decision.how_shown}): {IN_SHORT[decision.family]}",
            (
                PathStep(
                    "template",
                    (
                        f"ClusterV1 {name}: clusterTemplateId {current.uuid_for(region)} -> "
                        f"{uuid} (Magnum's upgrade action)",
                    ),
                ),
            ),
        )

    def apply(self, cluster: FleetCluster, environment: str, steps: int) -> None:
        """Step 1: the cluster renders the target template of its driver."""
        magnum = self._cluster(cluster)
        driver = magnum.template_for(environment).driver_decision.driver
        target = self.template(driver, magnum.region(environment)) if driver else None
        if target is not None and steps >= 1:
            magnum.take_template(environment, target)
