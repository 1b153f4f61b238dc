"""The pure part of ``fleet diff``: comparing rendered trees, the guards, the reports."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from crd_samples import (
    argocd_cluster,
    argocd_provider_config,
    capoci_managed,
    cluster_v1,
    crds_dir,
    nodegroup_v1,
    openstack_provider_config,
)
from syrupy.assertion import SnapshotAssertion

from fleet.checks.crds import load_crds
from fleet.clouds.magnum.plugin import FORCE_NEW_DATA, MAGNUM_FORCE_NEW
from fleet.core.manifest import Manifest
from fleet.guards.change_rules import change_rule_guard
from fleet.guards.deletion import (
    GROUP_RETIRE_HINT,
    REMOVED_DEFINITIONS,
    RETIRE_HINT,
    UNUSED_HINT,
    DefinitionSources,
    cluster_bearing_kinds,
    deletion_guard,
    deletions,
    grouped_by_source,
    is_cluster_bearing,
    unused_objects,
)
from fleet.guards.diff import (
    ABSENT,
    FieldChange,
    Files,
    Finding,
    FleetDiff,
    compare,
    compare_files,
    field_changes,
    format_field_path,
    parse_files,
)
from fleet.guards.force_new import UPJET_REFUSAL, external_name_guard, force_new_guard
from fleet.guards.immutable import ImmutableField, immutable_fields, immutable_guard
from fleet.pipeline.yaml_canonical import to_yaml
from fleet.views.diff_report import ReportSection, render_markdown, render_text

MAGNUM = "containerinfra.openstack.crossplane.io"


def tree(env: str, *bodies: dict[str, Any], folder: str = "clusters/c") -> dict[str, Any]:
    """``{env: {relpath: body}}`` placed the way synth places them."""
    return {env: {Manifest(env, b, folder, "").relpath: b for b in bodies}}


def renamed(body: dict[str, Any], name: str) -> dict[str, Any]:
    out = copy.deepcopy(body)
    out["metadata"]["name"] = name
    return out


def provider_config(name: str = "jeedy") -> dict[str, Any]:
    return {
        "apiVersion": "openstack.crossplane.io/v1beta1",
        "kind": "ProviderConfig",
        "metadata": {"name": name},
        "spec": {"credentials": {"source": "Secret"}},
    }


def config_map(name: str = "x", **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


# --- field_changes ---------------------------------------------------------------------------


def test_field_changes_minimal() -> None:
    old = {"spec": {"forProvider": {"nodeCount": 1, "labels": {"a": "1", "b": "2"}}}}
    new = {"spec": {"forProvider": {"nodeCount": 3, "labels": {"a": "1", "c": "3"}}}}
    assert field_changes(old, new) == [
        FieldChange(("spec", "forProvider", "labels", "b"), "2", ABSENT),
        FieldChange(("spec", "forProvider", "labels", "c"), ABSENT, "3"),
        FieldChange(("spec", "forProvider", "nodeCount"), 1, 3),
    ]


def test_field_changes_added_map_is_reported_leaf_by_leaf() -> None:
    assert field_changes({"spec": {}}, {"spec": {"ref": {"name": "n", "key": "k"}}}) == [
        FieldChange(("spec", "ref", "key"), ABSENT, "k"),
        FieldChange(("spec", "ref", "name"), ABSENT, "n"),
    ]


def test_field_changes_lists() -> None:
    # Same length: item by item; another length: the whole list.
    assert field_changes({"a": [1, {"x": 1}]}, {"a": [1, {"x": 2}]}) == [
        FieldChange(("a", 1, "x"), 1, 2)
    ]
    assert field_changes({"a": [1]}, {"a": [1, 2]}) == [FieldChange(("a",), [1], [1, 2])]


def test_field_changes_type_change_is_a_change() -> None:
    # YAML 1 and 1.0 and "1" differ for the API server; so they differ here.
    assert field_changes({"n": 1}, {"n": "1"}) == [FieldChange(("n",), 1, "1")]
    assert field_changes({"n": True}, {"n": 1}) == [FieldChange(("n",), True, 1)]


def test_format_field_path_quotes_keys_with_dots_and_slashes() -> None:
    path = ("metadata", "annotations", "crossplane.io/external-name")
    assert format_field_path(path) == 'metadata.annotations["crossplane.io/external-name"]'
    assert format_field_path(("spec", "items", 0, "name")) == "spec.items[0].name"


# --- compare ---------------------------------------------------------------------------------


def test_compare_added_removed_changed() -> None:
    ng = nodegroup_v1()
    changed = copy.deepcopy(ng)
    changed["spec"]["forProvider"]["nodeCount"] = 5
    base = tree("dev", cluster_v1(), ng, provider_config())
    head = tree("dev", cluster_v1(), changed, config_map())
    diff = compare(base, head)
    [env] = diff.environments
    assert [r.label() for r in env.added] == ["ConfigMap x"]
    assert [r.label() for r in env.removed] == ["ProviderConfig jeedy"]
    [change] = env.changed
    assert change.after.kind == "NodegroupV1"
    assert [c.dotted for c in change.fields] == ["spec.forProvider.nodeCount"]
    assert not diff.empty


def test_compare_keys_objects_by_identity_not_file() -> None:
    # A moved file is a change of the same object, not a deletion.
    base = tree("dev", provider_config(), folder="platform")
    head = tree("dev", provider_config(), folder="platform/openstack")
    [env] = compare(base, head).environments
    assert (env.added, env.removed) == ((), ())
    [change] = env.changed
    assert change.fields == ()
    assert change.before.relpath != change.after.relpath


def test_compare_environment_order_and_missing_sides() -> None:
    base = {**tree("prod", config_map()), **tree("old", config_map())}
    head = {**tree("dev", config_map()), **tree("prod", config_map())}
    diff = compare(base, head, order=["dev", "prod"])
    assert [e.environment for e in diff.environments] == ["dev", "prod", "old"]
    dev, prod, old = diff.environments
    assert (len(dev.added), prod.empty, len(old.removed)) == (1, True, 1)


def test_compare_files_skips_identical_bytes_but_matches_moved_objects() -> None:
    grown = copy.deepcopy(nodegroup_v1())
    grown["spec"]["forProvider"]["nodeCount"] = 2
    base = {"dev": {"a/c.yaml": to_yaml(cluster_v1()), "a/n.yaml": to_yaml(nodegroup_v1())}}
    head = {"dev": {"a/c.yaml": to_yaml(cluster_v1()), "b/n.yaml": to_yaml(grown)}}
    [env] = compare_files(base, head).environments
    assert (env.added, env.removed) == ((), ())
    [change] = env.changed
    assert (change.before.relpath, change.after.relpath) == ("a/n.yaml", "b/n.yaml")
    assert [c.dotted for c in change.fields] == ["spec.forProvider.nodeCount"]
    # Formatting that differs (an older renderer) is not a change.
    reformatted = {"dev": {"a/c.yaml": json.dumps(cluster_v1()).encode()}}
    assert compare_files(reformatted, {"dev": {"a/c.yaml": to_yaml(cluster_v1())}}).empty


def test_parse_files_round_trips_rendered_yaml() -> None:
    body = cluster_v1()
    assert parse_files({"dev": {"a.yaml": to_yaml(body)}}) == {"dev": {"a.yaml": body}}


# --- deletion guard --------------------------------------------------------------------------


def test_bearing_kinds_come_from_cluster_classes_and_the_platform_list() -> None:
    kinds = cluster_bearing_kinds()
    assert (MAGNUM, "ClusterV1") in kinds and (MAGNUM, "NodegroupV1") in kinds
    assert ("*", "ProviderConfig") in kinds
    assert ("cluster.x-k8s.io", "MachinePool") in kinds
    assert len(kinds) == len(set(kinds))


@pytest.mark.parametrize(
    ("api_version", "kind", "bearing"),
    [
        (f"{MAGNUM}/v1alpha1", "ClusterV1", True),
        (f"{MAGNUM}/v1alpha1", "ClustertemplateV1", False),
        ("cluster.x-k8s.io/v1beta1", "Cluster", True),
        ("cluster.argocd.crossplane.io/v1alpha1", "Cluster", True),
        ("argoproj.io/v1alpha1", "Application", False),
        ("argocd.crossplane.io/v1alpha1", "ProviderConfig", True),
        ("infrastructure.cluster.x-k8s.io/v1beta2", "OCIManagedControlPlane", True),
        ("infrastructure.cluster.x-k8s.io/v1beta2", "OCIClusterIdentity", True),
        ("v1", "ConfigMap", False),
    ],
)
def test_is_cluster_bearing(api_version: str, kind: str, bearing: bool) -> None:
    body = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
    [env] = compare(tree("dev", body), {}).environments
    assert is_cluster_bearing(env.removed[0], cluster_bearing_kinds()) is bearing


def test_deletion_guard_blocks_a_removed_cluster() -> None:
    diff = compare(tree("prod", cluster_v1(), config_map()), tree("prod"))
    [finding] = deletion_guard(diff, retired={})
    assert finding.level == "error"
    assert finding.line().startswith(
        f"error: prod: ClusterV1 k8s-ais-batch-dev-multi-v25 ({MAGNUM}): would be deleted;"
    )
    assert "retired=True" in finding.message


def test_deletion_guard_says_renamed_for_an_added_object_of_the_kind() -> None:
    ng = nodegroup_v1()
    diff = compare(tree("dev", ng), tree("dev", renamed(ng, "k8s-ais-batch-dev-zone-z")))
    [finding] = deletion_guard(diff, retired={})
    assert "(renamed to k8s-ais-batch-dev-zone-z?)" in finding.message


def test_deletion_guard_renamed_cluster_moves_folder() -> None:
    base = tree("dev", cluster_v1(), folder="clusters/old")
    head = tree("dev", renamed(cluster_v1(), "new"), folder="clusters/new")
    [finding] = deletion_guard(compare(base, head), retired={})
    assert "(renamed to new?)" in finding.message


def test_deletion_guard_lets_retired_objects_go() -> None:
    diff = compare(tree("dev", cluster_v1()), tree("dev"))
    [removed] = diff.environments[0].removed
    [finding] = deletion_guard(diff, retired={("dev", removed.identity): "clusters/x.py:3 (c)"})
    assert finding.level == "note"
    assert finding.message == "deleted, retired at clusters/x.py:3 (c)"
    # Retired in another environment does not count.
    [other] = deletion_guard(diff, retired={("prod", removed.identity): "x"})
    assert other.level == "error"


# --- #20: the deletion guard groups its findings by definition module -----------------------


def _cluster(name: str, *pools: str) -> list[dict[str, Any]]:
    """A ClusterV1 named ``name`` and one NodegroupV1 per pool."""
    out = [renamed(cluster_v1(), name)]
    out += [renamed(nodegroup_v1(), f"{name}-{pool}") for pool in pools]
    return out


def _removed(**clusters: list[dict[str, Any]]) -> dict[str, Any]:
    """A base tree of ``clusters`` (name -> bodies) in dev and prod, each in its folder."""
    base: dict[str, dict[str, Any]] = {}
    for name, bodies in clusters.items():
        env = name.rsplit("-", 1)[-1]
        base.setdefault(env, {}).update(tree(env, *bodies, folder=f"clusters/{name}")[env])
    return base


EDH = """
def define(fleet):
    MagnumCluster(fleet, "app", name="edh-app-{env}", environments=["dev", "prod"], ...)
    MagnumCluster(fleet, "reports", name='edh-reports-{env}', environments=["prod"], ...)
