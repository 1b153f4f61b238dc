"""``fleet status`` through the real Kubernetes client, kubeconfig loading and HTTP.

No API server can run here: :mod:`kube_server` serves the list paths the client calls
(``CustomObjectsApi.list_cluster_custom_object``: ``GET /apis/<group>/<version>/<plural>``)
with objects built from the rendered fixture fleet plus the status upstream controllers
write (:mod:`live_world`, sources named there), each validated against the pinned CRD of its
version before it is served. The fleet is a copy of ``tests/fixtures/fleets/hybrid`` in a
git repository with two commits that change ``dist/test/``.

Recorded cases: a cluster converging; a Magnum upgrade refused by upjet (upjet v2.2.0
``pkg/controller/external_tfpluginsdk.go`` ``Update``: "refuse to update the external
resource because the following update requires replacing it", wrapped by
``external_async_tfpluginsdk.go`` "async update failed" and by the callback's
``ReconcileError`` "update failed", ``pkg/controller/api.go``); an OKE pool failing (CAPOCI
v0.24.0 ``exp/controllers/ocimanaged_machinepool_controller.go``); ArgoCD behind on revision;
an orphan; a 403; a 401; a missing CRD; a server that never answers; an unreachable one.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kube_server import World, kubeconfig, serve
from live_world import T1, condition, find, metav1_condition, v1beta1_condition, world
from support import HYBRID, REPO

from fleet.cli.main import main
from fleet.cli.status import run_status
from fleet.core.config import FleetConfig
from fleet.pipeline.discovery import load_fleet
from fleet.pipeline.render import render_environment
from fleet.platform.live import Verdict
from fleet.views.status import FleetStatus, Selection, kube_clients, read_status
from fleet.views.status.revisions import RevisionState

ENV = "test"
MAGNUM = "k8s-sso-test-v25"
OKE = "oke-sso-test"
REFUSAL = (
    "update failed: async update failed: refuse to update the external resource because the "
    'following update requires replacing it: cannot change the value of the argument "labels.'
    'kube_tag" from "v1.24.3-cern.0" to "v1.25.3-cern.0"'
)


def _git(root: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.org",
    )
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, env=env
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, str]]:
    """The fleet in git: (root, the first commit, the last one that changed dist/test/)."""
    root = tmp_path_factory.mktemp("status") / "fleet"
    shutil.copytree(HYBRID, root)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.fleet.contexts]\ntest = "mgmt-test"\n')
    assert main(["--root", str(root), "synth", "--no-cache"]) == 0
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "first")
    first = _git(root, "rev-parse", "HEAD")
    module = root / "clusters" / "hybrid_sso.py"
    text = module.read_text()
    assert "node_count=per_env(dev=1, test=2, prod=3)" in text
    module.write_text(
        text.replace("per_env(dev=1, test=2, prod=3)", "per_env(dev=1, test=4, prod=3)")
    )
    assert main(["--root", str(root), "synth", "--no-cache"]) == 0
    _git(root, "commit", "-qam", "sso: 4 nodes in test")
    yield root, first, _git(root, "rev-parse", "HEAD")


@pytest.fixture
def converged(project: tuple[Path, str, str]) -> World:
    """The management cluster of ``test`` with everything converged at HEAD."""
    root, _, head = project
    config = FleetConfig.load(root)
    return world(render_environment(load_fleet(config), ENV), head)


def _read(root: Path, url: str, tmp: Path, **selection: Any) -> FleetStatus:
    config = FleetConfig.load(root)
    path = kubeconfig(tmp / "kubeconfig", {"mgmt-test": url})
    clients = kube_clients(config, kubeconfig=path, connect_timeout=2, read_timeout=2)
    sel = Selection(environments=(ENV,), **selection)
    return read_status(load_fleet(config), sel, clients=clients)


def _row(status: FleetStatus, name: str) -> Any:
    return next(r for r in status.clusters if r.cluster == name)


def test_every_served_kind_is_checked_against_its_pinned_crd(converged: World) -> None:
    """The world holds every kind the fleet's plug-ins read, each object valid for its CRD
    version: the status paths are the upstream types' (an unknown field fails)."""
    paths = set(converged.objects)
    for path in (
        "/apis/argoproj.io/v1alpha1/applications",
        "/apis/cluster.argocd.crossplane.io/v1alpha1/clusters",
        "/apis/containerinfra.openstack.crossplane.io/v1alpha1/clusterv1s",
        "/apis/containerinfra.openstack.crossplane.io/v1alpha1/nodegroupv1s",
        "/apis/cluster.x-k8s.io/v1beta2/clusters",
        "/apis/cluster.x-k8s.io/v1beta2/machinepools",
        "/apis/infrastructure.cluster.x-k8s.io/v1beta2/ocimanagedcontrolplanes",
        "/apis/infrastructure.cluster.x-k8s.io/v1beta2/ocimanagedmachinepools",
    ):
        assert path in paths
    body = find(converged, "ClusterV1", MAGNUM)
    body["status"]["atProvider"]["coeVersoin"] = "v1.25.3"
    with pytest.raises(AssertionError, match="coeVersoin"):
        converged.validate()


