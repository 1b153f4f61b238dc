"""fleet.testing: a fixture fleet, synth it, get objects by kind and name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from crd_samples import crds_dir

from fleet import (
    ClusterTemplate,
    Fleet,
    JsonPatch,
    MagnumCluster,
    OpenStackProject,
    TemplateCatalog,
    testing,
)
from fleet.checks.problem import InvalidObjects


def build(tmp_path: Path, **overrides: Any) -> Fleet:
    app = testing.fleet(environments=["dev", "prod"], root=tmp_path)
    TemplateCatalog.of(app).add(
        ClusterTemplate(
            name="tpl-t",
            kubernetes_version="v1.29.2",
            uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
            base_labels={"kube_tag": "v1"},
        )
    )
    project = OpenStackProject(app, "proj", project_name="P")
    MagnumCluster(
        app,
        "web",
        name="web-{env}",
        environments=["dev", "prod"],
        project=project,
        template="tpl-t",
        flavor="m2.small",
        keypair="k",
        **{"node_count": 2, **overrides},
    )
    return app


def test_fleet_has_the_given_environments(tmp_path: Path) -> None:
    app = testing.fleet(environments=["qa"], root=tmp_path)
    assert app.environment_names == ("qa",)
    assert app.config.root == tmp_path.resolve()


def test_get_by_kind_and_name_in_one_line(tmp_path: Path) -> None:
    out = testing.synth(build(tmp_path))
    assert out.get("ClusterV1", "web-dev", env="dev")["spec"]["forProvider"]["nodeCount"] == 2
    assert out.get("ClusterV1", "web-prod")["metadata"]["name"] == "web-prod"
    assert out.names("ClusterV1") == ["web-dev", "web-prod"]
    assert [m.environment for m in out.all("ClusterV1")] == ["dev", "prod"]


def test_only_the_environments_asked_for(tmp_path: Path) -> None:
    out = testing.synth(build(tmp_path), ["prod"])
    assert list(out.manifests) == ["prod"]


def test_an_unknown_name_lists_the_nearest(tmp_path: Path) -> None:
    out = testing.synth(build(tmp_path))
    with pytest.raises(KeyError, match=r"no ClusterV1 'web-dve' in dev \(did you mean 'web-dev'"):
        out.get("ClusterV1", "web-dve", env="dev")


def test_a_name_in_several_environments_needs_env(tmp_path: Path) -> None:
    out = testing.synth(build(tmp_path))
    with pytest.raises(KeyError, match=r"in several environments \(dev, prod\); pass env="):
        out.get("ProviderConfig", "proj")


@pytest.mark.skipif(not crds_dir().is_dir(), reason="shared CRDs not available")
def test_validate_runs_the_schema_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLEET_CRDS_DIR", str(crds_dir()))
    app = build(tmp_path)
    app.declaration("web").add_json_patch(
        JsonPatch.replace("/spec/forProvider/nodeCount", "two"), kind="ClusterV1"
    )
    assert testing.synth(app).get("ClusterV1", "web-dev", env="dev")  # not validated
    with pytest.raises(InvalidObjects, match="nodeCount"):
        testing.synth(app, validate=True)


def test_diff_of_an_edit_shows_the_changed_field_and_passes(tmp_path: Path) -> None:
    out = testing.diff(build(tmp_path / "a"), build(tmp_path / "b", node_count=3))
    assert out.errors == []
    assert [env.environment for env in out.diff.environments] == ["dev", "prod"]
    [change] = out.diff.environments[0].changed
    assert change.after.label() == "ClusterV1 web-dev"
    report = out.report()
    assert "  ~ ClusterV1 web-dev" in report
    assert "nodeCount: 2 -> 3" in report


def test_diff_refuses_removing_a_cluster_and_lets_a_retired_one_go(tmp_path: Path) -> None:
    """The deletion guard of ``fleet diff`` through ``fleet.testing``: a cluster whose
    definition is gone fails (exit 1); the same objects removed by ``retired=True`` pass."""
    before = testing.synth(build(tmp_path / "a"))
    gone = testing.fleet(environments=["dev", "prod"], root=tmp_path / "b")
    OpenStackProject(gone, "proj", project_name="P")
    clusters, provider_config = testing.diff(before, gone).errors
    assert clusters.startswith("error: removed definitions: 2 clusters removed (2 objects in ")
    assert "web-dev, web-prod; ArgoCD would prune them" in clusters
    # the project renders only where a cluster uses it: its ProviderConfig goes too
    assert provider_config.startswith("error: removed definitions: ProviderConfig proj removed")
    retired = testing.diff(before, build(tmp_path / "c", retired=True))
    assert retired.errors == []
    assert [len(env.removed) for env in retired.diff.environments] == [1, 1]


def test_diff_in_one_environment_only(tmp_path: Path) -> None:
    out = testing.diff(build(tmp_path / "a"), build(tmp_path / "b", node_count=3), ["prod"])
    assert [env.environment for env in out.diff.environments] == ["prod"]
