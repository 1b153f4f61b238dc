"""``fleet import tfstate``: clusters from Terraform state, whatever HCL made it.

The states hold evaluated values (:mod:`fleet.terraform.state`, the resource types the
clouds' importers read); the configuration, when given (``--source``), says which of them
the HCL sets. Every attribute of a resource read is placed or dropped by its importer, or
the import is refused (:func:`fleet.terraform.attributes.unplaced_errors`). Each importer
says what its clusters are (:class:`fleet.clouds.importer.StatePlanner`); this module places
their modules, merges the same cluster across environments
(:mod:`fleet.importers.state_declarations`), writes the modules' text
(:mod:`fleet.importers.state_modules`), renders the result inside the fleet
(:mod:`fleet.importers.render_check`), has each importer verify every value against the
render, and reports. Nothing is written here: the caller writes :attr:`StatePlan.files`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fleet.clouds.importer import (
    CloudImporter,
    ExistingFleet,
    GeneratedCode,
    ImportedCluster,
    Mismatch,
    Notes,
    StatePlanner,
    StateRequest,
)
from fleet.codegen.files import check_writable, generated_module, relative
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.manifest import Manifest
from fleet.core.names import object_name_from
from fleet.core.options import options_of
from fleet.importers.fleet_view import access
from fleet.importers.registry import cloud_importers
from fleet.importers.render_check import check_render
from fleet.importers.state_declarations import (
    PlannedDeclaration,
    declaration_call,
    plan_declarations,
)
from fleet.importers.state_modules import (
    Source,
    cluster_module,
    emptied_module,
    module_stem,
    shared_in,
)
from fleet.terraform.attributes import DEFAULT, INHERITED, unplaced_errors
from fleet.terraform.hcl import Configuration, read_configuration, resource_block
from fleet.terraform.state import StateFile, read_state_file


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
    options: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """The importers' own options (flag -> values), passed to them as given."""


@dataclass(frozen=True, kw_only=True)
class StatePlan:
    """The files to write (absolute path -> text), the declarations and the report."""

    files: dict[Path, str]
    declarations: list[PlannedDeclaration]
    planners: tuple[StatePlanner, ...] = ()
    """Each importer's decisions (what its states hold)."""
    report: list[str] = field(default_factory=list)
    manifests: Mapping[str, Sequence[Manifest]] = field(default_factory=dict)
    """What the fleet renders with the files written, by environment (checked)."""


# --- reading -----------------------------------------------------------------------------------


def _as_given(environment: str | None) -> str:
    """How a state file was named on the command line."""
    return "as STATE" if environment is None else f"as --state {environment}=PATH"


def _read_states(
    config: FleetConfig, options: StateOptions, importers: Sequence[CloudImporter]
) -> tuple[list[StateFile], list[DefinitionError]]:
    """Every state given, read for the importers' resource types, each once."""
    schemas = {t: s.schema() for i in importers for t, s in i.specs.items()}
    errors: list[DefinitionError] = []
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
            files.append(read_state_file(path, schemas, environment=env))
        except DefinitionError as e:
            errors.append(e)
    for importer in importers:
        resources = [r for f in files for r in f.resources]
        errors.extend(unplaced_errors(resources, importer.specs, importer.name))
    return files, errors


def _configurations(
    files: Sequence[StateFile], sources: Sequence[Path], errors: list[DefinitionError]
) -> dict[str, Configuration]:
    """Each state's configuration: the ``--source`` folder with blocks for most of the
    resources read (the first on a tie)."""
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


def _importers_for(
    files: Sequence[StateFile], importers: Sequence[CloudImporter]
) -> list[CloudImporter]:
    """The importers whose clusters the states hold (all of them when none is: each says
    what it found nothing of)."""
    types = {r.type for f in files for r in f.resources}
    found = [i for i in importers if i.clusters & types]
    return found or list(importers)


