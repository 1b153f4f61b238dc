"""Every carried value of the states against what the planned declarations render.

The import hook renders the generated modules in the fleet; each state value the import
carries must be found in the rendered object CAPOCI compares with OKE, at the field CAPOCI
reads it from (v0.24.0
``managed_control_plane.go`` ``getSpecFromActual``, ``managed_machine_pool.go``
``getSpecFromAPIObject``: names in the pool's spec resolve to OCIDs through
``OCIManagedCluster.spec.networkSpec``, ``cloud/scope/util.go``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fleet.clouds.importer import Mismatch
from fleet.clouds.oci.importer.fates import CARRIED
from fleet.clouds.oci.importer.planner import _defined, _user_tags, image_of
from fleet.clouds.oci.importer.reader import OkeState, block
from fleet.core.manifest import Manifest

CAPI_GROUP = "cluster.x-k8s.io"
INFRA_GROUP = "infrastructure.cluster.x-k8s.io"


def _get(body: Mapping[str, Any], path: str) -> Any:
    node: Any = body
    for step in path.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(step)
    return node


def _float_text(value: Any) -> str:
    return f"{float(value):g}"


def mismatches(oke: OkeState, manifests: Sequence[Manifest]) -> list[Mismatch]:
    """Each carried value of ``oke`` the render of its environment (``manifests``) loses
    or changes; the cluster is found by the OCID it adopts (``spec.id``)."""
    # Cluster API's and CAPOCI's objects only (provider-argocd has a ``Cluster`` kind too).
    by_kind: dict[tuple[str, str], dict[str, Any]] = {
        (m.kind, m.name): dict(m.body) for m in manifests if m.group in (CAPI_GROUP, INFRA_GROUP)
    }
    attrs = oke.cluster.attributes
    where = oke.cluster.where
    found = [
        name
        for (kind, name), body in by_kind.items()
        if kind == "OCIManagedControlPlane" and _get(body, "spec.id") == attrs.get("id")
    ]
    if len(found) != 1:
        return [
            Mismatch(
                where=where,
                attribute="id",
                fate=CARRIED,
                message="no OCIManagedControlPlane adopts it by spec.id",
                field="spec.id",
            )
        ]
    name = found[0]
    infra = by_kind[("OCIManagedCluster", name)]
    cp = by_kind[("OCIManagedControlPlane", name)]
    capi = by_kind[("Cluster", name)]
    out: list[Mismatch] = []

    def same(attribute: str, want: Any, got: Any, at: str) -> None:
        if want != got:
            out.append(
                Mismatch(
                    where=where,
                    attribute=attribute,
                    fate=CARRIED,
                    message=f"{attribute}: the render of {name} has another value at {at}",
                    field=at,
                )
            )

    vcn = _get(infra, "spec.networkSpec.vcn") or {}
    subnet_ids = {s["name"]: s["id"] for s in vcn.get("subnets", [])}
    subnet_roles = {s["id"]: (s["role"], s.get("type")) for s in vcn.get("subnets", [])}
    nsg_list = (vcn.get("networkSecurityGroup") or {}).get("list", [])
    nsg_ids = {n["name"]: n["id"] for n in nsg_list}
    same("id", attrs.get("id"), _get(cp, "spec.id"), "OCIManagedControlPlane spec.id")
    same(
        "compartment_id",
        attrs.get("compartment_id"),
        _get(infra, "spec.compartmentId"),
        "spec.compartmentId",
    )
    same(
        "kubernetes_version",
        attrs.get("kubernetes_version"),
        _get(cp, "spec.version"),
        "spec.version",
    )
    same("vcn_id", attrs.get("vcn_id"), vcn.get("id"), "spec.networkSpec.vcn.id")
    same(
        "skipNetworkManagement",
        True,
        _get(infra, "spec.networkSpec.skipNetworkManagement"),
        "spec.networkSpec",
    )
    cni = block(attrs, "cluster_pod_network_options").get("cni_type") or "FLANNEL_OVERLAY"
    same(
        "cluster_pod_network_options.cni_type",
        [{"cniType": cni}],
        _get(cp, "spec.clusterPodNetworkOptions"),
        "spec.clusterPodNetworkOptions",
    )
    same(
        "type",
        attrs.get("type") or "BASIC_CLUSTER",
        _get(cp, "spec.clusterType"),
        "spec.clusterType",
    )
    same(
        "freeform_tags",
        _user_tags(attrs.get("freeform_tags")) or None,
        _get(infra, "spec.freeformTags"),
        "spec.freeformTags",
    )
    same(
        "defined_tags",
        _defined(attrs.get("defined_tags")) or None,
        _get(infra, "spec.definedTags"),
        "spec.definedTags",
    )
    endpoint = block(attrs, "endpoint_config")
    if endpoint.get("subnet_id"):
        role, kind = subnet_roles.get(endpoint["subnet_id"], ("", ""))
        same("endpoint_config.subnet_id", "control-plane-endpoint", role, "networkSpec.vcn.subnets")
        public = "public" if endpoint.get("is_public_ip_enabled") is True else "private"
        same("endpoint_config.is_public_ip_enabled", public, kind, "the subnet's type")
    cp_nsgs = sorted(n["id"] for n in nsg_list if n["role"] == "control-plane-endpoint")
    same(
        "endpoint_config.nsg_ids",
        sorted(endpoint.get("nsg_ids") or []),
        cp_nsgs,
        "networkSecurityGroup.list",
    )
    options = block(attrs, "options")
    lb = sorted(s for s, (r, _) in subnet_roles.items() if r == "service-lb")
    same(
        "options.service_lb_subnet_ids",
        sorted(options.get("service_lb_subnet_ids") or []),
        lb,
        "subnets (service-lb)",
    )
    net = block(options, "kubernetes_network_config")
    for attribute, path in (("pods_cidr", "pods"), ("services_cidr", "services")):
        if net.get(attribute):
            same(
                f"options.kubernetes_network_config.{attribute}",
                [net[attribute]],
                _get(capi, f"spec.clusterNetwork.{path}.cidrBlocks"),
                f"Cluster spec.clusterNetwork.{path}",
            )
    for pool in oke.pools:
        out.extend(_pool_mismatches(pool, by_kind, subnet_ids, nsg_ids, attrs))
    return out


def _pool_mismatches(
    pool: Any,
    by_kind: Mapping[tuple[str, str], Mapping[str, Any]],
    subnet_ids: Mapping[str, str],
    nsg_ids: Mapping[str, str],
    cluster_attrs: Mapping[str, Any],
) -> list[Mismatch]:
    attrs = pool.attributes
    where = pool.where
    found = [
        (name, body)
        for (kind, name), body in by_kind.items()
        if kind == "OCIManagedMachinePool" and _get(body, "spec.id") == attrs.get("id")
    ]
    group = str(attrs.get("name") or "")
    if len(found) != 1:
        return [
            Mismatch(
                where=where,
                attribute="id",
                fate=CARRIED,
                message="no OCIManagedMachinePool adopts it by spec.id",
                field="spec.id",
                group=group,
            )
        ]
    name, body = found[0]
    spec = body["spec"]
    machine_pool = by_kind[("MachinePool", name)]
    out: list[Mismatch] = []

    def same(attribute: str, want: Any, got: Any) -> None:
        if want != got:
            out.append(
                Mismatch(
                    where=where,
                    attribute=attribute,
                    fate=CARRIED,
                    message=f"{attribute}: the render of {name} has another value",
                    field=attribute,
                    group=group,
                )
            )

    same("node_shape", attrs.get("node_shape"), spec.get("nodeShape"))
    details = block(attrs, "node_config_details")
    same("node_config_details.size", details.get("size"), _get(machine_pool, "spec.replicas"))
    shape = block(attrs, "node_shape_config")
    config = spec.get("nodeShapeConfig") or {}
    for attribute, key in (("ocpus", "ocpus"), ("memory_in_gbs", "memoryInGBs")):
        if shape.get(attribute) not in (None, 0):
            same(
                f"node_shape_config.{attribute}",
                _float_text(shape[attribute]),
                config.get(key) and _float_text(config[key]),
            )
    node_config = spec["nodePoolNodeConfig"]
    placements = details.get("placement_configs") or []
    rendered = node_config.get("placementConfigs") or []
    same(
        "node_config_details.placement_configs.availability_domain",
        sorted(str(x.get("availability_domain")) for x in placements),
        [x["availabilityDomain"] for x in rendered],
    )
    same(
        "node_config_details.placement_configs.subnet_id",
        sorted({str(x.get("subnet_id")) for x in placements}),
        sorted({subnet_ids.get(x["subnetName"], "") for x in rendered}),
    )
    fds = sorted({str(f) for x in placements for f in x.get("fault_domains") or ()})
    if fds:
        same(
            "node_config_details.placement_configs.fault_domains",
            fds,
            sorted({f for x in rendered for f in x["faultDomains"]}),
        )
    same(
        "node_config_details.nsg_ids",
        sorted(details.get("nsg_ids") or []),
        sorted(nsg_ids.get(n, "") for n in node_config.get("nsgNames") or []),
    )
    pod = block(details, "node_pool_pod_network_option_details")
    pod_spec = node_config.get("nodePoolPodNetworkOptionDetails") or {}
    native = pod_spec.get("vcnIpNativePodNetworkOptions") or {}
    if pod.get("pod_subnet_ids"):
        same(
            f"{'node_config_details.node_pool_pod_network_option_details'}.pod_subnet_ids",
            list(pod["pod_subnet_ids"]),
            [subnet_ids.get(n, "") for n in native.get("subnetNames") or []],
        )
    if pod.get("pod_nsg_ids"):
        same(
            "node_config_details.node_pool_pod_network_option_details.pod_nsg_ids",
            list(pod["pod_nsg_ids"]),
            [nsg_ids.get(n, "") for n in native.get("nsgNames") or []],
        )
    source = block(attrs, "node_source_details")
    same(
        "node_source_details.image_id",
        image_of(attrs),
        _get(spec, "nodeSourceViaImage.imageId"),
    )
    if source.get("boot_volume_size_in_gbs") not in (None, ""):
        same(
            "node_source_details.boot_volume_size_in_gbs",
            int(str(source["boot_volume_size_in_gbs"])),
            _get(spec, "nodeSourceViaImage.bootVolumeSizeInGBs"),
        )
    if attrs.get("ssh_public_key"):
        same("ssh_public_key", attrs["ssh_public_key"], spec.get("sshPublicKey"))
    same(
        "kubernetes_version",
        attrs.get("kubernetes_version") or cluster_attrs.get("kubernetes_version"),
        spec.get("version"),
    )
    labels = sorted(
        (str(kv.get("key")), str(kv.get("value"))) for kv in attrs.get("initial_node_labels") or []
    )
    same(
        "initial_node_labels",
        labels,
        [(kv["key"], kv["value"]) for kv in spec.get("initialNodeLabels") or []],
    )
    cycling = block(attrs, "node_pool_cycling_details")
    rendered_cycling = spec.get("nodePoolCyclingDetails") or {}
    for attribute, key in (
        ("maximum_surge", "maximumSurge"),
        ("maximum_unavailable", "maximumUnavailable"),
    ):
        if cycling.get(attribute) not in (None, ""):
            same(
                f"node_pool_cycling_details.{attribute}",
                str(cycling[attribute]),
                rendered_cycling.get(key),
            )
    return out
