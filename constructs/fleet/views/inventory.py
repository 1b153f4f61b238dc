"""The fleet's inventory: one row per cluster and environment, from the definitions.

Pure: rows come from a loaded :class:`~fleet.Fleet`; ``cli_ls`` prints them.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from fleet.argocd.argo_cd import ArgoCd
from fleet.clouds.base import FleetCluster, NodePoolSummary
from fleet.core.fleet import Fleet

COLUMNS = ("cluster", "cloud", "version", "nodes", "account", "notes")
"""The columns of the table, in order; its rows are grouped under their environment (the
node pools, one by one, are in the JSON and the CSV)."""


CSV_COLUMNS = (
    "environment",
    "cluster",
    "cloud",
    "template",
    "kubernetes_version",
    "node_pools",
    "nodes",
    "min_nodes",
    "max_nodes",
    "account",
    "registered_in_argocd",
    "deletion_protection",
    "retired",
    "cloud_name",
)
"""The columns of the CSV: one value per cell, booleans as ``true``/``false``."""


@dataclass(frozen=True, kw_only=True)
class NodeTotals:
    """Worker nodes summed over a cluster's node pools.

    ``min_nodes``/``max_nodes`` are set when at least one pool is autoscaled; a pool
    without bounds counts its ``node_count`` towards both. ``nodes`` is None when a
    pool leaves its size to the autoscaler (no ``node_count``).
    """

    nodes: int | None
    min_nodes: int | None
    max_nodes: int | None

    @property
    def autoscaled(self) -> bool:
        """Whether any pool has bounds."""
        return self.min_nodes is not None or self.max_nodes is not None

    def text(self) -> str:
        """``6``; when autoscaled ``6 (4..14)``, or ``4..14`` when the autoscaler owns the
        count (an OKE pool has no ``node_count``; ``?`` for an unknown bound)."""
        count = "?" if self.nodes is None else str(self.nodes)
        if not self.autoscaled:
            return count
        low = "?" if self.min_nodes is None else str(self.min_nodes)
        high = "?" if self.max_nodes is None else str(self.max_nodes)
        if self.nodes is None:
            return f"{low}..{high}"
        return f"{count} ({low}..{high})"


def node_totals(pools: Sequence[NodePoolSummary]) -> NodeTotals:
    """The totals of ``pools`` (see :class:`NodeTotals`)."""
    autoscaled = any(p.min_node_count is not None or p.max_node_count is not None for p in pools)
    count: int | None = 0
    low: int | None = 0 if autoscaled else None
    high: int | None = 0 if autoscaled else None
    for p in pools:
        count = None if count is None or p.node_count is None else count + p.node_count
        if autoscaled:
            pool_low = p.min_node_count if p.min_node_count is not None else p.node_count
            pool_high = p.max_node_count if p.max_node_count is not None else p.node_count
            low = None if low is None or pool_low is None else low + pool_low
            high = None if high is None or pool_high is None else high + pool_high
    return NodeTotals(nodes=count, min_nodes=low, max_nodes=high)


@dataclass(frozen=True, kw_only=True)
class InventoryRow:
    """One cluster in one environment, as ``fleet ls`` shows it.

    ``version`` is the Magnum template where the cloud has templates, else the
    Kubernetes version; both are also kept apart for machine-readable output.
    """

    environment: str
    cluster: str
    """The cluster's object name (its folder, its ArgoCD registration)."""
    cloud_name: str
    """Its name in its cloud (Magnum's ``Cluster``), where it may differ."""
    construct_id: str
    cloud: str
    template: str | None
    kubernetes_version: str
    node_pools: tuple[NodePoolSummary, ...]
    totals: NodeTotals
    account: str
    account_label: str
    """The account as the table shows it (a cloud may keep only a long id's unique end;
    the full one is in the JSON and CSV)."""
    registered_in_argocd: bool
    deletion_protection: bool
    retired: bool
    source: str

    @property
    def version(self) -> str:
        """The template, or the Kubernetes version where there is none."""
        return self.template or self.kubernetes_version

    def cells(self) -> dict[str, str]:
        """The row as the table shows it, keyed by :data:`COLUMNS`."""
        return {
            "cluster": self.cluster,
            "cloud": self.cloud,
            "version": self.version,
            "nodes": self.totals.text(),
            "account": self.account_label,
            "notes": ", ".join(self.notes()),
        }

    def notes(self) -> list[str]:
        """What sets the cluster apart from the usual one (registered, protected, live)."""
        out = ["retired"] if self.retired else []
        if self.cloud_name != self.cluster:
            out.append(f"{self.cloud} name {self.cloud_name!r}")
        if not self.registered_in_argocd and not self.retired:
            out.append("not in ArgoCD")
        if not self.deletion_protection:
            out.append("unprotected")
        return out

    def to_dict(self) -> dict[str, Any]:
        """The row for JSON: every field, node pools in full, counts as numbers."""
        return {
            "environment": self.environment,
            "cluster": self.cluster,
            "cloud_name": self.cloud_name,
            "id": self.construct_id,
            "cloud": self.cloud,
            "template": self.template,
            "kubernetes_version": self.kubernetes_version,
            "node_pools": [
                {
                    "name": p.name,
                    "machine_size": p.machine_size,
                    "machine_size_inherited": p.size_inherited,
                    "node_count": p.node_count,
                    "min_node_count": p.min_node_count,
                    "max_node_count": p.max_node_count,
                    "placement": list(p.placement),
                }
                for p in self.node_pools
            ],
            "nodes": self.totals.nodes,
            "min_nodes": self.totals.min_nodes,
            "max_nodes": self.totals.max_nodes,
            "account": self.account,
            "registered_in_argocd": self.registered_in_argocd,
            "deletion_protection": self.deletion_protection,
            "retired": self.retired,
            "source": self.source,
        }


