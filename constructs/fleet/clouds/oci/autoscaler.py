"""The cluster autoscaler of an OKE cluster whose node pools autoscale: one per cluster, in
the workload cluster, scaling its ``MachinePool`` s through the management cluster.

Where it runs, and why (docs/upstream-behaviour.md, "OKE autoscaling"): the clusterapi
provider builds both of its clients once, at start (kubernetes/autoscaler
cluster-autoscaler-1.30.7 ``cloudprovider/clusterapi/clusterapi_provider.go``
``BuildClusterAPI``: ``clientcmd.BuildConfigFromFlags`` for ``--cloud-config`` and
``--kubeconfig``). In the management cluster it would read the workload cluster through
``<cluster>-kubeconfig``, whose OKE token CAPOCI replaces every few minutes
(oracle/cluster-api-provider-oci v0.24.0 ``cloud/scope/managed_control_plane.go``
``updateCAPIKubeconfigSecret``): a static bearer token, dead minutes after the start. In the
workload cluster it uses its own service account there (in-cluster, rotated by the kubelet)
and, for the management cluster, a kubeconfig whose ``tokenFile`` client-go reads again as it
changes: a long-lived token of a service account that may only read this cluster's pools and
scale them (a ``Role`` in the cluster's namespace, ``machinepools/scale`` by name).

The token reaches the workload cluster by External Secrets: a ``PushSecret`` in the
management cluster writes it to a ``SecretStore`` of the Kubernetes provider whose
``authRef`` is ``<cluster>-kubeconfig``, read again on every reconcile (external-secrets
helm-chart-2.9.0 ``pkg/controllers/pushsecret/pushsecret_controller.go``: a new client
manager per reconcile; ``runtime/esutils/k8s_rest_config.go``
``BuildRESTConfigFromKubernetesConnection``: ``authRef`` -> ``RESTConfigFromKubeConfig``), so
CAPOCI's refreshed token is used each time.

Waves inside the cluster's Application: the service account, its Role, binding and token
Secret with the cluster's objects (wave 0: they need nothing); the SecretStore, the
PushSecret and the Application that syncs the workload objects with the registration and
the node pools (wave 1: they need the API server). Not later: a later wave would wait for
every pool, and ArgoCD reads a pool that waits for capacity Progressing for as long as it
waits. ArgoCD retries the Application until the registration exists, and the Deployment's
pod starts once the token is there and a node can take it.

Scale-down is off (``--scale-down-enabled=false``): the autoscaler deletes a node by
annotating its Machine and lowering ``replicas`` (``clusterapi_nodegroup.go`` ``DeleteNodes``),
but CAPOCI's ``OCIMachinePoolMachine`` controller only removes its finalizer
(``exp/controllers/ocimachinepoolmachine_controller.go``) and the managed pool resizes by
``replicas`` alone (``managed_machine_pool.go`` ``UpdateNodePool``): OKE removes a node of its
own choosing, while the node the autoscaler drained stays tainted and empty.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fleet.core.layout import SYNC_WAVE

REPOSITORY = "registry.k8s.io/autoscaling/cluster-autoscaler"


@dataclass(frozen=True)
class Release:
    """A cluster-autoscaler release: its tag in kubernetes/autoscaler and the commit."""

    version: str
    commit: str

    @property
    def image(self) -> str:
        """The release's image."""
        return f"{REPOSITORY}:v{self.version}"


