"""What each imported cluster, node group and template becomes as arguments of the
declaration classes (``MagnumCluster``, ``NodeGroup``, ``ClusterTemplate`` by default:
:class:`~fleet.clouds.magnum.importer.resources.Tables`).

The arguments are found in the classes' option tables (:func:`fleet.core.options.options_of`,
by Terraform attribute), so a value reaches the argument the fleet renders it from; what
:mod:`fleet.clouds.magnum.importer.state` decided is declared (carried, create-only,
autoscaled), the rest left to the template or Magnum.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fleet.clouds.importer import SharedDecl
from fleet.clouds.magnum.create_only import create_only_fields
from fleet.clouds.magnum.importer.model import ImportedGroup, StateCluster
from fleet.clouds.magnum.importer.tfvars import autoscaler_bounds
from fleet.clouds.magnum.resolved import AUTOSCALER_LABEL, BOUND_LABELS, autoscaler_on
from fleet.core.options import Option, options_of
from fleet.core.pysource import Name, Value
from fleet.core.redact import shown
from fleet.terraform.attributes import AUTOSCALED, CREATE_ONLY, DECLARED, INHERITED, whole


def _by_terraform(cls: type) -> dict[str, Option]:
    return {o.terraform: o for o in options_of(cls).values() if o.terraform}


_FIRST = ("name", "environments", "project", "template")
_LAST = (
    "inherit_from_template",
    "create_only",
    "node_groups",
    "external_name",
    "deletion_policy",
    "management_policies",
)


def _ordered(keywords: dict[str, Value], cls: type) -> dict[str, Value]:
    """Keywords in the order a person reads them: identity, the table's order, adoption."""
    table = list(options_of(cls))

    def rank(key: str) -> tuple[int, int]:
        if key in _FIRST:
            return (0, _FIRST.index(key))
        if key in _LAST:
            return (2, _LAST.index(key))
        return (1, table.index(key) if key in table else len(table))

    return dict(sorted(keywords.items(), key=lambda kv: rank(kv[0])))


def _create_only(values: Sequence[Any], cls: type, notes: list[str], what: str) -> list[str]:
    """The keywords of the create-only values (lifecycle ignore_changes) that ``cls`` can
    leave unenforced; a note for each it cannot."""
    by_tf = _by_terraform(cls)
    allowed = create_only_fields(cls)
    found: list[str] = []
    for value in values:
        if value.fate != CREATE_ONLY:
            continue
        option = by_tf.get(value.attribute)
        keyword = option.keyword if option is not None else value.attribute
        if keyword in allowed:
            found.append(keyword)
        else:
            notes.append(
                f"{what}: lifecycle ignore_changes names {value.attribute}, which the fleet "
                "cannot leave unenforced: Crossplane will enforce it"
            )
    return found


def _declared(
    values: Sequence[Any], cls: type, promoted: frozenset[str]
) -> tuple[dict[str, tuple[str, Value]], list[str]]:
    """The keywords of ``cls`` that ``values`` declare, as keyword -> (Terraform attribute,
    value): each carried, create-only or autoscaled one (or ``promoted``), and each inherited
    one ``cls`` requires (with Magnum's value); and the attributes of the latter, to say so.
    Labels are left to the caller."""
    by_tf = _by_terraform(cls)
    declared: dict[str, tuple[str, Value]] = {}
    required: list[str] = []
    for value in values:
        option = by_tf.get(value.attribute)
        if option is None or value.attribute == "labels" or value.value is None:
            continue
        carried = value.fate in DECLARED or value.attribute in promoted
        if carried or (option.required and value.fate == INHERITED):
            declared[option.keyword] = (value.attribute, whole(value.value))
        if not carried and option.required and value.fate == INHERITED:
            required.append(value.attribute)
    return declared, required


def _required(attribute: str, cls: str) -> str:
    return (
        f"{attribute} is inherited but declared all the same ({cls} requires it), with "
        "Magnum's value"
    )