def registered(fleet: Fleet, environment: str) -> set[FleetCluster]:
    """The clusters ``dist/<environment>/`` registers in ArgoCD: those the environment's
    :class:`~fleet.ArgoCd` registers (none when the environment has no ArgoCd; a cluster
    retired there or one declared with ``register_in_argocd=False`` is never registered)."""
    for construct in fleet.declarations():
        if isinstance(construct, ArgoCd) and environment in construct.environments:
            return {cluster for cluster, _ in construct.registered(environment)}
    return set()


def clusters(fleet: Fleet) -> list[FleetCluster]:
    """The fleet's clusters, in declaration order."""
    return [c for c in fleet.declarations() if isinstance(c, FleetCluster)]


def inventory(fleet: Fleet, *, environments: Iterable[str] | None = None) -> list[InventoryRow]:
    """One row per cluster and environment, environments in configured order.

    ``environments`` limits the rows (all configured ones when None); an unknown name
    raises the fleet's "unknown environment" error.
    """
    envs = list(environments) if environments is not None else list(fleet.environment_names)
    for env in envs:
        fleet.check_environment(env)
    members = clusters(fleet)
    rows: list[InventoryRow] = []
    for env in envs:
        in_argocd = registered(fleet, env)
        for cluster in members:
            if env not in cluster.environments:
                continue
            pools = tuple(cluster.node_pools(env))
            rows.append(
                InventoryRow(
                    environment=env,
                    cluster=cluster.object_name(env),
                    cloud_name=cluster.cloud_name(env),
                    construct_id=cluster.construct_id,
                    cloud=cluster.cloud,
                    template=cluster.template_name(env),
                    kubernetes_version=cluster.kubernetes_version(env),
                    node_pools=pools,
                    totals=node_totals(pools),
                    account=cluster.account(env),
                    account_label=cluster.account_label(env),
                    registered_in_argocd=cluster in in_argocd,
                    deletion_protection=cluster.deletion_protection,
                    retired=cluster.is_retired(env),
                    source=cluster.where,
                )
            )
    return rows


def to_json(rows: Sequence[InventoryRow]) -> str:
    """A JSON array of :meth:`InventoryRow.to_dict`, indented, newline-terminated."""
    return json.dumps([r.to_dict() for r in rows], indent=2) + "\n"


def to_csv(rows: Sequence[InventoryRow]) -> str:
    """CSV with a header of :data:`CSV_COLUMNS`; node pools space-separated in one cell."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        data = row.to_dict()
        data["node_pools"] = " ".join(p.name for p in row.node_pools)
        writer.writerow({key: _csv_cell(data[key]) for key in CSV_COLUMNS})
    return out.getvalue()


def _csv_cell(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
