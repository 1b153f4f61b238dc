"""The modules ``fleet import tfvars`` writes: one per community, and the catalog of derived
templates (laid out by :mod:`fleet.codegen.layout`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from fleet.clouds.magnum.importer.catalog import TemplateRef, template_variable
from fleet.clouds.magnum.importer.code import statement
from fleet.clouds.magnum.importer.template_derivation import TemplateSpec
from fleet.clouds.magnum.importer.tfvars import Connection, ImportedCluster
from fleet.clouds.magnum.template import attribute_keywords
from fleet.codegen.layout import (
    FLEET,
    GENERATED,
    INDENT,
    blocks,
    by_env,
    comment_lines,
    module,
    uses_per_env,
)
from fleet.core.pysource import Call, Lookup, Name, Value

# --- the imported declarations ---------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ClusterDecl:
    """One imported cluster in its environment: its own labels are those beyond the
    template; ``external_name`` and ``group_external_names`` come from Terraform state."""

    cluster: ImportedCluster
    environment: str
    template: TemplateRef
    labels: Mapping[str, str]
    allow_extra_labels: bool
    external_name: str | None = None
    group_external_names: Mapping[str, str] = field(default_factory=dict)
    template_uuid: str | None = None
    """The template's Magnum UUID the state gives this cluster (``cluster_template_id``)."""

    @property
    def adopted_as(self) -> str:
        """The external name the ClusterV1 adopts: the Magnum UUID from state, else the name."""
        return self.external_name or self.cluster.name


@dataclass(frozen=True, kw_only=True)
class ProjectDecl:
    """A project the module uses: declared by it (``connection``), or one the fleet already
    declares, looked up by its construct id (``reused``)."""

    variable: str
    connection: Connection
    reused: str | None = None
    reused_from: str = ""


@dataclass(frozen=True, kw_only=True)
class Declaration:
    """One ``MagnumCluster``: one cluster, or the same cluster in several environments
    (``name`` then holds ``{env}``, ``members`` one per environment in the fleet's order)."""

    construct_id: str
    name: str
    members: tuple[ClusterDecl, ...]
    project: str

    @property
    def merged(self) -> bool:
        """Whether several environments share this declaration."""
        return len(self.members) > 1


def _project(project: ProjectDecl) -> list[str]:
    if project.reused is not None:
        lookup = Lookup(construct_id=project.reused, cls=Name("OpenStackProject"))
        lines = statement(lookup, indent=INDENT, target=project.variable)
        return [*comment_lines([f"Declared in {project.reused_from}."], INDENT), *lines]
    connection = project.connection
    keywords: list[tuple[str, Value]] = [("project_name", connection.project_name)]
    for key in ("project_id", "auth_url", "region", "interface", "identity_api_version"):
        value = getattr(connection, key)
        if value is not None:
            keywords.append((key, value))
    call = Call(
        callee="OpenStackProject",
        positional=(FLEET, connection.provider_config_name),
        keywords=tuple(keywords),
    )
    return statement(call, indent=INDENT, target=project.variable)


def _node_group(name: str, members: Sequence[ClusterDecl]) -> Call:
    """The node group ``name`` of every member (the same but for counts and ids)."""
    groups = [
        (d.environment, next(g for g in d.cluster.node_groups if g.name == name)) for d in members
    ]
    group = groups[0][1]
    labels = dict(group.labels)
    zone = labels.pop("availability_zone", None)
    keywords: list[tuple[str, Value]] = [
        ("name", group.name),
        ("flavor", group.flavor),
        ("node_count", by_env([(env, g.node_count) for env, g in groups])),
    ]
    if group.min_node_count is not None:
        keywords.append(("min_node_count", by_env([(e, g.min_node_count or 0) for e, g in groups])))
    if group.max_node_count is not None:
        keywords.append(("max_node_count", by_env([(e, g.max_node_count or 0) for e, g in groups])))
    if zone is not None:
        keywords.append(("availability_zone", zone))
    if labels:
        keywords.append(("labels", labels))
    if group.merge_labels is not None:
        keywords.append(("merge_labels", group.merge_labels))
    keywords.extend(group.options.items())
    ids = [(d.environment, d.group_external_names.get(name)) for d in members]
    if all(value is not None for _, value in ids):
        keywords.append(("external_name", by_env([(e, str(v)) for e, v in ids])))
    return Call(callee="NodeGroup", keywords=tuple(keywords))


