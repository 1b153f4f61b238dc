"""Bootstrap order: every kind applied in a root wave has its CRD from an earlier wave.

ArgoCD applies the root Application's wave N+1 only once every object of wave N is Healthy
(argo-cd ``gitops-engine/pkg/sync/sync_context.go``). A kind whose CRD is installed by a
component in the same or a later wave fails to apply (``no matches for kind``), and the
bootstrap stops there; that is how cluster-api-operator's chart, which holds cert-manager
``Certificate``/``Issuer`` objects, stopped a bootstrap without cert-manager.

The check reads the rendered objects only:

* :data:`INSTALLS` says which component installs which CRDs: the pinned CRDs of
  ``crds.lock.yaml`` (grouped by the component folder they are pinned under; a test keeps
  the table equal to the lock) plus the CRDs of cert-manager, which are not pinned
  (cert-manager ``deploy/charts/cert-manager/templates/crd-*.yaml``).
* :func:`installers` finds where each component is installed: a Helm chart Application
  (by chart name), a Crossplane ``Provider`` (by package), a cluster-api-operator provider
  (by kind and name). An installer counts only if ArgoCD can tell when it is done: a
  cluster-api-operator provider without a health check in ``argocd-cm`` is Healthy at once,
  before its CRDs exist.
* Each object's root wave is its own ``sync-wave`` in ``bootstrap/``, else the wave of the
  Application that syncs its folder. :data:`CHART_KINDS` adds the kinds a chart applies.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleet.checks.problem import Problem
from fleet.core import layout
from fleet.core.manifest import Manifest

ARGO_CD = "argo-cd"
"""ArgoCD itself: installed before the bootstrap (its CRDs are there from the start)."""

INSTALLS: Mapping[str, frozenset[tuple[str, str]]] = {
    ARGO_CD: frozenset(
        {("argoproj.io", "Application"), ("argoproj.io", "AppProject")}
        | {("argoproj.io", "ApplicationSet")}
    ),
    "crossplane": frozenset(
        {
            ("pkg.crossplane.io", "Provider"),
            ("pkg.crossplane.io", "DeploymentRuntimeConfig"),
            ("pkg.crossplane.io", "ImageConfig"),
            ("protection.crossplane.io", "Usage"),
            ("protection.crossplane.io", "ClusterUsage"),
        }
    ),
    "cert-manager": frozenset(
        {
            ("cert-manager.io", "Certificate"),
            ("cert-manager.io", "CertificateRequest"),
            ("cert-manager.io", "Issuer"),
            ("cert-manager.io", "ClusterIssuer"),
            ("acme.cert-manager.io", "Order"),
            ("acme.cert-manager.io", "Challenge"),
        }
    ),
    "external-secrets": frozenset(
        {
            ("external-secrets.io", "ExternalSecret"),
            ("external-secrets.io", "PushSecret"),
            ("external-secrets.io", "SecretStore"),
            ("external-secrets.io", "ClusterSecretStore"),
        }
    ),
    "cluster-api-operator": frozenset(
        ("operator.cluster.x-k8s.io", kind)
        for kind in (
            "CoreProvider",
            "InfrastructureProvider",
            "BootstrapProvider",
            "ControlPlaneProvider",
            "AddonProvider",
        )
    ),
    "provider-openstack": frozenset(
        {
            *(
                (group, kind)
                for group in (
                    "containerinfra.openstack.crossplane.io",
                    "containerinfra.openstack.m.crossplane.io",
                )
                for kind in ("ClusterV1", "NodegroupV1", "ClustertemplateV1")
            ),
            ("openstack.crossplane.io", "ProviderConfig"),
            ("openstack.m.crossplane.io", "ProviderConfig"),
            ("openstack.m.crossplane.io", "ClusterProviderConfig"),
        }
    ),
    "provider-argocd": frozenset(
        {
            ("cluster.argocd.crossplane.io", "Cluster"),
            ("cluster.m.argocd.crossplane.io", "Cluster"),
            ("argocd.crossplane.io", "ProviderConfig"),
            ("m.argocd.crossplane.io", "ProviderConfig"),
            ("projects.argocd.crossplane.io", "Project"),
            ("projects.m.argocd.crossplane.io", "Project"),
            ("applications.argocd.crossplane.io", "Application"),
            ("applications.m.argocd.crossplane.io", "Application"),
        }
    ),
    "cluster-api": frozenset(
        {
            ("cluster.x-k8s.io", "Cluster"),
            ("cluster.x-k8s.io", "MachinePool"),
            ("cluster.x-k8s.io", "ClusterClass"),
        }
    ),
    "cluster-api-provider-oci": frozenset(
        ("infrastructure.cluster.x-k8s.io", kind)
        for kind in (
            "OCIManagedCluster",
            "OCIManagedControlPlane",
            "OCIManagedMachinePool",
            "OCIClusterIdentity",
        )
    ),
}
"""Component -> the (group, kind) of the CRDs it installs."""

NOT_PINNED = frozenset({"cert-manager"})
"""Components of :data:`INSTALLS` whose CRDs ``crds.lock.yaml`` does not pin."""

CHART_KINDS: Mapping[str, frozenset[tuple[str, str]]] = {
    # Its webhook's serving certificate (cluster-api-operator config/certmanager,
    # rendered into the chart's templates/operator-components.yaml).
    "cluster-api-operator": frozenset(
        {("cert-manager.io", "Certificate"), ("cert-manager.io", "Issuer")}
    ),
}
"""Chart -> custom kinds the chart's own templates apply (their CRDs must already exist)."""

