"""The modules of a tfvars import: one per community (or ``--out``), projects reused or
declared, the same cluster in several environments merged into one declaration, each
checked for clashes with what the fleet declares."""

from __future__ import annotations

import dataclasses
import keyword
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fleet.clouds.importer import ExistingFleet, TfvarsOptions
from fleet.clouds.magnum.importer.catalog import TEMPLATES_MODULE
from fleet.clouds.magnum.importer.projects import (
    DETAILS,
    match_project,
    project_variable,
    projects_of,
)
from fleet.clouds.magnum.importer.tfvars import Connection, ImportedCluster, module_name
from fleet.clouds.magnum.importer.tfvars_codegen import (
    ClusterDecl,
    Declaration,
    ProjectDecl,
    cluster_module,
)
from fleet.codegen.files import generated_module
from fleet.core.config import FleetConfig
from fleet.core.credentials import HIDDEN, shown
from fleet.core.errors import DefinitionError
from fleet.core.secrets import credential_in


@dataclass(frozen=True, kw_only=True)
class Planned:
    """The modules to write and what they declare."""

    files: dict[Path, str]
    declarations: dict[Path, list[Declaration]]
    projects: dict[Path, list[ProjectDecl]]
    accepted: dict[str, frozenset[str]]
    """tfvars file -> keys left to a person (reported, so ``--verify`` does not expect them)."""


def our_modules(
    config: FleetConfig, options: TfvarsOptions, communities: set[str]
) -> dict[str, Path]:
    """The generated modules this import replaces: community -> module (``""``: --out)."""
    if options.out is not None:
        path = options.out.resolve()
        return {"": path} if generated_module(path) else {}
    found: dict[str, Path] = {}
    if config.clusters_dir.is_dir():
        for path in sorted(config.clusters_dir.glob("*.py")):
            for community in communities:
                if generated_module(path, f"(community {community})"):
                    found[community] = path.resolve()
    return found


def modules(
    config: FleetConfig,
    options: TfvarsOptions,
    decls: Sequence[ClusterDecl],
    existing: ExistingFleet,
    errors: list[DefinitionError],
    notes: dict[str, list[str]],
) -> Planned:
    """One module per community (or the ``--out`` file): projects reused or declared,
    clusters merged across environments, each checked for clashes."""
    ours = our_modules(config, options, {d.cluster.community for d in decls})
    by_community: dict[str, list[ClusterDecl]] = {}
    for decl in decls:
        by_community.setdefault("" if options.out else decl.cluster.community, []).append(decl)
    accepted: dict[str, set[str]] = {}
    paths: dict[str, Path] = {}
    projects: dict[Path, list[ProjectDecl]] = {}
    owners: dict[str, tuple[Path, ClusterDecl]] = {}
    variables: dict[Path, dict[Connection, str]] = {}
    for community, members in sorted(by_community.items()):
        found: dict[Connection, ProjectDecl] = {}
        lacking: dict[Connection, list[tuple[str, str]]] = {}
        for decl in members:
            connection = decl.cluster.connection
            if connection not in found:
                project, lacking[connection] = _project_decl(decl, existing, errors)
                found[connection] = project
            for key, note in lacking[connection]:
                accepted.setdefault(decl.cluster.source, set()).add(key)
                notes[decl.cluster.name].append(note)
        # Any name will do: a reused project is looked up by reference, resolved once
        # every module's define() has run, whichever module declares it.
        path = _module_path(config, options, community, members[0], ours, errors)
        if path is None:
            continue
        paths[community] = path
        projects[path] = sorted(found.values(), key=lambda p: p.variable)
        variables[path] = {c: p.variable for c, p in found.items()}
        for decl in members:
            connection = decl.cluster.connection
            if found[connection].reused is not None:
                continue
            first = owners.setdefault(connection.provider_config_name, (path, decl))
            if first[1].cluster.connection == connection and first[0] == path:
                continue
            other = first[1].cluster
            reason = (
                f"is also used from {first[0].name} (import them together with --out FILE, "
                "or one after the other)"
                if first[0] != path
                else f"has other {_differing(other.connection, connection)} in {other.source}"
            )
            errors.append(
                DefinitionError(
                    f"OpenStack project {connection.project_name!r} {reason}",
                    where=decl.cluster.where("project_name"),
                    field="project_name",
                )
            )
    declarations: dict[Path, list[Declaration]] = {}
    ids: dict[str, str] = {}
    for community, members in sorted(by_community.items()):
        path = paths.get(community)
        if path is None:
            continue
        planned = merge_environments(config, options, members, variables[path], notes)
        declarations[path] = planned
        for declared in planned:
            where = declared.members[0].cluster.where("cluster_name")
            clash = existing.ids.get(declared.construct_id) or ids.get(declared.construct_id)
            if clash is not None:
                errors.append(
                    DefinitionError(
                        f"the id {declared.construct_id!r} is already declared at {clash}",
                        where=where,
                        field="cluster_name",
                    )
                )
            ids[declared.construct_id] = where
        covered = {(d.environment, d.cluster.name) for d in members}
        kept = sorted(
            f"{name} ({env})"
            for (env, name), file in existing.ours.items()
            if file == path and (env, name) not in covered
        )
        if kept:
            errors.append(
                DefinitionError(
                    f"it declares {', '.join(kept)}, which this input lacks: import "
                    "the whole community again, or remove them from it by hand first",
                    where=str(path),
                )
            )
    files = {
        path: cluster_module(
            title=f"community {community}" if community else "",
            projects=projects[path],
            declarations=declarations[path],
            observe=options.observe,
        )
        for community, path in sorted(paths.items())
        if path in declarations
    }
    return Planned(
        files=files,
        declarations=declarations,
        projects=projects,
        accepted={k: frozenset(v) for k, v in accepted.items()},
    )


