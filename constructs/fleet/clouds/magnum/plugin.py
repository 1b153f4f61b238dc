"""What Magnum clusters (Crossplane provider-openstack) contribute to the platform.

Components: provider-openstack v0.9.0 (the release the pinned ``provider-openstack/`` CRDs
come from), which requires Crossplane; installed only where an environment holds a Magnum
cluster. Health: :data:`MAGNUM_HEALTH` for the Magnum kinds (ArgoCD's built-in check for
``*.crossplane.io``, argo-cd v3.5.1 ``resource_customizations/_.crossplane.io/_/health.lua``,
calls a paused object and Magnum's transient refusals Degraded, and a failed create
Healthy). The clusters' Applications ignore the external name the provider rewrites
(:data:`EXTERNAL_NAME_IGNORED`). Reference
rules: a managed resource's ProviderConfig, NodegroupV1 ``clusterId`` -> ClusterV1, and the
connection secret a ClusterV1 writes. ``fleet diff``: terraform-provider-openstack's ForceNew
arguments of the Magnum resources (``data/openstack-force-new.json``, with provenance),
moves to another project (:mod:`fleet.clouds.magnum.changes`), and what a change of
``clusterTemplateId`` does with the template's driver (:mod:`fleet.clouds.magnum.upgrades`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.clouds.base import CloudPlugin, FleetCluster, IgnoreDifference, ImporterEntry
from fleet.clouds.magnum.changes import CONTAINERINFRA, MAGNUM_CHANGE_RULES, UPGRADE_GUIDE
from fleet.clouds.magnum.importer.help import MAGNUM_IMPORT_HELP
from fleet.clouds.magnum.importer.options import OPTIONS as MAGNUM_IMPORT_OPTIONS
from fleet.clouds.magnum.upgrades import UPGRADE_RULE
from fleet.core.manifest import Manifest
from fleet.platform.component import HealthCheck, InstallContext, PlatformComponent
from fleet.platform.crossplane import (
    CROSSPLANE,
    XPKG_CONTRIB,
    CrossplaneProvider,
    ProviderRuntime,
    crossplane_health,
    max_reconcile_rate,
)
from fleet.platform.health_lua import AGE_FUNCTION
from fleet.platform.live import CROSSPLANE_MANAGED, LiveKind, LiveStatus, VersionAt
from fleet.platform.references import FieldRef, ReferenceRules, SecretProducer
from fleet.platform.upjet import ForceNewRules

if TYPE_CHECKING:
    from fleet.clouds.importer import CloudImporter

EXTERNAL_NAME = "crossplane.io/external-name"
KUBECONFIG_KEY = "attribute.kubeconfig.raw_config"
CONTAINERINFRA_GROUPS = tuple(CONTAINERINFRA)
"""The groups of provider-openstack's Magnum kinds (cluster-scoped, then namespaced)."""
MAGNUM_KINDS = ("ClusterV1", "NodegroupV1", "ClustertemplateV1")


def _connection_secret(m: Manifest) -> tuple[str, str, frozenset[str] | None] | None:
    ref: Any = (m.body.get("spec") or {}).get("writeConnectionSecretToRef")
    if not isinstance(ref, dict) or not ref.get("name"):
        return None
    return (str(ref.get("namespace") or m.namespace), str(ref["name"]), frozenset({KUBECONFIG_KEY}))


MAGNUM_CREATE_TIMEOUT_MINUTES = 60
"""Magnum's create timeout when the cluster names none (openstack/magnum stable/2025.1
``magnum/api/controllers/v1/cluster.py``: ``create_timeout`` defaults to 60 minutes)."""
CREATE_MARGIN_MINUTES = 10
"""Past the create timeout, how long a ClusterV1 without an API address still reads
Progressing (Magnum's periodic status sync runs after the timeout)."""