CHARTS: Mapping[str, str] = {
    "crossplane": "crossplane",
    "cert-manager": "cert-manager",
    "external-secrets": "external-secrets",
    "cluster-api-operator": "cluster-api-operator",
}
"""Helm chart name -> the component it installs."""

PROVIDER_PACKAGES: Mapping[str, str] = {
    "provider-openstack": "provider-openstack",
    "provider-argocd": "provider-argocd",
}
"""Crossplane package repository name -> the component it installs."""

OPERATOR_PROVIDERS: Mapping[tuple[str, str], str] = {
    ("CoreProvider", "cluster-api"): "cluster-api",
    ("InfrastructureProvider", "oci"): "cluster-api-provider-oci",
}
"""cluster-api-operator (kind, name) -> the component it installs."""

OPERATOR_GROUP = "operator.cluster.x-k8s.io"
HEALTH_KEY = "resource.customizations.health."
BEFORE_EVERYTHING = -(10**9)


_BY_KIND: dict[tuple[str, str], str] = {k: c for c, kinds in INSTALLS.items() for k in kinds}
_BY_GROUP: dict[str, str] = {}
for _component, _kinds in INSTALLS.items():
    for _group, _ in sorted(_kinds):
        _BY_GROUP.setdefault(_group, _component)
# Every Cluster API infrastructure provider serves this group: another provider's kind in it
# is not CAPOCI's.
_BY_GROUP.pop("infrastructure.cluster.x-k8s.io", None)


def component_of(group: str, kind: str) -> str | None:
    """The component whose CRD defines ``group``/``kind``; else the one that installs the
    group's other CRDs; None for a kind no known component installs (built-in or foreign)."""
    return _BY_KIND.get((group, kind)) or _BY_GROUP.get(group)


@dataclass(frozen=True)
class Installer:
    """Where a component is installed: the object, and the root wave it is done after."""

    component: str
    manifest: Manifest | None
    wave: int


def _wave(body: Mapping[str, Any]) -> int:
    annotations = (body.get("metadata") or {}).get("annotations") or {}
    try:
        return int(annotations.get(layout.SYNC_WAVE, "0"))
    except (TypeError, ValueError):
        return 0


def root_waves(manifests: Sequence[Manifest]) -> dict[str, int] | None:
    """Folder -> the root wave of the Application that syncs it (``bootstrap`` -> None
    entries are per object); None when the environment has no root Application."""
    apps = [m for m in manifests if m.folder == layout.BOOTSTRAP and m.kind == "Application"]
    if not apps:
        return None
    out: dict[str, int] = {}
    for m in apps:
        path = str(((m.body.get("spec") or {}).get("source") or {}).get("path") or "")
        parts = path.split("/", 2)
        if len(parts) == 3 and parts[1] == m.environment and parts[2] != layout.BOOTSTRAP:
            out[parts[2]] = _wave(m.body)
    return out


