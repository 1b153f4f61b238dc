"""OciManagedCluster, OkeNodePool, the OKE networks and OciClusterIdentity."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from crd_samples import crds_dir
from support import HYBRID

from fleet import (
    DefinitionError,
    Fleet,
    FleetCluster,
    FleetConfig,
    MagnumCluster,
    OciClusterIdentity,
    OciManagedCluster,
    OkeExistingVcn,
    OkeNodePool,
    OkeNsg,
    OkeSubnet,
    OkeVcn,
    per_env,
)
from fleet.checks.crds import load_crds
from fleet.checks.references import check_references
from fleet.checks.schema import validate_manifests
from fleet.checks.secret_guard import find_secret_material
from fleet.core.manifest import Manifest
from fleet.pipeline.synth import synthesize

TEMPLATES = Path(__file__).resolve().parent / "fixtures" / "capoci-templates"

PROTECTED = {"argocd.argoproj.io/sync-options": "Prune=false,Delete=false"}
INFRA = "infrastructure.cluster.x-k8s.io/v1beta2"
CAPI = "cluster.x-k8s.io/v1beta1"
COMPARTMENT = "ocid1.compartment.oc1..aaaaexample"
IMAGE = "ocid1.image.oc1.eu-frankfurt-1.aaaaexample"
SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIexample user@example"
AD1, AD2, AD3 = (f"BKrI:EU-FRANKFURT-1-AD-{n}" for n in (1, 2, 3))
FDS = ["FAULT-DOMAIN-1", "FAULT-DOMAIN-2", "FAULT-DOMAIN-3"]


def pool(**overrides: Any) -> OkeNodePool:
    args: dict[str, Any] = {"name": "mp-0", "ocpus": 1, "node_count": 3}
    args.update(overrides)
    return OkeNodePool(**args)


def oke(fleet: Fleet, **overrides: Any) -> OciManagedCluster:
    """The minimal cluster: CAPOCI's cluster-template-managed.yaml, variables filled in."""
    args: dict[str, Any] = {
        "name": "oke-dev",
        "environments": ["dev"],
        "compartment_id": COMPARTMENT,
        "region": "eu-frankfurt-1",
        "kubernetes_version": "v1.30.1",
        "availability_domains": [AD1],
        "node_image_id": IMAGE,
        "ssh_public_key": SSH_KEY,
        "namespace": "oke",
        "node_pools": [pool()],
    }
    args.update(overrides)
    return OciManagedCluster(fleet, args.pop("id", "oke-dev"), **args)


def bodies(fleet: Fleet, environment: str = "dev") -> list[dict[str, Any]]:
    return [m.body for c in fleet.declarations() for m in c.manifests(environment)]


def meta(name: str, cluster: str = "oke-dev", **annotations: str) -> dict[str, Any]:
    return {
        "annotations": {**annotations, **PROTECTED},
        "labels": {"cluster.x-k8s.io/cluster-name": cluster},
        "name": name,
        "namespace": "oke",
    }


def ref(api_version: str, kind: str, name: str) -> dict[str, str]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "namespace": "oke"}


# --- exact output ----------------------------------------------------------------------