RELEASES: dict[tuple[int, int], Release] = {
    (1, 30): Release("1.30.7", "4be8b2d7d49352fc158fec8773186516eec126c8"),
    (1, 31): Release("1.31.5", "f0fb6c4b57c807f7544afbb2819ed2bf351f69c8"),
    (1, 32): Release("1.32.7", "f645beb1ec472b785e5c196b3768c0d93195a75a"),
    (1, 33): Release("1.33.6", "be4b5a18814a53539d0fe6299c92839152cae54c"),
    (1, 34): Release("1.34.5", "cb2123ed13148c38fbdb1ede42d8e99761ee2909"),
    (1, 35): Release("1.35.2", "2d42588803c71fe9b35dcd9e3669ac6bb550ca22"),
    (1, 36): Release("1.36.1", "35e8a280425c76a4040f57ae0fa232a952c02024"),
}
"""The newest patch of each minor (tags ``cluster-autoscaler-<version>`` of
kubernetes/autoscaler). The autoscaler runs the minor of the cluster's control plane. Not
before 1.30: older releases read no ``apiGroup`` in a v1beta2 ``infrastructureRef``
(``clusterapi_unstructured.go`` ``readInfrastructureReferenceResource``), and Cluster API
v1.12 serves v1beta2 as the group's preferred version, which the provider uses
(``getCAPIGroupPreferredVersion``)."""

WORKLOAD_FOLDER = "autoscaler"
"""The folder, inside the cluster's, of the objects that go into the workload cluster."""
NAMESPACE = "kube-system"
"""Where it runs in the workload cluster: its default ``--namespace`` (status ConfigMap,
leader-election Lease)."""
NAME = "cluster-autoscaler"
"""The prefix of the workload cluster's objects: ``cluster-autoscaler-<cluster>``. The
cluster's name keeps them apart from another cluster's in the same ``dist/<env>/`` (object
identities are unique per environment), and from the management-cluster objects
(``<cluster>-autoscaler``)."""
CONFIG_PATH = "/etc/fleet/management"
CREDENTIALS_PATH = "/etc/fleet/management-credentials"
READ = ("get", "list", "watch")


def release_for(version: str) -> Release | None:
    """The release for a control plane of Kubernetes ``version`` (``v1.30.1``), None when the
    fleet pins none for its minor."""
    parts = version.lstrip("v").split(".")
    try:
        key = (int(parts[0]), int(parts[1]))
    except (IndexError, ValueError):
        return None
    return RELEASES.get(key)


def names(cluster: str) -> dict[str, str]:
    """The objects' names for cluster object name ``cluster``: in the management cluster
    (``account``, ``token``, ``store``) and in the workload cluster (``workload``, its
    ``kubeconfig`` ConfigMap and the pushed ``credentials`` Secret, keys ``token`` and
    ``ca.crt``)."""
    workload = f"{NAME}-{cluster}"
    return {
        "account": f"{cluster}-autoscaler",
        "token": f"{cluster}-autoscaler-token",
        "store": f"{cluster}-workload",
        "workload": workload,
        "kubeconfig": f"{workload}-kubeconfig",
        "credentials": f"{workload}-management",
    }


def _meta(name: str, namespace: str, wave: int | None, labels: dict[str, str]) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": dict(labels), "name": name, "namespace": namespace}
    if wave is not None:
        meta["annotations"] = {SYNC_WAVE: str(wave)}
    return meta


