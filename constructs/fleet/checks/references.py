"""Reference checks inside one environment: every name an object points at must exist there.

The rules are data, not code per construct: the platform's own (provider-argocd, External
Secrets, core) below, plus what each cloud plug-in declares
(:class:`fleet.platform.references.ReferenceRules` on each platform component and on the
cluster class's ``plugin``):

* provider-config families: a Crossplane managed resource's ``spec.providerConfigRef``
  must name a ProviderConfig of its provider family (``*.openstack.crossplane.io`` ->
  ``openstack.crossplane.io``). A missing ref means ``default``, as the API server defaults it.
* field references: a field that names another object, matched by the target's metadata.name
  or by other fields (NodegroupV1 ``clusterId`` -> ClusterV1 ``spec.forProvider.name`` or
  its ``crossplane.io/external-name``), and the Cluster API object references.
* secret producers / ``SECRET_REFS``: a secret reference (provider-argocd Cluster
  ``kubeconfigSecretRef``) must point at a secret some object in the environment produces
  (ClusterV1 connection secret, Cluster API ``<cluster>-kubeconfig``, ExternalSecret target).
* Names: DNS-1123 subdomain (at most 253 characters) for every object, DNS-1123 label (at
  most 63) for the label-named kinds and for ``metadata.namespace``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from fleet.checks.problem import Problem
from fleet.clouds.base import cloud_plugins, guard_plugins
from fleet.core.manifest import Identity, Manifest, format_path
from fleet.platform.plugins import PluginSet
from fleet.platform.references import FieldRef, ReferenceRules, SecretProducer

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

PROVIDER_CONFIG_KINDS: tuple[str, ...] = ("ProviderConfig", "ClusterProviderConfig")
"""Kinds a ``spec.providerConfigRef`` can name."""


def _get(body: Any, path: Sequence[str]) -> Any:
    for step in path:
        if not isinstance(body, dict):
            return None
        body = body.get(step)
    return body


def _external_secret_target(m: Manifest) -> tuple[str, str, frozenset[str] | None]:
    spec = m.body.get("spec") or {}
    name = _get(spec, ("target", "name")) or m.name
    data = spec.get("data") or []
    keys = None if spec.get("dataFrom") else frozenset(str(d.get("secretKey")) for d in data)
    return (m.namespace, str(name), keys)


SERVICE_ACCOUNT_TOKEN_KEYS = frozenset({"ca.crt", "namespace", "token"})
"""What Kubernetes' token controller writes into a ``kubernetes.io/service-account-token``
Secret (kubernetes/kubernetes ``pkg/controller/serviceaccount/tokens_controller.go``)."""


def _secret_object(m: Manifest) -> tuple[str, str, frozenset[str] | None]:
    keys = {*(m.body.get("data") or {}), *(m.body.get("stringData") or {})}
    if m.body.get("type") == "kubernetes.io/service-account-token":
        keys |= SERVICE_ACCOUNT_TOKEN_KEYS
    return (m.namespace, m.name, frozenset(keys))


PLATFORM_RULES = ReferenceRules(
    provider_config_families={
        ".argocd.crossplane.io": "argocd.crossplane.io",
        ".m.argocd.crossplane.io": "m.argocd.crossplane.io",
    },
    secret_producers=(
        SecretProducer("external-secrets.io", "ExternalSecret", _external_secret_target),
        SecretProducer("core", "Secret", _secret_object),
    ),
    label_named_kinds=frozenset({("core", "Namespace"), ("core", "Service")}),
)
"""The rules of the platform every environment runs (not of a cloud)."""

SECRET_REFS: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = {
    **{
        (group, "Cluster"): (("spec", "forProvider", "config", "kubeconfigSecretRef"),)
        for group in ("cluster.argocd.crossplane.io", "cluster.m.argocd.crossplane.io")
    },
    # A Kubernetes store's kubeconfig (external-secrets helm-chart-2.9.0
    # runtime/esutils/k8s_rest_config.go: authRef).
    ("external-secrets.io", "SecretStore"): (("spec", "provider", "kubernetes", "authRef"),),
}
"""Secret references ``{name, namespace?, key}`` that must point at a produced secret."""


@dataclass(frozen=True)
class Tables:
    """Every reference rule in force: the platform's and each cloud plug-in's, merged."""

    provider_config_families: dict[str, str]
    """Managed-resource group suffix -> the group of its ProviderConfig (longest wins)."""
    field_refs: tuple[FieldRef, ...]
    object_refs: dict[tuple[str, str], tuple[tuple[str, ...], ...]]
    """Object references (``{apiVersion|apiGroup, kind, name, namespace?}``) that resolve."""
    identity_refs: dict[tuple[str, str], tuple[str, str]]
    """(group, kind) of a cluster object -> (group, kind) its ``spec.identityRef`` names."""
    identity_kinds: frozenset[tuple[str, str]]
    identity_consequences: dict[str, str]
    """Identity kind -> what deleting it while clusters use it does."""
    secret_producers: dict[tuple[str, str], SecretProducer]
    label_named_kinds: frozenset[tuple[str, str]]
    """(group, kind) whose metadata.name must be a DNS-1123 label (at most 63 characters)."""


def _build(rules: Sequence[ReferenceRules]) -> Tables:
    families: dict[str, str] = {}
    field_refs: list[FieldRef] = []
    object_refs: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = {}
    identity_refs: dict[tuple[str, str], tuple[str, str]] = {}
    producers: dict[tuple[str, str], SecretProducer] = {}
    label_named: set[tuple[str, str]] = set()
    consequences: dict[str, str] = {}
    for rule in rules:
        families.update(rule.provider_config_families)
        field_refs.extend(rule.field_refs)
        object_refs.update(rule.object_refs)
        if rule.identity_kind is not None:
            consequences[rule.identity_kind[1]] = rule.identity_consequence
            for kind in rule.identity_ref_kinds:
                identity_refs[kind] = rule.identity_kind
        for producer in rule.secret_producers:
            producers[(producer.group, producer.kind)] = producer
        label_named.update(rule.label_named_kinds)
    return Tables(
        families,
        tuple(field_refs),
        object_refs,
        identity_refs,
        frozenset(identity_refs.values()),
        consequences,
        producers,
        frozenset(label_named),
    )


def _tables_of(plugins: PluginSet) -> Tables:
    return _build(
        (
            PLATFORM_RULES,
            *(c.references for c in plugins.catalogue.components),
            *(plugin.references for _, plugin in cloud_plugins(plugins)),
        )
    )


def tables(plugins: PluginSet | None = None) -> Tables:
    """The rules in force for a fleet's ``plugins``: :data:`PLATFORM_RULES`, every platform
    component's (once each) and every cloud plug-in's; made once per fleet
    (:meth:`~fleet.platform.plugins.PluginSet.memo`). ``None``: those of the built-in
    clouds (:func:`~fleet.clouds.base.guard_plugins` of no fleet)."""
    return (plugins or guard_plugins()).memo(_tables_of)


class _Environment:
    """Lookup tables over one environment's objects."""

    def __init__(self, manifests: Sequence[Manifest], rules: Tables) -> None:
        self.by_identity = {m.identity: m for m in manifests}
        self.by_kind: dict[tuple[str, str], list[Manifest]] = defaultdict(list)
        self.secrets: dict[tuple[str, str], list[frozenset[str] | None]] = defaultdict(list)
        self.tables = rules
        producers = self.tables.secret_producers
        for m in manifests:
            self.by_kind[(m.group, m.kind)].append(m)
            producer = producers.get((m.group, m.kind))
            produced = producer.secret(m) if producer else None
            if produced:
                ns, name, keys = produced
                self.secrets[(ns, name)].append(keys)
        self._field_values: dict[tuple[int, str], set[Any]] = {}

    def field_values(self, rule: int, namespace: str) -> set[Any]:
        """Values the targets of field rule ``rule`` (in ``namespace``, if set) can be named by."""
        key = (rule, namespace)
        if key not in self._field_values:
            spec = self.tables.field_refs[rule]
            self._field_values[key] = {
                _get(t.body, match)
                for t in self.by_kind.get((spec.target_group, spec.target_kind), [])
                if not namespace or t.namespace == namespace
                for match in spec.match
            }
        return self._field_values[key]