def _project_decl(
    decl: ClusterDecl, existing: ExistingFleet, errors: list[DefinitionError]
) -> tuple[ProjectDecl, list[tuple[str, str]]]:
    """The project of ``decl``'s cluster: the fleet's own when it declares it, else new;
    and the tfvars keys (with a note) that the fleet's project lacks."""
    connection = decl.cluster.connection
    variable = project_variable(connection)
    match = match_project(connection, projects_of(existing))
    if match is None:
        other = existing.ids.get(connection.provider_config_name)
        if other is not None:
            errors.append(
                DefinitionError(
                    f"OpenStack project {connection.project_name!r} would be declared as "
                    f"{connection.provider_config_name!r}, which {other} declares as another "
                    "project (other project id, or name and region)",
                    where=decl.cluster.where("project_name"),
                    field="project_name",
                )
            )
        errors.extend(  # a new project would declare them: at the tfvars line, not shown
            DefinitionError(
                f"holds credential material ({found.split(';')[0]}); the new project "
                f"{connection.provider_config_name!r} would declare it: the import writes nothing",
                where=decl.cluster.where(key),
                field=key,
            )
            for attribute, _, key in DETAILS
            if (found := credential_in(str(getattr(connection, attribute) or "")))
        )
        return ProjectDecl(variable=variable, connection=connection), []
    project, how = match
    lacking: list[tuple[str, str]] = []
    for attribute, detail, key in DETAILS:
        mine, theirs = getattr(connection, attribute), project.details.get(detail)
        if mine is None:
            continue
        if theirs is not None and theirs != mine:
            errors.append(
                DefinitionError(
                    f"has {shown(mine, key)}, the project {project.construct_id!r} it matches "
                    f"by {how} ({project.where}) has {shown(theirs, key)}",
                    where=decl.cluster.where(key),
                    field=key,
                )
            )
        elif theirs is None and shown(mine, key) == HIDDEN:
            note = (
                f"needs a person: {key} holds credential material (not shown) and is not "
                f"declared on project {project.construct_id!r} ({project.where}); add "
                f"{attribute}= there without it (credentials go in the project's Secret)"
            )
            lacking.append((key, note))
        elif theirs is None:
            note = (
                f"needs a person: {key} = {mine!r} is not declared on project "
                f"{project.construct_id!r} ({project.where}); add {attribute}= there"
            )
            lacking.append((key, note))
    reused = ProjectDecl(
        variable=variable,
        connection=connection,
        reused=project.construct_id,
        reused_from=project.where,
    )
    return reused, lacking


def _module_path(
    config: FleetConfig,
    options: TfvarsOptions,
    community: str,
    first: ClusterDecl,
    ours: Mapping[str, Path],
    errors: list[DefinitionError],
) -> Path | None:
    """Where a community's module goes: the module an earlier import wrote for it; else
    ``<community>.py``."""
    if options.out is not None:
        return options.out.resolve()
    if community in ours:
        return ours[community]
    try:
        name = module_name(community, where=first.cluster.source)
    except DefinitionError as e:
        errors.append(e)
        return None
    if name == TEMPLATES_MODULE:
        errors.append(
            DefinitionError(
                f"community {name!r} would overwrite the template catalog; use --out",
                where=first.cluster.source,
                field="community",
            )
        )
        return None
    return config.clusters_dir.resolve() / f"{name}.py"