def management_objects(
    cluster: str,
    namespace: str,
    pools: Sequence[str],
    *,
    labels: dict[str, str],
    paused: bool,
) -> list[dict[str, Any]]:
    """The autoscaler's objects in the management cluster (namespace ``namespace``): its
    service account with a Role that reads Cluster API's objects of the namespace and
    scales only ``pools`` (MachinePool names), the account's token Secret, the SecretStore of
    the workload cluster and the PushSecret of the token. Waves 0 and 1 (none if ``paused``:
    a paused cluster's Application has one wave)."""
    n = names(cluster)
    late = None if paused else 1
    role_rules = [
        {
            "apiGroups": ["cluster.x-k8s.io"],
            "resources": ["machinedeployments", "machinepools", "machines", "machinesets"],
            "verbs": list(READ),
        },
        {
            "apiGroups": ["cluster.x-k8s.io"],
            "resourceNames": sorted(pools),
            "resources": ["machinepools/scale"],
            "verbs": ["get", "patch", "update"],
        },
        {
            "apiGroups": ["infrastructure.cluster.x-k8s.io"],
            "resources": ["ocimanagedmachinepools"],
            "verbs": list(READ),
        },
    ]
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": _meta(n["account"], namespace, None, labels),
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": _meta(n["account"], namespace, None, labels),
            "rules": role_rules,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": _meta(n["account"], namespace, None, labels),
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": n["account"],
            },
            "subjects": [{"kind": "ServiceAccount", "name": n["account"], "namespace": namespace}],
        },
        {
            # The token controller fills in token, ca.crt and namespace (Kubernetes:
            # "Manually create a long-lived API token for a ServiceAccount").
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                **_meta(n["token"], namespace, None, labels),
                "annotations": {"kubernetes.io/service-account.name": n["account"]},
            },
            "type": "kubernetes.io/service-account-token",
        },
        {
            "apiVersion": "external-secrets.io/v1",
            "kind": "SecretStore",
            "metadata": _meta(n["store"], namespace, late, labels),
            "spec": {
                "provider": {
                    "kubernetes": {
                        "authRef": {"key": "value", "name": f"{cluster}-kubeconfig"},
                        "remoteNamespace": NAMESPACE,
                    }
                }
            },
        },
        {
            "apiVersion": "external-secrets.io/v1alpha1",
            "kind": "PushSecret",
            "metadata": _meta(n["token"], namespace, late, labels),
            "spec": {
                "data": [
                    {
                        "match": {
                            "remoteRef": {"property": key, "remoteKey": n["credentials"]},
                            "secretKey": key,
                        }
                    }
                    for key in ("ca.crt", "token")
                ],
                # Removing the autoscaler removes the token from the workload cluster too.
                "deletionPolicy": "Delete",
                "refreshInterval": "1h",
                "secretStoreRefs": [{"kind": "SecretStore", "name": n["store"]}],
                "selector": {"secret": {"name": n["token"]}},
                # An Opaque copy: a service-account-token Secret in the workload cluster would
                # name an account that does not exist there.
                "template": {"type": "Opaque"},
                "updatePolicy": "Replace",
            },
        },
    ]


def kubeconfig(api_server: str) -> str:
    """The management cluster's kubeconfig, holding no secret: the token and CA are files
    of the pushed Secret (client-go reads ``tokenFile`` again as it changes)."""
    return (
        "apiVersion: v1\n"
        "kind: Config\n"
        "clusters:\n"
        "- name: management\n"
        "  cluster:\n"
        f"    server: {api_server}\n"
        f"    certificate-authority: {CREDENTIALS_PATH}/ca.crt\n"
        "contexts:\n"
        "- name: management\n"
        "  context:\n"
        "    cluster: management\n"
        "    user: cluster-autoscaler\n"
        "current-context: management\n"
        "users:\n"
        "- name: cluster-autoscaler\n"
        "  user:\n"
        f"    tokenFile: {CREDENTIALS_PATH}/token\n"
    )


def args(cluster: str, namespace: str) -> list[str]:
    """The autoscaler's arguments: the clusterapi provider, the management kubeconfig, the
    cluster's node groups only, no scale-down (see the module), and a pool below its new
    minimum grown to it."""
    return [
        "--cloud-provider=clusterapi",
        f"--cloud-config={CONFIG_PATH}/kubeconfig",
        f"--node-group-auto-discovery=clusterapi:namespace={namespace},clusterName={cluster}",
        "--scale-down-enabled=false",
        "--enforce-node-group-min-size=true",
    ]