MAGNUM_HEALTH = crossplane_health(
    """\
-- provider-openstack's Magnum objects (upjet managed resources): Progressing while Magnum
-- provisions, Suspended while paused, Degraded on a failure.
""",
    "Provisioning",
    AGE_FUNCTION
    + f"""\
for _, t in ipairs({{"LastAsyncOperation", "Synced"}}) do
  local c = cond[t]
  if c ~= nil and c.status == "False" then
    if c.message ~= nil
        and string.find(c.message, "Cluster API address is not available yet", 1, true) then
      hs.message = "Waiting for the cluster's API address"
      return hs
    end
    hs.status = "Degraded"
    hs.message = c.message or c.reason or t
    return hs
  end
end
local ready = cond["Ready"]
if ready ~= nil and ready.status == "True" then
  if obj.kind == "ClusterV1" then
    local at = obj.status.atProvider or {{}}
    local spec = (obj.spec or {{}}).forProvider or {{}}
    if at.apiAddress == nil or at.apiAddress == "" then
      local timeout = tonumber(spec.createTimeout or at.createTimeout)
        or {MAGNUM_CREATE_TIMEOUT_MINUTES}
      local bound = (timeout + {CREATE_MARGIN_MINUTES}) * 60
      local age = fleet_age(at.createdAt) or fleet_age((obj.metadata or {{}}).creationTimestamp)
      hs.message = "Magnum has no API address for the cluster yet"
      if age ~= nil and age > bound then
        hs.status = "Degraded"
        hs.message = "Magnum has no API address for the cluster "
          .. tostring(timeout + {CREATE_MARGIN_MINUTES}) .. " minutes after creating it: "
          .. "its create failed or timed out"
      end
      return hs
    end
  end
  hs.status = "Healthy"
  hs.message = "Available"
  return hs
end
if ready ~= nil then
  hs.message = ready.reason or "Not ready"
end
return hs
""",
)
"""Health of ``ClusterV1``, ``NodegroupV1`` and ``ClustertemplateV1``.

* Provisioning: upjet v2.2.0 sets ``Ready`` (``Available``) only from an Observe once no
  async operation runs (``pkg/controller/external_async_tfpluginsdk.go`` ``Observe``,
  ``external_tfpluginsdk.go``); until then Progressing.
* Paused: Suspended, by the annotation or ``Synced`` reason ``ReconcilePaused``
  (:func:`~fleet.platform.crossplane.crossplane_health`, which every Crossplane object's
  check shares).
* Transient: Magnum refuses a node group while its cluster has no API address, 409
  "Cluster API address is not available yet" (openstack/magnum ``magnum/common/exception.py``
  ``ClusterAPIAddressUnavailable``, ``magnum/api/controllers/v1/nodegroup.py`` ``post``),
  which upjet reports in ``LastAsyncOperation`` and ``Synced`` (``pkg/controller/api.go``
  ``callbackFn``): Progressing. Node groups are applied after their cluster (wave 1), so
  this is rare.
* Failure: any ``False`` ``LastAsyncOperation``/``Synced`` (a failed create, a refused
  update, a bad flavor), whatever ``apiAddress`` says: Magnum resolves ``api_address`` on
  failure too (openstack/magnum stable/2025.1 ``magnum/drivers/heat/driver.py``
  ``poll_and_check``: CREATE_FAILED syncs the stack's outputs; openstack/magnum-capi-helm
  ``driver.py`` ``_update_cluster_api_address``: set while CREATE_IN_PROGRESS), so an address
  proves nothing. provider-openstack v0.9.0 never sets ``AsyncOperation``
  (``zz_controller.go``: ``WithStatusUpdates(false)``; ``Ongoing`` comes only from upjet's
  CLI client, ``pkg/controller/external.go``), and upjet clears ``LastAsyncOperation`` on the
  next Observe that finds the resource up to date (``external_async_tfpluginsdk.go``
  ``Observe``), which after a failed create keeps the state of the POST
  (``external_tfpluginsdk.go`` ``Create``) and so finds the cluster: the failure reads
  Degraded until that poll, and terraform-provider-openstack v3.4.0's Read has no status
  attribute to show it after (``resource_openstack_containerinfra_cluster_v1.go``).
* ``Ready`` without ``status.atProvider.apiAddress``: Magnum is still creating (after a
  provider restart the new process sees ``Available`` at once: the create runs on in
  Magnum, not in its memory) or the create failed before the API came up: Progressing until
  the create timeout (``createTimeout``, else Magnum's :data:`MAGNUM_CREATE_TIMEOUT_MINUTES`)
  plus :data:`CREATE_MARGIN_MINUTES` after Magnum's ``createdAt``, then Degraded.

Needs Lua's ``string`` library (``useOpenLibs``)."""

