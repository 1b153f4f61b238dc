"""``fleet diff`` end to end: a tiny git repository, its base rendered in a git worktree.

Each repository carries its own copy of ``constructs/fleet``, so the base revision is
rendered by the base's code in a subprocess, as in a real pull request.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
import textwrap
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from crd_samples import crds_dir
from support import REPO

from fleet.checks import crds as crds_module
from fleet.cli.main import main
from fleet.pipeline.diff import crds_dir_for

MAGNUM = "containerinfra.openstack.crossplane.io"

PYPROJECT = """\
[tool.fleet]
environments = ["dev", "prod"]
"""


def definition(
    *,
    nodes: int = 1,
    labels: str = "{}",
    alpha_envs: str = '["dev", "prod"]',
    alpha_retired: bool = False,
    beta_name: str = "beta-{env}",
    argocd: bool = False,
) -> str:
    registrations = (
        'ArgoCd(fleet, "argocd", server_addr="argocd-server.argocd.svc:443", '
        'credentials=SecretKeyRef(name="argocd", namespace="crossplane-system", key="token"))'
        if argocd
        else ""
    )
    return textwrap.dedent(
        f"""\
        from fleet import (
            ArgoCd, ClusterTemplate, Fleet, MagnumCluster, NodeGroup, OpenStackProject,
            SecretKeyRef,
        )

        T = ClusterTemplate(
            name="k8s-1.30",
            kubernetes_version="v1.30.1",
            base_labels={{"kube_tag": "v1.30.1", "monitoring_enabled": "false"}},
            uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
        )


        def define(fleet: Fleet) -> None:
            demo = OpenStackProject(fleet, "demo", project_name="DEMO")
            MagnumCluster(
                fleet, "alpha", name="alpha-{{env}}", environments={alpha_envs},
                project=demo, template=T, flavor="m2.large", keypair="k",
                node_count={nodes}, labels={labels}, retired={alpha_retired},
                node_groups=[NodeGroup(name="zone-a", flavor="m2.large", node_count=1)],
            )
            MagnumCluster(
                fleet, "beta", name="{beta_name}", environments=["dev"],
                project=demo, template=T, flavor="m2.large", keypair="k", node_count=1,
            )
            {registrations}
        """
    )


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def make_repo(tmp_path: Path, source: str | None = None) -> Path:
    """A git repository on ``main`` whose one commit is a fleet project (or just a README)."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "--quiet", "--initial-branch=main")
    if source is None:
        (root / "README.md").write_text("before the fleet\n")
    else:
        write_project(root, source)
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "base")
    return root


def write_project(root: Path, source: str) -> None:
    if not (root / "constructs").exists():
        shutil.copytree(
            REPO / "constructs" / "fleet",
            root / "constructs" / "fleet",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "clusters").mkdir(exist_ok=True)
    (root / "clusters" / "__init__.py").write_text("")
    (root / "clusters" / "demo.py").write_text(source)


@pytest.fixture(autouse=True)
def private_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Temp files of ``fleet diff`` go here, so a test can see that none are left behind."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def diff(root: Path, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["--root", str(root), "diff", "--crds", str(crds_dir()), *args])
    return code, out.getvalue(), err.getvalue()


