"""The objects an :class:`~fleet.OciManagedCluster` renders in one environment.

CAPOCI's ``cluster-template-managed.yaml`` object set: a Cluster API ``Cluster``, an
``OCIManagedCluster`` (compartment, network), an ``OCIManagedControlPlane`` (the OKE
cluster) and, per node pool, a ``MachinePool`` with its ``OCIManagedMachinePool``. The
options rendered as they are go where their table entry says (``render``); the rest is here.

Versions: the Cluster API kinds at ``cluster.x-k8s.io/v1beta2``, the version Cluster API
v1.12 stores and serves as preferred (the pinned CRDs: v1beta1 served and deprecated), with
``apiGroup`` references (kubernetes-sigs/cluster-api v1.12.11 ``api/core/v1beta2``); the
API server converts for CAPOCI, which reads them at v1beta2 too
(oracle/cluster-api-provider-oci v0.24.0 imports ``sigs.k8s.io/cluster-api/api/core/v1beta2``).
At v1beta1 ArgoCD fetched each object again at the target's version on every comparison.

Waves inside the cluster's Application: the Cluster, OCIManagedCluster and
OCIManagedControlPlane in wave 0; the node pools in wave 1 with the registration, so the
registration waits for the API server only (the Cluster's health:
:mod:`fleet.platform.capi_health`), not for every node. A paused cluster has one wave.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fleet.clouds.oci.pool import ResolvedPool
from fleet.clouds.oci.regions import services_cidr_label
from fleet.clouds.oci.validators import check_surge
from fleet.core.layout import AFTER_CLUSTER_WAVE, SYNC_WAVE
from fleet.core.options import render_object, render_values, rendered
from fleet.core.validators import positive_number

if TYPE_CHECKING:
    from fleet.clouds.oci.cluster import OciManagedCluster

CAPI_API = "cluster.x-k8s.io/v1beta2"
"""Cluster API's served, stored version (v1.12): references by ``apiGroup``."""
INFRA_GROUP = "infrastructure.cluster.x-k8s.io"
INFRA_API = f"{INFRA_GROUP}/v1beta2"
CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
VCN_NATIVE = "OCI_VCN_IP_NATIVE"
MIN_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
MAX_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
"""The cluster autoscaler's bounds of a node group (kubernetes-sigs/cluster-api v1.12.11
``api/core/v1beta2/common_types.go`` ``AutoscalerMinSizeAnnotation``; kubernetes/autoscaler
cluster-autoscaler-1.30.7 ``cloudprovider/clusterapi/clusterapi_utils.go``). Never
``cluster.x-k8s.io/replicas-managed-by``: with it CAPOCI stops resizing the OKE pool
(oracle/cluster-api-provider-oci v0.24.0 ``cloud/scope/managed_machine_pool.go``
``UpdateNodePool``, ``annotations.ReplicasManagedByExternalAutoscaler``)."""


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
        "controlPlaneRef": _ref("OCIManagedControlPlane", name),
        "infrastructureRef": _ref("OCIManagedCluster", name),
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
    identity = cluster.identity_declaration
    if identity is not None:
        infra_spec["identityRef"] = identity.reference()
    network_spec = cluster.network_for(environment).network_spec(
        services_cidr_label(cluster.oci_region)
    )
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


def _metadata(
    cluster: OciManagedCluster,
    name: str,
    environment: str,
    *,
    wave: int = 0,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "labels": {CLUSTER_NAME_LABEL: cluster.object_name(environment)},
        "name": name,
        "namespace": cluster.namespace,
    }
    merged = {**(annotations or {}), **cluster.protection_annotations()}
    if wave and not cluster.is_paused(environment):
        merged[SYNC_WAVE] = str(wave)
    if merged:
        meta["annotations"] = dict(sorted(merged.items()))
    return meta


def _ref(kind: str, name: str) -> dict[str, str]:
    """A v1beta2 reference to a CAPOCI object of the cluster's namespace."""
    return {"apiGroup": INFRA_GROUP, "kind": kind, "name": name}


def pool_annotations(pool: ResolvedPool) -> dict[str, str]:
    """The MachinePool's autoscaler annotations: the bounds, and the capacity of a pool that
    may be empty (none for a fixed-size pool)."""
    counts = pool.counts
    if counts.min_node_count is None or counts.max_node_count is None:
        return {}
    return {
        MIN_SIZE: str(counts.min_node_count),
        MAX_SIZE: str(counts.max_node_count),
        **(pool.capacity or {}),
    }


def _pool(cluster: OciManagedCluster, environment: str, pool: ResolvedPool) -> list[dict[str, Any]]:
    cluster_name = cluster.object_name(environment)
    name = f"{cluster_name}-{pool.spec.name}"
    spec = pool.spec
    machine_pool_spec: dict[str, Any] = {
        "clusterName": cluster_name,
        "template": {
            "spec": {
                "bootstrap": {"dataSecretName": ""},
                "clusterName": cluster_name,
                "infrastructureRef": _ref("OCIManagedMachinePool", name),
                "version": pool.version,
            }
        },
    }
    if not spec.autoscaled:
        # CAPOCI resizes the OKE pool to it (managed_machine_pool.go UpdateNodePool). An
        # autoscaled pool has none: Cluster API's webhook fills it in when it is absent (the
        # minimum for a new pool, the old value kept inside [min, max] for an existing one:
        # internal/webhooks/machinepool.go calculateMachinePoolReplicas), and then the
        # autoscaler owns it through the scale subresource.
        machine_pool_spec["replicas"] = pool.counts.node_count
    machine_pool = {
        "apiVersion": CAPI_API,
        "kind": "MachinePool",
        "metadata": _metadata(
            cluster, name, environment, wave=AFTER_CLUSTER_WAVE, annotations=pool_annotations(pool)
        ),
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
        "metadata": _metadata(cluster, name, environment, wave=AFTER_CLUSTER_WAVE),
        "spec": pool_spec,
    }
    render_object(oci_pool, rendered(type(spec)), spec, environment, where=spec.where)
    return [machine_pool, oci_pool]