"""
AIS = """
def define(fleet):
    MagnumCluster(fleet, "batch", name=per_env(dev="ais-batch-dev", prod="ais-batch-prod"), ...)
"""


def test_deletion_findings_group_by_the_module_that_defined_them() -> None:
    base = _removed(
        **{
            "edh-app-dev": _cluster("edh-app-dev", "a", "b"),
            "edh-app-prod": _cluster("edh-app-prod", "a", "b"),
            "edh-reports-prod": _cluster("edh-reports-prod", "a"),
            "ais-batch-dev": _cluster("ais-batch-dev"),
        }
    )
    diff = compare(base, {})
    judged = deletions(diff, retired={})
    assert len(judged) == 9  # one per object, as deletion_guard reports them
    sources = DefinitionSources(
        base_modules={"clusters/jeedy_edh.py": EDH, "clusters/jeedy_ais.py": AIS}
    )
    findings = grouped_by_source(judged, sources)
    assert [f.line().split("; ")[0] for f in findings] == [
        "error: clusters/jeedy_ais.py: 1 cluster removed (1 object in dev): ais-batch-dev",
        "error: clusters/jeedy_edh.py: 3 clusters removed (8 objects in dev, prod): "
        "edh-app-dev, edh-app-prod, edh-reports-prod",
    ]
    edh = findings[1]
    assert edh.message.endswith(GROUP_RETIRE_HINT)
    # The detail keeps each object's own verdict.
    assert len(edh.details) == 8
    assert edh.details[0] == (
        f"error: dev: ClusterV1 edh-app-dev ({MAGNUM}): would be deleted; ArgoCD would prune "
        "it, which can delete the real cluster or its nodes; " + RETIRE_HINT
    )
    assert f"error: prod: NodegroupV1 edh-reports-prod-a ({MAGNUM}): would be deleted;" in (
        "\n".join(edh.details)
    )


def test_deletion_findings_without_a_known_module_still_group() -> None:
    diff = compare(_removed(**{"x-dev": _cluster("x-dev", "a")}), {})
    # Two edited modules, neither spelling the name: the module is unknown.
    sources = DefinitionSources(base_modules={"clusters/a.py": AIS, "clusters/b.py": EDH})
    [finding] = grouped_by_source(deletions(diff, retired={}), sources)
    assert finding.subject == REMOVED_DEFINITIONS
    assert finding.message.startswith("1 cluster removed (2 objects in dev): x-dev;")
    # The only module the change edits is taken as the one.
    [only] = grouped_by_source(
        deletions(diff, retired={}), DefinitionSources(base_modules={"clusters/a.py": AIS})
    )
    assert only.subject == "clusters/a.py"


def test_deletion_findings_find_the_module_by_the_magnum_name() -> None:
    """A cluster named ``Cluster_1-{env}`` in Magnum lives in the folder of its object
    name, ``cluster-1-dev``: the module that spells the Magnum name defined it."""
    diff = compare(_removed(**{"cluster-1-dev": _cluster("cluster-1-dev", "a")}), {})
    homelab = 'MagnumCluster(fleet, "c", name="Cluster_1-{env}", environments=["dev"], ...)'
    sources = DefinitionSources(base_modules={"clusters/a.py": AIS, "clusters/homelab.py": homelab})
    [finding] = grouped_by_source(deletions(diff, retired={}), sources)
    assert finding.subject == "clusters/homelab.py"


def test_deletion_findings_of_a_rename_name_the_new_objects_module() -> None:
    base = tree("dev", *_cluster("old-dev"), folder="clusters/old-dev")
    head = tree("dev", *_cluster("new-dev"), folder="clusters/new-dev")
    diff = compare(base, head)
    [added] = [r for r in diff.environments[0].added if r.kind == "ClusterV1"]
    sources = DefinitionSources(head={("dev", added.identity): "clusters/ais.py:7 (batch)"})
    [finding] = grouped_by_source(deletions(diff, retired={}), sources)
    assert finding.line().startswith(
        "error: clusters/ais.py: 1 cluster removed (1 object in dev): old-dev (renamed to "
        "new-dev?); "
    )


def test_a_shared_object_removed_in_several_environments_is_named_once() -> None:
    base = {**tree("dev", provider_config("demo")), **tree("prod", provider_config("demo"))}
    [finding] = grouped_by_source(deletions(compare(base, {}), retired={}))
    assert finding.message.startswith(
        "ProviderConfig demo removed (2 objects in dev, prod); what uses them could no longer "
        "be updated, deleted or authenticate; they can only go once nothing uses them"
    )
    assert len(finding.details) == 2


def test_retired_deletions_are_one_note_per_module() -> None:
    diff = compare(_removed(**{"r-dev": _cluster("r-dev", "a")}), {})
    retired = {("dev", ref.identity): "clusters/r.py:4 (r)" for ref in diff.environments[0].removed}
    [note] = grouped_by_source(deletions(diff, retired=retired))
    assert note.line() == (
        "note: clusters/r.py: 1 cluster removed (2 objects in dev): r-dev; retired, so their "
        "deletion is intended"
    )
    assert [d.split(": deleted")[0] for d in note.details] == [
        f"note: dev: ClusterV1 r-dev ({MAGNUM})",
        f"note: dev: NodegroupV1 r-dev-a ({MAGNUM})",
    ]


def test_deletion_guard_ignores_other_kinds_and_additions() -> None:
    diff = compare(tree("dev", config_map()), tree("dev", cluster_v1()))
    assert deletion_guard(diff, retired={}) == []


def test_deletion_guard_catches_a_changed_api_group() -> None:
    moved = copy.deepcopy(cluster_v1())
    moved["apiVersion"] = "containerinfra.openstack.m.crossplane.io/v1alpha1"
    diff = compare(tree("dev", cluster_v1()), tree("dev", moved))
    [finding] = deletion_guard(diff, retired={})
    assert finding.level == "error"


# --- ProviderConfigs nothing in the base uses ------------------------------------------------

OPENSTACK_CONFIG = "ProviderConfig jeedy-ais (openstack.crossplane.io)"


def rendered(env: str, *bodies: dict[str, Any]) -> dict[str, dict[str, bytes]]:
    """``{env: {relpath: YAML}}``, the files of ``dist/<env>/``."""
    return {env: {path: to_yaml(body) for path, body in tree(env, *bodies)[env].items()}}


def guard_files(base: Files, head: Files) -> list[Finding]:
    """The deletion guard as ``fleet diff`` runs it (nothing retired in the working tree)."""
    diff = compare_files(base, head)
    return deletion_guard(diff, retired={}, unused=unused_objects(diff, base))


def test_a_provider_config_nothing_in_the_base_uses_may_go() -> None:
    # The project's last cluster was retired: the base renders its ProviderConfig only.
    base = rendered("dev", openstack_provider_config(), config_map())
    [finding] = guard_files(base, rendered("dev", config_map()))
    assert finding.line() == (
        f"note: dev: {OPENSTACK_CONFIG}: deleted, unused: nothing in the base revision "
        "references it"
    )


def test_a_provider_config_a_live_cluster_uses_still_fails() -> None:
    base = rendered("dev", openstack_provider_config(), cluster_v1())
    findings = guard_files(base, rendered("dev"))
    assert [(f.level, f.subject) for f in findings] == [
        ("error", f"ClusterV1 k8s-ais-batch-dev-multi-v25 ({MAGNUM})"),
        ("error", OPENSTACK_CONFIG),
    ]
    assert findings[1].message.endswith(UNUSED_HINT)
    # A node group alone is a user too.
    [finding] = guard_files(
        rendered("dev", openstack_provider_config(), nodegroup_v1()),
        rendered("dev", nodegroup_v1()),
    )
    assert (finding.level, finding.subject) == ("error", OPENSTACK_CONFIG)


def test_a_renamed_provider_config_its_clusters_follow_still_fails() -> None:
    moved = copy.deepcopy(cluster_v1())
    moved["spec"]["providerConfigRef"]["name"] = "jeedy"
    base = rendered("dev", openstack_provider_config(), cluster_v1())
    head = rendered("dev", openstack_provider_config("jeedy"), moved)
    [finding] = guard_files(base, head)
    assert finding.level == "error"
    assert finding.message.startswith("would be deleted (renamed to jeedy?); ")


def test_unused_objects_match_the_exact_name_per_environment() -> None:
    # "jeedy" is spelt inside "jeedy-ais" (the file is read) but is not what it references.
    base = {
        **rendered("dev", openstack_provider_config("jeedy"), cluster_v1()),
        **rendered("prod", openstack_provider_config("jeedy-ais")),
    }
    # The cluster in dev does not make prod's ProviderConfig of the same name used.
    head = {**rendered("dev", cluster_v1()), **rendered("prod")}
    diff = compare_files(base, head)
    assert sorted((env, identity[3]) for env, identity in unused_objects(diff, base)) == [
        ("dev", "jeedy"),
        ("prod", "jeedy-ais"),
    ]


def test_a_managed_resource_without_a_ref_uses_the_default_provider_config() -> None:
    implicit = nodegroup_v1()
    del implicit["spec"]["providerConfigRef"]
    assert b"default" not in to_yaml(implicit)
    [finding] = guard_files(
        rendered("dev", openstack_provider_config("default"), implicit), rendered("dev", implicit)
    )
    assert (finding.level, finding.subject) == (
        "error",
        "ProviderConfig default (openstack.crossplane.io)",
    )
    [finding] = guard_files(rendered("dev", openstack_provider_config("default")), rendered("dev"))
    assert finding.level == "note"


def test_the_argocd_provider_config_is_used_by_registrations() -> None:
    base = rendered("dev", argocd_provider_config(), argocd_cluster())
    findings = guard_files(base, rendered("dev", argocd_cluster()))
    assert [(f.level, f.subject) for f in findings] == [
        ("error", "ProviderConfig argocd-provider (argocd.crossplane.io)")
    ]
    [finding] = guard_files(rendered("dev", argocd_provider_config()), rendered("dev"))
    assert finding.level == "note"


def test_a_provider_config_of_an_unknown_family_is_never_taken_as_unused() -> None:
    # provider-kubernetes: the reference rules do not know its managed resources.
    config = {**provider_config("in-cluster"), "apiVersion": "kubernetes.crossplane.io/v1alpha1"}
    [finding] = guard_files(rendered("dev", config), rendered("dev"))
    assert (finding.level, finding.subject) == (
        "error",
        "ProviderConfig in-cluster (kubernetes.crossplane.io)",
    )


# --- OCIClusterIdentities nothing in the base uses -------------------------------------------

INFRA = "infrastructure.cluster.x-k8s.io"
TENANCY = f"OCIClusterIdentity oke-clusters/oci-tenancy ({INFRA})"


def oci_identity(name: str = "oci-tenancy", namespace: str = "oke-clusters") -> dict[str, Any]:
    return {
        "apiVersion": f"{INFRA}/v1beta2",
        "kind": "OCIClusterIdentity",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "allowedNamespaces": {"list": ["oke"]},
            "principalSecret": {"name": "oci-user-principal", "namespace": namespace},
            "type": "UserPrincipal",
        },
    }


def oke_cluster(**identity_ref: str) -> dict[str, Any]:
    """CAPOCI's OCIManagedCluster oke-dev (namespace oke), with ``identity_ref`` if given."""
    [body] = [b for b in capoci_managed() if b["kind"] == "OCIManagedCluster"]
    if identity_ref:
        body["spec"]["identityRef"] = identity_ref
    return body


