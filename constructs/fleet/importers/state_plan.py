"""``fleet import tfstate``: Magnum clusters from Terraform state, whatever HCL made it.

The states (:mod:`fleet.importers.tfstate`) hold evaluated values; the configuration, when
given (``--source``), says which of them the HCL sets (:mod:`fleet.importers.magnum_state`).
This module decides the declarations (one per cluster, or one for the same cluster in
several environments), their projects, templates and modules, renders the result inside
the fleet (:mod:`fleet.importers.render_check`), and reports what each value became.
Nothing is written here: the caller writes :attr:`StatePlan.files`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fleet.clouds.magnum.cluster import MagnumCluster
from fleet.clouds.magnum.pool import NodeGroup
from fleet.clouds.magnum.resolved import BOUND_LABELS
from fleet.clouds.magnum.template import ClusterTemplate, attribute_keywords
from fleet.core.config import FleetConfig
from fleet.core.credentials import credential_paths, shown
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.manifest import Manifest
from fleet.core.names import object_name_from
from fleet.core.options import options_of
from fleet.core.pysource import Call, Value
from fleet.importers.codegen import (
    FLEET,
    TEMPLATES_MODULE,
    project_variable,
    template_variable,
)
from fleet.importers.magnum_state import (
    AUTOSCALED,
    CARRIED,
    COMPUTED,
    CREATE_ONLY,
    DEFAULT,
    INHERITED,
    ImportedTemplate,
    StateCluster,
    StateImport,
    read_import,
    resource_block,
)
from fleet.importers.plan import (
    Catalog,
    ExistingFleet,
    check_writable,
    generated_module,
    load_catalog,
    match_project,
    relative,
    scan_fleet,
    uuid_values,
)
from fleet.importers.render_check import check_render
from fleet.importers.state_codegen import (
    ProjectCall,
    Source,
    TemplateDecl,
    cluster_module,
    emptied_module,
    templates_module,
)
from fleet.importers.state_declarations import (
    Member,
    PlannedDeclaration,
    cluster_keywords,
    declaration_call,
    earlier_comments,
    group_keywords,
    merge_problem,
    name_value,
    needs_pin,
    pinned_object_name,
    template_decl,
    why_pinned,
    with_object_name,
)
from fleet.importers.state_verify import Mismatch, check_cluster
from fleet.importers.tfstate import read_state_file
from fleet.importers.tfvars import Connection, bounds_refusal
from fleet.pipeline.synth import Synth
from fleet.terraform.hcl import Configuration, read_configuration
from fleet.terraform.state import StateFile, StateResource

_GENERIC_STEMS = ("terraform", "state", "default", "show", "tfstate")


@dataclass(frozen=True, kw_only=True)
class StateOptions:
    """The command line of ``fleet import tfstate`` (without ``--tfvars``)."""

    states: Sequence[tuple[Path, str | None]]
    """Each state file, with the environment given for it (``--state ENV=PATH``)."""
    sources: Sequence[Path] = ()
    """Terraform configurations (``--source``), each matched to the states it wrote."""
    out: Path | None = None
    environment: str | None = None
    observe: bool = False


@dataclass(frozen=True, kw_only=True)
class StatePlan:
    """The files to write (absolute path -> text), the declarations and the report."""

    files: dict[Path, str]
    declarations: list[PlannedDeclaration]
    templates: dict[str, ImportedTemplate]
    report: list[str] = field(default_factory=list)
    manifests: Mapping[str, Sequence[Manifest]] = field(default_factory=dict)
    """What the fleet renders with the files written, by environment (checked)."""


# --- reading -----------------------------------------------------------------------------------


def _configurations(
    files: Sequence[StateFile], sources: Sequence[Path], errors: list[DefinitionError]
) -> dict[str, Configuration]:
    """Each state's configuration: the ``--source`` folder with blocks for most of its
    Magnum resources (the first on a tie)."""
    read: list[Configuration] = []
    for source in sources:
        try:
            read.append(read_configuration(source))
        except DefinitionError as e:
            errors.append(e)
    found: dict[str, Configuration] = {}
    for state in files:
        best, score = None, 0
        for configuration in read:
            hits = sum(resource_block(configuration, r) is not None for r in state.resources)
            if hits > score:
                best, score = configuration, hits
        if best is not None:
            found[state.source] = best
    return found


# --- projects, templates, modules ------------------------------------------------------------


def _project_name(configuration: Configuration | None) -> str | None:
    """The project's name from the root module's ``provider "openstack"`` block, when it
    is a literal (``tenant_name`` or ``project_name``; nothing else of it is read)."""
    if configuration is None:
        return None
    root = configuration.modules.get(())
    block = root.find("provider", "openstack") if root is not None else None
    for argument in ("tenant_name", "project_name"):
        value = block.arguments.get(argument) if block is not None else None
        if isinstance(value, str) and value.startswith('"') and "${" not in value:
            return value[1:-1]
    return None


def _module_stem(state: StateFile, config: FleetConfig) -> str:
    """The module of a state's clusters: the state file's name, or its folder's when the
    name says nothing (``terraform.tfstate``, ``dev.tfstate``)."""
    name = state.path.name
    for suffix in (".show.json", ".tfstate.json", ".tfstate", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    if name.lower() in _GENERIC_STEMS or name in config.environments:
        name = state.path.resolve().parent.name
        if name.lower() == "state":
            name = state.path.resolve().parent.parent.name
    stem = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if not stem or stem[0].isdigit():
        stem = f"tf_{stem}"
    return stem


# --- the plan ------------------------------------------------------------------------------------


def _as_given(environment: str | None) -> str:
    """How a state file was named on the command line."""
    return "as STATE" if environment is None else f"as --state {environment}=PATH"


def plan_state_import(config: FleetConfig, options: StateOptions) -> StatePlan:
    """Read the states and decide every file; raises DefinitionErrors, writes nothing."""
    errors: list[DefinitionError] = []
    if options.environment is not None:
        config.check_environment(options.environment, field="--environment")
    files: list[StateFile] = []
    given: dict[Path, str | None] = {}
    for path, env in options.states:
        key = path.resolve()
        if key in given:
            first, then = _as_given(given[key]), _as_given(env)
            how = f" ({first} and {then})" if first != then else ""
            errors.append(
                DefinitionError(f"given twice{how}: pass each state file once", where=str(path))
            )
            continue
        given[key] = env
        if env is not None:
            try:
                config.check_environment(env, field="--state")
            except DefinitionError as e:
                errors.append(e)
                continue
        try:
            files.append(read_state_file(path, environment=env))
        except DefinitionError as e:
            errors.append(e)
    configurations = _configurations(files, options.sources, errors)
    if errors:
        raise DefinitionErrors(errors)
    catalog = load_catalog(config)
    model = read_import(
        files,
        config,
        environment=options.environment,
        configurations=configurations,
        declared={u: t for t in catalog.templates.values() for u in uuid_values(t.uuid)},
    )
    planner = _Planner(config, options, model, configurations, catalog)
    return planner.plan()


@dataclass(frozen=True, kw_only=True)
class _Rendered:
    """One attempt: the declarations, their files, the render, what it changes."""

    declarations: list[PlannedDeclaration]
    files: dict[Path, str]
    synth: Synth
    mismatches: list[Mismatch]


class _Planner:
    """One import's decisions, made in order: modules, projects, templates, declarations."""

    def __init__(
        self,
        config: FleetConfig,
        options: StateOptions,
        model: StateImport,
        configurations: Mapping[str, Configuration],
        catalog: Catalog,
    ) -> None:
        self.config = config
        self.options = options
        self.model = model
        self.configurations = configurations
        self.catalog = catalog
        self.errors: list[DefinitionError] = []
        self.notes: dict[tuple[str, str], list[str]] = {}

    # -- modules
    def module_of(self, state: StateFile) -> Path:
        if self.options.out is not None:
            return self.options.out.resolve()
        return (self.config.clusters_dir / f"{_module_stem(state, self.config)}.py").resolve()

    def plan(self) -> StatePlan:
        modules = {c.state.source: self.module_of(c.state) for c in self.model.clusters}
        ours = {str(p): p for p in set(modules.values()) if generated_module(p)}
        existing = scan_fleet(self.config, ours)
        for cluster in self.model.clusters:
            self.notes[(cluster.environment, cluster.magnum_name)] = list(cluster.notes)
        template_refs, template_file = self.templates(self.catalog)
        for cluster in self.model.clusters:
            self.check_labels(cluster)
            self.check_credentials(cluster)
        promoted: dict[str, frozenset[str]] = {}
        rendered = self.render(existing, modules, template_refs, template_file, promoted)
        # An inherited value the fleet renders anyway (its own default) is declared with
        # the state's value, once; any other difference is an error.
        more = _promotions(rendered.mismatches)
        if more:
            promoted = dict(more)
            rendered = self.render(existing, modules, template_refs, template_file, promoted)
        declarations, files, synth, mismatches = (
            rendered.declarations,
            rendered.files,
            rendered.synth,
            rendered.mismatches,
        )
        if mismatches:
            raise DefinitionErrors(
                [
                    DefinitionError(
                        f"{x.message}: the import would change it (nothing written)",
                        where=x.where,
                        field=x.attribute,
                    )
                    for x in mismatches
                ]
            )
        for where, attributes in sorted(promoted.items()):
            for cluster in self.model.clusters:
                if cluster.where == where or any(
                    g.resource.where == where for g in cluster.node_groups
                ):
                    self.notes[(cluster.environment, cluster.magnum_name)].append(
                        f"declared though inherited ({', '.join(sorted(attributes))} of "
                        f"{where}): the fleet renders another value when it is left out"
                    )
        used = {c.root for c in self.configurations.values()}
        unused = [
            f"--source {source}: declares none of the states' Magnum resources: not read"
            for source in self.options.sources
            if source not in used
        ]
        report = [*self.model.ignored, *unused, *self.report(declarations)]
        return StatePlan(
            files=files,
            declarations=declarations,
            templates=dict(self.model.templates),
            report=report,
            manifests=synth.manifests,
        )

    def render(
        self,
        existing: ExistingFleet,
        modules: Mapping[str, Path],
        template_refs: Mapping[str, tuple[str, str]],
        template_file: tuple[Path, str] | None,
        promoted: Mapping[str, frozenset[str]],
    ) -> _Rendered:
        """Build the modules, render them in the fleet, and compare with the states."""
        declarations, files, sources = self.build(existing, modules, template_refs, promoted)
        if template_file is not None:
            files[template_file[0]] = template_file[1]
        for path in files:
            check_writable(path, self.errors)
        if self.errors:
            raise DefinitionErrors(self.errors)
        envs = sorted(
            {m.cluster.environment for d in declarations for m in d.members},
            key=self.config.environments.index,
        )
        translate = _Translator(sources, declarations).translate
        synth = check_render(self.config, files, envs, translate)
        mismatches = [
            x
            for d in declarations
            for m in d.members
            for x in check_cluster(m.cluster, synth.manifests.get(m.cluster.environment, []))
        ]
        return _Rendered(declarations=declarations, files=files, synth=synth, mismatches=mismatches)

    def build(
        self,
        existing: ExistingFleet,
        modules: Mapping[str, Path],
        template_refs: Mapping[str, tuple[str, str]],
        promoted: Mapping[str, frozenset[str]],
    ) -> tuple[list[PlannedDeclaration], dict[Path, str], dict[Path, Source]]:
        """The declarations and the text of their modules."""
        projects: dict[tuple[str, str], ProjectCall] = {}
        members: list[Member] = []
        for cluster in self.model.clusters:
            project, region = self.project(cluster, existing, projects)
            keywords, origins, notes = cluster_keywords(
                cluster,
                template_refs[cluster.template.uuid][1],
                project,
                region,
                self.options.observe,
                promoted.get(cluster.where, frozenset()),
            )
            self.check_bounds(cluster, keywords)
            groups: dict[str, dict[str, Value]] = {}
            object_names: dict[str, str] = {}
            for group in cluster.node_groups:
                found = group_keywords(
                    group, notes, promoted.get(group.resource.where, frozenset())
                )
                derived = object_name_from(group.magnum_name)
                other = object_names.get(derived)
                if needs_pin(derived, other is not None):
                    pin = pinned_object_name(group.magnum_name, "nodegroup")
                    taken = None if other is None else f"node group {other!r}"
                    notes.append(
                        f"node group {group.magnum_name!r}: object name pinned to {pin!r} "
                        f"(object_name=): {why_pinned(derived, taken)}"
                    )
                    found, derived = with_object_name(found, pin), pin
                object_names[derived] = group.magnum_name
                groups[group.resource.address] = found
                for keyword in found:
                    origins[f"node_groups[{group.magnum_name}].{keyword}"] = keyword
            self.notes[(cluster.environment, cluster.magnum_name)].extend(notes)
            members.append(
                Member(
                    cluster=cluster,
                    keywords=keywords,
                    groups=groups,
                    origins=origins,
                    project=project,
                    module=modules[cluster.state.source],
                )
            )
        declarations = self.declarations(members, existing)
        files: dict[Path, str] = {}
        sources: dict[Path, Source] = {}
        by_module: dict[Path, list[PlannedDeclaration]] = {}
        for decl in declarations:
            by_module.setdefault(decl.module, []).append(decl)
        declared: dict[str, Path] = {}
        for path, decls in sorted(by_module.items()):
            module_projects = {
                m.project.variable: self.project_in(m.project, path, declared)
                for d in decls
                for m in d.members
            }
            imports: dict[str, set[str]] = {}
            for decl in decls:
                for member in decl.members:
                    origin, variable = template_refs[member.cluster.template.uuid]
                    imports.setdefault(origin, set()).add(variable)
            states = sorted({m.cluster.state.path.name for d in decls for m in d.members})
            written = cluster_module(
                title=", ".join(states),
                projects=list(module_projects.values()),
                clusters=[declaration_call(d) for d in decls],
                template_imports=imports,
            )
            files[path] = written.text
            sources[path] = written
        for state, path in sorted(modules.items()):
            if path not in files and path.is_file() and generated_module(path):
                moved = sorted(
                    {
                        relative(d.module, self.config)
                        for d in declarations
                        if any(m.cluster.state.source == state for m in d.members)
                    }
                )
                files[path] = emptied_module(title=Path(state).name, moved_to=moved)
        return declarations, files, sources

    # -- projects
    def project_in(
        self, project: ProjectCall, module: Path, declared: dict[str, Path]
    ) -> ProjectCall:
        """``project`` as ``module`` declares it: the first module that uses a new project
        declares it, the others look it up (one declaration of a construct id)."""
        if project.call is None:
            return project
        first = declared.setdefault(project.variable, module)
        if first == module:
            return project
        return ProjectCall(
            variable=project.variable,
            reused=str(project.call.positional[1]),
            reused_from=relative(first, self.config),
        )

    def project(
        self,
        cluster: StateCluster,
        existing: ExistingFleet,
        projects: dict[tuple[str, str], ProjectCall],
    ) -> tuple[ProjectCall, str | None]:
        key = (cluster.project_id, cluster.region)
        configuration = self.configurations.get(cluster.state.source)
        name = _project_name(configuration)
        connection = Connection(
            project_name=name or cluster.project_id,
            project_id=cluster.project_id or None,
            region=cluster.region or None,
        )
        found = projects.get(key)
        match = match_project(connection, existing.projects)
        if found is None:
            if match is not None:
                project, how = match
                found = ProjectCall(
                    variable=project_variable(connection),
                    reused=project.construct_id,
                    reused_from=f"{project.where}, the same {how}",
                )
            else:
                construct_id = connection.provider_config_name
                if construct_id in self.config.environments:
                    construct_id = f"{construct_id}-project"
                call = Call(
                    callee="OpenStackProject",
                    positional=(FLEET, construct_id),
                    keywords=tuple(
                        (k, v)
                        for k, v in (
                            ("project_name", connection.project_name),
                            ("project_id", connection.project_id),
                            ("region", connection.region),
                        )
                        if v
                    ),
                )
                variable = project_variable(connection) if name is not None else "project"
                taken = {p.variable for p in projects.values()}
                if variable in taken:
                    variable = f"{variable}_{len(taken) + 1}"
                found = ProjectCall(variable=variable, call=call)
                if name is None:
                    self.notes.setdefault((cluster.environment, cluster.magnum_name), []).append(
                        f"needs a person: the state gives project id {cluster.project_id}, not "
                        "its name: declared with project_name set to the id (pass --source "
                        "with a provider block that names it, or edit it)"
                    )
            projects[key] = found
        region = None
        if match is not None and (match[0].details.get("region") or "") != cluster.region:
            region = cluster.region or None
        return found, region

    # -- templates
    def templates(
        self, catalog: Catalog
    ) -> tuple[dict[str, tuple[str, str]], tuple[Path, str] | None]:
        """Template UUID -> (module, variable) to import it from; and the catalog module
        to write (the generated one, with earlier imports' templates kept)."""
        refs: dict[str, tuple[str, str]] = {}
        by_uuid: dict[str, tuple[str, ClusterTemplate]] = {}
        for name, template in catalog.templates.items():
            for uuid in uuid_values(template.uuid):
                by_uuid.setdefault(uuid, (name, template))
        module_name = f"{self.config.clusters_dir.name}.{TEMPLATES_MODULE}"
        generated: dict[str, TemplateDecl] = {}
        catalog_path = (self.config.clusters_dir / f"{TEMPLATES_MODULE}.py").resolve()
        earlier = earlier_comments(catalog_path)
        for spec in catalog.generated.values():
            ref = catalog.refs.get(spec.name)
            variable = ref.variable if ref is not None else template_variable(spec.name)
            keywords: list[tuple[str, Value]] = [
                ("name", spec.name),
                ("kubernetes_version", spec.kubernetes_version),
            ]
            if spec.base_labels:
                keywords.append(("base_labels", dict(spec.base_labels)))
            if spec.optional_labels:
                keywords.append(("optional_labels", [*spec.optional_labels]))
            if spec.changing_labels:
                keywords.append(("changing_labels", [*spec.changing_labels]))
            if spec.uuid is not None:
                keywords.append(
                    ("uuid", spec.uuid if isinstance(spec.uuid, str) else dict(spec.uuid))
                )
            keywords.extend(attribute_keywords(spec.attributes))
            generated[variable] = TemplateDecl(
                variable=variable, keywords=tuple(keywords), comment=earlier.get(variable, ())
            )
        optional: dict[str, set[str]] = {}
        for cluster in self.model.clusters:
            keys = optional.setdefault(cluster.template.uuid, set())
            keys.update(cluster.magnum_labels)
        names = {t.magnum_name for t in self.model.templates.values()}
        for uuid, imported in sorted(self.model.templates.items()):
            known = by_uuid.get(uuid)
            ours = known is not None and known[0] in catalog.generated
            if (
                known is not None
                and known[0] in catalog.refs
                and (not ours or imported.known_from == "fleet")
            ):
                # Declared by a person (kept as written), or by an earlier import and not in
                # these states (kept, with the attributes it declares).
                ref = catalog.refs[known[0]]
                refs[uuid] = (ref.module, ref.variable)
                if not ours:
                    self.compare_declared(imported, known[1])
                continue
            clash = catalog.templates.get(imported.magnum_name)
            if clash is not None and uuid not in uuid_values(clash.uuid):
                self.errors.append(
                    DefinitionError(
                        f"template {imported.magnum_name!r} ({uuid}) is declared at "
                        f"{clash.where} with another UUID",
                        where=imported.where,
                        field="id",
                    )
                )
                continue
            variable = template_variable(imported.magnum_name)
            if sum(template_variable(n) == variable for n in names) > 1:
                variable = f"{variable}_{uuid[:8].upper()}"
            held = {path.split(".")[0] for path, _ in credential_paths(dict(imported.values))}
            held |= imported.sensitive & set(imported.values)
            if held:
                for cluster in self.model.clusters:
                    if cluster.template.uuid == uuid:
                        self.notes[(cluster.environment, cluster.magnum_name)].append(
                            f"template {imported.magnum_name!r}: {', '.join(sorted(held))} "
                            "hold(s) credential material or are marked sensitive in the "
                            "state: not written"
                        )
            found = credential_paths({"labels": dict(imported.labels)})
            if "labels" in imported.sensitive and imported.labels:
                found.append(("labels", SENSITIVE))
            for place, what in found:
                self.errors.append(
                    DefinitionError(
                        f"holds credential material ({what}): a template's labels are "
                        "written into the fleet; the import writes nothing",
                        where=imported.where,
                        field=place,
                    )
                )
            generated[variable] = template_decl(imported, variable, optional.get(uuid, set()), held)
            refs[uuid] = (module_name, variable)
        if not any(module == module_name for module, _ in refs.values()):
            return refs, None
        return refs, (catalog_path, templates_module(list(generated.values())))

    def compare_declared(self, imported: ImportedTemplate, declared: ClusterTemplate) -> None:
        """A note for each attribute a person's template declares otherwise than the state
        holds it (the declaration is kept: it is theirs to correct)."""
        if imported.known_from not in ("resource", "data-source"):
            return  # not in the states: nothing to compare with
        differ = [
            f"{attribute} {shown(value, attribute)} (the state: "
            f"{shown(imported.values.get(attribute), attribute)})"
            for attribute, value in declared.magnum_attributes().items()
            if value != imported.values.get(attribute)
        ]
        if not differ:
            return
        for cluster in self.model.clusters:
            if cluster.template.uuid == imported.uuid:
                self.notes[(cluster.environment, cluster.magnum_name)].append(
                    f"template {declared.name!r} ({declared.where}) declares "
                    f"{'; '.join(differ)}: correct its declaration"
                )

    # -- credentials
    def check_credentials(self, cluster: StateCluster) -> None:
        """A declared value holding credential material: refused, named by its place."""
        objects = [(cluster.resource, cluster.declared())]
        objects += [(g.resource, g.declared()) for g in cluster.node_groups]
        for resource, values in objects:
            where = resource.where
            found = credential_paths(values)
            found += [(a, SENSITIVE) for a in sorted(resource.sensitive & set(values))]
            for path, what in found:
                self.errors.append(
                    DefinitionError(
                        f"holds credential material ({what}): the fleet would write it into "
                        "the repository and dist/; the import writes nothing",
                        where=where,
                        field=path,
                    )
                )

    # -- labels the fleet cannot express
    def check_bounds(self, cluster: StateCluster, keywords: Mapping[str, Value]) -> None:
        """Autoscaler bounds left in the labels to declare (see :func:`autoscaler_bounds`):
        MagnumCluster cannot write them as Magnum holds them."""
        labels = keywords.get("labels")
        if isinstance(labels, Mapping) and any(k in labels for k in BOUND_LABELS):
            own = {str(k): str(v) for k, v in labels.items()}
            self.errors.append(
                DefinitionError(
                    f"{bounds_refusal({**cluster.magnum_labels, **own})}; leave its state "
                    "out of the import",
                    where=cluster.where,
                    field="labels",
                )
            )

    def check_labels(self, cluster: StateCluster) -> None:
        if cluster.merge_labels is True or not cluster.labels:
            return
        missing = sorted(set(cluster.template.labels) - set(cluster.labels))
        if missing:
            self.errors.append(
                DefinitionError(
                    f"lacks label(s) {', '.join(missing)} of its template "
                    f"{cluster.template.magnum_name!r} without merge_labels: a MagnumCluster "
                    "always carries its template's labels, so it cannot be declared against it",
                    where=cluster.where,
                    field="labels",
                )
            )

    # -- declarations
    def declarations(
        self, members: Sequence[Member], existing: ExistingFleet
    ) -> list[PlannedDeclaration]:
        groups: dict[str, list[Member]] = {}
        for member in members:
            groups.setdefault(member.cluster.resource.address, []).append(member)
        order = {env: i for i, env in enumerate(self.config.environments)}
        planned: list[PlannedDeclaration] = []
        for address, found in groups.items():
            found.sort(key=lambda m: order.get(m.cluster.environment, len(order)))
            sources = {m.cluster.state.source for m in found}
            problem = merge_problem(found) if len(found) > 1 else None
            if len(found) > 1 and len(sources) == len(found) and problem is None:
                name = name_value(found)
                stem = name if isinstance(name, str) else found[-1].cluster.magnum_name
                construct_id = object_name_from(stem.replace("-{env}", "").replace("{env}-", ""))
                planned.append(
                    PlannedDeclaration(
                        construct_id=construct_id, members=tuple(found), module=found[0].module
                    )
                )
                continue
            note = f"not merged across environments at {address}: {problem}" if problem else ""
            for member in found:
                planned.append(
                    PlannedDeclaration(
                        construct_id=object_name_from(member.cluster.magnum_name),
                        members=(member,),
                        module=member.module,
                        merge_note=note,
                    )
                )
        ids: dict[str, str] = {}
        for index, decl in enumerate(planned):
            where = decl.members[0].cluster.where
            for member in decl.members:
                key = (member.cluster.environment, member.cluster.magnum_name)
                declared = existing.clusters.get(key)
                if declared is not None:
                    self.errors.append(
                        DefinitionError(
                            f"cluster {member.cluster.magnum_name!r} ({key[0]}) is already "
                            f"declared at {declared}: leave its state out, or remove that "
                            "declaration first",
                            where=member.cluster.where,
                            field="name",
                        )
                    )
            clash = existing.ids.get(decl.construct_id) or ids.get(decl.construct_id)
            if needs_pin(decl.construct_id, clash is not None):
                # A Magnum name need not give a usable Kubernetes name: the import pins one
                # (object_name=), which never changes afterwards, and says why.
                named = name_value(decl.members)
                pin = pinned_object_name(
                    named if isinstance(named, str) else decl.members[-1].cluster.magnum_name,
                    "cluster",
                )
                why = why_pinned(decl.construct_id, clash)
                for member in decl.members:
                    member.keywords.update(with_object_name(member.keywords, pin))
                    self.notes[(member.cluster.environment, member.cluster.magnum_name)].append(
                        f"object name pinned to {pin!r} (object_name=): {why}"
                    )
                decl = planned[index] = replace(decl, construct_id=pin)
            ids[decl.construct_id] = where
        return planned

    # -- report
    def report(self, declarations: Sequence[PlannedDeclaration]) -> list[str]:
        lines: list[str] = []
        sourced = bool(self.options.sources)
        for decl in sorted(declarations, key=lambda d: d.construct_id):
            for member in decl.members:
                c = member.cluster
                head = f"{c.magnum_name} ({c.environment})"
                shown = relative(member.module, self.config)
                others = [m.cluster.environment for m in decl.members if m is not member]
                merged = f", merged with {', '.join(others)}" if others else ""
                lines.append(
                    f"{head}: {c.where} -> {shown} as {decl.construct_id!r}{merged}; "
                    f"environment: {c.environment_rule}"
                )
                policy = " (Observe only)" if self.options.observe else ""
                lines.append(
                    f"{head}: adopts Magnum cluster {c.uuid}{policy}; template "
                    f"{c.template.magnum_name!r} ({c.template.uuid}, {c.template.known_from})"
                )
                lines.extend(_tainted(head, c.resource))
                lines.extend(f"{head}: {line}" for line in _fates(c.values, "the template"))
                for group in c.node_groups:
                    g = f"{head}: node group {group.magnum_name!r}"
                    lines.append(f"{g}: adopts {group.external_name}")
                    lines.extend(_tainted(g, group.resource))
                    lines.extend(f"{g}: {line}" for line in _fates(group.values, "its parent"))
                if not sourced:
                    lines.append(
                        f"{head}: without --source the configuration's lifecycle ignore_changes "
                        "is unknown: every declared value (node_count included) will be enforced"
                    )
                if decl.merge_note:
                    lines.append(f"{head}: {decl.merge_note}")
                notes = self.notes.get((c.environment, c.magnum_name), [])
                lines.extend(f"{head}: {note}" for note in dict.fromkeys(notes))
        return lines


