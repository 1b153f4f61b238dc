"""What ``fleet import tfvars`` writes: environments, templates and modules for the input.

Everything is decided and checked before anything is written: the result is the text
of each file, and the caller writes it (after ``--verify`` when asked).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fleet.clouds.magnum.template import ClusterTemplate, catalog, is_uuid
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.importers.codegen import (
    GENERATED,
    ClusterDecl,
    TemplateRef,
    cluster_module,
    template_variable,
    templates_module,
)
from fleet.importers.template_derivation import (
    TemplateSpec,
    derive_template,
    extend_template,
    missing_base_labels,
    own_labels,
)
from fleet.importers.tfvars import (
    Connection,
    ImportedCluster,
    find_tfvars,
    load_clusters,
    module_name,
)
from fleet.pipeline.discovery import discover

TEMPLATES_MODULE = "imported_templates"
"""The module ``--derive-templates`` writes in the declarations folder."""


@dataclass(frozen=True, kw_only=True)
class ImportOptions:
    """The command line of ``fleet import tfvars``."""

    paths: Sequence[Path]
    out: Path | None = None
    environment: str | None = None
    derive_templates: bool = False
    observe: bool = False
    template_uuids: Mapping[str, str] = field(default_factory=dict)
    """Template name -> Magnum UUID, for derived templates (``--template-uuid``)."""


@dataclass(frozen=True, kw_only=True)
class ImportResult:
    """The files to write (absolute path -> text), the clusters, and the report lines."""

    files: dict[Path, str]
    clusters: list[ClusterDecl]
    report: list[str] = field(default_factory=list)
    observe: bool = False


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
    """Import the declaration modules (without calling ``define``) and read the template
    catalog they declare at module level."""
    package = config.clusters_dir.name
    catalog().clear()
    refs: dict[str, TemplateRef] = {}
    generated: dict[str, TemplateSpec] = {}
    errors: list[DefinitionError] = []
    with project_modules(config.clusters_dir.parent, package):
        for path in discover(config):
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
    templates = {name: catalog().get(name, where="") for name in catalog().names()}
    return Catalog(templates=templates, refs=refs, generated=generated)


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
    clusters = load_clusters(find_tfvars(options.paths))
    errors: list[DefinitionError] = []
    environments: dict[str, str] = {}
    for cluster in clusters:
        try:
            environments[cluster.name] = environment_of(cluster, config, options.environment)
        except DefinitionError as e:
            errors.append(e)
    known = load_catalog(config)
    specs, refs, written = _templates(config, clusters, known, options.derive_templates, errors)
    written = _with_uuids(written, options.template_uuids, clusters, errors)
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
        decls.append(
            ClusterDecl(
                cluster=cluster,
                environment=environments[cluster.name],
                template=refs[cluster.template],
                labels=labels,
                allow_extra_labels=bool(extra),
            )
        )
    files = _modules(config, options, decls, errors)
    if written:
        files[config.clusters_dir / f"{TEMPLATES_MODULE}.py"] = templates_module(written)
    for path in files:
        _check_writable(path, errors)
    if errors:
        raise DefinitionErrors(errors)
    return ImportResult(files=files, clusters=decls, report=report, observe=options.observe)


def _templates(
    config: FleetConfig,
    clusters: Sequence[ImportedCluster],
    known: Catalog,
    derive: bool,
    errors: list[DefinitionError],
) -> tuple[dict[str, TemplateSpec], dict[str, TemplateRef], list[TemplateSpec]]:
    """The spec and reference of each template the input uses, and the generated catalog."""
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
                catalog().get(name, where=users[0].where("cluster_template_name"))
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
    written = list(generated.values()) if derive and generated else []
    return specs, refs, written


def _with_uuids(
    written: list[TemplateSpec],
    uuids: Mapping[str, str],
    clusters: Sequence[ImportedCluster],
    errors: list[DefinitionError],
) -> list[TemplateSpec]:
    """The derived templates with their UUIDs (``--template-uuid``), or an error for each
    that has none: a cluster fails without its template's UUID, and tfvars do not hold it."""
    out: list[TemplateSpec] = []
    for spec in written:
        uuid = uuids.get(spec.name, spec.uuid)
        if uuid is None:
            user = next((c for c in clusters if c.template == spec.name), None)
            errors.append(
                DefinitionError(
                    f"template {spec.name!r} has no UUID (tfvars name the template, Magnum "
                    f"stores its UUID): pass --template-uuid {spec.name}=<uuid>, from "
                    f"`openstack coe cluster template show {spec.name} -f value -c uuid`",
                    where=user.where("cluster_template_name") if user else "",
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
    errors: list[DefinitionError],
) -> dict[Path, str]:
    """One module per community (or the ``--out`` file), each checked for clashes."""
    groups: dict[Path, list[ClusterDecl]] = {}
    titles: dict[Path, str] = {}
    for decl in decls:
        if options.out is not None:
            path = options.out.resolve()
            titles[path] = ""
        else:
            try:
                name = module_name(decl.cluster.community, where=decl.cluster.source)
            except DefinitionError as e:
                errors.append(e)
                continue
            if name == TEMPLATES_MODULE:
                errors.append(
                    DefinitionError(
                        f"community {name!r} would overwrite the template catalog; use --out",
                        where=decl.cluster.source,
                        field="community",
                    )
                )
                continue
            path = config.clusters_dir.resolve() / f"{name}.py"
            titles[path] = f"community {decl.cluster.community}"
        groups.setdefault(path, []).append(decl)
    owners: dict[str, tuple[Path, ClusterDecl]] = {}
    for path, members in sorted(groups.items()):
        for decl in members:
            connection = decl.cluster.connection
            first = owners.setdefault(connection.provider_config_name, (path, decl))
            if first[1].cluster.connection == connection and first[0] == path:
                continue
            other = first[1].cluster
            reason = (
                f"is also used from {first[0].name} (import them together with --out FILE)"
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
        kept = _declared_clusters(path) - {d.cluster.name for d in members}
        if kept:
            errors.append(
                DefinitionError(
                    f"it declares {', '.join(sorted(kept))}, which this input lacks: import "
                    "the whole community again, or remove them from it by hand first",
                    where=str(path),
                )
            )
    return {
        path: cluster_module(title=titles[path], clusters=members, observe=options.observe)
        for path, members in sorted(groups.items())
    }


def _differing(a: Connection, b: Connection) -> str:
    fields = [f.name for f in dataclasses.fields(a) if getattr(a, f.name) != getattr(b, f.name)]
    return ", ".join(fields)


def _declared_clusters(path: Path) -> set[str]:
    """The ids of the MagnumClusters a generated module declares (none if no module)."""
    if not path.is_file():
        return set()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return set()
    return {
        node.args[1].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "MagnumCluster"
        and len(node.args) > 1
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    }


def _check_writable(path: Path, errors: list[DefinitionError]) -> None:
    """Only a module this command generated may be replaced."""
    if not path.exists():
        return
    try:
        generated = path.read_text(encoding="utf-8").startswith(f'"""{GENERATED}')
    except (OSError, UnicodeDecodeError):
        generated = False
    if not generated:
        errors.append(
            DefinitionError(
                "exists and was not written by `fleet import tfvars`; choose another --out",
                where=str(path),
            )
        )


def write_files(files: dict[Path, str]) -> list[Path]:
    """Write each file atomically (a temporary file, then a rename); sorted paths."""
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
