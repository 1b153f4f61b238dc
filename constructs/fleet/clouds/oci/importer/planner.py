"""OKE clusters of Terraform states as :class:`~fleet.OciManagedCluster` declarations.

One declaration per cluster and environment: its name kept, its values carried (the
keywords of :data:`~fleet.clouds.oci.importer.fates.CLUSTER_FATES` marked ``carried``),
adopted by OCID (``cluster_id``, each pool's ``node_pool_id``), its network the
:class:`~fleet.OkeExistingVcn` of the subnets and NSGs it uses (CAPOCI then creates
nothing: ``skipNetworkManagement``). What CAPOCI cannot hold is reported, and the OCI CLI
commands that put CAPOCI's adoption tags on the cluster and its pools are printed: CAPOCI
v0.24.0 ``cloud/scope/managed_machine_pool.go`` ``FindNodePool`` refuses a pool found by
``spec.id`` without ``CreatedBy=OCIClusterAPIProvider`` and
``ClusterResourceIdentifier=<ociResourceIdentifier>`` ("cluster api tags have been
modified out of context"); ``managed_control_plane.go`` adopts the cluster by ``spec.id``
without looking at its tags, then sets them (``UpdateControlPlane``, ``getFreeFormTags``).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fleet.clouds.importer import environment_of
from fleet.clouds.oci.adoption import UNKNOWN_REACHABILITY
from fleet.clouds.oci.cluster_values import derived_resource_identifier
from fleet.clouds.oci.importer.fates import (
    CLUSTER,
    NODE_POOL,
    UNEXPRESSED,
    fate_of,
    leaves,
)
from fleet.clouds.oci.importer.reader import OkeState, block
from fleet.clouds.oci.network import CONTROL_PLANE_ENDPOINT, POD, SERVICE_LB, WORKER
from fleet.clouds.oci.pool import FAULT_DOMAINS, MAX_NODE_POOL_NAME, OKE_MAX_PODS_PER_NODE
from fleet.clouds.oci.regions import REGION_KEYS
from fleet.clouds.oci.validators import AVAILABILITY_DOMAIN
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError
from fleet.core.names import is_dns_label, object_name_from
from fleet.core.pysource import Call, Value

CREATED_BY = "CreatedBy"
CREATED_BY_VALUE = "OCIClusterAPIProvider"
RESOURCE_IDENTIFIER = "ClusterResourceIdentifier"
"""CAPOCI v0.24.0 ``cloud/ociutil/ociutil.go`` ``BuildClusterTags``: the freeform tags
CAPOCI puts on what it manages, and looks for on what it adopts."""
CALLS = frozenset({"OciManagedCluster", "OkeNodePool", "OkeExistingVcn", "OkeSubnet", "OkeNsg"})
"""Every class a generated OKE module calls."""


@dataclass
class PlannedCluster:
    """One imported cluster: its declaration's keywords, what the report says, how to tag
    it."""

    oke: OkeState
    environment: str
    environment_rule: str
    keywords: dict[str, Value]
    """The ``OciManagedCluster`` keywords, its pools apart."""
    pools: dict[str, dict[str, Value]]
    """Pool address -> its ``OkeNodePool`` keywords."""
    lines: list[str] = field(default_factory=list)
    """The report's lines about it (values never quoted but ids, names and counts)."""
    commands: list[str] = field(default_factory=list)
    """The OCI CLI commands that tag the cluster and each pool for CAPOCI's adoption."""