def _cluster(decl: Declaration, *, observe: bool) -> tuple[list[str], bool]:
    members = decl.members
    first = members[0].cluster

    def each(value: Callable[[ClusterDecl], Value]) -> Value:
        return by_env([(d.environment, value(d)) for d in members])

    keywords: list[tuple[str, Value]] = [
        ("name", decl.name),
        ("environments", [d.environment for d in members]),
        ("project", Name(decl.project)),
        ("template", Name(members[0].template.variable)),
        ("flavor", each(lambda d: d.cluster.flavor)),
        ("keypair", each(lambda d: d.cluster.keypair)),
    ]
    if first.create_timeout_minutes is not None:
        keywords.append(("create_timeout_minutes", first.create_timeout_minutes))
    if any(d.cluster.master_count is not None for d in members):
        keywords.append(("master_count", each(lambda d: d.cluster.master_count or 1)))
    if any(d.cluster.master_flavor is not None for d in members):
        keywords.append(
            ("master_flavor", each(lambda d: d.cluster.master_flavor or d.cluster.flavor))
        )
    keywords.append(("node_count", each(lambda d: d.cluster.node_count)))
    if first.merge_labels is not None:
        keywords.append(("merge_labels", first.merge_labels))
    if any(d.labels for d in members):
        keywords.append(("labels", each(lambda d: dict(d.labels))))
    if any(d.allow_extra_labels for d in members):
        keywords.append(("allow_extra_labels", True))
    for option in first.options:
        values = [(d.environment, d.cluster.options[option]) for d in members]
        keywords.append((option, by_env(values)))
    if first.node_groups:
        keywords.append(("node_groups", [_node_group(g.name, members) for g in first.node_groups]))
    # Adoption, not recreation: the real cluster exists and outlives its object.
    if any(d.external_name for d in members):  # else the default: the cluster name
        keywords.append(("external_name", each(lambda d: d.adopted_as)))
    keywords.append(("deletion_policy", "Orphan"))
    if observe:
        keywords.append(("management_policies", ["Observe"]))
    call = Call(
        callee="MagnumCluster",
        positional=(FLEET, decl.construct_id),
        keywords=tuple(keywords),
    )
    return statement(call, indent=INDENT), uses_per_env(call)


def cluster_module(
    *,
    title: str,
    projects: Sequence[ProjectDecl],
    declarations: Sequence[Declaration],
    observe: bool,
) -> str:
    """The declaration module of imported clusters: their projects, then the clusters,
    each sorted by name, so that the same input always gives the same text."""
    names: dict[str, set[str]] = {"fleet": {"Fleet", "MagnumCluster"}}
    if projects:  # declared, or looked up by id: fleet.declaration(id, OpenStackProject)
        names["fleet"].add("OpenStackProject")
    if any(m.cluster.node_groups for d in declarations for m in d.members):
        names["fleet"].add("NodeGroup")
    for decl in declarations:
        names.setdefault(decl.members[0].template.module, set()).add(
            decl.members[0].template.variable
        )
    statements = [_project(p) for p in sorted(projects, key=lambda p: p.variable)]
    calls = [
        _cluster(d, observe=observe) for d in sorted(declarations, key=lambda d: d.construct_id)
    ]
    statements += [lines for lines, _ in calls]
    if any(uses for _, uses in calls):
        names["fleet"].add("per_env")
    body = blocks(
        ["def define(fleet: Fleet) -> None:", f'{INDENT}"""Declare the imported clusters."""'],
    )
    body.extend(blocks(*statements))
    about = f" ({title})" if title else ""
    return module(about=f"{GENERATED}{about}: re-import to update.", names=names, body=["", *body])


def templates_module(templates: Iterable[TemplateSpec]) -> str:
    """The catalog of derived templates, sorted by name."""
    statements = []
    for spec in sorted(templates, key=lambda t: t.name):
        call = Call(
            callee="ClusterTemplate",
            keywords=(
                ("name", spec.name),
                ("kubernetes_version", spec.kubernetes_version),
                ("base_labels", dict(sorted(spec.base_labels.items()))),
                ("optional_labels", sorted(spec.optional_labels)),
                ("changing_labels", sorted(spec.changing_labels)),
                *((("uuid", _uuid(spec.uuid)),) if spec.uuid is not None else ()),
                *attribute_keywords(spec.attributes),
            ),
        )
        statements.append(statement(call, target=template_variable(spec.name)))
    return module(
        about=f"{GENERATED} (derived templates): re-import to update.",
        names={"fleet": ["ClusterTemplate"]},
        body=blocks(*statements),
    )


def _uuid(value: str | Mapping[str, str]) -> Value:
    return value if isinstance(value, str) else dict(sorted(value.items()))
