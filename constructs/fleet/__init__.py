"""Fleet-as-code: declare Magnum and OKE clusters in Python, render plain manifests.

This module only re-exports the public API.
"""

from fleet.argocd.argo_cd import ArgoCd
from fleet.argocd.package import FleetPackage, GitPath, HelmChart
from fleet.argocd.registration import ArgoRegistration
from fleet.checks.problem import Problem
from fleet.checks.registry import Check, CheckContext, Checks
from fleet.clouds.base import FleetCluster, Lifecycle, NodePoolSummary
from fleet.clouds.magnum.cluster import MagnumCluster
from fleet.clouds.magnum.drivers import MagnumDriver, MagnumDriverName
from fleet.clouds.magnum.policies import DeletionPolicy, ManagementPolicy
from fleet.clouds.magnum.pool import NodeGroup
from fleet.clouds.magnum.project import OpenStackProject
from fleet.clouds.magnum.resolved import ResolvedMagnum
from fleet.clouds.magnum.rollout import MagnumTarget
from fleet.clouds.magnum.template import ClusterTemplate, TemplateCatalog
from fleet.clouds.oci.cluster import ClusterType, OciManagedCluster, ResolvedOke
from fleet.clouds.oci.credentials import CapociCredentials
from fleet.clouds.oci.identity import OciClusterIdentity
from fleet.clouds.oci.network import ApiEndpoint, OkeExistingVcn, OkeNsg, OkeSubnet, OkeVcn
from fleet.clouds.oci.pool import FaultDomain, OkeNodePool
from fleet.clouds.oci.rollout import OkeRelease, OkeTarget
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
from fleet.upgrades.rings import Ring
from fleet.upgrades.rollout import Rollout, UpgradeTarget

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
