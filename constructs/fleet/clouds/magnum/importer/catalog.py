"""The templates of Magnum imports: those the fleet declares (its catalog, read from its
modules), and the catalog module ``fleet import`` writes (``_imported_templates.py``), as a
person would write it."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fleet.clouds.importer import ModuleValues
from fleet.clouds.magnum.drivers import MagnumDriver, decide
from fleet.clouds.magnum.importer.model import ImportedTemplate
from fleet.clouds.magnum.importer.template_derivation import TemplateSpec
from fleet.clouds.magnum.template import (
    ClusterTemplate,
    TemplateCatalog,
    attribute_keywords,
    same_content,
)
from fleet.codegen.layout import (
    GENERATED_STATE,
    blocks,
    comment_lines,
    constant_name,
    module,
    statement,
)
from fleet.codegen.shared import label_constants, replace_constants
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.pysource import Call, Value
from fleet.terraform.attributes import whole

TEMPLATES_MODULE = "_imported_templates"
"""The catalog module of the templates an import derives or reads, in the declarations
folder (``--derive-templates``, ``fleet import tfstate``)."""


def template_variable(name: str) -> str:
    """The module-level name of a template: ``kubernetes-1.25.3-3-multi`` ->
    ``KUBERNETES_1_25_3_3_MULTI``."""
    return constant_name(name, prefix="TEMPLATE")


@dataclass(frozen=True, kw_only=True)
class TemplateRef:
    """Where generated code imports a template object from."""

    module: str
    variable: str


@dataclass(frozen=True, kw_only=True)
class TemplateDecl:
    """A ``ClusterTemplate`` of the catalog module."""

    variable: str
    keywords: tuple[tuple[str, Value], ...]
    comment: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Catalog:
    """The templates the project declares, and where generated code imports each from."""

    templates: dict[str, ClusterTemplate]
    refs: dict[str, TemplateRef]
    generated: dict[str, TemplateSpec]
    """The templates of the generated catalog module (``--derive-templates`` updates these)."""
    unloaded: frozenset[str] = frozenset()
    """The names of those only a helper module synth does not load declares."""


def catalog_of(modules: Sequence[ModuleValues]) -> Catalog:
    """The template catalog the fleet's modules declare at module level: those of the
    modules synth loads (two of one name with different content are an error, as in
    synth), then those of helper modules it does not load, each only where no template of
    its name is known yet (synth never sees it: never a reason to refuse; two such helpers
    disagreeing on one name give neither)."""
    found = TemplateCatalog()
    refs: dict[str, TemplateRef] = {}
    generated: dict[str, TemplateSpec] = {}
    errors: list[DefinitionError] = []
    unloaded: dict[str, ClusterTemplate | None] = {}
    for loaded in modules:
        for variable, value in loaded.values.items():
            in_value = _templates_in(value)
            if not loaded.loaded:
                for template in [t for t in in_value if t.name not in found.names()]:
                    first = unloaded.setdefault(template.name, template)
                    if first is not None and not same_content(first, template):
                        unloaded[template.name] = None
                continue
            try:
                found.add(*in_value)
            except DefinitionError as e:
                errors.append(e)
            if not isinstance(value, ClusterTemplate) or variable.startswith("_"):
                continue
            _refer(loaded, variable, value, refs, generated)
    if errors:
        raise DefinitionErrors(errors)
    for loaded in modules:
        for variable, value in loaded.values.items():
            if loaded.loaded or not isinstance(value, ClusterTemplate):
                continue
            if unloaded.get(value.name) is value and not variable.startswith("_"):
                found.add(value)
                _refer(loaded, variable, value, refs, generated)
    templates = {name: found.get(name, where="") for name in found.names()}
    return Catalog(
        templates=templates,
        refs=refs,
        generated=generated,
        unloaded=frozenset(n for n, t in unloaded.items() if t is not None),
    )


def _refer(
    loaded: ModuleValues,
    variable: str,
    value: ClusterTemplate,
    refs: dict[str, TemplateRef],
    generated: dict[str, TemplateSpec],
) -> None:
    """Where generated code imports ``value`` from: where it is declared (a template
    imported into another module is referenced there)."""
    declared_here = Path(value.where.rsplit(":", 1)[0]).name == loaded.path.name
    if declared_here or value.name not in refs:
        refs[value.name] = TemplateRef(module=loaded.module, variable=variable)
    if declared_here and loaded.path.stem == TEMPLATES_MODULE:
        generated[value.name] = TemplateSpec.of(value)


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


def uuid_values(uuid: str | Mapping[str, str] | None) -> set[str]:
    """A template's UUID(s): one, or one per region."""
    if isinstance(uuid, str):
        return {uuid}
    return set((uuid or {}).values())


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
    attributes = {k: whole(v) for k, v in template.values.items() if k not in held}
    keywords.extend(attribute_keywords(attributes))
    driver = state_driver(template)
    if driver is not None:
        keywords.append(("driver", driver[0].value))
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
    if driver is not None:
        comment.append(f"  driver {driver[0].value}: {driver[1]}")
    return TemplateDecl(variable=variable, keywords=tuple(keywords), comment=tuple(comment))


def state_driver(template: ImportedTemplate) -> tuple[MagnumDriver, str] | None:
    """The Magnum driver the state tells for ``template`` (its ``cluster_distro``,
    ``server_type`` and ``coe``, where exactly one driver provides them: Magnum's own
    look-up, :func:`fleet.clouds.magnum.drivers.decide`), and why; None when they do not
    tell one (the fleet then applies its rules and says so)."""
    values = template.values
    decision = decide(
        name=template.magnum_name,
        driver=None,
        cluster_distro=_text(values.get("cluster_distro")),
        server_type=_text(values.get("server_type")),
        coe=_text(values.get("coe")),
    )
    if decision.driver is None:
        return None
    return decision.driver, f"the state's cluster_distro: {decision.reason}"


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def templates_module(templates: Sequence[TemplateDecl], calls: Collection[str]) -> str:
    """The catalog module: every template, sorted by variable, label sets shared as
    constants; ``calls`` is what it may call (the template class)."""
    ordered = sorted(templates, key=lambda t: t.variable)
    callee = ClusterTemplate.__name__
    values: list[tuple[str, Value]] = [
        (t.variable, Call(callee=callee, keywords=t.keywords)) for t in ordered
    ]
    constants, constant_lines = label_constants(values, {t.variable for t in ordered})
    statements = list(constant_lines)
    for template, (_, call) in zip(ordered, values, strict=True):
        lines = comment_lines(template.comment)
        shared = replace_constants(call, constants)
        statements.append(lines + statement(shared, calls=calls, target=template.variable))
    return module(
        about=f"{GENERATED_STATE} (templates): re-import to update.",
        names={"fleet": [callee]},
        body=blocks(*statements),
    )
