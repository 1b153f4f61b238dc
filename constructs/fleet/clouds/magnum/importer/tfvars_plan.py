"""What ``fleet import tfvars`` writes: environments, templates and modules for the input.

Everything is decided and checked before anything is written: the result is the text
of each file, and the caller writes it (after ``--verify`` when asked).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib
import keyword
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fleet.clouds.base import FleetCluster
from fleet.clouds.magnum.project import OpenStackProject
from fleet.clouds.magnum.template import ClusterTemplate, TemplateCatalog, is_uuid
from fleet.core.config import FleetConfig
from fleet.core.credentials import HIDDEN, shown
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.values import location_root
from fleet.importers.codegen import (
    GENERATED_PREFIX,
    TEMPLATES_MODULE,
    ClusterDecl,
    Declaration,
    ProjectDecl,
    TemplateRef,
    cluster_module,
    project_variable,
    template_variable,
    templates_module,
)
from fleet.importers.generated import check_generated
from fleet.importers.shapes import describe
from fleet.importers.template_derivation import (
    TemplateSpec,
    derive_template,
    extend_template,
    missing_base_labels,
    own_labels,
)
from fleet.importers.tfstate import check_state, load_state, template_uuids
from fleet.importers.tfvars import (
    Connection,
    ImportedCluster,
    find_tfvars,
    load_clusters,
    module_name,
)
from fleet.pipeline.discovery import discover, helper_modules, load_fleet


@dataclass(frozen=True, kw_only=True)
class ImportOptions:
    """The command line of ``fleet import tfvars``."""

    paths: Sequence[Path]
    out: Path | None = None
    environment: str | None = None
    derive_templates: bool = False
    observe: bool = False
    states: Sequence[Path] = ()
    """Terraform state files (or ``terraform show -json`` output) of the same clusters."""
    template_uuids: Mapping[str, str] = field(default_factory=dict)
    """Template name -> Magnum UUID, for derived templates (``--template-uuid``)."""


@dataclass(frozen=True, kw_only=True)
class ImportResult:
    """The files to write (absolute path -> text), the clusters, and the report lines."""

    files: dict[Path, str]
    clusters: list[ClusterDecl]
    report: list[str] = field(default_factory=list)
    observe: bool = False
    declarations: dict[Path, list[Declaration]] = field(default_factory=dict)
    """The MagnumClusters of each module (one per cluster, or one for several environments)."""
    accepted: dict[str, frozenset[str]] = field(default_factory=dict)
    """tfvars file -> keys the report leaves to a person."""


@dataclass(frozen=True, kw_only=True)
class Catalog:
    """The templates the project declares, and where generated code imports each from."""

    templates: dict[str, ClusterTemplate]
    refs: dict[str, TemplateRef]
    generated: dict[str, TemplateSpec]
    """The templates of the generated catalog module (``--derive-templates`` updates these)."""


# --- the project's catalog --------------------------------------------------------------------


@contextlib.contextmanager
def project_modules(root: Path, package: str) -> Iterator[None]:
    """Import the project's declaration package fresh, and forget it afterwards, so that
    another project (a verify copy) or a later synth never sees these modules."""

    def purge() -> None:
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]

    purge()
    # First on the path even if it is already there further down: another project's
    # package of the same name must not shadow this one.
    saved = list(sys.path)
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        purge()
        sys.path[:] = saved


def load_catalog(config: FleetConfig) -> Catalog:
    """Import the helper and declaration modules (without calling ``define``) and read the
    template catalog they declare at module level."""
    package = config.clusters_dir.name
    found = TemplateCatalog()
    refs: dict[str, TemplateRef] = {}
    generated: dict[str, TemplateSpec] = {}
    errors: list[DefinitionError] = []
    # Locations (a template's `where`) relative to the project, as load_fleet gives them.
    with project_modules(config.clusters_dir.parent, package), location_root(config.root):
        for path in [*helper_modules(config), *discover(config)]:
            name = f"{package}.{path.stem}"
            try:
                loaded = importlib.import_module(name)
            except DefinitionErrors as e:
                errors.extend(e.errors)
                continue
            except DefinitionError as e:
                errors.append(e)
                continue
            except Exception as e:  # user code: report the module, one line
                errors.append(DefinitionError(f"{type(e).__name__}: {e}", where=str(path)))
                continue
            for variable, value in sorted(vars(loaded).items()):
                try:
                    found.add(*_templates_in(value))
                except DefinitionError as e:
                    errors.append(e)
                if not isinstance(value, ClusterTemplate) or variable.startswith("_"):
                    continue
                # A template imported into another module is referenced where it is declared.
                declared_here = Path(value.where.rsplit(":", 1)[0]).name == path.name
                if declared_here or value.name not in refs:
                    refs[value.name] = TemplateRef(module=name, variable=variable)
                if declared_here and path.stem == TEMPLATES_MODULE:
                    generated[value.name] = TemplateSpec.of(value)
    if errors:
        raise DefinitionErrors(errors)
    templates = {name: found.get(name, where="") for name in found.names()}
    return Catalog(templates=templates, refs=refs, generated=generated)


def _templates_in(value: object) -> list[ClusterTemplate]:
    """The templates a module-level value holds: itself, or the items of a list, tuple or
    dict of templates."""
    if isinstance(value, ClusterTemplate):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [item for item in value if isinstance(item, ClusterTemplate)]
    return []


# --- planning ----------------------------------------------------------------------------------


def environment_of(cluster: ImportedCluster, config: FleetConfig, chosen: str | None) -> str:
    """``--environment``, or the one environment named by a dash-separated segment of the
    cluster name (``k8s-ais-batch-dev-multi-v25`` -> ``dev``)."""
    if chosen is not None:
        return chosen
    found = sorted({s for s in cluster.name.split("-") if s in config.environments})
    if len(found) == 1:
        return found[0]
    which = f"several ({', '.join(found)})" if found else "none"
    raise DefinitionError(
        f"cannot tell the environment of {cluster.name!r}: its name holds {which} of "
        f"{', '.join(config.environments)}; use --environment",
        where=cluster.where("cluster_name"),
        field="cluster_name",
    )


def plan_import(config: FleetConfig, options: ImportOptions) -> ImportResult:
    """Parse the input and decide every file; raises DefinitionErrors, writes nothing."""
    if options.environment is not None:
        config.check_environment(options.environment, field="--environment")
    try:
        clusters = load_clusters(find_tfvars(options.paths))
    except (DefinitionError, DefinitionErrors) as e:
        # Not the one-cluster-per-file layout: say what the input is, if it is Terraform.
        raise _shaped(options.paths) or e from None
    state = load_state(options.states) if options.states else None
    errors: list[DefinitionError] = []
    environments: dict[str, str] = {}
    for cluster in clusters:
        try:
            environments[cluster.name] = environment_of(cluster, config, options.environment)
        except DefinitionError as e:
            errors.append(e)
    ours = _our_modules(config, options, {c.community for c in clusters})
    existing = scan_fleet(config, ours)
    known = load_catalog(config)
    notes: dict[str, list[str]] = {c.name: [] for c in clusters}
    uuids: dict[str, dict[str, str]] = {}
    if state is not None:
        errors.extend(check_state(state, clusters))
        uuids = template_uuids(state, clusters, errors)
    specs, refs, written = _templates(
        config, clusters, known, options.derive_templates, errors, uuids, notes
    )
    written = _with_given_uuids(written, options.template_uuids, uuids, clusters, errors)
    derived = {spec.name for spec in written}
    for name, given in sorted(options.template_uuids.items()):
        declared = known.templates.get(name)
        theirs = uuid_values(declared.uuid) if declared is not None else set()
        if name in derived or declared is None or not theirs or given in theirs:
            continue  # derived, not used here (another community's), or agreeing
        errors.append(
            DefinitionError(
                f"{name}={given}: the fleet declares template {name!r} "
                f"({declared.where or 'its catalog'}) with uuid {', '.join(sorted(theirs))}, "
                "which its clusters use: correct one of them",
                field="--template-uuid",
            )
        )
    decls: list[ClusterDecl] = []
    report = [u.line() for c in clusters for u in c.unmapped]
    for cluster in clusters:
        spec = specs.get(cluster.template)
        if spec is None or cluster.name not in environments:
            continue
        missing = missing_base_labels(spec, cluster.labels)
        if missing:
            errors.append(
                DefinitionError(
                    f"lacks base label(s) {', '.join(missing)} of template {spec.name!r}, so it "
                    "cannot be declared against it (derive the template from all its clusters "
                    "with --derive-templates)",
                    where=cluster.where("labels"),
                    field="labels",
                )
            )
            continue
        labels = own_labels(spec, cluster.labels)
        extra = sorted(set(labels) - set(spec.base_labels) - set(spec.optional_labels))
        if extra:
            report.append(
                f"{cluster.source}: labels {', '.join(extra)} are not in template "
                f"{spec.name!r}: declared with allow_extra_labels=True"
            )
        adopted = state.clusters.get(cluster.name) if state is not None else None
        groups: dict[str, str] = {}
        if adopted is not None and state is not None:
            for group in cluster.node_groups:
                found = state.node_group(str(adopted.attributes["id"]), group.name)
                if found is not None:
                    groups[group.name] = str(found.attributes["id"])
        elif state is not None:
            notes[cluster.name].append(
                "needs a person: not in the Terraform state, so adopted by name (upjet's "
                "external name for ClusterV1 is the Magnum UUID)"
            )
        decls.append(
            ClusterDecl(
                cluster=cluster,
                environment=environments[cluster.name],
                template=refs[cluster.template],
                labels=labels,
                allow_extra_labels=bool(extra),
                external_name=str(adopted.attributes["id"]) if adopted is not None else None,
                group_external_names=groups,
                template_uuid=adopted.text("cluster_template_id") if adopted is not None else None,
            )
        )
    for decl in decls:
        where = existing.clusters.get((decl.environment, decl.cluster.name))
        if where is not None:
            errors.append(
                DefinitionError(
                    f"cluster {decl.cluster.name!r} ({decl.environment}) is already declared at "
                    f"{where}: leave its file out of the input, or remove that declaration first",
                    where=decl.cluster.where("cluster_name"),
                    field="cluster_name",
                )
            )
    planned = _modules(config, options, decls, existing, errors, notes)
    files = dict(planned.files)
    if written:
        files[config.clusters_dir / f"{TEMPLATES_MODULE}.py"] = templates_module(written)
    for path in files:
        check_writable(path, errors)
    if errors:
        raise DefinitionErrors(errors)
    report.extend(migration_report(planned, notes, observe=options.observe, config=config))
    return ImportResult(
        files=files,
        clusters=decls,
        report=report,
        observe=options.observe,
        declarations=planned.declarations,
        accepted=planned.accepted,
    )


def _shaped(paths: Sequence[Path]) -> DefinitionErrors | None:
    found = describe(paths)
    return DefinitionErrors(found) if found else None


def _templates(
    config: FleetConfig,
    clusters: Sequence[ImportedCluster],
    known: Catalog,
    derive: bool,
    errors: list[DefinitionError],
    uuids: Mapping[str, Mapping[str, str]],
    notes: dict[str, list[str]],
) -> tuple[dict[str, TemplateSpec], dict[str, TemplateRef], list[TemplateSpec]]:
    """The spec and reference of each template the input uses, and the generated catalog;
    ``uuids`` (template name -> region -> Magnum id, from state) go into derived templates,
    and into a note for a catalog template that lacks them."""
    by_template: dict[str, list[ImportedCluster]] = {}
    for cluster in clusters:
        by_template.setdefault(cluster.template, []).append(cluster)
    specs: dict[str, TemplateSpec] = {}
    refs: dict[str, TemplateRef] = {}
    generated = dict(known.generated)

    def derived_ref(name: str) -> TemplateRef:
        module = f"{config.clusters_dir.name}.{TEMPLATES_MODULE}"
        return TemplateRef(module=module, variable=template_variable(name))

    for name, users in sorted(by_template.items()):
        label_sets = [c.labels for c in users]
        if derive and name in known.generated:
            specs[name] = generated[name] = extend_template(known.generated[name], label_sets)
            refs[name] = derived_ref(name)
        elif name in known.templates:
            specs[name] = TemplateSpec.of(known.templates[name])
            if name in known.refs:
                refs[name] = known.refs[name]
            else:
                errors.append(
                    DefinitionError(
                        f"template {name!r} is not declared at module level in "
                        f"{config.clusters}/, so generated code cannot import it",
                        where=users[0].where("cluster_template_name"),
                        field="cluster_template_name",
                    )
                )
        elif derive:
            try:
                specs[name] = generated[name] = derive_template(name, label_sets)
            except DefinitionError as e:
                errors.append(
                    DefinitionError(
                        e.message, where=users[0].where("cluster_template_name"), field=e.field
                    )
                )
                continue
            refs[name] = derived_ref(name)
        else:
            try:
                lookup = TemplateCatalog()
                lookup.add(*known.templates.values())
                lookup.get(name, where=users[0].where("cluster_template_name"))
            except DefinitionError as e:
                errors.append(
                    DefinitionError(
                        f"{e.message} (declare it in the catalog, or use --derive-templates)",
                        where=e.where,
                        field="cluster_template_name",
                    )
                )
    variables: dict[str, str] = {}
    for name in sorted(generated):
        first = variables.setdefault(template_variable(name), name)
        if first != name:
            errors.append(
                DefinitionError(
                    f"templates {first!r} and {name!r} make the same Python name "
                    f"{template_variable(name)}",
                    field="cluster_template_name",
                )
            )
    for name, found in sorted(uuids.items()):
        users = by_template.get(name, [])
        if name in generated and derive:
            merged = _with_uuids(generated[name], found, users, errors)
            generated[name] = specs[name] = merged
        elif name in known.templates:
            declared = known.templates[name]
            value = uuid_value(found)
            if declared.uuid is None:
                for user in users:
                    notes[user.name].append(
                        f"needs a person: template {name!r} ({declared.where}) has no uuid; "
                        f"set uuid={value!r} from the state"
                    )
            elif declared.uuid != value and not _covers(declared.uuid, found):
                errors.append(
                    DefinitionError(
                        f"the state gives template {name!r} the id(s) {dict(found)}, its "
                        f"declaration at {declared.where} has uuid={declared.uuid!r}",
                        where=users[0].where("cluster_template_name") if users else "",
                        field="cluster_template_name",
                    )
                )
    written = list(generated.values()) if derive and generated else []
    return specs, refs, written


def uuid_value(found: Mapping[str, str]) -> str | dict[str, str]:
    """``ClusterTemplate(uuid=...)``: one string when no region is known, else region -> id."""
    if set(found) == {""}:
        return found[""]
    return {region: uuid for region, uuid in sorted(found.items()) if region}


def _covers(declared: str | Mapping[str, str], found: Mapping[str, str]) -> bool:
    if isinstance(declared, str):
        return all(uuid == declared for uuid in found.values())
    return all(declared.get(region) == uuid for region, uuid in found.items() if region)


def _with_uuids(
    spec: TemplateSpec,
    found: Mapping[str, str],
    users: Sequence[ImportedCluster],
    errors: list[DefinitionError],
) -> TemplateSpec:
    """``spec`` with the ids of the state added to those it has (a conflict is an error)."""
    have: dict[str, str] = {}
    if isinstance(spec.uuid, str):
        have[""] = spec.uuid
    elif spec.uuid is not None:
        have.update(spec.uuid)
    for region, uuid in found.items():
        if have.setdefault(region, uuid) != uuid:
            errors.append(
                DefinitionError(
                    f"template {spec.name!r} has id {have[region]!r} in region {region!r} "
                    f"already; the state gives {uuid!r}",
                    where=users[0].where("cluster_template_name") if users else "",
                    field="cluster_template_name",
                )
            )
    if "" in have and len(have) > 1:
        have.pop("")
    return dataclasses.replace(spec, uuid=uuid_value(have))


@dataclass(frozen=True, kw_only=True)
class ExistingProject:
    """An OpenStackProject the fleet declares outside the modules this import replaces."""

    construct_id: str
    where: str
    file: Path
    details: Mapping[str, str | None]


@dataclass(frozen=True, kw_only=True)
class ExistingFleet:
    """What the fleet declares already: projects to reuse, clusters not to declare twice."""

    projects: list[ExistingProject] = field(default_factory=list)
    clusters: dict[tuple[str, str], str] = field(default_factory=dict)
    """(environment, cluster name) -> ``file:line (id)``, outside the replaced modules."""
    ids: dict[str, str] = field(default_factory=dict)
    """Construct id -> ``file:line``, outside the replaced modules."""
    ours: dict[tuple[str, str], Path] = field(default_factory=dict)
    """(environment, cluster name) -> the replaced module that declares it."""


def _file_of(config: FleetConfig, where: str) -> Path:
    path = Path(where.rsplit(":", 1)[0])
    return (path if path.is_absolute() else config.root / path).resolve()


def scan_fleet(config: FleetConfig, ours: Mapping[str, Path]) -> ExistingFleet:
    """Load the fleet as ``fleet synth`` does and list its projects and clusters; those of
    ``ours`` (the modules this import rewrites) are kept apart."""
    if not config.clusters_dir.is_dir():
        return ExistingFleet()
    replaced = set(ours.values())
    fleet = load_fleet(config)
    found = ExistingFleet()
    for decl in fleet.declarations():
        file = _file_of(config, decl.where)
        mine = file in replaced
        if not mine:
            found.ids[decl.construct_id] = decl.where
        if isinstance(decl, OpenStackProject) and not mine:
            found.projects.append(
                ExistingProject(
                    construct_id=decl.construct_id,
                    where=decl.where,
                    file=file,
                    details=decl.details,
                )
            )
        if isinstance(decl, FleetCluster):
            for env in decl.environments:
                key = (env, decl.cloud_name(env))
                if mine:
                    found.ours[key] = file
                else:
                    found.clusters[key] = decl.context
    return found


def _our_modules(
    config: FleetConfig, options: ImportOptions, communities: set[str]
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


def generated_module(path: Path, title: str = "") -> bool:
    """Whether ``path`` is a module an import wrote (of ``title``'s community, if given):
    its first line is a one-line docstring (read as the literal it is) that says so."""
    try:
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    except (OSError, UnicodeDecodeError):
        return False
    if not (first.startswith(f'"""{GENERATED_PREFIX}') and first.endswith('"""')):
        return False
    try:
        about = ast.literal_eval(first)
    except (SyntaxError, ValueError):
        return False
    return isinstance(about, str) and title in about


_DETAILS = (
    ("project_id", "project-id", "project_id"),
    ("auth_url", "auth-url", "auth_url"),
    ("region", "region", "region_name"),
    ("interface", "interface", "interface"),
    ("identity_api_version", "identity-api-version", "identity_api_version"),
)
"""Connection field, OpenStackProject detail, tfvars key."""


def match_project(
    connection: Connection, projects: Sequence[ExistingProject]
) -> tuple[ExistingProject, str] | None:
    """The declared project ``connection`` is, and how it matched: by project id, else by
    project name and region."""
    if connection.project_id is not None:
        for project in projects:
            if project.details.get("project-id") == connection.project_id:
                return project, "project id"
    for project in projects:
        same_name = project.details.get("project-name") == connection.project_name
        if same_name and (project.details.get("region") or None) == connection.region:
            return project, "project name and region"
    return None


@dataclass(frozen=True, kw_only=True)
class Planned:
    """The modules to write and what they declare."""

    files: dict[Path, str]
    declarations: dict[Path, list[Declaration]]
    projects: dict[Path, list[ProjectDecl]]
    accepted: dict[str, frozenset[str]]
    """tfvars file -> keys left to a person (reported, so ``--verify`` does not expect them)."""


def uuid_values(uuid: str | Mapping[str, str] | None) -> set[str]:
    """A template's UUID(s): one, or one per region."""
    if isinstance(uuid, str):
        return {uuid}
    return set((uuid or {}).values())


def _with_given_uuids(
    written: list[TemplateSpec],
    given: Mapping[str, str],
    state: Mapping[str, Mapping[str, str]],
    clusters: Sequence[ImportedCluster],
    errors: list[DefinitionError],
) -> list[TemplateSpec]:
    """The derived templates with their UUIDs (``--template-uuid``, or the Terraform state's
    already merged in), or an error for each that has none: a cluster fails without its
    template's UUID, and tfvars do not hold it. A ``--template-uuid`` that differs from
    the state's is an error."""
    out: list[TemplateSpec] = []
    for spec in written:
        user = next((c for c in clusters if c.template == spec.name), None)
        where = user.where("cluster_template_name") if user else ""
        uuid = given.get(spec.name, spec.uuid)
        from_state = state.get(spec.name, {})
        if spec.name in given and from_state:
            differing = {
                r or "(no region)": u for r, u in from_state.items() if u != given[spec.name]
            }
            if differing:
                errors.append(
                    DefinitionError(
                        f"--template-uuid {spec.name}={given[spec.name]} differs from the "
                        f"Terraform state's id(s) {differing}; give one source, or make them agree",
                        where=where,
                        field="--template-uuid",
                    )
                )
            uuid = spec.uuid
        if uuid is None:
            errors.append(
                DefinitionError(
                    f"template {spec.name!r} has no UUID (tfvars name the template, Magnum "
                    f"stores its UUID): pass --template-uuid {spec.name}=<uuid>, from "
                    f"`openstack coe cluster template show {spec.name} -f value -c uuid`, "
                    "or the Terraform state of its clusters (--state, or fleet import tfstate)",
                    where=where,
                    field="cluster_template_name",
                )
            )
        elif not is_uuid(uuid) and isinstance(uuid, str):
            errors.append(
                DefinitionError(
                    f"{spec.name}: not a Magnum UUID: {uuid!r}",
                    field="--template-uuid",
                )
            )
        out.append(dataclasses.replace(spec, uuid=uuid))
    return out


def _modules(
    config: FleetConfig,
    options: ImportOptions,
    decls: Sequence[ClusterDecl],
    existing: ExistingFleet,
    errors: list[DefinitionError],
    notes: dict[str, list[str]],
) -> Planned:
    """One module per community (or the ``--out`` file): projects reused or declared,
    clusters merged across environments, each checked for clashes."""
    ours = _our_modules(config, options, {d.cluster.community for d in decls})
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
    match = match_project(connection, existing.projects)
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
        return ProjectDecl(variable=variable, connection=connection), []
    project, how = match
    lacking: list[tuple[str, str]] = []
    for attribute, detail, key in _DETAILS:
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
    options: ImportOptions,
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


def _pattern(decl: ClusterDecl, options: ImportOptions) -> str | None:
    """The cluster name with its environment segment as ``{env}`` (None: no such segment)."""
    parts = decl.cluster.name.split("-")
    if options.environment is not None or decl.environment not in parts:
        return None
    return "-".join("{env}" if part == decl.environment else part for part in parts)


def merge_environments(
    config: FleetConfig,
    options: ImportOptions,
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


def check_writable(path: Path, errors: list[DefinitionError]) -> None:
    """Only a module an import generated may be replaced."""
    if not path.exists():
        return
    try:
        generated = path.read_text(encoding="utf-8").startswith(f'"""{GENERATED_PREFIX}')
    except (OSError, UnicodeDecodeError):
        generated = False
    if not generated:
        errors.append(
            DefinitionError(
                "exists and was not written by `fleet import`; choose another --out",
                where=str(path),
            )
        )


def migration_report(
    planned: Planned, notes: Mapping[str, Sequence[str]], *, observe: bool, config: FleetConfig
) -> list[str]:
    """One line per imported cluster: where it went, as what, which project it reuses, how
    it is adopted, then what needs a person."""
    lines: list[str] = []
    for path, declarations in sorted(planned.declarations.items()):
        shown = relative(path, config)
        reused = {p.variable: p for p in planned.projects[path] if p.reused is not None}
        for decl in sorted(declarations, key=lambda d: d.construct_id):
            for member in decl.members:
                c = member.cluster
                parts = [f"{c.name} ({member.environment}): imported from {c.source} into {shown}"]
                if decl.merged:
                    others = [m.environment for m in decl.members if m is not member]
                    parts.append(f"merged as {decl.construct_id!r} with {', '.join(others)}")
                project = reused.get(decl.project)
                if project is not None:
                    parts.append(f"reuses project {project.reused!r} ({project.reused_from})")
                how = "Magnum UUID from state" if member.external_name else "name"
                policy = ", Observe only" if observe else ""
                parts.append(f"adopted as {member.adopted_as} ({how}{policy})")
                lines.append("; ".join(parts))
                lines.extend(f"{c.name} ({member.environment}): {note}" for note in notes[c.name])
    return lines


def relative(path: Path, config: FleetConfig) -> str:
    """``path`` relative to the project, for messages (as given when outside it)."""
    try:
        return str(path.relative_to(config.root.resolve()))
    except ValueError:
        return str(path)


def write_files(files: dict[Path, str], config: FleetConfig) -> list[Path]:
    """Write each file atomically (a temporary file, then a rename); sorted paths. Every
    module is checked first (:func:`check_generated`), so that none is written unless all
    have the shape an import writes."""
    check_generated(files, config.clusters_dir.name)
    for path, text in sorted(files.items()):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    return sorted(files)