def test_minimal_cluster_exact_dicts(fleet: Fleet) -> None:
    oke(fleet)
    assert bodies(fleet) == [
        {
            "apiVersion": CAPI,
            "kind": "Cluster",
            "metadata": meta("oke-dev"),
            "spec": {
                "clusterNetwork": {
                    "pods": {"cidrBlocks": ["10.244.0.0/16"]},
                    "services": {"cidrBlocks": ["10.96.0.0/16"]},
                },
                "controlPlaneRef": ref(INFRA, "OCIManagedControlPlane", "oke-dev"),
                "infrastructureRef": ref(INFRA, "OCIManagedCluster", "oke-dev"),
            },
        },
        {
            "apiVersion": INFRA,
            "kind": "OCIManagedCluster",
            "metadata": meta("oke-dev"),
            "spec": {"compartmentId": COMPARTMENT, "region": "eu-frankfurt-1"},
        },
        {
            "apiVersion": INFRA,
            "kind": "OCIManagedControlPlane",
            "metadata": meta("oke-dev"),
            "spec": {
                "clusterPodNetworkOptions": [{"cniType": "OCI_VCN_IP_NATIVE"}],
                "clusterType": "BASIC_CLUSTER",
                "version": "v1.30.1",
            },
        },
        {
            "apiVersion": CAPI,
            "kind": "MachinePool",
            "metadata": meta("oke-dev-mp-0"),
            "spec": {
                "clusterName": "oke-dev",
                "replicas": 3,
                "template": {
                    "spec": {
                        "bootstrap": {"dataSecretName": ""},
                        "clusterName": "oke-dev",
                        "infrastructureRef": ref(INFRA, "OCIManagedMachinePool", "oke-dev-mp-0"),
                        "version": "v1.30.1",
                    }
                },
            },
        },
        {
            "apiVersion": INFRA,
            "kind": "OCIManagedMachinePool",
            "metadata": meta("oke-dev-mp-0"),
            "spec": {
                "nodePoolNodeConfig": {
                    "nodePoolPodNetworkOptionDetails": {
                        "cniType": "OCI_VCN_IP_NATIVE",
                        "vcnIpNativePodNetworkOptions": {
                            "nsgNames": ["pod"],
                            "subnetNames": ["pod"],
                        },
                    },
                    "nsgNames": ["worker"],
                    "placementConfigs": [
                        {"availabilityDomain": AD1, "faultDomains": FDS, "subnetName": "worker"}
                    ],
                },
                "nodeShape": "VM.Standard.E4.Flex",
                "nodeShapeConfig": {"ocpus": "1"},
                "nodeSourceViaImage": {"bootVolumeSizeInGBs": 50, "imageId": IMAGE},
                "sshPublicKey": SSH_KEY,
                "version": "v1.30.1",
            },
        },
    ]


def _template(name: str, cluster: str, namespace: str) -> list[dict[str, Any]]:
    text = (TEMPLATES / name).read_text()
    # ${VAR}, ${VAR=default} and ${VAR:=default} as clusterctl fills them in.
    values = {"CLUSTER_NAME": cluster, "NAMESPACE": namespace, "KUBERNETES_VERSION": "v1.30.1"}
    text = re.sub(
        r"\$\{(\w+)(?::?=([^}]*))?\}",
        lambda m: values.get(m.group(1), (m.group(2) or "x").strip('"')),
        text,
    )
    return [d for d in yaml.safe_load_all(text) if d]


def _wiring(objects: list[dict[str, Any]]) -> list[tuple[str, str, str, list[tuple[str, ...]]]]:
    """(apiVersion, kind, name, refs) per object; refs as (path, apiVersion, kind, name)."""

    def refs(node: Any, path: str) -> list[tuple[str, ...]]:
        found: list[tuple[str, ...]] = []
        if isinstance(node, dict):
            if {"kind", "name", "apiVersion"} <= node.keys():
                found.append((path, node["apiVersion"], node["kind"], node["name"]))
            for key, value in sorted(node.items()):
                found.extend(refs(value, f"{path}.{key}"))
        return found

    return [
        (o["apiVersion"], o["kind"], o["metadata"]["name"], refs(o.get("spec"), "spec"))
        for o in objects
    ]


def test_minimal_cluster_has_the_templates_kinds_and_wiring(fleet: Fleet) -> None:
    oke(fleet)
    template = _template("cluster-template-managed.yaml", "oke-dev", "oke")
    assert _wiring(bodies(fleet)) == _wiring(template)
    for ours, theirs in zip(bodies(fleet), template, strict=True):
        assert ours["spec"].get("clusterName") == theirs["spec"].get("clusterName")


def test_new_vcn_is_the_private_templates_network() -> None:
    (_, infra, *_) = _template("cluster-template-managed-private.yaml", "c", "ns")
    assert OkeVcn().network_spec() == infra["spec"]["networkSpec"]


def test_new_vcn_rules_follow_the_cidrs() -> None:
    spec = OkeVcn(
        cidr="10.1.0.0/16",
        control_plane_endpoint_cidr="10.1.0.8/29",
        service_lb_cidr="10.1.0.32/27",
        worker_cidr="10.1.64.0/20",
        pod_cidr="10.1.128.0/18",
        public_api_endpoint=True,
        api_allowed_cidrs=["192.0.2.0/24", "198.51.100.0/24"],
    ).network_spec()
    text = yaml.safe_dump(spec)
    assert "10.0." not in text
    subnets = {s["role"]: (s["cidr"], s["type"]) for s in spec["vcn"]["subnets"]}
    assert subnets["control-plane-endpoint"] == ("10.1.0.8/29", "public")
    endpoint = spec["vcn"]["networkSecurityGroup"]["list"][0]
    external = [
        r["ingressRule"]["source"]
        for r in endpoint["ingressRules"]
        if r["ingressRule"]["description"] == "External access to Kubernetes API endpoint."
    ]
    assert external == ["192.0.2.0/24", "198.51.100.0/24"]