class _Network:
    """The subnets and NSGs one cluster uses, each once (by OCID), named by role."""

    def __init__(self, oke: OkeState) -> None:
        self.oke = oke
        self.subnets: dict[str, tuple[str, str]] = {}
        """OCID -> (role, name)."""
        self.nsgs: dict[str, tuple[str, str]] = {}
        self.legacy_endpoint: str | None = None
        """The subnet a cluster whose API endpoint is not in its VCN is to be migrated to
        (it also serves another role: listed once more, as control-plane-endpoint)."""

    @staticmethod
    def _add(table: dict[str, tuple[str, str]], ocid: str, role: str) -> str:
        if ocid in table:
            return table[ocid][1]
        taken = sum(1 for r, _ in table.values() if r == role)
        name = role if not taken else f"{role}-{taken + 1}"
        table[ocid] = (role, name)
        return name

    def subnet(self, ocid: str, role: str) -> str:
        """The name of subnet ``ocid`` (added with ``role`` if new)."""
        return self._add(self.subnets, ocid, role)

    def nsg(self, ocid: str, role: str) -> str:
        """The name of NSG ``ocid`` (added with ``role`` if new)."""
        return self._add(self.nsgs, ocid, role)

    def call(self, vcn_id: str, public_endpoint: bool, lines: list[str], head: str) -> Call:
        """``OkeExistingVcn(...)`` of what was added."""
        subnets: list[Value] = []
        if self.legacy_endpoint is not None:
            subnets.append(
                Call(
                    callee="OkeSubnet",
                    keywords=(
                        ("role", CONTROL_PLANE_ENDPOINT),
                        ("id", self.legacy_endpoint),
                        ("public", True),
                    ),
                )
            )
        for ocid, (role, name) in self.subnets.items():
            kind = "private"
            if role == CONTROL_PLANE_ENDPOINT:
                kind = "public" if public_endpoint else "private"
            elif ocid in self.oke.subnets:
                prohibit = self.oke.subnets[ocid].attributes.get("prohibit_public_ip_on_vnic")
                kind = "private" if prohibit is not False else "public"
            keywords: list[tuple[str, Value]] = [("role", role), ("id", ocid)]
            if name != role:
                keywords.append(("name", name))
            if kind != "private":
                keywords.append(("public", True))
            subnets.append(Call(callee="OkeSubnet", keywords=tuple(keywords)))
        nsgs: list[Value] = []
        for ocid, (role, name) in self.nsgs.items():
            keywords = [("role", role), ("id", ocid)]
            if name != role:
                keywords.append(("name", name))
            nsgs.append(Call(callee="OkeNsg", keywords=tuple(keywords)))
        out: list[tuple[str, Value]] = [("id", vcn_id), ("subnets", subnets)]
        if nsgs:
            out.append(("network_security_groups", nsgs))
        if not public_endpoint:
            out.append(("private_api_reachable_via", UNKNOWN_REACHABILITY))
            lines.append(
                f"{head}: private API endpoint: replace private_api_reachable_via with how the "
                "management cluster reaches the VCN (the state cannot say)"
            )
        roles = {role for role, _ in self.subnets.values()}
        if self.legacy_endpoint is not None:
            roles.add(CONTROL_PLANE_ENDPOINT)
        missing = [r for r in (CONTROL_PLANE_ENDPOINT, WORKER) if r not in roles]
        if missing:
            raise DefinitionError(
                f"no subnet of its own for {', '.join(missing)}: one subnet serves several "
                "roles, and CAPOCI names a subnet once (listed twice, its pools would differ "
                "from OKE on every reconcile, cloud/scope/util.go GetSubnetNamesFromId); "
                "not importable as it is",
                where=self.oke.cluster.where,
                field="endpoint_config.subnet_id",
            )
        return Call(callee="OkeExistingVcn", keywords=tuple(out))


def _region(oke: OkeState) -> str:
    """The region: from an availability domain of a pool (``<prefix>:EU-FRANKFURT-1-AD-1``),
    else from the cluster's OCID (``ocid1.cluster.oc1.<region or its key>.<id>``)."""
    for pool in oke.pools:
        for placement in block(pool.attributes, "node_config_details").get("placement_configs", []):
            match = AVAILABILITY_DOMAIN.match(str(placement.get("availability_domain", "")))
            if match:
                return match.group("region").lower()
    parts = str(oke.cluster.attributes.get("id", "")).split(".")
    segment = parts[3] if len(parts) > 4 else ""
    by_key = {key: region for region, key in REGION_KEYS.items()}
    region = by_key.get(segment, segment)
    if region not in REGION_KEYS:
        raise DefinitionError(
            "cannot tell the cluster's region: no node pool names an availability domain and "
            "its OCID names no region the fleet knows",
            where=oke.cluster.where,
            field="id",
        )
    return region


