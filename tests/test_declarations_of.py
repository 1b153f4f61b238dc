"""``Fleet.declarations_of(kind)``: the declarations of one kind, kept once the tree is locked.

``ManagementCluster.of`` reads it once per OKE cluster and environment; it scanned every
declaration before (600 scans of 1,012 declarations at 1,000 clusters x 3 environments,
docs/performance.md).
"""

from __future__ import annotations

from pathlib import Path

from fleet import Fleet, ManagementCluster
from fleet.core.config import FleetConfig

API = "https://10.0.0.1:6443"


def test_declarations_of_follows_additions_until_locked_then_keeps_them(tmp_path: Path) -> None:
    fleet = Fleet(FleetConfig(root=tmp_path))
    assert fleet.declarations_of(ManagementCluster) == ()
    first = ManagementCluster(fleet, "mgmt-dev", api_server=API, environments=["dev"])
    assert fleet.declarations_of(ManagementCluster) == (first,)  # not kept before the lock
    second = ManagementCluster(fleet, "mgmt-prod", api_server=API, environments=["prod"])
    assert fleet.declarations_of(ManagementCluster) == (first, second)
    fleet.run_phases()
    kept = fleet.declarations_of(ManagementCluster)
    assert kept == (first, second)
    assert fleet.declarations_of(ManagementCluster) is kept  # kept once the tree is locked
    assert ManagementCluster.of(fleet, "prod") is second
    assert ManagementCluster.of(fleet, "dev") is first
    assert ManagementCluster.of(fleet, "test") is None
