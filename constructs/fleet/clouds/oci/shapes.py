"""OCI compute shapes, as the cluster autoscaler must know them to scale a node pool up from
zero: a pinned, sourced table, and the capacity annotations an OKE pool's ``MachinePool``
carries (``capacity.cluster-autoscaler.kubernetes.io/*``).

Why a table: an ``OCIManagedMachinePool`` has no ``status.capacity``, so the clusterapi
provider of the cluster autoscaler can only read a zero-sized pool's nodes from annotations
(kubernetes/autoscaler cluster-autoscaler-1.30.7 ``cloudprovider/clusterapi/
clusterapi_unstructured.go`` ``InstanceCapacity``: the annotations, else the infrastructure
object's ``status.capacity``; ``CanScaleFromZero``: cpu and memory both present). OCI
publishes shapes through its API only (``ListShapes``), so the fleet pins what it renders.

Sources, per row: the OCI documentation "Compute Shapes"
(https://docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm: "1 OCPU
on Arm A1 = 1 vCPU", "1 OCPU on Arm A2 = 2 vCPUs", two threads per core on x86) and the
Data Science service's "Supported Compute Shapes" table (OCPU and memory ranges, the fixed
``VM.Standard2.1``: 1 OCPU, 15 GB); the autoscaler's own OCI provider converts the same way
(kubernetes/autoscaler 55c37cd5 ``cloudprovider/oci/common/oci_shape.go`` ``ocpuToVCPU``:
A1 1:1, every other shape 1:2; ``GetNodePoolShape``: a flexible pool's
``nodeShapeConfig.memoryInGBs`` times 1024^3 bytes, i.e. GiB). No GPU shape is listed: none
could be sourced with its GPU count here, so a GPU pool cannot scale from zero (it can
autoscale from one node: the autoscaler then reads the node itself).

Max pods: every OKE pool with VCN-native pod networking runs at most 31 pods per node
(``maxPodsPerNode``: 31, the only value CAPOCI keeps,
:data:`fleet.clouds.oci.pool.OKE_MAX_PODS_PER_NODE`);
the autoscaler would assume 110 (``defaultMaxPods``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Architecture = Literal["amd64", "arm64"]

CPU = "capacity.cluster-autoscaler.kubernetes.io/cpu"
MEMORY = "capacity.cluster-autoscaler.kubernetes.io/memory"
MAX_PODS = "capacity.cluster-autoscaler.kubernetes.io/maxPods"
LABELS = "capacity.cluster-autoscaler.kubernetes.io/labels"
GPU_COUNT = "capacity.cluster-autoscaler.kubernetes.io/gpu-count"
GPU_TYPE = "capacity.cluster-autoscaler.kubernetes.io/gpu-type"
"""The capacity annotations (cluster-autoscaler-1.30.7 ``clusterapi_utils.go``: ``cpuKey``,
``memoryKey``, ``maxPodsKey``, ``labelsKey``, ``gpuCountKey``, ``gpuTypeKey``)."""

ARCH_LABEL = "kubernetes.io/arch"


@dataclass(frozen=True)
class Shape:
    """One OCI compute shape: its architecture, vCPUs per OCPU and, for a fixed shape, its
    OCPUs and memory (a flexible shape takes them from the pool's ``nodeShapeConfig``)."""

    name: str
    architecture: Architecture
    vcpus_per_ocpu: int
    flexible: bool
    ocpus: float | None = None
    memory_gb: float | None = None
    gpus: int = 0
    gpu_type: str = ""


SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        Shape("VM.Standard.E3.Flex", "amd64", 2, True),
        Shape("VM.Standard.E4.Flex", "amd64", 2, True),
        Shape("VM.Standard.E5.Flex", "amd64", 2, True),
        Shape("VM.Standard3.Flex", "amd64", 2, True),
        Shape("VM.Optimized3.Flex", "amd64", 2, True),
        Shape("VM.Standard.A1.Flex", "arm64", 1, True),
        Shape("VM.Standard.A2.Flex", "arm64", 2, True),
        Shape("VM.Standard2.1", "amd64", 2, False, ocpus=1, memory_gb=15),
    )
}
"""The shapes the fleet can size for the autoscaler (see the module's sources)."""


def _number(value: float) -> str:
    """``2.0`` -> ``2``, ``1.5`` -> ``1.5``: a Kubernetes quantity without a trailing ``.0``."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def capacity_annotations(
    shape_name: str,
    *,
    ocpus: float | None,
    memory_gb: float | None,
    max_pods: int,
    labels: dict[str, str],
) -> dict[str, str] | str:
    """The capacity annotations of a pool of ``shape_name`` nodes, or why there are none (a
    shape not in :data:`SHAPES`, a flexible shape without OCPUs or memory).

    cpu is the vCPUs (OCPUs times :attr:`Shape.vcpus_per_ocpu`), memory the node's memory in
    GiB (OCI's GB are GiB: the autoscaler's OCI provider multiplies by 1024^3), maxPods the
    OKE limit; labels are the pool's node labels and ``kubernetes.io/arch`` (the autoscaler
    otherwise assumes amd64: ``clusterapi_nodegroup.go`` ``buildGenericLabels``, annotation
    labels override it)."""
    shape = SHAPES.get(shape_name)
    if shape is None:
        known = ", ".join(sorted(SHAPES))
        return (
            f"the fleet has no sourced sizes for shape {shape_name} (known: {known}; "
            "fleet/clouds/oci/shapes.py)"
        )
    if shape.flexible:
        if ocpus is None or memory_gb is None:
            return (
                f"{shape_name} is flexible: give ocpus and memory_gb, the node's size OCI "
                "would otherwise pick"
            )
        cpu_count, memory = ocpus * shape.vcpus_per_ocpu, memory_gb
    else:
        assert shape.ocpus is not None and shape.memory_gb is not None
        cpu_count, memory = shape.ocpus * shape.vcpus_per_ocpu, shape.memory_gb
    out = {
        CPU: _number(cpu_count),
        MEMORY: f"{_number(memory)}Gi",
        MAX_PODS: str(max_pods),
        LABELS: ",".join(
            f"{k}={v}" for k, v in sorted({**labels, ARCH_LABEL: shape.architecture}.items())
        ),
    }
    if shape.gpus:
        out[GPU_COUNT] = str(shape.gpus)
        out[GPU_TYPE] = shape.gpu_type
    return out