def tenancy_ref(**overrides: str) -> dict[str, str]:
    ref = {
        "apiVersion": f"{INFRA}/v1beta2",
        "kind": "OCIClusterIdentity",
        "name": "oci-tenancy",
        "namespace": "oke-clusters",
    }
    ref.update(overrides)
    return {k: v for k, v in ref.items() if v}


def test_an_oci_identity_a_live_cluster_uses_fails() -> None:
    cluster = oke_cluster(**tenancy_ref())
    [finding] = guard_files(rendered("dev", oci_identity(), cluster), rendered("dev", cluster))
    assert finding.line() == (
        f"error: dev: {TENANCY}: would be deleted; CAPOCI could no longer authenticate for "
        f"the OKE clusters that use it; {UNUSED_HINT}"
    )
    # Removing the cluster with it is no way round: the base still uses the identity.
    findings = guard_files(rendered("dev", oci_identity(), cluster), rendered("dev"))
    assert [(f.level, f.subject) for f in findings] == [
        ("error", f"OCIClusterIdentity oke-clusters/oci-tenancy ({INFRA})"),
        ("error", f"OCIManagedCluster oke/oke-dev ({INFRA})"),
    ]


def test_an_oci_identity_nothing_in_the_base_uses_may_go() -> None:
    # Its last cluster was retired: the base renders the identity only.
    [finding] = guard_files(rendered("dev", oci_identity(), config_map()), rendered("dev"))
    assert finding.line() == (
        f"note: dev: {TENANCY}: deleted, unused: nothing in the base revision references it"
    )
    # A cluster without identityRef uses CAPOCI's own credentials, not the identity.
    [finding] = guard_files(
        rendered("dev", oci_identity(), oke_cluster()), rendered("dev", oke_cluster())
    )
    assert finding.level == "note"


