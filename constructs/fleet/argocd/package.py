"""A package deployed to registered clusters (the seed's step 5): an ArgoCD ApplicationSet.

The ApplicationSet's cluster generator selects clusters by the labels their registration
gives them (:func:`fleet.argocd.registration.cluster_labels`: ``fleet/environment``,
``fleet/cloud``, ``fleet/region``, ``fleet/kubernetes-version``, ``fleet/template``, and the
cluster's ``fleet_labels``), always within the package's environment. The package lands in
``dist/<env>/packages/``, synced by the bootstrap's last wave.

Deletion is conservative: ``preserveResourcesOnDeletion`` keeps what a package deployed on a
cluster when the cluster leaves the selection (or is unregistered) or when the package is
removed; uninstalling from a cluster is a deliberate act.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleet.argocd.bootstrap import APPLICATION_API_VERSION
from fleet.argocd.registration import (
    LABEL_ENVIRONMENT,
    Registrar,
    check_labels,
    registration_body,
)
from fleet.core.arguments import checked_arguments
from fleet.core.config import check_repo_url
from fleet.core.declaration import FleetConstruct
from fleet.core.errors import DefinitionError
from fleet.core.layout import PACKAGES
from fleet.core.manifest import Manifest
from fleet.core.tree import Scope, name_from_id
from fleet.core.validators import check_dns_label, check_dns_subdomain, check_version_pin

DEFAULT_SYNC_OPTIONS = ("CreateNamespace=true",)
"""Sync options of a package's Applications from a Git path."""
HELM_SYNC_OPTIONS = ("CreateNamespace=true", "ServerSideApply=true")
"""Sync options of a package's Applications from a Helm chart (large CRDs: see FleetPackage)."""
_SYNC_OPTION = re.compile(r"^[A-Za-z]+=[A-Za-z0-9,._-]+$")


@checked_arguments
@dataclass(frozen=True, kw_only=True)
class GitPath:
    """Manifests (a plain YAML directory) at ``path`` of a Git repository.

    Left out: ``repo_url`` and ``revision`` are the fleet's own (``[tool.fleet]``).
    """

    path: str
    repo_url: str | None = None
    revision: str | None = None
    recurse: bool = False


REGISTRY_SCHEME = "oci://"
"""The scheme of an Open Container Initiative registry (not a cloud)."""


def check_chart_repository(value: str, *, where: str, field: str) -> str:
    """A chart repository's URL: ``https://`` (a Helm repository, its ``index.yaml``) or
    ``oci://`` (an OCI registry), else the error.

    ArgoCD takes a chart's ``repoURL`` without a scheme for an OCI registry, and with one for
    a repository index (argoproj/argo-cd v3.5.1 ``util/helm/client.go`` ``IsHelmOciRepo``:
    ``parsed.Host == ""``); an ``oci://`` URL on an Application is an OCI artifact, not a
    chart (``pkg/apis/application/v1alpha1/types.go`` ``IsOCI``, checked before ``IsHelm`` in
    ``reposerver/repository/repository.go``). So the fleet asks for the scheme and renders
    an ``oci://`` registry in ArgoCD's Helm OCI form (:func:`chart_repo_url`).
    """
    if (
        value.startswith(("https://", REGISTRY_SCHEME))
        and len(value.split("://", 1)[1].strip("/")) > 0
    ):
        return value
    raise DefinitionError(
        f"{value!r}: give the scheme, https://charts.example.org for a Helm repository or "
        f"{REGISTRY_SCHEME}registry.example.org/charts for a container registry (without "
        "one ArgoCD takes it for a container registry; http:// would fetch the index in "
        "clear text)",
        where=where,
        field=field,
    )


def chart_repo_url(value: str) -> str:
    """The ``repoURL`` ArgoCD needs for a chart repository: an ``oci://`` registry without
    its scheme (ArgoCD's Helm OCI form), anything else as it is."""
    return value.removeprefix(REGISTRY_SCHEME)


