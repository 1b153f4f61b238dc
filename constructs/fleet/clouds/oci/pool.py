"""An OKE node pool (``OkeNodePool``): its fields, its own checks, and its resolved state."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from fleet.clouds.base import IntPerEnv, NodeCounts
from fleet.clouds.oci.network import POD, WORKER
from fleet.clouds.oci.validators import check_availability_domains, check_surge
from fleet.core.errors import DefinitionError
from fleet.core.options import option, value_type
from fleet.core.validators import (
    check_choice,
    check_dns_label,
    check_ssh_public_key,
    positive_number,
)
from fleet.core.values import PerEnv, caller_location

MIN_BOOT_VOLUME_GB = 50
"""OKE refuses smaller boot volumes."""
MAX_NODE_POOL_NAME = 31
"""CAPOCI's OCIManagedMachinePool webhook refuses longer names (``ValidateCreate``)."""
OKE_MAX_PODS_PER_NODE = 31
"""CAPOCI compares a pool against OKE with ``maxPodsPerNode`` forced to 31
(``setMachinePoolSpecDefaults``): any other value looks changed on every reconcile."""

StrPerEnv = str | PerEnv[str]


class FaultDomain(enum.StrEnum):
    """The three fault domains of an OCI availability domain."""

    FD1 = "FAULT-DOMAIN-1"
    FD2 = "FAULT-DOMAIN-2"
    FD3 = "FAULT-DOMAIN-3"


FAULT_DOMAINS = tuple(FaultDomain)


