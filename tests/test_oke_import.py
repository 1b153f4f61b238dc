"""OKE's importer (issue 30): Terraform-built OKE clusters become OciManagedCluster
declarations adopted by OCID.

Upstream read: oracle/terraform-provider-oci v8.28.0
``internal/service/containerengine/containerengine_{cluster,node_pool}_resource.go`` (every
attribute has a fate, fleet/clouds/oci/importer/fates.py); oracle/cluster-api-provider-oci
v0.24.0 ``cloud/scope/managed_machine_pool.go`` ``FindNodePool`` (a pool found by spec.id
without CreatedBy/ClusterResourceIdentifier freeform tags is refused),
``managed_control_plane.go`` ``GetOKECluster`` (adopted by spec.id, no tag check) and
``UpdateControlPlane`` (tags replaced by OCIManagedCluster.spec.freeformTags),
``cloud/ociutil/ociutil.go`` ``BuildClusterTags``. Fixture modelled on
oracle-terraform-modules/terraform-oci-oke @ 25ef9a02 (see its PROVENANCE.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fleet import Fleet, FleetConfig
from fleet.clouds.oci.importer.importer import plan_oke_import
from fleet.clouds.oci.importer.verify import declare
from fleet.core.errors import DefinitionError, DefinitionErrors

FIXTURE = Path(__file__).parent / "fixtures/terraform/real-oke/terraform-oci-oke"
TFSTATE = FIXTURE / "state/prod.tfstate"
SHOWN = FIXTURE / "state/prod.show.json"
CLUSTER_ID = "ocid1.cluster.oc1.eu-frankfurt-1.aaaaaaaaexampleprodcluster01"


@pytest.fixture
def config(tmp_path: Path) -> FleetConfig:
    return FleetConfig(root=tmp_path)


def _bodies(config: FleetConfig, state: Path) -> dict[tuple[str, str], dict[str, Any]]:
    planned = plan_oke_import(config, [(state, None)])
    (cluster,) = declare(config, planned.clusters)
    return {(m.kind, m.name): dict(m.body) for m in cluster.render("prod")}


def test_both_state_formats_import_the_same(config: FleetConfig) -> None:
    v4 = plan_oke_import(config, [(TFSTATE, None)])
    shown = plan_oke_import(config, [(SHOWN, None)])
    assert v4.text == shown.text
    assert [line.split(" -> ")[-1] for line in v4.report] == [
        line.split(" -> ")[-1] for line in shown.report
    ]


def test_adopted_by_ocid_on_the_existing_network(config: FleetConfig) -> None:
    bodies = _bodies(config, TFSTATE)
    assert bodies[("OCIManagedControlPlane", "oke-prod")]["spec"]["id"] == CLUSTER_ID
    pools = {
        name: body["spec"]["id"]
        for (kind, name), body in bodies.items()
        if kind == "OCIManagedMachinePool"
    }
    assert pools == {
        "oke-prod-np1": "ocid1.nodepool.oc1.eu-frankfurt-1.aaaaaaaaexamplenp1",
        "oke-prod-np2": "ocid1.nodepool.oc1.eu-frankfurt-1.aaaaaaaaexamplenp2",
    }
    infra = bodies[("OCIManagedCluster", "oke-prod")]["spec"]
    assert infra["networkSpec"]["skipNetworkManagement"] is True
    assert (
        infra["networkSpec"]["vcn"]["id"] == "ocid1.vcn.oc1.eu-frankfurt-1.amaaaaaaexampleokevcn01"
    )
    assert infra["freeformTags"] == {"role": "cluster", "state_id": "k3p9xq"}
    # terraform-oci-oke's default CNI: flannel, on the cluster and on every pool.
    cp = bodies[("OCIManagedControlPlane", "oke-prod")]["spec"]
    assert cp["clusterPodNetworkOptions"] == [{"cniType": "FLANNEL_OVERLAY"}]
    pool = bodies[("OCIManagedMachinePool", "oke-prod-np2")]["spec"]
    assert pool["nodePoolNodeConfig"]["nodePoolPodNetworkOptionDetails"] == {
        "cniType": "FLANNEL_OVERLAY"
    }
    assert pool["nodePoolCyclingDetails"]["maximumSurge"] == "25%"
    assert bodies[("MachinePool", "oke-prod-np1")]["spec"]["replicas"] == 3


def test_report_names_the_tag_commands_and_what_is_not_carried(config: FleetConfig) -> None:
    report = plan_oke_import(config, [(TFSTATE, None)]).report
    commands = [line.strip() for line in report if line.startswith("  oci ce ")]
    assert len(commands) == 3  # the cluster and its two pools
    assert commands[0].startswith(f"oci ce cluster update --cluster-id {CLUSTER_ID} ")
    tags = json.loads(commands[1].split("--freeform-tags ")[1].split(" --force")[0].strip("'"))
    assert tags["CreatedBy"] == "OCIClusterAPIProvider"
    assert tags["ClusterResourceIdentifier"] == "0acd9549-b15d-58d6-a35c-42fea842de5a"
    text = "\n".join(report)
    assert "renames it to 'oke-prod-np1'" in text
    assert "per-pool tags are not carried" in text
    assert "private_api_reachable_via" in text


def test_generated_module_declares_what_was_verified(config: FleetConfig) -> None:
    planned = plan_oke_import(config, [(TFSTATE, None)])
    namespace: dict[str, Any] = {}
    exec(compile(planned.text, "oke_imported.py", "exec"), namespace)
    fleet = Fleet(config)
    namespace["define"](fleet)
    (ran,) = [d for d in fleet.declarations() if d.node.id == "oke-prod"]
    (direct,) = declare(config, planned.clusters)
    assert [m.body for m in ran.render("prod")] == [  # type: ignore[attr-defined]
        m.body for m in direct.render("prod")
    ]


def _state_with(tmp_path: Path, change: Any) -> Path:
    state = json.loads(TFSTATE.read_text())
    change(state)
    out = tmp_path / "changed.tfstate"
    out.write_text(json.dumps(state))
    return out


def _resource(state: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(r for r in state["resources"] if r["type"] == kind)


def test_an_attribute_with_no_fate_is_refused(config: FleetConfig, tmp_path: Path) -> None:
    def add(state: dict[str, Any]) -> None:
        _resource(state, "oci_containerengine_cluster")["instances"][0]["attributes"][
            "brand_new_setting"
        ] = "x"

    with pytest.raises(DefinitionError, match=r"brand_new_setting.*neither places nor drops"):
        plan_oke_import(config, [(_state_with(tmp_path, add), None)])


def test_legacy_placement_is_refused(config: FleetConfig, tmp_path: Path) -> None:
    def legacy(state: dict[str, Any]) -> None:
        pool = _resource(state, "oci_containerengine_node_pool")["instances"][0]["attributes"]
        pool["node_config_details"] = []
        pool["subnet_ids"] = ["ocid1.subnet.oc1.eu-frankfurt-1.aaaaaaaaexampleworkers"]
        pool["quantity_per_subnet"] = 1

    with pytest.raises((DefinitionError, DefinitionErrors), match="legacy subnet_ids"):
        plan_oke_import(config, [(_state_with(tmp_path, legacy), None)])


def test_preemptible_and_image_name_are_reported(config: FleetConfig, tmp_path: Path) -> None:
    def set_them(state: dict[str, Any]) -> None:
        pool = _resource(state, "oci_containerengine_node_pool")["instances"][0]["attributes"]
        placement = pool["node_config_details"][0]["placement_configs"][0]
        placement["preemptible_node_config"] = [
            {"preemption_action": [{"type": "TERMINATE", "is_preserve_boot_volume": False}]}
        ]
        pool["node_image_name"] = "Oracle-Linux-8.10"
        pool["node_pool_cycling_details"][0]["cycle_modes"] = ["BOOT_VOLUME_REPLACE"]

    text = "\n".join(plan_oke_import(config, [(_state_with(tmp_path, set_them), None)]).report)
    assert "preemptible_node_config.preemption_action.type is set" in text
    assert "node_image_name is set in the state and not carried: image by name" in text
    assert "cycle_modes is set" in text


def test_validate_warns_until_adoption_tags_are_applied(config: FleetConfig) -> None:
    planned = plan_oke_import(config, [(TFSTATE, None)])
    (cluster,) = declare(config, planned.clusters)
    (warning,) = cluster.warnings()
    assert "adoption_tags_applied" in warning and "CreatedBy=OCIClusterAPIProvider" in warning
    keywords = dict(planned.clusters[0].call.keywords)
    keywords["adoption_tags_applied"] = True
    tagged = planned.clusters[0].call.__class__(
        callee="OciManagedCluster",
        positional=planned.clusters[0].call.positional,
        keywords=tuple(keywords.items()),
    )
    planned.clusters[0].call = tagged
    (done,) = declare(config, planned.clusters)
    assert done.warnings() == []
