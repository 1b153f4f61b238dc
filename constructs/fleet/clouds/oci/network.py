"""The network of an OKE cluster: a new VCN (CAPOCI's private layout) or an existing one.

CAPOCI reads the network from ``OCIManagedCluster.spec.networkSpec``. Node pools then
name their subnets and network security groups (NSGs) by ``name``; the control-plane
endpoint gets a public IP only when its subnet is ``public`` (CAPOCI's
``IsControlPlaneEndpointSubnetPublic``), and its NSG rules decide who may reach it.
"""

from __future__ import annotations

import enum
import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fleet.clouds.oci.validators import check_ocid
from fleet.core.arguments import checked_arguments
from fleet.core.errors import DefinitionError
from fleet.core.validators import check_choice, check_cidr, check_dns_label
from fleet.core.values import caller_location

CONTROL_PLANE_ENDPOINT = "control-plane-endpoint"
SERVICE_LB = "service-lb"
WORKER = "worker"
POD = "pod"
ROLES = (CONTROL_PLANE_ENDPOINT, SERVICE_LB, WORKER, POD)
"""Subnet and NSG roles of a managed cluster, in CAPOCI's order."""
VCN_PREFIXES = (16, 30)
"""The prefix lengths a VCN's CIDR block may have: "The CIDR blocks can range from /16 to
/30" (OCI's CreateVcn, ``oci network vcn create`` reference). Every CIDR block here is read
by :func:`fleet.core.validators.check_cidr`: CIDR notation, as OCI's API documents NSG rule
``source``/``destination`` and VCN ``cidrBlocks`` ("an IP address range in CIDR notation")
and as CAPOCI's webhook checks them (``net.ParseCIDR``: a bare address is refused,
v0.24.0 ``api/v1beta2/validator.go`` ``validateCIDR``, ``validateVCNCIDR``), and in its
network form, since CAPOCI compares NSG rules with what OCI returns by
``reflect.DeepEqual`` (``cloud/scope/nsg_reconciler.go``
``UpdateNSGSecurityRulesIfNeeded``)."""
REQUIRED_SUBNET_ROLES = (CONTROL_PLANE_ENDPOINT, WORKER, POD)
"""Without these an OKE cluster with VCN-native pod networking cannot come up."""


class ApiEndpoint(enum.StrEnum):
    """Where the Kubernetes API endpoint of an OKE cluster listens.

    CAPOCI has no endpoint setting: the endpoint is public exactly when the
    control-plane-endpoint subnet is ``public`` (``IsControlPlaneEndpointSubnetPublic`` in
    ``cloud/scope/managed_control_plane.go``), and OKE fixes it when the cluster is created.
    """

    PUBLIC = "public"
    """A public IP, reachable only from ``api_allowed_cidrs`` (NSG ingress on tcp/6443)."""
    PRIVATE = "private"
    """An IP in the VCN: the management cluster must reach it by peering, DRG or VPN."""


def api_endpoint_choice(value: object, *, where: str, field: str) -> ApiEndpoint:
    """``value`` (an :class:`ApiEndpoint` or its string) as the enum, else the error."""
    return check_choice(ApiEndpoint, value, where=where, field=field, quoted=True)


def check_reachability(
    endpoint: ApiEndpoint, statement: str | None, *, where: str, field: str
) -> str | None:
    """A private endpoint needs a statement of how the management cluster reaches it."""
    if endpoint is ApiEndpoint.PRIVATE:
        if not isinstance(statement, str) or not statement.strip():
            raise DefinitionError(
                "a private API endpoint is reachable only through the VCN: say how the "
                "management cluster (Cluster API, ArgoCD) reaches it, e.g. "
                'private_api_reachable_via="DRG attachment of the management VCN", or use '
                'api_endpoint="public" with api_allowed_cidrs',
                where=where,
                field=field,
            )
        return statement.strip()
    if statement is not None:
        raise DefinitionError(
            "only a private API endpoint takes private_api_reachable_via",
            where=where,
            field=field,
        )
    return None