def _user_tags(tags: Any) -> dict[str, str]:
    """Freeform tags without CAPOCI's own (CAPOCI adds those itself)."""
    if not isinstance(tags, dict):
        return {}
    return {
        str(k): str(v)
        for k, v in sorted(tags.items())
        if k not in (CREATED_BY, RESOURCE_IDENTIFIER)
    }


def _defined(tags: Any) -> dict[str, dict[str, str]]:
    """Terraform's ``{"Namespace.key": value}`` as CAPOCI's ``{Namespace: {key: value}}``."""
    out: dict[str, dict[str, str]] = {}
    if isinstance(tags, dict):
        for key, value in sorted(tags.items()):
            namespace, _, name = str(key).partition(".")
            out.setdefault(namespace, {})[name] = str(value)
    return out


def _whole(value: Any, where: str, attribute: str) -> int:
    """A float of the state that the fleet holds as an integer (OCPUs, GB)."""
    number = float(value)
    if not number.is_integer():
        raise DefinitionError(
            f"a fraction ({number:g}): the generated declaration holds whole numbers only; "
            "not importable as it is",
            where=where,
            field=attribute,
        )
    return int(number)


_IMPLIED: Mapping[str, Any] = {
    "options.ip_families": ("IPv4",),
    "node_pool_cycling_details.is_node_cycling_enabled": True,
}
"""Unexpressed attributes whose state value is what the fleet's render implies anyway."""


def unexpressed_lines(resource_type: str, attributes: Mapping[str, Any], head: str) -> list[str]:
    """One line per unexpressed attribute the state sets to a value CAPOCI cannot hold."""
    out: list[str] = []
    seen: set[str] = set()
    for path, value in leaves(dict(attributes)):
        fate = fate_of(resource_type, path)
        if fate is None or fate.fate != UNEXPRESSED or path in seen:
            continue
        if value in (None, "", [], {}, False, 0):
            continue
        implied = _IMPLIED.get(path)
        if implied is not None and (value == implied or tuple(value or ()) == implied):
            continue
        seen.add(path)
        out.append(f"{head}: {path} is set in the state and not carried: {fate.rule}")
    return out


