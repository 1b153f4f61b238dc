"""OciManagedCluster, OkeNodePool, the OKE networks and OciClusterIdentity."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders import builtin_plugins
from crd_samples import crds_dir
from support import HYBRID

from fleet import (
    ClusterType,
    DefinitionError,
    FaultDomain,
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
from fleet.clouds.oci.identity import INFRA_API as IDENTITY_API
from fleet.clouds.oci.identity import KIND as IDENTITY_KIND
from fleet.core.manifest import Manifest
from fleet.pipeline.synth import synthesize

TEMPLATES = Path(__file__).resolve().parent / "fixtures" / "capoci-templates"

PROTECTED = {"argocd.argoproj.io/sync-options": "Prune=false,Delete=false"}
INFRA = "infrastructure.cluster.x-k8s.io/v1beta2"
CAPI = "cluster.x-k8s.io/v1beta2"
WAVE_1 = {"argocd.argoproj.io/sync-wave": "1"}
COMPARTMENT = "ocid1.compartment.oc1..aaaaexample"
IMAGE = "ocid1.image.oc1.eu-frankfurt-1.aaaaexample"
SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIexample user@example"
AD1, AD2, AD3 = (f"BKrI:EU-FRANKFURT-1-AD-{n}" for n in (1, 2, 3))
FDS = ["FAULT-DOMAIN-1", "FAULT-DOMAIN-2", "FAULT-DOMAIN-3"]
MGMT = "198.51.100.17/32"
NETWORK = OkeVcn(api_allowed_cidrs=[MGMT])
FRA_SERVICES = "all-fra-services-in-oracle-services-network"
DEV_IDENTIFIER = "58ed16be-9936-56fa-9945-ad311e4fab0b"
"""uuid5(OCI_RESOURCE_IDENTIFIER_NAMESPACE, "dev/oke-dev"): written out, so that a change of
the namespace (which would duplicate every OKE cluster on a rebuild) fails a test."""


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
        "network": NETWORK,
    }
    args.update(overrides)
    return OciManagedCluster(fleet, args.pop("id", "oke-dev"), **args)


def bodies(fleet: Fleet, environment: str = "dev") -> list[dict[str, Any]]:
    fleet.run_phases()  # identities find their clusters in the prepare phase
    return [m.body for c in fleet.declarations() for m in c.manifests(environment)]


def meta(name: str, cluster: str = "oke-dev", **annotations: str) -> dict[str, Any]:
    return {
        "annotations": {**annotations, **PROTECTED},
        "labels": {"cluster.x-k8s.io/cluster-name": cluster},
        "name": name,
        "namespace": "oke",
    }


def ref(kind: str, name: str) -> dict[str, str]:
    """A Cluster API v1beta2 reference to a CAPOCI object (same namespace)."""
    return {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": kind, "name": name}


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
                "controlPlaneRef": ref("OCIManagedControlPlane", "oke-dev"),
                "infrastructureRef": ref("OCIManagedCluster", "oke-dev"),
            },
        },
        {
            "apiVersion": INFRA,
            "kind": "OCIManagedCluster",
            "metadata": meta("oke-dev"),
            "spec": {
                "compartmentId": COMPARTMENT,
                "networkSpec": NETWORK.network_spec(FRA_SERVICES),
                "ociResourceIdentifier": DEV_IDENTIFIER,
                "region": "eu-frankfurt-1",
            },
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
            "metadata": meta("oke-dev-mp-0", **WAVE_1),
            "spec": {
                "clusterName": "oke-dev",
                "replicas": 3,
                "template": {
                    "spec": {
                        "bootstrap": {"dataSecretName": ""},
                        "clusterName": "oke-dev",
                        "infrastructureRef": ref("OCIManagedMachinePool", "oke-dev-mp-0"),
                        "version": "v1.30.1",
                    }
                },
            },
        },
        {
            "apiVersion": INFRA,
            "kind": "OCIManagedMachinePool",
            "metadata": meta("oke-dev-mp-0", **WAVE_1),
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
                "nodePoolCyclingDetails": {
                    "isNodeCyclingEnabled": True,
                    "maximumSurge": "1",
                    "maximumUnavailable": "0",
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
    """(group, kind, name, refs) per object; refs as (path, group, kind, name): a v1beta1
    reference names the apiVersion, a v1beta2 one the apiGroup (Cluster API v1.12.11
    ``api/core/v1beta2`` ``ContractVersionedObjectReference``), the same wiring."""

    def group(value: str) -> str:
        return value.rpartition("/")[0] if "/" in value else value

    def refs(node: Any, path: str) -> list[tuple[str, ...]]:
        found: list[tuple[str, ...]] = []
        if isinstance(node, dict):
            target = node.get("apiGroup") or node.get("apiVersion")
            if target and {"kind", "name"} <= node.keys():
                found.append((path, group(target), node["kind"], node["name"]))
            for key, value in sorted(node.items()):
                found.extend(refs(value, f"{path}.{key}"))
        return found

    return [
        (group(o["apiVersion"]), o["kind"], o["metadata"]["name"], refs(o.get("spec"), "spec"))
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
    private = OkeVcn(
        api_endpoint="private",
        private_api_reachable_via="VCN peering",
        api_allowed_cidrs=["0.0.0.0/0"],
    )
    assert private.network_spec() == infra["spec"]["networkSpec"]


def _service_rules(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        rule
        for nsg in spec["vcn"]["networkSecurityGroup"]["list"]
        for rules, key in ((nsg["egressRules"], "egressRule"), (nsg["ingressRules"], "ingressRule"))
        for rule in (r[key] for r in rules)
        if "SERVICE_CIDR_BLOCK" in (rule.get("destinationType"), rule.get("sourceType"))
    ]


def test_service_cidr_rules_carry_what_capoci_writes(fleet: Fleet) -> None:
    """CAPOCI rewrites every SERVICE_CIDR_BLOCK rule's destination in spec to
    ``all-<region key>-services-in-oracle-services-network`` (oracle/cluster-api-provider-oci
    ``cloud/scope/nsg_reconciler.go`` ``adjustNSGRulesSpec``; key from ListRegions, table from
    oracle/oci-go-sdk ``common/regions.go``): rendered so ArgoCD sees no difference."""
    oke(fleet, region="us-ashburn-1", availability_domains=["BKrI:US-ASHBURN-1-AD-1"])
    spec = bodies(fleet)[1]["spec"]["networkSpec"]
    rules = _service_rules(spec)
    assert len(rules) == 5
    assert {r["destination"] for r in rules} == {"all-iad-services-in-oracle-services-network"}
    # The other rules keep their CIDR destinations.
    others = [
        r["egressRule"]["destination"]
        for nsg in spec["vcn"]["networkSecurityGroup"]["list"]
        for r in nsg["egressRules"]
        if r["egressRule"]["destinationType"] == "CIDR_BLOCK"
    ]
    assert "all-iad-services-in-oracle-services-network" not in others


def test_fails_region_without_a_known_key(fleet: Fleet) -> None:
    with fails(r"region: xx-nowhere-1 is not a region the fleet knows the key of"):
        oke(fleet, region="xx-nowhere-1", availability_domains=["BKrI:XX-NOWHERE-1-AD-1"])


def test_new_vcn_rules_follow_the_cidrs() -> None:
    spec = OkeVcn(
        cidr="10.1.0.0/16",
        control_plane_endpoint_cidr="10.1.0.8/29",
        service_lb_cidr="10.1.0.32/27",
        worker_cidr="10.1.64.0/20",
        pod_cidr="10.1.128.0/18",
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


def test_fixed_size_pools_have_replicas_and_no_autoscaler_annotations(fleet: Fleet) -> None:
    """A fixed-size pool: ``MachinePool.spec.replicas``, which CAPOCI enforces on OKE
    (oracle/cluster-api-provider-oci v0.24.0 ``cloud/scope/managed_machine_pool.go``
    ``UpdateNodePool``)."""
    oke(fleet, node_pools=[pool(node_count=0), pool(name="b", node_count=5)])
    machine_pools = [b for b in bodies(fleet) if b["kind"] == "MachinePool"]
    assert [m["spec"]["replicas"] for m in machine_pools] == [0, 5]
    for m in machine_pools:
        assert not any(k.startswith("cluster.x-k8s.io/") for k in m["metadata"]["annotations"])


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


@pytest.mark.parametrize("given", ["enhanced", "ENHANCED_CLUSTER", ClusterType.ENHANCED])
def test_enhanced_cluster_type(fleet: Fleet, given: Any) -> None:
    cluster = oke(fleet, cluster_type=given)
    assert cluster.cluster_type is ClusterType.ENHANCED
    assert bodies(fleet)[2]["spec"]["clusterType"] == "ENHANCED_CLUSTER"


def test_fault_domains_take_the_enum_or_the_string(fleet: Fleet) -> None:
    oke(fleet, node_pools=[pool(fault_domains=[FaultDomain.FD2, "FAULT-DOMAIN-3"])])
    placement = bodies(fleet)[4]["spec"]["nodePoolNodeConfig"]["placementConfigs"][0]
    assert placement["faultDomains"] == ["FAULT-DOMAIN-2", "FAULT-DOMAIN-3"]
    assert yaml.safe_dump(placement)  # plain strings, not enum objects


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
    assert [b["metadata"].get("annotations") for b in bodies(fleet)] == [
        None,
        None,
        None,
        WAVE_1,  # the node pools come with the registration (wave 1)
        WAVE_1,
    ]


def test_retired_cluster_renders_nothing(fleet: Fleet) -> None:
    oke(fleet, retired=True)
    assert bodies(fleet) == []


def test_rendered_api_versions_are_served_by_the_pinned_crds() -> None:
    index = load_crds(crds_dir())
    for api_version, kind in (*OciManagedCluster.bearing_kinds, (IDENTITY_API, IDENTITY_KIND)):
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
    """Every {apiVersion or apiGroup, kind, name} dict anywhere in ``node``."""
    found = []
    if isinstance(node, dict):
        if {"kind", "name"} <= node.keys() and ("apiVersion" in node or "apiGroup" in node):
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
    index = {(m.group, m.kind, m.namespace, m.name): m for m in manifests}
    walked = 0
    oke_kinds = set(OciManagedCluster.bearing_kinds)
    for m in manifests:
        spec = m.body.get("spec") or {}
        for r in _object_refs(spec):
            group = r.get("apiGroup") or r["apiVersion"].rpartition("/")[0]
            target = (group, r["kind"], r.get("namespace") or m.namespace, r["name"])
            assert target in index, f"{m.describe()} points at missing {target}"
            walked += (m.api_version, m.kind) in oke_kinds
        if m.kind == "MachinePool":
            assert ("cluster.x-k8s.io", "Cluster", m.namespace, spec["clusterName"]) in index
    assert walked == 9  # 2 clusters x (infrastructure, control plane, identity) + 3 pools
    assert check_references(manifests, builtin_plugins()) == []
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
        [("system", 3, None), ("batch-arm", None, 6)],
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
    with fails(r"fault_domains: must be one of FAULT-DOMAIN-1, .*got 'FAULT-DOMAIN-4'"):
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


def test_fails_negative_node_count(fleet: Fleet) -> None:
    with fails(r"node_pools\[mp-0\]\.node_count: must be 0 or more, got -1 \(dev\)"):
        oke(fleet, node_pools=[pool(node_count=-1)])


def test_fails_pool_without_size() -> None:
    with fails(r"node_count: give node_count"):
        pool(node_count=None)


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
    with fails(r"cluster_type: must be one of basic, enhanced, BASIC_CLUSTER, .*got 'turbo'"):
        oke(fleet, cluster_type="turbo")


def test_fails_bad_ssh_key(fleet: Fleet) -> None:
    with fails(r"\(oke-dev\): ssh_public_key: must be one OpenSSH public key line"):
        oke(fleet, ssh_public_key="-----BEGIN RSA PRIVATE KEY-----")


def test_fails_subnet_not_in_the_network(fleet: Fleet) -> None:
    with fails(r"node_pools\[mp-0\]\.subnet_name: 'workers' is not a subnet of the cluster's"):
        oke(fleet, node_pools=[pool(subnet_name="workers")])


def test_fails_nsg_not_in_the_network(fleet: Fleet) -> None:
    with fails(r"node_pools\[mp-0\]\.pod_nsg_names: 'pods' is not a nsg of the cluster's"):
        oke(fleet, node_pools=[pool(pod_nsg_names=["pods"])])


def test_fails_overlapping_pod_and_service_cidrs(fleet: Fleet) -> None:
    with fails(r"pods_cidr: 10.96.0.0/12 overlaps services_cidr 10.96.0.0/16"):
        oke(fleet, pods_cidr="10.96.0.0/12")


def test_fails_identity_of_the_wrong_type(fleet: Fleet) -> None:
    with fails(
        r"identity: must be an OciClusterIdentity or a reference to an OciClusterIdentity, got str"
    ):
        oke(fleet, identity="oci-tenancy")


def test_fails_vcn_subnet_outside_the_vcn() -> None:
    with fails(r"\(OkeVcn\): worker_cidr: 10.9.0.0/20 is not inside the VCN's 10.0.0.0/16"):
        OkeVcn(worker_cidr="10.9.0.0/20")


def test_fails_vcn_subnets_overlap() -> None:
    with fails(r"pod_cidr: 10.0.64.0/18 overlaps worker_cidr 10.0.64.0/20"):
        OkeVcn(pod_cidr="10.0.64.0/18")


def test_fails_vcn_bad_cidr() -> None:
    with fails(
        r"cidr: must be an IPv4 CIDR block \(address/prefix length, such as 10.0.0.0/16\), "
        r"got str '10.0.0.0/33'"
    ):
        OkeVcn(cidr="10.0.0.0/33")


def test_fails_existing_vcn_without_a_worker_subnet() -> None:
    with fails(r"\(OkeExistingVcn\): subnets: needs a subnet with role worker"):
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


# --- identity of the OCI resources (ociResourceIdentifier) ---------------------------------


def _identifier(fleet: Fleet, environment: str = "dev") -> str:
    infra = next(b for b in bodies(fleet, environment) if b["kind"] == "OCIManagedCluster")
    return str(infra["spec"]["ociResourceIdentifier"])


def test_resource_identifier_is_derived_and_stable(tmp_path: Path) -> None:
    """CAPOCI finds the VCN, OKE cluster and node pools again by display name plus the
    freeform tag ``ClusterResourceIdentifier=<spec.ociResourceIdentifier>``
    (oracle/cluster-api-provider-oci ``cloud/ociutil/ociutil.go`` ``BuildClusterTags``,
    ``cloud/scope/managed_control_plane.go`` ``GetOKECluster``, ``vcn_reconciler.go``
    ``GetVCN``); its webhook fills a random UUID when the field is empty
    (``api/v1beta2/ocimanagedcluster_webhook.go`` ``Default``). Rendering the same UUID on
    every synth is what lets a rebuilt management cluster adopt instead of duplicate."""
    first = Fleet(FleetConfig(root=tmp_path))
    oke(first, name="oke-{env}", environments=["test", "prod"])
    again = Fleet(FleetConfig(root=tmp_path))
    oke(again, name="oke-{env}", environments=["test", "prod"])
    assert _identifier(first, "prod") == _identifier(again, "prod")
    assert _identifier(first, "test") != _identifier(first, "prod")
    other = Fleet(FleetConfig(root=tmp_path))
    oke(other, name="oke-b-{env}", environments=["test", "prod"])
    assert _identifier(other, "prod") != _identifier(first, "prod")
    # Only OCIManagedCluster has the field (the control plane and pools use its value).
    for body in bodies(first, "prod"):
        if body["kind"] != "OCIManagedCluster":
            assert "ociResourceIdentifier" not in body["spec"]


def test_derived_identifier_never_changes(fleet: Fleet) -> None:
    """A new namespace UUID would re-key every cluster: CAPOCI would find nothing by tag on
    a rebuild and create duplicates. The value for (dev, oke-dev) is written out."""
    oke(fleet)
    assert _identifier(fleet) == DEV_IDENTIFIER


def test_pinned_identifier_wins_where_given(fleet: Fleet) -> None:
    """A cluster created before the fleet rendered the field carries a random UUID, and the
    webhook refuses to change it (``ValidateUpdate``: "field is immutable"): pin it."""
    live = "0b5e3a4c-6f3e-4c1e-9f0a-2d8e7c6b5a41"
    cluster = oke(
        fleet,
        name="oke-{env}",
        environments=["test", "prod"],
        oci_resource_identifier=per_env(prod=live),
    )
    assert _identifier(fleet, "prod") == live
    assert cluster.resolved("prod").pinned_identifier
    assert not cluster.resolved("test").pinned_identifier
    assert _identifier(fleet, "test") not in (live, "")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("not-a-uuid", r"oci_resource_identifier: must be the cluster's UUID"),
        ("0B5E3A4C-6F3E-4C1E-9F0A-2D8E7C6B5A41", r"oci_resource_identifier: must be the"),
    ],
)
def test_fails_bad_pinned_identifier(fleet: Fleet, value: str, message: str) -> None:
    with fails(message):
        oke(fleet, oci_resource_identifier=value)


def test_fails_one_identifier_for_several_environments(fleet: Fleet) -> None:
    with fails(r"oci_resource_identifier: one identifier for several environments"):
        oke(
            fleet,
            name="oke-{env}",
            environments=["test", "prod"],
            oci_resource_identifier="0b5e3a4c-6f3e-4c1e-9f0a-2d8e7c6b5a41",
        )


# --- API endpoint --------------------------------------------------------------------------


def _subnet_type(spec: dict[str, Any], role: str) -> str:
    return str(next(s["type"] for s in spec["vcn"]["subnets"] if s["role"] == role))


def _api_sources(spec: dict[str, Any]) -> list[str]:
    endpoint = next(
        n
        for n in spec["vcn"]["networkSecurityGroup"]["list"]
        if n["role"] == "control-plane-endpoint"
    )
    return [
        r["ingressRule"]["source"]
        for r in endpoint["ingressRules"]
        if r["ingressRule"].get("tcpOptions", {}).get("destinationPortRange", {}).get("min") == 6443
        and r["ingressRule"]["source"] not in ("10.0.64.0/20", "10.0.128.0/18")
    ]


def test_public_endpoint_is_the_default_and_limited_to_the_allowed_cidrs() -> None:
    """The endpoint is public exactly when the control-plane-endpoint subnet is public
    (oracle/cluster-api-provider-oci ``cloud/scope/managed_control_plane.go``
    ``IsControlPlaneEndpointSubnetPublic`` feeds ``IsPublicIpEnabled`` at CreateCluster);
    who may reach it is the control-plane-endpoint NSG's ingress on tcp/6443."""
    spec = OkeVcn(api_allowed_cidrs=[MGMT, "192.0.2.0/24"]).network_spec()
    assert _subnet_type(spec, "control-plane-endpoint") == "public"
    assert _api_sources(spec) == [MGMT, "192.0.2.0/24"]
    assert "0.0.0.0/0" not in _api_sources(spec)