def _health_keys(manifests: Sequence[Manifest]) -> set[str]:
    keys: set[str] = set()
    for m in manifests:
        if m.kind == "ConfigMap" and m.name == "argocd-cm":
            keys.update(k for k in (m.body.get("data") or {}) if k.startswith(HEALTH_KEY))
    return keys


def installers(manifests: Sequence[Manifest], waves: Mapping[str, int]) -> dict[str, Installer]:
    """Component -> where it is installed in this environment (earliest wave wins)."""
    health = _health_keys(manifests)
    out: dict[str, Installer] = {ARGO_CD: Installer(ARGO_CD, None, BEFORE_EVERYTHING)}

    def add(component: str, m: Manifest) -> None:
        wave = wave_of(m, waves)
        if wave is None:
            return
        if component not in out or wave < out[component].wave:
            out[component] = Installer(component, m, wave)

    for m in manifests:
        spec = m.body.get("spec") or {}
        if m.group == "argoproj.io" and m.kind == "Application":
            chart = str((spec.get("source") or {}).get("chart") or "")
            if chart in CHARTS:
                add(CHARTS[chart], m)
        elif m.group == "pkg.crossplane.io" and m.kind == "Provider":
            package = str(spec.get("package") or "")
            repository = package.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
            if repository in PROVIDER_PACKAGES:
                add(PROVIDER_PACKAGES[repository], m)
        elif (
            m.group == OPERATOR_GROUP
            and (m.kind, m.name) in OPERATOR_PROVIDERS
            # Without a health check the provider is "Healthy" the moment it exists, long
            # before the operator has installed its CRDs: it orders nothing.
            and f"{HEALTH_KEY}{m.group}_{m.kind}" in health
        ):
            add(OPERATOR_PROVIDERS[(m.kind, m.name)], m)
    return out


def wave_of(m: Manifest, waves: Mapping[str, int]) -> int | None:
    """The root wave ``m`` is applied in; None when no Application syncs its folder."""
    if m.folder == layout.BOOTSTRAP:
        return _wave(m.body)
    return waves.get(m.folder)


def _uses(m: Manifest) -> Iterator[tuple[str, str, str]]:
    """(group, kind, how) of every custom kind applying ``m`` needs."""
    yield (m.group, m.kind, "")
    if m.group == "argoproj.io" and m.kind == "Application":
        chart = str(((m.body.get("spec") or {}).get("source") or {}).get("chart") or "")
        for group, kind in sorted(CHART_KINDS.get(chart, ())):
            yield (group, kind, f"its chart {chart} applies ")


def check_waves(manifests: Sequence[Manifest]) -> list[Problem]:
    """A Problem for every object whose kind's CRD is not installed in an earlier root wave
    (or not at all), and for every folder no Application syncs, per environment."""
    by_env: dict[str, list[Manifest]] = {}
    for m in manifests:
        by_env.setdefault(m.environment, []).append(m)
    problems: list[Problem] = []
    for items in by_env.values():
        waves = root_waves(items)
        if waves is None:
            continue  # no bootstrap in this environment: nothing is ordered
        found = installers(items, waves)
        for m in items:
            wave = wave_of(m, waves)
            if wave is None:
                problems.append(
                    Problem.of(
                        m,
                        "",
                        f"no Application syncs folder {m.folder}/ (dist/{m.environment}/"
                        f"{m.folder}): ArgoCD would never apply it",
                    )
                )
                continue
            for group, kind, how in _uses(m):
                component = component_of(group, kind)
                if component is None:
                    continue
                installer = found.get(component)
                if installer is None:
                    problems.append(
                        Problem.of(
                            m,
                            "kind",
                            f"{how}{group}/{kind}, whose CRD comes from {component}, which "
                            "this environment does not install",
                        )
                    )
                elif installer.wave >= wave and installer.manifest is not m:
                    assert installer.manifest is not None
                    problems.append(
                        Problem.of(
                            m,
                            "kind",
                            f"{how}{group}/{kind} in root sync wave {wave}, but its CRD "
                            f"comes from {component} ({installer.manifest.describe()}), which "
                            f"is installed in wave {installer.wave}: install it in an "
                            "earlier wave",
                        )
                    )
    return problems