def plan_cluster(oke: OkeState, config: FleetConfig, flag: str | None) -> PlannedCluster:
    """The declaration of one cluster of the states, its report and its tagging commands."""
    attrs = oke.cluster.attributes
    where = oke.cluster.where
    name = oke.name
    environment, rule = environment_of(name, oke.state, flag, config, where)
    head = f"{name} ({environment})"
    lines: list[str] = []
    object_name = name if is_dns_label(name) else object_name_from(name)
    if not object_name:
        raise DefinitionError(
            "nothing of the cluster's name is left in a Kubernetes name", where=where, field="name"
        )
    if object_name != name:
        lines.append(
            f"{head}: name: CAPOCI names the OKE cluster after its OCIManagedControlPlane "
            f"and renames it to {object_name!r} at the first sync (not a DNS-1123 label)"
        )
    network = _Network(oke)
    endpoint = block(attrs, "endpoint_config")
    if endpoint.get("subnet_id"):
        network.subnet(str(endpoint["subnet_id"]), CONTROL_PLANE_ENDPOINT)
    for nsg in endpoint.get("nsg_ids") or ():
        network.nsg(str(nsg), CONTROL_PLANE_ENDPOINT)
    options = block(attrs, "options")
    cni_block = block(attrs, "cluster_pod_network_options")
    cni = str(cni_block.get("cni_type") or "FLANNEL_OVERLAY")
    pools: dict[str, dict[str, Value]] = {}
    commands: list[str] = []
    identifier = _identifier(attrs, environment, object_name, lines, head)
    cluster_tags = _user_tags(attrs.get("freeform_tags"))
    cluster_defined = _defined(attrs.get("defined_tags"))
    ads_all: set[str] = set()
    images: list[str] = []
    planned_pools = []
    for pool in oke.pools:
        planned_pools.append(
            (pool.address, *_pool(pool, oke, object_name, network, cni, head, lines))
        )
    for _, _, ads, image in planned_pools:
        ads_all.update(ads)
        if image:
            images.append(image)
    if not images:
        raise DefinitionError(
            "no node pool with an image: an OciManagedCluster needs node_image_id (declare "
            "the cluster by hand)",
            where=where,
        )
    cluster_ads = sorted(ads_all)
    node_image = images[0]
    for address, kw, ads, image in planned_pools:
        pool_keywords = dict(kw)
        if sorted(ads) != cluster_ads:
            pool_keywords["availability_domains"] = sorted(ads)
        if image != node_image:
            pool_keywords["image_id"] = image
        pools[address] = dict(_order(pool_keywords))
    for service_lb in options.get("service_lb_subnet_ids") or ():
        network.subnet(str(service_lb), SERVICE_LB)
    public = endpoint.get("is_public_ip_enabled") is True
    if not endpoint.get("subnet_id"):
        public = True
        commands.append(_legacy_endpoint(oke, network, lines, head))
    vcn = network.call(str(attrs.get("vcn_id", "")), public, lines, head)
    network_config = block(options, "kubernetes_network_config")
    keywords: list[tuple[str, Value]] = [
        ("name", name),
        ("environments", [environment]),
        ("compartment_id", str(attrs.get("compartment_id", ""))),
        ("region", _region(oke)),
        ("kubernetes_version", str(attrs.get("kubernetes_version", ""))),
        ("availability_domains", cluster_ads),
        ("node_image_id", node_image),
        ("network", vcn),
    ]
    if cni != "OCI_VCN_IP_NATIVE":
        keywords.append(("cni_type", cni))
    cluster_type = str(attrs.get("type") or "BASIC_CLUSTER")
    if cluster_type != "BASIC_CLUSTER":
        keywords.append(("cluster_type", cluster_type))
    for attribute, keyword in (("pods_cidr", "pods_cidr"), ("services_cidr", "services_cidr")):
        if network_config.get(attribute):
            keywords.append((keyword, str(network_config[attribute])))
    if cluster_tags:
        keywords.append(("freeform_tags", cluster_tags))
    if cluster_defined:
        keywords.append(("defined_tags", cluster_defined))
    if identifier[1]:
        keywords.append(("oci_resource_identifier", identifier[0]))
    keywords.append(("cluster_id", str(attrs["id"])))
    keywords.append(("adoption_tags_applied", False))
    lines.extend(unexpressed_lines(CLUSTER, attrs, head))
    own = _all_tags(attrs.get("freeform_tags"))
    # The update replaces the whole freeform tag map (oracle/oci-cli v3.89.3
    # containerengine_cli.py update_cluster/update_node_pool: "will replace any existing
    # values"): each command holds what the object carries now and CAPOCI's two tags.
    adoption = {CREATED_BY: CREATED_BY_VALUE, RESOURCE_IDENTIFIER: identifier[0]}
    commands.append(_command("cluster", "--cluster-id", str(attrs["id"]), {**own, **adoption}))
    for pool in oke.pools:
        held = _all_tags(pool.attributes.get("freeform_tags"))
        pool_id = str(pool.attributes["id"])
        commands.append(_command("node-pool", "--node-pool-id", pool_id, {**held, **adoption}))
    return PlannedCluster(
        oke=oke,
        environment=environment,
        environment_rule=rule,
        keywords=dict(keywords),
        pools=pools,
        lines=lines,
        commands=commands,
    )