def test_fails_public_endpoint_without_allowed_cidrs() -> None:
    with fails(r"\(OkeVcn\): api_allowed_cidrs: a public API endpoint needs the CIDR blocks"):
        OkeVcn()


def test_private_endpoint_needs_a_reachability_statement() -> None:
    with fails(r"private_api_reachable_via: a private API endpoint is reachable only through"):
        OkeVcn(api_endpoint="private")
    private = OkeVcn(api_endpoint="private", private_api_reachable_via="DRG to the mgmt VCN")
    assert _subnet_type(private.network_spec(), "control-plane-endpoint") == "private"
    assert _api_sources(private.network_spec()) == []
    assert "DRG to the mgmt VCN" in private.api_reachability()


def test_older_public_api_endpoint_flag_still_works() -> None:
    assert not OkeVcn(
        public_api_endpoint=False, private_api_reachable_via="peering"
    ).public_endpoint()
    assert OkeVcn(public_api_endpoint=True, api_allowed_cidrs=[MGMT]).public_endpoint()


def test_fails_reachability_statement_on_a_public_endpoint() -> None:
    with fails(r"private_api_reachable_via: only a private API endpoint takes"):
        OkeVcn(api_allowed_cidrs=[MGMT], private_api_reachable_via="peering")


def test_fails_unknown_api_endpoint() -> None:
    with fails(r"api_endpoint: must be one of 'public', 'private', got 'internal'"):
        OkeVcn(api_endpoint="internal", api_allowed_cidrs=[MGMT])


