"""The upgrade rollout: rings, targets and the committed state (``fleet.Rollout``), the
plan, each promotion step of the two-ring fixture fleet (``tests/fixtures/fleets/rollout``),
and ``fleet upgrade promote``'s gate in a git repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path

import pytest
from builders import magnum, oke
from support import FIXTURE_FLEETS
from syrupy.assertion import SnapshotAssertion

from fleet import (
    ClusterTemplate,
    MagnumCluster,
    MagnumTarget,
    OkeRelease,
    OkeTarget,
    Ring,
    Rollout,
    UpgradeTarget,
    testing,
)
from fleet.cli.main import main
from fleet.cli.upgrade import run_promote
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.fleet import Fleet
from fleet.pipeline.discovery import load_fleet
from fleet.upgrades.gate import Unconverged
from fleet.upgrades.rings import Member
from fleet.upgrades.state import Progress, RolloutState, parse_state

FIXTURE = FIXTURE_FLEETS / "rollout"
STATES = (
    "",
    "rings:\n  first: {step: 1, target: kubernetes-1.31}\n",
    "rings:\n  first: {step: 2, target: kubernetes-1.31}\n",
    "rings:\n  first: {step: 2, target: kubernetes-1.31}\n"
    "  second: {step: 1, target: kubernetes-1.31}\n",
    "rings:\n  first: {step: 2, target: kubernetes-1.31}\n"
    "  second: {step: 2, target: kubernetes-1.31}\n",
)
"""The state after each promotion step of the fixture fleet, in order."""


def project(tmp_path: Path, state: str = "") -> Path:
    root = tmp_path / "fleet"
    if not root.exists():
        root.mkdir(parents=True)
        shutil.copy(FIXTURE / "pyproject.toml", root)
        shutil.copytree(
            FIXTURE / "clusters", root / "clusters", ignore=shutil.ignore_patterns("__py*")
        )
    if state:
        (root / "rollout.yaml").write_text(state)
    else:
        (root / "rollout.yaml").unlink(missing_ok=True)
    return root


def loaded(tmp_path: Path, state: str = "") -> Fleet:
    fleet = load_fleet(FleetConfig.load(project(tmp_path, state)))
    fleet.run_phases()
    return fleet


def rollout(fleet: Fleet) -> Rollout:
    found = Rollout.of(fleet)
    assert found is not None
    return found


# --- each promotion step of the two-ring fixture fleet ------------------------------------


@pytest.mark.parametrize("step", range(1, len(STATES)))
def test_each_promotion_step_changes_its_ring_only(
    tmp_path: Path, step: int, snapshot: SnapshotAssertion
) -> None:
    """What ``fleet diff`` says of each promotion commit: the ring's environment changes, the
    other does not; the Magnum clusters move with the first step, OKE's control plane with
    the first and its pools with the second; nothing fails."""
    before = loaded(tmp_path / "a", STATES[step - 1])
    after = loaded(tmp_path / "b", STATES[step])
    out = testing.diff(before, after)
    assert out.errors == []
    ring_env = "dev" if step <= 2 else "prod"
    changed = {e.environment: len(e.changed) for e in out.diff.environments}
    assert changed[ring_env] > 0
    assert all(n == 0 for env, n in changed.items() if env != ring_env)
    assert not any(e.added or e.removed for e in out.diff.environments)
    assert out.report(title=f"Promotion step {step}.") == snapshot


@pytest.mark.parametrize("step", range(len(STATES)))
def test_the_plan_at_each_step(tmp_path: Path, step: int, snapshot: SnapshotAssertion) -> None:
    fleet = loaded(tmp_path, STATES[step])
    from fleet.upgrades.plan import plan

    result = plan(rollout(fleet))
    statuses = [s.status.value for r in result.rings for s in r.steps]
    assert statuses.count("promoted") == step
    assert statuses.count("next") == (1 if step < 4 else 0)
    assert json.dumps(result.to_dict(), indent=2, sort_keys=True) == snapshot


def test_a_cluster_takes_the_target_only_once_its_ring_is_promoted(tmp_path: Path) -> None:
    fleet = loaded(tmp_path, STATES[1])
    out = testing.synth(fleet)
    dev = out.get("ClusterV1", "api-dev")
    prod = out.get("ClusterV1", "api-prod")
    assert dev["metadata"]["annotations"]["fleet.openstack/cluster-template"] == (
        "capi-helm-1.31.2"
    )
    assert prod["metadata"]["annotations"]["fleet.openstack/cluster-template"] == (
        "capi-helm-1.30.4"
    )
    control_plane = out.get("OCIManagedControlPlane", "edge-dev")
    assert control_plane["spec"]["version"] == "v1.31.1"
    pool = out.get("OCIManagedMachinePool", "edge-dev-general")
    assert pool["spec"]["version"] == "v1.30.1"  # step 1: the control plane only
    legacy = out.get("ClusterV1", "legacy-dev-v25")  # Heat: blue/green, untouched
    assert legacy["metadata"]["annotations"]["fleet.openstack/kubernetes-version"] == "v1.25.3"
    after = testing.synth(loaded(tmp_path, STATES[2]))
    pool = after.get("OCIManagedMachinePool", "edge-dev-general")
    assert pool["spec"]["version"] == "v1.31.1"
    assert pool["spec"]["nodeSourceViaImage"]["imageId"].endswith("okenode131")
    arm = after.get("OCIManagedMachinePool", "edge-dev-arm")
    assert arm["spec"]["version"] == "v1.30.1"  # pins its image: stays


def test_the_fixture_fleet_renders_the_same_bytes_twice(tmp_path: Path) -> None:
    one = testing.synth(loaded(tmp_path / "a", STATES[3]))
    two = testing.synth(loaded(tmp_path / "b", STATES[3]))
    assert [m.body for m in one.all()] == [m.body for m in two.all()]


# --- rings ------------------------------------------------------------------------------


def rollout_fleet(rings: Sequence[Ring], *, root: Path, **targets: object) -> Fleet:
    app = testing.fleet(environments=["dev", "prod"], root=root)
    tpl = ClusterTemplate(
        name="capi-1.30",
        driver="k8s_capi_helm_v1",
        kubernetes_version="v1.30.4",
        uuid="a1a1a1a1-0000-4000-8000-000000001304",
    )
    magnum(app, "api", template=tpl, environments=["dev", "prod"])
    oke(app, "edge", environments=["prod"])
    Rollout(
        app,
        "upgrades",
        rings=rings,
        targets=[
            UpgradeTarget(
                name="kubernetes-1.31",
                clouds=[
                    MagnumTarget(
                        templates={
                            "k8s_capi_helm_v1": ClusterTemplate(
                                name="capi-1.31",
                                driver="k8s_capi_helm_v1",
                                kubernetes_version="v1.31.2",
                                uuid="a1a1a1a1-0000-4000-8000-000000001312",
                            )
                        }
                    ),
                    OkeTarget(
                        releases={
                            "eu-frankfurt-1": OkeRelease(
                                kubernetes_version="v1.31.1",
                                node_image_id="ocid1.image.oc1.eu-frankfurt-1.aaaanew",
                            )
                        }
                    ),
                ],
            )
        ],
    )
    return app


def test_a_cluster_in_no_ring_or_in_two_is_an_error_naming_it(tmp_path: Path) -> None:
    app = rollout_fleet([Ring(name="dev", environments=["dev"], soak=timedelta(0))], root=tmp_path)
    with pytest.raises((DefinitionError, DefinitionErrors)) as e:
        testing.synth(app)
    text = str(e.value)
    assert "prod/api-prod is in no ring of the rollout" in text
    assert "prod/edge-prod is in no ring" in text
    assert "test_rollout.py:" in text and "(api)" in text
    app = rollout_fleet(
        [
            Ring(name="canary", clusters=["api-dev"], soak=timedelta(0)),
            Ring(name="all", environments=["dev", "prod"], soak=timedelta(0)),
        ],
        root=tmp_path,
    )
    with pytest.raises(
        (DefinitionError, DefinitionErrors),
        match=r"dev/api-dev is in 2 rings .*ring canary.*ring all",
    ):
        testing.synth(app)
    ok = rollout_fleet(
        [
            Ring(name="canary", clusters=["api-dev"], soak=timedelta(0)),
            Ring(name="all", environments=["dev", "prod"], exclude=["api-dev"], soak=timedelta(0)),
        ],
        root=tmp_path,
    )
    testing.synth(ok)
    members = {m.label: m.ring.name for m in rollout(ok).members}
    assert members == {"dev/api-dev": "canary", "prod/api-prod": "all", "prod/edge-prod": "all"}


def test_ring_selectors(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError, match="give environments, labels or clusters"):
        Ring(name="empty", soak=timedelta(0))
    with pytest.raises(DefinitionError, match="soak: must be 0 or more"):
        Ring(name="r", environments=["dev"], soak=timedelta(hours=-1))
    app = rollout_fleet(
        [
            Ring(name="a", clusters=["ap"], soak=timedelta(0)),
            Ring(name="b", environments=["dev", "prod"], exclude=["ap"], soak=timedelta(0)),
        ],
        root=tmp_path,
    )
    with pytest.raises(
        DefinitionErrors,
        match=r"\(ring a\): clusters: 'ap' is no cluster of the fleet \(did you mean",
    ):
        testing.synth(app)
    labelled = testing.fleet(environments=["dev"], root=tmp_path)
    tpl = ClusterTemplate(
        name="t",
        driver="k8s_capi_helm_v1",
        kubernetes_version="v1.30.1",
        uuid="a" * 8 + "-0000-4000-8000-" + "0" * 12,
    )
    magnum(labelled, "x", template=tpl, fleet_labels={"tier": "gold"})
    ring = Ring(name="gold", labels={"tier": "gold"}, soak=timedelta(0))
    x = next(d for d in labelled.declarations() if isinstance(d, MagnumCluster))
    assert ring.matches(x, "dev")
    assert not Ring(name="silver", labels={"tier": "silver"}, soak=timedelta(0)).matches(x, "dev")


def test_state_file_errors_name_their_line(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError, match=r"^rollout.yaml:3: state: ring 'first': step"):
        parse_state("rings:\n  # c\n  first: {step: 0, target: t}\n", source="rollout.yaml")
    with pytest.raises(DefinitionError, match=r"rollout.yaml:1: state: unknown key 'ring'"):
        parse_state("ring: {}\n", source="rollout.yaml")
    with pytest.raises(DefinitionError, match=r"rollout.yaml:3: state: not YAML"):
        parse_state("rings:\n  a: [\n", source="rollout.yaml")
    with pytest.raises(
        (DefinitionError, DefinitionErrors), match=r"rollout.yaml:2: state: ring 'qa' is not a ring"
    ):
        loaded(tmp_path, "rings:\n  qa: {step: 1, target: kubernetes-1.31}\n")
    with pytest.raises(
        (DefinitionError, DefinitionErrors),
        match=r"runs target 'kubernetes-1\.30', which the rollout",
    ):
        loaded(tmp_path, "rings:\n  first: {step: 1, target: kubernetes-1.30}\n")
    with pytest.raises(
        (DefinitionError, DefinitionErrors), match=r"at step 3 of 'kubernetes-1\.31', which has 2"
    ):
        loaded(tmp_path, "rings:\n  first: {step: 3, target: kubernetes-1.31}\n")


def test_state_round_trips_in_canonical_form() -> None:
    state = RolloutState().with_progress("second", Progress("k-1.31", 1))
    state = state.with_progress("first", Progress("k-1.31", 2))
    text = state.dump()
    assert text.index("first:") < text.index("second:")
    assert parse_state(text, source="x").rings == state.rings
    assert parse_state(RolloutState().dump(), source="x").rings == {}


def test_a_target_never_downgrades_a_cluster(tmp_path: Path) -> None:
    """A cluster declared newer than the target keeps what it declares."""
    root = project(tmp_path, STATES[4])
    module = root / "clusters" / "magnum.py"
    module.write_text(
        module.read_text().replace("HELM_1_30", "HELM_1_31").replace("HELM_1_31,", "HELM_1_31,", 1)
    )
    fleet = load_fleet(FleetConfig.load(root))
    fleet.run_phases()
    out = testing.synth(fleet)
    api = out.get("ClusterV1", "api-dev")
    assert api["metadata"]["annotations"]["fleet.openstack/cluster-template"] == "capi-helm-1.31.2"
    path = rollout(fleet).path(rollout(fleet).target, member(fleet, "dev/api-dev"))
    assert path.mode.value == "current"


def member(fleet: Fleet, label: str) -> Member:
    return next(m for m in rollout(fleet).members if m.label == label)


def test_a_minor_skip_in_the_target_is_refused_in_the_plan(tmp_path: Path) -> None:
    root = project(tmp_path)
    module = root / "clusters" / "_templates.py"
    module.write_text(
        module.read_text().replace('kubernetes_version="v1.31.2"', 'kubernetes_version="v1.32.0"')
    )
    fleet = load_fleet(FleetConfig.load(root))
    fleet.run_phases()
    path = rollout(fleet).path(rollout(fleet).target, member(fleet, "dev/api-dev"))
    assert path.mode.value == "refused" and "skips 1.31" in path.why
    assert main(["--root", str(root), "upgrade", "plan"]) == 0


# --- the command line -------------------------------------------------------------------


def test_plan_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path, STATES[1])
    assert main(["--root", str(root), "upgrade", "plan"]) == 0
    out = capsys.readouterr().out
    assert "Next: ring first, step 2 of 2 of kubernetes-1.31" in out
    assert "step 1 of 2 [promoted]" in out
    assert "dev/legacy-dev-v25  Magnum  blue/green" in out
    assert "pool arm pins image_id: stays at v1.30.1" in out
    assert main(["--root", str(root), "upgrade", "plan", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["next"] == {"target": "kubernetes-1.31", "ring": "first", "step": 2, "of": 2}


def test_plan_without_a_rollout_says_how_to_declare_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--root", str(FIXTURE_FLEETS / "magnum"), "upgrade", "plan"]) == 2
    assert "declares no upgrade rollout" in capsys.readouterr().err


# --- promote and its gate, in a git repository --------------------------------------------


def git(root: Path, *args: str, when: datetime | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    if when is not None:
        env["GIT_COMMITTER_DATE"] = env["GIT_AUTHOR_DATE"] = when.isoformat()
    return subprocess.run(
        ["git", "-C", str(root), *args], env=env, check=True, capture_output=True, text=True
    ).stdout


def converged(_: Fleet) -> Unconverged:
    return lambda members: []


def not_converged(_: Fleet) -> Unconverged:
    return lambda members: [(m, "ArgoCD: OutOfSync") for m in members[:1]]


def promote(root: Path, *, now: datetime, check: object = converged) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    code = run_promote(
        FleetConfig.load(root),
        now=now,
        unconverged=check,  # type: ignore[arg-type]
        dry_run=False,
        out=out,
        err=err,
    )
    return code, out.getvalue(), err.getvalue()


def test_promote_walks_the_rings_behind_the_gate(tmp_path: Path) -> None:
    root = project(tmp_path)
    git(root, "init", "-q", "-b", "main")
    assert main(["--root", str(root), "synth"]) == 0
    start = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fleet", when=start)

    code, out, _ = promote(root, now=start)
    assert code == 0, out
    assert "Promoted ring first, step 1 of 2 of kubernetes-1.31" in out
    assert "dev/edge-dev: control plane: v1.30.1 -> v1.31.1" in out
    assert (root / "rollout.yaml").read_text() == RolloutState().with_progress(
        "first", Progress("kubernetes-1.31", 1)
    ).dump()
    # dist/ is rendered with it: the commit is complete
    assert main(["--root", str(root), "synth", "--check"]) == 0

    # not committed yet: the next step waits
    code, _, err = promote(root, now=start)
    assert code == 1 and "is not committed" in err
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "promote first 1", when=start + timedelta(hours=1))

    # step 2 of the same ring: no soak, but its clusters must run step 1
    code, _, err = promote(root, now=start + timedelta(hours=2), check=not_converged)
    assert code == 1
    assert "not converged at ring first, step 1 of 2" in err
    assert "ArgoCD: OutOfSync" in err
    code, out, _ = promote(root, now=start + timedelta(hours=2))
    assert code == 0 and "dev/edge-dev: node pools" in out
    git(root, "add", "-A")
    landed = start + timedelta(hours=3)
    git(root, "commit", "-q", "-m", "promote first 2", when=landed)

    # the next ring: soaked two days since the commit that promoted first's last step
    code, _, err = promote(root, now=landed + timedelta(days=1))
    assert code == 1
    assert "ring first has soaked 24 h 00 min" in err and "it must soak 2 days" in err
    code, out, _ = promote(root, now=landed + timedelta(days=2))
    assert code == 0 and "Promoted ring second, step 1 of 2" in out
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "promote second 1", when=landed + timedelta(days=2))
    code, out, _ = promote(root, now=landed + timedelta(days=2, hours=1))
    assert code == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "promote second 2", when=landed + timedelta(days=2, hours=1))
    code, out, _ = promote(root, now=landed + timedelta(days=3))
    assert code == 0 and "Nothing to promote" in out


def test_a_failed_synth_leaves_the_state_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fleet")

    def broken(*args: object, **kwargs: object) -> None:
        raise DefinitionError("broken render")

    monkeypatch.setattr("fleet.pipeline.synth.synthesize", broken)
    with pytest.raises(DefinitionError, match="broken render"):
        promote(root, now=datetime.now(tz=UTC))
    assert not (root / "rollout.yaml").exists()


def test_the_state_file_is_inside_the_repository(tmp_path: Path) -> None:
    app = testing.fleet(environments=["dev"], root=tmp_path)
    ring = Ring(name="all", environments=["dev"], soak=timedelta(0))
    target = UpgradeTarget(
        name="t",
        clouds=[
            OkeTarget(
                releases={
                    "eu-frankfurt-1": OkeRelease(
                        kubernetes_version="v1.31.1",
                        node_image_id="ocid1.image.oc1.eu-frankfurt-1.aaaa",
                    )
                }
            )
        ],
    )
    for state in ("/etc/rollout.yaml", "../rollout.yaml"):
        with pytest.raises(DefinitionError, match="state: must be a path inside"):
            Rollout(app, f"r{len(state)}", rings=[ring], targets=[target], state=state)