def _legacy_endpoint(oke: OkeState, network: _Network, lines: list[str], head: str) -> str:
    """A cluster created without ``endpoint_config`` (its API endpoint public and outside
    its VCN, which OKE still creates through its API, Terraform's included): CAPOCI v0.24.0
    reads the VCN-native endpoint OKE gives a migrated cluster
    (``controllers/ocimanagedcluster_controlplane_controller.go``: ``Endpoints.PublicEndpoint``
    or ``PrivateEndpoint``), so it is declared as migrated to a public endpoint in the first
    public service-lb subnet (as public as it is today), and the command that migrates it
    (oracle/oci-cli ``ce cluster cluster-migrate-to-native-vcn``) runs first."""
    where = oke.cluster.where
    public = [
        ocid
        for ocid, (role, _) in network.subnets.items()
        if role == SERVICE_LB
        and ocid in oke.subnets
        and oke.subnets[ocid].attributes.get("prohibit_public_ip_on_vnic") is False
    ]
    if not public:
        raise DefinitionError(
            "its API endpoint is not in its VCN (no endpoint_config: created without a "
            "VCN-native endpoint), and the state holds no public service-lb subnet to move it "
            "to: CAPOCI adopts VCN-native clusters only; migrate it first (oci ce cluster "
            "cluster-migrate-to-native-vcn --cluster-id ... --endpoint-config "
            '\'{"subnetId": "...", "isPublicIpEnabled": true}\'), add that endpoint_config '
            "to the configuration, refresh the state and import again",
            where=where,
            field="endpoint_config",
        )
    network.legacy_endpoint = public[0]
    config = json.dumps({"isPublicIpEnabled": True, "subnetId": public[0]}, separators=(",", ":"))
    lines.append(
        f"{head}: API endpoint not in the VCN (no endpoint_config): CAPOCI adopts VCN-native "
        f"clusters only; declared as migrated to a public endpoint in subnet {public[0]} (its "
        "public service-lb subnet; change both if another is wanted): migrate it first, then "
        "add that endpoint_config to the Terraform configuration if it stays in use"
    )
    cluster_id = str(oke.cluster.attributes.get("id"))
    return (
        f"oci ce cluster cluster-migrate-to-native-vcn --cluster-id {shlex.quote(cluster_id)} "
        f"--endpoint-config {shlex.quote(config)}"
    )


def _all_tags(tags: Any) -> dict[str, str]:
    """Every freeform tag an object carries (as the state holds them)."""
    if not isinstance(tags, dict):
        return {}
    return {str(k): str(v) for k, v in sorted(tags.items())}


def _identifier(
    attrs: Mapping[str, Any], environment: str, object_name: str, lines: list[str], head: str
) -> tuple[str, bool]:
    """CAPOCI's identifier of the cluster: the one its tags hold already (pinned), else the
    fleet's derived one."""
    tags = attrs.get("freeform_tags") or {}
    given = tags.get(RESOURCE_IDENTIFIER) if isinstance(tags, dict) else None
    if isinstance(given, str) and given:
        lines.append(
            f"{head}: oci_resource_identifier pinned to the cluster's {RESOURCE_IDENTIFIER} tag"
        )
        return given, True
    return derived_resource_identifier(environment, object_name), False


def _command(kind: str, flag: str, ocid: str, tags: Mapping[str, str]) -> str:
    """``oci ce <kind> update <flag> <ocid> --freeform-tags '<json>' --force``: the update
    replaces the whole freeform tag map, so it holds the cluster's tags and CAPOCI's."""
    text = json.dumps(dict(sorted(tags.items())), separators=(",", ":"))
    return (
        f"oci ce {kind} update {flag} {shlex.quote(ocid)} "
        f"--freeform-tags {shlex.quote(text)} --force"
    )


_POOL_ORDER = (
    "name",
    "node_shape",
    "ocpus",
    "memory_gb",
    "node_count",
    "availability_domains",
    "fault_domains",
    "subnet_name",
    "nsg_names",
    "pod_subnet_names",
    "pod_nsg_names",
    "max_pods_per_node",
    "boot_volume_size_gb",
    "image_id",
    "ssh_public_key",
    "kubernetes_version",
    "labels",
    "max_surge",
    "max_unavailable",
    "node_pool_id",
)