def _provider_config_group(group: str, rules: Tables) -> str | None:
    best = ""
    families = rules.provider_config_families
    for suffix in families:
        if group.endswith(suffix) and len(suffix) > len(best):
            best = suffix
    return families[best] if best else None


def provider_config_ref(m: Manifest, rules: Tables | None = None) -> Identity | None:
    """The identity of the ProviderConfig a Crossplane managed resource uses.

    None for an object outside the known provider families, for a ProviderConfig itself,
    and for a ``spec.providerConfigRef`` that is not a map (a schema problem).
    """
    target_group = _provider_config_group(m.group, rules or tables())
    if target_group is None or m.kind in PROVIDER_CONFIG_KINDS:
        return None
    ref = _get(m.body, ("spec", "providerConfigRef"))
    if ref is None:
        ref = {"name": "default"}
    if not isinstance(ref, dict):
        return None  # a schema problem, reported by fleet.schema
    name = str(ref.get("name", ""))
    kind = str(ref.get("kind") or "ProviderConfig")
    namespaced = ".m." in f".{target_group}" and kind == "ProviderConfig"
    namespace = m.namespace if namespaced else ""
    return (target_group, kind, namespace, name)


def identity_ref(m: Manifest, rules: Tables | None = None) -> Identity | None:
    """The identity of the OCIClusterIdentity a CAPOCI cluster uses, as CAPOCI finds it.

    CAPOCI (``GetClusterIdentityFromRef``) gets the OCIClusterIdentity named by
    ``spec.identityRef.name`` in ``spec.identityRef.namespace``, else in the cluster's
    namespace, whatever the ref's ``kind`` and ``apiVersion`` say. None for an object outside
    a plug-in's ``identity_ref_kinds``, without ``spec.identityRef`` (CAPOCI then uses its own
    credentials) or with one that is not a map (a schema problem).
    """
    target = (rules or tables()).identity_refs.get((m.group, m.kind))
    if target is None:
        return None
    ref = _get(m.body, ("spec", "identityRef"))
    if not isinstance(ref, dict):
        return None
    namespace = str(ref.get("namespace") or m.namespace)
    return (*target, namespace, str(ref.get("name", "")))