SENSITIVE = "the state marks it sensitive"
"""Why a value Terraform marks sensitive (``sensitive_attributes``, ``sensitive_values``)
is never written, whatever it looks like."""


def _tainted(head: str, resource: StateResource) -> list[str]:
    """The report line for an object the state marks tainted, if it is."""
    if not resource.tainted:
        return []
    return [
        f"{head}: tainted in the state (Terraform would destroy and re-create it on its next "
        "apply): adopted as it is, as Magnum holds it"
    ]


def _promotions(mismatches: Sequence[Mismatch]) -> dict[str, frozenset[str]]:
    """Inherited (or default) values the fleet renders otherwise: declared with the state's
    value on the next attempt (by object, Terraform attribute)."""
    found: dict[str, set[str]] = {}
    for mismatch in mismatches:
        if mismatch.fate in (INHERITED, DEFAULT):
            found.setdefault(mismatch.where, set()).add(mismatch.attribute)
    return {k: frozenset(v) for k, v in found.items()}


def _fates(values: Sequence[Any], parent: str) -> list[str]:
    """``carried: a, b; inherited from the template: c (rule)`` lines, names only: a value
    may be a secret, its attribute name is not."""
    out: list[str] = []
    groups: dict[tuple[str, str], list[str]] = {}
    for value in values:
        if value.fate in (CARRIED, CREATE_ONLY, AUTOSCALED, INHERITED, COMPUTED):
            groups.setdefault((value.fate, value.rule), []).append(value.attribute)
    titles = {
        CARRIED: "carried",
        CREATE_ONLY: "create-only (lifecycle ignore_changes: set at creation, never enforced)",
        AUTOSCALED: "size at creation only (spec.initProvider; then resized by the autoscaler)",
        INHERITED: f"inherited from {parent}, left unset",
        COMPUTED: "computed, left to Magnum",
    }
    for fate in (CARRIED, CREATE_ONLY, AUTOSCALED, INHERITED, COMPUTED):
        parts = [f"{', '.join(names)} ({rule})" for (f, rule), names in groups.items() if f == fate]
        if parts:
            out.append(f"{titles[fate]}: {'; '.join(parts)}")
    return out