@dataclass(frozen=True)
class NetworkNames:
    """Subnet and NSG names (by role) a node pool may refer to."""

    subnets: Mapping[str, str]
    """name -> role."""
    nsgs: Mapping[str, str]
    """name -> role."""


class OkeNetwork:
    """What :class:`~fleet.OciManagedCluster` needs from a network."""

    def network_spec(self, services: str = "") -> dict[str, Any] | None:
        """``OCIManagedCluster.spec.networkSpec`` (None: CAPOCI's default network).

        ``services``: the region's ``all-<key>-services-in-oracle-services-network``."""
        raise NotImplementedError

    def names(self) -> NetworkNames:
        """The subnet and NSG names node pools may use."""
        raise NotImplementedError

    def public_endpoint(self) -> bool:
        """Whether the Kubernetes API endpoint gets a public IP."""
        raise NotImplementedError

    def api_reachability(self) -> str:
        """How the management cluster reaches the API endpoint (for people and docs)."""
        raise NotImplementedError

    def vcn_cidr(self) -> ipaddress.IPv4Network | None:
        """The VCN's CIDR block, where fleet knows it (None for an existing VCN)."""
        return None


def _tcp(low: int, high: int | None = None) -> dict[str, Any]:
    return {"destinationPortRange": {"max": high or low, "min": low}}


def _path_discovery() -> dict[str, Any]:
    """ICMP type 3 code 4 (path MTU discovery): a new dict per rule, never one shared by
    several (a shared dict is one mutation away from changing every rule that holds it)."""
    return {"code": 4, "type": 3}


def _egress(
    description: str, protocol: str, dest: str | None, services: str, **extra: Any
) -> dict[str, Any]:
    rule: dict[str, Any] = {"description": description}
    if dest is None:
        # CAPOCI writes this value into the spec (adjustNSGRulesSpec): render it as it will be.
        if services:
            rule["destination"] = services
        rule["destinationType"] = "SERVICE_CIDR_BLOCK"
    else:
        rule["destination"] = dest
        rule["destinationType"] = "CIDR_BLOCK"
    rule.update(isStateless=False, protocol=protocol, **extra)
    return {"egressRule": rule}


def _ingress(description: str, protocol: str, source: str, **extra: Any) -> dict[str, Any]:
    rule: dict[str, Any] = {"description": description, "isStateless": False}
    rule.update(protocol=protocol, source=source, sourceType="CIDR_BLOCK", **extra)
    return {"ingressRule": rule}