def assert_clean(root: Path, tempdir: Path) -> None:
    """The base worktree and its scratch folder are gone."""
    assert git(root, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert list(tempdir.iterdir()) == []


def test_no_changes(tmp_path: Path, private_tempdir: Path) -> None:
    root = make_repo(tmp_path, definition())
    code, out, err = diff(root)
    assert (code, err) == (0, "")
    assert "dev: no changes\nprod: no changes\n" in out
    assert out.endswith("no guard findings\n")
    assert_clean(root, private_tempdir)


def test_field_changes_and_the_immutable_field_guard(tmp_path: Path, private_tempdir: Path) -> None:
    root = make_repo(tmp_path, definition())
    write_project(root, definition(nodes=3, labels='{"monitoring_enabled": "true"}'))
    code, out, err = diff(root)
    # Labels are ForceNew (terraform-provider-openstack v3.4.0): failed by default.
    assert code == 1, out + err
    assert "dev: 0 added, 0 removed, 1 changed\n  ~ ClusterV1 alpha-dev" in out
    assert "      spec.forProvider.nodeCount: 1 -> 3\n" in out
    assert '      spec.forProvider.labels.monitoring_enabled: "false" -> "true"\n' in out
    assert (
        f"error: prod: ClusterV1 alpha-prod ({MAGNUM}): spec.forProvider.labels."
        'monitoring_enabled: "false" -> "true": Terraform marks labels ForceNew'
    ) in out
    assert "nodeCount" not in out.split("error:", 1)[1]

    write_project(root, definition(nodes=3))
    code, out, err = diff(root, "--strict")
    assert code == 0, out + err
    assert "      spec.forProvider.nodeCount: 1 -> 3\n" in out
    assert_clean(root, private_tempdir)


def test_a_label_added_or_a_cluster_moved_to_another_project_fails(
    tmp_path: Path, private_tempdir: Path
) -> None:
    """#21 item 2: each fails ``fleet diff`` with the blue/green path (the upstream sources
    are named in tests/test_diff.py and tests/test_change_rules.py)."""
    root = make_repo(tmp_path, definition())
    write_project(root, definition(labels='{"extra": "1"}, allow_extra_labels=True'))
    code, out, err = diff(root)
    assert code == 1, out + err
    assert (
        f"error: dev: ClusterV1 alpha-dev ({MAGNUM}): spec.forProvider.labels.extra: (absent) "
        '-> "1": Terraform marks labels ForceNew'
    ) in out
    moved = (
        definition()
        .replace(
            'demo = OpenStackProject(fleet, "demo", project_name="DEMO")',
            'demo = OpenStackProject(fleet, "demo", project_name="DEMO")\n'
            '    other = OpenStackProject(fleet, "other", project_name="OTHER")',
        )
        .replace(
            'project=demo, template=T, flavor="m2.large", keypair="k",\n',
            'project=other, template=T, flavor="m2.large", keypair="k",\n',
            1,
        )
    )
    assert "project=other" in moved
    write_project(root, moved)
    code, out, err = diff(root)
    assert code == 1, out + err
    assert (
        f'error: prod: ClusterV1 alpha-prod ({MAGNUM}): spec.providerConfigRef: "demo" -> '
        '"other" may move the cluster to another OpenStack project or cloud'
    ) in out
    assert "blue/green: declare a new cluster in the new project" in out
    assert_clean(root, private_tempdir)


def test_removed_and_renamed_clusters_are_blocked(tmp_path: Path, private_tempdir: Path) -> None:
    root = make_repo(tmp_path, definition())
    write_project(root, definition(alpha_envs='["dev"]', beta_name="gamma-{env}"))
    code, out, err = diff(root, "--format", "markdown")
    assert code == 1
    # One error per definition module and advice (#20: not one per object).
    errors = err.splitlines()
    assert errors[0] == (
        "error: clusters/demo.py: 2 clusters removed (3 objects in dev, prod): beta-dev "
        "(renamed to gamma-dev?), alpha-prod; ArgoCD would prune them, which deletes the real "
        "clusters or their nodes, or unregisters the clusters; to delete them on purpose, keep "
        "their definitions and mark them retired=True in one change, then remove the "
        "definitions in a later one"
    )
    # No cluster of the project is left in prod, so its ProviderConfig goes too; a live
    # cluster in the base uses it: it goes once that cluster is retired first.
    assert errors[1] == (
        "error: clusters/demo.py: ProviderConfig demo removed (1 object in prod); the "
        "managed resources that use it could no longer be updated or deleted; it can only go "
        "once nothing uses it: mark every cluster that uses it retired=True in one change, "
        "then remove their definitions in a later one"
    )
    assert len(errors) == 2
    # Each object is still named, in the finding's collapsed details.
    assert "<details><summary>3 objects</summary>" in out
    for line in (
        f"error: dev: ClusterV1 beta-dev ({MAGNUM}): would be deleted (renamed to gamma-dev?); ",
        f"error: prod: ClusterV1 alpha-prod ({MAGNUM}): would be deleted;",
        f"error: prod: NodegroupV1 alpha-prod-zone-a ({MAGNUM}): would be deleted;",
    ):
        assert f"  - {line}" in out
    assert "| `dev` | 1 | 1 | 0 |" in out
    assert "| `prod` | 0 | 3 | 0 |" in out
    assert "> [!CAUTION]\n> **2 guard errors**" in out
    # In the terminal: one line per finding; --verbose lists the objects under it.
    code, out, _ = diff(root)
    assert code == 1
    assert "(fleet diff --verbose lists the objects of each finding)" in out
    assert f"error: prod: ClusterV1 alpha-prod ({MAGNUM})" not in out
    code, out, _ = diff(root, "--verbose")
    assert f"\n    error: prod: ClusterV1 alpha-prod ({MAGNUM}): would be deleted;" in out
    assert_clean(root, private_tempdir)


def test_retired_cluster_may_disappear(tmp_path: Path, private_tempdir: Path) -> None:
    root = make_repo(tmp_path, definition(argocd=True))
    write_project(root, definition(alpha_retired=True, argocd=True))
    code, out, err = diff(root, "--verbose")
    assert (code, err) == (0, "")
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert notes == [
        "note: clusters/demo.py: 2 clusters removed (6 objects in dev, prod): alpha-dev, "
        "alpha-prod; retired, so their deletion is intended"
    ]
    objects = [line.strip() for line in out.splitlines() if line.startswith("    note: ")]
    # ClusterV1, NodegroupV1 and the ArgoCD registration (rendered by ArgoCd, not by the
    # cluster), in dev and prod.
    assert len(objects) == 6, out
    assert any(
        n.startswith(
            f"note: dev: ClusterV1 alpha-dev ({MAGNUM}): deleted, retired at clusters/demo.py:"
        )
        for n in objects
    )
    assert any(
        n.startswith("note: prod: Cluster alpha-prod (cluster.argocd.crossplane.io): deleted, ")
        for n in objects
    )
    assert "  - ClusterV1 alpha-prod  (clusters/alpha-prod/" in out
    assert_clean(root, private_tempdir)


def test_base_without_the_fleet_package_is_empty(tmp_path: Path, private_tempdir: Path) -> None:
    root = make_repo(tmp_path)
    write_project(root, definition())
    code, out, err = diff(root)
    assert (code, err) == (0, "")
    assert "dev: 4 added, 0 removed, 0 changed" in out
    assert (
        "  + ProviderConfig demo  (platform/providerconfig_openstack.crossplane.io_demo.yaml)"
        in out
    )
    assert_clean(root, private_tempdir)


def test_a_base_that_does_not_render_is_bad_input(tmp_path: Path, private_tempdir: Path) -> None:
    root = make_repo(tmp_path, "def define(fleet):\n    return (\n")
    write_project(root, definition())
    code, out, err = diff(root)
    assert (code, out) == (2, "")
    sha = git(root, "rev-parse", "HEAD").strip()
    assert err.startswith(f"error: cannot render the base revision {sha[:12]}: error: ")
    assert "clusters/demo.py:2: syntax error" in err
    assert_clean(root, private_tempdir)


def test_a_broken_working_tree_is_bad_input(tmp_path: Path, private_tempdir: Path) -> None:
    root = make_repo(tmp_path, definition())
    write_project(root, definition(nodes=-1))
    code, out, err = diff(root)
    assert (code, out) == (2, "")
    assert "node_count: must be 0 or more, got -1 (dev)" in err
    assert_clean(root, private_tempdir)


def test_unknown_base_ref(tmp_path: Path) -> None:
    root = make_repo(tmp_path, definition())
    assert diff(root, "--base", "no-such-ref") == (
        2,
        "",
        f"error: --base no-such-ref: not a commit in {root.resolve()}\n",
    )


def test_no_main_branch_needs_an_explicit_base(tmp_path: Path) -> None:
    root = make_repo(tmp_path, definition())
    git(root, "branch", "--move", "main", "trunk")
    code, out, err = diff(root)
    assert (code, out) == (2, "")
    assert err.startswith("error: no merge-base of HEAD and 'main' (")
    assert err.rstrip().endswith("pass --base REF (for example --base origin/main)")


def test_not_a_git_repository(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    write_project(tmp_path / "plain", definition())
    code, _, err = diff(tmp_path / "plain")
    assert code == 2
    assert err.startswith("error: fleet diff needs a git repository at ")


def test_missing_crds_skip_the_immutable_guard_unless_strict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FLEET_CRDS_DIR", raising=False)
    monkeypatch.setattr(crds_module, "PACKAGED_CRDS", tmp_path / "stripped")  # no package data
    assert crds_dir_for(None, strict=False) is None
    with pytest.raises(Exception, match="does not exist; run `fleet crds pull`"):
        crds_dir_for(None, strict=True)


# --- a fleet that installs the tool: the base's committed dist/ ----------------------------------


def synth_and_commit(root: Path, message: str) -> None:
    """Render dist/ with the installed tool and commit sources and dist/ together."""
    assert main(["--root", str(root), "synth"]) == 0
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", message)


def installed_tool_repo(tmp_path: Path) -> Path:
    """A fleet repository without constructs/ (it installs the tool), dist/ committed."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "--quiet", "--initial-branch=main")
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "clusters").mkdir()
    (root / "clusters" / "__init__.py").write_text("")
    (root / "clusters" / "demo.py").write_text(definition(argocd=True))
    synth_and_commit(root, "base")
    return root


def test_the_base_is_its_committed_dist_without_a_render(
    tmp_path: Path, private_tempdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = installed_tool_repo(tmp_path)

    def no_render(*args: object, **kwargs: object) -> None:
        raise AssertionError("the base has a dist/: nothing to render")

    monkeypatch.setattr("fleet.pipeline.diff.render_base", no_render)
    code, out, err = diff(root)
    assert (code, err) == (0, ""), out
    assert "(merge-base with main; its committed dist/)" in out
    assert "dev: no changes\nprod: no changes\n" in out

    (root / "clusters" / "demo.py").write_text(definition(nodes=2, argocd=True))
    code, out, err = diff(root)
    assert code == 0, out + err
    assert "dev: 0 added, 0 removed, 1 changed\n  ~ ClusterV1 alpha-dev" in out
    assert_clean(root, private_tempdir)


def test_the_deletion_guard_and_retirement_work_from_the_committed_dist(
    tmp_path: Path, private_tempdir: Path
) -> None:
    root = installed_tool_repo(tmp_path)
    (root / "clusters" / "demo.py").write_text(
        definition(alpha_envs='["dev"]', beta_name="gamma-{env}", argocd=True)
    )
    code, out, err = diff(root, "--verbose")
    assert code == 1
    assert (
        "error: clusters/demo.py: 2 clusters removed (5 objects in dev, prod): beta-dev "
        "(renamed to gamma-dev?), alpha-prod; "
    ) in out
    assert (
        f"    error: dev: ClusterV1 beta-dev ({MAGNUM}): would be deleted (renamed to gamma-dev?)"
        in out
    )
    assert f"    error: prod: ClusterV1 alpha-prod ({MAGNUM}): would be deleted;" in out

    (root / "clusters" / "demo.py").write_text(definition(alpha_retired=True, argocd=True))
    code, out, err = diff(root, "--verbose")
    assert (code, err) == (0, ""), out
    notes = [line.strip() for line in out.splitlines() if line.startswith("    note: ")]
    assert len(notes) == 6, out  # ClusterV1, NodegroupV1, registration; dev and prod
    # (the registration sits in the cluster's folder, so its note sorts with the cluster's)
    assert any(
        n.startswith(
            f"note: dev: ClusterV1 alpha-dev ({MAGNUM}): deleted, retired at clusters/demo.py:"
        )
        for n in notes
    ), out
    assert any(
        n.startswith("note: dev: Cluster alpha-dev (cluster.argocd.crossplane.io): deleted")
        for n in notes
    ), out
    assert_clean(root, private_tempdir)


def test_a_base_without_dist_or_constructs_is_rendered_by_the_installed_tool(
    tmp_path: Path, private_tempdir: Path
) -> None:
    root = installed_tool_repo(tmp_path)
    git(root, "rm", "-r", "--quiet", "dist")
    git(root, "commit", "--quiet", "-m", "no dist")
    code, out, err = diff(root)
    assert (code, err) == (0, ""), out
    assert "(merge-base with main; rendered: it has no dist/)" in out
    assert "dev: no changes\nprod: no changes\n" in out
    assert_clean(root, private_tempdir)