POLL = "10m"
POLL_SECONDS = 600
"""provider-openstack's ``--poll`` (its default, v0.9.0 ``cmd/provider/main.go``): each
Magnum object is read once per poll (a Keystone token and Magnum GETs each time)."""
RESOURCES: dict[str, dict[str, str]] = {"requests": {"cpu": "500m", "memory": "512Mi"}}
"""The provider's requests, a starting point: upstream publishes no figure for upjet's
in-process runtime (upjet's only sizing guide, v0.10.0 ``docs/sizing-guide.md``, measured
the runtime that forked Terraform). No limit: an OOM-killed provider leaves every cluster
unmanaged; size from ``container_memory_working_set_bytes`` (docs/performance.md)."""


def managed_resources(ctx: InstallContext) -> int:
    """The Magnum managed resources of ``ctx.environment``: per cluster placed there and
    not retired, its ``ClusterV1`` (Magnum's ``default-worker`` pool) and one ``NodegroupV1``
    per other node pool rendered (``node_pools``)."""
    return sum(
        len(cluster.node_pools(ctx.environment))
        for cluster in ctx.fleet.declarations()
        if isinstance(cluster, FleetCluster)
        and type(cluster).plugin is MAGNUM_PLUGIN
        and ctx.environment in cluster.environments
        and not cluster.is_retired(ctx.environment)
    )


def openstack_runtime(ctx: InstallContext) -> ProviderRuntime:
    """provider-openstack's Deployment in ``ctx.environment``: the poll, a reconcile rate
    for the environment's Magnum objects (:func:`~fleet.platform.crossplane.max_reconcile_rate`),
    its resources; one replica (no leader election, docs/performance.md)."""
    rate = max_reconcile_rate(managed_resources(ctx), POLL_SECONDS)
    return ProviderRuntime(
        args=(f"--poll={POLL}", f"--max-reconcile-rate={rate}"), resources=RESOURCES
    )


PROVIDER_OPENSTACK = PlatformComponent(
    name="provider-openstack",
    version="v0.9.0",
    install=CrossplaneProvider(
        name="provider-openstack",
        package=f"{XPKG_CONTRIB}/provider-openstack",
        runtime=openstack_runtime,
    ),
    requires=(CROSSPLANE,),
    owns=frozenset(
        {
            *((group, kind) for group in CONTAINERINFRA_GROUPS for kind in MAGNUM_KINDS),
            ("openstack.crossplane.io", "ProviderConfig"),
            ("openstack.m.crossplane.io", "ProviderConfig"),
            ("openstack.m.crossplane.io", "ClusterProviderConfig"),
        }
    ),
    health_checks=tuple(
        HealthCheck(CONTAINERINFRA_GROUPS[0], kind, MAGNUM_HEALTH, open_libs=True)
        for kind in MAGNUM_KINDS
    ),
)
"""Crossplane's provider-openstack (a ``Provider`` in ``providers/``)."""

FORCE_NEW_DATA = Path(__file__).parent / "data" / "openstack-force-new.json"
"""terraform-provider-openstack's ForceNew arguments of the Magnum resources, with provenance."""


MAGNUM_FORCE_NEW = ForceNewRules(
    data=FORCE_NEW_DATA,
    cloud="Magnum",
    default_instead=(
        "instead, blue/green: declare a new cluster with a new name and the new values, move "
        f"the workloads, then retire this one ({UPGRADE_GUIDE})"
    ),
    instead={
        "NodegroupV1": (
            "instead, declare a new node group with a new name and the new values, then "
            "retire this one (retired=True on its NodeGroup)"
        ),
    },
)
"""What ``fleet diff`` refuses on provider-openstack's Magnum objects."""


EXTERNAL_NAME_POINTER = "/metadata/annotations/" + EXTERNAL_NAME.replace("/", "~1")
"""The external-name annotation as a JSON pointer (``/`` escaped as ``~1``, RFC 6901)."""

