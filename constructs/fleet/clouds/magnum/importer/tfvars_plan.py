"""What ``fleet import tfvars`` writes: environments, templates and modules for the input.

Everything is decided and checked before anything is written: the result is the text
of each file, and the caller writes it (after ``--verify`` when asked).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fleet.clouds.importer import FleetAccess, TfvarsOptions
from fleet.clouds.magnum.cluster import MagnumCluster
from fleet.clouds.magnum.importer.catalog import TEMPLATES_MODULE, catalog_of, uuid_values
from fleet.clouds.magnum.importer.shapes import describe
from fleet.clouds.magnum.importer.template_derivation import missing_base_labels, own_labels
from fleet.clouds.magnum.importer.tfvars import ImportedCluster, find_tfvars, load_clusters
from fleet.clouds.magnum.importer.tfvars_codegen import ClusterDecl, Declaration, templates_module
from fleet.clouds.magnum.importer.tfvars_modules import Planned, modules, our_modules
from fleet.clouds.magnum.importer.tfvars_state import check_state, load_state, template_uuids
from fleet.clouds.magnum.importer.tfvars_templates import templates, with_given_uuids
from fleet.clouds.magnum.importer.tfvars_verify import check_cluster
from fleet.codegen.files import check_writable, relative
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.manifest import Manifest
from fleet.core.options import options_of


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

    @property
    def environments(self) -> list[str]:
        """The environments of its clusters, sorted."""
        return sorted({d.environment for d in self.clusters})

    @property
    def counts(self) -> tuple[int, int]:
        """(clusters, declarations)."""
        return len(self.clusters), sum(len(d) for d in self.declarations.values())

    def translate(
        self, file: str, line: int, what: str, field: str, message: str
    ) -> DefinitionError | None:
        """A problem of the render as the tfvars file (and line) of the cluster it comes
        from."""
        for decls in self.declarations.values():
            for decl in decls:
                construct_id = decl.construct_id
                if f"({construct_id})" in what or f"({construct_id}/" in what:
                    cluster = decl.members[0].cluster
                    option = options_of(MagnumCluster).get(field)
                    key = option.terraform if option is not None and option.terraform else field
                    return DefinitionError(
                        f"{message} (the import writes nothing)",
                        where=cluster.where(key),
                        field=key,
                    )
        return None

    def verify(self, manifests: Mapping[str, Sequence[Manifest]]) -> list[DefinitionError]:
        """Every tfvars value compared with the render (none when the import is faithful)."""
        problems: list[DefinitionError] = []
        for decl in self.clusters:
            objects = {(m.kind, m.name): m for m in manifests.get(decl.environment, [])}
            accepted = self.accepted.get(decl.cluster.source, frozenset())
            problems.extend(check_cluster(decl, objects, observe=self.observe, accepted=accepted))
        return problems


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


def plan_import(config: FleetConfig, options: TfvarsOptions, fleet: FleetAccess) -> ImportResult:
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
    ours = our_modules(config, options, {c.community for c in clusters})
    existing = fleet.existing(ours)
    known = catalog_of(fleet.module_values())
    notes: dict[str, list[str]] = {c.name: [] for c in clusters}
    uuids: dict[str, dict[str, str]] = {}
    if state is not None:
        errors.extend(check_state(state, clusters))
        uuids = template_uuids(state, clusters, errors)
    specs, refs, written = templates(
        config, clusters, known, options.derive_templates, errors, uuids, notes
    )
    written = with_given_uuids(written, options.template_uuids, uuids, clusters, errors)
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
    planned = modules(config, options, decls, existing, errors, notes)
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


class MagnumTfvars:
    """The tfvars layout of the seed's Magnum module (``fleet import tfvars``)."""

    def plan(self, config: FleetConfig, options: TfvarsOptions, fleet: FleetAccess) -> ImportResult:
        """See :func:`plan_import`."""
        return plan_import(config, options, fleet)
