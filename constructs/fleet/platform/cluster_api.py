"""Cluster API, as several clouds require it: cluster-api-operator, the Cluster API core, the
kubeadm bootstrap and control-plane providers, and the install of an infrastructure provider.

Cluster API is installed with the cluster-api-operator Helm chart plus ``CoreProvider`` and
``InfrastructureProvider`` objects, because those are plain declarative objects that ArgoCD
can sync, diff and health-check (Lua in ``argocd-cm``: ArgoCD has none for them);
``clusterctl init`` is imperative and the upstream ``core-components`` YAML needs variable
substitution that ArgoCD's directory source cannot do. The operator resolves a provider's
name the way clusterctl does (kubernetes-sigs/cluster-api v1.12.11
``cmd/clusterctl/client/config/providers_client.go``: ``cluster-api``, ``oci``,
``openstack``, ...).

Pinned: cluster-api-operator 0.28.0 (chart), Cluster API v1.12.11 (the release the pinned
``cluster-api/`` CRDs come from; the kubeadm providers are released with it, their CRDs
pinned under ``cluster-api-kubeadm-bootstrap/`` and ``cluster-api-kubeadm-control-plane/``).

The kubeadm providers, on these pieces, are :mod:`fleet.platform.kubeadm`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fleet.core.layout import PROTECT, sync_options
from fleet.core.manifest import Manifest
from fleet.platform.capi_health import CLUSTER_HEALTH
from fleet.platform.cert_manager import CERT_MANAGER
from fleet.platform.component import (
    ChartInstall,
    HealthCheck,
    InstallContext,
    Kind,
    ObjectsInstall,
    PlatformComponent,
)
from fleet.platform.references import FieldRef, ReferenceRules, SecretProducer

OPERATOR_GROUP = "operator.cluster.x-k8s.io"
OPERATOR_API = f"{OPERATOR_GROUP}/v1alpha2"
CAPI_GROUP = "cluster.x-k8s.io"
INFRASTRUCTURE_GROUP = "infrastructure.cluster.x-k8s.io"
"""The group every infrastructure provider serves its kinds in."""
BOOTSTRAP_GROUP = "bootstrap.cluster.x-k8s.io"
"""The group every bootstrap provider serves its kinds in (kubeadm's ``KubeadmConfig``)."""
CONTROLPLANE_GROUP = "controlplane.cluster.x-k8s.io"
"""The group every control-plane provider serves its kinds in (``KubeadmControlPlane``)."""

OPERATOR_PROVIDER_HEALTH = """\
-- cluster-api-operator provider (v1alpha2): Healthy once installed at spec.version and its
-- Deployment is Available (condition Ready, set by the operator's health check controller).
local hs = {status = "Progressing", message = "Waiting for cluster-api-operator"}
if obj.status == nil then
  return hs
end
if obj.metadata ~= nil and obj.metadata.generation ~= nil
    and obj.status.observedGeneration ~= nil
    and obj.status.observedGeneration < obj.metadata.generation then
  hs.message = "Waiting for the operator to observe the new generation"
  return hs
end
local cond = {}
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    cond[c.type] = c
  end
end
local pre = cond["PreflightCheckPassed"]
if pre ~= nil and pre.status == "False" then
  if pre.reason == "WaitingForCoreProviderReady" then
    hs.message = pre.message or pre.reason
    return hs
  end
  hs.status = "Degraded"
  hs.message = (pre.reason or "") .. ": " .. (pre.message or "")
  return hs
end
local inst = cond["ProviderInstalled"]
if inst ~= nil and inst.status == "False" then
  hs.status = "Degraded"
  hs.message = (inst.reason or "") .. ": " .. (inst.message or "")
  return hs
end
if inst == nil or inst.status ~= "True" then
  hs.message = "Installing"
  return hs
end
if obj.spec ~= nil and obj.spec.version ~= nil
    and obj.status.installedVersion ~= obj.spec.version then
  hs.message = "Upgrading to " .. obj.spec.version
  return hs
end
local ready = cond["Ready"]
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = "Installed " .. (obj.status.installedVersion or "")
  return hs
end
if ready ~= nil then
  hs.message = ready.message or ready.reason or "Deployment not available"
end
return hs
"""
"""cluster-api-operator ``api/v1alpha2/conditions_consts.go`` and
``internal/controller/healthcheck/healthcheck_controller.go`` (v0.28.0)."""

_READY_HEALTH_BODY = """\
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


def ready_health(comment: str) -> str:
    """Lua health of an infrastructure provider's object under the Cluster API v1beta1
    contract (``status.ready``, ``status.failureReason``, condition ``Ready``), headed by
    a one-line Lua ``comment``. ArgoCD has no health check for any
    ``infrastructure.cluster.x-k8s.io`` kind (argo-cd v3.5.1 ``resource_customizations/``
    holds only ``cluster.x-k8s.io``, ``controlplane.`` and ``addons.``)."""
    return f"-- {comment}\n{_READY_HEALTH_BODY}"


def ready_health_checks(comment: str, *kinds: str) -> tuple[HealthCheck, ...]:
    """:func:`ready_health` for each of ``kinds`` of the infrastructure group."""
    lua = ready_health(comment)
    return tuple(HealthCheck(INFRASTRUCTURE_GROUP, kind, lua) for kind in kinds)


CLUSTER_API_OPERATOR = PlatformComponent(
    name="cluster-api-operator",
    version="0.28.0",
    install=ChartInstall(
        repo_url="https://kubernetes-sigs.github.io/cluster-api-operator",
        chart="cluster-api-operator",
        namespace="capi-operator-system",
        # Re-read a provider's configSecret when it changes (cluster-api-operator
        # hack/charts/cluster-api-operator/values.yaml).
        values={"watchConfigSecret": True},
        # Its webhook's serving certificate (cluster-api-operator config/certmanager,
        # rendered into the chart's templates/operator-components.yaml).
        applies=frozenset({("cert-manager.io", "Certificate"), ("cert-manager.io", "Issuer")}),
    ),
    # No cert-manager dependency in the chart since v0.11.0 (hack/charts/
    # cluster-api-operator/Chart.yaml): it must be installed before.
    requires=(CERT_MANAGER,),
    owns=frozenset(
        (OPERATOR_GROUP, kind)
        for kind in (
            "CoreProvider",
            "InfrastructureProvider",
            "BootstrapProvider",
            "ControlPlaneProvider",
            "AddonProvider",
        )
    ),
    # ArgoCD has no health check for the operator's providers (argo-cd
    # resource_customizations/ holds no operator.cluster.x-k8s.io).
    health_checks=tuple(
        HealthCheck(OPERATOR_GROUP, kind, OPERATOR_PROVIDER_HEALTH)
        for kind in ("CoreProvider", "InfrastructureProvider")
    ),
)
"""cluster-api-operator (its chart): installs Cluster API providers from their objects."""


@dataclass(frozen=True, kw_only=True)
class ProviderOptions:
    """How one environment configures an operator provider: ``config_secret`` (name,
    namespace) holds clusterctl variables; ``manager_args`` replace flags of the provider's
    ``manager`` container (the operator's ``setArgs`` overwrites a flag already in the
    components: cluster-api-operator ``internal/controller/component_customizer.go``
    ``customizeContainer``)."""

    config_secret: tuple[str, str] | None = None
    manager_args: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class OperatorProvider(ObjectsInstall):
    """A cluster-api-operator provider object (``CoreProvider``, ``InfrastructureProvider``)
    named ``provider`` in ``namespace``, at the component's version.

    Feature gates: the core provider gets every installed component's, another provider
    its own component's. ``options`` works out :class:`ProviderOptions` per environment.
    """

    kind: str
    provider: str
    namespace: str
    options: Callable[[InstallContext], ProviderOptions] | None = None
    health_checked: bool = True

    @property
    def installer_kind(self) -> Kind:
        """The operator's ``kind``."""
        return (OPERATOR_GROUP, self.kind)

    def render(self, ctx: InstallContext) -> list[dict[str, Any]]:
        """The provider's namespace (unless the bootstrap creates it early) and object."""
        options = self.options(ctx) if self.options else ProviderOptions()
        gates = (
            ctx.feature_gates()
            if self.kind == "CoreProvider"
            else dict(sorted(ctx.component.feature_gates.items()))
        )
        spec: dict[str, Any] = {"version": ctx.version}
        if gates:
            spec["manager"] = {"featureGates": gates}
        if options.manager_args:
            spec["deployment"] = {
                "containers": [
                    {"args": dict(sorted(options.manager_args.items())), "name": "manager"}
                ]
            }
        if options.config_secret is not None:
            secret, secret_namespace = options.config_secret
            spec["configSecret"] = {"name": secret, "namespace": secret_namespace}
        provider = {
            "apiVersion": OPERATOR_API,
            "kind": self.kind,
            "metadata": {
                "annotations": sync_options(PROTECT),
                "name": self.provider,
                "namespace": self.namespace,
            },
            "spec": spec,
        }
        if self.namespace in ctx.early_namespaces:
            return [provider]
        return [provider_namespace(self.namespace), provider]

    def is_installer(self, body: Mapping[str, Any]) -> bool:
        """The operator's ``kind`` object named ``provider``."""
        return (
            str(body.get("apiVersion", "")).startswith(f"{OPERATOR_GROUP}/")
            and body.get("kind") == self.kind
            and (body.get("metadata") or {}).get("name") == self.provider
        )


def provider_namespace(name: str) -> dict[str, Any]:
    """A Namespace that is never pruned (it holds a provider's controller)."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"annotations": sync_options(PROTECT), "name": name},
    }


def _kubeconfig(m: Manifest) -> tuple[str, str, frozenset[str] | None]:
    """Cluster API writes a workload cluster's kubeconfig to ``<cluster>-kubeconfig``, key
    ``value`` (cluster-api ``util/secret``)."""
    return (m.namespace, f"{m.name}-kubeconfig", frozenset({"value"}))


CLUSTER_API_REFERENCES = ReferenceRules(
    field_refs=tuple(
        FieldRef(
            CAPI_GROUP,
            kind,
            (("spec", "clusterName"), ("spec", "template", "spec", "clusterName")),
            CAPI_GROUP,
            "Cluster",
            (("metadata", "name"),),
            same_namespace=True,
        )
        for kind in ("MachinePool", "MachineDeployment")
    ),
    object_refs={
        (CAPI_GROUP, "Cluster"): (
            ("spec", "infrastructureRef"),
            ("spec", "controlPlaneRef"),
        ),
        **{
            (CAPI_GROUP, kind): (
                ("spec", "template", "spec", "infrastructureRef"),
                ("spec", "template", "spec", "bootstrap", "configRef"),
            )
            for kind in ("MachinePool", "MachineDeployment")
        },
    },
    secret_producers=(SecretProducer(CAPI_GROUP, "Cluster", _kubeconfig),),
    # Cluster API puts the cluster name in the cluster.x-k8s.io/cluster-name label.
    label_named_kinds=frozenset({(CAPI_GROUP, "Cluster")}),
)
"""What the Cluster API core's kinds refer to: every cloud built on Cluster API gets them."""

CLUSTER_API = PlatformComponent(
    name="cluster-api",
    version="v1.12.11",
    install=OperatorProvider(kind="CoreProvider", provider="cluster-api", namespace="capi-system"),
    requires=(CLUSTER_API_OPERATOR,),
    owns=frozenset(
        {
            (CAPI_GROUP, "Cluster"),
            (CAPI_GROUP, "MachinePool"),
            (CAPI_GROUP, "MachineDeployment"),
            (CAPI_GROUP, "ClusterClass"),
        }
    ),
    references=CLUSTER_API_REFERENCES,
    health_checks=(HealthCheck(CAPI_GROUP, "Cluster", CLUSTER_HEALTH, open_libs=True),),
)
"""The Cluster API core (a ``CoreProvider``). ``Cluster`` health is
:data:`fleet.platform.capi_health.CLUSTER_HEALTH`; ArgoCD's built-in ``MachinePool`` and
``MachineDeployment`` checks stay (argo-cd v3.5.1 ``resource_customizations/cluster.x-k8s.io/``:
``Running`` is Healthy, ``Failed`` Degraded, ``spec.paused`` Suspended)."""


def operator_health(kind: str) -> HealthCheck:
    """:data:`OPERATOR_PROVIDER_HEALTH` for one cluster-api-operator provider kind: the
    operator runs one generic reconciler and health check for every provider kind
    (cluster-api-operator v0.28.0 ``cmd/main.go``,
    ``internal/controller/healthcheck/healthcheck_controller.go``: Core, Infrastructure,
    Bootstrap and ControlPlane providers). Carried by the component that a provider of that
    kind installs, so that ``argocd-cm`` holds it exactly where one is installed."""
    return HealthCheck(OPERATOR_GROUP, kind, OPERATOR_PROVIDER_HEALTH)


def infrastructure_provider(
    *,
    name: str,
    provider: str,
    version: str,
    namespace: str,
    owns: frozenset[Kind],
    health_checks: tuple[HealthCheck, ...] = (),
    feature_gates: Mapping[str, bool] | None = None,
    options: Callable[[InstallContext], ProviderOptions] | None = None,
    requires: tuple[PlatformComponent, ...] = (),
    crds_pinned: bool = True,
    crds: Path | None = None,
) -> PlatformComponent:
    """A Cluster API infrastructure provider as a component: an ``InfrastructureProvider``
    named ``provider`` (clusterctl's name for it) in ``namespace``, requiring the Cluster API
    core (and ``requires``). It owns its kinds, not its group, which every infrastructure
    provider shares. ``crds``: a plug-in's pinned CRD folder
    (:attr:`~fleet.platform.component.PlatformComponent.crds`)."""
    return PlatformComponent(
        name=name,
        version=version,
        install=OperatorProvider(
            kind="InfrastructureProvider", provider=provider, namespace=namespace, options=options
        ),
        requires=(CLUSTER_API, *requires),
        owns=owns,
        owns_groups=False,
        crds_pinned=crds_pinned,
        health_checks=health_checks,
        feature_gates=dict(feature_gates or {}),
        crds=crds,
    )