def test_an_identity_ref_without_a_namespace_means_the_cluster_s() -> None:
    # As CAPOCI looks it up: the ref's namespace, else the cluster's (oke); not its kind.
    cluster = oke_cluster(**tenancy_ref(namespace="", kind="", apiVersion=""))
    assert cluster["spec"]["identityRef"] == {"name": "oci-tenancy"}
    in_oke, elsewhere = oci_identity(namespace="oke"), oci_identity()
    base = rendered("dev", in_oke, elsewhere, cluster)
    findings = guard_files(base, rendered("dev", cluster))
    assert [(f.level, f.subject) for f in findings] == [
        ("note", TENANCY),
        ("error", f"OCIClusterIdentity oke/oci-tenancy ({INFRA})"),
    ]
    # An explicit namespace is the one used, even when it is another than the cluster's.
    cluster = oke_cluster(**tenancy_ref())
    findings = guard_files(rendered("dev", in_oke, elsewhere, cluster), rendered("dev", cluster))
    assert [(f.level, f.subject) for f in findings] == [
        ("error", TENANCY),
        ("note", f"OCIClusterIdentity oke/oci-tenancy ({INFRA})"),
    ]


def test_an_oci_identity_used_in_one_environment_only_goes_from_the_other() -> None:
    cluster = oke_cluster(**tenancy_ref())
    base = {
        **rendered("dev", oci_identity(), cluster),
        **rendered("prod", oci_identity()),
    }
    findings = guard_files(base, {**rendered("dev", cluster), **rendered("prod")})
    assert [(f.level, f.environment) for f in findings] == [("error", "dev"), ("note", "prod")]
    assert sorted(env for env, _ in unused_objects(compare_files(base, {}), base)) == ["prod"]