def shared_object_refs(m: Manifest, rules: Tables | None = None) -> list[Identity]:
    """The shared objects ``m`` needs to be reconciled: its ProviderConfig, its identity.

    What :func:`provider_config_ref` and :func:`identity_ref` name; the deletion guard lets
    such an object go only when nothing uses it (:func:`fleet.guards.deletion.unused_objects`).
    """
    rules = rules or tables()
    return [t for t in (provider_config_ref(m, rules), identity_ref(m, rules)) if t is not None]


def is_use_known(group: str, kind: str, rules: Tables | None = None) -> bool:
    """Whether the reference rules know every user of an object of ``group``/``kind``.

    A ProviderConfig of a known provider family, and the identity kinds (the
    OCIClusterIdentity. Who uses any other object is unknown.
    """
    rules = rules or tables()
    if kind in PROVIDER_CONFIG_KINDS:
        return group in rules.provider_config_families.values()
    return (group, kind) in rules.identity_kinds


def _check_provider_config(m: Manifest, env: _Environment) -> Iterator[Problem]:
    target = provider_config_ref(m, env.tables)
    if target is not None and target not in env.by_identity:
        target_group, kind, namespace, name = target
        where = f"{namespace}/{name}" if namespace else name
        yield Problem.of(
            m,
            "spec.providerConfigRef.name",
            f"no {target_group} {kind} {where} in this environment",
        )


def _check_field_refs(m: Manifest, env: _Environment) -> Iterator[Problem]:
    for i, rule in enumerate(env.tables.field_refs):
        if (rule.group, rule.kind) != (m.group, m.kind):
            continue
        known = env.field_values(i, m.namespace if rule.same_namespace else "")
        for path in rule.paths:
            value = _get(m.body, path)
            if not isinstance(value, str) or not value or value in known:
                continue
            by = " or ".join(".".join(p) for p in rule.match)
            scope = f" in namespace {m.namespace}" if rule.same_namespace else ""
            yield Problem.of(
                m,
                format_path(list(path)),
                f"no {rule.target_group} {rule.target_kind}{scope} with {by} {value!r} "
                "in this environment",
            )