def _pattern(decl: ClusterDecl, options: TfvarsOptions) -> str | None:
    """The cluster name with its environment segment as ``{env}`` (None: no such segment)."""
    parts = decl.cluster.name.split("-")
    if options.environment is not None or decl.environment not in parts:
        return None
    return "-".join("{env}" if part == decl.environment else part for part in parts)


def merge_environments(
    config: FleetConfig,
    options: TfvarsOptions,
    decls: Sequence[ClusterDecl],
    variables: Mapping[Connection, str],
    notes: dict[str, list[str]],
) -> list[Declaration]:
    """One declaration per cluster shared across environments (same name but for the
    environment segment, same template and project, and only per-environment values
    differing); every other cluster on its own."""
    groups: dict[tuple[object, ...], list[ClusterDecl]] = {}
    for decl in decls:
        pattern = _pattern(decl, options)
        key: tuple[object, ...] = (
            (pattern, decl.template, variables[decl.cluster.connection])
            if pattern is not None
            else (decl.cluster.name,)
        )
        groups.setdefault(key, []).append(decl)
    order = {env: i for i, env in enumerate(config.environments)}
    out: list[Declaration] = []
    for key, members in groups.items():
        members.sort(key=lambda d: order.get(d.environment, len(order)))
        problem = merge_problem(members) if len(members) > 1 else None
        if len(members) > 1 and problem is None:
            pattern = str(key[0])
            construct_id = pattern.replace("-{env}", "").replace("{env}-", "")
            construct_id = construct_id.replace("{env}", "env")
            out.append(
                Declaration(
                    construct_id=construct_id,
                    name=pattern,
                    members=tuple(members),
                    project=variables[members[0].cluster.connection],
                )
            )
            continue
        for decl in members:
            if problem is not None:
                notes[decl.cluster.name].append(f"not merged across environments: {problem}")
            out.append(
                Declaration(
                    construct_id=decl.cluster.name,
                    name=decl.cluster.name,
                    members=(decl,),
                    project=variables[decl.cluster.connection],
                )
            )
    return out


def merge_problem(members: Sequence[ClusterDecl]) -> str | None:
    """Why these clusters (one per environment) cannot share one declaration, or None.

    What MagnumCluster takes per environment (flavor, keypair, counts, master flavor,
    labels, Magnum options, node group counts, external names) may differ; the rest must
    be equal."""
    envs = [d.environment for d in members]
    if len(set(envs)) != len(envs):
        return "two clusters in one environment"
    bad = [e for e in envs if not e.isidentifier() or keyword.iskeyword(e) or e == "default"]
    if bad:
        return f"environment {bad[0]!r} is not a Python keyword argument of per_env"
    first = members[0].cluster

    def same(what: str, value: Callable[[ImportedCluster], object]) -> str | None:
        values = [value(d.cluster) for d in members]
        return None if all(v == values[0] for v in values) else f"{what} differs"

    checks: list[tuple[str, Callable[[ImportedCluster], object]]] = [
        ("create_timeout", lambda c: c.create_timeout_minutes),
        ("merge_labels", lambda c: c.merge_labels),
        ("master_count (set in some only)", lambda c: c.master_count is None),
        ("master_flavor (set in some only)", lambda c: c.master_flavor is None),
        ("the Magnum options set (docker_volume_size, ...)", lambda c: sorted(c.options)),
        ("the node groups", lambda c: [g.name for g in c.node_groups]),
    ]
    for what, value in checks:
        problem = same(what, value)
        if problem:
            return problem
    for index, group in enumerate(first.node_groups):

        def shape(c: ImportedCluster, i: int = index) -> object:
            g = c.node_groups[i]
            return (
                g.flavor,
                dict(g.labels),
                g.merge_labels,
                dict(g.options),
                g.min_node_count is None,
                g.max_node_count is None,
            )

        problem = same(f"node group {group.name!r} (flavor, labels or options)", shape)
        if problem:
            return problem
    return None


def _differing(a: Connection, b: Connection) -> str:
    fields = [f.name for f in dataclasses.fields(a) if getattr(a, f.name) != getattr(b, f.name)]
    return ", ".join(fields)