def test_a_renamed_oci_identity_its_clusters_follow_still_fails() -> None:
    base = rendered("dev", oci_identity(), oke_cluster(**tenancy_ref()))
    head = rendered("dev", oci_identity("tenancy"), oke_cluster(**tenancy_ref(name="tenancy")))
    [finding] = guard_files(base, head)
    assert (finding.level, finding.subject) == ("error", TENANCY)
    assert finding.message.startswith("would be deleted (renamed to tenancy?); CAPOCI ")


# --- immutable-field guard -------------------------------------------------------------------


@pytest.fixture(scope="module")
def immutable() -> dict[tuple[str, str], tuple[ImmutableField, ...]]:
    return immutable_fields(load_crds(crds_dir()))


def test_immutable_fields_from_the_real_crds(
    immutable: dict[tuple[str, str], tuple[ImmutableField, ...]],
) -> None:
    fields = {f.path: f.replaces for f in immutable[(f"{MAGNUM}/v1alpha1", "ClusterV1")]}
    assert fields[("spec", "forProvider", "labels")] == "node"  # upstream's wording
    assert ("spec", "forProvider", "name") in fields
    assert ("spec", "forProvider", "nodeCount") not in fields
    assert not any(p[0] == "status" for p in fields)


def test_immutable_guard_warns_then_fails_when_strict() -> None:
    rules = {("g/v1", "K"): (ImmutableField(("spec", "forProvider", "labels"), "thing"),)}
    old = {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "k"}}
    old["spec"] = {"forProvider": {"labels": {"a": "false"}, "nodeCount": 1}}
    new = copy.deepcopy(old)
    new["spec"]["forProvider"]["labels"]["a"] = "true"
    new["spec"]["forProvider"]["nodeCount"] = 7
    diff = compare(tree("dev", old), tree("dev", new))
    [warning] = immutable_guard(diff, immutable=rules)
    assert warning.level == "warning"
    assert warning.message.startswith(
        'spec.forProvider.labels.a: "false" -> "true": the CRD says changing '
        "spec.forProvider.labels creates a new thing"
    )
    [error] = immutable_guard(diff, immutable=rules, strict=True)
    assert error.level == "error"


