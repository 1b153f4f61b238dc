"""Every value of the state, compared with what the import renders.

The objects of an imported cluster are found by their external names (the state's ids),
whatever their Kubernetes names. What each value must be, by its fate
(:mod:`fleet.clouds.magnum.importer.state`):

* carried: in ``spec.forProvider``, equal;
* create-only (``ignore_changes``) and an autoscaled pool's ``node_count``: only in
  ``spec.initProvider``, equal, and no ``*`` or ``LateInitialize`` in
  ``spec.managementPolicies`` (upjet v2.2.0 filters the diffs of fields set only in
  initProvider once the resource exists, and LateInitialize would copy them into
  forProvider: ``pkg/controller/external_tfpluginsdk.go``);
* inherited, computed, default or unset: absent from ``spec.forProvider``, or equal (every
  such argument is ForceNew in terraform-provider-openstack v3.4.0: another value blocks
  the resource).

Labels follow the provider's Read (``containerInfraV1GetLabelsMerged``): with
``mergeLabels`` the declared labels must hold every label that differs from the parent,
each with Magnum's value, and any other label with Magnum's value; without it, exactly
Magnum's labels.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from fleet.clouds.importer import Mismatch
from fleet.clouds.magnum.importer.model import ImportedGroup, StateCluster, magnum_labels
from fleet.clouds.magnum.render import EXTERNAL_NAME
from fleet.core.manifest import Manifest
from fleet.core.redact import shown
from fleet.terraform.attributes import AUTOSCALED, CARRIED, CREATE_ONLY, Value

_FORBIDDEN_POLICIES = ("*", "LateInitialize")


def camel(attribute: str) -> str:
    """The CRD field of a Terraform attribute (upjet's names): ``flavor_id`` -> ``flavorId``."""
    head, *rest = attribute.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _objects(manifests: Sequence[Manifest], kind: str) -> dict[str, Manifest]:
    found: dict[str, Manifest] = {}
    for manifest in manifests:
        if manifest.kind == kind:
            name = manifest.body.get("metadata", {}).get("annotations", {}).get(EXTERNAL_NAME)
            if isinstance(name, str):
                found[name] = manifest
    return found


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, float) and expected.is_integer():
        expected = int(expected)
    return bool(expected == actual) and isinstance(expected, bool) == isinstance(actual, bool)


def _values(
    values: Sequence[Value], spec: Mapping[str, Any], where: str, group: str | None
) -> Iterator[Mismatch]:
    for_provider = spec.get("forProvider", {})
    init = spec.get("initProvider", {})
    policies = spec.get("managementPolicies", ["*"])
    for value in values:
        if value.attribute == "labels":
            continue
        field = camel(value.attribute)
        here = for_provider.get(field)
        if value.fate == CARRIED:
            ok, wanted = _same(value.value, here), "spec.forProvider"
        elif value.fate in (CREATE_ONLY, AUTOSCALED):
            ok = (
                field not in for_provider
                # None: no value to keep (create_timeout 0), only never enforced
                and (value.value is None or _same(value.value, init.get(field)))
                and not any(p in policies for p in _FORBIDDEN_POLICIES)
            )
            wanted = "only spec.initProvider, without LateInitialize"
        else:
            ok, wanted = field not in for_provider or _same(value.value, here), "absent or equal"
        if not ok:
            yield Mismatch(
                where=where,
                attribute=value.attribute,
                fate=value.fate,
                message=f"{value.fate} ({wanted}), rendered {_shown(field, for_provider, init)}",
                field=field,
                group=group,
            )


def _shown(field: str, for_provider: Mapping[str, Any], init: Mapping[str, Any]) -> str:
    if field in for_provider:
        return f"forProvider.{field} = {shown(for_provider[field], field)}"
    if field in init:
        return f"initProvider.{field} = {shown(init[field], field)}"
    return f"no {field}"