def plan_state_import(
    config: FleetConfig,
    options: StateOptions,
    importers: Sequence[CloudImporter] | None = None,
) -> StatePlan:
    """Read the states and decide every file; raises DefinitionErrors, writes nothing.
    ``importers``: the clouds' importers (default: every plug-in's)."""
    every = tuple(cloud_importers() if importers is None else importers)
    if options.environment is not None:
        config.check_environment(options.environment, field="--environment")
    files, errors = _read_states(config, options, every)
    configurations = _configurations(files, options.sources, errors)
    if errors:
        raise DefinitionErrors(errors)
    request = StateRequest(
        config=config,
        files=files,
        environment=options.environment,
        configurations=configurations,
        fleet=access(config),
        observe=options.observe,
        sourced=bool(options.sources),
        options=options.options,
    )
    found: list[DefinitionError] = []
    planners: list[tuple[CloudImporter, StatePlanner]] = []
    for importer in _importers_for(files, every):
        try:
            planners.append((importer, importer.plan_states(request)))
        except DefinitionErrors as e:
            found.extend(e.errors)
        except DefinitionError as e:
            found.append(e)
    if found:
        raise found[0] if len(found) == 1 else DefinitionErrors(found)
    return _Orchestration(config, options, planners, configurations, every).plan()


@dataclass(frozen=True, kw_only=True)
class _Rendered:
    """One attempt: the declarations, their files, the render, what it changes."""

    declarations: list[PlannedDeclaration]
    files: dict[Path, str]
    manifests: Mapping[str, Sequence[Manifest]]
    mismatches: list[Mismatch]


