"""What Magnum clusters (Crossplane provider-openstack) contribute to the platform.

Components: provider-openstack v0.9.0 (the release the pinned ``provider-openstack/`` CRDs
come from), which requires Crossplane; installed only where an environment holds a Magnum
cluster. ArgoCD has built-in health for Crossplane managed resources (argo-cd
``resource_customizations/_.crossplane.io/_/health.lua``, since v3.1), so no Lua. Reference
rules: a managed resource's ProviderConfig, NodegroupV1 ``clusterId`` -> ClusterV1, and the
connection secret a ClusterV1 writes. ``fleet diff``: terraform-provider-openstack's ForceNew
arguments of the Magnum resources (``data/openstack-force-new.json``, with provenance), and
what a change of ``clusterTemplateId`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fleet.clouds.base import CloudPlugin
from fleet.clouds.magnum.template import is_uuid
from fleet.core.manifest import Manifest
from fleet.platform.component import PlatformComponent
from fleet.platform.crossplane import CROSSPLANE, XPKG_CONTRIB, CrossplaneProvider
from fleet.platform.references import FieldRef, ReferenceRules, SecretProducer
from fleet.platform.upjet import ForceNewRules, Level

EXTERNAL_NAME = "crossplane.io/external-name"
KUBECONFIG_KEY = "attribute.kubeconfig.raw_config"
CONTAINERINFRA_GROUPS = (
    "containerinfra.openstack.crossplane.io",
    "containerinfra.openstack.m.crossplane.io",
)
MAGNUM_KINDS = ("ClusterV1", "NodegroupV1", "ClustertemplateV1")


def _connection_secret(m: Manifest) -> tuple[str, str, frozenset[str] | None] | None:
    ref: Any = (m.body.get("spec") or {}).get("writeConnectionSecretToRef")
    if not isinstance(ref, dict) or not ref.get("name"):
        return None
    return (str(ref.get("namespace") or m.namespace), str(ref["name"]), frozenset({KUBECONFIG_KEY}))


PROVIDER_OPENSTACK = PlatformComponent(
    name="provider-openstack",
    version="v0.9.0",
    install=CrossplaneProvider(
        name="provider-openstack", package=f"{XPKG_CONTRIB}/provider-openstack"
    ),
    requires=(CROSSPLANE,),
    owns=frozenset(
        {
            *((group, kind) for group in CONTAINERINFRA_GROUPS for kind in MAGNUM_KINDS),
            ("openstack.crossplane.io", "ProviderConfig"),
            ("openstack.m.crossplane.io", "ProviderConfig"),
            ("openstack.m.crossplane.io", "ClusterProviderConfig"),
        }
    ),
)
"""Crossplane's provider-openstack (a ``Provider`` in ``providers/``)."""

FORCE_NEW_DATA = Path(__file__).parent / "data" / "openstack-force-new.json"
"""terraform-provider-openstack's ForceNew arguments of the Magnum resources, with provenance."""

UPGRADE_GUIDE = 'docs/guide.md, "Upgrade Kubernetes on a Magnum cluster"'


def _template_change(old: Any, new: Any) -> tuple[Level, str]:
    """``clusterTemplateId``: between two UUIDs an in-place upgrade, from a name to the
    template's UUID no change at all (Magnum stores the UUID)."""
    if is_uuid(new) and not is_uuid(old):
        return (
            "note",
            "the template's UUID replaces its name; Magnum stores the UUID already, so the "
            "provider sees no change (no upgrade)",
        )
    return (
        "warning",
        "an in-place upgrade (the provider calls Magnum's upgrade action); Magnum 18.0.0 and "
        "later refuse it for clusters of the Heat driver, and labels (kube_tag) cannot change "
        f"with it; the supported path is blue/green ({UPGRADE_GUIDE})",
    )


MAGNUM_FORCE_NEW = ForceNewRules(
    data=FORCE_NEW_DATA,
    cloud="Magnum",
    default_instead=(
        "instead, blue/green: declare a new cluster with a new name and the new values, move "
        f"the workloads, then retire this one ({UPGRADE_GUIDE})"
    ),
    instead={
        "NodegroupV1": (
            "instead, declare a new node group with a new name and the new values, then "
            "retire this one (retired=True on its NodeGroup)"
        ),
    },
    field_rules={("ClusterV1", "clusterTemplateId"): _template_change},
)
"""What ``fleet diff`` refuses on provider-openstack's Magnum objects."""


MAGNUM_PLUGIN = CloudPlugin(
    components=(PROVIDER_OPENSTACK,),
    protected_kinds=(),
    references=ReferenceRules(
        provider_config_families={
            ".openstack.crossplane.io": "openstack.crossplane.io",
            ".openstack.m.crossplane.io": "openstack.m.crossplane.io",
        },
        field_refs=tuple(
            FieldRef(
                group,
                "NodegroupV1",
                (("spec", "forProvider", "clusterId"), ("spec", "initProvider", "clusterId")),
                group,
                "ClusterV1",
                (
                    ("spec", "forProvider", "name"),
                    ("spec", "initProvider", "name"),
                    ("metadata", "annotations", EXTERNAL_NAME),
                ),
                same_namespace=".m." in group,
            )
            for group in CONTAINERINFRA_GROUPS
        ),
        secret_producers=tuple(
            SecretProducer(group, "ClusterV1", _connection_secret)
            for group in CONTAINERINFRA_GROUPS
        ),
    ),
    force_new=MAGNUM_FORCE_NEW,
)
"""The Magnum plug-in (``MagnumCluster.plugin``)."""