WORKLOAD_RULES: list[dict[str, Any]] = [
    {
        "apiGroups": [""],
        "resources": [
            "namespaces",
            "persistentvolumeclaims",
            "persistentvolumes",
            "pods",
            "replicationcontrollers",
            "services",
        ],
        "verbs": list(READ),
    },
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "update", "watch"]},
    {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["list", "watch"]},
    {
        "apiGroups": ["storage.k8s.io"],
        "resources": [
            "csidrivers",
            "csinodes",
            "csistoragecapacities",
            "storageclasses",
            "volumeattachments",
        ],
        "verbs": list(READ),
    },
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["list", "watch"]},
    {
        "apiGroups": ["apps"],
        "resources": ["daemonsets", "replicasets", "statefulsets"],
        "verbs": ["list", "watch"],
    },
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
    {
        "apiGroups": ["resource.k8s.io"],
        "resources": ["deviceclasses", "resourceclaims", "resourceslices"],
        "verbs": list(READ),
    },
]
"""The workload cluster's cluster-wide rules: the ``cluster-autoscaler-workload`` ClusterRole of
upstream's example at the newest pinned release (cluster-autoscaler-1.36.1
``cloudprovider/clusterapi/examples/deployment.yaml``; older releases ask for a subset), its
``configmaps`` and ``leases`` rules moved to a Role in :data:`NAMESPACE`."""


def workload_objects(
    cluster: str, namespace: str, api_server: str, release: Release
) -> list[dict[str, Any]]:
    """The autoscaler in the workload cluster: service account, RBAC, the management
    kubeconfig (a ConfigMap) and the Deployment, all named ``cluster-autoscaler-<cluster>``."""
    n = names(cluster)
    name = n["workload"]
    labels = {"app.kubernetes.io/instance": name, "app.kubernetes.io/name": NAME}

    def meta(object_name: str = name) -> dict[str, Any]:
        # a fresh dict per object: a shared one would be one YAML node written twice
        return {"labels": dict(labels), "name": object_name, "namespace": NAMESPACE}

    rbac = "rbac.authorization.k8s.io"

    def subject() -> list[dict[str, str]]:
        return [{"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}]

    container: dict[str, Any] = {
        "args": args(cluster, namespace),
        "command": ["/cluster-autoscaler"],
        "image": release.image,
        "name": NAME,
        "resources": {"requests": {"cpu": "100m", "memory": "300Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
        },
        "volumeMounts": [
            {"mountPath": CONFIG_PATH, "name": "management", "readOnly": True},
            {"mountPath": CREDENTIALS_PATH, "name": "management-credentials", "readOnly": True},
        ],
    }
    local_rules = [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "verbs": ["create", "delete", "get", "update"],
        },
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "verbs": ["create", "get", "update"],
        },
    ]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta()},
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRole",
            "metadata": {"labels": dict(labels), "name": name},
            "rules": copy.deepcopy(WORKLOAD_RULES),
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"labels": dict(labels), "name": name},
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": name},
            "subjects": subject(),
        },
        {"apiVersion": f"{rbac}/v1", "kind": "Role", "metadata": meta(), "rules": local_rules},
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "RoleBinding",
            "metadata": meta(),
            "roleRef": {"apiGroup": rbac, "kind": "Role", "name": name},
            "subjects": subject(),
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta(n["kubeconfig"]),
            "data": {"kubeconfig": kubeconfig(api_server)},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta(),
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": dict(labels)},
                "template": {
                    "metadata": {
                        # Never evicted to make room: it is the one that adds the room.
                        "annotations": {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"},
                        "labels": dict(labels),
                    },
                    "spec": {
                        "containers": [container],
                        "priorityClassName": "system-cluster-critical",
                        "securityContext": {
                            "runAsGroup": 65534,
                            "runAsNonRoot": True,
                            "runAsUser": 65534,
                            "seccompProfile": {"type": "RuntimeDefault"},
                        },
                        "serviceAccountName": name,
                        "terminationGracePeriodSeconds": 10,
                        "volumes": [
                            {"configMap": {"name": n["kubeconfig"]}, "name": "management"},
                            {
                                "name": "management-credentials",
                                "secret": {"secretName": n["credentials"]},
                            },
                        ],
                    },
                },
            },
        },
    ]