class _Translator:
    """A problem of the rendered result, as the input value that caused it."""

    def __init__(
        self, sources: Mapping[Path, Any], declarations: Sequence[PlannedDeclaration]
    ) -> None:
        self.sources = {path.name: source for path, source in sources.items()}
        self.declarations = {d.construct_id: d for d in declarations}

    def translate(
        self, file: str, line: int, what: str, field: str, message: str
    ) -> DefinitionError | None:
        source = self.sources.get(file)
        if source is None:
            return None
        for construct_id, (start, end) in source.spans.items():
            if not start <= line <= end:
                continue
            member = self.declarations[construct_id].members[0]
            cluster = member.cluster
            for group in cluster.node_groups:
                object_part = object_name_from(group.magnum_name)
                prefix = f"node_groups[{group.magnum_name}]."
                if (
                    f"(node group {group.magnum_name})" in what
                    or what.endswith(f"-{object_part}")
                    or field.startswith(prefix)
                ):
                    return DefinitionError(
                        f"{message} (the import writes nothing)",
                        where=group.resource.where,
                        field=_attribute(field.removeprefix(prefix), NodeGroup),
                    )
            keyword = field.split(".")[-1] if field.startswith("spec.") else field
            attribute = member.origins.get(keyword) or _attribute(field, MagnumCluster)
            return DefinitionError(
                f"{message} (the import writes nothing)", where=cluster.where, field=attribute
            )
        return None


def _attribute(field: str, cls: type) -> str:
    """The Terraform attribute of a keyword or a rendered field (``spec.forProvider.flavorId``
    -> ``flavor_id``), else the field as given."""
    options = options_of(cls)
    if field in options and options[field].terraform:
        return options[field].terraform
    path = tuple(field.split("."))
    for option in options.values():
        if option.render and option.render == path[: len(option.render)] and option.terraform:
            return option.terraform
    last = path[-1]
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), last)
