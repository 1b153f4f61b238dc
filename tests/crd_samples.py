"""Realistic objects for the validation tests and benchmark.

ClusterV1/NodegroupV1/provider-argocd Cluster are the seed report's Figures 12-14; the
Cluster API objects are CAPOCI's ``cluster-template-managed.yaml`` with the variables
filled in. The CRDs themselves are the package's pinned ones (or ``$FLEET_CRDS_DIR``).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from fleet.checks.crds import PACKAGED_CRDS
from fleet.core.manifest import Manifest


def crds_dir() -> Path:
    """The pinned upstream CRDs: ``$FLEET_CRDS_DIR``, else the package's ``fleet/data/crds``."""
    env = os.environ.get("FLEET_CRDS_DIR")
    if env:
        return Path(env)
    return PACKAGED_CRDS


# Figure 12 of the seed report (labels of the tfvars in Figure 10), transcribed, without the
# labels the report redacted as <placeholders> (container_infra_prefix, containerd_tarball_*,
# oidc_*): Magnum would apply them literally, and fleet refuses them (issue 21, item 7).
SEED_LABELS = {
    "admission_control_list": "ExtendedResourceToleration,NamespaceLifecycle,LimitRanger,"
    "ServiceAccount,DefaultStorageClass,DefaultTolerationSeconds,MutatingAdmissionWebhook,"
    "ValidatingAdmissionWebhook,ResourceQuota,Priority",
    "autoscaler_tag": "v1.21.0-cern.0",
    "calico_ipv4pool": "10.100.0.0/16",
    "calico_ipv4pool_ipip": "Always",
    "calico_tag": "v3.24.5",
    "cephfs_csi_enabled": "false",
    "cephfs_csi_version": "cern-csi-1.0-3",
    "cern_chart_enabled": "true",
    "cern_chart_version": "0.12.0",
    "cert_manager_api": "true",
    "cgroup_driver": "cgroupfs",
    "cloud_provider_enabled": "true",
    "cloud_provider_tag": "v1.24.5",
    "container_runtime": "containerd",
    "coredns_tag": "1.8.7",
    "cvmfs_csi_enabled": "false",
    "cvmfs_csi_version": "v2.0.0",
    "eos_enabled": "false",
    "etcd_tag": "v3.4.13",
    "heapster_enabled": "false",
    "heat_container_agent_tag": "train-stable-6",
    "helm_client_tag": "v2.16.6",
    "ignition_version": "3.3.0",
    "influx_grafana_dashboard_enabled": "false",
    "ingress_controller": "",
    "ip_family_policy": "single_stack",
    "keystone_auth_enabled": "true",
    "kube_csi_enabled": "false",
    "kube_csi_version": "cern-csi-1.0-2",
    "kube_dashboard_enabled": "false",
    "kube_tag": "v1.25.3-cern.0",
    "kubeapi_options": "--feature-gates=CSIMigration=true",
    "kubecontroller_options": "--feature-gates=",
    "kubelet_options": "--feature-gates= --system-reserved=memory=500Mi "
    "--resolv-conf=/run/systemd/resolve/resolv.conf",
    "logging_installer": "helm",
    "manila_csi_enabled": "false",
    "manila_enabled": "false",
    "manila_version": "v0.3.0",
    "metrics_server_enabled": "true",
    "monitoring_enabled": "false",
    "nginx_ingress_controller_tag": "v1.0.4",
    "nvidia_gpu_enabled": "false",
    "nvidia_gpu_tag": "35-5.16.13-200.fc35.x86_64-470.82.00",
    "oidc_enabled": "false",
    "snapshot_controller_enabled": "false",
    "tiller_enabled": "true",
    "tiller_tag": "v2.16.6",
    "traefik_ingress_controller_tag": "2.5.4",
    "use_podman": "true",
}


SEED_TEMPLATE_UUID = "0b6f3c52-7a1e-4d8b-9c2f-5e4a3b2c1d01"
"""A made-up UUID for Figure 12's template: Figure 12 wrote the template's name as
``clusterTemplateId``, but Magnum stores (and the provider reads back) the UUID."""


