"""Magnum's external name: ArgoCD and the provider do not fight over it (issue 21, item 3).

Upstream behaviour (read at the pinned tags):

* crossplane/upjet v2.2.0 ``pkg/controller/external_tfpluginsdk.go``: ``Connect`` rebuilds
  the Terraform state from ``crossplane.io/external-name`` only when the operation tracker
  has none (``tfState["id"] = params["id"]``); ``Create`` stores the new state (ID = the
  Magnum UUID) and ``Observe`` calls ``setExternalName``, which writes the state's ID into the
  annotation. ``pkg/controller/nofork_store.go``: the tracker is kept per object UID for the
  process's lifetime. So after a Create the annotation becomes the UUID on every poll, and an
  ArgoCD self-heal writing the rendered name back loses again, until the provider restarts.
* terraform-provider-openstack v3.4.0 ``resource_openstack_containerinfra_cluster_v1.go``:
  Create ``d.SetId(<uuid>)``; Read never sets the ID, so an object created with the name as
  external name (after a management-cluster rebuild) keeps it; Magnum resolves a name or a
  UUID (openstack/magnum ``magnum/api/utils.py`` ``get_resource``).
* argoproj/argo-cd v3.5.1 ``util/argo/normalizers/diff_normalizer.go``: each ``jsonPointers``
  entry is a JSON Patch ``remove`` applied to live and desired before diffing (a missing path
  is skipped); ``controller/sync.go`` ``normalizeTargetResources``: with
  ``RespectIgnoreDifferences=true`` the live values of ignored fields are synced, and a
  target without a live object is applied as rendered.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import jsonpointer
from builders import argocd, find, magnum, rendered

from fleet import Fleet, NodeGroup
from fleet.core.manifest import Manifest

EXTERNAL_NAME = "crossplane.io/external-name"
UUID = "1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b"
NODEGROUP_UUID = "9e8d7c6b-5a49-4382-b716-05f4e3d2c1b0"


def _normalized(body: dict[str, Any], ignore: list[dict[str, Any]]) -> dict[str, Any]:
    """ArgoCD's ignore normalizer for ``jsonPointers`` entries (group and kind match)."""
    group = body["apiVersion"].rpartition("/")[0]
    out = copy.deepcopy(body)
    for entry in ignore:
        if entry["group"] != group or entry["kind"] != body["kind"]:
            continue
        for pointer in entry.get("jsonPointers", []):
            try:
                out = jsonpatch.apply_patch(out, [{"op": "remove", "path": pointer}])
            except (jsonpatch.JsonPatchConflict, jsonpointer.JsonPointerException):
                continue  # ArgoCD skips a pointer that does not resolve
    return out


def _with_external_name(m: Manifest, value: str) -> dict[str, Any]:
    live = copy.deepcopy(m.body)
    live["metadata"]["annotations"][EXTERNAL_NAME] = value
    return live


def _magnum_fleet(fleet: Fleet) -> list[Manifest]:
    magnum(fleet, node_groups=[NodeGroup(name="zone-a", flavor="m2.large", node_count=2)])
    argocd(fleet)
    return rendered(fleet)


def test_the_magnum_cluster_application_ignores_the_external_name(fleet: Fleet) -> None:
    out = _magnum_fleet(fleet)
    app = find(out, "Application", "fleet-dev-cluster-mag-dev").body["spec"]
    pointer = "/metadata/annotations/crossplane.io~1external-name"
    assert app["ignoreDifferences"] == [
        {
            "group": "containerinfra.openstack.crossplane.io",
            "jsonPointers": [pointer],
            "kind": kind,
        }
        for kind in ("ClusterV1", "NodegroupV1")
    ]
    assert "RespectIgnoreDifferences=true" in app["syncPolicy"]["syncOptions"]


def test_the_uuid_the_provider_writes_is_no_difference(fleet: Fleet) -> None:
    """What upjet writes after a Create (the UUID; a node group ``<cluster>/<uuid>``) makes
    the live object differ from the rendered one only in the ignored annotation; any other
    change still shows."""
    out = _magnum_fleet(fleet)
    ignore = find(out, "Application", "fleet-dev-cluster-mag-dev").body["spec"]["ignoreDifferences"]
    cluster = find(out, "ClusterV1", "mag-dev")
    group = find(out, "NodegroupV1", "mag-dev-zone-a")
    assert cluster.body["metadata"]["annotations"][EXTERNAL_NAME] == "mag-dev"
    assert group.body["metadata"]["annotations"][EXTERNAL_NAME] == "mag-dev/zone-a"
    for m, live in (
        (cluster, _with_external_name(cluster, UUID)),
        (group, _with_external_name(group, f"mag-dev/{NODEGROUP_UUID}")),
    ):
        assert live != m.body
        assert _normalized(live, ignore) == _normalized(m.body, ignore)
        resized = copy.deepcopy(live)
        resized["spec"]["forProvider"]["nodeCount"] = 7
        assert _normalized(resized, ignore) != _normalized(m.body, ignore)


def test_a_new_object_is_still_created_with_the_name(fleet: Fleet) -> None:
    """Adoption by name after a management-cluster rebuild: the rendered annotation stays
    the name (the Application syncs a missing object as rendered)."""
    out = _magnum_fleet(fleet)
    for kind, name, external in (
        ("ClusterV1", "mag-dev", "mag-dev"),
        ("NodegroupV1", "mag-dev-zone-a", "mag-dev/zone-a"),
    ):
        assert find(out, kind, name).body["metadata"]["annotations"][EXTERNAL_NAME] == external