@checked_arguments
@dataclass(frozen=True, kw_only=True)
class OkeVcn(OkeNetwork):
    """A new VCN with the subnets and NSGs of CAPOCI's ``cluster-template-managed-private.yaml``.

    Give the CIDR blocks; the NSG rules between the subnets (API endpoint, workers,
    load balancers, VCN-native pods) are derived from them. With the defaults and a private
    endpoint the rendered ``networkSpec`` is the template's.

    ``api_endpoint`` (:class:`ApiEndpoint`, ``"public"`` unless given) is the
    control-plane-endpoint subnet's type, fixed when the cluster is created (``fleet diff``
    refuses to change it). A public endpoint needs ``api_allowed_cidrs``: each CIDR block
    may reach tcp/6443 (an NSG ingress rule that CAPOCI keeps up to date on live clusters);
    list the management cluster's egress (NAT) address, or Cluster API and ArgoCD are locked
    out, and write ``0.0.0.0/0`` out if you mean it. A private endpoint needs
    ``private_api_reachable_via``, a sentence saying how the management cluster reaches the
    VCN (peering, DRG, VPN); ``api_allowed_cidrs`` then names the routed ranges allowed in.
    ``public_api_endpoint=True/False`` is the older spelling of ``api_endpoint``; given
    both, they must agree.

    Example::

        OkeVcn(cidr="10.1.0.0/16", control_plane_endpoint_cidr="10.1.0.8/29",
               service_lb_cidr="10.1.0.32/27", worker_cidr="10.1.64.0/20",
               pod_cidr="10.1.128.0/18", api_allowed_cidrs=["198.51.100.17/32"])
    """

    cidr: str = "10.0.0.0/16"
    control_plane_endpoint_cidr: str = "10.0.0.8/29"
    service_lb_cidr: str = "10.0.0.32/27"
    worker_cidr: str = "10.0.64.0/20"
    pod_cidr: str = "10.0.128.0/18"
    api_endpoint: ApiEndpoint | str | None = None
    api_allowed_cidrs: Sequence[str] = ()
    private_api_reachable_via: str | None = None
    public_service_lb: bool = True
    public_api_endpoint: bool | None = None
    where: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", self.where or caller_location())
        ctx = f"{self.where} (OkeVcn)"
        vcn = check_cidr(self.cidr, where=ctx, field="cidr", prefixes=VCN_PREFIXES)
        subnets = {
            "control_plane_endpoint_cidr": self.control_plane_endpoint_cidr,
            "service_lb_cidr": self.service_lb_cidr,
            "worker_cidr": self.worker_cidr,
            "pod_cidr": self.pod_cidr,
        }
        seen: dict[str, ipaddress.IPv4Network] = {}
        for name, value in subnets.items():
            net = check_cidr(value, where=ctx, field=name)
            if not net.subnet_of(vcn):
                raise DefinitionError(
                    f"{value} is not inside the VCN's {self.cidr}", where=ctx, field=name
                )
            for other, other_net in seen.items():
                if net.overlaps(other_net):
                    raise DefinitionError(
                        f"{value} overlaps {other} {other_net}", where=ctx, field=name
                    )
            seen[name] = net
        for value in self.api_allowed_cidrs:
            check_cidr(value, where=ctx, field="api_allowed_cidrs")
        object.__setattr__(self, "api_allowed_cidrs", tuple(self.api_allowed_cidrs))
        given = (
            None
            if self.api_endpoint is None
            else api_endpoint_choice(self.api_endpoint, where=ctx, field="api_endpoint")
        )
        endpoint = given or ApiEndpoint.PUBLIC
        if self.public_api_endpoint is not None:
            older = ApiEndpoint.PUBLIC if self.public_api_endpoint else ApiEndpoint.PRIVATE
            if given is not None and older is not given:
                raise DefinitionError(
                    f"public_api_endpoint={self.public_api_endpoint} says {older.value} but "
                    f"api_endpoint={given.value!r}: they contradict each other; give "
                    "api_endpoint only",
                    where=ctx,
                    field="public_api_endpoint",
                )
            endpoint = older
        object.__setattr__(self, "api_endpoint", endpoint)
        if endpoint is ApiEndpoint.PUBLIC and not self.api_allowed_cidrs:
            raise DefinitionError(
                "a public API endpoint needs the CIDR blocks that may reach it (tcp/6443): "
                "the management cluster's egress address and your admin ranges "
                "(0.0.0.0/0 only if you write it)",
                where=ctx,
                field="api_allowed_cidrs",
            )
        object.__setattr__(
            self,
            "private_api_reachable_via",
            check_reachability(
                endpoint,
                self.private_api_reachable_via,
                where=ctx,
                field="private_api_reachable_via",
            ),
        )

    def public_endpoint(self) -> bool:
        """Whether the control-plane-endpoint subnet is public."""
        return self.api_endpoint is ApiEndpoint.PUBLIC

    def api_reachability(self) -> str:
        """``public endpoint, <cidrs>`` or the private statement."""
        if self.public_endpoint():
            return "public endpoint, " + ", ".join(self.api_allowed_cidrs)
        return f"private endpoint, reachable via {self.private_api_reachable_via}"

    def vcn_cidr(self) -> ipaddress.IPv4Network:
        """The VCN's ``cidr``."""
        return ipaddress.IPv4Network(self.cidr)

    def names(self) -> NetworkNames:
        """Subnets and NSGs are named after their roles, as in the template."""
        by_role = {role: role for role in ROLES}
        return NetworkNames(subnets=by_role, nsgs=by_role)

    def network_spec(self, services: str = "") -> dict[str, Any]:
        """The template's VCN, subnets and NSGs for these CIDR blocks.

        ``services`` is the region's ``all-<key>-services-in-oracle-services-network``: the
        destination CAPOCI writes into every ``SERVICE_CIDR_BLOCK`` rule (empty: left out, as
        in the template).
        """
        cpe, lb, worker, pod = (
            self.control_plane_endpoint_cidr,
            self.service_lb_cidr,
            self.worker_cidr,
            self.pod_cidr,
        )
        vcn_native = "(when using VCN-native pod networking)"
        api = "Kubernetes worker to Kubernetes API endpoint communication."
        pod_api = f"Pod to Kubernetes API endpoint communication {vcn_native}."
        subnets = [
            (CONTROL_PLANE_ENDPOINT, cpe, "public" if self.public_endpoint() else "private"),
            (SERVICE_LB, lb, "public" if self.public_service_lb else "private"),
            (WORKER, worker, "private"),
            (POD, pod, "private"),
        ]
        control_plane = {
            "egressRules": [
                _egress(
                    "Allow Kubernetes API endpoint to communicate with OKE.", "6", None, services
                ),
                _egress("Path Discovery.", "1", None, services, icmpOptions=_path_discovery()),
                _egress(
                    "Allow Kubernetes API endpoint to communicate with worker nodes.",
                    "6",
                    worker,
                    services,
                    tcpOptions=_tcp(10250),
                ),
                _egress("Path Discovery.", "1", worker, services, icmpOptions=_path_discovery()),
                _egress(
                    f"Allow Kubernetes API endpoint to communicate with pods {vcn_native}.",
                    "all",
                    pod,
                    services,
                ),
            ],
            "ingressRules": [
                _ingress(api, "6", worker, tcpOptions=_tcp(6443)),
                _ingress(api, "6", worker, tcpOptions=_tcp(12250)),
                _ingress("Path Discovery.", "1", worker, icmpOptions=_path_discovery()),
                _ingress(pod_api, "6", pod, tcpOptions=_tcp(6443)),
                _ingress(pod_api, "6", pod, tcpOptions=_tcp(12250)),
                *(
                    _ingress(
                        "External access to Kubernetes API endpoint.",
                        "6",
                        source,
                        tcpOptions=_tcp(6443),
                    )
                    for source in self.api_allowed_cidrs
                ),
            ],
            "name": CONTROL_PLANE_ENDPOINT,
            "role": CONTROL_PLANE_ENDPOINT,
        }
        workers = {
            "egressRules": [
                _egress("Allow worker nodes to communicate with OKE.", "6", None, services),
                _egress("Allow worker nodes to access pods.", "all", pod, services),
                _egress(
                    "Path Discovery.", "1", "0.0.0.0/0", services, icmpOptions=_path_discovery()
                ),
                _egress(api, "6", cpe, services, tcpOptions=_tcp(6443)),
                _egress(api, "6", cpe, services, tcpOptions=_tcp(12250)),
            ],
            "ingressRules": [
                _ingress(
                    "Allow Kubernetes API endpoint to communicate with worker nodes.",
                    "6",
                    cpe,
                    tcpOptions=_tcp(10250),
                ),
                _ingress("Path Discovery.", "1", "0.0.0.0/0", icmpOptions=_path_discovery()),
                _ingress(
                    "Load Balancer to Worker nodes node ports.",
                    "6",
                    lb,
                    tcpOptions=_tcp(30000, 32767),
                ),
            ],
            "name": WORKER,
            "role": WORKER,
        }
        load_balancers = {
            "egressRules": [
                _egress(
                    "Load Balancer to Worker nodes node ports.",
                    "6",
                    worker,
                    services,
                    tcpOptions=_tcp(30000, 32767),
                ),
            ],
            "ingressRules": [
                _ingress(
                    f"Accept {scheme} traffic on port {port}",
                    "6",
                    "0.0.0.0/0",
                    tcpOptions=_tcp(port),
                )
                for scheme, port in (("http", 80), ("https", 443))
            ],
            "name": SERVICE_LB,
            "role": SERVICE_LB,
        }
        pods = {
            "egressRules": [
                _egress(
                    "Allow worker nodes to communicate with OCI Services.", "6", None, services
                ),
                _egress("Path Discovery.", "1", None, services, icmpOptions=_path_discovery()),
                _egress("Allow pods to communicate with other pods.", "all", pod, services),
                _egress(pod_api, "6", cpe, services, tcpOptions=_tcp(6443)),
                _egress(pod_api, "6", cpe, services, tcpOptions=_tcp(12250)),
            ],
            "ingressRules": [
                _ingress("Allow worker nodes to access pods.", "all", worker),
                _ingress("Allow Kubernetes API endpoint to communicate with pods.", "all", cpe),
                _ingress("Allow pods to communicate with other pods.", "all", pod),
            ],
            "name": POD,
            "role": POD,
        }
        return {
            "vcn": {
                "cidr": self.cidr,
                "subnets": [
                    {"cidr": cidr, "name": role, "role": role, "type": kind}
                    for role, cidr, kind in subnets
                ],
                "networkSecurityGroup": {"list": [control_plane, workers, load_balancers, pods]},
            }
        }