def test_immutable_guard_leaves_magnum_kinds_to_the_force_new_guard(
    immutable: dict[tuple[str, str], tuple[ImmutableField, ...]],
) -> None:
    new = copy.deepcopy(cluster_v1())
    new["spec"]["forProvider"]["labels"]["monitoring_enabled"] = "true"
    diff = compare(tree("dev", cluster_v1()), tree("dev", new))
    assert immutable_guard(diff, immutable=immutable, strict=True) == []
    [error] = force_new_guard(diff)
    assert error.level == "error"


def test_immutable_guard_is_quiet_for_mutable_fields(
    immutable: dict[tuple[str, str], tuple[ImmutableField, ...]],
) -> None:
    new = copy.deepcopy(cluster_v1())
    new["spec"]["forProvider"]["nodeCount"] = 7
    diff = compare(tree("dev", cluster_v1()), tree("dev", new))
    assert immutable_guard(diff, immutable=immutable, strict=True) == []


def test_immutable_guard_wildcards() -> None:
    rules = {("g/v1", "K"): (ImmutableField(("spec", "items", "[]", "id"), "thing"),)}
    old = {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "k"}}
    old["spec"] = {"items": [{"id": "a", "size": 1}]}
    new = copy.deepcopy(old)
    new["spec"]["items"][0]["size"] = 2
    assert immutable_guard(compare(tree("e", old), tree("e", new)), immutable=rules) == []
    new["spec"]["items"][0]["id"] = "b"
    [finding] = immutable_guard(compare(tree("e", old), tree("e", new)), immutable=rules)
    assert "spec.items[0].id" in finding.message


# --- ForceNew guard (vendored from terraform-provider-openstack) ------------------------------


def changed(body: dict[str, Any], edit: Any) -> FleetDiff:
    new = copy.deepcopy(body)
    edit(new)
    return compare(tree("dev", body), tree("dev", new))


def test_vendored_force_new_fields_are_crd_fields_and_more_than_the_crd_text_says(
    immutable: dict[tuple[str, str], tuple[ImmutableField, ...]],
) -> None:
    """The table comes from terraform-provider-openstack v3.4.0
    ``openstack/resource_openstack_containerinfra_cluster_v1.go`` and ``..._nodegroup_v1.go``
    (``ForceNew: true``), because provider-openstack v0.9.0's ``config/schema.json`` has no
    force_new. Every field it names is a forProvider field of the pinned CRDs, and it holds
    the ForceNew fields the CRD descriptions do not mark (flavor, keypair, masterCount, and
    every NodegroupV1 field)."""
    index = load_crds(crds_dir())
    table = MAGNUM_FORCE_NEW.table()
    for (group, kind), fields in table.kinds.items():
        if group != MAGNUM:
            continue
        crd = index.schemas[(f"{group}/v1alpha1", kind)]
        props = crd.schema["properties"]["spec"]["properties"]["forProvider"]["properties"]
        assert set(fields) | table.updatable[(group, kind)] <= set(props)
    described = {f.path[2] for f in immutable[(f"{MAGNUM}/v1alpha1", "ClusterV1")]}
    cluster = set(table.kinds[(MAGNUM, "ClusterV1")])
    assert {"flavor", "keypair", "masterCount", "masterFlavor"} <= cluster - described
    assert table.updatable[(MAGNUM, "ClusterV1")] == {"clusterTemplateId", "nodeCount"}
    assert table.updatable[(MAGNUM, "NodegroupV1")] == {"nodeCount", "minNodeCount", "maxNodeCount"}
    assert (f"{MAGNUM}/v1alpha1", "NodegroupV1") not in immutable
    data = json.loads(FORCE_NEW_DATA.read_text())
    assert data["source"]["commit"] == "4fd8eba1f85edfdc7aed2d17bae3f3c814abad41"
    assert data["kinds"]["ClusterV1"]["blob"] == "6b8f6de34351e7be2f5b3f78802cd447e8f2f4af"


def test_a_refused_field_names_the_declarations_argument() -> None:
    """The option tables say which argument a forProvider field renders from: the user
    edited ``create_timeout_minutes`` and ``flavor`` (NodeGroup), not ``createTimeout`` and
    ``flavorId``. Where both names are the same, one is enough."""
    diff = changed(
        cluster_v1(),
        lambda b: b["spec"]["forProvider"].update(createTimeout=90, keypair="other-key"),
    )
    [error] = force_new_guard(diff)
    assert "Terraform marks createTimeout (create_timeout_minutes), keypair ForceNew" in (
        error.message
    )
    group = changed(nodegroup_v1(), lambda b: b["spec"]["forProvider"].update(flavorId="g1"))
    [error] = force_new_guard(group)
    assert "Terraform marks flavorId (flavor) ForceNew" in error.message


