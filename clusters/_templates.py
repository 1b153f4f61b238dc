"""The Magnum cluster templates our clusters use (the catalog of the seed's Figure 4)."""

from fleet import ClusterTemplate

# The labels every cluster of the Kubernetes 1.25.3 templates carries (seed Figure 12).
# The seed report redacted container_infra_prefix, containerd_tarball_url/_sha256 and the
# oidc_* labels as <placeholders>; Magnum would apply those literally (the stack fails), so
# they are left out here: clusters merge in the template's own values (merge_labels).
_BASE_1_25_3 = {
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

# Clusters name their template by UUID (Magnum stores the UUID, and the provider reads it
# back: a name would be a difference on every poll), per OpenStack region. The UUIDs below are
# EXAMPLES, made up for this repository: take the real ones from
#   openstack coe cluster template show <name> -f value -c uuid
# (or `fleet import tfstate`), once per region.

# Multi-AZ: nodes spread over availability zones by node groups.
MULTI_1_25_3 = ClusterTemplate(
    name="kubernetes-1.25.3-3-multi",
    kubernetes_version="v1.25.3",
    uuid={"cern": "0b6f3c52-7a1e-4d8b-9c2f-5e4a3b2c1d01"},  # example UUID
    base_labels=_BASE_1_25_3,
    changing_labels=["cephfs_csi_enabled", "manila_csi_enabled", "manila_enabled"],
)

# Single-AZ: all nodes in one zone, chosen with the optional availability_zone label.
SINGLE_1_25_3 = ClusterTemplate(
    name="kubernetes-1.25.3-3",
    kubernetes_version="v1.25.3",
    uuid={"cern": "0b6f3c52-7a1e-4d8b-9c2f-5e4a3b2c1d02"},  # example UUID
    base_labels=_BASE_1_25_3,
    optional_labels=["availability_zone"],
    changing_labels=["cephfs_csi_enabled", "manila_csi_enabled", "manila_enabled"],
)