def cluster_v1(name: str = "k8s-ais-batch-dev-multi-v25") -> dict[str, Any]:
    """Seed Figure 12 (``clusterTemplateId`` the template's UUID, not its name)."""
    return {
        "apiVersion": "containerinfra.openstack.crossplane.io/v1alpha1",
        "kind": "ClusterV1",
        "metadata": {"annotations": {"crossplane.io/external-name": name}, "name": name},
        "spec": {
            "deletionPolicy": "Orphan",
            "forProvider": {
                "clusterTemplateId": SEED_TEMPLATE_UUID,
                "createTimeout": 60,
                "flavor": "m2.xlarge",
                "keypair": "shared-jeedy-key",
                "labels": dict(SEED_LABELS),
                "masterCount": 1,
                "masterFlavor": "m2.xlarge",
                "mergeLabels": True,
                "name": name,
                "nodeCount": 1,
            },
            "providerConfigRef": {"name": "jeedy-ais"},
            "writeConnectionSecretToRef": {"name": name, "namespace": "crossplane-clusters"},
        },
    }


def nodegroup_v1(
    cluster: str = "k8s-ais-batch-dev-multi-v25", name: str = "zone-a-xlarge"
) -> dict[str, Any]:
    """Seed Figure 13."""
    return {
        "apiVersion": "containerinfra.openstack.crossplane.io/v1alpha1",
        "kind": "NodegroupV1",
        "metadata": {
            "annotations": {"crossplane.io/external-name": f"{cluster}/{name}"},
            "name": name,
        },
        "spec": {
            "deletionPolicy": "Orphan",
            "forProvider": {
                "clusterId": cluster,
                "flavorId": "m2.xlarge",
                "labels": {"availability_zone": "cern-geneva-a"},
                "mergeLabels": True,
                "name": name,
                "nodeCount": 1,
            },
            "providerConfigRef": {"name": "jeedy-ais"},
        },
    }


def argocd_cluster(name: str = "k8s-ais-batch-dev-multi-v25") -> dict[str, Any]:
    """Seed Figure 14: provider-argocd registration of a cluster."""
    return {
        "apiVersion": "cluster.argocd.crossplane.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {
            "forProvider": {
                "config": {
                    "kubeconfigSecretRef": {
                        "key": "attribute.kubeconfig.raw_config",
                        "name": name,
                        "namespace": "crossplane-clusters",
                    }
                },
                "name": name,
            },
            "providerConfigRef": {"name": "argocd-provider"},
        },
    }


def openstack_provider_config(name: str = "jeedy-ais") -> dict[str, Any]:
    """An openstack.crossplane.io ProviderConfig reading credentials from a Secret."""
    return {
        "apiVersion": "openstack.crossplane.io/v1beta1",
        "kind": "ProviderConfig",
        "metadata": {"name": name},
        "spec": {
            "credentials": {
                "source": "Secret",
                "secretRef": {
                    "key": "credentials",
                    "name": f"{name}-openstack-credentials",
                    "namespace": "crossplane-system",
                },
            }
        },
    }


def argocd_provider_config(name: str = "argocd-provider") -> dict[str, Any]:
    """An argocd.crossplane.io ProviderConfig."""
    return {
        "apiVersion": "argocd.crossplane.io/v1alpha1",
        "kind": "ProviderConfig",
        "metadata": {"name": name},
        "spec": {
            "serverAddr": "argocd-server.argocd.svc:443",
            "insecure": True,
            "plainText": False,
            "credentials": {
                "source": "Secret",
                "secretRef": {
                    "namespace": "crossplane-system",
                    "name": "argocd-credentials",
                    "key": "authToken",
                },
            },
        },
    }