def test_existing_vcn_with_a_private_endpoint_needs_the_statement() -> None:
    subnets = [
        OkeSubnet(role="control-plane-endpoint", id="ocid1.subnet.oc1..aaaacpe"),
        OkeSubnet(role="worker", id="ocid1.subnet.oc1..aaaaworker"),
        OkeSubnet(role="pod", id="ocid1.subnet.oc1..aaaapod"),
    ]
    with fails(r"\(OkeExistingVcn\): private_api_reachable_via: a private API endpoint"):
        OkeExistingVcn(id="ocid1.vcn.oc1..aaaa", subnets=subnets)
    ok = OkeExistingVcn(id="ocid1.vcn.oc1..aaaa", subnets=subnets, private_api_reachable_via="x")
    assert not ok.public_endpoint()


def test_fails_cluster_without_a_network(fleet: Fleet) -> None:
    """CAPOCI's default network (no networkSpec) opens the API endpoint to 0.0.0.0/0
    (``GetControlPlaneEndpointDefaultIngressRules`` in
    ``api/v1beta2/ocimanagedcluster_webhook.go``)."""
    with fails(r"\(oke-dev\): network: give the network: OkeVcn\(api_allowed_cidrs="):
        oke(fleet, network=None)


# --- ArgoCD: what controllers write into spec ----------------------------------------------