EXTERNAL_NAME_IGNORED = tuple(
    IgnoreDifference(CONTAINERINFRA_GROUPS[0], kind, json_pointers=(EXTERNAL_NAME_POINTER,))
    for kind in ("ClusterV1", "NodegroupV1")
)
"""The external name of Magnum clusters and node groups, which the provider rewrites.

A cluster the fleet creates is rendered with its name as external name. After the Create,
upjet's tracker holds the Magnum UUID as Terraform ID, and every Observe writes it back into
``crossplane.io/external-name`` (upjet v2.2.0 ``pkg/controller/external_tfpluginsdk.go``
``setExternalName``, called in ``Create`` and ``Observe``; node groups
``<cluster>/<node group UUID>``). The tracker is kept per object UID for the provider's
lifetime (``pkg/controller/nofork_store.go``), so an ArgoCD self-heal that writes the name
back is undone on the next poll: a fight until the provider restarts. Ignored (with
``RespectIgnoreDifferences=true``), ArgoCD neither diffs nor syncs the annotation of a live
object and keeps the provider's value, while a new object (a rebuilt management cluster)
is created with the rendered name, which Magnum resolves (``magnum/api/utils.py``
``get_resource``) and the Terraform Read never changes: adoption by name still works
(argo-cd v3.5.1 ``controller/sync.go`` ``normalizeTargetResources``: a target without a live
object is applied as rendered)."""


def _load_importer() -> CloudImporter:
    # Only `fleet import` loads the importer (Terraform's parsers come with it).
    from fleet.clouds.magnum.importer.importer import load

    return load()


MAGNUM_IMPORTER = ImporterEntry(
    help=MAGNUM_IMPORT_HELP, load=_load_importer, options=MAGNUM_IMPORT_OPTIONS
)
"""``fleet import`` for Magnum (:mod:`fleet.clouds.magnum.importer`)."""

MAGNUM_STATUS = LiveStatus(
    kinds=tuple(
        LiveKind(
            group=CONTAINERINFRA_GROUPS[0],
            kind=kind,
            version="v1alpha1",
            plural=f"{kind.lower()}s",
            namespaced=False,
            component=PROVIDER_OPENSTACK.name,
            rules=CROSSPLANE_MANAGED,
        )
        for kind in ("ClusterV1", "NodegroupV1")
    ),
    version=VersionAt(
        group=CONTAINERINFRA_GROUPS[0],
        kind="ClusterV1",
        path=("status", "atProvider", "coeVersion"),
    ),
)
"""What ``fleet status`` reads of a Magnum cluster: its ``ClusterV1`` and ``NodegroupV1``
(Crossplane managed resources: ``Ready``/``Synced``, upjet's ``LastAsyncOperation``), and
the live version ``status.atProvider.coeVersion`` (provider-openstack v0.9.0
``apis/cluster/containerinfra/v1alpha1/zz_clusterv1_types.go`` ``ClusterV1Observation``,
Terraform's ``coe_version``). Magnum's Heat driver sets ``coe_version`` from the stack's
``kube_version`` parameter, which is the template's ``kube_tag`` label (openstack/magnum
20.0.2 ``magnum/drivers/heat/k8s_template_def.py``, ``driver.py`` ``get_version_info``):
``v1.25.3-cern.0`` runs the declared ``v1.25.3`` (:func:`~fleet.platform.live.same_release`).
A refused upgrade shows as ``Synced=False``: upjet v2.2.0
``pkg/controller/external_tfpluginsdk.go`` ``Update`` ("refuse to update the external
resource because the following update requires replacing it")."""

MAGNUM_PLUGIN = CloudPlugin(
    importer=MAGNUM_IMPORTER,
    components=(PROVIDER_OPENSTACK,),
    ignore_differences=EXTERNAL_NAME_IGNORED,
    protected_kinds=(),
    references=ReferenceRules(
        provider_config_families={
            ".openstack.crossplane.io": "openstack.crossplane.io",
            ".openstack.m.crossplane.io": "openstack.m.crossplane.io",
        },
        field_refs=tuple(
            FieldRef(
                group,
                "NodegroupV1",
                (("spec", "forProvider", "clusterId"), ("spec", "initProvider", "clusterId")),
                group,
                "ClusterV1",
                (
                    ("spec", "forProvider", "name"),
                    ("spec", "initProvider", "name"),
                    ("metadata", "annotations", EXTERNAL_NAME),
                ),
                same_namespace=".m." in group,
            )
            for group in CONTAINERINFRA_GROUPS
        ),
        secret_producers=tuple(
            SecretProducer(group, "ClusterV1", _connection_secret)
            for group in CONTAINERINFRA_GROUPS
        ),
    ),
    force_new=MAGNUM_FORCE_NEW,
    change_rules=(*MAGNUM_CHANGE_RULES, UPGRADE_RULE),
    status=MAGNUM_STATUS,
)
"""The Magnum plug-in (``MagnumCluster.plugin``)."""
