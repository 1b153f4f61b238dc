"""What OKE clusters (Cluster API + CAPOCI) contribute to the platform: the cloud plug-in.

Components: cert-manager, cluster-api-operator, Cluster API core and CAPOCI (only where an
environment holds an OKE cluster: CAPOCI exits without OCI credentials, see
:mod:`fleet.argocd.bootstrap`). Feature gate ``MachinePool`` (OKE node pools are
MachinePools). Health checks for the CAPOCI kinds ArgoCD has none for. Reference rules for
Cluster API object references, the OCIClusterIdentity and ``<cluster>-kubeconfig``.

ArgoCD applies the cluster's objects server-side and diffs them server-side: CAPOCI writes
ids into ``spec`` lists (subnets, NSGs) that are ``x-kubernetes-list-type: map``, so with
server-side apply ArgoCD owns only the fields it sends and CAPOCI's ids stay CAPOCI's
(oracle/cluster-api-provider-oci ``cloud/scope/subnet_reconciler.go``; argo-cd
``controller/state.go`` ``ServerSideDiff``).
"""

from __future__ import annotations

from fleet.clouds.base import (
    CAPOCI,
    CERT_MANAGER,
    CLUSTER_API,
    CLUSTER_API_OPERATOR,
    CloudPlugin,
    FieldRef,
    HealthCheck,
    ReferenceRules,
    SecretProducer,
)
from fleet.core.manifest import Manifest

CAPI_GROUP = "cluster.x-k8s.io"
INFRA_GROUP = "infrastructure.cluster.x-k8s.io"
IDENTITY = (INFRA_GROUP, "OCIClusterIdentity")

CAPI_HEALTH = """\
-- Cluster API provider objects (CAPOCI's OCIManaged*): healthy when Ready.
local hs = {status = "Progressing", message = "Waiting for the controller"}
if obj.status == nil then
  return hs
end
if obj.status.failureReason ~= nil then
  hs.status = "Degraded"
  hs.message = obj.status.failureReason
  return hs
end
if obj.status.conditions ~= nil then
  for _, condition in ipairs(obj.status.conditions) do
    if condition.type == "Ready" then
      if condition.status == "True" then
        hs.status = "Healthy"
      elseif condition.severity == "Error" then
        hs.status = "Degraded"
      end
      hs.message = condition.message or condition.reason or ""
      return hs
    end
  end
end
if obj.status.ready == true then
  hs.status = "Healthy"
  hs.message = "Ready"
end
return hs
"""

IDENTITY_HEALTH = """\
-- OCIClusterIdentity has no Ready state of its own: healthy unless a condition failed.
local hs = {status = "Healthy", message = ""}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, condition in ipairs(obj.status.conditions) do
    if condition.status == "False" and condition.severity == "Error" then
      hs.status = "Degraded"
      hs.message = condition.message or condition.reason or ""
      return hs
    end
  end
end
return hs
"""


def _capi_kubeconfig(m: Manifest) -> tuple[str, str, frozenset[str] | None]:
    return (m.namespace, f"{m.name}-kubeconfig", frozenset({"value"}))


OKE_PLUGIN = CloudPlugin(
    components=(CERT_MANAGER, CLUSTER_API_OPERATOR, CLUSTER_API, CAPOCI),
    capi_feature_gates={"MachinePool": True},
    health_checks=(
        *(
            HealthCheck(INFRA_GROUP, kind, CAPI_HEALTH)
            for kind in ("OCIManagedCluster", "OCIManagedControlPlane", "OCIManagedMachinePool")
        ),
        HealthCheck(*IDENTITY, IDENTITY_HEALTH),
    ),
    protected_kinds=(
        # Deleting any of these deletes (part of) an OKE cluster, also when a user added
        # them as plain cdk8s objects rather than through the cluster class.
        (CAPI_GROUP, "Cluster"),
        (CAPI_GROUP, "MachinePool"),
        (INFRA_GROUP, "OCIManagedCluster"),
        (INFRA_GROUP, "OCIManagedControlPlane"),
        (INFRA_GROUP, "OCIManagedMachinePool"),
        # CAPOCI's credentials for the clusters whose spec.identityRef names it.
        IDENTITY,
    ),
    references=ReferenceRules(
        field_refs=(
            FieldRef(
                CAPI_GROUP,
                "MachinePool",
                (("spec", "clusterName"), ("spec", "template", "spec", "clusterName")),
                CAPI_GROUP,
                "Cluster",
                (("metadata", "name"),),
                same_namespace=True,
            ),
        ),
        object_refs={
            (CAPI_GROUP, "Cluster"): (
                ("spec", "infrastructureRef"),
                ("spec", "controlPlaneRef"),
            ),
            (CAPI_GROUP, "MachinePool"): (
                ("spec", "template", "spec", "infrastructureRef"),
                ("spec", "template", "spec", "bootstrap", "configRef"),
            ),
            (INFRA_GROUP, "OCIManagedCluster"): (("spec", "identityRef"),),
        },
        identity_kind=IDENTITY,
        identity_consequence="CAPOCI could no longer authenticate for the OKE clusters that use it",
        identity_ref_kinds=frozenset(
            {
                (INFRA_GROUP, "OCIManagedCluster"),
                # Self-managed CAPOCI clusters (not rendered by the fleet, but a plain
                # object may be).
                (INFRA_GROUP, "OCICluster"),
            }
        ),
        secret_producers=(SecretProducer(CAPI_GROUP, "Cluster", _capi_kubeconfig),),
        # Cluster API puts the cluster name in the cluster.x-k8s.io/cluster-name label.
        label_named_kinds=frozenset({(CAPI_GROUP, "Cluster")}),
    ),
    application_sync_options=("ServerSideApply=true",),
    application_compare_options=("ServerSideDiff=true",),
)
"""The OKE plug-in (``OciManagedCluster.plugin``)."""
