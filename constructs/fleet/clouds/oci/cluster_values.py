"""The values an OKE cluster declaration is made of besides its options: its types
(:class:`ClusterType`, :class:`CniType`), its derived CAPOCI identifier, and what it
resolves per environment (:class:`ResolvedOke`, :class:`TakenVersions`)."""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fleet.clouds.oci.pool import ResolvedPool

OCI_RESOURCE_IDENTIFIER_NAMESPACE = uuid.UUID("c4385321-d340-43b9-a6f2-1edb9e387165")
"""The UUIDv5 namespace of derived ``ociResourceIdentifier`` s. Never change it: every OKE
cluster's identifier (and so CAPOCI's lookup of its VCN, OKE cluster and node pools) is
derived from it."""


class ClusterType(enum.StrEnum):
    """OKE cluster types (``OCIManagedControlPlane.spec.clusterType``)."""

    BASIC = "BASIC_CLUSTER"
    ENHANCED = "ENHANCED_CLUSTER"


class CniType(enum.StrEnum):
    """OKE pod networking (CAPOCI v0.24.0 ``api/v1beta2`` ``VCNNativeCNI``, ``FlannelCNI``)."""

    VCN_NATIVE = "OCI_VCN_IP_NATIVE"
    FLANNEL = "FLANNEL_OVERLAY"


CLUSTER_TYPES = {"basic": ClusterType.BASIC, "enhanced": ClusterType.ENHANCED}
"""The older lower-case spellings, still accepted."""


def derived_resource_identifier(environment: str, cluster_name: str) -> str:
    """The ``ociResourceIdentifier`` of a new cluster: UUIDv5 of ``<env>/<name>``."""
    return str(uuid.uuid5(OCI_RESOURCE_IDENTIFIER_NAMESPACE, f"{environment}/{cluster_name}"))


@dataclass(frozen=True)
class TakenVersions:
    """What an upgrade rollout gives an OKE cluster in one environment instead of what it
    declares (:meth:`OciManagedCluster.take_versions`)."""

    control_plane: str
    """The control plane's Kubernetes version."""
    pools: Mapping[str, str]
    """Node pool name -> its version, for the pools that do not pin ``kubernetes_version``."""
    node_image_id: str | None = None
    """The image of the pools that do not pin ``image_id`` (None: the declared one)."""


@dataclass(frozen=True)
class ResolvedOke:
    """An OKE cluster's values resolved for one environment (what the render reads;
    :meth:`OciManagedCluster.resolved`)."""

    options: Mapping[str, Any]
    """The options rendered as they are (``compartment_id``, ``kubernetes_version``, ...),
    by keyword, resolved for the environment."""
    oci_resource_identifier: str
    pinned_identifier: bool
    """Whether the identifier was given (an existing cluster) rather than derived."""
    pools: tuple[ResolvedPool, ...]

    @property
    def compartment_id(self) -> str:
        """The compartment OCID."""
        return str(self.options["compartment_id"])

    @property
    def version(self) -> str:
        """The control plane's Kubernetes version."""
        return str(self.options["kubernetes_version"])