def argocd_application(name: str = "main-app") -> dict[str, Any]:
    """Seed Figure 17: the root ArgoCD Application."""
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {
            "name": name,
            "namespace": "argocd",
            "finalizers": ["resources-finalizer.argocd.argoproj.io"],
        },
        "spec": {
            "destination": {"namespace": "default", "server": "https://kubernetes.default.svc"},
            "project": "default",
            "source": {
                "path": "sub-apps",
                "repoURL": "https://git.example.org/fleet.git",
                "targetRevision": "HEAD",
                "directory": {"recurse": True},
            },
            "syncPolicy": {
                "automated": {"prune": True},
                "retry": {"limit": 5, "backoff": {"duration": "5s", "maxDuration": "3m"}},
            },
        },
    }


def capoci_managed(name: str = "oke-dev", namespace: str = "oke") -> list[dict[str, Any]]:
    """CAPOCI's cluster-template-managed.yaml, variables filled in."""
    infra = "infrastructure.cluster.x-k8s.io/v1beta2"
    return [
        {
            "apiVersion": "cluster.x-k8s.io/v1beta1",
            "kind": "Cluster",
            "metadata": {
                "labels": {"cluster.x-k8s.io/cluster-name": name},
                "name": name,
                "namespace": namespace,
            },
            "spec": {
                "infrastructureRef": {
                    "apiVersion": infra,
                    "kind": "OCIManagedCluster",
                    "name": name,
                    "namespace": namespace,
                },
                "controlPlaneRef": {
                    "apiVersion": infra,
                    "kind": "OCIManagedControlPlane",
                    "name": name,
                    "namespace": namespace,
                },
            },
        },
        {
            "apiVersion": infra,
            "kind": "OCIManagedCluster",
            "metadata": {
                "labels": {"cluster.x-k8s.io/cluster-name": name},
                "name": name,
                "namespace": namespace,
            },
            "spec": {"compartmentId": "ocid1.compartment.oc1..aaaaexample"},
        },
        {
            "apiVersion": infra,
            "kind": "OCIManagedControlPlane",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"version": "v1.30.1"},
        },
        {
            "apiVersion": "cluster.x-k8s.io/v1beta1",
            "kind": "MachinePool",
            "metadata": {
                "name": f"{name}-mp-0",
                "namespace": namespace,
                "annotations": {"cluster.x-k8s.io/replicas-managed-by": ""},
            },
            "spec": {
                "clusterName": name,
                "replicas": 3,
                "template": {
                    "spec": {
                        "clusterName": name,
                        "bootstrap": {"dataSecretName": ""},
                        "infrastructureRef": {
                            "apiVersion": infra,
                            "kind": "OCIManagedMachinePool",
                            "name": f"{name}-mp-0",
                        },
                        "version": "v1.30.1",
                    }
                },
            },
        },
        {
            "apiVersion": infra,
            "kind": "OCIManagedMachinePool",
            "metadata": {"name": f"{name}-mp-0", "namespace": namespace},
            "spec": {
                "version": "v1.30.1",
                "nodeShape": "VM.Standard.E4.Flex",
                "sshPublicKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIexample user@example",
                "nodeSourceViaImage": {
                    "imageId": "ocid1.image.oc1.eu-frankfurt-1.aaaaexample",
                    "bootVolumeSizeInGBs": 50,
                },
                "nodeShapeConfig": {"ocpus": "1"},
            },
        },
    ]


def namespace(name: str = "crossplane-clusters") -> dict[str, Any]:
    """A core v1 Namespace."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def manifest(body: dict[str, Any], environment: str = "dev", source: str = "test.py:1") -> Manifest:
    """Wrap ``body`` (deep-copied) as a Manifest."""
    return Manifest(environment, copy.deepcopy(body), "clusters/test", source)


def magnum_environment(environment: str = "dev") -> list[Manifest]:
    """A consistent environment: provider configs, a Magnum cluster, a node group, registration."""
    bodies = [
        openstack_provider_config(),
        argocd_provider_config(),
        namespace(),
        cluster_v1(),
        nodegroup_v1(),
        argocd_cluster(),
    ]
    return [manifest(b, environment) for b in bodies]