def _check_object_refs(m: Manifest, env: _Environment) -> Iterator[Problem]:
    for path in env.tables.object_refs.get((m.group, m.kind), ()):
        ref = _get(m.body, path)
        if not isinstance(ref, dict):
            continue
        kind, name = str(ref.get("kind", "")), str(ref.get("name", ""))
        namespace = str(ref.get("namespace") or m.namespace)
        if "apiGroup" in ref:
            group, api_version = str(ref["apiGroup"]), ""
        else:
            api_version = str(ref.get("apiVersion", ""))
            group = api_version.split("/", 1)[0] if "/" in api_version else "core"
        target = env.by_identity.get((group, kind, namespace, name))
        if target is None or (api_version and target.api_version != api_version):
            shown = api_version or group
            yield Problem.of(
                m,
                format_path(list(path)),
                f"no {shown} {kind} {namespace}/{name} in this environment",
            )


def _producer_kinds(env: _Environment) -> str:
    """The kinds that produce Secrets, as the plug-ins and components declare them."""
    return ", ".join(sorted({p.kind for p in env.tables.secret_producers.values()}))


def _check_secret_refs(m: Manifest, env: _Environment) -> Iterator[Problem]:
    for path in SECRET_REFS.get((m.group, m.kind), ()):
        ref = _get(m.body, path)
        if not isinstance(ref, dict) or not ref.get("name"):
            continue
        namespace = str(ref.get("namespace") or m.namespace)
        name, key = str(ref["name"]), ref.get("key")
        produced = env.secrets.get((namespace, name))
        field = format_path(list(path))
        if not produced:
            yield Problem.of(
                m,
                field,
                f"no object in this environment produces Secret {namespace}/{name} "
                f"(objects that can: {_producer_kinds(env)})",
            )
        elif key and not any(keys is None or key in keys for keys in produced):
            known = sorted({k for keys in produced if keys for k in keys})
            yield Problem.of(
                m,
                f"{field}.key",
                f"Secret {namespace}/{name} is produced without key {key!r} "
                f"(it has {', '.join(known) or 'no keys'})",
            )


def _check_names(m: Manifest, rules: Tables) -> Iterator[Problem]:
    name = m.name
    if (m.group, m.kind) in rules.label_named_kinds:
        if len(name) > 63 or not _DNS_LABEL.match(name):
            yield Problem.of(
                m,
                "metadata.name",
                f"expected a DNS-1123 label (lower-case letters, digits and '-', starting and "
                f"ending with a letter or digit, at most 63 characters), got {name!r}",
            )
    elif len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
        yield Problem.of(
            m,
            "metadata.name",
            f"expected a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most "
            f"253 characters), got {name!r}",
        )
    namespace = m.namespace
    if namespace and (len(namespace) > 63 or not _DNS_LABEL.match(namespace)):
        yield Problem.of(
            m,
            "metadata.namespace",
            f"expected a DNS-1123 label (at most 63 characters), got {namespace!r}",
        )


_CHECKS: tuple[Callable[[Manifest, _Environment], Iterator[Problem]], ...] = (
    _check_provider_config,
    _check_field_refs,
    _check_object_refs,
    _check_secret_refs,
)


def check_references(manifests: Sequence[Manifest], plugins: PluginSet) -> list[Problem]:
    """Check names and cross-object references, each environment on its own, with the
    rules of the fleet's ``plugins`` (``Platform.of(fleet).plugins``).

    Returns one Problem per bad name or dangling reference, in manifest order.
    """
    rules = tables(plugins)
    by_env: dict[str, list[Manifest]] = defaultdict(list)
    for m in manifests:
        by_env[m.environment].append(m)
    envs = {name: _Environment(items, rules) for name, items in by_env.items()}
    problems: list[Problem] = []
    for m in manifests:
        problems.extend(_check_names(m, rules))
        for check in _CHECKS:
            problems.extend(check(m, envs[m.environment]))
    return problems
