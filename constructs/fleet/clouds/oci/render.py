"""The objects an :class:`~fleet.OciManagedCluster` renders in one environment.

CAPOCI's ``cluster-template-managed.yaml`` object set: a Cluster API ``Cluster``, an
``OCIManagedCluster`` (compartment, network), an ``OCIManagedControlPlane`` (the OKE
cluster) and, per node pool, a ``MachinePool`` with its ``OCIManagedMachinePool``. The
options rendered as they are go where their table entry says (``render``); the rest is here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fleet.clouds.oci.pool import ResolvedPool
from fleet.clouds.oci.regions import services_cidr_label
from fleet.clouds.oci.validators import check_surge
from fleet.core.options import render_object, render_values, rendered
from fleet.core.validators import positive_number

if TYPE_CHECKING:
    from fleet.clouds.oci.cluster import OciManagedCluster

CAPI_API = "cluster.x-k8s.io/v1beta1"
"""CAPOCI implements the CAPI v1beta1 contract: its templates use v1beta1 refs."""
INFRA_API = "infrastructure.cluster.x-k8s.io/v1beta2"
CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
VCN_NATIVE = "OCI_VCN_IP_NATIVE"


def objects(
    cluster: OciManagedCluster, environment: str, pools: list[ResolvedPool]
) -> list[dict[str, Any]]:
    """The bodies of ``cluster`` in ``environment``: Cluster, OCIManagedCluster,
    OCIManagedControlPlane, then a MachinePool and an OCIManagedMachinePool per pool."""
    r = cluster.resolved(environment)
    name = cluster.object_name(environment)
    cluster_spec: dict[str, Any] = {
        "clusterNetwork": {
            "pods": {"cidrBlocks": [cluster.pods_cidr]},
            "services": {"cidrBlocks": [cluster.services_cidr]},
        },
        "controlPlaneRef": _ref(cluster, INFRA_API, "OCIManagedControlPlane", name),
        "infrastructureRef": _ref(cluster, INFRA_API, "OCIManagedCluster", name),
    }
    if cluster.is_paused(environment):
        # Cluster API's IsPaused: every CAPOCI controller returns early for the cluster.
        cluster_spec["paused"] = True
    capi_cluster = {
        "apiVersion": CAPI_API,
        "kind": "Cluster",
        "metadata": _metadata(cluster, name, environment),
        "spec": cluster_spec,
    }
    infra_spec: dict[str, Any] = {"ociResourceIdentifier": r.oci_resource_identifier}
    # CAPOCI sets these on the OKE cluster and every pool (getFreeFormTags, getDefinedTags).
    if cluster.freeform_tags:
        infra_spec["freeformTags"] = dict(sorted(cluster.freeform_tags.items()))
    if cluster.defined_tags:
        infra_spec["definedTags"] = {k: dict(v) for k, v in sorted(cluster.defined_tags.items())}
    if cluster.identity is not None:
        infra_spec["identityRef"] = cluster.identity.reference()
    network_spec = cluster.network.network_spec(services_cidr_label(cluster.oci_region))
    if network_spec is not None:
        infra_spec["networkSpec"] = network_spec
    infra = {
        "apiVersion": INFRA_API,
        "kind": "OCIManagedCluster",
        "metadata": _metadata(cluster, name, environment),
        "spec": infra_spec,
    }
    control_plane = {
        "apiVersion": INFRA_API,
        "kind": "OCIManagedControlPlane",
        "metadata": _metadata(cluster, name, environment),
        "spec": {
            "clusterPodNetworkOptions": [{"cniType": cluster.cni.value}],
            "clusterType": cluster.cluster_type.value,
        },
    }
    out = [capi_cluster, infra, control_plane]
    for body in out:
        render_values(body, rendered(type(cluster), str(body["kind"])), r.options)
    for pool in pools:
        out.extend(_pool(cluster, environment, pool))
    return out


def _metadata(cluster: OciManagedCluster, name: str, environment: str) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "labels": {CLUSTER_NAME_LABEL: cluster.object_name(environment)},
        "name": name,
        "namespace": cluster.namespace,
    }
    annotations = cluster.protection_annotations()
    if annotations:
        meta["annotations"] = annotations
    return meta


def _ref(cluster: OciManagedCluster, api_version: str, kind: str, name: str) -> dict[str, str]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "namespace": cluster.namespace}


def _pool(cluster: OciManagedCluster, environment: str, pool: ResolvedPool) -> list[dict[str, Any]]:
    cluster_name = cluster.object_name(environment)
    name = f"{cluster_name}-{pool.spec.name}"
    spec = pool.spec
    machine_pool_spec: dict[str, Any] = {
        "clusterName": cluster_name,
        # Always rendered, never the autoscaler annotations: CAPOCI resizes the OKE pool
        # to it unless replicas-managed-by is set (managed_machine_pool.go UpdateNodePool).
        "replicas": pool.counts.node_count,
        "template": {
            "spec": {
                "bootstrap": {"dataSecretName": ""},
                "clusterName": cluster_name,
                "infrastructureRef": _ref(cluster, INFRA_API, "OCIManagedMachinePool", name),
                "version": pool.version,
            }
        },
    }
    machine_pool = {
        "apiVersion": CAPI_API,
        "kind": "MachinePool",
        "metadata": _metadata(cluster, name, environment),
        "spec": machine_pool_spec,
    }
    shape_config: dict[str, str] = {}
    ocpus = positive_number(spec.ocpus, where="", field="", unit="")
    memory = positive_number(spec.memory_gb, where="", field="", unit="")
    if ocpus is not None:
        shape_config["ocpus"] = ocpus
    if memory is not None:
        shape_config["memoryInGBs"] = memory
    pod_network: dict[str, Any] = {"cniType": cluster.cni.value}
    if cluster.cni.value == VCN_NATIVE:
        pod_network["vcnIpNativePodNetworkOptions"] = {
            "nsgNames": list(spec.pod_nsg_names),
            "subnetNames": list(spec.pod_subnet_names),
        }
    pool_spec: dict[str, Any] = {
        "nodePoolNodeConfig": {
            "nodePoolPodNetworkOptionDetails": pod_network,
            "nsgNames": list(spec.nsg_names),
            "placementConfigs": [
                {
                    "availabilityDomain": ad,
                    "faultDomains": [str(fd) for fd in spec.fault_domains],
                    "subnetName": spec.subnet_name,
                }
                for ad in pool.availability_domains
            ],
        },
        # Without it OKE gives a new version or image only to nodes created later.
        "nodePoolCyclingDetails": {
            "isNodeCyclingEnabled": True,
            "maximumSurge": check_surge(spec.max_surge, where="", field=""),
            "maximumUnavailable": check_surge(spec.max_unavailable, where="", field=""),
        },
        "nodeSourceViaImage": {"imageId": pool.image_id},
        "version": pool.version,
    }
    if shape_config:
        pool_spec["nodeShapeConfig"] = shape_config
    if pool.ssh_public_key:
        pool_spec["sshPublicKey"] = pool.ssh_public_key
    if spec.labels:
        pool_spec["initialNodeLabels"] = [
            {"key": k, "value": v} for k, v in sorted(spec.labels.items())
        ]
    oci_pool = {
        "apiVersion": INFRA_API,
        "kind": "OCIManagedMachinePool",
        "metadata": _metadata(cluster, name, environment),
        "spec": pool_spec,
    }
    render_object(oci_pool, rendered(type(spec)), spec, environment, where=spec.where)
    return [machine_pool, oci_pool]