def test_ignore_differences_cover_what_capoci_writes_into_spec() -> None:
    """The ids CAPOCI writes into the OCIManagedCluster lists (oracle/cluster-api-provider-oci
    ``cloud/scope/subnet_reconciler.go``, ``nsg_reconciler.go``: ``desiredNSG.ID = nsgOCID``),
    ``spec.id`` of the control plane (``managed_control_plane.go``) and pools
    (``managed_machine_pool.go``): exposed as data for the cluster's Application."""
    table = {(d.group, d.kind): d.jq_path_expressions for d in OciManagedCluster.ignore_differences}
    infra = table[("infrastructure.cluster.x-k8s.io", "OCIManagedCluster")]
    assert ".spec.networkSpec.vcn.subnets[]?.id" in infra
    assert ".spec.networkSpec.vcn.networkSecurityGroup.list[]?.id" in infra
    assert ".spec.id" in table[("infrastructure.cluster.x-k8s.io", "OCIManagedControlPlane")]
    assert (
        ".spec.providerIDList"
        in table[("infrastructure.cluster.x-k8s.io", "OCIManagedMachinePool")]
    )
    # Every kind named is one the cluster renders; nothing the render sets is ignored.
    rendered = {(a.rpartition("/")[0], k) for a, k in OciManagedCluster.bearing_kinds}
    assert set(table) <= rendered
    assert not any("ociResourceIdentifier" in p for paths in table.values() for p in paths)
    assert all(p.startswith(".spec.") for paths in table.values() for p in paths)
    assert (
        OciManagedCluster.ignore_differences[0]
        .to_dict()["jqPathExpressions"][0]
        .startswith(".spec")
    )