@checked_arguments
@dataclass(frozen=True, kw_only=True)
class HelmChart:
    """An upstream Helm chart, pinned to ``version`` (an exact version); ``repo_url`` is a
    Helm repository (``https://...``) or an OCI registry (``oci://...``); ``values`` left
    out: the chart's."""

    repo_url: str
    chart: str
    version: str
    values: Mapping[str, Any] = field(default_factory=dict)


class FleetPackage(FleetConstruct):
    """Deploys ``source`` to every registered cluster whose labels match ``match_labels``.

    Example (a monitoring stack on every prod cluster)::

        FleetPackage(
            fleet, "monitoring", environments=["prod"], namespace="monitoring",
            source=HelmChart(repo_url="https://prometheus-community.github.io/helm-charts",
                             chart="kube-prometheus-stack", version="62.7.0"),
        )

    A package that selects no registered cluster in one of its environments is an error
    (a typo in ``match_labels`` would deploy nowhere), unless ``allow_empty=True``.

    Left out: ``environments`` is every environment; ``match_labels`` selects every
    registered cluster of the environment; ``name`` (of the ApplicationSet and the prefix of
    its Applications) is the construct id, after the prefixes of the Components it is
    declared in (:func:`~fleet.core.tree.name_from_id`); ``project`` is ``default``;
    ``argocd_namespace`` is ``argocd``; ``sync_options`` (of the generated Applications) are
    ``CreateNamespace=true`` plus, for a Helm chart, ``ServerSideApply=true``: charts carry
    CRDs, and a client-side apply stores the whole object in the
    ``last-applied-configuration`` annotation, which the API server caps at 262,144 bytes
    (kubernetes/apimachinery ``pkg/api/validation/objectmeta.go``); kube-prometheus-stack's
    CRDs are up to 773 KB. Server-side apply keeps no such annotation (argo-cd
    ``gitops-engine/pkg/sync/sync_context.go`` ``shouldUseServerSideApply``).
    """

    def __init__(
        self,
        scope: Scope,
        construct_id: str,
        *,
        source: GitPath | HelmChart,
        namespace: str,
        environments: Sequence[str] | None = None,
        match_labels: Mapping[str, str] | None = None,
        name: str | None = None,
        project: str = "default",
        argocd_namespace: str = "argocd",
        allow_empty: bool = False,
        sync_options: Sequence[str] | None = None,
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            environments=environments,
        )
        ctx = self.context
        if not isinstance(source, (GitPath, HelmChart)):
            raise DefinitionError(
                f"must be a GitPath or a HelmChart, got {type(source).__name__}",
                where=ctx,
                field="source",
            )
        if isinstance(source, GitPath) and (
            not source.path or source.path.startswith("/") or ".." in source.path.split("/")
        ):
            raise DefinitionError(
                f"must be a relative path inside the repository, got {source.path!r}",
                where=ctx,
                field="source.path",
            )
        if isinstance(source, GitPath) and source.repo_url is not None:
            check_repo_url(source.repo_url, where=ctx, field="source.repo_url")
        if isinstance(source, HelmChart) and not source.chart.strip():
            raise DefinitionError("name the chart", where=ctx, field="source.chart")
        if isinstance(source, HelmChart) and not source.repo_url.strip():
            raise DefinitionError("give the chart repository", where=ctx, field="source.repo_url")
        if isinstance(source, HelmChart) and not source.version:
            raise DefinitionError("pin the chart's version", where=ctx, field="source.version")
        if isinstance(source, HelmChart):
            check_version_pin(source.version, where=ctx, field="source.version")
            check_chart_repository(source.repo_url, where=ctx, field="source.repo_url")
        self.source = source
        self.namespace = check_dns_label(namespace, where=ctx, field="namespace")
        self.match_labels = check_labels(match_labels or {}, where=ctx, field="match_labels")
        if LABEL_ENVIRONMENT in self.match_labels:
            raise DefinitionError(
                f"{LABEL_ENVIRONMENT} is set from environments=, not from match_labels",
                where=ctx,
                field="match_labels",
            )
        # The Applications are named <name>-<cluster>: leave room for a cluster name.
        self.name = check_dns_label(
            name or name_from_id(self), where=ctx, field="name", max_length=63
        )
        self.project = check_dns_subdomain(project, where=ctx, field="project")
        self.allow_empty = allow_empty
        self.argocd_namespace = check_dns_label(
            argocd_namespace, where=ctx, field="argocd_namespace"
        )
        if sync_options is None:
            sync_options = (
                HELM_SYNC_OPTIONS if isinstance(source, HelmChart) else DEFAULT_SYNC_OPTIONS
            )
        if isinstance(sync_options, str):
            sync_options = [sync_options]
        for option in sync_options:
            if not isinstance(option, str) or not _SYNC_OPTION.match(option):
                raise DefinitionError(
                    f"each sync option is Name=value (ServerSideApply=true), got {option!r}",
                    where=ctx,
                    field="sync_options",
                )
        self.sync_options = tuple(sync_options)

    def _source(self) -> dict[str, Any]:
        config = self.fleet.config
        s = self.source
        if isinstance(s, GitPath):
            source: dict[str, Any] = {
                "path": s.path,
                "repoURL": s.repo_url or config.repo_url,
                "targetRevision": s.revision or config.revision,
            }
            if s.recurse:
                source["directory"] = {"recurse": True}
            return source
        helm: dict[str, Any] = {"releaseName": self.name}
        if s.values:
            helm["valuesObject"] = dict(s.values)
        return {
            "chart": s.chart,
            "helm": helm,
            "repoURL": chart_repo_url(s.repo_url),
            "targetRevision": s.version,
        }

    def selected(self, environment: str) -> int:
        """How many clusters registered in ``environment`` ``match_labels`` selects (their
        registration's labels, as the ApplicationSet's cluster generator sees them): the
        Applications it generates there. -1 without an ArgoCd in the environment."""
        for argocd in self.fleet.declarations():
            if isinstance(argocd, Registrar) and environment in argocd.environments:
                return sum(
                    all(labels.get(key) == value for key, value in self.match_labels.items())
                    for labels in (
                        registration_body(
                            cluster, environment, provider_config="", registration=registration
                        )["spec"]["forProvider"]["labels"]
                        for cluster, registration in argocd.registered(environment)
                    )
                )
        return -1

    def selects_any(self, environment: str) -> bool:
        """Whether ``match_labels`` selects a cluster registered in ``environment``; True
        without an ArgoCd there (registration reports that)."""
        return self.selected(environment) != 0

    def render(self, environment: str) -> list[Manifest]:
        """One ApplicationSet with a cluster generator."""
        if not self.allow_empty and not self.selects_any(environment):
            shown = ", ".join(f"{k}={v}" for k, v in self.match_labels.items()) or "(none)"
            raise DefinitionError(
                f"selects no registered cluster in {environment} (match_labels {shown}); "
                "fix the labels, or pass allow_empty=True",
                where=self.context,
                field="match_labels",
            )
        labels = {LABEL_ENVIRONMENT: environment, **self.match_labels}
        body = {
            "apiVersion": APPLICATION_API_VERSION,
            "kind": "ApplicationSet",
            "metadata": {"name": self.name, "namespace": self.argocd_namespace},
            "spec": {
                "generators": [{"clusters": {"selector": {"matchLabels": labels}}}],
                "goTemplate": True,
                "goTemplateOptions": ["missingkey=error"],
                "syncPolicy": {"preserveResourcesOnDeletion": True},
                "template": {
                    "metadata": {"name": f"{self.name}-{{{{.nameNormalized}}}}"},
                    "spec": {
                        "destination": {"namespace": self.namespace, "server": "{{.server}}"},
                        "project": self.project,
                        "source": self._source(),
                        "syncPolicy": {
                            "automated": {"prune": True, "selfHeal": True},
                            "syncOptions": list(self.sync_options),
                        },
                    },
                },
            },
        }
        return [self._manifest(environment, PACKAGES, body)]