class _Orchestration:
    """One import's decisions, made in order: modules, what the clusters share,
    declarations, the render, the report."""

    def __init__(
        self,
        config: FleetConfig,
        options: StateOptions,
        planners: Sequence[tuple[CloudImporter, StatePlanner]],
        configurations: Mapping[str, Configuration],
        importers: Sequence[CloudImporter],
    ) -> None:
        self.config = config
        self.options = options
        self.planners = planners
        self.configurations = configurations
        self.importers = importers
        self.errors: list[DefinitionError] = []
        self.notes: Notes = {}

    def module_of(self, state: StateFile) -> Path:
        """Where a state's clusters go: ``--out``, else a module named after the state."""
        if self.options.out is not None:
            return self.options.out.resolve()
        return (self.config.clusters_dir / f"{module_stem(state, self.config)}.py").resolve()

    def modules(self) -> dict[tuple[str, str], Path]:
        """(importer, state source) -> the module of that importer's clusters of the
        state: :meth:`module_of`, suffixed ``_<importer>`` for every importer but the first
        whose clusters would share it (a module is written by one importer)."""
        out: dict[tuple[str, str], Path] = {}
        owner: dict[Path, str] = {}
        for importer, planner in self.planners:
            for cluster in planner.clusters:
                path = self.module_of(cluster.state)
                first = owner.setdefault(path, importer.name)
                if first != importer.name:
                    suffix = re.sub(r"[^a-z0-9]+", "_", importer.name.lower()).strip("_")
                    path = path.with_name(f"{path.stem}_{suffix}.py")
                out[(importer.name, cluster.state.source)] = path
        return out

    @property
    def clusters(self) -> list[ImportedCluster]:
        """Every cluster of every importer."""
        return [c for _, p in self.planners for c in p.clusters]

    def plan(self) -> StatePlan:
        """Every decision, rendered and verified (raises DefinitionErrors)."""
        modules = self.modules()
        ours = {str(p): p for p in set(modules.values()) if generated_module(p)}
        existing = access(self.config).existing(ours)
        shared: dict[Path, str] = {}
        for _, planner in self.planners:
            shared.update(planner.prepare(existing, self.notes))
        promoted: dict[str, frozenset[str]] = {}
        rendered = self.render(existing, modules, shared, promoted)
        # An inherited value the fleet renders anyway (its own default) is declared with
        # the state's value, once; any other difference is an error.
        more = _promotions(rendered.mismatches)
        if more:
            promoted = dict(more)
            rendered = self.render(existing, modules, shared, promoted)
        if rendered.mismatches:
            raise DefinitionErrors(
                [
                    DefinitionError(
                        f"{x.message}: the import would change it (nothing written)",
                        where=x.where,
                        field=x.attribute,
                    )
                    for x in rendered.mismatches
                ]
            )
        for where, attributes in sorted(promoted.items()):
            for cluster in self.clusters:
                if cluster.where == where or any(p.resource.where == where for p in cluster.pools):
                    self.notes.setdefault((cluster.environment, cluster.name), []).append(
                        f"declared though inherited ({', '.join(sorted(attributes))} of "
                        f"{where}): the fleet renders another value when it is left out"
                    )
        used = {c.root for c in self.configurations.values()}
        clouds = " or ".join(i.name for i in self.importers)
        unused = [
            f"--source {source}: declares none of the states' {clouds} resources: not read"
            for source in self.options.sources
            if source not in used
        ]
        ignored = list(dict.fromkeys(line for _, p in self.planners for line in p.ignored))
        return StatePlan(
            files=rendered.files,
            declarations=rendered.declarations,
            planners=tuple(p for _, p in self.planners),
            report=[*ignored, *unused, *self.report(rendered.declarations)],
            manifests=rendered.manifests,
        )

    def render(
        self,
        existing: ExistingFleet,
        modules: Mapping[tuple[str, str], Path],
        shared: Mapping[Path, str],
        promoted: Mapping[str, frozenset[str]],
    ) -> _Rendered:
        """Build the modules, render them in the fleet, and have each importer compare
        what renders with its states."""
        declarations: list[PlannedDeclaration] = []
        files: dict[Path, str] = {}
        sources: dict[Path, Source] = {}
        owner: dict[int, StatePlanner] = {}
        codes: dict[int, GeneratedCode] = {}
        for importer, planner in self.planners:
            members = planner.members(existing, promoted, self.notes)
            for member in members:
                member.module = modules[(importer.name, member.cluster.state.source)]
                owner[id(member.cluster)] = planner
                codes[id(member.cluster)] = importer.code
            self.errors.extend(planner.errors())
            planned = plan_declarations(
                members, existing, self.config, importer.code, self.notes, self.errors
            )
            declarations.extend(planned)
            built, written = self.build(planned, importer)
            files.update(built)
            sources.update(written)
        for (_, state), path in sorted(modules.items()):
            if path not in files and path.is_file() and generated_module(path):
                moved = sorted(
                    {
                        relative(d.module, self.config)
                        for d in declarations
                        if any(m.cluster.state.source == state for m in d.members)
                    }
                )
                files[path] = emptied_module(title=Path(state).name, moved_to=moved)
        files.update(shared)
        for path in files:
            check_writable(path, self.errors)
        if self.errors:
            raise DefinitionErrors(self.errors)
        envs = sorted(
            {m.cluster.environment for d in declarations for m in d.members},
            key=self.config.environments.index,
        )
        by_declaration = {d.construct_id: codes[id(d.members[0].cluster)] for d in declarations}
        translate = _Translator(sources, declarations, by_declaration).translate
        synth = check_render(self.config, files, envs, translate, self.importers)
        mismatches = [
            x
            for d in declarations
            for m in d.members
            for x in owner[id(m.cluster)].verify(
                m.cluster, synth.manifests.get(m.cluster.environment, [])
            )
        ]
        return _Rendered(
            declarations=declarations,
            files=files,
            manifests=synth.manifests,
            mismatches=mismatches,
        )

    def build(
        self, declarations: Sequence[PlannedDeclaration], importer: CloudImporter
    ) -> tuple[dict[Path, str], dict[Path, Source]]:
        """The text of the modules of ``declarations`` (one importer's)."""
        files: dict[Path, str] = {}
        sources: dict[Path, Source] = {}
        by_module: dict[Path, list[PlannedDeclaration]] = {}
        for decl in declarations:
            by_module.setdefault(decl.module, []).append(decl)
        declared: dict[str, Path] = {}
        for path, decls in sorted(by_module.items()):
            module_shared = {
                m.shared.variable: shared_in(m.shared, path, declared, self.config)
                for d in decls
                for m in d.members
                if m.shared is not None
            }
            imports: dict[str, set[str]] = {}
            for decl in decls:
                for member in decl.members:
                    for origin, variables in member.imports.items():
                        imports.setdefault(origin, set()).update(variables)
            states = sorted({m.cluster.state.path.name for d in decls for m in d.members})
            written = cluster_module(
                title=", ".join(states),
                shared=list(module_shared.values()),
                clusters=[declaration_call(d) for d in decls],
                imports=imports,
                code=importer.code,
            )
            files[path] = written.text
            sources[path] = written
        return files, sources

    def report(self, declarations: Sequence[PlannedDeclaration]) -> list[str]:
        """Where each cluster went and why, then what its importer says of it."""
        reporters = {id(c): p for _, p in self.planners for c in p.clusters}
        lines: list[str] = []
        for decl in sorted(declarations, key=lambda d: d.construct_id):
            for member in decl.members:
                c = member.cluster
                head = f"{c.name} ({c.environment})"
                shown = relative(member.module, self.config)
                others = [m.cluster.environment for m in decl.members if m is not member]
                merged = f", merged with {', '.join(others)}" if others else ""
                lines.append(
                    f"{head}: {c.where} -> {shown} as {decl.construct_id!r}{merged}; "
                    f"environment: {c.environment_rule}"
                )
                lines.extend(reporters[id(c)].report(c))
                if decl.merge_note:
                    lines.append(f"{head}: {decl.merge_note}")
                notes = self.notes.get((c.environment, c.name), [])
                lines.extend(f"{head}: {note}" for note in dict.fromkeys(notes))
        return lines