def _order(keywords: Mapping[str, Value]) -> tuple[tuple[str, Value], ...]:
    return tuple((k, keywords[k]) for k in _POOL_ORDER if k in keywords)


def _pool(
    pool: Any,
    oke: OkeState,
    cluster_name: str,
    network: _Network,
    cni: str,
    head: str,
    lines: list[str],
) -> tuple[dict[str, Value], list[str], str]:
    """A pool's keywords (without ADs and image), its ADs, its image."""
    attrs = pool.attributes
    where = pool.where
    tf_name = str(attrs.get("name", ""))
    pool_head = f"{head}: node pool {tf_name!r}"
    name = tf_name[len(cluster_name) + 1 :] if tf_name.startswith(f"{cluster_name}-") else tf_name
    if not is_dns_label(name):
        name = object_name_from(name) or "pool"
    full = f"{cluster_name}-{name}"
    if len(full) > MAX_NODE_POOL_NAME:
        raise DefinitionError(
            f"CAPOCI names the pool {full!r} ({len(full)} characters, at most "
            f"{MAX_NODE_POOL_NAME}): not importable as it is",
            where=where,
            field="name",
        )
    if full != tf_name:
        lines.append(
            f"{pool_head}: CAPOCI names an OKE node pool after its OCIManagedMachinePool and "
            f"renames it to {full!r} at the first sync (UpdateNodePool)"
        )
    details = block(attrs, "node_config_details")
    placements = list(details.get("placement_configs") or [])
    if not placements:
        raise DefinitionError(
            "no node_config_details (the legacy subnet_ids/quantity_per_subnet placement): "
            "CAPOCI places a pool by availability domain and subnet only; move it to "
            "node_config_details in Terraform first",
            where=where,
            field="subnet_ids",
        )
    subnet_ids = sorted({str(p.get("subnet_id")) for p in placements})
    if len(subnet_ids) > 1:
        raise DefinitionError(
            "its placements use several subnets: an OkeNodePool has one subnet for all its "
            "availability domains; not importable as it is",
            where=where,
            field="node_config_details.placement_configs",
        )
    keywords: dict[str, Value] = {"name": name, "node_shape": str(attrs.get("node_shape", ""))}
    shape = block(attrs, "node_shape_config")
    if shape.get("ocpus") not in (None, 0):
        keywords["ocpus"] = _whole(shape["ocpus"], where, "node_shape_config.ocpus")
    if shape.get("memory_in_gbs") not in (None, 0):
        keywords["memory_gb"] = _whole(
            shape["memory_in_gbs"], where, "node_shape_config.memory_in_gbs"
        )
    keywords["node_count"] = int(details.get("size") or 0)
    fds = sorted({str(fd) for p in placements for fd in p.get("fault_domains") or ()})
    if fds and tuple(fds) != tuple(str(f) for f in FAULT_DOMAINS):
        keywords["fault_domains"] = fds
    keywords["subnet_name"] = network.subnet(subnet_ids[0], WORKER)
    keywords["nsg_names"] = [network.nsg(str(n), WORKER) for n in details.get("nsg_ids") or ()]
    pod = block(details, "node_pool_pod_network_option_details")
    pod_cni = str(pod.get("cni_type") or cni)
    if pod_cni != cni:
        raise DefinitionError(
            f"the pool's pod networking ({pod_cni}) is not its cluster's ({cni})",
            where=where,
            field="node_config_details.node_pool_pod_network_option_details.cni_type",
        )
    if cni == "OCI_VCN_IP_NATIVE":
        keywords["pod_subnet_names"] = [
            network.subnet(str(s), POD) for s in pod.get("pod_subnet_ids") or ()
        ]
        keywords["pod_nsg_names"] = [network.nsg(str(n), POD) for n in pod.get("pod_nsg_ids") or ()]
        max_pods = pod.get("max_pods_per_node")
        if max_pods not in (None, OKE_MAX_PODS_PER_NODE):
            lines.append(
                f"{pool_head}: max_pods_per_node {max_pods} is not carried: CAPOCI compares "
                f"every pool with {OKE_MAX_PODS_PER_NODE} (setMachinePoolSpecDefaults)"
            )
    source = block(attrs, "node_source_details")
    image = image_of(attrs)
    if not image:
        raise DefinitionError(
            "no image OCID (node_image_name only, and OKE's node_source holds none): CAPOCI "
            "takes an image by OCID",
            where=where,
            field="node_image_name",
        )
    if not (source.get("image_id") or attrs.get("node_image_id")):
        lines.append(
            f"{pool_head}: image by name ({attrs.get('node_image_name')!r}): declared as the "
            f"OCID OKE resolved it to (node_source.image_id {image}); a newer image of that "
            "name is not followed"
        )
    boot = source.get("boot_volume_size_in_gbs")
    if boot not in (None, ""):
        size = int(str(boot))
        if size != 50:
            keywords["boot_volume_size_gb"] = size
    if attrs.get("ssh_public_key"):
        keywords["ssh_public_key"] = str(attrs["ssh_public_key"])
    if attrs.get("kubernetes_version") and attrs[
        "kubernetes_version"
    ] != oke.cluster.attributes.get("kubernetes_version"):
        keywords["kubernetes_version"] = str(attrs["kubernetes_version"])
    labels = {
        str(kv.get("key")): str(kv.get("value"))
        for kv in attrs.get("initial_node_labels") or ()
        if isinstance(kv, dict)
    }
    if labels:
        keywords["labels"] = dict(sorted(labels.items()))
    cycling = block(attrs, "node_pool_cycling_details")
    if cycling:
        keywords["max_surge"] = _surge(cycling.get("maximum_surge"), 1)
        keywords["max_unavailable"] = _surge(cycling.get("maximum_unavailable"), 0)
        if cycling.get("is_node_cycling_enabled") is not True:
            lines.append(
                f"{pool_head}: node cycling is off in OKE; the fleet renders it on "
                "(nodePoolCyclingDetails): CAPOCI turns it on with its first update"
            )
    else:
        lines.append(
            f"{pool_head}: no node_pool_cycling_details in the state; the fleet renders "
            "cycling on (max_surge 1, max_unavailable 0): CAPOCI sends it with its first update"
        )
    keywords["node_pool_id"] = str(attrs["id"])
    cluster_tags = _user_tags(oke.cluster.attributes.get("freeform_tags"))
    pool_tags = _user_tags(attrs.get("freeform_tags"))
    defined_differ = _defined(attrs.get("defined_tags")) != _defined(
        oke.cluster.attributes.get("defined_tags")
    )
    if pool_tags != cluster_tags or defined_differ:
        lines.append(
            f"{pool_head}: per-pool tags are not carried: CAPOCI tags every pool with the "
            "cluster's (OCIManagedCluster.spec.freeformTags/definedTags) and replaces the "
            "pool's own at its first update"
        )
    lines.extend(
        line
        for line in unexpressed_lines(NODE_POOL, attrs, pool_head)
        if "per-pool tags" not in line and "is_node_cycling_enabled" not in line
    )
    ads = sorted({str(p.get("availability_domain")) for p in placements})
    return keywords, ads, image


def image_of(attrs: Mapping[str, Any]) -> str:
    """A pool's image OCID: ``node_source_details.image_id``, else the older
    ``node_image_id``, else the one OKE resolved an image name to (``node_source``,
    Computed)."""
    given = block(attrs, "node_source_details").get("image_id") or attrs.get("node_image_id")
    return str(given or block(attrs, "node_source").get("image_id") or "")


def _surge(value: Any, default: int) -> Value:
    """OKE's ``maximum_surge``/``maximum_unavailable`` (a count or a percentage)."""
    if value in (None, ""):
        return default
    text = str(value)
    return int(text) if text.isdigit() else text
