"""``fleet upgrade promote``'s convergence gate and ``fleet status --ring`` through
``fleet status``'s Python API (:func:`fleet.views.status.read_status`) and the real
Kubernetes client, against the stand-in API server of the status tests
(:mod:`kube_server`, every served object validated against its pinned CRD first).

The fleet is the two-ring fixture (``tests/fixtures/fleets/rollout``) in a git repository
with ring ``first`` (dev) promoted to step 1 of ``kubernetes-1.31`` and committed. Its
management cluster is what ``live_world`` builds from the render at that commit (status
shapes and their upstream sources are named there); a case then changes one object the way
a controller would report an upgrade not done yet:

* the OKE control plane still on v1.30.1: ``OCIManagedControlPlane.status.version``
  (CAPOCI v0.24.0 ``exp/api/v1beta2/ocimanagedcontrolplane_types.go``), which is the
  version ``fleet status`` compares;
* the vexxhost-driver cluster's ClusterV1 refused by upjet (``Synced`` False,
  ``ReconcileError``; upjet v2.2.0 ``pkg/controller/external_tfpluginsdk.go`` ``Update``).
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from kube_server import World, kubeconfig, serve
from live_world import PLURALS, condition, converged_status, find, live
from test_rollout import FIXTURE, git

from fleet.cli.main import main
from fleet.cli.upgrade import run_promote, status_check
from fleet.clouds.base import FleetCluster
from fleet.core.config import FleetConfig
from fleet.pipeline.discovery import load_fleet
from fleet.pipeline.render import render_environment
from fleet.views.status import kube_clients

START = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
CONTEXT = "mgmt"
ALWAYS_READ = (
    "/apis/argoproj.io/v1alpha1/applications",
    "/apis/cluster.argocd.crossplane.io/v1alpha1/clusters",
)
"""Kinds ``fleet status`` lists in every environment: installed (empty) on this server."""


@pytest.fixture(scope="module")
def promoted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The fixture fleet in git: the fleet, then ring first's step 1 promoted and committed."""
    root = tmp_path_factory.mktemp("rollout-live") / "fleet"
    root.mkdir()
    shutil.copy(FIXTURE / "pyproject.toml", root)
    shutil.copytree(FIXTURE / "clusters", root / "clusters", ignore=shutil.ignore_patterns("__py*"))
    git(root, "init", "-q", "-b", "main")
    assert main(["--root", str(root), "synth"]) == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fleet", when=START)
    code, out, err = promote(root, "http://127.0.0.1:9", START, tmp=root.parent, write=True)
    assert code == 0, err
    assert "Promoted ring first, step 1 of 2" in out
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "promote first 1", when=START + timedelta(hours=1))
    yield root


def dev_world(root: Path) -> World:
    """Dev's management cluster with everything the commit declares live and converged,
    each Magnum cluster reporting its template's version as ``coeVersion``."""
    fleet = load_fleet(FleetConfig.load(root))
    fleet.run_phases()
    versions = {
        c.object_name("dev"): c.kubernetes_version("dev")
        for c in fleet.declarations()
        if isinstance(c, FleetCluster) and "dev" in c.environments
    }
    out = World()
    for m in render_environment(fleet, "dev"):
        if m.kind not in PLURALS or m.kind == "Application":
            continue
        body = live(m, "fleet-dev")
        body["status"] = converged_status(body, "unused")
        if m.kind == "ClusterV1":
            body["status"]["atProvider"]["coeVersion"] = versions[m.name]
        out.put(body, PLURALS[m.kind])
    out.known |= set(out.objects) | set(ALWAYS_READ)
    return out


def promote(
    root: Path, url: str, now: datetime, *, tmp: Path, write: bool = False
) -> tuple[int, str, str]:
    config = FleetConfig.load(root)
    path = kubeconfig(tmp / "kubeconfig", {CONTEXT: url})
    clients = kube_clients(
        config, context=CONTEXT, kubeconfig=path, connect_timeout=2, read_timeout=2
    )
    out, err = StringIO(), StringIO()
    code = run_promote(
        config, now=now, unconverged=status_check(clients), dry_run=not write, out=out, err=err
    )
    return code, out.getvalue(), err.getvalue()


