"""A platform component is a value: its name, what it requires, how it is installed (and so
the objects that install it, rendered from the version it pins), the CRD kinds it owns, its
ArgoCD health checks and what else the bootstrap needs to know about it.

Who uses them: the bootstrap (:mod:`fleet.argocd`) installs the components an environment's
declarations ask for, with everything they require, each in its root sync wave; the wave
check (:mod:`fleet.checks.waves`) reads which component owns which CRD and which object
installs it from the same values. Nothing else keeps a table of components.

Where they live: the shared ones (Crossplane, cert-manager, cluster-api-operator, Cluster API
core) in :mod:`fleet.platform`, a cloud's own in its package under :mod:`fleet.clouds` (listed
by the cloud's plug-in), ArgoCD's own and the ones its registrations use (provider-argocd,
External Secrets) in :mod:`fleet.argocd.components`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.core.errors import FleetError
from fleet.platform.references import ReferenceRules

if TYPE_CHECKING:
    from fleet.core.fleet import Fleet

Kind = tuple[str, str]
"""(API group, kind) of a custom resource."""


@dataclass(frozen=True)
class HealthCheck:
    """An ArgoCD Lua health check for ``group``/``kind`` (an ``argocd-cm`` key).

    ``open_libs``: the script needs Lua's standard libraries (``string``, ``math``), which
    ArgoCD opens for an ``argocd-cm`` check only with its ``useOpenLibs`` key (argo-cd
    v3.5.1 ``util/lua/lua.go``: ``SkipOpenLibs: !UseOpenLibs``, then only package, base,
    table and a safe ``os``)."""

    group: str
    kind: str
    lua: str
    open_libs: bool = False


@dataclass(frozen=True, kw_only=True, eq=False)
class InstallContext:
    """What a component's install sees when the bootstrap renders it in one environment."""

    fleet: Fleet
    environment: str
    component: PlatformComponent
    version: str
    """The version to install: the component's pinned one unless the ArgoCd overrides it."""
    installed: tuple[PlatformComponent, ...]
    """Every component the environment installs (this one included)."""
    early_namespaces: frozenset[str]
    """Namespaces the bootstrap already creates in its first wave (a person's Secrets go
    there): an install renders its namespace only when it is not one of them."""

    def feature_gates(self) -> dict[str, bool]:
        """The union of every installed component's :attr:`PlatformComponent.feature_gates`."""
        gates: dict[str, bool] = {}
        for component in self.installed:
            gates.update(component.feature_gates)
        return dict(sorted(gates.items()))


@dataclass(frozen=True)
class Preinstalled:
    """Installed before the bootstrap runs (ArgoCD itself): nothing to render."""


@dataclass(frozen=True, kw_only=True)
class ChartInstall:
    """An upstream Helm chart at the component's version, synced by a bootstrap Application
    (``<prefix>-<component name>``) in the component's root wave, into ``namespace``."""

    repo_url: str
    chart: str
    namespace: str
    values: Mapping[str, Any] = field(default_factory=dict)
    applies: frozenset[Kind] = frozenset()
    """Custom kinds the chart's own templates apply: their CRDs must exist before it syncs."""


@dataclass(frozen=True, kw_only=True)
class DirectoryInstall:
    """A folder of plain manifests in an upstream git repository, at the component's version
    (a tag), synced by a bootstrap Application like a chart."""

    repo_url: str
    path: str
    namespace: str
    applies: frozenset[Kind] = frozenset()
    """Custom kinds the folder's manifests apply: their CRDs must exist before it syncs."""


ApplicationInstall = ChartInstall | DirectoryInstall
"""Installs that are a bootstrap Application of their own, in the component's root wave."""


class ObjectsInstall(ABC):
    """Objects the fleet renders into ``dist/<env>/providers/`` (a Crossplane ``Provider``, a
    cluster-api-operator provider), which the providers Application syncs."""

    health_checked: bool = False
    """Whether the installing object orders anything only with a Lua health check of its kind
    in ``argocd-cm`` (ArgoCD has no built-in one, as for cluster-api-operator's providers):
    without it the object is Healthy the moment it exists, long before the component has
    installed its CRDs, and the wave check ignores it. False where ArgoCD's built-in check
    already waits for the component (a Crossplane ``Provider``: argo-cd v3.5.1
    ``resource_customizations/pkg.crossplane.io/Provider/health.lua``)."""

    @property
    @abstractmethod
    def installer_kind(self) -> Kind:
        """(group, kind) of the installing object."""

    @abstractmethod
    def render(self, ctx: InstallContext) -> list[dict[str, Any]]:
        """The objects that install ``ctx.component`` (its namespace included, unless early)."""

    @abstractmethod
    def is_installer(self, body: Mapping[str, Any]) -> bool:
        """Whether a rendered object is the one that installs this component."""


