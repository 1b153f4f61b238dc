"""``fleet import tfvars --verify``: every tfvars value, found unchanged in the real synth.

The generated modules are rendered in a copy of the project (``fleet.importers``); each
tfvars value is then looked up in the rendered
``ClusterV1``, ``NodegroupV1`` and ``ProviderConfig`` (after the documented conversion:
counts and timeouts to int, ``merge_labels`` to bool; label values as exact strings).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fleet.clouds.magnum.importer.tfvars import (
    CONNECTION_KEYS,
    ImportedCluster,
    cluster_options,
    node_group_options,
)
from fleet.clouds.magnum.importer.tfvars_codegen import ClusterDecl
from fleet.clouds.magnum.project import ANNOTATION_PREFIX
from fleet.clouds.magnum.render import EXTERNAL_NAME, TEMPLATE_NAME
from fleet.clouds.magnum.template import is_uuid
from fleet.core.credentials import shown
from fleet.core.errors import DefinitionError
from fleet.core.manifest import Manifest
from fleet.core.options import Option
from fleet.terraform.tfvars import as_bool, as_int, convert_option

_ABSENT = "<absent>"


def _option(option: Option) -> Callable[..., Any]:
    def convert(value: Any, *, where: str, field: str) -> Any:
        return convert_option(option, value, where=where, field=field)

    return convert


# tfvars key -> (forProvider field, conversion); the conversion is the import's own.
_CLUSTER_FIELDS: dict[str, tuple[str, Callable[..., Any] | None]] = {
    "cluster_name": ("name", None),
    "create_timeout": ("createTimeout", as_int),
    "flavor": ("flavor", None),
    "keypair": ("keypair", None),
    "master_count": ("masterCount", as_int),
    "master_flavor": ("masterFlavor", None),
    "merge_labels": ("mergeLabels", as_bool),
    "node_count": ("nodeCount", as_int),
    **{o.terraform: (o.render[-1], _option(o)) for o in cluster_options()},
}
_CONNECTION_ANNOTATIONS = {
    key: ANNOTATION_PREFIX + name
    for key, name in zip(
        CONNECTION_KEYS,
        ("project-name", "project-id", "auth-url", "region", "interface", "identity-api-version"),
        strict=True,
    )
}
_GROUP_FIELDS: dict[str, tuple[str, Callable[..., Any] | None]] = {
    "name": ("name", None),
    "flavor_id": ("flavorId", None),
    "node_count": ("nodeCount", as_int),
    "min_node_count": ("minNodeCount", as_int),
    "max_node_count": ("maxNodeCount", as_int),
    "merge_labels": ("mergeLabels", as_bool),
    **{o.terraform: (o.render[-1], _option(o)) for o in node_group_options()},
}


def check_cluster(
    decl: ClusterDecl,
    objects: Mapping[tuple[str, str], Manifest],
    *,
    observe: bool,
    accepted: frozenset[str] = frozenset(),
) -> list[DefinitionError]:
    """Every value of ``decl``'s tfvars file compared with the rendered ``objects``
    (keyed by kind and name); the ``accepted`` keys are left to a person by the report.
    The adoption is checked too: the external names (from state, else the name)."""
    cluster = decl.cluster
    problems: list[DefinitionError] = []

    def differ(key: str, expected: Any, actual: Any, what: str) -> None:
        if expected != actual or type(expected) is not type(actual):
            problems.append(
                DefinitionError(
                    f"tfvars has {shown(expected, key)}, the rendered {what} has "
                    f"{shown(actual, key)}",
                    where=cluster.where(key.split(".")[0].split("[")[0]),
                    field=key,
                )
            )

    manifest = objects.get(("ClusterV1", cluster.name))
    if manifest is None:
        differ("cluster_name", cluster.name, _ABSENT, f"{decl.environment} ClusterV1")
        return problems
    body = manifest.body
    spec, what = body["spec"], f"ClusterV1 {cluster.name}"
    for_provider = spec["forProvider"]
    values = cluster.values
    _template(differ, decl, body, what)
    init = spec.get("initProvider", {})
    for key, (name, convert) in _CLUSTER_FIELDS.items():
        if key in values and key not in accepted:
            expected = _convert(values[key], convert, cluster, key)
            # An autoscaled cluster's node count is its size at creation: initProvider.
            part = "forProvider" if name in for_provider or name not in init else "initProvider"
            rendered = (for_provider if part == "forProvider" else init).get(name, _ABSENT)
            differ(key, expected, rendered, f"{what} {part}.{name}")
    _labels(differ, "labels", values.get("labels", {}), for_provider.get("labels", {}), what)
    annotations = body["metadata"].get("annotations", {})
    differ(
        "cluster_name",
        decl.adopted_as,
        annotations.get(EXTERNAL_NAME, _ABSENT),
        f"{what} external name",
    )
    differ("cluster_name", cluster.name, body["metadata"]["name"], f"{what} metadata.name")
    differ(
        "cluster_name",
        "Orphan",
        spec.get("deletionPolicy", _ABSENT),
        f"{what} deletionPolicy (adoption)",
    )
    if observe:
        differ(
            "cluster_name",
            ["Observe"],
            spec.get("managementPolicies", _ABSENT),
            f"{what} managementPolicies",
        )
    groups = values.get("nodegroups_list", [])
    expected_groups = {f"{cluster.name}-{g['name']}" for g in groups}
    for group in groups:
        _node_group(
            differ, decl, group, objects.get(("NodegroupV1", f"{cluster.name}-{group['name']}"))
        )
    for kind, name in objects:
        owned = kind == "NodegroupV1" and name.startswith(f"{cluster.name}-")
        if owned and name not in expected_groups and _belongs(objects[(kind, name)], decl):
            differ("nodegroups_list", _ABSENT, name, "NodegroupV1")
    ref = spec.get("providerConfigRef", {}).get("name", _ABSENT)
    provider = objects.get(("ProviderConfig", ref))
    provider_annotations = provider.body["metadata"].get("annotations", {}) if provider else {}
    for key, annotation in _CONNECTION_ANNOTATIONS.items():
        if key in values and key not in accepted:
            differ(
                key,
                values[key],
                provider_annotations.get(annotation, _ABSENT),
                f"ProviderConfig {ref} annotation {annotation}",
            )
    reported = {u.key for u in cluster.unmapped} | accepted
    checked = {
        *_CLUSTER_FIELDS,
        *_CONNECTION_ANNOTATIONS,
        "labels",
        "nodegroups_list",
        "cluster_template_name",  # by _template
    }
    for key in sorted(set(values) - checked - reported):
        differ(key, values[key], _ABSENT, "objects and the import report")
    return problems


def _template(
    differ: Callable[[str, Any, Any, str], None],
    decl: ClusterDecl,
    body: Mapping[str, Any],
    what: str,
) -> None:
    """The template: its UUID in ``clusterTemplateId`` (the state's, when known) and its
    name in the template annotation."""
    key = "cluster_template_name"
    rendered = body["spec"]["forProvider"].get("clusterTemplateId", _ABSENT)
    if decl.template_uuid is not None:
        differ(key, decl.template_uuid, rendered, f"{what} forProvider.clusterTemplateId")
    elif not is_uuid(rendered):
        differ(key, "a template UUID", rendered, f"{what} forProvider.clusterTemplateId")
    annotation = body["metadata"].get("annotations", {}).get(TEMPLATE_NAME, _ABSENT)
    differ(key, decl.cluster.template, annotation, f"{what} annotation {TEMPLATE_NAME}")


def _belongs(manifest: Manifest, decl: ClusterDecl) -> bool:
    return bool(manifest.body["spec"]["forProvider"].get("clusterId") == decl.adopted_as)


def _convert(
    value: Any, convert: Callable[..., Any] | None, cluster: ImportedCluster, key: str
) -> Any:
    return value if convert is None else convert(value, where=cluster.where(key), field=key)


def _labels(
    differ: Callable[[str, Any, Any, str], None],
    key: str,
    expected: Mapping[str, str],
    actual: Mapping[str, str],
    what: str,
) -> None:
    """Both ways: every tfvars label rendered unchanged, and no rendered label the
    tfvars lacks (a template's base label would change the real cluster)."""
    for label in sorted(set(expected) | set(actual)):
        differ(
            f"{key}.{label}",
            expected.get(label, _ABSENT),
            actual.get(label, _ABSENT),
            f"{what} label",
        )


def _node_group(
    differ: Callable[[str, Any, Any, str], None],
    decl: ClusterDecl,
    group: Mapping[str, Any],
    manifest: Manifest | None,
) -> None:
    cluster = decl.cluster
    prefix = f"nodegroups_list[{group['name']}]"
    if manifest is None:
        differ(prefix, group["name"], _ABSENT, "NodegroupV1")
        return
    for_provider = manifest.body["spec"]["forProvider"]
    init = manifest.body["spec"].get("initProvider", {})
    what = f"NodegroupV1 {manifest.name}"
    for key, (name, convert) in _GROUP_FIELDS.items():
        if key in group:
            expected = _convert(group[key], convert, cluster, "nodegroups_list")
            # An autoscaled group's node count is its size at creation: initProvider.
            part = "forProvider" if name in for_provider or name not in init else "initProvider"
            differ(
                f"{prefix}.{key}",
                expected,
                (for_provider if part == "forProvider" else init).get(name, _ABSENT),
                f"{what} {part}.{name}",
            )
    reported = {u.key for u in cluster.unmapped}
    for key in sorted(set(group) - set(_GROUP_FIELDS) - {"labels"}):
        if f"{prefix}.{key}" not in reported:
            differ(f"{prefix}.{key}", group[key], _ABSENT, "objects and the import report")
    differ(
        f"{prefix}.cluster",
        decl.adopted_as,
        for_provider.get("clusterId", _ABSENT),
        f"{what} forProvider.clusterId",
    )
    adopted = decl.group_external_names.get(group["name"], f"{decl.adopted_as}/{group['name']}")
    differ(
        f"{prefix}.name",
        adopted,
        manifest.body["metadata"].get("annotations", {}).get(EXTERNAL_NAME, _ABSENT),
        f"{what} external name",
    )
    _labels(
        differ, f"{prefix}.labels", group.get("labels", {}), for_provider.get("labels", {}), what
    )
