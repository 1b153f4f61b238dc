"""``fleet diff`` rules of the Magnum plug-in for moves between OpenStack projects.

Magnum lists clusters per project: every query of a cluster by UUID or name is filtered by
the request's project unless an admin asks for all projects (openstack/magnum
stable/2025.1 ``magnum/db/sqlalchemy/api.py`` ``_add_tenant_filters``; ``ClusterNotFound``
is a 404). provider-openstack resolves a managed resource's ProviderConfig on every
reconcile (crossplane-contrib/provider-openstack v0.9.0 ``internal/clients/openstack.go``
``TerraformSetupBuilder``; crossplane/upjet v2.2.0 ``pkg/controller/external_tfpluginsdk.go``
``Connect``), and the Terraform Read of a cluster that is not found clears the ID
(terraform-provider-openstack v3.4.0 ``resource_openstack_containerinfra_cluster_v1.go``
``resourceContainerInfraClusterV1Read`` -> ``openstack/util.go`` ``CheckDeleted``), which
upjet takes for a resource to create (``Observe``: ``resourceExists := newState != nil &&
newState.ID != ""``). So pointing an existing ClusterV1 at credentials of another project
(or region, or cloud) creates a second cluster there and leaves the first one running,
unmanaged. Only what the ProviderConfigs declare (the ``fleet.openstack/*`` annotations an
:class:`~fleet.clouds.magnum.project.OpenStackProject` renders) can show two of them reach
the same project.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fleet.clouds.magnum.project import ANNOTATION_PREFIX
from fleet.clouds.magnum.template import PLACEHOLDER
from fleet.core.manifest import dig
from fleet.platform.changes import Body, Change, ChangeRule, Objects, Verdict

CONTAINERINFRA = {
    "containerinfra.openstack.crossplane.io": "openstack.crossplane.io",
    "containerinfra.openstack.m.crossplane.io": "openstack.m.crossplane.io",
}
"""The Magnum kinds' group -> the group of their ProviderConfigs."""
MANAGED_KINDS = ("ClusterV1", "NodegroupV1")
UPGRADE_GUIDE = 'docs/guide.md, "Upgrade a Heat-driver Magnum cluster (blue/green)"'
SOURCE = (
    "openstack/magnum stable/2025.1 magnum/db/sqlalchemy/api.py (_add_tenant_filters); "
    "terraform-provider-openstack v3.4.0 openstack/util.go (CheckDeleted); "
    "crossplane/upjet v2.2.0 pkg/controller/external_tfpluginsdk.go (Connect, Observe)"
)
CONSEQUENCE = (
    "Magnum lists clusters per project, so the provider's Read gets 404 there, clears the "
    "ID and creates a second cluster; the old one keeps running, unmanaged"
)
PROOF = (
    "if it is the same project, declare project_id, auth_url and region on both "
    "OpenStackProjects and they must agree"
)


def _group_of(body: Body) -> str:
    api_version = str(body.get("apiVersion", ""))
    return api_version.split("/", 1)[0]


def _config_ref(body: Body) -> tuple[str, str]:
    """(kind, name) of the ProviderConfig a managed resource names (``default`` if none)."""
    ref = dig(body, "spec", "providerConfigRef")
    ref = ref if isinstance(ref, Mapping) else {}
    default_kind = "ClusterProviderConfig" if ".m." in _group_of(body) else "ProviderConfig"
    return str(ref.get("kind") or default_kind), str(ref.get("name") or "default")


def _provider_config(side: Objects, managed: Body) -> Body | None:
    kind, name = _config_ref(managed)
    group = CONTAINERINFRA.get(_group_of(managed), "")
    namespace = ""
    if kind == "ProviderConfig" and ".m." in group:
        namespace = str(dig(managed, "metadata", "namespace") or "")
    return side.get(group, kind, name, namespace)


def _identity(config: Body | None, region: Any = None) -> dict[str, str | None]:
    """What a ProviderConfig declares about where its credentials lead (None: not said);
    ``region`` is the managed resource's own, which wins over the credentials'."""
    annotations = dig(config, "metadata", "annotations")
    annotations = annotations if isinstance(annotations, Mapping) else {}

    def said(key: str) -> str | None:
        value = annotations.get(ANNOTATION_PREFIX + key)
        # A placeholder (``<auth_url>``, kept from a tfvars file) declares nothing.
        return str(value) if value and not PLACEHOLDER.search(str(value)) else None

    return {
        "auth-url": (said("auth-url") or "").rstrip("/") or None,
        "region": str(region) if region else said("region"),
        "project-id": said("project-id"),
        "project-name": said("project-name"),
    }


