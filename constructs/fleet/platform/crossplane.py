"""Crossplane, and the install of a Crossplane provider: what several clouds (and the ArgoCD
registrations, through provider-argocd) require.

Crossplane is installed from its Helm chart (2.3.4: the release the pinned ``crossplane/``
CRDs of ``crds.lock.yaml`` come from). A provider is a ``pkg.crossplane.io`` ``Provider``
in ``providers/``, Healthy only once its package, and so its CRDs, are installed and its
controller runs: :data:`PROVIDER_HEALTH` (ArgoCD's built-in check calls an installing
provider Degraded, which fails the bootstrap's sync and retries it with back-off).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fleet.core.layout import PROTECT, sync_options
from fleet.platform.component import (
    ChartInstall,
    HealthCheck,
    InstallContext,
    Kind,
    ObjectsInstall,
    PlatformComponent,
)
from fleet.platform.health_lua import AGE_FUNCTION, minutes

CROSSPLANE_SYSTEM = "crossplane-system"
"""Crossplane's namespace (its chart's), where providers run and credentials live."""
XPKG_CONTRIB = "xpkg.upbound.io/crossplane-contrib"
"""The registry repository of the crossplane-contrib providers."""

_PAUSED_PROLOGUE = """\
local meta = obj.metadata or {}
local ann = meta.annotations or {}
if ann["crossplane.io/paused"] == "true" then
  hs.status = "Suspended"
  hs.message = "Reconciliation paused (crossplane.io/paused)"
  return hs
end
if obj.status == nil or obj.status.conditions == nil then
  return hs
end
local cond = {}
for _, c in ipairs(obj.status.conditions) do
  cond[c.type] = c
end
local synced = cond["Synced"]
if synced ~= nil and synced.reason == "ReconcilePaused" then
  hs.status = "Suspended"
  hs.message = "Reconciliation paused"
  return hs
end
"""


def crossplane_health(comment: str, waiting: str, body: str) -> str:
    """The Lua health check of a Crossplane object (a package, a managed resource): the
    Lua ``comment`` lines, then Progressing with the message ``waiting`` while the object
    has no conditions, Suspended while it is paused, else what ``body`` decides (it sees
    ``hs``, ``obj`` and ``cond``, the conditions by type).

    Paused: ``crossplane.io/paused: "true"`` (exactly that string: crossplane-runtime v2.1.0
    ``pkg/meta/meta.go`` ``IsPaused``), also before the controller noticed; then condition
    ``Synced`` with reason ``ReconcilePaused``, which is always ``status: "False"``
    (``apis/common/condition.go`` ``ReconcilePaused``, its only producer, marked by
    ``pkg/reconciler/managed/reconciler.go`` for the annotation and for an empty
    ``managementPolicies``); Crossplane's own package manager reads it by the reason alone
    (crossplane v2.3.4 ``internal/controller/pkg/manager/reconciler.go``), and so does this.
    No deletion branch: ArgoCD calls an object with a ``deletionTimestamp`` Progressing
    ("Pending deletion") before any Lua runs (argo-cd v3.5.1
    ``gitops-engine/pkg/health/health.go`` ``GetResourceHealth``)."""
    head = f'local hs = {{status = "Progressing", message = "{waiting}"}}\n'
    return comment + head + _PAUSED_PROLOGUE + body


RUNTIME_UNHEALTHY_SECONDS = 10 * 60
"""How long a Provider whose package revision or runtime is not healthy yet (``Package
revision health is "Unknown"``, ``Package runtime health is ...``) reads Progressing. Its
Deployment reports the same ``Available=False`` "Deployment does not have minimum
availability." while the pod starts and while it crash-loops, and Crossplane passes on only
that message (crossplane v2.3.4 ``internal/controller/pkg/runtime/runtime_provider.go``
``Post``: ``errFmtUnavailableProviderDeployment``); the condition's ``lastTransitionTime``
moves only when the message does (crossplane-runtime v2.1.0 ``apis/common/condition.go``
``SetConditions``: an equal condition keeps its time). Ten minutes is a Deployment's default
``progressDeadlineSeconds``; a provider that started takes a minute or two."""

PROVIDER_HEALTH = crossplane_health(
    """\