def test_existing_vcn_by_id(fleet: Fleet) -> None:
    network = OkeExistingVcn(
        id="ocid1.vcn.oc1.eu-frankfurt-1.aaaavcn",
        subnets=[
            OkeSubnet(role="control-plane-endpoint", id="ocid1.subnet.oc1..aaaacpe", type="public"),
            OkeSubnet(role="worker", id="ocid1.subnet.oc1..aaaaworker", name="nodes"),
            OkeSubnet(role="pod", id="ocid1.subnet.oc1..aaaapod"),
        ],
        network_security_groups=[
            OkeNsg(role="worker", id="ocid1.networksecuritygroup.oc1..aaaaw"),
            OkeNsg(role="pod", id="ocid1.networksecuritygroup.oc1..aaaap"),
        ],
    )
    oke(fleet, network=network, node_pools=[pool(subnet_name="nodes")])
    infra = bodies(fleet)[1]
    assert infra["spec"]["networkSpec"] == {
        "skipNetworkManagement": True,
        "vcn": {
            "id": "ocid1.vcn.oc1.eu-frankfurt-1.aaaavcn",
            "subnets": [
                {
                    "id": "ocid1.subnet.oc1..aaaacpe",
                    "name": "control-plane-endpoint",
                    "role": "control-plane-endpoint",
                    "type": "public",
                },
                {
                    "id": "ocid1.subnet.oc1..aaaaworker",
                    "name": "nodes",
                    "role": "worker",
                    "type": "private",
                },
                {
                    "id": "ocid1.subnet.oc1..aaaapod",
                    "name": "pod",
                    "role": "pod",
                    "type": "private",
                },
            ],
            "networkSecurityGroup": {
                "list": [
                    {
                        "id": "ocid1.networksecuritygroup.oc1..aaaaw",
                        "name": "worker",
                        "role": "worker",
                    },
                    {"id": "ocid1.networksecuritygroup.oc1..aaaap", "name": "pod", "role": "pod"},
                ]
            },
        },
    }
    assert network.public_endpoint()
    placement = bodies(fleet)[4]["spec"]["nodePoolNodeConfig"]["placementConfigs"]
    assert placement[0]["subnetName"] == "nodes"


def test_autoscaled_pool_leaves_the_size_to_the_autoscaler(fleet: Fleet) -> None:
    oke(fleet, node_pools=[pool(node_count=None, min_node_count=1, max_node_count=5)])
    machine_pool = bodies(fleet)[3]
    assert "replicas" not in machine_pool["spec"]
    assert machine_pool["metadata"]["annotations"] == {
        "cluster.x-k8s.io/replicas-managed-by": "",
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1",
        "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "5",
        **PROTECTED,
    }


def test_figure_16_placement_shape_and_labels(fleet: Fleet) -> None:
    oke(
        fleet,
        availability_domains=[AD2, AD3, AD1],
        node_pools=[pool(ocpus=1.5, memory_gb=16, labels={"b": "2", "a": "1"})],
    )
    spec = bodies(fleet)[4]["spec"]
    assert [p["availabilityDomain"] for p in spec["nodePoolNodeConfig"]["placementConfigs"]] == [
        AD2,
        AD3,
        AD1,
    ]
    assert spec["nodeShapeConfig"] == {"ocpus": "1.5", "memoryInGBs": "16"}
    assert spec["initialNodeLabels"] == [{"key": "a", "value": "1"}, {"key": "b", "value": "2"}]