def test_a_converged_environment_reads_converged_through_the_client(
    project: tuple[Path, str, str], converged: World, tmp_path: Path
) -> None:
    root, _, head = project
    with serve(converged) as url:
        status = _read(root, url, tmp_path)
    assert status.problems == []
    assert status.orphans == () and status.missing == []
    assert {r.verdict for r in status.clusters} == {Verdict.CONVERGED}
    magnum = _row(status, MAGNUM)
    assert (magnum.declared_version, magnum.live_version) == ("v1.25.3", "v1.25.3-cern.0")
    assert magnum.version_matches and magnum.registered is True
    assert magnum.application is not None
    assert magnum.application.revision == head
    assert magnum.application.revision_state is RevisionState.CURRENT
    oke = _row(status, OKE)
    assert (oke.live_version, oke.registered) == ("v1.30.1", True)
    assert status.converged()
    # Paging: the client followed `continue` (the server pages by the client's limit).
    assert converged.requests.count("/apis/argoproj.io/v1alpha1/applications") == 1


def test_a_cluster_converging_is_waited_for(
    project: tuple[Path, str, str], converged: World, tmp_path: Path
) -> None:
    """An OKE upgrade rolling out: the control plane still on v1.29.1 and ``RollingOut``
    True; two reads later it is done. ``--wait`` exits 0 once converged."""
    root, _, _ = project
    plane = find(converged, "OCIManagedControlPlane", OKE)
    cluster = find(converged, "Cluster", OKE)
    conditions = cluster["status"]["conditions"]
    before = json.loads(json.dumps(conditions))
    plane["status"]["version"] = "v1.29.1"
    conditions[-1] = metav1_condition(
        "RollingOut",
        "True",
        reason="RollingOut",
        message="* Control plane: rolling out to v1.30.1",
        since=T1,
    )
    conditions[4] = metav1_condition(
        "ControlPlaneMachinesUpToDate",
        "False",
        reason="NotUpToDate",
        since=T1,
        message="* Control plane: version v1.29.1, declared v1.30.1",
    )
    converged.validate()
    reads: list[int] = []

    def advance(path: str) -> None:
        if path.endswith("/applications"):
            reads.append(1)
            if len(reads) == 3:
                plane["status"]["version"] = "v1.30.1"
                conditions[:] = before

    converged.on_list = advance
    config = FleetConfig.load(root)
    out, err = io.StringIO(), io.StringIO()
    with serve(converged) as url:
        path = kubeconfig(tmp_path / "kubeconfig", {"mgmt-test": url})
        first = _read(root, url, tmp_path, clusters=(OKE,))
        row = first.clusters[0]
        assert row.verdict is Verdict.PROGRESSING
        assert row.live_version == "v1.29.1" and row.version_matches is False
        assert row.problem is not None and row.problem.what == "ControlPlaneMachinesUpToDate"
        assert row.problem.message == "* Control plane: version v1.29.1, declared v1.30.1"
        code = run_status(
            config,
            Selection(environments=(ENV,), clusters=(OKE,)),
            clients=kube_clients(config, kubeconfig=path),
            fmt="json",
            wait=True,
            timeout=30,
            interval=0.1,
            out=out,
            err=err,
        )
    assert code == 0
    assert "waiting" in err.getvalue()
    assert json.loads(out.getvalue())["clusters"][0]["verdict"] == "converged"


def test_a_magnum_upgrade_refused_by_upjet_fails_with_the_whole_message(
    project: tuple[Path, str, str], converged: World, tmp_path: Path
) -> None:
    root, _, _ = project
    body = find(converged, "ClusterV1", MAGNUM)
    body["status"]["atProvider"]["coeVersion"] = "v1.24.3-cern.0"
    body["status"]["conditions"] = [
        condition("Ready"),
        condition("Synced", "False", "ReconcileError", REFUSAL, since=T1),
        condition(
            "LastAsyncOperation",
            "False",
            "AsyncUpdateFailure",
            REFUSAL.removeprefix("update failed: "),
            since=T1,
        ),
    ]
    converged.validate()
    with serve(converged) as url:
        status = _read(root, url, tmp_path)
    row = _row(status, MAGNUM)
    assert row.verdict is Verdict.FAILED and not row.converged()
    assert row.problem is not None
    assert (row.problem.kind, row.problem.what, row.problem.reason) == (
        "ClusterV1",
        "Synced",
        "ReconcileError",
    )
    assert row.problem.message == REFUSAL and row.problem.since == T1
    assert row.live_version == "v1.24.3-cern.0" and row.version_matches is False
    assert status.verdict is Verdict.FAILED
    # The table keeps the whole message, wrapped under the row, within 100 columns.
    out = io.StringIO()
    from fleet.cli.status import render_table

    render_table(status, stream=out)
    text = out.getvalue()
    assert all(len(line) <= 100 for line in text.splitlines())
    assert " ".join(REFUSAL.split()) in " ".join(text.split())


