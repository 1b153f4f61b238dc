"""What OKE clusters (Cluster API + CAPOCI) contribute to the platform: the cloud plug-in.

Components: CAPOCI v0.24.0 (builds against Cluster API v1.12 and implements the v1beta1
contract), an InfrastructureProvider named ``oci`` that requires the Cluster API core, which
requires cluster-api-operator and so cert-manager; installed only where an environment holds
an OKE cluster (CAPOCI exits without OCI credentials: oracle/cluster-api-provider-oci
``main.go``). Feature gate ``MachinePool`` (OKE node pools are MachinePools). Health checks
for the CAPOCI kinds ArgoCD has none for. CAPOCI runs with
``--init-oci-clients-on-startup=false`` unless a :class:`CapociCredentials` gives it
credentials of its own: every OKE cluster then names an ``OCIClusterIdentity``, so the
manager needs none (oracle/cluster-api-provider-oci ``main.go``,
``config/manager/manager.yaml``). Reference rules for Cluster API object references, the
OCIClusterIdentity and ``<cluster>-kubeconfig``.

ArgoCD applies the cluster's objects server-side and diffs them server-side: CAPOCI writes
ids into ``spec`` lists (subnets, NSGs) that are ``x-kubernetes-list-type: map``, so with
server-side apply ArgoCD owns only the fields it sends and CAPOCI's ids stay CAPOCI's
(oracle/cluster-api-provider-oci ``cloud/scope/subnet_reconciler.go``; argo-cd
``controller/state.go`` ``ServerSideDiff``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from fleet.clouds.base import CloudPlugin, FleetCluster, ImporterEntry, ShortLivedCredential
from fleet.clouds.oci.changes import OKE_CHANGE_RULES
from fleet.clouds.oci.credentials import CAPOCI_NAMESPACE, CapociCredentials
from fleet.clouds.oci.health import CONTROL_PLANE_HEALTH, POOL_HEALTH
from fleet.clouds.oci.importer.help import OCI_IDENTITY, OKE_IMPORT_HELP
from fleet.clouds.oci.upgrades import OKE_VERSION_RULES
from fleet.core.errors import DefinitionError
from fleet.platform.cluster_api import (
    CAPI_GROUP,
    INFRASTRUCTURE_GROUP,
    ProviderOptions,
    infrastructure_provider,
    ready_health,
)
from fleet.platform.component import HealthCheck, InstallContext
from fleet.platform.live import (
    CLUSTER_API_V1BETA1_CONTRACT,
    CLUSTER_API_V1BETA2,
    LiveKind,
    LiveStatus,
    VersionAt,
)
from fleet.platform.references import ReferenceRules

if TYPE_CHECKING:
    from fleet.clouds.importer import CloudImporter

INFRA_GROUP = INFRASTRUCTURE_GROUP
IDENTITY = (INFRA_GROUP, "OCIClusterIdentity")

READY_HEALTH = ready_health(
    "Cluster API provider objects (CAPOCI's OCIManagedCluster): healthy when Ready."
)
"""Health of ``OCIManagedCluster`` (the Cluster API v1beta1 contract's ``Ready``); the
control plane and the node pools have checks of their own
(:mod:`fleet.clouds.oci.health`)."""

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


OCID_TAIL = 10
"""Characters of an OCI id ``fleet ls`` keeps (after ``…``): its unique, random end."""


def short_ocid(account: str) -> str:
    """An OCI id (``ocid1....``) as ``…`` and its last :data:`OCID_TAIL` characters;
    anything else as it is."""
    if account.startswith("ocid1.") and len(account) > OCID_TAIL + 1:
        return "…" + account[-OCID_TAIL:]
    return account


def _capoci_options(ctx: InstallContext) -> ProviderOptions:
    """The CapociCredentials' Secret when the environment has one; else no credentials at
    all, which needs an identity on every OKE cluster there."""
    declared = [
        c
        for c in ctx.fleet.declarations()
        if isinstance(c, CapociCredentials) and ctx.environment in c.environments
    ]
    if len(declared) > 1:
        raise DefinitionError(
            f"environment {ctx.environment!r} already has CapociCredentials "
            f"(at {declared[0].where})",
            where=declared[1].context,
            field="environments",
        )
    if declared:
        return ProviderOptions(config_secret=(declared[0].secret, CAPOCI_NAMESPACE))
    for cluster in ctx.fleet.declarations():
        if (
            isinstance(cluster, FleetCluster)
            and ctx.environment in cluster.environments
            and not cluster.is_retired(ctx.environment)
            and ctx.component in type(cluster).plugin.components
            and getattr(cluster, "identity", True) is None
        ):
            raise DefinitionError(
                f"cluster {cluster.construct_id!r} has no identity, and CAPOCI runs without "
                "credentials of its own: give the cluster an OciClusterIdentity, or give "
                "CAPOCI credentials with CapociCredentials(fleet, ..., secret=...)",
                where=cluster.context,
                field="identity",
            )
    return ProviderOptions(manager_args={"--init-oci-clients-on-startup": "false"})


CAPOCI = infrastructure_provider(
    name="cluster-api-provider-oci",
    provider="oci",
    version="v0.24.0",
    namespace=CAPOCI_NAMESPACE,
    owns=frozenset(
        (INFRA_GROUP, kind)
        for kind in (
            "OCIManagedCluster",
            "OCIManagedControlPlane",
            "OCIManagedMachinePool",
            "OCIClusterIdentity",
        )
    ),
    health_checks=(
        HealthCheck(INFRA_GROUP, "OCIManagedCluster", READY_HEALTH),
        HealthCheck(INFRA_GROUP, "OCIManagedControlPlane", CONTROL_PLANE_HEALTH, open_libs=True),
        HealthCheck(INFRA_GROUP, "OCIManagedMachinePool", POOL_HEALTH, open_libs=True),
        HealthCheck(*IDENTITY, IDENTITY_HEALTH),
    ),
    feature_gates={"MachinePool": True},
    options=_capoci_options,
)
"""CAPOCI (an ``InfrastructureProvider`` named ``oci``)."""


POOL_RULES = replace(CLUSTER_API_V1BETA1_CONTRACT, failure_messages=("status", "failureMessages"))
"""An OCIManagedMachinePool's conditions, completed by its ``status.failureMessages``."""

OKE_STATUS = LiveStatus(
    kinds=(
        *(
            LiveKind(
                group=CAPI_GROUP,
                kind=kind,
                version="v1beta2",
                plural=f"{kind.lower()}s",
                namespaced=True,
                component="cluster-api",
                rules=CLUSTER_API_V1BETA2,
            )
            for kind in ("Cluster", "MachinePool")
        ),
        *(
            LiveKind(
                group=INFRA_GROUP,
                kind=kind,
                version="v1beta2",
                plural=f"{kind.lower()}s",
                namespaced=True,
                component=CAPOCI.name,
                rules=rules,
            )
            for kind, rules in (
                ("OCIManagedCluster", CLUSTER_API_V1BETA1_CONTRACT),
                ("OCIManagedControlPlane", CLUSTER_API_V1BETA1_CONTRACT),
                ("OCIManagedMachinePool", POOL_RULES),
            )
        ),
    ),
    version=VersionAt(group=INFRA_GROUP, kind="OCIManagedControlPlane", path=("status", "version")),
)
"""What ``fleet status`` reads of an OKE cluster. The Cluster API ``Cluster`` and
``MachinePool`` (read as the ``v1beta2`` the fleet renders) by their v1beta2 conditions in
``status.conditions`` (cluster-api v1.12.11 ``api/core/v1beta2/cluster_types.go``
``ClusterStatus``, ``machinepool_types.go`` ``MachinePoolStatus``); CAPOCI's
kinds by their v1beta1-contract conditions (CAPOCI v0.24.0 keeps
``clusterv1beta1.Conditions`` on its ``v1beta2`` kinds), where a failed node pool is
``NodePoolReady=False``, severity ``Error``, reason ``NodePoolProvisionFailed``, with an
empty message and the reasons in ``status.failureMessages``
(``exp/controllers/ocimanaged_machinepool_controller.go``,
``exp/api/v1beta2/ocimanagedmachinepool_types.go``). The live version is the control
plane's ``status.version`` (``api/v1beta2/ocimanagedcontrolplane_types.go``)."""
OKE_TOKEN = ShortLivedCredential(
    lifetime_seconds=300,
    refresh_seconds=180,
    what=(
        "an OKE cluster's kubeconfig holds a presigned token that lives about 300 s, "
        "rewritten by CAPOCI every 180 s"
    ),
)
"""The token in ``<cluster>-kubeconfig``: CAPOCI writes a presigned request
(``cloud/services/base/BaseClient.go`` ``GenerateToken``) at each reconcile of a ready
control plane, which requeues after 180 s (v0.24.0
``controllers/ocimanagedcluster_controlplane_controller.go``); the OKE API accepts it for
about five minutes (oci-cli's ``oci ce cluster generate-token`` marks it expired after four
"before the token is actually expired"; Oracle's own kubeconfig helpers re-generate after 240 s)."""


def _load_importer() -> CloudImporter:
    # Only `fleet import` loads the importer (Terraform's parsers come with it).
    from fleet.clouds.oci.importer.importer import load

    return load()


OKE_IMPORTER = ImporterEntry(help=OKE_IMPORT_HELP, load=_load_importer, options=(OCI_IDENTITY,))
"""``fleet import`` for OKE (:mod:`fleet.clouds.oci.importer`)."""

OKE_PLUGIN = CloudPlugin(
    importer=OKE_IMPORTER,
    kubeconfig_credential=OKE_TOKEN,
    components=(CAPOCI,),
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
    # The Cluster API core's references come with its component (CLUSTER_API).
    references=ReferenceRules(
        object_refs={(INFRA_GROUP, "OCIManagedCluster"): (("spec", "identityRef"),)},
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
    ),
    short_account=short_ocid,
    application_sync_options=("ServerSideApply=true",),
    application_compare_options=("ServerSideDiff=true",),
    change_rules=(*OKE_CHANGE_RULES, *OKE_VERSION_RULES),
    status=OKE_STATUS,
)
"""The OKE plug-in (``OciManagedCluster.plugin``)."""