def test_per_environment_values_and_pool_overrides(fleet: Fleet) -> None:
    oke(
        fleet,
        name="oke-{env}",
        environments=["test", "prod"],
        kubernetes_version=per_env(test="v1.31.1", prod="v1.30.1"),
        node_pools=[
            pool(node_count=per_env(test=1, prod=3)),
            pool(name="old", kubernetes_version="v1.29.1", availability_domains=[AD3]),
        ],
    )
    test, prod = bodies(fleet, "test"), bodies(fleet, "prod")
    assert (test[2]["spec"]["version"], prod[2]["spec"]["version"]) == ("v1.31.1", "v1.30.1")
    assert (test[3]["spec"]["replicas"], prod[3]["spec"]["replicas"]) == (1, 3)
    assert prod[5]["metadata"]["name"] == "oke-prod-old"
    assert prod[6]["spec"]["version"] == "v1.29.1"
    assert prod[6]["spec"]["nodePoolNodeConfig"]["placementConfigs"][0]["availabilityDomain"] == AD3


def test_enhanced_cluster_type(fleet: Fleet) -> None:
    oke(fleet, cluster_type="enhanced")
    assert bodies(fleet)[2]["spec"]["clusterType"] == "ENHANCED_CLUSTER"


# --- identity, kubeconfig, protection ---------------------------------------------------


def test_identity_renders_once_per_environment_by_secret_reference(fleet: Fleet) -> None:
    tenancy = OciClusterIdentity(fleet, "oci-tenancy", principal_secret="oci-user-principal")
    oke(fleet, identity=tenancy, namespace=None, environments=["dev", "prod"])
    oke(fleet, id="other", name="oke-other", identity=tenancy, namespace="team-b")
    identities = [b for b in bodies(fleet) if b["kind"] == "OCIClusterIdentity"]
    assert identities == [
        {
            "apiVersion": INFRA,
            "kind": "OCIClusterIdentity",
            "metadata": {
                "annotations": PROTECTED,
                "name": "oci-tenancy",
                "namespace": "oke-clusters",
            },
            "spec": {
                "allowedNamespaces": {"list": ["oke-clusters", "team-b"]},
                "principalSecret": {"name": "oci-user-principal", "namespace": "oke-clusters"},
                "type": "UserPrincipal",
            },
        }
    ]
    assert [b["kind"] for b in bodies(fleet, "prod")].count("OCIClusterIdentity") == 1
    assert bodies(fleet, "test") == []
    infra = next(b for b in bodies(fleet) if b["kind"] == "OCIManagedCluster")
    assert infra["metadata"]["namespace"] == "oke-clusters"
    assert infra["spec"]["identityRef"] == {
        "apiVersion": INFRA,
        "kind": "OCIClusterIdentity",
        "name": "oci-tenancy",
        "namespace": "oke-clusters",
    }


def test_kubeconfig_handle(fleet: Fleet) -> None:
    cluster = oke(fleet)
    secret = cluster.kubeconfig_secret("dev")
    assert secret.to_dict() == {"key": "value", "name": "oke-dev-kubeconfig", "namespace": "oke"}
    assert cluster.kubeconfig_producer("dev") == (CAPI, "Cluster", "oke", "oke-dev")


def test_unprotected_cluster_carries_no_sync_options(fleet: Fleet) -> None:
    oke(fleet, deletion_protection=False)
    assert all("annotations" not in b["metadata"] for b in bodies(fleet))


def test_retired_cluster_renders_nothing(fleet: Fleet) -> None:
    oke(fleet, retired=True)
    assert bodies(fleet) == []


def test_kinds_exposed_for_the_bootstrap() -> None:
    assert OciManagedCluster.capi_feature_gates == ("EXP_MACHINE_POOL",)
    assert {k for _, k in OciManagedCluster.kinds_without_argocd_health} == {
        "OCIManagedCluster",
        "OCIManagedControlPlane",
        "OCIManagedMachinePool",
    }
    assert set(OciManagedCluster.kinds_without_argocd_health) <= set(
        OciManagedCluster.emitted_kinds
    )


def test_emitted_api_versions_are_served_by_the_pinned_crds() -> None:
    index = load_crds(crds_dir())
    for api_version, kind in (*OciManagedCluster.emitted_kinds, *OciClusterIdentity.emitted_kinds):
        assert index.get(api_version, kind) is not None, (api_version, kind)


