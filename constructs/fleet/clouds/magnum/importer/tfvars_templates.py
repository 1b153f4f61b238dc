"""The templates of a tfvars import: the catalog's, or derived from their clusters'
labels (``--derive-templates``), with the UUIDs the state or ``--template-uuid`` gives."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from fleet.clouds.magnum.importer.catalog import (
    TEMPLATES_MODULE,
    Catalog,
    TemplateRef,
    template_variable,
)
from fleet.clouds.magnum.importer.template_derivation import (
    TemplateSpec,
    derive_template,
    extend_template,
)
from fleet.clouds.magnum.importer.tfvars import ImportedCluster
from fleet.clouds.magnum.template import TemplateCatalog, is_uuid
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError


def templates(
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


def with_given_uuids(
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
