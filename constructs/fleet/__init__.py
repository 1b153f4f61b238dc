"""Fleet-as-code: declare Magnum and OKE clusters in Python, render plain manifests.

This module only re-exports the public API.
"""

from fleet import _node  # noqa: F401  (must run before cdk8s is imported)
from fleet.argo_cd import ArgoCd
from fleet.argo_registration import ArgoRegistration
from fleet.bootstrap import BootstrapVersions
from fleet.cluster import FleetCluster, NodePoolSummary
from fleet.cluster_template import ClusterTemplate
from fleet.config import FleetConfig
from fleet.errors import DefinitionError, DefinitionErrors, FleetError
from fleet.fleet import Fleet
from fleet.fleet_construct import FleetConstruct
from fleet.fleet_package import FleetPackage, GitPath, HelmChart
from fleet.magnum_cluster import MagnumCluster, NodeGroup
from fleet.manifest import Manifest
from fleet.oci_cluster_identity import OciClusterIdentity
from fleet.oci_managed_cluster import OciManagedCluster, OkeNodePool
from fleet.oke_network import OkeExistingVcn, OkeNsg, OkeSubnet, OkeVcn
from fleet.openstack_project import OpenStackProject
from fleet.values import JsonPatch, PerEnv, SecretKeyRef, per_env

__all__ = [
    "ArgoCd",
    "ArgoRegistration",
    "BootstrapVersions",
    "ClusterTemplate",
    "DefinitionError",
    "DefinitionErrors",
    "Fleet",
    "FleetCluster",
    "FleetConfig",
    "FleetConstruct",
    "FleetError",
    "FleetPackage",
    "GitPath",
    "HelmChart",
    "JsonPatch",
    "MagnumCluster",
    "Manifest",
    "NodeGroup",
    "NodePoolSummary",
    "OciClusterIdentity",
    "OciManagedCluster",
    "OkeExistingVcn",
    "OkeNodePool",
    "OkeNsg",
    "OkeSubnet",
    "OkeVcn",
    "OpenStackProject",
    "PerEnv",
    "SecretKeyRef",
    "per_env",
]
