"""The platform components of the ArgoCD layer: ArgoCD itself (installed before the
bootstrap), provider-argocd (every registration) and External Secrets (kubeconfig export;
defined in :mod:`fleet.platform.external_secrets`, since a cloud needs it too).

They are listed by :class:`~fleet.ArgoCd`'s plug-in, which is how the wave check learns
their CRDs. Pinned: ArgoCD v3.5.1 (installed by a person), provider-argocd v0.14.3,
External Secrets 2.9.0 (chart); ``crds.lock.yaml`` pins the CRDs of the same releases.
"""

from __future__ import annotations

from fleet.platform.component import PlatformComponent, Preinstalled
from fleet.platform.crossplane import CROSSPLANE, XPKG_CONTRIB, CrossplaneProvider
from fleet.platform.external_secrets import EXTERNAL_SECRETS

__all__ = ["ARGO_CD", "EXTERNAL_SECRETS", "PROVIDER_ARGOCD"]

ARGO_CD = PlatformComponent(
    name="argo-cd",
    version="v3.5.1",
    install=Preinstalled(),
    owns=frozenset(
        {
            ("argoproj.io", "Application"),
            ("argoproj.io", "AppProject"),
            ("argoproj.io", "ApplicationSet"),
        }
    ),
)
"""ArgoCD: there before the bootstrap (a person installs it), with its CRDs. ``version`` is
the release the bootstrap is written and validated for (its CRDs are pinned at it); the
fleet does not install it."""

PROVIDER_ARGOCD = PlatformComponent(
    name="provider-argocd",
    version="v0.14.3",
    install=CrossplaneProvider(name="provider-argocd", package=f"{XPKG_CONTRIB}/provider-argocd"),
    requires=(CROSSPLANE,),
    owns=frozenset(
        {
            ("cluster.argocd.crossplane.io", "Cluster"),
            ("argocd.crossplane.io", "ProviderConfig"),
            ("projects.argocd.crossplane.io", "Project"),
            ("applications.argocd.crossplane.io", "Application"),
        }
    ),
)
"""provider-argocd: registers clusters in ArgoCD. The ArgoCd renders it with its poll
interval (``--poll``, a ``DeploymentRuntimeConfig``). v0.14.3 serves only cluster-scoped kinds
(the namespaced ``*.m.argocd.crossplane.io`` ones came after it), so only those are owned,
pinned and valid."""