Install = Preinstalled | ChartInstall | DirectoryInstall | ObjectsInstall


@dataclass(frozen=True, kw_only=True, eq=False)
class PlatformComponent:
    """A piece of the platform the bootstrap installs into an environment's management cluster.

    ``requires`` are the components it cannot run without (installed with it, whichever
    declaration asked); ``owns`` the (group, kind) of the CRDs it installs; ``owns_groups``
    whether those groups are its own (a kind of one of them that ``owns`` does not list is
    still its), False for a Cluster API infrastructure provider, whose group every such
    provider serves. ``crds_pinned``: ``crds.lock.yaml`` pins its CRDs (cert-manager's are
    not). ``health_checks``: Lua for the kinds it owns that ArgoCD has no built-in health
    for. ``feature_gates``: Cluster API feature gates it needs, turned on in the Cluster API
    core and in its own manager. ``wave``: its root sync wave when installed by a bootstrap
    Application; left out, one after the latest of what it requires and of the owners of
    the kinds its install applies. ``references``: the reference rules of the kinds it owns
    (every cloud that requires it gets them, once). ``crds``: a plug-in's own pinned CRDs,
    a ``crds/`` folder beside a ``crds.lock.yaml`` (the tool's format: upstream URL,
    release and sha256 of each file, vendored gzipped as ``<path>.gz``); the schema check
    of every fleet that installs the component validates against them too, after checking
    each file's sha256 against the lock (:func:`fleet.checks.crds.plugin_crds`).
    """

    name: str
    install: Install
    version: str = ""
    requires: tuple[PlatformComponent, ...] = ()
    owns: frozenset[Kind] = frozenset()
    owns_groups: bool = True
    crds_pinned: bool = True
    health_checks: tuple[HealthCheck, ...] = ()
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    wave: int | None = None
    references: ReferenceRules = field(default_factory=ReferenceRules)
    crds: Path | None = None

    def __repr__(self) -> str:
        return f"PlatformComponent({self.name!r})"

    @property
    def applies(self) -> frozenset[Kind]:
        """Custom kinds its install applies besides the installing object itself."""
        if isinstance(self.install, ApplicationInstall):
            return self.install.applies
        return frozenset()


def with_requirements(components: Iterable[PlatformComponent]) -> tuple[PlatformComponent, ...]:
    """``components`` and everything they require, transitively, once each, by name.

    Two different components with one name are an error (a cloud that copies a shared
    component instead of requiring it).
    """
    found: dict[str, PlatformComponent] = {}
    pending = list(components)
    while pending:
        component = pending.pop()
        known = found.get(component.name)
        if known is None:
            found[component.name] = component
            pending.extend(component.requires)
        elif known is not component:
            raise FleetError(
                f"two different platform components are named {component.name!r}: require "
                "the shared one instead of defining it again"
            )
    return tuple(found[name] for name in sorted(found))


class Catalogue:
    """Every known component, and which one owns a CRD kind."""

    def __init__(self, components: Iterable[PlatformComponent]) -> None:
        self.components = with_requirements(components)
        self._by_kind: dict[Kind, PlatformComponent] = {}
        groups: dict[str, set[str]] = {}
        for component in self.components:
            for kind in sorted(component.owns):
                other = self._by_kind.get(kind)
                if other is not None:
                    raise FleetError(
                        f"{kind[0]}/{kind[1]} is owned by two platform components: "
                        f"{other.name} and {component.name}"
                    )
                self._by_kind[kind] = component
                groups.setdefault(kind[0], set()).add(component.name)
        by_name = {c.name: c for c in self.components}
        self._by_group = {
            group: by_name[next(iter(names))]
            for group, names in groups.items()
            if len(names) == 1 and by_name[next(iter(names))].owns_groups
        }

    def owner(self, group: str, kind: str) -> PlatformComponent | None:
        """The component whose CRD defines ``group``/``kind``; else the one whose group it
        is; None for a kind no known component installs (built-in or foreign)."""
        return self._by_kind.get((group, kind)) or self._by_group.get(group)

    def get(self, name: str) -> PlatformComponent | None:
        """The component called ``name``, if any."""
        return next((c for c in self.components if c.name == name), None)