def _promotions(mismatches: Sequence[Mismatch]) -> dict[str, frozenset[str]]:
    """Inherited (or default) values the fleet renders otherwise: declared with the state's
    value on the next attempt (by object, Terraform attribute)."""
    found: dict[str, set[str]] = {}
    for mismatch in mismatches:
        if mismatch.fate in (INHERITED, DEFAULT):
            found.setdefault(mismatch.where, set()).add(mismatch.attribute)
    return {k: frozenset(v) for k, v in found.items()}


class _Translator:
    """A problem of the rendered result, as the input value that caused it."""

    def __init__(
        self,
        sources: Mapping[Path, Source],
        declarations: Sequence[PlannedDeclaration],
        codes: Mapping[str, GeneratedCode],
    ) -> None:
        self.sources = {path.name: source for path, source in sources.items()}
        self.declarations = {d.construct_id: d for d in declarations}
        self.codes = codes
        """Construct id -> what its importer's modules call (each declaration its own)."""

    def translate(
        self, file: str, line: int, what: str, field: str, message: str
    ) -> DefinitionError | None:
        """See :data:`fleet.clouds.importer.Translate`."""
        source = self.sources.get(file)
        if source is None:
            return None
        for construct_id, (start, end) in source.spans.items():
            if not start <= line <= end:
                continue
            member = self.declarations[construct_id].members[0]
            cluster = member.cluster
            code = self.codes[construct_id]
            noun = str(getattr(code.pool, "argument_noun", "pool"))
            for pool in cluster.pools:
                object_part = object_name_from(pool.name)
                prefix = f"{code.pools_keyword}[{pool.name}]."
                if (
                    f"({noun} {pool.name})" in what
                    or what.endswith(f"-{object_part}")
                    or field.startswith(prefix)
                ):
                    return DefinitionError(
                        f"{message} (the import writes nothing)",
                        where=pool.resource.where,
                        field=_attribute(field.removeprefix(prefix), code.pool),
                    )
            keyword = field.split(".")[-1] if field.startswith("spec.") else field
            attribute = member.origins.get(keyword) or _attribute(field, code.declaration)
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
