"""Bootstrap order: every kind applied in a root wave has its CRD from an earlier wave.

ArgoCD applies the root Application's wave N+1 only once every object of wave N is Healthy
(argo-cd ``gitops-engine/pkg/sync/sync_context.go``). A kind whose CRD is installed by a
component in the same or a later wave fails to apply (``no matches for kind``), and the
bootstrap stops there; that is how cluster-api-operator's chart, which holds cert-manager
``Certificate``/``Issuer`` objects, stopped a bootstrap without cert-manager.

The check reads the rendered objects, and what the fleet's platform components say about
themselves (``Platform.of(fleet).plugins.catalogue``: every component a plug-in of the
fleet's declarations lists, or the fleet added):

* which component owns which CRD (``owns``; a test keeps the pinned ones equal to
  ``crds.lock.yaml``);
* where each component is installed (:func:`installers`): the bootstrap Application of its
  chart or upstream folder, its installing object (a Crossplane ``Provider``, a
  cluster-api-operator provider), or before everything (ArgoCD). An installing object whose
  health ArgoCD only knows from a Lua check counts only with that check in ``argocd-cm``:
  without it the object is Healthy at once, before its CRDs exist;
* the kinds a chart or folder applies besides (``applies``).

Each object's root wave is its own ``sync-wave`` in ``bootstrap/``, else the wave of the
Application that syncs its folder.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleet.checks.problem import Problem
from fleet.core import layout
from fleet.core.manifest import Manifest
from fleet.platform.component import (
    Catalogue,
    ChartInstall,
    DirectoryInstall,
    ObjectsInstall,
    PlatformComponent,
    Preinstalled,
)
from fleet.platform.plugins import PluginSet

HEALTH_KEY = "resource.customizations.health."
BEFORE_EVERYTHING = -(10**9)


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


def _synced_folder(m: Manifest, dist: str) -> str | None:
    """The folder of ``<dist>/<env>/`` an Application syncs (None: none of its
    environment's, or the bootstrap)."""
    path = str(((m.body.get("spec") or {}).get("source") or {}).get("path") or "")
    prefix = layout.environment_path(dist, m.environment, "")
    folder = path.removeprefix(prefix)
    if path.startswith(prefix) and folder and folder != layout.BOOTSTRAP:
        return folder
    return None


def root_waves(manifests: Sequence[Manifest], dist: str = "dist") -> dict[str, int] | None:
    """Folder -> the root wave of the Application that syncs it (``bootstrap`` -> None
    entries are per object); None when the environment has no root Application. ``dist``
    is the fleet's output folder (``[tool.fleet] dist``, one level or more:
    ``deploy/dist``), which every Application's path starts with. A folder an Application
    of another folder syncs (a cluster's workload objects, synced by an Application in the
    cluster's folder) comes in that folder's root wave."""
    apps = [m for m in manifests if m.folder == layout.BOOTSTRAP and m.kind == "Application"]
    if not apps:
        return None
    out: dict[str, int] = {}
    for m in apps:
        folder = _synced_folder(m, dist)
        if folder is not None:
            out[folder] = _wave(m.body)
    for m in manifests:
        if m.kind == "Application" and m.folder in out:
            folder = _synced_folder(m, dist)
            if folder is not None and folder not in out:
                out[folder] = out[m.folder]
    return out


def _health_keys(manifests: Sequence[Manifest]) -> set[str]:
    keys: set[str] = set()
    for m in manifests:
        if m.kind == "ConfigMap" and m.name == "argocd-cm":
            keys.update(k for k in (m.body.get("data") or {}) if k.startswith(HEALTH_KEY))
    return keys


def _source(m: Manifest) -> Mapping[str, Any]:
    source = (m.body.get("spec") or {}).get("source")
    return source if isinstance(source, dict) else {}


def installed_by(m: Manifest, components: Catalogue) -> list[PlatformComponent]:
    """The components that an ``Application`` installs (by its chart or upstream folder)."""
    if m.group != "argoproj.io" or m.kind != "Application":
        return []
    source = _source(m)
    out = []
    for component in components.components:
        install = component.install
        if isinstance(install, ChartInstall):
            if source.get("chart") == install.chart:
                out.append(component)
        elif (
            isinstance(install, DirectoryInstall)
            and source.get("repoURL") == install.repo_url
            and source.get("path") == install.path
        ):
            out.append(component)
    return out


def installers(
    manifests: Sequence[Manifest], waves: Mapping[str, int], components: Catalogue
) -> dict[str, Installer]:
    """Component -> where it is installed in this environment (earliest wave wins)."""
    health = _health_keys(manifests)
    out: dict[str, Installer] = {}
    by_kind: dict[tuple[str, str], list[tuple[PlatformComponent, ObjectsInstall]]] = {}
    for component in components.components:
        install = component.install
        if isinstance(install, Preinstalled):
            out[component.name] = Installer(component.name, None, BEFORE_EVERYTHING)
        elif isinstance(install, ObjectsInstall):
            by_kind.setdefault(install.installer_kind, []).append((component, install))

    def add(component: str, m: Manifest) -> None:
        wave = wave_of(m, waves)
        if wave is None:
            return
        if component not in out or wave < out[component].wave:
            out[component] = Installer(component, m, wave)

    for m in manifests:
        for component in installed_by(m, components):
            add(component.name, m)
        for component, install in by_kind.get((m.group, m.kind), ()):
            # Without a health check the object is "Healthy" the moment it exists, long
            # before the component has installed its CRDs: it orders nothing.
            if install.is_installer(m.body) and (
                not install.health_checked or f"{HEALTH_KEY}{m.group}_{m.kind}" in health
            ):
                add(component.name, m)
    return out


def wave_of(m: Manifest, waves: Mapping[str, int]) -> int | None:
    """The root wave ``m`` is applied in; None when no Application syncs its folder."""
    if m.folder == layout.BOOTSTRAP:
        return _wave(m.body)
    return waves.get(m.folder)


def _uses(m: Manifest, components: Catalogue) -> Iterator[tuple[str, str, str]]:
    """(group, kind, how) of every custom kind applying ``m`` needs."""
    yield (m.group, m.kind, "")
    for component in installed_by(m, components):
        install = component.install
        how = (
            f"its chart {install.chart} applies "
            if isinstance(install, ChartInstall)
            else f"its folder {component.name} applies "
        )
        for group, kind in sorted(component.applies):
            yield (group, kind, how)


def check_waves(
    manifests: Sequence[Manifest], plugins: PluginSet, dist: str = "dist"
) -> list[Problem]:
    """A Problem for every object whose kind's CRD is not installed in an earlier root wave
    (or not at all), and for every folder no Application syncs, per environment; which
    component owns a kind is what the fleet's ``plugins`` say."""
    by_env: dict[str, list[Manifest]] = {}
    for m in manifests:
        by_env.setdefault(m.environment, []).append(m)
    problems: list[Problem] = []
    components = plugins.catalogue
    for items in by_env.values():
        waves = root_waves(items, dist)
        if waves is None:
            continue  # no bootstrap in this environment: nothing is ordered
        found = installers(items, waves, components)
        for m in items:
            wave = wave_of(m, waves)
            if wave is None:
                problems.append(
                    Problem.of(
                        m,
                        "",
                        f"no Application syncs folder {m.folder}/ ({dist}/{m.environment}/"
                        f"{m.folder}): ArgoCD would never apply it",
                    )
                )
                continue
            for group, kind, how in _uses(m, components):
                owner = components.owner(group, kind)
                if owner is None:
                    continue
                component = owner.name
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
