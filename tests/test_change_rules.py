"""``fleet diff``'s plug-in change rules: a Magnum cluster moved to another OpenStack project
(#21 item 2a), an OKE cluster downgraded from enhanced to basic (#21 item 2c)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from crd_samples import capoci_managed, cluster_v1, nodegroup_v1

from fleet.clouds.magnum.changes import MAGNUM_CHANGE_RULES
from fleet.clouds.oci.changes import BASIC, ENHANCED, OKE_CHANGE_RULES
from fleet.clouds.oci.cluster_values import ClusterType
from fleet.core.manifest import Manifest
from fleet.guards.change_rules import change_rule_guard, change_rules
from fleet.guards.diff import Finding, compare_files
from fleet.pipeline.yaml_canonical import to_yaml

MAGNUM = "containerinfra.openstack.crossplane.io"


def files(*bodies: dict[str, Any]) -> dict[str, dict[str, bytes]]:
    """``{"dev": {relpath: yaml}}``, each object placed the way synth places it."""
    return {"dev": {Manifest("dev", b, "x", "").relpath: to_yaml(b) for b in bodies}}


def guard(base: list[dict[str, Any]], head: list[dict[str, Any]]) -> list[Finding]:
    old, new = files(*base), files(*head)
    return change_rule_guard(compare_files(old, new), old, new)


def project(name: str, **declared: str) -> dict[str, Any]:
    """A ProviderConfig as OpenStackProject renders it (``fleet.openstack/*`` annotations)."""
    return {
        "apiVersion": "openstack.crossplane.io/v1beta1",
        "kind": "ProviderConfig",
        "metadata": {
            "name": name,
            "annotations": {
                f"fleet.openstack/{k.replace('_', '-')}": v for k, v in declared.items()
            },
        },
        "spec": {
            "credentials": {
                "source": "Secret",
                "secretRef": {
                    "name": f"{name}-openstack-credentials",
                    "namespace": "crossplane-system",
                    "key": "credentials",
                },
            }
        },
    }


def using(body: dict[str, Any], config: str) -> dict[str, Any]:
    out = copy.deepcopy(body)
    out["spec"]["providerConfigRef"] = {"name": config}
    return out


FULL = {"auth_url": "https://keystone.example.org/v3", "region": "cern", "project_id": "p1"}


def test_the_plug_ins_bring_the_rules() -> None:
    rules = change_rules()
    assert all(r in rules for r in (*MAGNUM_CHANGE_RULES, *OKE_CHANGE_RULES))
    assert (ClusterType.BASIC.value, ClusterType.ENHANCED.value) == (BASIC, ENHANCED)


@pytest.mark.parametrize("make", [cluster_v1, nodegroup_v1], ids=["ClusterV1", "NodegroupV1"])
def test_a_magnum_object_moved_to_another_project_fails_with_the_blue_green_path(
    make: Any,
) -> None:
    """openstack/magnum stable/2025.1 ``magnum/db/sqlalchemy/api.py`` ``_add_tenant_filters``
    (every cluster query filtered by the caller's project); terraform-provider-openstack
    v3.4.0 ``resource_openstack_containerinfra_cluster_v1.go`` Read -> ``openstack/util.go``
    ``CheckDeleted`` (404: ``d.SetId("")``); crossplane/upjet v2.2.0
    ``pkg/controller/external_tfpluginsdk.go`` ``Observe`` (no ID: the resource does not
    exist, so ``Create``)."""
    a, b = (
        project("a", project_name="A", region="cern"),
        project("b", project_name="B", region="cern"),
    )
    [error] = guard([a, b, using(make(), "a")], [a, b, using(make(), "b")])
    assert error.level == "error"
    assert error.message.startswith('spec.providerConfigRef: "a" -> "b" may move the ')
    assert "project-name 'A' -> 'B'" in error.message
    assert "the provider's Read gets 404 there, clears the ID and creates a second cluster" in (
        error.message
    )
    assert "blue/green: declare a new cluster in the new project" in error.message
    assert "then retire this one" in error.message


def test_a_move_is_refused_unless_the_same_project_is_declared_on_both_sides() -> None:
    """Names alone are no proof: two ProviderConfigs that both say project "A" but no
    Keystone URL may still reach two clouds."""
    a, b = (
        project("a", project_name="A", region="cern"),
        project("b", project_name="A", region="cern"),
    )
    [error] = guard([a, b, using(cluster_v1(), "a")], [a, b, using(cluster_v1(), "b")])
    assert error.level == "error"
    assert "auth-url not declared on both sides" in error.message
    assert "declare project_id, auth_url and region on both OpenStackProjects" in error.message


def test_a_move_between_two_declarations_of_the_same_project_is_a_note() -> None:
    a, b = project("a", **FULL), project("b", **FULL)
    [note] = guard([a, b, using(cluster_v1(), "a")], [a, b, using(cluster_v1(), "b")])
    assert note.level == "note"
    assert "both ProviderConfigs declare the same project" in note.message
    # Placeholders kept from a tfvars file (``auth_url = "<auth_url>"``) declare nothing.
    a, b = project("a", **{**FULL, "auth_url": "<auth_url>"}), project("b", **FULL)
    [error] = guard([a, b, using(cluster_v1(), "a")], [a, b, using(cluster_v1(), "b")])
    assert "auth-url not declared on both sides" in error.message


def test_the_managed_resources_own_region_decides() -> None:
    """terraform-provider-openstack v3.4.0 ``openstack/util.go`` ``GetRegion``: the
    resource's ``region`` wins over the provider's."""
    a, b = project("a", **FULL), project("b", **{**FULL, "region": "other"})
    pinned = copy.deepcopy(cluster_v1())
    pinned["spec"]["forProvider"]["region"] = "cern"
    [note] = guard([a, b, using(pinned, "a")], [a, b, using(pinned, "b")])
    assert note.level == "note"
    [error] = guard([a, b, using(cluster_v1(), "a")], [a, b, using(cluster_v1(), "b")])
    assert "region 'cern' -> 'other'" in error.message


def test_a_provider_config_whose_declared_project_changes_under_live_clusters_fails() -> None:
    old, new = project("a", **FULL), project("a", **{**FULL, "project_id": "p2"})
    cluster, group = using(cluster_v1(), "a"), using(nodegroup_v1(), "a")
    [error] = guard([old, cluster, group], [new, cluster, group])
    assert error.level == "error"
    assert error.subject == "ProviderConfig a (openstack.crossplane.io)"
    assert error.message.startswith("project-id 'p1' -> 'p2', on the ProviderConfig of ClusterV1 ")
    assert ", NodegroupV1 zone-a-xlarge: if its credentials now reach another" in error.message
    assert "creates a second one of each" in error.message
    assert "declare a new OpenStackProject for the new project" in error.message
    # Nothing uses it: nothing to recreate.
    assert guard([old], [new]) == []


def test_a_provider_configs_secret_changes_fail_unless_the_project_is_declared() -> None:
    def moved(body: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(body)
        out["spec"]["credentials"]["secretRef"]["name"] = "rotated"
        return out

    cluster = using(cluster_v1(), "a")
    loose = project("a", project_name="A")
    [error] = guard([loose, cluster], [moved(loose), cluster])
    assert error.level == "error"
    assert error.message.startswith("spec.credentials: another Secret (auth-url not declared")
    declared = project("a", **FULL)
    [note] = guard([declared, cluster], [moved(declared), cluster])
    assert note.level == "note"


def control_plane(cluster_type: str | None) -> dict[str, Any]:
    [body] = [b for b in capoci_managed() if b["kind"] == "OCIManagedControlPlane"]
    body = copy.deepcopy(body)
    body["spec"].pop("clusterType", None)
    if cluster_type is not None:
        body["spec"]["clusterType"] = cluster_type
    return body


@pytest.mark.parametrize("after", [BASIC, None], ids=["basic", "absent"])
def test_an_enhanced_oke_cluster_never_goes_back(after: str | None) -> None:
    """oracle/cluster-api-provider-oci v0.24.0 ``cloud/scope/managed_control_plane.go``:
    ``UpdateControlPlane`` sends ``details.Type = getOKEClusterTypeFromSpecType(...)`` with
    every control-plane update; ``setControlPlaneSpecDefaults`` compares an empty type as
    BASIC_CLUSTER while ``getOKEClusterTypeFromSpecType`` sends none. OKE refuses the
    downgrade (OCI documentation, "Creating an Enhanced Cluster")."""
    [error] = guard([control_plane(ENHANCED)], [control_plane(after)])
    assert error.level == "error"
    assert error.subject.startswith("OCIManagedControlPlane ")
    assert "OKE cannot downgrade an enhanced cluster" in error.message
    assert "blue/green: declare a new basic cluster" in error.message
    assert ("UpdateCluster on every reconcile" in error.message) == (after is None)


def test_a_basic_oke_cluster_may_become_enhanced_with_a_warning() -> None:
    [warning] = guard([control_plane(BASIC)], [control_plane(ENHANCED)])
    assert warning.level == "warning"
    assert "one-way" in warning.message
    assert guard([control_plane(None)], [control_plane(BASIC)]) == []