# --- kubeconfig export ---------------------------------------------------------------------


def _argocd_exporting(fleet: Fleet) -> None:
    from fleet import ArgoCd, SecretKeyRef

    ArgoCd(
        fleet,
        "argocd",
        server_addr="argocd-server.argocd.svc:443",
        credentials=SecretKeyRef(name="argocd", namespace="crossplane-system", key="token"),
        export_kubeconfigs=True,
        kubeconfig_store="vault",
    )


def test_oke_kubeconfig_export_is_refused_when_asked_for(fleet: Fleet) -> None:
    """CAPOCI's ``<cluster>-kubeconfig`` holds a presigned token (oracle/cluster-api-provider-oci
    ``cloud/scope/managed_control_plane.go`` ``createCAPIKubeconfigSecret`` ->
    ``BaseClient.GenerateToken``) refreshed on each ~180 s reconcile
    (``controllers/ocimanagedcluster_controlplane_controller.go``): a copy pushed hourly is
    expired. Asking for the export is an error at the declaration."""
    from fleet import ArgoRegistration

    _argocd_exporting(fleet)
    cluster = oke(fleet)
    with fails(r"export_kubeconfig: an OKE kubeconfig is not exported: .* generate-token"):
        ArgoRegistration(fleet, "reg", cluster=cluster, export_kubeconfig=per_env(dev=True))


