"""One ``fleet import tfstate`` of Magnum clusters: their projects, their templates (the
fleet's, or a catalog module written for them), each cluster as the keywords of a
``MagnumCluster`` with its node groups, what cannot be declared as Magnum holds it, the
verify of what renders, and the report's lines on each cluster.

The orchestration (:mod:`fleet.importers`) places the modules, merges the same cluster
across environments, renders and writes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

from fleet.clouds.importer import (
    ExistingFleet,
    ImportedCluster,
    Member,
    Mismatch,
    Notes,
    SharedDecl,
    StateRequest,
    fate_lines,
    needs_pin,
    pinned_object_name,
    tainted_lines,
    why_pinned,
    with_object_name,
)
from fleet.clouds.magnum.importer import options as flags
from fleet.clouds.magnum.importer.catalog import (
    TEMPLATES_MODULE,
    TemplateDecl,
    catalog_of,
    template_decl,
    template_variable,
    templates_module,
    uuid_values,
)
from fleet.clouds.magnum.importer.code import PROJECT, generated_code
from fleet.clouds.magnum.importer.declarations import cluster_keywords, group_keywords
from fleet.clouds.magnum.importer.model import ImportedTemplate, StateCluster
from fleet.clouds.magnum.importer.projects import (
    ExistingProject,
    cluster_project,
    match_project,
    missing_project,
    project_variable,
    projects_of,
)
from fleet.clouds.magnum.importer.resources import CLOUD, Tables, specs
from fleet.clouds.magnum.importer.state import read_import
from fleet.clouds.magnum.importer.tfvars import Connection, bounds_refusal
from fleet.clouds.magnum.importer.verify import check_cluster
from fleet.clouds.magnum.resolved import BOUND_LABELS
from fleet.clouds.magnum.template import ClusterTemplate, attribute_keywords
from fleet.codegen.files import earlier_comments
from fleet.codegen.layout import FLEET
from fleet.core.credentials import credential_paths, shown
from fleet.core.errors import DefinitionError
from fleet.core.manifest import Manifest
from fleet.core.names import object_name_from
from fleet.core.pysource import Call, Value
from fleet.terraform.attributes import CREATE_ONLY

SENSITIVE = "the state marks it sensitive"
"""Why a value Terraform marks sensitive (``sensitive_attributes``, ``sensitive_values``)
is never written, whatever it looks like."""


class MagnumStatePlanner:
    """What the states hold of Magnum, and the decisions of one import (see the module
    docstring); made by :meth:`fleet.clouds.magnum.importer.importer.MagnumImporter.plan_states`."""

    def __init__(self, request: StateRequest, tables: Tables) -> None:
        self.request = request
        self.config = request.config
        self.tables = tables
        self.code = generated_code(tables)
        self.catalog = catalog_of(request.fleet.module_values())
        self.model = read_import(
            request.files,
            request.config,
            specs(tables),
            environment=request.environment,
            configurations=request.configurations,
            declared={u: t for t in self.catalog.templates.values() for u in uuid_values(t.uuid)},
        )
        self._errors: list[DefinitionError] = []
        self.notes: Notes = {}
        self.template_refs: dict[str, tuple[str, str]] = {}
        self.existing_projects: list[ExistingProject] = []
        self.omitted = frozenset(request.options.get(flags.OMIT_LABEL.flag, ()))
        self.model = dataclasses.replace(
            self.model, clusters=tuple(self.omit_labels(c) for c in self.model.clusters)
        )
        self.given_projects = flags.per_environment(request.options, flags.PROJECT, request.config)
        self.given_regions = flags.per_environment(request.options, flags.REGION, request.config)

    @property
    def clusters(self) -> Sequence[StateCluster]:
        """Every cluster of the states, in state order."""
        return self.model.clusters

    @property
    def ignored(self) -> Sequence[str]:
        """``<state>: N other resources`` lines for the report, and each ``--omit-label``
        no cluster declares."""
        used = {k for c in self.model.clusters for k in c.omitted_labels}
        unused = [
            f"--omit-label {key}: no cluster of the states declares this label: nothing left out"
            for key in sorted(self.omitted - used)
        ]
        return [*self.model.ignored, *unused]

    def errors(self) -> list[DefinitionError]:
        """The problems found so far."""
        return self._errors

    def _note(self, cluster: StateCluster, text: str) -> None:
        self.notes.setdefault((cluster.environment, cluster.magnum_name), []).append(text)

    # -- before the first render
    def prepare(self, existing: ExistingFleet, notes: Notes) -> dict[Path, str]:
        """The templates (and the catalog module to write), the checks of what no
        declaration could hold."""
        self.notes = notes
        for cluster in self.model.clusters:
            notes[(cluster.environment, cluster.magnum_name)] = list(cluster.notes)
        self.existing_projects = projects_of(existing)
        files: dict[Path, str] = {}
        found = self.templates()
        if found is not None:
            files[found[0]] = found[1]
        for cluster in self.model.clusters:
            self.check_labels(cluster)
            self.check_credentials(cluster)
        return files

    # -- the declarations
    def members(
        self, existing: ExistingFleet, promoted: Mapping[str, frozenset[str]], notes: Notes
    ) -> list[Member]:
        """Every cluster as the keywords of its ``MagnumCluster``."""
        self.notes = notes
        projects: dict[tuple[str, str], SharedDecl] = {}
        members: list[Member] = []
        for cluster in self.model.clusters:
            project, region = self.project(cluster, projects)
            module, variable = self.template_refs[cluster.template.uuid]
            keywords, origins, cluster_notes = cluster_keywords(
                cluster,
                self.tables.cluster,
                variable,
                project,
                region,
                self.request.observe,
                promoted.get(cluster.where, frozenset()),
            )
            self.check_bounds(cluster, keywords)
            groups: dict[str, dict[str, Value]] = {}
            object_names: dict[str, str] = {}
            for group in cluster.node_groups:
                found = group_keywords(
                    group,
                    self.tables.group,
                    cluster_notes,
                    promoted.get(group.resource.where, frozenset()),
                )
                derived = object_name_from(group.magnum_name)
                other = object_names.get(derived)
                if needs_pin(derived, other is not None):
                    pin = pinned_object_name(group.magnum_name, "nodegroup")
                    taken = None if other is None else f"node group {other!r}"
                    cluster_notes.append(
                        f"node group {group.magnum_name!r}: object name pinned to {pin!r} "
                        f"(object_name=): {why_pinned(derived, taken)}"
                    )
                    found, derived = with_object_name(found, pin), pin
                object_names[derived] = group.magnum_name
                groups[group.resource.address] = found
                for keyword in found:
                    origins[f"{self.code.pools_keyword}[{group.magnum_name}].{keyword}"] = keyword
            notes.setdefault((cluster.environment, cluster.magnum_name), []).extend(cluster_notes)
            members.append(
                Member(
                    cluster=cluster,
                    keywords=keywords,
                    pools=groups,
                    origins=origins,
                    shared=project,
                    imports={module: frozenset({variable})},
                )
            )
        return members

    # -- projects
    def project(
        self, cluster: StateCluster, projects: dict[tuple[str, str], SharedDecl]
    ) -> tuple[SharedDecl, str | None]:
        """The cluster's project (one declaration per project id and region), and the
        region to declare on the cluster (where the fleet's project has another)."""
        configuration = self.request.configurations.get(cluster.state.source)
        given = cluster_project(
            cluster,
            configuration,
            flags.for_environment(self.given_projects, cluster.environment),
            flags.for_environment(self.given_regions, cluster.environment),
        )
        for note in given.notes:
            self._note(cluster, note)
        name = given.name
        if name is None and given.project_id is None:
            self._errors.append(missing_project(cluster))
        key = (given.project_id or name or "", given.region or "")
        connection = Connection(
            project_name=name or given.project_id or "",
            project_id=given.project_id,
            region=given.region,
        )
        found = projects.get(key)
        match = match_project(connection, self.existing_projects)
        if found is None:
            if match is not None:
                existing, how = match
                found = SharedDecl(
                    variable=project_variable(connection),
                    cls=PROJECT,
                    reused=existing.construct_id,
                    reused_from=f"{existing.where}, the same {how}",
                )
            else:
                construct_id = connection.provider_config_name
                if construct_id in self.config.environments:
                    construct_id = f"{construct_id}-project"
                call = Call(
                    callee=PROJECT,
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
                found = SharedDecl(variable=variable, cls=PROJECT, call=call)
                if name is None:
                    self._note(
                        cluster,
                        f"needs a person: the state gives project id {given.project_id}, not "
                        "its name: declared with project_name set to the id (pass --source "
                        "with a provider block that names it, or --project NAME, or edit it)",
                    )
            projects[key] = found
        region = None
        if match is not None and (match[0].details.get("region") or "") != (given.region or ""):
            region = given.region
        return found, region

    # -- templates
    def templates(self) -> tuple[Path, str] | None:
        """Template UUID -> (module, variable) to import it from (:attr:`template_refs`);
        and the catalog module to write (the generated one, with earlier imports'
        templates kept), if any template goes there."""
        catalog = self.catalog
        refs = self.template_refs
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
            if spec.driver is not None:
                keywords.append(("driver", spec.driver))
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
            if imported.magnum_name in catalog.unloaded:
                clash = None  # a helper synth never loads (clusters/_example.py): not the fleet's
            if clash is not None and uuid not in uuid_values(clash.uuid):
                self._errors.append(
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
            written, held = self.held_in_template(imported)
            keys = optional.get(uuid, set()) - (set(imported.labels) - set(written.labels))
            generated[variable] = template_decl(written, variable, keys, held)
            refs[uuid] = (module_name, variable)
        if not any(module == module_name for module, _ in refs.values()):
            return None
        return catalog_path, templates_module(list(generated.values()), self.code.calls)

    def held_in_template(self, imported: ImportedTemplate) -> tuple[ImportedTemplate, set[str]]:
        """The template as written (without its labels holding credential material: a
        template is declared, never rendered, so Magnum keeps them) and its attributes
        that hold credential material (left out too); each said in the report, by key,
        never by value. A label map the state marks sensitive as a whole is refused."""
        held = {path.split(".")[0] for path, _ in credential_paths(dict(imported.values))}
        held |= imported.sensitive & set(imported.values)
        keys = sorted(
            path.removeprefix("labels.")
            for path, _ in credential_paths({"labels": dict(imported.labels)})
        )
        left_out = []
        if held:
            left_out.append(
                f"{', '.join(sorted(held))} hold(s) credential material or are marked "
                "sensitive in the state"
            )
        if keys:
            left_out.append(f"label(s) {', '.join(keys)} hold credential material")
        if left_out:
            for cluster in self.model.clusters:
                if cluster.template.uuid == imported.uuid:
                    self._note(
                        cluster,
                        f"template {imported.magnum_name!r}: {'; '.join(left_out)}: not "
                        "written (a template is declared, not rendered: Magnum keeps them)",
                    )
        if "labels" in imported.sensitive and imported.labels:
            self._errors.append(
                DefinitionError(
                    f"holds credential material ({SENSITIVE}): a template's labels are "
                    "written into the fleet; the import writes nothing",
                    where=imported.where,
                    field="labels",
                )
            )
        labels = {k: v for k, v in imported.labels.items() if k not in keys}
        return dataclasses.replace(imported, labels=labels), held

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
                self._note(
                    cluster,
                    f"template {declared.name!r} ({declared.where}) declares "
                    f"{'; '.join(differ)}: correct its declaration",
                )

    def omit_labels(self, cluster: StateCluster) -> StateCluster:
        """``cluster`` without the labels ``--omit-label`` names among those it declares:
        its labels become create-only (``spec.initProvider``: sent only to create it, their
        differences dropped by upjet afterwards), so the live cluster keeps them and their
        values are never written."""
        labels = cluster.value("labels")
        keys = frozenset(k for k in self.omitted if k in cluster.labels)
        if not keys or labels is None:
            return cluster
        kept = {k: v for k, v in cluster.labels.items() if k not in keys}
        value = dataclasses.replace(
            labels,
            value={k: v for k, v in dict(labels.value or {}).items() if k not in keys},
            fate=CREATE_ONLY,
            rule=f"--omit-label {', '.join(sorted(keys))}",
        )
        values = tuple(value if v is labels else v for v in cluster.values)
        note = (
            f"label(s) {', '.join(sorted(keys))} left out (--omit-label): the cluster's labels "
            "are create-only (spec.initProvider), so the live cluster keeps "
            f"{'it' if len(keys) == 1 else 'them'} and the fleet never enforces its labels"
        )
        return dataclasses.replace(
            cluster,
            labels=kept,
            values=values,
            omitted_labels=keys,
            notes=(*cluster.notes, note),
        )

    # -- what no declaration could hold
    def check_credentials(self, cluster: StateCluster) -> None:
        """A declared value holding credential material: refused, named by its place."""
        objects = [(cluster.resource, cluster.declared())]
        objects += [(g.resource, g.declared()) for g in cluster.node_groups]
        for resource, values in objects:
            where = resource.where
            found = credential_paths(values)
            found += [(a, SENSITIVE) for a in sorted(resource.sensitive & set(values))]
            for path, what in found:
                key = path.removeprefix("labels.")
                way = (
                    f"; pass --omit-label {key} to leave it out (the cluster's labels become "
                    "create-only: the live cluster keeps it)"
                    if resource is cluster.resource and path.startswith("labels.")
                    else ""
                )
                self._errors.append(
                    DefinitionError(
                        f"holds credential material ({what}): the fleet would write it into "
                        f"the repository and dist/{way}; the import writes nothing",
                        where=where,
                        field=path,
                    )
                )

    def check_bounds(self, cluster: StateCluster, keywords: Mapping[str, Value]) -> None:
        """Autoscaler bounds left in the labels to declare: MagnumCluster cannot write them
        as Magnum holds them."""
        labels = keywords.get("labels")
        if isinstance(labels, Mapping) and any(k in labels for k in BOUND_LABELS):
            own = {str(k): str(v) for k, v in labels.items()}
            self._errors.append(
                DefinitionError(
                    f"{bounds_refusal({**cluster.magnum_labels, **own})}; leave its state "
                    "out of the import",
                    where=cluster.where,
                    field="labels",
                )
            )

    def check_labels(self, cluster: StateCluster) -> None:
        """Labels of the template that the cluster lacks without merge_labels: refused."""
        if cluster.merge_labels is True or not cluster.labels:
            return
        left_out = cluster.omitted_labels | {
            path.removeprefix("labels.")
            for path, _ in credential_paths({"labels": dict(cluster.template.labels)})
        }
        missing = sorted(set(cluster.template.labels) - set(cluster.labels) - left_out)
        if missing:
            self._errors.append(
                DefinitionError(
                    f"lacks label(s) {', '.join(missing)} of its template "
                    f"{cluster.template.magnum_name!r} without merge_labels: a MagnumCluster "
                    "always carries its template's labels, so it cannot be declared against it",
                    where=cluster.where,
                    field="labels",
                )
            )

    # -- after the render
    def verify(self, cluster: ImportedCluster, manifests: Sequence[Manifest]) -> list[Mismatch]:
        """Every value of ``cluster`` against the rendered objects of its environment."""
        assert isinstance(cluster, StateCluster)
        return check_cluster(cluster, manifests)

    def report(self, cluster: ImportedCluster) -> list[str]:
        """How the cluster and its node groups are adopted, and what each value became."""
        assert isinstance(cluster, StateCluster)
        c = cluster
        head = f"{c.magnum_name} ({c.environment})"
        policy = " (Observe only)" if self.request.observe else ""
        lines = [
            f"{head}: adopts Magnum cluster {c.uuid}{policy}; template "
            f"{c.template.magnum_name!r} ({c.template.uuid}, {c.template.known_from})"
        ]
        lines.extend(tainted_lines(head, c.resource, CLOUD))
        lines.extend(f"{head}: {line}" for line in fate_lines(c.values, "the template", CLOUD))
        for group in c.node_groups:
            g = f"{head}: node group {group.magnum_name!r}"
            lines.append(f"{g}: adopts {group.external_name}")
            lines.extend(tainted_lines(g, group.resource, CLOUD))
            lines.extend(f"{g}: {line}" for line in fate_lines(group.values, "its parent", CLOUD))
        if not self.request.sourced:
            lines.append(
                f"{head}: without --source the configuration's lifecycle ignore_changes "
                "is unknown: every declared value (node_count included) will be enforced"
            )
        return lines
