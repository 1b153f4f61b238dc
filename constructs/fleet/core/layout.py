"""The one place for the ``dist/<env>/`` folder layout and ArgoCD's annotations.

Every renderer names its folder and its protection through these constants, so that the
bootstrap (which syncs the folders), the checks (which read them back) and the docs agree::

    dist/<env>/
      bootstrap/          the root Application syncs this: step Applications, argocd-cm
      providers/          Crossplane Providers, cluster-api-operator providers, namespaces
      platform/           ProviderConfigs and cloud identities
      packages/           ApplicationSets over registered clusters
      clusters/<name>/    one cluster: its objects (wave 0), what needs it up (wave 1)
      extra/              cdk8s objects a user added to the environment's chart
"""

from __future__ import annotations

from collections.abc import Iterable

BOOTSTRAP = "bootstrap"
PROVIDERS = "providers"
PLATFORM = "platform"
PACKAGES = "packages"
CLUSTERS = "clusters"
EXTRA = "extra"

SYNC_WAVE = "argocd.argoproj.io/sync-wave"
"""Annotation: the wave an object is applied in, within the Application that syncs it."""
AFTER_CLUSTER_WAVE = 1
"""Inside a cluster's Application: the wave of what needs the running cluster (Magnum node
groups need its API address, the registration its kubeconfig); the cluster's own objects
are wave 0. A paused cluster's Application has one wave only: ArgoCD waits on a Suspended
object before the next wave for ever (``gitops-engine/pkg/sync/sync_context.go``)."""
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
"""Annotation: per-object ArgoCD sync options."""
COMPARE_OPTIONS = "argocd.argoproj.io/compare-options"
"""Annotation on an Application: how ArgoCD diffs it (``ServerSideDiff=true``)."""

PROTECT = ("Prune=false", "Delete=false")
"""Sync options that keep an object alive when its definition disappears: ArgoCD neither
prunes it nor deletes it with its Application (gitops-engine ``sync_context.go``
``isPruningDisabled``; argo-cd ``controller/appcontroller.go`` ``shouldBeDeleted``)."""


def cluster_folder(cluster_name: str) -> str:
    """The folder of one cluster inside ``dist/<env>/``."""
    return f"{CLUSTERS}/{cluster_name}"


def environment_path(dist: str, environment: str, folder: str) -> str:
    """``<dist>/<environment>/<folder>``: what an Application's ``source.path`` names."""
    return f"{dist}/{environment}/{folder}"


def sync_options(options: Iterable[str]) -> dict[str, str]:
    """The ArgoCD sync-options annotation for ``options`` (empty dict when none)."""
    opts = ",".join(options)
    return {SYNC_OPTIONS: opts} if opts else {}