def test_oke_is_left_out_of_the_fleet_wide_export(tmp_path: Path) -> None:
    from fleet import ArgoRegistration

    for explicit in (False, None):
        fleet = Fleet(FleetConfig(root=tmp_path))
        _argocd_exporting(fleet)
        # CAPOCI runs without credentials of its own: a registered cluster names an identity.
        identity = OciClusterIdentity(fleet, "tenancy", principal_secret="oci-user-principal")
        cluster = oke(fleet, identity=identity)
        if explicit is not None:
            ArgoRegistration(fleet, "reg", cluster=cluster, export_kubeconfig=explicit)
        out = [m for c in fleet.declarations() for m in c.manifests("dev")]
        assert [m.name for m in out if m.kind == "Cluster" and "argocd" in m.api_version] == [
            "oke-dev"
        ]
        assert not [m for m in out if m.kind == "PushSecret"]


# --- Day 2: upgrades, pause ----------------------------------------------------------------


def test_cycling_is_always_rendered(fleet: Fleet) -> None:
    """Without ``nodePoolCyclingDetails`` OKE gives a new version or image only to nodes
    created later (oracle/cluster-api-provider-oci ``cloud/scope/managed_machine_pool.go``
    ``UpdateNodePool`` sends it with the new version and image)."""
    oke(fleet, node_pools=[pool(), pool(name="b", max_surge="25%", max_unavailable=1)])
    specs = [b["spec"] for b in bodies(fleet) if b["kind"] == "OCIManagedMachinePool"]
    assert [s["nodePoolCyclingDetails"] for s in specs] == [
        {"isNodeCyclingEnabled": True, "maximumSurge": "1", "maximumUnavailable": "0"},
        {"isNodeCyclingEnabled": True, "maximumSurge": "25%", "maximumUnavailable": "1"},
    ]


def test_upgrade_moves_pool_version_and_image_together(fleet: Fleet) -> None:
    new_image = "ocid1.image.oc1.eu-frankfurt-1.aaaanew131"
    oke(
        fleet,
        name="oke-{env}",
        environments=["test", "prod"],
        kubernetes_version=per_env(test="v1.31.1", prod="v1.30.1"),
        node_image_id=per_env(test=new_image, prod=IMAGE),
    )
    for env, version, image in (("test", "v1.31.1", new_image), ("prod", "v1.30.1", IMAGE)):
        out = {b["kind"]: b["spec"] for b in bodies(fleet, env)}
        assert out["OCIManagedControlPlane"]["version"] == version
        assert out["OCIManagedMachinePool"]["version"] == version
        assert out["OCIManagedMachinePool"]["nodeSourceViaImage"]["imageId"] == image
        assert out["MachinePool"]["template"]["spec"]["version"] == version