def _labels(
    state: Mapping[str, str],
    parent: Mapping[str, str],
    merge: bool | None,
    for_provider: Mapping[str, Any],
    where: str,
    group: str | None,
) -> Iterator[Mismatch]:
    """Labels (named by key only: a value may be a secret)."""
    rendered = for_provider.get("labels")
    if rendered is None:
        return
    magnum = magnum_labels(state, parent, merge)
    if for_provider.get("mergeLabels") is True:
        required = {k for k, v in magnum.items() if parent.get(k) != v}
        missing = sorted(required - set(rendered))
        wrong = sorted(k for k, v in rendered.items() if magnum.get(k) != v)
        bad = missing + wrong
    else:
        bad = sorted(k for k in set(rendered) | set(magnum) if rendered.get(k) != magnum.get(k))
    if bad:
        yield Mismatch(
            where=where,
            attribute="labels",
            fate="labels",
            message=f"label(s) {', '.join(bad)} rendered otherwise than Magnum holds them",
            field="labels",
            group=group,
        )


def _identity(
    expected: Mapping[str, Any], for_provider: Mapping[str, Any], where: str, group: str | None
) -> Iterator[Mismatch]:
    for field, value in expected.items():
        if for_provider.get(field) != value:
            yield Mismatch(
                where=where,
                attribute=field,
                fate="identity",
                message=f"must be {shown(value, field)}, rendered "
                f"{shown(for_provider.get(field), field)}",
                field=field,
                group=group,
            )


def check_cluster(cluster: StateCluster, manifests: Sequence[Manifest]) -> list[Mismatch]:
    """Every value of ``cluster`` (and its node groups) against the rendered objects of
    its environment."""
    clusters = _objects(manifests, "ClusterV1")
    manifest = clusters.get(cluster.uuid)
    if manifest is None:
        return [
            Mismatch(
                where=cluster.where,
                attribute="id",
                fate="identity",
                message=f"no ClusterV1 adopts {cluster.uuid}",
                field="",
            )
        ]
    spec = manifest.body["spec"]
    for_provider = spec.get("forProvider", {})
    out = list(
        _identity(
            {"name": cluster.magnum_name, "clusterTemplateId": cluster.template.uuid},
            for_provider,
            cluster.where,
            None,
        )
    )
    out.extend(_values(cluster.values, spec, cluster.where, None))
    state_labels = cluster.resource.attributes.get("labels") or {}
    out.extend(
        _labels(
            state_labels,
            cluster.template.labels,
            cluster.merge_labels,
            for_provider,
            cluster.where,
            None,
        )
    )
    if cluster.omitted_labels:  # create-only labels: spec.initProvider, the keys left out
        omitted = cluster.omitted_labels
        kept = {k: v for k, v in state_labels.items() if k not in omitted}
        parent = {k: v for k, v in cluster.template.labels.items() if k not in omitted}
        init = spec.get("initProvider", {})
        out.extend(
            _labels(
                kept,
                parent,
                cluster.merge_labels,
                {"labels": init.get("labels", {}), "mergeLabels": for_provider.get("mergeLabels")},
                cluster.where,
                None,
            )
        )
        if "labels" in for_provider or any(k in init.get("labels", {}) for k in omitted):
            out.append(
                Mismatch(
                    where=cluster.where,
                    attribute="labels",
                    fate=CREATE_ONLY,
                    message="labels must be only in spec.initProvider, without the omitted keys",
                    field="labels",
                )
            )
    groups = _objects(manifests, "NodegroupV1")
    for group in cluster.node_groups:
        out.extend(_group(cluster, group, groups.get(group.external_name)))
    return out


def _group(
    cluster: StateCluster, group: ImportedGroup, manifest: Manifest | None
) -> Iterator[Mismatch]:
    where = group.resource.where
    if manifest is None:
        yield Mismatch(
            where=where,
            attribute="id",
            fate="identity",
            message=f"no NodegroupV1 adopts {group.external_name}",
            field="",
            group=group.magnum_name,
        )
        return
    spec = manifest.body["spec"]
    for_provider = spec.get("forProvider", {})
    yield from _identity(
        {"name": group.magnum_name, "clusterId": cluster.uuid},
        for_provider,
        where,
        group.magnum_name,
    )
    yield from _values(group.values, spec, where, group.magnum_name)
    state_labels = group.resource.attributes.get("labels") or {}
    yield from _labels(
        state_labels,
        cluster.magnum_labels,
        group.merge_labels,
        for_provider,
        where,
        group.magnum_name,
    )
