"""Reference rules: which fields of an object name which other objects, as data.

The checks (:mod:`fleet.checks.references`) apply every rule in force: the platform's own,
each platform component's (for the kinds it owns: the Cluster API core's object references,
say) and each cloud plug-in's. The same rules tell ``fleet diff`` which shared objects
(ProviderConfigs, identities) are still used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from fleet.core.manifest import Manifest


@dataclass(frozen=True, slots=True)
class FieldRef:
    """A string field of ``kind`` in ``group`` that names an object of ``target_kind``.

    The target matches when any of ``match`` (paths into the target, ``metadata.name``
    included) equals the value. ``same_namespace`` looks only in the source's namespace.
    """

    group: str
    kind: str
    paths: tuple[tuple[str, ...], ...]
    target_group: str
    target_kind: str
    match: tuple[tuple[str, ...], ...]
    same_namespace: bool


@dataclass(frozen=True, slots=True)
class SecretProducer:
    """Objects of ``group``/``kind`` produce a secret: ``secret(manifest) -> (ns, name, keys)``.

    ``keys`` is None when any key may be present.
    """

    group: str
    kind: str
    secret: Callable[[Manifest], tuple[str, str, frozenset[str] | None] | None]


@dataclass(frozen=True, kw_only=True)
class ReferenceRules:
    """The reference rules one cloud, component or the platform adds (merged by the checks)."""

    provider_config_families: Mapping[str, str] = field(default_factory=dict)
    """Managed-resource group suffix -> the group of its ProviderConfig."""
    field_refs: tuple[FieldRef, ...] = ()
    object_refs: Mapping[tuple[str, str], tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    """(group, kind) -> paths of object references ``{apiVersion|apiGroup, kind, name}``."""
    identity_kind: tuple[str, str] | None = None
    """(group, kind) of a shared credentials object clusters name in ``spec.identityRef``."""
    identity_ref_kinds: frozenset[tuple[str, str]] = frozenset()
    """(group, kind) of the objects whose ``spec.identityRef`` names ``identity_kind``."""
    identity_consequence: str = "the clusters that use it could no longer authenticate"
    """What deleting the identity while clusters use it does (for ``fleet diff``)."""
    secret_producers: tuple[SecretProducer, ...] = ()
    label_named_kinds: frozenset[tuple[str, str]] = frozenset()
    """(group, kind) whose metadata.name must be a DNS-1123 label."""
