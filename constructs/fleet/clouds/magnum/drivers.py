"""Magnum's cluster drivers: which one a template's clusters use, and what that means for
an upgrade.

A Magnum cluster template names its driver (``driver``, Magnum 18.0.0 and later:
openstack/magnum ``magnum/api/controllers/v1/cluster_template.py``); without one, Magnum
stores the image's ``magnum_driver`` property, and where that is empty too it looks the driver
up by the template's ``(server_type, os_distro, coe)`` (stable/2026.1
``magnum/drivers/common/driver.py`` ``get_driver``; master falls back to the configured
default driver instead, ``get_default_driver``). Magnum
upgrades a cluster with the driver of the cluster's *current* template
(``magnum/conductor/handlers/cluster_conductor.py`` ``cluster_upgrade``), so the driver
decides what a change of template does:

* the Heat drivers (``k8s_fedora_coreos_v1``, the last one, removed from master in May 2026)
  refuse every upgrade since Magnum 18.0.0 (``magnum/drivers/heat/driver.py``
  ``upgrade_cluster``: ``NotSupported``): blue/green only;
* openstack/magnum-capi-helm (``k8s_capi_helm_v1``) moves the cluster to the new template
  and re-applies its Helm release, with the Kubernetes version of the template's image
  (``kube_version`` property), leaving labels alone (``magnum_capi_helm/driver.py``
  ``upgrade_cluster``, ``_update_helm_release``, ``_get_kube_version``);
* vexxhost/magnum-cluster-api (``k8s_cluster_api_<os>``) rewrites ``kube_tag`` in the
  cluster's labels and in every node group's, and every node group's image
  (``magnum_cluster_api/driver.py`` ``upgrade_cluster``).

The fleet never asks Magnum: a template's driver is what it declares (``driver=``), else the
one Magnum would register for its declared ``cluster_distro`` when exactly one driver
provides it, else unknown, which the fleet treats as Heat (blue/green) and says so.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Literal, get_args

from fleet.core.errors import DefinitionError


class MagnumDriver(enum.StrEnum):
    """The Kubernetes drivers of Magnum, by entry-point name (``magnum.drivers``)."""

    K8S_FEDORA_COREOS_V1 = "k8s_fedora_coreos_v1"
    """Heat (in-tree up to stable/2026.1)."""
    K8S_FEDORA_ATOMIC_V1 = "k8s_fedora_atomic_v1"
    """Heat (in-tree up to Magnum 17.0.0)."""
    K8S_COREOS_V1 = "k8s_coreos_v1"
    """Heat (in-tree up to Magnum 17.0.0)."""
    K8S_FEDORA_IRONIC_V1 = "k8s_fedora_ironic_v1"
    """Heat, bare metal (in-tree up to Magnum 17.0.0)."""
    K8S_CAPI_HELM_V1 = "k8s_capi_helm_v1"
    """openstack/magnum-capi-helm."""
    K8S_CLUSTER_API_UBUNTU = "k8s_cluster_api_ubuntu"
    """vexxhost/magnum-cluster-api."""
    K8S_CLUSTER_API_UBUNTU_FOCAL = "k8s_cluster_api_ubuntu_focal"
    """vexxhost/magnum-cluster-api."""
    K8S_CLUSTER_API_DEBIAN = "k8s_cluster_api_debian"
    """vexxhost/magnum-cluster-api."""
    K8S_CLUSTER_API_FLATCAR = "k8s_cluster_api_flatcar"
    """vexxhost/magnum-cluster-api."""
    K8S_CLUSTER_API_ROCKYLINUX = "k8s_cluster_api_rockylinux"
    """vexxhost/magnum-cluster-api."""


MagnumDriverName = Literal[
    "k8s_fedora_coreos_v1",
    "k8s_fedora_atomic_v1",
    "k8s_coreos_v1",
    "k8s_fedora_ironic_v1",
    "k8s_capi_helm_v1",
    "k8s_cluster_api_ubuntu",
    "k8s_cluster_api_ubuntu_focal",
    "k8s_cluster_api_debian",
    "k8s_cluster_api_flatcar",
    "k8s_cluster_api_rockylinux",
]
"""The same names as strings, for type checkers: ``ClusterTemplate(driver="k8s_capi_helm_v1")``
(a test keeps it equal to :class:`MagnumDriver`)."""

DRIVER_NAMES: tuple[str, ...] = get_args(MagnumDriverName)


class DriverFamily(enum.StrEnum):
    """Who implements a driver, which decides what an upgrade does."""

    HEAT = "heat"
    CAPI_HELM = "magnum-capi-helm"
    CLUSTER_API = "magnum-cluster-api"

    @property
    def in_place(self) -> bool:
        """Whether a change of template upgrades the cluster in place (the Cluster API
        drivers), rather than being refused (Heat)."""
        return self is not DriverFamily.HEAT


_FAMILY = {
    MagnumDriver.K8S_FEDORA_COREOS_V1: DriverFamily.HEAT,
    MagnumDriver.K8S_FEDORA_ATOMIC_V1: DriverFamily.HEAT,
    MagnumDriver.K8S_COREOS_V1: DriverFamily.HEAT,
    MagnumDriver.K8S_FEDORA_IRONIC_V1: DriverFamily.HEAT,
    MagnumDriver.K8S_CAPI_HELM_V1: DriverFamily.CAPI_HELM,
    MagnumDriver.K8S_CLUSTER_API_UBUNTU: DriverFamily.CLUSTER_API,
    MagnumDriver.K8S_CLUSTER_API_UBUNTU_FOCAL: DriverFamily.CLUSTER_API,
    MagnumDriver.K8S_CLUSTER_API_DEBIAN: DriverFamily.CLUSTER_API,
    MagnumDriver.K8S_CLUSTER_API_FLATCAR: DriverFamily.CLUSTER_API,
    MagnumDriver.K8S_CLUSTER_API_ROCKYLINUX: DriverFamily.CLUSTER_API,
}

PROVIDES: tuple[tuple[tuple[str, str, str], MagnumDriver], ...] = (
    (("vm", "fedora-coreos", "kubernetes"), MagnumDriver.K8S_FEDORA_COREOS_V1),
    (("vm", "fedora-atomic", "kubernetes"), MagnumDriver.K8S_FEDORA_ATOMIC_V1),
    (("vm", "coreos", "kubernetes"), MagnumDriver.K8S_COREOS_V1),
    (("bm", "fedora", "kubernetes"), MagnumDriver.K8S_FEDORA_IRONIC_V1),
    (("vm", "ubuntu", "kubernetes"), MagnumDriver.K8S_CAPI_HELM_V1),
    (("vm", "flatcar", "kubernetes"), MagnumDriver.K8S_CAPI_HELM_V1),
    (("vm", "ubuntu", "kubernetes"), MagnumDriver.K8S_CLUSTER_API_UBUNTU),
    (("vm", "ubuntu-focal", "kubernetes"), MagnumDriver.K8S_CLUSTER_API_UBUNTU_FOCAL),
    (("vm", "debian", "kubernetes"), MagnumDriver.K8S_CLUSTER_API_DEBIAN),
    (("vm", "flatcar", "kubernetes"), MagnumDriver.K8S_CLUSTER_API_FLATCAR),
    (("vm", "rockylinux", "kubernetes"), MagnumDriver.K8S_CLUSTER_API_ROCKYLINUX),
)
"""(server_type, os_distro, coe) -> the driver, as each driver's ``provides`` says: openstack/
magnum 17.0.0 ``magnum/drivers/<driver>/driver.py`` (the Heat drivers), openstack/magnum-capi-helm
1.4.0 ``magnum_capi_helm/driver.py``, vexxhost/magnum-cluster-api v0.38.1
``magnum_cluster_api/driver.py``. Two drivers provide ``ubuntu`` and ``flatcar``: which one
Magnum picks depends on what the cloud installed, so the fleet does not guess."""

NODE_GROUP_REWRITES: dict[DriverFamily, tuple[str, ...]] = {
    DriverFamily.CLUSTER_API: ("labels", "image_id"),
}
"""The NodegroupV1 arguments a driver's upgrade rewrites in Magnum: magnum-cluster-api sets
every node group's ``image_id`` to the template's and its ``kube_tag`` label
(``upgrade_cluster``). Both are ForceNew in terraform-provider-openstack, so the fleet renders
them create-only (``spec.initProvider``) for those clusters: rendered in ``forProvider``, the
next poll after an upgrade would find them changed and upjet would refuse every update."""


def family_of(driver: MagnumDriver) -> DriverFamily:
    """Who implements ``driver``."""
    return _FAMILY[driver]


def check_driver(value: object, *, where: str) -> MagnumDriver | None:
    """``value`` (a template's ``driver=``) as a :class:`MagnumDriver`; None stays None; any
    other value is the error listing the names (with a hint)."""
    if value is None:
        return None
    if isinstance(value, str) and value in DRIVER_NAMES:
        return MagnumDriver(value)
    import difflib

    hint = difflib.get_close_matches(str(value), DRIVER_NAMES, n=1)
    suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
    raise DefinitionError(
        f"{value!r} is not a Magnum Kubernetes driver{suggestion} (one of "
        f"{', '.join(DRIVER_NAMES)})",
        where=where,
        field="driver",
    )


@dataclass(frozen=True)
class DriverDecision:
    """Which driver a template's clusters use, and how the fleet knows it."""

    driver: MagnumDriver | None
    """None: not known (Heat rules apply)."""
    how: Literal["declared", "os_distro", "unknown"]
    reason: str
    """One sentence: how the fleet decided (for plans, diff notes and ``fleet ls``)."""

    @property
    def family(self) -> DriverFamily:
        """The driver's family; Heat when the driver is not known (the conservative rule)."""
        return DriverFamily.HEAT if self.driver is None else family_of(self.driver)

    @property
    def in_place(self) -> bool:
        """Whether a change of template to one of the same driver upgrades in place."""
        return self.family.in_place

    @property
    def known(self) -> bool:
        """Whether the driver is known (declared, or inferred from the distro)."""
        return self.driver is not None

    @property
    def how_shown(self) -> str:
        """``declared`` or ``inferred from os_distro 'ubuntu-focal'`` (or ``unknown``)."""
        if self.how == "os_distro":
            return "inferred from the template's os_distro"
        return self.how

    def node_group_rewrites(self) -> tuple[str, ...]:
        """The NodegroupV1 arguments the driver's upgrade rewrites in Magnum."""
        return NODE_GROUP_REWRITES.get(self.family, ())

    def described(self) -> str:
        """``k8s_capi_helm_v1 (magnum-capi-helm, declared)`` or ``unknown (Heat rules: ...)``."""
        if self.driver is None:
            return f"unknown driver (Heat rules: {self.reason})"
        return f"{self.driver.value} ({self.family.value}; {self.reason})"


def decide(
    *,
    name: str,
    driver: MagnumDriver | None,
    cluster_distro: str | None,
    server_type: str | None,
    coe: str | None,
) -> DriverDecision:
    """The driver of template ``name``: declared, else the one driver registered for its
    declared distro, else unknown (with why, and the request to declare it)."""
    if driver is not None:
        return DriverDecision(driver, "declared", "declared with driver=")
    ask = f"declare ClusterTemplate(driver=...) on template {name!r}"
    if not cluster_distro:
        return DriverDecision(
            None, "unknown", f"template {name!r} declares neither driver= nor cluster_distro; {ask}"
        )
    key = (server_type or "vm", cluster_distro, coe or "kubernetes")
    found = [d for k, d in PROVIDES if k == key]
    if len(found) == 1:
        return DriverDecision(
            found[0],
            "os_distro",
            f"the only driver registered for os_distro {cluster_distro!r} "
            f"(server_type {key[0]!r}, coe {key[2]!r})",
        )
    if found:
        return DriverDecision(
            None,
            "unknown",
            f"os_distro {cluster_distro!r} is provided by {' and '.join(d.value for d in found)}, "
            f"and Magnum takes whichever the cloud installed; {ask}",
        )
    return DriverDecision(
        None,
        "unknown",
        f"no driver the fleet knows provides (server_type {key[0]!r}, os_distro "
        f"{cluster_distro!r}, coe {key[2]!r}); {ask}",
    )


_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def version_tuple(version: str) -> tuple[int, int, int] | None:
    """``v1.30.4`` -> (1, 30, 4); None when it does not parse."""
    m = _VERSION.match(version.strip())
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