@pytest.mark.parametrize(("surge", "unavailable"), [(-1, 0), ("lots", 0), (0, 0), (1, "150%")])
def test_fails_bad_cycling_counts(surge: Any, unavailable: Any) -> None:
    with fails(r"\(node pool mp-0\): max_(surge|unavailable): "):
        pool(max_surge=surge, max_unavailable=unavailable)


def test_fails_node_pool_name_over_31_characters(fleet: Fleet) -> None:
    """CAPOCI's webhook refuses OCIManagedMachinePool names over 31 characters
    (oracle/cluster-api-provider-oci ``exp/api/v1beta2/ocimanagedmachinepool_webhook.go``
    ``ValidateCreate``)."""
    oke(fleet, node_pools=[pool(name="a" * 23)])  # oke-dev- + 23 = 31
    with fails(r"node_pools\[b+\]\.name \(with the cluster name\): 'oke-dev-b+' is 32 characters"):
        oke(fleet, id="other", node_pools=[pool(name="b" * 24)])


def test_fails_max_pods_per_node_other_than_31() -> None:
    """CAPOCI forces ``maxPodsPerNode`` to 31 before comparing a pool with OKE
    (``setMachinePoolSpecDefaults`` in ``cloud/scope/managed_machine_pool.go``)."""
    assert pool(max_pods_per_node=31).max_pods_per_node == 31
    with fails(r"max_pods_per_node: must be 31 or left out, got 60"):
        pool(max_pods_per_node=60)


def test_paused_renders_cluster_spec_paused(fleet: Fleet) -> None:
    """Cluster API's ``IsPaused`` (kubernetes-sigs/cluster-api ``util/annotations/helpers.go``)
    is true when ``Cluster.spec.paused`` is; every CAPOCI controller returns early then
    (``controllers/ocimanagedcluster_controller.go``,
    ``exp/controllers/ocimanaged_machinepool_controller.go``)."""
    oke(fleet, name="oke-{env}", environments=["test", "prod"], paused=["prod"])
    clusters = {
        env: next(b for b in bodies(fleet, env) if b["kind"] == "Cluster")
        for env in ("test", "prod")
    }
    assert clusters["prod"]["spec"]["paused"] is True
    assert "paused" not in clusters["test"]["spec"]
    for env in ("test", "prod"):  # never the annotation: any value, even "false", pauses
        for body in bodies(fleet, env):
            assert "cluster.x-k8s.io/paused" not in body["metadata"].get("annotations", {})


def test_add_node_pool_appends_and_checks(fleet: Fleet) -> None:
    cluster = oke(fleet)
    cluster.add_node_pool(pool(name="extra", node_count=2))
    with fails(r"name: duplicate node pool name 'extra'"):
        cluster.add_node_pool(pool(name="extra"))
    with fails(r"node_pools\[late\]\.subnet_name: 'nowhere' is not a subnet"):
        cluster.add_node_pool(pool(name="late", subnet_name="nowhere"))
    assert len(cluster.node_pools("dev")) == 2
    names = [b["metadata"]["name"] for b in bodies(fleet) if b["kind"] == "MachinePool"]
    assert names == ["oke-dev-mp-0", "oke-dev-extra"]
    assert [p.name for p in cluster.node_pools("dev")] == ["mp-0", "extra"]


# --- fleet diff: what a live OKE cluster cannot change -------------------------------------


def _files(tmp_path: Path, **overrides: Any) -> dict[str, dict[str, bytes]]:
    from fleet.pipeline.yaml_canonical import to_yaml

    fleet = Fleet(FleetConfig(root=tmp_path))
    oke(fleet, **overrides)
    return {
        "dev": {
            f"{m.kind}-{m.name}.yaml": to_yaml(m.body)
            for c in fleet.declarations()
            for m in c.manifests("dev")
        }
    }


