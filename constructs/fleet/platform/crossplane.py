"""Crossplane, and the install of a Crossplane provider: what several clouds (and the ArgoCD
registrations, through provider-argocd) require.

Crossplane is installed from its Helm chart (2.3.4: the release the pinned ``crossplane/``
CRDs of ``crds.lock.yaml`` come from). A provider is a ``pkg.crossplane.io`` ``Provider``
in ``providers/``; ArgoCD has built-in health for every ``*.crossplane.io`` group (argo-cd
``resource_customizations/_.crossplane.io/_/health.lua``, since v3.1), so the Provider is
Healthy only once its package, and so its CRDs, are installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fleet.core.layout import PROTECT, sync_options
from fleet.platform.component import (
    ChartInstall,
    InstallContext,
    Kind,
    ObjectsInstall,
    PlatformComponent,
)

CROSSPLANE_SYSTEM = "crossplane-system"
"""Crossplane's namespace (its chart's), where providers run and credentials live."""
XPKG_CONTRIB = "xpkg.upbound.io/crossplane-contrib"
"""The registry repository of the crossplane-contrib providers."""

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
)
"""Crossplane itself (its chart; every Crossplane provider requires it)."""


def _repository(package: str) -> str:
    """``xpkg.upbound.io/org/provider-x:v1`` -> ``provider-x``."""
    return package.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]


@dataclass(frozen=True, kw_only=True)
class CrossplaneProvider(ObjectsInstall):
    """A Crossplane ``Provider`` named ``name`` for ``package`` (without tag) at the
    component's version; with ``runtime_args``, a ``DeploymentRuntimeConfig`` of the same
    name passes them to the provider's container."""

    name: str
    package: str
    runtime_args: tuple[str, ...] = ()

    @property
    def installer_kind(self) -> Kind:
        """A Crossplane ``Provider``."""
        return ("pkg.crossplane.io", "Provider")

    def render(self, ctx: InstallContext) -> list[dict[str, Any]]:
        """The Provider (never pruned: its CRDs hold the clusters), and its runtime config."""
        spec: dict[str, Any] = {"package": f"{self.package}:{ctx.version}"}
        out: list[dict[str, Any]] = []
        if self.runtime_args:
            spec["runtimeConfigRef"] = {
                "apiVersion": "pkg.crossplane.io/v1beta1",
                "kind": "DeploymentRuntimeConfig",
                "name": self.name,
            }
            out.append(runtime_config(self.name, self.runtime_args))
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


def runtime_config(name: str, args: tuple[str, ...]) -> dict[str, Any]:
    """A ``DeploymentRuntimeConfig`` that passes ``args`` to a provider's container."""
    return {
        "apiVersion": "pkg.crossplane.io/v1beta1",
        "kind": "DeploymentRuntimeConfig",
        "metadata": {"name": name},
        "spec": {
            "deploymentTemplate": {
                "spec": {
                    "selector": {},
                    "template": {
                        "spec": {"containers": [{"args": list(args), "name": "package-runtime"}]}
                    },
                }
            }
        },
    }