def cluster_keywords(
    cluster: StateCluster,
    cls: type,
    template_variable_name: str,
    project: SharedDecl,
    region: str | None,
    observe: bool,
    promoted: frozenset[str] = frozenset(),
) -> tuple[dict[str, Value], dict[str, str], list[str]]:
    notes: list[str] = []
    keywords: dict[str, Value] = {
        "name": cluster.magnum_name,
        "environments": [cluster.environment],
        "project": Name(project.variable),
        "template": Name(template_variable_name),
    }
    origins = {"name": "name", "template": "cluster_template_id", "project": "project_id"}
    declared, required = _declared(cluster.values, cls, promoted)
    for keyword, (attribute, value) in declared.items():
        keywords[keyword] = value
        origins[keyword] = attribute
    notes.extend(_required(attribute, cls.__name__) for attribute in required)
    if region is not None and "openstack_region" not in keywords:
        keywords["openstack_region"] = region
        origins["openstack_region"] = "region"
    labels = dict(cluster.labels)
    create_only = _create_only(cluster.values, cls, notes, "the cluster")
    switch = cluster.magnum_labels.get(AUTOSCALER_LABEL)
    node_count = cluster.value("node_count")
    # On under ignore_changes too (node_count create-only already): the bounds still go.
    autoscaled = switch is not None and autoscaler_on(switch)
    if node_count is not None and (node_count.fate == AUTOSCALED or autoscaled):
        bounds = autoscaler_bounds({**cluster.magnum_labels, **labels})
        if bounds is not None and all(k in labels for k in BOUND_LABELS):
            # The fleet writes these labels from min/max itself, byte for byte.
            keywords["min_node_count"], keywords["max_node_count"] = bounds
            origins.update(min_node_count="labels", max_node_count="labels")
            labels = {k: v for k, v in labels.items() if k not in BOUND_LABELS}
        elif "node_count" not in create_only:
            create_only.append("node_count")
            source = "its labels turn" if AUTOSCALER_LABEL in labels else "its template turns"
            held = ", ".join(
                f"{k}={shown(cluster.magnum_labels[k], k)}"
                for k in BOUND_LABELS
                if k in cluster.magnum_labels
            )
            # A bound of 0 is a bound: Magnum's labels hold both whenever both are whole
            # numbers, whoever set them (the template's, inherited, or the cluster's own).
            if bounds is not None:
                within = f"within the bounds its labels hold ({held})"
            else:
                within = f"without both bounds ({held or 'none'}: the driver's defaults apply)"
            notes.append(
                f"{source} on Magnum's autoscaler ({AUTOSCALER_LABEL}={shown(switch)}) "
                f"{within}: node_count is create-only, the labels stay as they are"
            )
    if labels or "labels" in cluster.declared():
        keywords["labels"] = labels
        origins["labels"] = "labels"
    if cluster.merge_labels is not True:
        keywords["merge_labels"] = False
        origins["merge_labels"] = "merge_labels"
    keywords["inherit_from_template"] = True
    if create_only:
        keywords["create_only"] = create_only
        origins["create_only"] = "lifecycle"
    keywords["external_name"] = cluster.uuid
    origins["external_name"] = "id"
    keywords["deletion_policy"] = "Orphan"
    if observe:
        keywords["management_policies"] = ["Observe"]
    return _ordered(keywords, cls), origins, notes


def group_keywords(
    group: ImportedGroup, cls: type, notes: list[str], promoted: frozenset[str] = frozenset()
) -> dict[str, Value]:
    keywords: dict[str, Value] = {"name": group.magnum_name}
    declared, required = _declared(group.values, cls, promoted)
    keywords.update((keyword, value) for keyword, (_, value) in declared.items())
    notes.extend(
        f"node group {group.magnum_name!r}: {_required(attribute, cls.__name__)}"
        for attribute in required
    )
    labels = dict(group.labels)
    zone = labels.pop("availability_zone", None)
    if zone is not None:
        keywords["availability_zone"] = zone
    if labels:
        keywords["labels"] = labels
    if group.merge_labels is not True:
        keywords["merge_labels"] = False
    create_only = _create_only(group.values, cls, notes, f"node group {group.magnum_name!r}")
    if create_only:
        keywords["create_only"] = create_only
    keywords["external_name"] = group.external_name
    return _ordered(keywords, cls)