def _force_new(tmp_path: Path, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    from fleet.guards.diff import compare_files
    from fleet.guards.immutable import create_only_guard, declared_create_only

    base, head = _files(tmp_path, **before), _files(tmp_path, **after)
    diff = compare_files(base, head)
    return [f.line() for f in create_only_guard(diff, base, head, declared_create_only())]


def test_diff_refuses_to_flip_the_api_endpoint(tmp_path: Path) -> None:
    """CAPOCI sets a subnet's type only in CreateSubnet and the endpoint's public IP only in
    CreateCluster (oracle/cluster-api-provider-oci ``cloud/scope/subnet_reconciler.go``,
    ``cloud/scope/managed_control_plane.go`` ``UpdateControlPlane`` sends no endpoint
    config): a flip would never happen on the live cluster."""
    private = OkeVcn(
        api_endpoint="private", private_api_reachable_via="peering", api_allowed_cidrs=[MGMT]
    )
    lines = _force_new(tmp_path, {"network": private}, {"network": NETWORK})
    assert lines == [
        "error: dev: OCIManagedCluster oke/oke-dev (infrastructure.cluster.x-k8s.io): "
        'spec.networkSpec.vcn.subnets[control-plane-endpoint].type: "private" -> "public": '
        "CAPOCI sets a subnet's type (and the API endpoint's public IP) only when it creates "
        "it; a new cluster is needed for another endpoint"
    ]


def test_diff_refuses_a_new_resource_identifier(tmp_path: Path) -> None:
    """``ociResourceIdentifier`` is immutable (``ValidateUpdate`` in
    ``api/v1beta2/ocimanagedcluster_webhook.go``)."""
    pinned = "0b5e3a4c-6f3e-4c1e-9f0a-2d8e7c6b5a41"
    lines = _force_new(tmp_path, {"oci_resource_identifier": pinned}, {})
    assert len(lines) == 1
    assert f'spec.ociResourceIdentifier: "{pinned}" -> "{DEV_IDENTIFIER}"' in lines[0]


def test_diff_lets_live_changes_through(tmp_path: Path) -> None:
    """NSG rules (``UpdateNSGSecurityRulesIfNeeded`` on every reconcile), versions, sizes."""
    lines = _force_new(
        tmp_path,
        {},
        {
            "network": OkeVcn(api_allowed_cidrs=[MGMT, "192.0.2.0/24"]),
            "kubernetes_version": "v1.31.1",
            "node_pools": [pool(node_count=5)],
        },
    )
    assert lines == []


# --- through the command line --------------------------------------------------------------

_OKE_MODULE = """\
from fleet import Fleet, OciManagedCluster, OkeNodePool, OkeVcn


def define(fleet: Fleet) -> None:
    OciManagedCluster(
        fleet, "oke", name="oke-{{env}}", environments=["dev"],
        compartment_id="ocid1.compartment.oc1..aaaaexample", region="eu-frankfurt-1",
        kubernetes_version="v1.30.1", availability_domains=["BKrI:EU-FRANKFURT-1-AD-1"],
        node_image_id="ocid1.image.oc1.eu-frankfurt-1.aaaaexample",
        network={network},
        node_pools=[{pool}],
    )
"""


@pytest.mark.parametrize(
    ("network", "pool", "message"),
    [
        (
            "OkeVcn()",
            'OkeNodePool(name="a", ocpus=1, node_count=1)',
            r"clusters/oke\.py:10 \(OkeVcn\): api_allowed_cidrs: a public API endpoint needs",
        ),
        (
            'OkeVcn(api_allowed_cidrs=["192.0.2.0/24"])',
            'OkeNodePool(name="a", ocpus=1, min_node_count=1)',
            r"clusters/oke\.py:11 \(node pool a\): max_node_count: an autoscaled pool needs both",
        ),
    ],
)
def test_bad_oke_input_is_one_line_and_exit_2(
    make_project: Any, network: str, pool: str, message: str
) -> None:
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from fleet.cli.main import main

    root = make_project({"clusters/oke.py": _OKE_MODULE.format(network=network, pool=pool)})
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = main(["--root", str(root), "synth"])
    lines = err.getvalue().splitlines()
    assert code == 2
    assert len(lines) == 1 and re.match("error: " + message, lines[0]), lines
    assert not (root / "dist").exists()


def test_oke_cluster_applications_ignore_what_controllers_write(
    example: dict[str, list[Manifest]],
) -> None:
    """ArgoCD removes each ``jqPathExpressions`` entry with ``del(<expr>)`` before diffing
    (argoproj/argo-cd ``util/argo/normalizers/diff_normalizer.go``; ``[]?`` so that an absent
    list is no error) and, with ``RespectIgnoreDifferences=true``, syncs the live values of
    those fields instead of the rendered ones (``controller/sync.go``)."""
    apps = {
        m.name: m.body for m in example["prod"] if m.kind == "Application" and "-cluster-" in m.name
    }
    oke_app = apps["fleet-prod-cluster-oke-sso-prod"]["spec"]
    assert oke_app["ignoreDifferences"] == [
        d.to_dict() for d in OciManagedCluster.ignore_differences
    ]
    assert "RespectIgnoreDifferences=true" in oke_app["syncPolicy"]["syncOptions"]
    # A Magnum cluster's Application ignores only what its own plug-in says (the external
    # name: tests/test_external_name.py), nothing of OKE's.
    magnum_app = apps["fleet-prod-cluster-k8s-sso-prod-v25"]["spec"]
    assert {d["kind"] for d in magnum_app["ignoreDifferences"]} == {"ClusterV1", "NodegroupV1"}