def test_force_new_change_fails_by_default_and_says_what_to_do() -> None:
    """upjet v2.2.0 ``pkg/controller/external_tfpluginsdk.go``: ``assertNoForceNew`` runs
    before Apply in ``Update`` and wraps its error in the refusal quoted by the guard."""
    diff = changed(cluster_v1(), lambda b: b["spec"]["forProvider"].update(flavor="m2.2xlarge"))
    [error] = force_new_guard(diff)
    assert error.level == "error"
    assert error.message.startswith('spec.forProvider.flavor: "m2.xlarge" -> "m2.2xlarge": ')
    assert UPJET_REFUSAL in error.message
    assert "blue/green: declare a new cluster with a new name" in error.message
    group = changed(nodegroup_v1(), lambda b: b["spec"]["forProvider"].update(flavorId="g1"))
    [error] = force_new_guard(group)
    assert (error.level, error.subject) == ("error", f"NodegroupV1 zone-a-xlarge ({MAGNUM})")
    assert "declare a new node group with a new name" in error.message


def test_in_place_fields_pass() -> None:
    diff = changed(cluster_v1(), lambda b: b["spec"]["forProvider"].update(nodeCount=4))
    assert force_new_guard(diff) == []
    grown = changed(
        nodegroup_v1(),
        lambda b: b["spec"]["forProvider"].update(nodeCount=3, minNodeCount=1, maxNodeCount=5),
    )
    assert force_new_guard(grown) == []


def test_removed_computed_field_passes_but_added_one_warns() -> None:
    """Optional+Computed arguments (``keypair``) keep the cloud's value when left out;
    ``merge_labels`` is not computed, so removing it is a change."""
    gone = changed(cluster_v1(), lambda b: b["spec"]["forProvider"].pop("keypair"))
    assert force_new_guard(gone) == []
    merge = changed(cluster_v1(), lambda b: b["spec"]["forProvider"].pop("mergeLabels"))
    assert [f.level for f in force_new_guard(merge)] == ["error"]
    added = changed(cluster_v1(), lambda b: b["spec"]["forProvider"].update(dockerVolumeSize=50))
    [warning] = force_new_guard(added)
    assert warning.level == "warning"
    assert "unless the value equals what Magnum already has" in warning.message


LABEL_EDITS = {
    "added": lambda labels: labels.update(monitoring_enabled_extra="true"),
    "removed": lambda labels: labels.pop("monitoring_enabled"),
    "changed": lambda labels: labels.update(monitoring_enabled="true"),
}


@pytest.mark.parametrize("kind", ["ClusterV1", "NodegroupV1"])
@pytest.mark.parametrize("edit", sorted(LABEL_EDITS))
def test_any_label_key_added_removed_or_changed_is_refused(kind: str, edit: str) -> None:
    """terraform-provider-openstack v3.4.0 ``openstack/resource_openstack_containerinfra_
    {cluster,nodegroup}_v1.go``: ``labels`` is ``TypeMap``, Optional, ForceNew, Computed;
    terraform-plugin-sdk v2.38.2 ``helper/schema/schema.go`` ``diffMap`` diffs a map key by
    key (a key only in the state is ``NewRemoved``) and ``finalizeDiff`` sets
    ``RequiresNew = Old != New`` for each: upjet v2.2.0 refuses the update. Both kinds,
    all three edits, with the blue/green (cluster) or retire (node group) path."""
    assert MAGNUM_FORCE_NEW.table().kinds[(MAGNUM, kind)]["labels"].map
    body = copy.deepcopy(cluster_v1() if kind == "ClusterV1" else nodegroup_v1())
    body["spec"]["forProvider"]["labels"] = {"monitoring_enabled": "false", "kube_tag": "v1"}
    diff = changed(body, lambda b: LABEL_EDITS[edit](b["spec"]["forProvider"]["labels"]))
    [error] = force_new_guard(diff)
    assert error.level == "error"
    assert error.message.startswith("spec.forProvider.labels.monitoring_enabled")
    assert UPJET_REFUSAL in error.message
    assert "Terraform marks labels ForceNew" in error.message
    assert ("blue/green" if kind == "ClusterV1" else "retire this one") in error.message


def test_an_emptied_label_map_is_refused_but_a_dropped_one_is_a_note() -> None:
    """``diffMap``: ``if n == nil && schema.Computed { return nil }`` -- only a map missing
    from the configuration is no change; an empty map is a configuration without the state's
    keys (``ConfigFieldReader.readMap`` returns an empty, existing map), each key refused."""
    body = copy.deepcopy(cluster_v1())
    body["spec"]["forProvider"]["labels"] = {"monitoring_enabled": "false"}
    [error] = force_new_guard(changed(body, lambda b: b["spec"]["forProvider"].update(labels={})))
    assert error.level == "error"
    [note] = force_new_guard(changed(body, lambda b: b["spec"]["forProvider"].pop("labels")))
    assert note.level == "note"
    assert "labels is left out entirely" in note.message
    assert "keeps the values Magnum has" in note.message


def test_template_id_name_to_uuid_is_a_note_and_an_upgrade_is_judged_by_driver() -> None:
    """openstack/magnum 22.0.0 ``magnum/drivers/heat/driver.py``: the Heat driver raises
    NotSupported for upgrades (since 18.0.0, commit 2fd3059f). A ``clusterTemplateId`` is no
    ForceNew field: the Magnum plug-in's upgrade rule judges it (tests/test_upgrade_in_place.py
    has the drivers), not the ForceNew guard."""

    def named(body: dict[str, Any]) -> None:
        body["spec"]["forProvider"]["clusterTemplateId"] = "kubernetes-1.25.3-3-multi"

    base = copy.deepcopy(cluster_v1())
    named(base)
    renamed = compare(tree("dev", base), tree("dev", cluster_v1()))
    assert force_new_guard(renamed) == []
    files = {"dev": {"c.yaml": to_yaml(base)}}
    head = {"dev": {"c.yaml": to_yaml(cluster_v1())}}
    [note] = change_rule_guard(compare_files(files, head), files, head)
    assert note.level == "note" and "no upgrade" in note.message
    upgraded = copy.deepcopy(cluster_v1())
    upgraded["spec"]["forProvider"]["clusterTemplateId"] = "7d0e1f2a-3b4c-4d5e-8f6a-7b8c9d0e1f2a"
    head = {"dev": {"c.yaml": to_yaml(upgraded)}}
    base_files = {"dev": {"c.yaml": to_yaml(cluster_v1())}}
    [refusal] = change_rule_guard(compare_files(base_files, head), base_files, head)
    # the seed's ClusterV1 names no driver: Heat rules
    assert refusal.level == "error" and "driver is not known" in refusal.message