-- Crossplane Provider (crossplane v2.3.4 apis/pkg/v1/conditions.go): Healthy once Installed
-- and Healthy; Progressing while the package unpacks and its runtime starts; Degraded when
-- the package cannot be fetched or its revision is unhealthy; Suspended when paused.
""",
    "Waiting for the provider to be installed",
    AGE_FUNCTION
    + f"""\
local inst, healthy = cond["Installed"], cond["Healthy"]
if inst ~= nil and inst.status == "False" then
  if inst.reason == "UnpackingPackage" and inst.message ~= nil and inst.message ~= "" then
    hs.status = "Degraded"
    hs.message = inst.message
    return hs
  end
  if inst.reason == "InactivePackageRevision" then
    hs.status = "Suspended"
    hs.message = "Package revision is inactive"
    return hs
  end
end
if healthy ~= nil and healthy.status == "False" then
  local m = healthy.message or healthy.reason or ""
  if string.find(m, 'health is "Unknown"', 1, true) ~= nil
      or string.find(m, "Package runtime health is", 1, true) ~= nil then
    hs.message = m
    local age = fleet_age(healthy.lastTransitionTime)
    if age ~= nil and age > {RUNTIME_UNHEALTHY_SECONDS} then
      hs.status = "Degraded"
      hs.message = "Not healthy for more than {minutes(RUNTIME_UNHEALTHY_SECONDS)}: " .. m
    end
    return hs
  end
  hs.status = "Degraded"
  hs.message = m
  return hs
end
if inst ~= nil and inst.status == "True" and healthy ~= nil and healthy.status == "True" then
  hs.status = "Healthy"
  hs.message = "Installed and healthy"
  return hs
end
if inst ~= nil and inst.status == "False" then
  hs.message = inst.reason or hs.message