@checked_arguments
@dataclass(frozen=True, kw_only=True)
class OkeSubnet:
    """An existing subnet, by OCID. ``name`` (default: the role) is how node pools
    refer to it; ``type`` ``public`` on the control-plane-endpoint subnet gives the API
    endpoint a public IP."""

    role: str
    id: str
    name: str | None = None
    type: str = "private"
    public: bool | None = None
    """``public=True`` is ``type="public"`` (the spelling generated code writes)."""

    def __post_init__(self) -> None:
        if self.public is not None:
            object.__setattr__(self, "type", "public" if self.public else "private")


@checked_arguments
@dataclass(frozen=True, kw_only=True)
class OkeNsg:
    """An existing network security group, by OCID; ``name`` defaults to the role."""

    role: str
    id: str
    name: str | None = None


@checked_arguments
@dataclass(frozen=True, kw_only=True)
class OkeExistingVcn(OkeNetwork):
    """A VCN, subnets and NSGs that already exist (made by the network team).

    CAPOCI uses them as they are (``skipNetworkManagement``) and creates nothing. The API
    endpoint is public when the control-plane-endpoint subnet's ``type`` is ``public``; who
    may reach it is up to the existing NSGs. With a private one, say how the management
    cluster reaches it: ``private_api_reachable_via`` (required).

    Example::

        OkeExistingVcn(
            id="ocid1.vcn.oc1.eu-frankfurt-1.aaaa...",
            subnets=[OkeSubnet(role="control-plane-endpoint", id="ocid1.subnet.oc1..."),
                     OkeSubnet(role="worker", id="ocid1.subnet.oc1..."),
                     OkeSubnet(role="pod", id="ocid1.subnet.oc1...")],
        )
    """

    id: str
    subnets: Sequence[OkeSubnet]
    network_security_groups: Sequence[OkeNsg] = ()
    private_api_reachable_via: str | None = None
    where: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", self.where or caller_location())
        ctx = f"{self.where} (OkeExistingVcn)"
        check_ocid(self.id, ["vcn"], where=ctx, field="id")
        subnet_names: set[str] = set()
        for i, subnet in enumerate(self.subnets):
            where = f"subnets[{i}]"
            self._check_role(subnet.role, ctx, where)
            check_ocid(subnet.id, ["subnet"], where=ctx, field=f"{where}.id")
            if subnet.type not in ("public", "private"):
                raise DefinitionError(
                    f"must be 'public' or 'private', got {subnet.type!r}",
                    where=ctx,
                    field=f"{where}.type",
                )
            name = check_dns_label(subnet.name or subnet.role, where=ctx, field=f"{where}.name")
            if name in subnet_names:
                raise DefinitionError(
                    f"duplicate subnet name {name!r}", where=ctx, field=f"{where}.name"
                )
            subnet_names.add(name)
        # The pod role is required with VCN-native pod networking only (the cluster checks).
        required = [r for r in REQUIRED_SUBNET_ROLES if r != POD]
        missing = [r for r in required if r not in {s.role for s in self.subnets}]
        if missing:
            raise DefinitionError(
                f"needs a subnet with role {', '.join(missing)}", where=ctx, field="subnets"
            )
        nsg_names: set[str] = set()
        for i, nsg in enumerate(self.network_security_groups):
            where = f"network_security_groups[{i}]"
            self._check_role(nsg.role, ctx, where)
            check_ocid(nsg.id, ["networksecuritygroup"], where=ctx, field=f"{where}.id")
            name = check_dns_label(nsg.name or nsg.role, where=ctx, field=f"{where}.name")
            if name in nsg_names:
                raise DefinitionError(
                    f"duplicate NSG name {name!r}", where=ctx, field=f"{where}.name"
                )
            nsg_names.add(name)
        object.__setattr__(self, "subnets", tuple(self.subnets))
        object.__setattr__(self, "network_security_groups", tuple(self.network_security_groups))
        endpoint = ApiEndpoint.PUBLIC if self.public_endpoint() else ApiEndpoint.PRIVATE
        object.__setattr__(
            self,
            "private_api_reachable_via",
            check_reachability(
                endpoint,
                self.private_api_reachable_via,
                where=ctx,
                field="private_api_reachable_via",
            ),
        )

    @staticmethod
    def _check_role(role: str, ctx: str, where: str) -> None:
        if role not in ROLES:
            raise DefinitionError(
                f"must be one of {', '.join(ROLES)}, got {role!r}", where=ctx, field=f"{where}.role"
            )

    def public_endpoint(self) -> bool:
        """Whether the control-plane-endpoint subnet is public."""
        return any(s.role == CONTROL_PLANE_ENDPOINT and s.type == "public" for s in self.subnets)

    def api_reachability(self) -> str:
        """``public endpoint (existing NSGs)`` or the private statement."""
        if self.public_endpoint():
            return "public endpoint, existing NSGs"
        return f"private endpoint, reachable via {self.private_api_reachable_via}"

    def names(self) -> NetworkNames:
        """The names given (or the roles)."""
        return NetworkNames(
            subnets={s.name or s.role: s.role for s in self.subnets},
            nsgs={n.name or n.role: n.role for n in self.network_security_groups},
        )

    def network_spec(self, services: str = "") -> dict[str, Any]:
        """The VCN, subnets and NSGs by id, not managed by CAPOCI (``services`` unused)."""
        vcn: dict[str, Any] = {
            "id": self.id,
            "subnets": [
                {"id": s.id, "name": s.name or s.role, "role": s.role, "type": s.type}
                for s in self.subnets
            ],
        }
        if self.network_security_groups:
            vcn["networkSecurityGroup"] = {
                "list": [
                    {"id": n.id, "name": n.name or n.role, "role": n.role}
                    for n in self.network_security_groups
                ]
            }
        return {"skipNetworkManagement": True, "vcn": vcn}