def test_an_oke_pool_failing_names_the_pool_and_its_failure_messages(
    project: tuple[Path, str, str], converged: World, tmp_path: Path
) -> None:
    root, _, _ = project
    pool = find(converged, "OCIManagedMachinePool", f"{OKE}-general")
    pool["status"].update(
        ready=False,
        nodepoolLifecycleState="FAILED",
        failureMessages=["Out of host capacity."],
        conditions=[
            v1beta1_condition(
                "Ready", "False", severity="Error", reason="NodePoolProvisionFailed", since=T1
            ),
            v1beta1_condition(
                "NodePoolReady",
                "False",
                severity="Error",
                reason="NodePoolProvisionFailed",
                since=T1,
            ),
        ],
    )
    machine_pool = find(converged, "MachinePool", f"{OKE}-general")
    machine_pool["status"]["conditions"][1] = metav1_condition(
        "InfrastructureReady",
        "False",
        reason="NotReady",
        message="OCIManagedMachinePool is not ready",
        since=T1,
    )
    converged.validate()
    with serve(converged) as url:
        status = _read(root, url, tmp_path)
    row = _row(status, OKE)
    assert row.verdict is Verdict.FAILED
    assert row.problem is not None
    assert (row.problem.kind, row.problem.name, row.problem.reason) == (
        "OCIManagedMachinePool",
        f"{OKE}-general",
        "NodePoolProvisionFailed",
    )
    assert row.problem.message == "Out of host capacity."
    assert any(f.what == "InfrastructureReady" for f in row.findings)
    assert _row(status, MAGNUM).verdict is Verdict.CONVERGED


def test_argocd_behind_on_revision_is_progressing_and_wait_times_out_with_3(
    project: tuple[Path, str, str], converged: World, tmp_path: Path
) -> None:
    root, first, head = project
    app = find(converged, "Application", f"fleet-{ENV}-cluster-{MAGNUM}")
    app["status"]["sync"]["revision"] = first
    converged.validate()
    config = FleetConfig.load(root)
    out, err = io.StringIO(), io.StringIO()
    with serve(converged) as url:
        status = _read(root, url, tmp_path)
        path = kubeconfig(tmp_path / "kubeconfig", {"mgmt-test": url})
        started = time.monotonic()
        code = run_status(
            config,
            Selection(environments=(ENV,), clusters=(MAGNUM,)),
            clients=kube_clients(config, kubeconfig=path),
            fmt="json",
            wait=True,
            timeout=0.5,
            interval=0.2,
            out=out,
            err=err,
        )
    row = _row(status, MAGNUM)
    assert row.application is not None
    assert row.application.revision_state is RevisionState.BEHIND
    assert (row.application.revision, row.application.expected) == (first, head)
    assert row.verdict is Verdict.PROGRESSING
    assert row.problem is not None and row.problem.what == "revision"
    assert code == 3 and time.monotonic() - started < 10
    assert "timeout" in err.getvalue()


def test_orphans_and_missing_objects_are_listed(
    project: tuple[Path, str, str], converged: World, tmp_path: Path
) -> None:
    """A cluster whose declaration is gone (its objects kept by ``Delete=false``) and a
    node group rendered but not live."""
    root, _, _ = project
    old_app = f"fleet-{ENV}-cluster-k8s-old-{ENV}"
    template = find(converged, "ClusterV1", MAGNUM)
    orphan = json.loads(json.dumps(template))
    orphan["metadata"]["name"] = f"k8s-old-{ENV}"
    orphan["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = (
        f"{old_app}:containerinfra.openstack.crossplane.io/ClusterV1:/k8s-old-{ENV}"
    )
    converged.put(orphan, "clusterv1s")
    app = json.loads(json.dumps(find(converged, "Application", f"fleet-{ENV}-cluster-{MAGNUM}")))
    app["metadata"]["name"] = old_app
    app["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = (
        f"fleet-{ENV}:argoproj.io/Application:argocd/{old_app}"
    )
    converged.put(app, "applications")
    unrelated = json.loads(json.dumps(orphan))
    unrelated["metadata"]["name"] = "someone-elses"
    del unrelated["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"]
    converged.put(unrelated, "clusterv1s")
    groups = converged.objects["/apis/containerinfra.openstack.crossplane.io/v1alpha1/nodegroupv1s"]
    gone = groups.pop(0)
    with serve(converged) as url:
        status = _read(root, url, tmp_path)
    names = sorted((o.ref.kind, o.ref.name, o.application) for o in status.orphans)
    assert names == [
        ("Application", old_app, f"fleet-{ENV}"),
        ("ClusterV1", f"k8s-old-{ENV}", old_app),
    ]
    assert [m.name for m in status.missing] == [gone["metadata"]["name"]]
    owner = next(r for r in status.clusters if r.missing)
    assert owner.verdict is Verdict.PROGRESSING