def test_init_provider_change_is_a_note() -> None:
    ng = copy.deepcopy(nodegroup_v1())
    ng["spec"]["initProvider"] = {"nodeCount": 1}
    [note] = force_new_guard(changed(ng, lambda b: b["spec"]["initProvider"].update(nodeCount=2)))
    assert note.level == "note" and "used only to create the object" in note.message
    assert "changes nothing on the existing one" in note.message

    def moved(body: dict[str, Any]) -> None:
        body["spec"]["initProvider"] = {"nodeCount": body["spec"]["forProvider"].pop("nodeCount")}

    [note] = force_new_guard(changed(nodegroup_v1(), moved))
    assert "the provider no longer sets these fields on the existing object" in note.message


def test_namespaced_magnum_kinds_are_guarded_too() -> None:
    body = copy.deepcopy(cluster_v1())
    body["apiVersion"] = "containerinfra.openstack.m.crossplane.io/v1alpha1"
    diff = changed(body, lambda b: b["spec"]["forProvider"].update(masterCount=3))
    assert [f.level for f in force_new_guard(diff)] == ["error"]


# --- external-name guard ---------------------------------------------------------------------


def _external_name(body: dict[str, Any], value: str | None) -> None:
    annotations = body["metadata"].setdefault("annotations", {})
    if value is None:
        annotations.pop("crossplane.io/external-name", None)
    else:
        annotations["crossplane.io/external-name"] = value


def test_external_name_change_or_removal_fails() -> None:
    """provider-openstack v0.9.0 ``config/external_name.go``: Magnum resources use upjet's
    ``IdentifierFromProvider``; upjet v2.2.0 ``pkg/controller/external_tfpluginsdk.go`` takes
    the Terraform ID from the external name (``getExtendedParameters``) and treats a state
    without ID as a resource to create (``resourceExists := newState != nil &&
    newState.ID != ""``)."""
    uuid = "9d7c1c2a-3b4e-4f5a-8b6c-7d8e9f0a1b2c"
    [error] = external_name_guard(changed(cluster_v1(), lambda b: _external_name(b, uuid)))
    assert error.level == "error" and "the external name is changed" in error.message
    [error] = external_name_guard(changed(cluster_v1(), lambda b: _external_name(b, None)))
    assert "the external name is removed" in error.message
    assert "Keep the old value" in error.message


def test_external_name_added_or_kept_passes() -> None:
    bare = copy.deepcopy(cluster_v1())
    _external_name(bare, None)
    assert external_name_guard(changed(bare, lambda b: _external_name(b, "x"))) == []
    grown = changed(cluster_v1(), lambda b: b["spec"]["forProvider"].update(nodeCount=9))
    assert external_name_guard(grown) == []


# --- reports ---------------------------------------------------------------------------------


def sample_diff() -> tuple[FleetDiff, list[Any]]:
    ng = nodegroup_v1()
    grown = copy.deepcopy(ng)
    grown["spec"]["forProvider"]["nodeCount"] = 3
    grown["metadata"]["annotations"] = {"crossplane.io/external-name": "x/```y"}
    base = {
        **tree("dev", cluster_v1(), ng),
        **tree("prod", cluster_v1(), provider_config(), folder="platform"),
    }
    head = {**tree("dev", cluster_v1(), grown, config_map()), **tree("prod", cluster_v1())}
    head["prod"] = base["prod"] | {}
    del head["prod"][next(p for p in head["prod"] if "providerconfig" in p)]
    diff = compare(base, head, order=["dev", "prod"])
    return diff, deletion_guard(diff, retired={})


def test_text_report(snapshot: SnapshotAssertion) -> None:
    diff, findings = sample_diff()
    assert render_text(diff, findings, title="Base abc -> working tree.") == snapshot


def test_markdown_report(snapshot: SnapshotAssertion) -> None:
    diff, findings = sample_diff()
    extra = [ReportSection("What the change touches", "```mermaid\ngraph LR\n  a --> b\n```")]
    text = render_markdown(
        diff, findings, title="Base `abc` -> working tree.", extra_sections=extra
    )
    assert "> [!CAUTION]" in text
    assert "| `dev` | 1 | 0 | 1 |" in text
    assert text.count("<details>") == 1
    # A value holding backticks cannot close the fence it is shown in.
    assert "````diff" in text
    assert text.index("#### What the change touches") > text.index("<details>")
    assert text == snapshot


def test_markdown_budget_leaves_details_out_but_keeps_the_summary() -> None:
    diff, findings = sample_diff()
    text = render_markdown(diff, findings, title="t", budget=10)
    assert "<details>" not in text
    assert "_1 more changed object left out" in text
    assert text.count("- _and 1 more (run `fleet diff` to see all)_") == 2  # added, removed
    assert "ConfigMap x" not in text
    assert "| `prod` | 0 | 1 | 0 |" in text


def test_empty_diff_reports() -> None:
    diff = compare(tree("dev", config_map()), tree("dev", config_map()))
    assert diff.empty
    assert render_text(diff, [], title="t") == "t\ndev: no changes\n\nno guard findings\n"
    assert "No object changes in any environment." in render_markdown(diff, [], title="t")