@value_type
class OkeNodePool:
    """An OKE node pool: nodes of one shape, placed across availability domains.

    Fixed size: give ``node_count`` (may differ per environment, :class:`PerEnv`); CAPOCI
    keeps the OKE node pool at ``MachinePool.spec.replicas``. Autoscaled: give
    ``min_node_count`` and ``max_node_count`` instead; the MachinePool carries Cluster API's
    autoscaler min/max annotations and no ``replicas`` (a new pool starts at its minimum),
    and the cluster's autoscaler scales it up (docs/oke-clusters.md, "Node pool size").
    A pool whose minimum is 0 also carries the nodes' capacity, from its shape
    (:mod:`fleet.clouds.oci.shapes`).

    Upgrades: a pool's ``kubernetes_version`` and ``image_id`` change together (an image is
    built for one Kubernetes version), after the control plane's; OKE replaces the nodes
    ``max_surge`` at a time (``nodePoolCyclingDetails``, always rendered: without it a new
    version reaches only nodes created later).

    ``retired=True`` removes the pool from the render in every environment (see docs:
    retiring); its name stays taken. ``<cluster name>-<name>`` is at most 31 characters.

    Example::

        OkeNodePool(name="general", node_shape="VM.Standard.E4.Flex", ocpus=2,
                    memory_gb=32, node_count=per_env(test=1, prod=3))
    """

    rendered_kind: ClassVar[str] = "OCIManagedMachinePool"

    name: str = option(doc="The pool's name (``<cluster name>-<name>``: 31 characters at most).")
    node_shape: str = option(
        default="VM.Standard.E4.Flex",
        render="spec.nodeShape",
        nonempty=True,
        doc="The nodes' shape.",
    )
    ocpus: float | None = option(default=None, doc="OCPUs per node; required for *.Flex shapes.")
    memory_gb: float | None = option(
        default=None, doc="Memory per node (the shape's default for the OCPUs)."
    )
    node_count: IntPerEnv | None = option(
        default=None, doc="The number of nodes of a fixed-size pool."
    )
    min_node_count: IntPerEnv | None = option(
        default=None, doc="The least nodes of an autoscaled pool (with max_node_count)."
    )
    max_node_count: IntPerEnv | None = option(
        default=None, doc="The most nodes of an autoscaled pool (with min_node_count)."
    )
    availability_domains: Sequence[str] | None = option(
        default=None, doc="Where the nodes go (default: the cluster's)."
    )
    fault_domains: Sequence[FaultDomain | str] = option(
        default=FAULT_DOMAINS, doc="The fault domains (default: all three)."
    )
    subnet_name: str = option(default=WORKER, doc="The nodes' subnet, by name.")
    nsg_names: Sequence[str] = option(default=(WORKER,), doc="The nodes' NSGs, by name.")
    pod_subnet_names: Sequence[str] = option(default=(POD,), doc="The pods' subnets.")
    pod_nsg_names: Sequence[str] = option(default=(POD,), doc="The pods' NSGs.")
    max_pods_per_node: int | None = option(
        default=None,
        render=(
            "spec.nodePoolNodeConfig.nodePoolPodNetworkOptionDetails."
            "vcnIpNativePodNetworkOptions.maxPodsPerNode"
        ),
        doc="31 or left out (OKE's 31, the only value CAPOCI keeps in sync).",
    )
    boot_volume_size_gb: int = option(
        default=MIN_BOOT_VOLUME_GB,
        render="spec.nodeSourceViaImage.bootVolumeSizeInGBs",
        doc="The boot volume in GB (50 or more).",
    )
    image_id: StrPerEnv | None = option(default=None, doc="The nodes' image (the cluster's).")
    ssh_public_key: str | None = option(default=None, doc="SSH access (the cluster's).")
    kubernetes_version: StrPerEnv | None = option(
        default=None, doc="The nodes' Kubernetes version (the control plane's)."
    )
    labels: Mapping[str, str] = option(factory=dict, doc="Kubernetes node labels.")
    max_surge: int | str = option(default=1, doc="Nodes replaced at a time (or '25%').")
    max_unavailable: int | str = option(default=0, doc="Nodes down at a time (or '25%').")
    node_pool_id: StrPerEnv | None = option(
        default=None, render="spec.id", doc="The OCID of an existing OKE node pool to adopt."
    )
    retired: bool = option(default=False, doc="Removed from the render everywhere.")
    where: str = option(default="", init=False, compare=False, doc="Where it was declared.")

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", caller_location())
        ctx = self.context
        check_dns_label(self.name, where=ctx, field="name")
        ocpus = positive_number(self.ocpus, where=ctx, field="ocpus", unit="OCPUs")
        if ocpus is None and self.node_shape.endswith(".Flex"):
            raise DefinitionError(
                f"a flexible shape ({self.node_shape}) needs ocpus", where=ctx, field="ocpus"
            )
        positive_number(self.memory_gb, where=ctx, field="memory_gb", unit="GB")
        size = self.boot_volume_size_gb
        if size < MIN_BOOT_VOLUME_GB:
            raise DefinitionError(
                f"must be an integer of at least {MIN_BOOT_VOLUME_GB} (GB), got {size!r}",
                where=ctx,
                field="boot_volume_size_gb",
            )
        if self.max_pods_per_node is not None and self.max_pods_per_node != OKE_MAX_PODS_PER_NODE:
            raise DefinitionError(
                f"must be {OKE_MAX_PODS_PER_NODE} or left out, got {self.max_pods_per_node!r}: "
                "CAPOCI compares every pool with maxPodsPerNode 31 and would update a pool "
                "with another value on every reconcile",
                where=ctx,
                field="max_pods_per_node",
            )
        if self.autoscaled:
            for name, other in (
                ("min_node_count", "max_node_count"),
                ("max_node_count", "min_node_count"),
            ):
                if getattr(self, name) is None:
                    raise DefinitionError(
                        f"an autoscaled pool needs both bounds: give {name} with {other}",
                        where=ctx,
                        field=name,
                    )
            if self.node_count is not None:
                raise DefinitionError(
                    "give node_count (a fixed size) or min_node_count and max_node_count "
                    "(autoscaled), not both: the autoscaler owns the size of an autoscaled "
                    "pool, and a new one starts at its minimum (Cluster API's MachinePool "
                    "webhook)",
                    where=ctx,
                    field="node_count",
                )
        elif self.node_count is None:
            raise DefinitionError(
                "give node_count (a fixed size), or min_node_count and max_node_count (autoscaled)",
                where=ctx,
                field="node_count",
            )
        for name in ("max_surge", "max_unavailable"):
            check_surge(getattr(self, name), where=ctx, field=name)
        if self.max_surge in (0, "0", "0%") and self.max_unavailable in (0, "0", "0%"):
            raise DefinitionError(
                "max_surge and max_unavailable are both 0: OKE could replace no node",
                where=ctx,
                field="max_surge",
            )
        for name in ("fault_domains", "nsg_names", "pod_subnet_names", "pod_nsg_names"):
            value = getattr(self, name)
            if len(set(value)) != len(value):
                raise DefinitionError(f"lists a name twice: {list(value)}", where=ctx, field=name)
            object.__setattr__(self, name, tuple(value))
        if not self.fault_domains:
            raise DefinitionError(
                "needs at least one fault domain", where=ctx, field="fault_domains"
            )
        object.__setattr__(
            self,
            "fault_domains",
            tuple(
                check_choice(FaultDomain, fd, where=ctx, field="fault_domains")
                for fd in self.fault_domains
            ),
        )
        if self.availability_domains is not None:
            object.__setattr__(
                self,
                "availability_domains",
                check_availability_domains(self.availability_domains, ctx),
            )
        if self.ssh_public_key is not None:
            check_ssh_public_key(self.ssh_public_key, where=ctx, field="ssh_public_key")

    @property
    def autoscaled(self) -> bool:
        """Whether the pool has autoscaler bounds rather than a fixed size."""
        return self.min_node_count is not None or self.max_node_count is not None

    @property
    def context(self) -> str:
        """``file:line (node pool <name>)`` for messages."""
        return f"{self.where} (node pool {self.name})"

    @property
    def machine_size(self) -> str:
        """``VM.Standard.E4.Flex/2ocpu/32gb`` (the parts that are set)."""
        parts = [self.node_shape]
        if self.ocpus is not None:
            parts.append(f"{positive_number(self.ocpus, where='', field='', unit='')}ocpu")
        if self.memory_gb is not None:
            parts.append(f"{positive_number(self.memory_gb, where='', field='', unit='')}gb")
        return "/".join(parts)


@dataclass(frozen=True)
class ResolvedPool:
    """A node pool resolved for one environment."""

    spec: OkeNodePool
    counts: NodeCounts
    version: str
    image_id: str
    ssh_public_key: str | None
    availability_domains: tuple[str, ...]
    capacity: Mapping[str, str] | None = None
    """The capacity annotations of an autoscaled pool that may be empty (minimum 0)."""
