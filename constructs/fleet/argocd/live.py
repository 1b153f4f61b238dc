"""What ``fleet status`` reads of the ArgoCD layer, and the read-only role it needs.

ArgoCD ``Application`` (argo-cd v3.5.1 ``pkg/apis/application/v1alpha1/types.go``
``ApplicationStatus``: ``sync.status``, ``sync.revision``, ``health.status``/``message``/
``lastTransitionTime``, ``operationState.phase``/``message``/``retryCount``/``finishedAt``,
``conditions[]``, ``resources[]`` with ``health`` when the controller persists it) and
provider-argocd's ``Cluster``, a Crossplane managed resource (v0.14.3
``apis/cluster/v1alpha1/types.go``: ``Ready``/``Synced``, and ArgoCD's connection state at
``status.atProvider.connectionState.connectionState``).

:func:`status_reader_role` is the ClusterRole rendered into ``dist/<env>/platform/``: get,
list and watch on exactly the kinds ``fleet status`` reads there, nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fleet.argocd.components import ARGO_CD, PROVIDER_ARGOCD
from fleet.argocd.registration import CLUSTER_API_VERSION
from fleet.platform.live import CROSSPLANE_MANAGED, LiveKind

APPLICATIONS = LiveKind(
    group="argoproj.io",
    kind="Application",
    version="v1alpha1",
    plural="applications",
    namespaced=True,
    component=ARGO_CD.name,
)
"""ArgoCD's Applications (judged by :mod:`fleet.views.status.argo`, not by conditions)."""

REGISTRATIONS = LiveKind(
    group=CLUSTER_API_VERSION.split("/")[0],
    kind="Cluster",
    version=CLUSTER_API_VERSION.split("/")[1],
    plural="clusters",
    namespaced=False,
    component=PROVIDER_ARGOCD.name,
    rules=CROSSPLANE_MANAGED,
)
"""provider-argocd's ``Cluster``: a cluster is registered once it is Ready and Synced."""

CONNECTION_STATE = ("status", "atProvider", "connectionState", "connectionState")
"""ArgoCD's view of a registered cluster (``ClusterObservation.ClusterInfo`` is serialised
as ``connectionState``, and holds a ``ConnectionState`` of the same name: ``status``
``Successful``/``Failed``/``Unknown``, ``message``, ``attemptedAt``)."""

STATUS_ROLE = "fleet-status-reader"
"""The read-only ClusterRole ``fleet status`` needs (bind it to who runs it)."""
READ_VERBS = ("get", "list", "watch")


def status_reader_role(kinds: Iterable[LiveKind]) -> dict[str, Any]:
    """The ClusterRole that reads ``kinds`` (get, list, watch) and nothing else: one rule
    per API group, resources sorted, so the same kinds render the same bytes."""
    by_group: dict[str, set[str]] = {}
    for kind in kinds:
        by_group.setdefault(kind.group, set()).add(kind.plural)
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {
            "annotations": {
                "fleet/purpose": "read-only: what `fleet status` lists; bind it to the "
                "people and CI jobs that run it",
            },
            "name": STATUS_ROLE,
        },
        "rules": [
            {"apiGroups": [group], "resources": sorted(plurals), "verbs": list(READ_VERBS)}
            for group, plurals in sorted(by_group.items())
        ],
    }
