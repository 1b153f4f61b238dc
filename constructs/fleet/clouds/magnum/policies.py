"""Crossplane's deletion and management policies of a Magnum cluster's objects: the
choices, their checks, and the default list for objects with create-only fields."""

from __future__ import annotations

import enum
from collections.abc import Sequence

from fleet.clouds.base import NodeCounts
from fleet.clouds.magnum.pool import NodeGroup, group_create_only
from fleet.core.errors import DefinitionError


class DeletionPolicy(enum.StrEnum):
    """What Crossplane does to the Magnum cluster when its object is deleted."""

    ORPHAN = "Orphan"
    DELETE = "Delete"


class ManagementPolicy(enum.StrEnum):
    """What Crossplane may do to the Magnum cluster (``spec.managementPolicies``)."""

    ALL = "*"
    CREATE = "Create"
    UPDATE = "Update"
    DELETE = "Delete"
    OBSERVE = "Observe"
    LATE_INITIALIZE = "LateInitialize"


DELETION_POLICIES = tuple(p.value for p in DeletionPolicy)
MANAGEMENT_POLICIES = tuple(p.value for p in ManagementPolicy)


def deletion_policy_for(
    given: DeletionPolicy | str | None, protected: bool, *, where: str
) -> DeletionPolicy:
    """The declared deletion policy, else Orphan while ``protected`` (deletion protection
    on), else Delete; the error for one Crossplane does not know."""
    chosen_policy = given or (DeletionPolicy.ORPHAN if protected else DeletionPolicy.DELETE)
    if chosen_policy not in DELETION_POLICIES:
        raise DefinitionError(
            f"must be one of {', '.join(DELETION_POLICIES)}, got {given!r}",
            where=where,
            field="deletion_policy",
        )
    return DeletionPolicy(chosen_policy)


def management_policies_for(
    given: Sequence[ManagementPolicy | str] | None,
    deletion_policy: DeletionPolicy,
    *,
    where: str,
) -> list[ManagementPolicy] | None:
    """The declared management policies (None: Crossplane's default, all); the error for
    an empty list, an unknown policy, or a list with Delete on an orphaned cluster."""
    if given is not None:
        bad = [p for p in given if p not in MANAGEMENT_POLICIES]
        if bad or not given:
            raise DefinitionError(
                f"must be a non-empty list of {', '.join(MANAGEMENT_POLICIES)}, got "
                f"{list(given)!r}",
                where=where,
                field="management_policies",
            )
    policies = [ManagementPolicy(p) for p in given] if given else None
    if (
        deletion_policy is DeletionPolicy.ORPHAN
        and policies
        and ManagementPolicy.DELETE in policies
        and policies != [ManagementPolicy.ALL]
    ):
        raise DefinitionError(
            "a list with Delete makes Crossplane delete the Magnum cluster even with "
            "deletion_policy Orphan (crossplane-runtime: a custom policy list overrides "
            "the deletion policy); leave Delete out, or set deletion_protection=False",
            where=where,
            field="management_policies",
        )
    return policies


def check_late_init(
    declared: Sequence[ManagementPolicy] | None,
    create_only: bool,
    groups: Sequence[tuple[NodeGroup, NodeCounts]],
    *,
    where: str,
    rewrites: Sequence[str] = (),
) -> None:
    """Declared management policies that late-initialize while an object has
    create-only fields: upjet would copy them into ``spec.forProvider`` and enforce
    them (``Observe``, ``policyHasLateInit``). ``rewrites``: the node group arguments the
    cluster's driver rewrites on an upgrade (create-only too)."""
    policies = declared or []
    if not {ManagementPolicy.ALL, ManagementPolicy.LATE_INITIALIZE} & set(policies):
        return
    if create_only or any(group_create_only(g, c, rewrites) for g, c in groups):
        raise DefinitionError(
            "late initialization (LateInitialize, or *) would copy the create-only "
            "fields (create_only, autoscaled node counts, the labels of a cluster of a "
            "Cluster API driver) into spec.forProvider and enforce them (upjet Observe); "
            "leave it out",
            where=where,
            field="management_policies",
        )


def policies_for(
    declared: list[ManagementPolicy] | None, deletion_policy: DeletionPolicy, create_only: bool
) -> list[ManagementPolicy] | None:
    """The declared policies; for an object with create-only fields (``create_only``,
    an autoscaled pool's ``nodeCount``) by default every one but LateInitialize (and
    Delete where the cluster is orphaned).

    With LateInitialize the provider copies the observed values into the empty
    ``forProvider`` fields after the first observation (upjet v2.2.0 ``Observe``,
    ``policyHasLateInit``), and then enforces them: it would resize the pool back
    whenever the autoscaler or a person moves it. crossplane-runtime v2.1.0 accepts
    ``[Observe, Create, Update]`` and ``[Observe, Create, Update, Delete]``
    (``pkg/reconciler/managed/policies.go``); a list with Delete would override Orphan.
    """
    if declared or not create_only:
        return declared
    policies = [ManagementPolicy.OBSERVE, ManagementPolicy.CREATE, ManagementPolicy.UPDATE]
    if deletion_policy is DeletionPolicy.DELETE:
        policies.append(ManagementPolicy.DELETE)
    return policies
