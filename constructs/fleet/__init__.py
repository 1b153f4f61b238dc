"""Fleet-as-code: declare Magnum and OKE clusters in Python, render plain manifests.

This module only re-exports the public API. A cloud's constructs are imported when first
asked for (``from fleet import MagnumCluster``): a process loads only the clouds its fleet
uses, and a fleet's platform is what its own declarations name
(:mod:`fleet.platform.plugins`), whatever else the process imported.
"""

import importlib
from typing import TYPE_CHECKING, Any

from fleet.argocd.argo_cd import ArgoCd
from fleet.argocd.package import FleetPackage, GitPath, HelmChart
from fleet.argocd.registration import ArgoRegistration
from fleet.checks.problem import Problem
from fleet.checks.registry import Check, CheckContext, Checks
from fleet.clouds.base import FleetCluster, Lifecycle, NodePoolSummary
from fleet.core import nodejs  # noqa: F401  (must run before cdk8s is imported)
from fleet.core.config import FleetConfig
from fleet.core.declaration import FleetConstruct
from fleet.core.errors import DefinitionError, DefinitionErrors, FleetError
from fleet.core.fleet import Fleet
from fleet.core.manifest import Manifest
from fleet.core.options import option, value_type
from fleet.core.refs import Ref
from fleet.core.tree import Aspects, Component, IAspect, IValidation, Node, Scope, TreeConstruct
from fleet.core.values import JsonPatch, PerEnv, SecretKeyRef, per_env
from fleet.platform.management import ManagementCluster
from fleet.upgrades.rings import Ring
from fleet.upgrades.rollout import Rollout, UpgradeTarget

if TYPE_CHECKING:
    from fleet.clouds.magnum.cluster import MagnumCluster
    from fleet.clouds.magnum.drivers import MagnumDriver, MagnumDriverName
    from fleet.clouds.magnum.policies import DeletionPolicy, ManagementPolicy
    from fleet.clouds.magnum.pool import NodeGroup
    from fleet.clouds.magnum.project import OpenStackProject
    from fleet.clouds.magnum.resolved import ResolvedMagnum
    from fleet.clouds.magnum.rollout import MagnumTarget
    from fleet.clouds.magnum.template import ClusterTemplate, TemplateCatalog
    from fleet.clouds.oci.cluster import OciManagedCluster
    from fleet.clouds.oci.cluster_values import ClusterType, ResolvedOke
    from fleet.clouds.oci.credentials import CapociCredentials
    from fleet.clouds.oci.identity import OciClusterIdentity
    from fleet.clouds.oci.network import ApiEndpoint, OkeExistingVcn, OkeNsg, OkeSubnet, OkeVcn
    from fleet.clouds.oci.pool import FaultDomain, OkeNodePool
    from fleet.clouds.oci.rollout import OkeRelease, OkeTarget

_CLOUDS: dict[str, str] = {
    "DeletionPolicy": "fleet.clouds.magnum.policies",
    "MagnumCluster": "fleet.clouds.magnum.cluster",
    "MagnumDriver": "fleet.clouds.magnum.drivers",
    "MagnumDriverName": "fleet.clouds.magnum.drivers",
    "MagnumTarget": "fleet.clouds.magnum.rollout",
    "ManagementPolicy": "fleet.clouds.magnum.policies",
    "NodeGroup": "fleet.clouds.magnum.pool",
    "ResolvedMagnum": "fleet.clouds.magnum.resolved",
    "OpenStackProject": "fleet.clouds.magnum.project",
    "ClusterTemplate": "fleet.clouds.magnum.template",
    "TemplateCatalog": "fleet.clouds.magnum.template",
    "ClusterType": "fleet.clouds.oci.cluster_values",
    "OciManagedCluster": "fleet.clouds.oci.cluster",
    "ResolvedOke": "fleet.clouds.oci.cluster_values",
    "CapociCredentials": "fleet.clouds.oci.credentials",
    "OciClusterIdentity": "fleet.clouds.oci.identity",
    "ApiEndpoint": "fleet.clouds.oci.network",
    "OkeExistingVcn": "fleet.clouds.oci.network",
    "OkeNsg": "fleet.clouds.oci.network",
    "OkeSubnet": "fleet.clouds.oci.network",
    "OkeVcn": "fleet.clouds.oci.network",
    "FaultDomain": "fleet.clouds.oci.pool",
    "OkeNodePool": "fleet.clouds.oci.pool",
    "OkeRelease": "fleet.clouds.oci.rollout",
    "OkeTarget": "fleet.clouds.oci.rollout",
}
"""A cloud's public names -> the module that defines them, imported on first use."""


def __getattr__(name: str) -> Any:
    module = _CLOUDS.get(name)
    if module is None:
        raise AttributeError(f"module 'fleet' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_CLOUDS])


__all__ = [
    "ApiEndpoint",
    "ArgoCd",
    "ArgoRegistration",
    "Aspects",
    "CapociCredentials",
    "Check",
    "CheckContext",
    "Checks",
    "ClusterTemplate",
    "ClusterType",
    "Component",
    "DefinitionError",
    "DefinitionErrors",
    "DeletionPolicy",
    "FaultDomain",
    "Fleet",
    "FleetCluster",
    "FleetConfig",
    "FleetConstruct",
    "FleetError",
    "FleetPackage",
    "GitPath",
    "HelmChart",
    "IAspect",
    "IValidation",
    "JsonPatch",
    "Lifecycle",
    "MagnumCluster",
    "MagnumDriver",
    "MagnumDriverName",
    "MagnumTarget",
    "ManagementCluster",
    "ManagementPolicy",
    "Manifest",
    "Node",
    "NodeGroup",
    "NodePoolSummary",
    "OciClusterIdentity",
    "OciManagedCluster",
    "OkeExistingVcn",
    "OkeNodePool",
    "OkeNsg",
    "OkeRelease",
    "OkeSubnet",
    "OkeTarget",
    "OkeVcn",
    "OpenStackProject",
    "PerEnv",
    "Problem",
    "Ref",
    "ResolvedMagnum",
    "ResolvedOke",
    "Ring",
    "Rollout",
    "Scope",
    "SecretKeyRef",
    "TemplateCatalog",
    "TreeConstruct",
    "UpgradeTarget",
    "option",
    "per_env",
    "value_type",
]