def test_promote_passes_once_the_ring_runs_the_target(promoted: Path, tmp_path: Path) -> None:
    with serve(dev_world(promoted)) as url:
        code, out, err = promote(promoted, url, START + timedelta(hours=2), tmp=tmp_path)
    assert code == 0, err
    assert "Would promote ring first, step 2 of 2 of kubernetes-1.31" in out
    assert "dev/edge-dev: node pools" in out


def test_promote_refuses_a_control_plane_still_on_the_old_version(
    promoted: Path, tmp_path: Path
) -> None:
    world = dev_world(promoted)
    find(world, "OCIManagedControlPlane", "edge-dev")["status"]["version"] = "v1.30.1"
    world.validate()
    with serve(world) as url:
        code, _, err = promote(promoted, url, START + timedelta(hours=2), tmp=tmp_path)
    assert code == 1
    lines = err.splitlines()
    assert lines[0].startswith(
        "refused: 1 cluster(s) of ring first not converged at ring first, step 1 of 2"
    )
    assert "`fleet status --ring first`" in lines[0]
    assert lines[1].startswith(
        "refused: dev/edge-dev: progressing (declared v1.31.1, live v1.30.1)"
    )
    assert "runs v1.30.1, declared v1.31.1" in lines[1]


def test_promote_refuses_a_magnum_upgrade_upjet_refused(promoted: Path, tmp_path: Path) -> None:
    world = dev_world(promoted)
    body = find(world, "ClusterV1", "batch-dev")
    message = "update failed: async update failed: refuse to update the external resource"
    body["status"]["conditions"][1] = condition(
        "Synced", "False", reason="ReconcileError", message=message
    )
    world.validate()
    with serve(world) as url:
        code, _, err = promote(promoted, url, START + timedelta(hours=2), tmp=tmp_path)
    assert code == 1
    assert "refused: dev/batch-dev: failed" in err
    assert message in err
    assert "edge-dev" not in err and "api-dev" not in err


def test_promote_refuses_when_the_management_cluster_cannot_be_read(
    promoted: Path, tmp_path: Path
) -> None:
    code, _, err = promote(promoted, "http://127.0.0.1:9", START + timedelta(hours=2), tmp=tmp_path)
    assert code == 1
    assert "refused: dev/edge-dev: unknown (declared v1.31.1, live ?): not read: " in err
    assert "Connection refused" in err
    assert "Traceback" not in err


def _status_rows(root: Path, url: str, tmp: Path, *args: str) -> list[dict[str, Any]]:
    path = kubeconfig(tmp / "kubeconfig", {CONTEXT: url})
    out = StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            [
                *("--root", str(root), "status", "--context", CONTEXT),
                *("--kubeconfig", str(path), "--format", "json", *args),
            ]
        )
    assert code == 0
    rows: list[dict[str, Any]] = json.loads(out.getvalue())["clusters"]
    return rows


def test_status_ring_selects_that_rings_clusters(promoted: Path, tmp_path: Path) -> None:
    with serve(dev_world(promoted)) as url:
        first = _status_rows(promoted, url, tmp_path, "--ring", "first", "--env", "dev")
    assert sorted((r["environment"], r["cluster"]) for r in first) == [
        ("dev", "api-dev"),
        ("dev", "batch-dev"),
        ("dev", "edge-dev"),
        ("dev", "legacy-dev-v25"),
    ]
    assert {r["verdict"] for r in first} == {"converged"}
    assert {r["declared_version"] for r in first if r["cluster"] != "legacy-dev-v25"} == {
        "v1.31.2",
        "v1.31.1",
    }


def test_status_ring_of_another_environment_selects_nothing_here(
    promoted: Path, tmp_path: Path
) -> None:
    with serve(dev_world(promoted)) as url:
        rows = _status_rows(promoted, url, tmp_path, "--ring", "second", "--env", "dev")
    assert rows == []


def test_status_ring_that_does_not_exist_is_bad_input(
    promoted: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--root", str(promoted), "status", "--ring", "thrid"]) == 2
    err = capsys.readouterr().err
    assert "no ring 'thrid' (rings: first, second)" in err
    assert "Traceback" not in err