def test_a_403_is_one_line_naming_the_environment_and_the_role_and_other_rows_show(
    project: tuple[Path, str, str], converged: World, tmp_path: Path
) -> None:
    root, _, _ = project
    path = "/apis/infrastructure.cluster.x-k8s.io/v1beta2/ocimanagedmachinepools"
    converged.statuses[path] = (
        403,
        'ocimanagedmachinepools.infrastructure.cluster.x-k8s.io is forbidden: User "ci" cannot '
        'list resource "ocimanagedmachinepools" in API group "infrastructure.cluster.x-k8s.io" '
        "at the cluster scope",
    )
    with serve(converged) as url:
        status = _read(root, url, tmp_path)
    [problem] = status.problems
    assert problem.startswith(f"{ENV}: ") and "403 Forbidden" in problem
    assert "fleet-status-reader" in problem and "\n" not in problem
    assert _row(status, OKE).verdict is Verdict.UNKNOWN
    assert _row(status, MAGNUM).verdict is Verdict.CONVERGED


def test_expired_credentials_and_a_missing_crd_are_one_line_each(
    project: tuple[Path, str, str], converged: World, tmp_path: Path
) -> None:
    root, _, _ = project
    del converged.objects["/apis/cluster.x-k8s.io/v1beta2/machinepools"]
    converged.known.discard("/apis/cluster.x-k8s.io/v1beta2/machinepools")
    with serve(converged) as url:
        status = _read(root, url, tmp_path)
        [missing] = status.problems
        assert "does not serve machinepools.cluster.x-k8s.io/v1beta2" in missing
        assert "install cluster-api" in missing
        config = FleetConfig.load(root)
        stale = tmp_path / "stale"
        stale.write_text(
            kubeconfig(tmp_path / "k", {"mgmt-test": url}).read_text().replace("test-token", "old")
        )
        expired = read_status(
            load_fleet(config),
            Selection(environments=(ENV,)),
            clients=kube_clients(config, kubeconfig=stale),
        )
    [line] = expired.problems
    assert line.startswith(f"{ENV}: ") and "401 Unauthorized" in line and "log in again" in line
    assert "old-not-a-secret" not in line


def test_a_server_that_never_answers_times_out_in_one_line(
    project: tuple[Path, str, str], tmp_path: Path
) -> None:
    root, _, _ = project
    silent = World(hang=True)
    started = time.monotonic()
    with serve(silent) as url:
        status = _read(root, url, tmp_path)
    assert time.monotonic() - started < 10
    [line] = status.problems
    assert line.startswith(f"{ENV}: ") and "did not answer within 2 s" in line
    assert status.environments[0].unreachable
    assert {r.verdict for r in status.clusters} == {Verdict.UNKNOWN}
    assert len(silent.requests) == 1  # one attempt, no retries, then the environment stops


def test_unreachable_management_cluster_exits_non_zero_within_30_s_without_traceback(
    project: tuple[Path, str, str], tmp_path: Path
) -> None:
    """The done-when of the issue, as a user runs it: the installed command, the real
    kubeconfig, a closed port on 127.0.0.1."""
    root, _, _ = project
    path = kubeconfig(tmp_path / "kubeconfig", {"mgmt-test": "https://127.0.0.1:9"})
    started = time.monotonic()
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "fleet"),
            "--root",
            str(root),
            "status",
            "--env",
            ENV,
            "--kubeconfig",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert time.monotonic() - started < 30
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {ENV}: cannot reach")
    assert json.loads(done.stdout)["environments"][0]["unreachable"] is True


def test_help_documents_json_and_wait() -> None:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "fleet"), "status", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert "--format {table,json}" in done.stdout and "json" in done.stdout
    assert "--wait" in done.stdout and "exit 3" in done.stdout
