"""Retiring: a cluster everywhere or per environment, one Magnum node group, one OKE pool.

Most tests render in-process; the last ones run ``fleet diff`` end to end (a temp git
repository whose base revision is rendered by its own copy of the library).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from test_cli_diff import diff, git, make_repo, private_tempdir, write_project
from test_oci_managed_cluster import oke, pool

from fleet import (
    ArgoCd,
    ClusterTemplate,
    DefinitionError,
    Fleet,
    FleetConfig,
    MagnumCluster,
    NodeGroup,
    OciClusterIdentity,
    OpenStackProject,
    SecretKeyRef,
    testing,
)
from fleet.pipeline.diff import retired_objects
from fleet.views.graph import fleet_graph, to_mermaid
from fleet.views.inventory import inventory

__all__ = ["private_tempdir"]  # the autouse fixture of test_cli_diff: temp files in tmp_path

MAGNUM = "containerinfra.openstack.crossplane.io"
TEMPLATE = ClusterTemplate(
    name="k8s-1.30", kubernetes_version="v1.30.1", uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59"
)


def fleet_diff(root: Path, *args: str) -> tuple[int, str, str]:
    """``fleet diff --verbose``: each guard finding, then one line per object under it."""
    return diff(root, "--verbose", *args)


def per_object(out: str, level: str) -> list[str]:
    """The per-object lines (``<level>: <env>: <object>: ...``) under the grouped findings."""
    return [line.strip() for line in out.splitlines() if line.startswith(f"    {level}: ")]


def _fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(FleetConfig(root=tmp_path, environments=("dev", "prod")))
    ArgoCd(
        fleet,
        "argocd",
        server_addr="argocd-server.argocd.svc:443",
        credentials=SecretKeyRef(name="argocd", namespace="crossplane-system", key="token"),
    )
    return fleet


def _magnum(fleet: Fleet, **overrides: Any) -> MagnumCluster:
    args: dict[str, Any] = {
        "name": "web-{env}",
        "environments": ["dev", "prod"],
        "project": OpenStackProject(fleet, "proj", project_name="PROJ"),
        "template": TEMPLATE,
        "flavor": "m1",
        "keypair": "k",
        "node_count": 1,
        "node_groups": [
            NodeGroup(name="a", flavor="m2", node_count=1),
            NodeGroup(name="b", flavor="m2", node_count=2),
        ],
    }
    args.update(overrides)
    return MagnumCluster(fleet, "web", **args)


def _kinds(fleet: Fleet, env: str) -> list[tuple[str, str]]:
    return [(m.kind, m.name) for m in testing.synth(fleet, [env]).all(env=env)]


def test_retired_in_one_environment_renders_nothing_there_only(tmp_path: Path) -> None:
    fleet = _fleet(tmp_path)
    cluster = _magnum(fleet, retired=["dev"])
    assert cluster.retired_environments == frozenset({"dev"})
    assert (cluster.is_retired("dev"), cluster.is_retired("prod")) == (True, False)
    assert cluster.manifests("dev") == []
    assert [m.name for m in cluster.manifests("prod")] == ["web-prod", "web-prod-a", "web-prod-b"]
    dev, prod = _kinds(fleet, "dev"), _kinds(fleet, "prod")
    # not registered in dev; still in prod
    assert ("Cluster", "web-dev") not in dev
    assert ("Cluster", "web-prod") in prod
    # the project keeps its ProviderConfig while the definition is kept: it goes last
    assert ("ProviderConfig", "proj") in dev
    assert ("ProviderConfig", "proj") in prod

    rows = {row.environment: row for row in inventory(fleet)}
    assert (rows["dev"].retired, rows["prod"].retired) == (True, False)
    assert (rows["dev"].registered_in_argocd, rows["prod"].registered_in_argocd) == (False, True)

    text = to_mermaid(fleet_graph(testing.synth(fleet, ["dev"]).manifests, fleet=fleet))
    assert "retired: renders nothing" in text
    text = to_mermaid(fleet_graph(testing.synth(fleet, ["prod"]).manifests, fleet=fleet))
    assert "retired" not in text


def test_retired_true_means_every_environment(tmp_path: Path) -> None:
    fleet = _fleet(tmp_path)
    cluster = _magnum(fleet, retired=True)
    assert cluster.retired_environments == frozenset({"dev", "prod"})
    assert cluster.manifests("dev") == cluster.manifests("prod") == []
    assert _magnum(_fleet(tmp_path / "b")).retired_environments == frozenset()


def test_reviving_renders_the_retired_and_restores_nothing_else(tmp_path: Path) -> None:
    fleet = _fleet(tmp_path)
    cluster = _magnum(
        fleet,
        retired=["dev"],
        node_groups=[
            NodeGroup(name="a", flavor="m2", node_count=1),
            NodeGroup(name="b", flavor="m2", node_count=2, retired=True),
        ],
    )
    assert cluster.retires_anything()
    fleet.revive_retired = True
    assert not cluster.is_retired("dev")
    assert [m.name for m in cluster.manifests("dev")] == ["web-dev", "web-dev-a", "web-dev-b"]
    assert [p.name for p in cluster.node_pools("prod")] == ["default-worker", "a", "b"]
    fleet.revive_retired = False
    assert cluster.retired_environments == frozenset({"dev"})
    assert cluster.manifests("dev") == []


def test_retired_node_group_renders_nothing(tmp_path: Path) -> None:
    fleet = _fleet(tmp_path)
    cluster = _magnum(
        fleet,
        node_groups=[
            NodeGroup(name="a", flavor="m2", node_count=1),
            NodeGroup(name="b", flavor="m2", node_count=2, retired=True),
        ],
    )
    assert cluster.retired_pool_names() == ("b",)
    assert cluster.retired_environments == frozenset()
    for env in ("dev", "prod"):
        assert [m.kind for m in cluster.manifests(env)] == ["ClusterV1", "NodegroupV1"]
        assert [p.name for p in cluster.node_pools(env)] == ["default-worker", "a"]
    [row, _] = inventory(fleet)
    assert row.totals.nodes == 2  # default-worker 1 + a 1; b is gone


def test_retired_oke_node_pool_renders_nothing(fleet: Fleet) -> None:
    cluster = oke(fleet, node_pools=[pool(name="general"), pool(name="old", retired=True)])
    assert cluster.retired_pool_names() == ("old",)
    names = [(m.kind, m.name) for m in cluster.manifests("dev")]
    assert ("MachinePool", "oke-dev-general") in names
    assert ("OCIManagedMachinePool", "oke-dev-general") in names
    assert not [n for n in names if n[1] == "oke-dev-old"]
    assert [p.name for p in cluster.node_pools("dev")] == ["general"]
    fleet.revive_retired = True
    assert ("MachinePool", "oke-dev-old") in [(m.kind, m.name) for m in cluster.manifests("dev")]


def test_fails_retired_environment_the_cluster_is_not_placed_in(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError) as e:
        _magnum(_fleet(tmp_path), environments=["prod"], retired=["dev"])
    assert e.value.field == "retired"
    assert "'dev' is not one of the cluster's environments (prod)" in str(e.value)


def test_fails_retired_as_one_string(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError) as e:
        _magnum(_fleet(tmp_path), retired="dev")
    assert e.value.field == "retired"
    assert "must be True or False or a list of str, got str 'dev'" in str(e.value)


def test_fails_oke_retired_environment_the_cluster_is_not_placed_in(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError) as e:
        oke(fleet, retired=["prod"])
    assert e.value.field == "retired"


def test_fails_node_pool_retired_not_a_bool() -> None:
    with pytest.raises(DefinitionError) as e:
        NodeGroup(name="a", flavor="m2", node_count=1, retired="yes")  # type: ignore[arg-type]
    assert e.value.field == "retired"
    with pytest.raises(DefinitionError) as e:
        pool(retired=1)
    assert e.value.field == "retired"


def test_fails_retired_pool_name_is_still_taken(tmp_path: Path, fleet: Fleet) -> None:
    groups = [
        NodeGroup(name="a", flavor="m2", node_count=1, retired=True),
        NodeGroup(name="a", flavor="m3", node_count=1),
    ]
    with pytest.raises(DefinitionError, match="duplicate node group name 'a'"):
        _magnum(_fleet(tmp_path), node_groups=groups)
    with pytest.raises(DefinitionError, match="duplicate node pool name 'old'"):
        oke(fleet, node_pools=[pool(name="old", retired=True), pool(name="old")])


PROJECT_SOURCE = """\
from fleet import ClusterTemplate, MagnumCluster, NodeGroup, OpenStackProject

