"""The declarations of ``fleet import tfstate``: what each imported cluster, node group and
template becomes as arguments of ``MagnumCluster``, ``NodeGroup`` and ``ClusterTemplate``,
and one declaration for the same cluster in several environments.

The arguments are found in the classes' option tables (:func:`fleet.core.options.options_of`,
by Terraform attribute), so a value reaches the argument the fleet renders it from; what
:mod:`fleet.importers.magnum_state` decided is declared (carried, create-only, autoscaled),
the rest left to the template or Magnum.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleet.clouds.magnum.cluster import MagnumCluster
from fleet.clouds.magnum.create_only import create_only_fields
from fleet.clouds.magnum.pool import NodeGroup
from fleet.clouds.magnum.resolved import AUTOSCALER_LABEL, BOUND_LABELS, autoscaler_on
from fleet.clouds.magnum.template import attribute_keywords
from fleet.core.names import MAX_LABEL, is_dns_label, object_name_from
from fleet.core.options import Option, options_of
from fleet.core.pysource import Call, Name, Value
from fleet.importers.magnum_state import (
    AUTOSCALED,
    CREATE_ONLY,
    DECLARED,
    INHERITED,
    ImportedGroup,
    ImportedTemplate,
    StateCluster,
)
from fleet.importers.state_codegen import ClusterCall, ProjectCall, TemplateDecl
from fleet.importers.tfvars import autoscaler_bounds


@dataclass(frozen=True, kw_only=True)
class Member:
    """One cluster of one state, as the keywords of its declaration."""

    cluster: StateCluster
    keywords: dict[str, Value]
    groups: dict[str, dict[str, Value]]
    """Node group address -> its NodeGroup keywords."""
    origins: dict[str, str]
    """Keyword (``node_groups[<name>].<keyword>`` for a node group's) -> Terraform attribute."""
    project: ProjectCall
    module: Path


@dataclass(frozen=True, kw_only=True)
class PlannedDeclaration:
    """One ``MagnumCluster``: its members (one per environment) and where it goes."""

    construct_id: str
    members: tuple[Member, ...]
    module: Path
    merge_note: str = ""

    @property
    def merged(self) -> bool:
        """Whether several environments share it."""
        return len(self.members) > 1


# --- keywords ----------------------------------------------------------------------------------


def _by_terraform(cls: type) -> dict[str, Option]:
    return {o.terraform: o for o in options_of(cls).values() if o.terraform}


def _number(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


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
            declared[option.keyword] = (value.attribute, _number(value.value))
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
    template_variable_name: str,
    project: ProjectCall,
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
    declared, required = _declared(cluster.values, MagnumCluster, promoted)
    for keyword, (attribute, value) in declared.items():
        keywords[keyword] = value
        origins[keyword] = attribute
    notes.extend(_required(attribute, "MagnumCluster") for attribute in required)
    if region is not None and "openstack_region" not in keywords:
        keywords["openstack_region"] = region
        origins["openstack_region"] = "region"
    labels = dict(cluster.labels)
    create_only = _create_only(cluster.values, MagnumCluster, notes, "the cluster")
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
                f"{k}={cluster.magnum_labels[k]}"
                for k in BOUND_LABELS
                if k in cluster.magnum_labels
            )
            notes.append(
                f"{source} on Magnum's autoscaler ({AUTOSCALER_LABEL}={switch}) without "
                f"both bounds ({held or 'none'}: the driver's defaults apply): node_count "
                "is create-only, the labels stay as they are"
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
    return _ordered(keywords, MagnumCluster), origins, notes


def group_keywords(
    group: ImportedGroup, notes: list[str], promoted: frozenset[str] = frozenset()
) -> dict[str, Value]:
    keywords: dict[str, Value] = {"name": group.magnum_name}
    declared, required = _declared(group.values, NodeGroup, promoted)
    keywords.update((keyword, value) for keyword, (_, value) in declared.items())
    notes.extend(
        f"node group {group.magnum_name!r}: {_required(attribute, 'NodeGroup')}"
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
    create_only = _create_only(group.values, NodeGroup, notes, f"node group {group.magnum_name!r}")
    if create_only:
        keywords["create_only"] = create_only
    keywords["external_name"] = group.external_name
    return _ordered(keywords, NodeGroup)


def template_decl(
    template: ImportedTemplate, variable: str, optional: set[str], held: set[str]
) -> TemplateDecl:
    """The ``ClusterTemplate`` of an imported template, with its Magnum attributes (image,
    COE, flavors, ...) as keywords, except those in ``held`` (credential material: left out,
    said in the comment above it)."""
    keywords: list[tuple[str, Value]] = [
        ("name", template.magnum_name),
        ("kubernetes_version", template.kubernetes_version),
    ]
    if template.labels:
        keywords.append(("base_labels", dict(sorted(template.labels.items()))))
    extra = sorted(optional - set(template.labels))
    if extra:
        keywords.append(("optional_labels", extra))
    keywords.append(("uuid", template.uuid))
    attributes = {k: _number(v) for k, v in template.values.items() if k not in held}
    keywords.extend(attribute_keywords(attributes))
    how = {
        "resource": "a resource",
        "data-source": "found by a data source (made outside Terraform)",
        "uuid": "known only by the UUID its clusters name",
        "fleet": "declared in the fleet",
    }[template.known_from]
    state, _, address = template.where.partition(" ")
    comment = [
        f"Magnum template {template.magnum_name!r}: {how}, in {Path(state).name}",
        f"  {address}",
    ]
    if held:
        comment.append(
            f"  {', '.join(sorted(held))}: credential material, not written (Magnum keeps it)"
        )
    return TemplateDecl(variable=variable, keywords=tuple(keywords), comment=tuple(comment))


# --- merging across environments ---------------------------------------------------------


def merge_problem(members: Sequence[Member]) -> str | None:
    envs = [m.cluster.environment for m in members]
    if len(set(envs)) != len(envs):
        return "two clusters in one environment"
    options = options_of(MagnumCluster)
    first = members[0]
    keys = set(first.keywords) - {"environments"}
    for member in members[1:]:
        if set(member.keywords) - {"environments"} != keys:
            differ = sorted(keys ^ (set(member.keywords) - {"environments"}))
            return f"{', '.join(differ)} set in some environments only"
    for key in sorted(keys):
        values = [repr(m.keywords[key]) for m in members]
        option = options.get(key)
        per_env = option.per_env if option is not None else False
        if len(set(values)) > 1 and not per_env:
            return f"{key} differs (MagnumCluster takes one {key})"
    if any(set(m.groups) != set(first.groups) for m in members):
        return "the node groups differ"
    group_options = options_of(NodeGroup)
    for address, keywords in first.groups.items():
        for key in keywords:
            seen = {repr(m.groups[address].get(key)) for m in members}
            option = group_options.get(key)
            if len(seen) > 1 and not (option is not None and option.per_env):
                return f"node group {keywords['name']!r}: {key} differs"
    return None


def _by_env(values: Sequence[tuple[str, Value]]) -> Value:
    first = values[0][1]
    if all(repr(v) == repr(first) for _, v in values):
        return first
    return Call(callee="per_env", keywords=tuple(values))


def pinned_object_name(magnum_name: str, fallback: str) -> str:
    """An object name to pin (``object_name=``) where the one derived from ``magnum_name``
    is empty, longer than 63 characters or taken: the derived one cut to fit (``fallback``
    when nothing is left), ``-`` and 8 hex digits of the SHA-256 of the Magnum name. Stable:
    the same name gives the same pin in every environment and every re-import."""
    suffix = hashlib.sha256(magnum_name.encode("utf-8")).hexdigest()[:8]
    base = object_name_from(magnum_name) or fallback
    return f"{base[: MAX_LABEL - len(suffix) - 1].rstrip('-')}-{suffix}"


def why_pinned(derived: str, taken_by: str | None) -> str:
    """Why the object name derived from a Magnum name cannot be used as it is."""
    if taken_by is not None:
        return f"the derived {derived!r} is taken by {taken_by}"
    if not derived:
        return "nothing is left of the name in the derived one"
    if len(derived) > MAX_LABEL:
        return f"the derived one has {len(derived)} characters (at most {MAX_LABEL})"
    return f"the derived {derived!r} is not a DNS-1123 label"


def with_object_name(keywords: dict[str, Value], pin: str) -> dict[str, Value]:
    """``keywords`` with ``object_name=pin`` right after ``name``."""
    out: dict[str, Value] = {}
    for key, value in keywords.items():
        out[key] = value
        if key == "name":
            out["object_name"] = pin
    return out


def needs_pin(derived: str, taken: bool) -> bool:
    """Whether a derived object name must be pinned: taken, or not a DNS-1123 label."""
    return taken or not is_dns_label(derived)


def name_value(members: Sequence[Member]) -> Value:
    """``"x-{env}-y"`` when each name holds its environment as a segment, else per_env
    (one member: its name)."""
    names = [(m.cluster.environment, m.cluster.magnum_name) for m in members]
    if len(names) == 1:
        return names[0][1]
    patterns = {
        "-".join("{env}" if part == env else part for part in name.split("-"))
        for env, name in names
    }
    if len(patterns) == 1 and "{env}" in next(iter(patterns)):
        return patterns.pop()
    return _by_env(names)


def declaration_call(decl: PlannedDeclaration) -> ClusterCall:
    members = decl.members
    keywords: list[tuple[str, Value]] = []
    for key in members[0].keywords:
        if key == "name":
            value = name_value(members)
        elif key == "environments":
            value = [m.cluster.environment for m in members]
        else:
            value = _by_env([(m.cluster.environment, m.keywords[key]) for m in members])
        keywords.append((key, value))
    groups = []
    for address, first in members[0].groups.items():
        groups.append(
            tuple(
                (
                    key,
                    _by_env([(m.cluster.environment, m.groups[address][key]) for m in members]),
                )
                for key in first
            )
        )
    comment = tuple(
        line
        for m in members
        for line in (
            f"{m.cluster.magnum_name} ({m.cluster.environment}): {m.cluster.resource.address}",
            f"  in {m.cluster.state.path.name}",
        )
    )
    return ClusterCall(
        construct_id=decl.construct_id,
        keywords=tuple(keywords),
        node_groups=tuple(groups),
        comment=comment,
    )


def earlier_comments(path: Path) -> dict[str, tuple[str, ...]]:
    """The comment above each module-level assignment of a generated module (kept when an
    import rewrites it), by variable."""
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError):
        return {}
    lines = text.split("\n")
    found: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            above: list[str] = []
            number = node.lineno - 2
            while number >= 0 and (lines[number].startswith("# ") or lines[number] == "#"):
                above.insert(0, lines[number][2:].removesuffix("  # noqa: E501").rstrip("\r"))
                number -= 1
            found[node.targets[0].id] = tuple(above)
    return found