def test_json_patch_escape_hatch(fleet: Fleet) -> None:
    from fleet import JsonPatch

    cluster = oke(fleet)
    cluster.add_json_patch(
        JsonPatch.add("/spec/kmsKeyId", "ocid1.key.oc1..k"), kind="OCIManagedControlPlane"
    )
    assert bodies(fleet)[2]["spec"]["kmsKeyId"] == "ocid1.key.oc1..k"


# --- the example fleet: references, schema, protection, hybrid API ------------------------


@pytest.fixture(scope="module")
def example() -> dict[str, list[Manifest]]:
    return synthesize(FleetConfig.load(HYBRID)).manifests


def _object_refs(node: Any) -> list[dict[str, Any]]:
    """Every {apiVersion, kind, name} dict anywhere in ``node``."""
    found = []
    if isinstance(node, dict):
        if {"apiVersion", "kind", "name"} <= node.keys():
            found.append(node)
        for value in node.values():
            found.extend(_object_refs(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_object_refs(value))
    return found


@pytest.mark.parametrize("environment", ["test", "prod"])
def test_every_reference_resolves(example: dict[str, list[Manifest]], environment: str) -> None:
    manifests = example[environment]
    index = {(m.api_version, m.kind, m.namespace, m.name): m for m in manifests}
    walked = 0
    oke_kinds = set(OciManagedCluster.emitted_kinds)
    for m in manifests:
        spec = m.body.get("spec") or {}
        for r in _object_refs(spec):
            target = (r["apiVersion"], r["kind"], r.get("namespace") or m.namespace, r["name"])
            assert target in index, f"{m.describe()} points at missing {target}"
            walked += (m.api_version, m.kind) in oke_kinds
        if m.kind == "MachinePool":
            assert (CAPI, "Cluster", m.namespace, spec["clusterName"]) in index
    assert walked == 9  # 2 clusters x (infrastructure, control plane, identity) + 3 pools
    assert check_references(manifests) == []
    assert find_secret_material(manifests) == []


@pytest.mark.parametrize("environment", ["dev", "test", "prod"])
def test_example_validates_against_the_crds(
    example: dict[str, list[Manifest]], environment: str
) -> None:
    assert [p.line() for p in validate_manifests(example[environment], crds_dir=crds_dir())] == []


def test_every_cluster_object_is_protected(example: dict[str, list[Manifest]]) -> None:
    bearing = {
        (api, kind) for cls in (MagnumCluster, OciManagedCluster) for api, kind in cls.bearing_kinds
    }
    seen = set()
    for manifests in example.values():
        for m in manifests:
            if (m.api_version, m.kind) in bearing:
                seen.add(m.kind)
                annotations = m.body["metadata"].get("annotations", {})
                assert annotations.get("argocd.argoproj.io/sync-options") == (
                    "Prune=false,Delete=false"
                ), m.describe()
    assert seen == {k for _, k in bearing}


def test_fleet_wide_code_treats_both_clouds_alike() -> None:
    from fleet.pipeline.discovery import load_fleet

    fleet = load_fleet(FleetConfig.load(HYBRID))
    rows = {}
    for c in fleet.declarations():
        if isinstance(c, FleetCluster) and "prod" in c.environments:
            rows[c.cluster_name("prod")] = (
                c.cloud,
                c.kubernetes_version("prod"),
                [(p.name, p.node_count, p.max_node_count) for p in c.node_pools("prod")],
                c.kubeconfig_secret("prod").key,
            )
    assert rows["k8s-sso-prod-v25"] == (
        "magnum",
        "v1.25.3",
        [("default-worker", 3, None)],
        "attribute.kubeconfig.raw_config",
    )
    assert rows["oke-sso-audit-prod"] == (
        "oke",
        "v1.30.1",
        [("system", 3, None), ("batch-arm", None, 12)],
        "value",
    )
    audit = next(c for c in fleet.declarations() if c.construct_id == "sso-audit-oke")
    assert isinstance(audit, OciManagedCluster)
    shapes = {p.machine_size for p in audit.node_pools("prod")}
    assert shapes == {"VM.Standard.E4.Flex/2ocpu/32gb", "VM.Standard.A1.Flex/4ocpu/24gb"}
    assert all(len(p.placement) == 3 for p in audit.node_pools("prod"))


# --- one failing test per rule -------------------------------------------------------------


def fails(match: str) -> Any:
    return pytest.raises(DefinitionError, match=match)


def test_fails_ocpus_not_positive() -> None:
    with fails(r"\(node pool mp-0\): ocpus: must be a number of OCPUs above 0, got 0"):
        pool(ocpus=0)


def test_fails_memory_not_positive() -> None:
    with fails(r"\(node pool mp-0\): memory_gb: must be a number of GB above 0, got -4"):
        pool(memory_gb=-4)


def test_fails_flex_shape_without_ocpus() -> None:
    with fails(r"ocpus: a flexible shape \(VM.Standard.E4.Flex\) needs ocpus"):
        pool(ocpus=None)


def test_fails_boot_volume_too_small() -> None:
    with fails(r"boot_volume_size_gb: must be an integer of at least 50 \(GB\), got 20"):
        pool(boot_volume_size_gb=20)


def test_fails_no_availability_domain(fleet: Fleet) -> None:
    with fails(r"\(oke-dev\): node_pools\[mp-0\]\.availability_domains: no availability domain"):
        oke(fleet, availability_domains=[])


def test_fails_malformed_availability_domain(fleet: Fleet) -> None:
    with fails(r"\(oke-dev\): availability_domains: must look like BKrI:EU-FRANKFURT-1-AD-1"):
        oke(fleet, availability_domains=["AD-1"])


def test_fails_availability_domain_of_another_region(fleet: Fleet) -> None:
    with fails(r"availability_domains: BKrI:US-ASHBURN-1-AD-1 is not in region eu-frankfurt-1"):
        oke(fleet, availability_domains=["BKrI:US-ASHBURN-1-AD-1"])


def test_fails_duplicate_availability_domain() -> None:
    with fails(r"\(node pool mp-0\): availability_domains: lists an availability domain twice"):
        pool(availability_domains=[AD1, AD1])


def test_fails_unknown_fault_domain() -> None:
    with fails(r"fault_domains: must be among FAULT-DOMAIN-1, .*got 'FAULT-DOMAIN-4'"):
        pool(fault_domains=["FAULT-DOMAIN-4"])


def test_fails_duplicate_node_pool_names(fleet: Fleet) -> None:
    with fails(r"\(oke-dev\): node_pools: duplicate node pool name 'mp-0'"):
        oke(fleet, node_pools=[pool(), pool()])


def test_fails_malformed_kubernetes_version(fleet: Fleet) -> None:
    with fails(r"\(oke-dev\): kubernetes_version: must be a full Kubernetes version like v1.30.1"):
        oke(fleet, kubernetes_version="1.30")


def test_fails_pool_newer_than_control_plane(fleet: Fleet) -> None:
    with fails(r"node_pools\[mp-0\]\.kubernetes_version: v1.31.1 is newer than .* v1.30.1 \(dev\)"):
        oke(fleet, node_pools=[pool(kubernetes_version="v1.31.1")])


def test_fails_node_pool_min_above_max(fleet: Fleet) -> None:
    with fails(r"\(oke-dev\): node_pools\[mp-0\]\.min_node_count: min_node_count 5 is above"):
        oke(fleet, node_pools=[pool(node_count=None, min_node_count=5, max_node_count=2)])


def test_fails_negative_node_count(fleet: Fleet) -> None:
    with fails(r"node_pools\[mp-0\]\.node_count: must be 0 or more, got -1 \(dev\)"):
        oke(fleet, node_pools=[pool(node_count=-1)])


def test_fails_pool_without_size() -> None:
    with fails(r"node_count: give node_count, or min_node_count and max_node_count"):
        pool(node_count=None)


def test_fails_autoscaled_pool_with_node_count() -> None:
    with fails(r"node_count: an autoscaled node pool's size belongs to the autoscaler"):
        pool(min_node_count=1, max_node_count=3)


def test_fails_autoscaled_pool_with_only_min() -> None:
    with fails(r"max_node_count: an autoscaled node pool needs both"):
        pool(node_count=None, min_node_count=1)


def test_fails_bad_node_pool_name() -> None:
    with fails(r"\(node pool MP_0\): name: must be lower-case"):
        pool(name="MP_0")


def test_fails_machine_pool_name_too_long(fleet: Fleet) -> None:
    with fails(r"node_pools\[a+\]\.name \(with the cluster name\): .* at most 63"):
        oke(fleet, node_pools=[pool(name="a" * 60)])


def test_fails_compartment_not_an_ocid(fleet: Fleet) -> None:
    with fails(r"\(oke-dev\): compartment_id: must be an OCID like ocid1.compartment.oc1..<id>"):
        oke(fleet, compartment_id="my-compartment")


def test_fails_image_not_an_ocid(fleet: Fleet) -> None:
    with fails(r"node_pools\[mp-0\]\.image_id: must be an OCID like ocid1.image"):
        oke(fleet, node_image_id="oracle-linux-8")


def test_fails_bad_region(fleet: Fleet) -> None:
    with fails(r"region: must be an OCI region identifier like eu-frankfurt-1, got 'Frankfurt'"):
        oke(fleet, region="Frankfurt")


def test_fails_unknown_cluster_type(fleet: Fleet) -> None:
    with fails(r"cluster_type: must be one of basic, enhanced, got 'ENHANCED_CLUSTER'"):
        oke(fleet, cluster_type="ENHANCED_CLUSTER")


def test_fails_bad_ssh_key(fleet: Fleet) -> None:
    with fails(r"\(oke-dev\): ssh_public_key: must be one OpenSSH public key line"):
        oke(fleet, ssh_public_key="-----BEGIN RSA PRIVATE KEY-----")


def test_fails_subnet_not_in_the_network(fleet: Fleet) -> None:
    with fails(r"node_pools\[mp-0\]\.subnet_name: 'workers' is not a subnet of the cluster's"):
        oke(fleet, network=OkeVcn(), node_pools=[pool(subnet_name="workers")])


def test_fails_nsg_not_in_the_network(fleet: Fleet) -> None:
    with fails(r"node_pools\[mp-0\]\.pod_nsg_names: 'pods' is not a nsg of the cluster's"):
        oke(fleet, node_pools=[pool(pod_nsg_names=["pods"])])


def test_fails_overlapping_pod_and_service_cidrs(fleet: Fleet) -> None:
    with fails(r"pods_cidr: 10.96.0.0/12 overlaps services_cidr 10.96.0.0/16"):
        oke(fleet, pods_cidr="10.96.0.0/12")


def test_fails_identity_of_the_wrong_type(fleet: Fleet) -> None:
    with fails(r"identity: must be an OciClusterIdentity, got str"):
        oke(fleet, identity="oci-tenancy")


def test_fails_vcn_subnet_outside_the_vcn() -> None:
    with fails(r"\(OkeVcn\): worker_cidr: 10.9.0.0/20 is not inside the VCN's 10.0.0.0/16"):
        OkeVcn(worker_cidr="10.9.0.0/20")


def test_fails_vcn_subnets_overlap() -> None:
    with fails(r"pod_cidr: 10.0.64.0/18 overlaps worker_cidr 10.0.64.0/20"):
        OkeVcn(pod_cidr="10.0.64.0/18")


def test_fails_vcn_bad_cidr() -> None:
    with fails(r"cidr: must be an IPv4 CIDR block such as 10.0.0.0/16, got '10.0.0.0/33'"):
        OkeVcn(cidr="10.0.0.0/33")


def test_fails_existing_vcn_without_a_worker_subnet() -> None:
    with fails(r"\(OkeExistingVcn\): subnets: needs a subnet with role worker, pod"):
        OkeExistingVcn(
            id="ocid1.vcn.oc1..aaaa",
            subnets=[OkeSubnet(role="control-plane-endpoint", id="ocid1.subnet.oc1..aaaa")],
        )


def test_fails_existing_vcn_unknown_role() -> None:
    with fails(r"subnets\[0\]\.role: must be one of control-plane-endpoint, .*got 'workers'"):
        OkeExistingVcn(id="ocid1.vcn.oc1..aaaa", subnets=[OkeSubnet(role="workers", id="x")])


def test_fails_identity_bad_secret_name(fleet: Fleet) -> None:
    with fails(r"\(tenancy\): principal_secret: must be a DNS-1123 subdomain"):
        OciClusterIdentity(fleet, "tenancy", principal_secret="Bad Secret")


def test_errors_name_the_definition_file(fleet: Fleet) -> None:
    with pytest.raises(DefinitionError) as info:
        oke(fleet, region="Frankfurt")
    assert info.value.where.startswith(f"{Path(__file__).name}:") or "test_oci_managed" in (
        info.value.where
    )