T = ClusterTemplate(
    name="k8s-1.30", kubernetes_version="v1.30.1", uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59"
)


def define(fleet):
    proj = OpenStackProject(fleet, "proj", project_name="PROJ")
    MagnumCluster(
        fleet, "web", name="web-{env}", environments=["dev", "prod"], project=proj,
        template=T, flavor="m1", keypair="k", node_count=1, retired=["prod"],
        node_groups=[NodeGroup(name="a", flavor="m2", node_count=1, retired=True)],
    )
"""


def test_retired_objects_come_from_the_revived_render(make_project: Any) -> None:
    root = make_project({"clusters/web.py": PROJECT_SOURCE})
    config = FleetConfig.load(root)
    found = retired_objects(config)
    got = sorted((env, kind, name) for env, (_, kind, _, name) in found)
    # prod: the whole cluster; dev: the retired node group only. The project's
    # ProviderConfig is in both renders, so it is not retired (it goes last).
    assert got == [
        ("dev", "NodegroupV1", "web-dev-a"),
        ("prod", "ClusterV1", "web-prod"),
        ("prod", "NodegroupV1", "web-prod-a"),
    ]
    assert all(where.startswith("clusters/web.py:") for where in found.values())


# --- fleet diff, end to end -----------------------------------------------------------------


def definition(*, zone_b: str | None = "", alpha_retired: str = "False") -> str:
    """alpha in dev and prod with node groups zone-a and (unless None) zone-b."""
    group_b = (
        ""
        if zone_b is None
        else f'NodeGroup(name="zone-b", flavor="m2.large", node_count=1{zone_b}),'
    )
    return textwrap.dedent(
        f"""\
        from fleet import (
            ArgoCd, ClusterTemplate, Fleet, MagnumCluster, NodeGroup, OpenStackProject,
            SecretKeyRef,
        )

        T = ClusterTemplate(
            name="k8s-1.30", kubernetes_version="v1.30.1",
            uuid="3c9e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
        )


        def define(fleet: Fleet) -> None:
            demo = OpenStackProject(fleet, "demo", project_name="DEMO")
            ArgoCd(
                fleet, "argocd", server_addr="argocd-server.argocd.svc:443",
                credentials=SecretKeyRef(name="argocd", namespace="crossplane-system", key="t"),
            )
            MagnumCluster(
                fleet, "alpha", name="alpha-{{env}}", environments=["dev", "prod"],
                project=demo, template=T, flavor="m2.large", keypair="k", node_count=1,
                retired={alpha_retired},
                node_groups=[
                    NodeGroup(name="zone-a", flavor="m2.large", node_count=1),
                    {group_b}
                ],
            )
        """
    )


def test_diff_removing_a_node_group_needs_the_marker(tmp_path: Path) -> None:
    root = make_repo(tmp_path, definition())
    write_project(root, definition(zone_b=None))
    code, out, _ = fleet_diff(root)
    assert code == 1, out
    errors = per_object(out, "error")
    assert [e.split(": would be deleted")[0] for e in errors] == [
        f"error: dev: NodegroupV1 alpha-dev-zone-b ({MAGNUM})",
        f"error: prod: NodegroupV1 alpha-prod-zone-b ({MAGNUM})",
    ]

    write_project(root, definition(zone_b=", retired=True"))
    code, out, err = fleet_diff(root)
    assert (code, err) == (0, ""), out
    notes = per_object(out, "note")
    assert len(notes) == 2, out
    assert notes[0].startswith(
        f"note: dev: NodegroupV1 alpha-dev-zone-b ({MAGNUM}): deleted, retired at clusters/demo.py:"
    )
    assert notes[1].startswith(f"note: prod: NodegroupV1 alpha-prod-zone-b ({MAGNUM}): deleted, ")
    assert "error: " not in out


def test_diff_retiring_in_one_environment_passes_and_keeps_the_others(tmp_path: Path) -> None:
    root = make_repo(tmp_path, definition())
    write_project(root, definition(alpha_retired='["dev"]'))
    code, out, err = fleet_diff(root)
    assert (code, err) == (0, ""), out
    assert "prod: no changes\n" in out
    notes = per_object(out, "note")
    subjects = sorted(n.split(": deleted, retired at ")[0] for n in notes)
    assert subjects == [
        "note: dev: Cluster alpha-dev (cluster.argocd.crossplane.io)",
        f"note: dev: ClusterV1 alpha-dev ({MAGNUM})",
        f"note: dev: NodegroupV1 alpha-dev-zone-a ({MAGNUM})",
        f"note: dev: NodegroupV1 alpha-dev-zone-b ({MAGNUM})",
    ]
    # the project's ProviderConfig stays in dev: it is deleted by hand, last
    assert "ProviderConfig" not in out


def without_alpha() -> str:
    """Step 3: alpha's definition and its project's are removed; ArgoCd stays."""
    return textwrap.dedent(
        """\
        from fleet import ArgoCd, Fleet, SecretKeyRef


        def define(fleet: Fleet) -> None:
            ArgoCd(
                fleet, "argocd", server_addr="argocd-server.argocd.svc:443",
                credentials=SecretKeyRef(name="argocd", namespace="crossplane-system", key="t"),
            )
        """
    )


def test_diff_removing_the_last_retired_cluster_lets_its_provider_config_go(
    tmp_path: Path,
) -> None:
    # alpha is project demo's only cluster, in dev and prod.
    root = make_repo(tmp_path, definition())
    # Step 1: retire it. Its ProviderConfig still renders.
    write_project(root, definition(alpha_retired="True"))
    code, out, err = fleet_diff(root)
    assert (code, err) == (0, ""), out
    assert "ProviderConfig" not in out
    git(root, "commit", "--quiet", "--all", "--message", "retire alpha")
    # Step 3, once merged: remove the definitions. The ProviderConfig goes with them; no
    # object of the base uses it any more, so that is a note, not a guard error.
    write_project(root, without_alpha())
    code, out, err = fleet_diff(root)
    assert (code, err) == (0, ""), out
    assert "error: " not in out
    assert per_object(out, "note") == [
        f"note: {env}: ProviderConfig demo (openstack.crossplane.io): deleted, unused: "
        "nothing in the base revision references it"
        for env in ("dev", "prod")
    ]
    assert (
        "  - ProviderConfig demo  (platform/providerconfig_openstack.crossplane.io_demo.yaml)"
        in out
    )


def _oke_fleet(root: Path, *, retired: bool | None) -> Fleet:
    """dev with an identity and (unless None) its one cluster, retired or not."""
    fleet = testing.fleet(root=root)
    tenancy = OciClusterIdentity(fleet, "oci-tenancy", principal_secret="oci-user-principal")
    if retired is not None:
        oke(fleet, identity=tenancy, retired=retired)
    return fleet


def test_oke_identity_outlives_the_retired_cluster_and_goes_with_its_definition(
    tmp_path: Path,
) -> None:
    """What ``fleet diff`` says of each step (``testing.diff``: both fleets rendered, compared
    as dist/ files, every guard run)."""
    live = testing.synth(_oke_fleet(tmp_path / "live", retired=False), ["dev"])
    retired = testing.synth(_oke_fleet(tmp_path / "retired", retired=True), ["dev"])
    identity = (
        "infrastructure.cluster.x-k8s.io",
        "OCIClusterIdentity",
        "oke-clusters",
        "oci-tenancy",
    )
    # Step 1: everything but the identity goes.
    step = testing.diff(live, _oke_fleet(tmp_path / "retired", retired=True), ["dev"])
    [step1] = step.diff.environments
    assert identity not in {r.identity for r in step1.removed}
    assert "MachinePool" in {r.kind for r in step1.removed}
    # Step 3: the identity goes; nothing in the base (retired) uses it, so it is a note.
    step = testing.diff(retired, _oke_fleet(tmp_path / "gone", retired=None), ["dev"])
    [step3] = step.diff.environments
    assert [r.identity for r in step3.removed] == [identity]
    [finding] = step.findings
    assert (finding.level, finding.message) == (
        "note",
        "OCIClusterIdentity oke-clusters/oci-tenancy removed (1 object in dev); "
        "unused: nothing in the base revision references them",
    )
    assert step.errors == []
    # Skipping step 1: the live cluster of the base still uses it, so it may not go.
    step = testing.diff(live, _oke_fleet(tmp_path / "gone", retired=None), ["dev"])
    findings = step.findings
    [error] = [f for f in findings if f.message.startswith("OCIClusterIdentity ")]
    assert error.level == "error"
    assert error.message.startswith("OCIClusterIdentity oke-clusters/oci-tenancy removed")
    assert "it can only go once nothing uses it" in error.message
    assert all(f.level == "error" for f in findings)


def oke_definition(*, retired: str | None = "False") -> str:
    """An identity and (unless None) its only cluster, oke-{env} in dev and prod."""
    cluster = (
        ""
        if retired is None
        else f"""
            OciManagedCluster(
                fleet, "oke", name="oke-{{env}}", environments=["dev", "prod"],
                identity=tenancy, compartment_id="ocid1.compartment.oc1..aaaaexample",
                region="eu-frankfurt-1", kubernetes_version="v1.30.1",
                availability_domains=["BKrI:EU-FRANKFURT-1-AD-1"],
                node_image_id="ocid1.image.oc1.eu-frankfurt-1.aaaaexample",
                ssh_public_key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIexample user@example",
                network=OkeVcn(api_allowed_cidrs=["198.51.100.17/32"]),
                node_pools=[OkeNodePool(name="general", ocpus=1, node_count=3)],
                retired={retired},
            )"""
    )
    return textwrap.dedent(
        f"""\
        from fleet import Fleet, OciClusterIdentity, OciManagedCluster, OkeNodePool, OkeVcn


        def define(fleet: Fleet) -> None:
            tenancy = OciClusterIdentity(
                fleet, "oci-tenancy", principal_secret="oci-user-principal"
            )
            {cluster.strip()}
        """
    )


IDENTITY_SUBJECT = "OCIClusterIdentity oke-clusters/oci-tenancy (infrastructure.cluster.x-k8s.io)"


def test_diff_removing_a_used_oke_identity_fails(tmp_path: Path) -> None:
    # Removing the cluster's definition and the identity without retiring it first.
    root = make_repo(tmp_path, oke_definition())
    write_project(root, oke_definition(retired=None))
    code, out, _ = fleet_diff(root)
    assert code == 1, out
    errors = [
        line
        for line in per_object(out, "error")
        if line.startswith(f"error: dev: {IDENTITY_SUBJECT}")
    ]
    assert errors == [
        f"error: dev: {IDENTITY_SUBJECT}: would be deleted; CAPOCI could no longer authenticate "
        "for the OKE clusters that use it; it can only go once nothing uses it: mark every "
        "cluster that uses it retired=True in one change, then remove their definitions in a "
        "later one"
    ]
    assert f"error: prod: {IDENTITY_SUBJECT}: would be deleted; " in out


def test_diff_removing_the_last_retired_oke_cluster_lets_its_identity_go(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path, oke_definition())
    # Step 1: retire the cluster. The identity still renders.
    write_project(root, oke_definition(retired="True"))
    code, out, err = fleet_diff(root)
    assert (code, err) == (0, ""), out
    assert "error: " not in out
    assert "OCIClusterIdentity" not in out
    assert (
        "note: dev: OCIManagedCluster oke-clusters/oke-dev (infrastructure.cluster.x-k8s.io): "
        "deleted, retired at clusters/demo.py:"
    ) in out
    git(root, "commit", "--quiet", "--all", "--message", "retire oke")
    # Step 3, once merged: remove the definition. The identity goes with it; no object of
    # the base uses it any more, so that is a note, not a guard error.
    write_project(root, oke_definition(retired=None))
    code, out, err = fleet_diff(root)
    assert (code, err) == (0, ""), out
    assert "error: " not in out
    assert per_object(out, "note") == [
        f"note: {env}: {IDENTITY_SUBJECT}: deleted, unused: nothing in the base revision "
        "references it"
        for env in ("dev", "prod")
    ]
