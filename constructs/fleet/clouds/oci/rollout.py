"""OKE's part of an upgrade target (:class:`OkeTarget`): the Kubernetes version and node image
per OCI region, reached in two promotion steps: the control plane first, then, once it runs
the new version, the node pools (Kubernetes' upgrade order: a kubelet is never newer than the
API server; kubernetes/website ``content/en/releases/version-skew-policy.md``). The control
plane moves one minor version at a time (the same policy; CAPOCI checks nothing:
oracle/cluster-api-provider-oci v0.24.0 ``cloud/scope/managed_control_plane.go``). A pool
that pins its own ``kubernetes_version`` or ``image_id`` stays as declared: raise it in the
declaration (an image is built for one Kubernetes version)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from fleet.clouds.base import FleetCluster
from fleet.clouds.oci.cluster import OciManagedCluster
from fleet.clouds.oci.cluster_values import TakenVersions
from fleet.clouds.oci.validators import check_ocid
from fleet.clouds.upgrades import CloudTarget, PathMode, PathStep, UpgradePath
from fleet.core.errors import DefinitionError
from fleet.core.options import option, value_type
from fleet.core.validators import check_kubernetes_version
from fleet.core.values import caller_location

MAX_KUBELET_LAG = 3
"""Minor versions a kubelet may lag behind the API server (1.25 and later)."""


@value_type
class OkeRelease:
    """What OKE clusters of one region upgrade to: the Kubernetes version and the node image
    built for it (the image of the pools that do not pin their own)."""

    argument_noun: ClassVar[str] = "OKE release"

    kubernetes_version: str = option(doc="The Kubernetes version (v1.31.1).")
    node_image_id: str = option(doc="The OKE node image OCID for that version in the region.")
    where: str = option(default="", init=False, compare=False, doc="Where it was declared.")

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", caller_location())
        ctx = f"{self.where} (OKE release {self.kubernetes_version})"
        check_kubernetes_version(self.kubernetes_version, where=ctx, field="kubernetes_version")
        check_ocid(self.node_image_id, ["image"], where=ctx, field="node_image_id")


@dataclass(frozen=True)
class _Moves:
    """What the target changes on one cluster in one environment."""

    control_plane: str
    target: str
    moving: Mapping[str, tuple[str, str, str]]
    """pool -> (its version, its image, its OCIManagedMachinePool name), for pools that
    follow the target."""
    staying: Mapping[str, str]
    """pool -> its version, for pools that pin their own version or image."""
    pinned_why: Mapping[str, str]


@value_type
class OkeTarget(CloudTarget):
    """The OKE releases a target moves clusters to, per OCI region::

    OkeTarget(releases={"eu-frankfurt-1": OkeRelease(
        kubernetes_version="v1.31.1", node_image_id="ocid1.image.oc1.eu-frankfurt-1...")})
    """

    cloud_noun: ClassVar[str] = "OKE"
    argument_noun: ClassVar[str] = "OKE target"

    releases: Mapping[str, OkeRelease] = option(doc="OCI region -> its release.")

    def check(self, *, where: str) -> None:
        """At least one region."""
        if not self.releases:
            raise DefinitionError("give a release per OCI region", where=where, field="releases")

    def handles(self, cluster: FleetCluster) -> bool:
        """OKE clusters."""
        return isinstance(cluster, OciManagedCluster)

    def _moves(self, cluster: OciManagedCluster, environment: str) -> _Moves | None:
        release = self.releases.get(cluster.region(environment))
        if release is None:
            return None
        resolved = cluster.resolved(environment)
        moving: dict[str, tuple[str, str, str]] = {}
        staying: dict[str, str] = {}
        why: dict[str, str] = {}
        name = cluster.object_name(environment)
        for pool in resolved.pools:
            pins = [f for f in ("kubernetes_version", "image_id") if getattr(pool.spec, f)]
            if pins:
                staying[pool.spec.name] = pool.version
                why[pool.spec.name] = " and ".join(pins)
            else:
                moving[pool.spec.name] = (pool.version, pool.image_id, f"{name}-{pool.spec.name}")
        return _Moves(resolved.version, release.kubernetes_version, moving, staying, why)

    def _cluster(self, cluster: FleetCluster) -> OciManagedCluster:
        assert isinstance(cluster, OciManagedCluster)  # handles() chose it
        return cluster

    def path(self, cluster: FleetCluster, environment: str) -> UpgradePath:
        """The control plane (step 1), then the pools that follow the target (step 2); a
        skipped minor, or a pinned pool left too far behind, is refused."""
        oke = self._cluster(cluster)
        moves = self._moves(oke, environment)
        region = oke.region(environment)
        if moves is None:
            return UpgradePath(
                PathMode.UNTARGETED,
                oke.kubernetes_version(environment),
                "",
                f"the target has no OKE release for region {region!r}",
            )
        release = self.releases[region]
        now = check_kubernetes_version(moves.control_plane, where="", field="")
        then = check_kubernetes_version(moves.target, where="", field="")
        behind = {p: v for p, (v, _, _) in moves.moving.items() if v != moves.target}
        if then < now or (then == now and not behind):
            return UpgradePath(
                PathMode.CURRENT,
                moves.control_plane,
                moves.target,
                "it runs the target's version or a newer one (a rollout never downgrades)",
            )
        if then[0] != now[0] or then[1] > now[1] + 1:
            return UpgradePath(
                PathMode.REFUSED,
                moves.control_plane,
                moves.target,
                f"{moves.control_plane} -> {moves.target} skips a minor version: the API "
                "server upgrades one minor at a time (Kubernetes version skew policy); add a "
                "target for each minor version in between",
            )
        for pool, version in moves.staying.items():
            lag = then[1] - check_kubernetes_version(version, where="", field="")[1]
            if lag > MAX_KUBELET_LAG:
                return UpgradePath(
                    PathMode.REFUSED,
                    moves.control_plane,
                    moves.target,
                    f"pool {pool} pins {moves.pinned_why[pool]} at {version}: its kubelets "
                    f"would lag {lag} minor versions behind {moves.target} (at most "
                    f"{MAX_KUBELET_LAG}); raise the pool first",
                )
        steps: list[PathStep] = []
        if then > now:
            steps.append(
                PathStep(
                    "control plane",
                    (
                        f"OCIManagedControlPlane {oke.object_name(environment)}: spec.version "
                        f"{moves.control_plane} -> {moves.target} (OKE upgrades the control "
                        "plane in place; the pools stay)",
                    ),
                )
            )
        changes = [
            f"OCIManagedMachinePool {object_name}: spec.version {version} -> {moves.target}"
            + (
                f", image {image} -> {release.node_image_id}"
                if image != release.node_image_id
                else ""
            )
            + " (OKE cycles the nodes, max_surge at a time)"
            for pool, (version, image, object_name) in moves.moving.items()
        ]
        changes += [
            f"pool {pool} pins {moves.pinned_why[pool]}: stays at {version}; raise "
            "kubernetes_version and image_id together in the declaration"
            for pool, version in moves.staying.items()
        ]
        if moves.moving:
            steps.append(PathStep("node pools", tuple(changes)))
        return UpgradePath(
            PathMode.IN_PLACE,
            moves.control_plane,
            moves.target,
            "OKE upgrades the control plane in place, then the node pools by cycling their nodes",
            tuple(steps),
        )

    def apply(self, cluster: FleetCluster, environment: str, steps: int) -> None:
        """Step 1: the control plane's version (the pools pinned where they are); step 2:
        the pools that follow the target, with the release's image."""
        oke = self._cluster(cluster)
        moves = self._moves(oke, environment)
        if moves is None:
            return
        release = self.releases[oke.region(environment)]
        # A pool that pins its image but not its version would follow the control plane:
        # it keeps the version it runs instead (one pinning its version keeps it anyway).
        stay = {
            p: v
            for p, v in moves.staying.items()
            if "kubernetes_version" not in moves.pinned_why[p]
        }
        upgrades_control_plane = moves.target != moves.control_plane
        if upgrades_control_plane and steps == 1:
            before = oke.taken_versions(environment)
            taken = TakenVersions(
                control_plane=moves.target,
                pools={**stay, **{p: v for p, (v, _, _) in moves.moving.items()}},
                # the image an earlier target gave the pools stays with them
                node_image_id=before.node_image_id if before else None,
            )
        else:
            taken = TakenVersions(
                control_plane=moves.target,
                pools={**stay, **dict.fromkeys(moves.moving, moves.target)},
                node_image_id=release.node_image_id,
            )
        oke.take_versions(environment, taken)
