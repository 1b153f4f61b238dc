"""Small fleets for the bootstrap tests: a Magnum and an OKE cluster, an ArgoCd, and how
to read what they render."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fleet import (
    ArgoCd,
    ClusterTemplate,
    Fleet,
    MagnumCluster,
    OciClusterIdentity,
    OciManagedCluster,
    OkeNodePool,
    OkeVcn,
    OpenStackProject,
    SecretKeyRef,
)
from fleet.core.layout import SYNC_WAVE
from fleet.core.manifest import Manifest
from fleet.pipeline.render import check_unique, render_environment
from fleet.platform.component import PlatformComponent
from fleet.platform.kubeadm import KUBEADM_CONTROL_PLANE
from fleet.platform.plugins import PluginSet

CREDENTIALS = SecretKeyRef(name="argocd-credentials", namespace="crossplane-system", key="token")


def builtin_plugins() -> PluginSet:
    """The plug-ins of a fleet that declares a cluster of each built-in cloud and an ArgoCd
    (for checks run on hand-written objects, without a fleet)."""
    return PluginSet.of([MagnumCluster, OciManagedCluster, ArgoCd])


def tool_components() -> tuple[PlatformComponent, ...]:
    """Every platform component the tool ships: the built-in clouds', ArgoCD's, and the
    shared ones no built-in cloud requires (the kubeadm providers)."""
    found = PluginSet.of([MagnumCluster, OciManagedCluster, ArgoCd], (KUBEADM_CONTROL_PLANE,))
    return found.catalogue.components


def template() -> ClusterTemplate:
    return ClusterTemplate(
        name="tpl-boot",
        kubernetes_version="v1.25.3",
        base_labels={"kube_tag": "v1.25.3"},
        uuid="5d1e6a1b-2d4f-4a8c-9b7e-1f0d2c3b4a59",
    )


def magnum(fleet: Fleet, construct_id: str = "mag", **overrides: Any) -> MagnumCluster:
    project = OpenStackProject(fleet, f"{construct_id}-project", project_name="P", region="cern")
    args: dict[str, Any] = {
        "name": f"{construct_id}-{{env}}",
        "environments": ["dev"],
        "project": project,
        "template": template(),
        "flavor": "m2.xlarge",
        "keypair": "k",
        "node_count": 1,
    }
    args.update(overrides)
    return MagnumCluster(fleet, construct_id, **args)


def oke(
    fleet: Fleet,
    construct_id: str = "oke",
    cls: type[OciManagedCluster] = OciManagedCluster,
    **overrides: Any,
) -> OciManagedCluster:
    args: dict[str, Any] = {
        "name": f"{construct_id}-{{env}}",
        "environments": ["dev"],
        "compartment_id": "ocid1.compartment.oc1..aaaaexample",
        "region": "eu-frankfurt-1",
        "kubernetes_version": "v1.30.1",
        "availability_domains": ["BKrI:EU-FRANKFURT-1-AD-1"],
        "node_image_id": "ocid1.image.oc1.eu-frankfurt-1.aaaaexample",
        "node_pools": [OkeNodePool(name="general", ocpus=1, node_count=3)],
        "network": OkeVcn(api_allowed_cidrs=["198.51.100.17/32"]),
    }
    args.update(overrides)
    if "identity" not in args:
        args["identity"] = OciClusterIdentity(
            fleet, f"{construct_id}-identity", principal_secret="oci-user-principal"
        )
    return cls(fleet, construct_id, **args)


def argocd(fleet: Fleet, **overrides: Any) -> ArgoCd:
    args: dict[str, Any] = {
        "server_addr": "argocd-server.argocd.svc:443",
        "credentials": CREDENTIALS,
    }
    args.update(overrides)
    return ArgoCd(fleet, "argocd", **args)


def rendered(fleet: Fleet, environment: str = "dev") -> list[Manifest]:
    out = render_environment(fleet, environment)
    check_unique(out)
    return out


def find(manifests: Sequence[Manifest], kind: str, name: str) -> Manifest:
    found = [m for m in manifests if m.kind == kind and m.name == name]
    assert len(found) == 1, sorted((m.kind, m.name) for m in manifests)
    return found[0]


def names(manifests: Sequence[Manifest], kind: str) -> set[str]:
    return {m.name for m in manifests if m.kind == kind}


def wave(m: Manifest | dict[str, Any]) -> int:
    body = m.body if isinstance(m, Manifest) else m
    return int(body["metadata"].get("annotations", {}).get(SYNC_WAVE, "0"))