def _unproven(old: Mapping[str, str | None], new: Mapping[str, str | None]) -> list[str]:
    """Why the two identities are not provably the same project ([] when they are)."""
    out: list[str] = []
    for key in ("auth-url", "region"):
        a, b = old[key], new[key]
        if a is None or b is None:
            out.append(f"{key} not declared on both sides")
        elif a != b:
            out.append(f"{key} {a!r} -> {b!r}")
    ids = old["project-id"], new["project-id"]
    names = old["project-name"], new["project-name"]
    if all(ids):
        if ids[0] != ids[1]:
            out.append(f"project-id {ids[0]!r} -> {ids[1]!r}")
    elif any(ids):
        out.append("project-id declared on one side only")
    elif not all(names):
        out.append("no project-id or project-name declared on both sides")
    elif names[0] != names[1]:
        out.append(f"project-name {names[0]!r} -> {names[1]!r}")
    return out


def _shown(identity: Mapping[str, str | None]) -> str:
    return ", ".join(f"{k} {v!r}" for k, v in identity.items() if v)


def judge_moved_resource(change: Change) -> Sequence[Verdict]:
    """A ClusterV1 or NodegroupV1 whose ProviderConfig changes: an error unless both
    ProviderConfigs declare the same project (auth URL, region, project id or name)."""
    before, after = _config_ref(change.old), _config_ref(change.new)
    if before == after:
        return ()
    old = _identity(
        _provider_config(change.base, change.old), dig(change.old, "spec", "forProvider", "region")
    )
    new = _identity(
        _provider_config(change.head, change.new), dig(change.new, "spec", "forProvider", "region")
    )
    moved = f'spec.providerConfigRef: "{before[1]}" -> "{after[1]}"'
    why = _unproven(old, new)
    if not why:
        return (
            (
                "note",
                f"{moved}: both ProviderConfigs declare the same project ({_shown(new)}); "
                "the provider reaches the same Magnum cluster with the new credentials",
            ),
        )
    what = "cluster" if change.new.get("kind") == "ClusterV1" else "node group"
    return (
        (
            "error",
            f"{moved} may move the {what} to another OpenStack project or cloud "
            f"({'; '.join(why)}): {CONSEQUENCE}. Instead, blue/green: declare a new cluster "
            f"in the new project, move the workloads, then retire this one ({UPGRADE_GUIDE}); "
            f"{PROOF}",
        ),
    )


def _users(change: Change) -> list[str]:
    """The live Magnum objects (in the base and the working tree) that use the changed
    ProviderConfig."""
    name = str(dig(change.new, "metadata", "name") or "")
    group = _group_of(change.new)
    out: list[str] = []
    for managed_group, config_group in CONTAINERINFRA.items():
        if config_group != group:
            continue
        for kind in MANAGED_KINDS:
            for body in change.head.of_kind(managed_group, kind):
                if _config_ref(body) != (change.new.get("kind"), name):
                    continue
                meta = body.get("metadata") or {}
                if change.base.get(
                    managed_group, kind, str(meta.get("name")), str(meta.get("namespace") or "")
                ):
                    out.append(f"{kind} {meta.get('name')}")
    return out


def judge_changed_config(change: Change) -> Sequence[Verdict]:
    """A ProviderConfig that live Magnum objects use, whose declared project changes, or
    whose credentials Secret changes without the same project declared on both sides."""
    old, new = _identity(change.old), _identity(change.new)
    changed = [
        f"{k} {old[k]!r} -> {new[k]!r}"
        for k in old
        if old[k] is not None and new[k] is not None and old[k] != new[k]
    ]
    secret_moved = dig(change.old, "spec", "credentials") != dig(change.new, "spec", "credentials")
    if not changed and not secret_moved:
        return ()
    users = _users(change)
    if not users:
        return ()
    used = ", ".join(users[:3]) + (f" and {len(users) - 3} more" if len(users) > 3 else "")
    if not changed and not _unproven(old, new):
        return (
            (
                "note",
                "spec.credentials: another Secret, for the same declared project "
                f"({_shown(new)}), on the ProviderConfig of {used}",
            ),
        )
    what = "; ".join(changed) if changed else "spec.credentials: another Secret"
    why = "" if changed else f" ({'; '.join(_unproven(old, new))})"
    return (
        (
            "error",
            f"{what}{why}, on the ProviderConfig of {used}: if its credentials now reach "
            "another project or cloud, Magnum does not find those there (it lists clusters "
            "per project): the provider's Read gets 404, clears the ID and creates a second "
            "one of each; the old ones keep running, unmanaged. Instead, keep this "
            "ProviderConfig for the existing clusters, declare a new OpenStackProject for the "
            f"new project and move the clusters blue/green ({UPGRADE_GUIDE}); {PROOF}",
        ),
    )


MAGNUM_CHANGE_RULES = (
    ChangeRule(
        groups=tuple(CONTAINERINFRA),
        kinds=MANAGED_KINDS,
        paths=(("spec", "providerConfigRef"),),
        judge=judge_moved_resource,
        source=SOURCE,
    ),
    ChangeRule(
        groups=tuple(CONTAINERINFRA.values()),
        kinds=("ProviderConfig", "ClusterProviderConfig"),
        paths=(("metadata", "annotations"), ("spec", "credentials")),
        judge=judge_changed_config,
        source=SOURCE,
    ),
)
"""What ``fleet diff`` judges when Magnum objects or their ProviderConfigs change."""
