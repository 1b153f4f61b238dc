"""``fleet status``: the declared fleet joined with its live management clusters.

The typed API a promotion gate calls (the CLI is :mod:`fleet.cli.status`)::

    from fleet.views.status import Selection, read_status

    status = read_status(fleet, Selection(environments=("prod",), clusters=("web",)))
    if status.converged(): ...
    for row in status.clusters:
        row.converged(), row.verdict, row.problem

:func:`read_status` takes ``clients=`` (environment -> :class:`LiveClient`) to read
elsewhere than the kubeconfig (:func:`kube_clients` is the default), and a
:class:`Selection` whose ``filters`` narrow the clusters further (a ring is one).
"""

from __future__ import annotations

from fleet.platform.live import Finding, Verdict
from fleet.views.status.kube import Connection, KubeClient, LiveClient, ReadError
from fleet.views.status.model import (
    ApplicationView,
    ClusterStatus,
    EnvironmentRead,
    FleetStatus,
    ObjectRef,
    Orphan,
    Selection,
)
from fleet.views.status.read import ClientFactory, kube_clients, read_status
from fleet.views.status.revisions import RevisionState

__all__ = [
    "ApplicationView",
    "ClientFactory",
    "ClusterStatus",
    "Connection",
    "EnvironmentRead",
    "Finding",
    "FleetStatus",
    "KubeClient",
    "LiveClient",
    "ObjectRef",
    "Orphan",
    "ReadError",
    "RevisionState",
    "Selection",
    "Verdict",
    "kube_clients",
    "read_status",
]