end
return hs
""",
)
"""Health of a ``pkg.crossplane.io/Provider``. crossplane v2.3.4: the package manager sets
``Installed=False`` ``UnpackingPackage`` while it unpacks, with the error as message when
it cannot (``internal/controller/pkg/manager/reconciler.go``); ``Healthy`` comes from
``PackageHealth`` (``apis/pkg/v1/conditions.go``): ``Package revision health is "Unknown"``
before the revision reports, ``Package runtime health is ...`` while the Deployment is not
yet available (``internal/controller/pkg/runtime/runtime_provider.go``), ``Package revision
health is "False" with message: ...`` when the revision fails. The runtime message is the
same while the pod starts and while it crash-loops: Progressing for
:data:`RUNTIME_UNHEALTHY_SECONDS`, then Degraded (a crash-looping provider). Paused:
crossplane-runtime ``ReconcilePaused``. ArgoCD's built-in (argo-cd v3.5.1
``resource_customizations/pkg.crossplane.io/Provider/health.lua``) calls all but Healthy
Degraded, and raises a Lua error when a condition is missing."""

CROSSPLANE = PlatformComponent(
    name="crossplane",
    version="2.3.4",
    install=ChartInstall(
        repo_url="https://charts.crossplane.io/stable",
        chart="crossplane",
        namespace=CROSSPLANE_SYSTEM,
    ),
    owns=frozenset(
        {
            ("pkg.crossplane.io", "Provider"),
            ("pkg.crossplane.io", "DeploymentRuntimeConfig"),
            ("pkg.crossplane.io", "ImageConfig"),
            ("protection.crossplane.io", "Usage"),
            ("protection.crossplane.io", "ClusterUsage"),
        }
    ),
    health_checks=(HealthCheck("pkg.crossplane.io", "Provider", PROVIDER_HEALTH, open_libs=True),),
)
"""Crossplane itself (its chart; every Crossplane provider requires it)."""


def _repository(package: str) -> str:
    """``xpkg.upbound.io/org/provider-x:v1`` -> ``provider-x``."""
    return package.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]


DEFAULT_MAX_RECONCILE_RATE = 10
"""``--max-reconcile-rate`` of a crossplane-contrib provider left alone (provider-openstack
v0.9.0 and provider-argocd v0.14.3 ``cmd/provider/main.go``)."""


def max_reconcile_rate(managed_resources: int, poll_seconds: int) -> int:
    """``--max-reconcile-rate`` for ``managed_resources`` objects polled every
    ``poll_seconds``: twice the steady demand (one reconcile per object per poll), never
    below the default of 10.

    The flag is both the provider's global token bucket (``rate`` per second, bursts of
    ten times that: crossplane-runtime v2.1.0 ``pkg/ratelimiter/default.go`` ``NewGlobal``)
    and each controller's ``MaxConcurrentReconciles`` (provider ``cmd/provider/main.go``).
    Steady demand is ``managed_resources / poll_seconds``: the hourly ``--sync`` resync
    adds none, its unchanged objects are dropped by ``DesiredStateChanged``
    (crossplane-runtime ``pkg/resource/predicates.go``). The other half is headroom for
    creates, updates and error requeues.
    """
    return max(DEFAULT_MAX_RECONCILE_RATE, math.ceil(2 * managed_resources / poll_seconds))


@dataclass(frozen=True, kw_only=True)
class ProviderRuntime:
    """How a provider's Deployment runs in one environment: the arguments of its
    ``package-runtime`` container and its ``resources`` (requests/limits)."""

    args: tuple[str, ...] = ()
    resources: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class CrossplaneProvider(ObjectsInstall):
    """A Crossplane ``Provider`` named ``name`` for ``package`` (without tag) at the
    component's version; with ``runtime_args``, or a ``runtime`` that works them out per
    environment (with resources), a ``DeploymentRuntimeConfig`` of the same name passes
    them to the provider's container."""

    name: str
    package: str
    runtime_args: tuple[str, ...] = ()
    runtime: Callable[[InstallContext], ProviderRuntime] | None = None

    @property
    def installer_kind(self) -> Kind:
        """A Crossplane ``Provider``."""
        return ("pkg.crossplane.io", "Provider")

    def render(self, ctx: InstallContext) -> list[dict[str, Any]]:
        """The Provider (never pruned: its CRDs hold the clusters), and its runtime config."""
        spec: dict[str, Any] = {"package": f"{self.package}:{ctx.version}"}
        out: list[dict[str, Any]] = []
        runtime = self.runtime(ctx) if self.runtime else ProviderRuntime()
        args = (*self.runtime_args, *runtime.args)
        if args or runtime.resources:
            spec["runtimeConfigRef"] = {
                "apiVersion": "pkg.crossplane.io/v1beta1",
                "kind": "DeploymentRuntimeConfig",
                "name": self.name,
            }
            out.append(runtime_config(self.name, args, runtime.resources))
        provider = {
            "apiVersion": "pkg.crossplane.io/v1",
            "kind": "Provider",
            "metadata": {"annotations": sync_options(PROTECT), "name": self.name},
            "spec": spec,
        }
        return [provider, *out]

    def is_installer(self, body: Mapping[str, Any]) -> bool:
        """A ``Provider`` of this package, whatever its name and tag."""
        if body.get("kind") != "Provider" or not str(body.get("apiVersion", "")).startswith(
            "pkg.crossplane.io/"
        ):
            return False
        package = str((body.get("spec") or {}).get("package") or "")
        return _repository(package) == _repository(self.package)


def runtime_config(
    name: str, args: tuple[str, ...], resources: Mapping[str, Mapping[str, str]] | None = None
) -> dict[str, Any]:
    """A ``DeploymentRuntimeConfig`` that passes ``args`` (and ``resources``) to a provider's
    container (``package-runtime``: crossplane v2.3.4 ``internal/controller/pkg/runtime/
    runtime.go``), with one replica: the providers run without ``--leader-election``
    (their default), and a second replica would be a second active controller on the same
    objects (two Creates, two clusters), not a standby."""
    container: dict[str, Any] = {"args": list(args), "name": "package-runtime"}
    if resources:
        container["resources"] = {k: dict(v) for k, v in sorted(resources.items())}
    return {
        "apiVersion": "pkg.crossplane.io/v1beta1",
        "kind": "DeploymentRuntimeConfig",
        "metadata": {"name": name},
        "spec": {
            "deploymentTemplate": {
                "spec": {
                    "replicas": 1,
                    "selector": {},
                    "template": {"spec": {"containers": [container]}},
                }
            }
        },
    }
