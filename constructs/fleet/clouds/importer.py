"""A cloud's importer (:class:`CloudImporter`): what ``fleet import`` needs from a cloud,
loaded through its plug-in's hook (``CloudPlugin.importer``, an
:class:`~fleet.clouds.base.ImporterEntry`), and the values the generic orchestration
(:mod:`fleet.importers`) and the importer exchange.

The orchestration reads the states (:mod:`fleet.terraform.state`, the resource types the
importers name), matches ``--source`` folders, refuses any attribute no importer places or
drops (:meth:`fleet.terraform.attributes.ResourceSpec.unplaced`), places modules, merges
the same cluster across environments into one declaration, renders the result in the fleet
with every check, writes, and reports. The importer says what its resource types become: a
:class:`StatePlanner` per import (the clusters the states hold, each as the keywords of a
declaration, and the per-cloud verify of what renders), and optionally a
:class:`TfvarsImporter` for a tfvars layout of its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fleet.codegen.shared import Repetition
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError
from fleet.core.manifest import Manifest
from fleet.core.names import MAX_LABEL, is_dns_label, object_name_from
from fleet.core.pysource import Call, Value
from fleet.terraform.attributes import (
    AUTOSCALED,
    CARRIED,
    COMPUTED,
    CREATE_ONLY,
    INHERITED,
    ResourceSpec,
)
from fleet.terraform.attributes import Value as StateValue
from fleet.terraform.state import StateFile, StateResource

if TYPE_CHECKING:
    from fleet.terraform.hcl import Configuration

# --- what the generated modules hold ----------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class GeneratedCode:
    """What an importer's generated modules call: the allow-list of their syntax-tree
    check is every importer's (:mod:`fleet.importers.generated`)."""

    declaration: type
    """The cluster class a generated module declares its clusters with."""
    pool: type
    """The class of a cluster's node pools (its ``argument_noun`` names one in messages)."""
    pools_keyword: str
    """The cluster's keyword that lists them."""
    pools_before: tuple[str, ...] = ()
    """The keywords the pools go before (how the cluster is adopted: a person reads what
    it is first)."""
    repetition: Repetition
    """Which keywords may differ between pools written as one comprehension."""
    calls: frozenset[str]
    """Every class of ``fleet`` a generated module calls (besides ``per_env``)."""
    module_calls: frozenset[str] = frozenset()
    """Those a module-level constant may be bound to (a catalog's)."""
    lookups: frozenset[str] = frozenset()
    """The classes ``fleet.declaration("id", Class)`` may look up."""
    catalogs: frozenset[str] = frozenset()
    """The stems of the modules that declare constants only (no ``define``)."""
    module: str = "fleet"
    """Where the generated modules import :attr:`calls` from: ``fleet`` for the built-in
    clouds, the plug-in's own module (``capo.cluster``) for an installed cloud's."""


@dataclass(frozen=True, kw_only=True)
class SharedDecl:
    """A declaration the clusters of a module use (an account, a project): declared by
    the module (``call``), or looked up by construct id (``reused``), as ``cls``."""

    variable: str
    cls: str
    call: Call | None = None
    reused: str | None = None
    reused_from: str = ""


# --- the fleet as it is -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ModuleValues:
    """The module-level values of one module of the fleet (imported, ``define`` not run)."""

    path: Path
    module: str
    """Its dotted name (``clusters._templates``)."""
    values: Mapping[str, Any]
    """Variable -> value, sorted by variable."""
    loaded: bool = True
    """Whether ``fleet synth`` loads it (a declaration module, or a helper one imports);
    a helper no declaration module imports yet is read only as a catalog to refer to."""


@dataclass(frozen=True, kw_only=True)
class ExistingFleet:
    """What the fleet declares already, loaded as ``fleet synth`` loads it."""

    clusters: dict[tuple[str, str], str] = field(default_factory=dict)
    """(environment, cluster name) -> ``file:line (id)``, outside the replaced modules."""
    ids: dict[str, str] = field(default_factory=dict)
    """Construct id -> ``file:line``, outside the replaced modules."""
    ours: dict[tuple[str, str], Path] = field(default_factory=dict)
    """(environment, cluster name) -> the replaced module that declares it."""
    declarations: tuple[tuple[Any, Path], ...] = ()
    """Every other declaration (outside the replaced modules), with its file."""


@dataclass(frozen=True, kw_only=True)
class FleetAccess:
    """How an importer reads the fleet it imports into (the orchestration loads it)."""

    module_values: Callable[[], Sequence[ModuleValues]]
    """The module-level values of the modules synth loads, then of the helper modules it
    does not (``loaded=False``)."""
    existing: Callable[[Mapping[str, Path]], ExistingFleet]
    """The fleet without the given modules (those the import replaces)."""


# --- a state import ---------------------------------------------------------------------------


class ImportedPool(Protocol):
    """A node pool of an imported cluster, as the orchestration sees it."""

    @property
    def resource(self) -> StateResource:
        """Its resource in the state."""
        ...

    @property
    def name(self) -> str:
        """Its name in the cloud."""
        ...


class ImportedCluster(Protocol):
    """One cluster of one state in its environment, as the orchestration sees it."""

    @property
    def resource(self) -> StateResource:
        """Its resource in the state."""
        ...

    @property
    def state(self) -> StateFile:
        """The state that holds it."""
        ...

    @property
    def environment(self) -> str:
        """The environment it goes to."""
        ...

    @property
    def environment_rule(self) -> str:
        """Why (its name, the state's flag, ``--environment``)."""
        ...

    @property
    def name(self) -> str:
        """Its name in the cloud."""
        ...

    @property
    def pools(self) -> Sequence[ImportedPool]:
        """Its node pools."""
        ...

    @property
    def where(self) -> str:
        """``<state> <address>``."""
        ...


@dataclass(kw_only=True)
class Member:
    """One imported cluster as the keywords of its declaration (one member per
    environment of a declaration)."""

    cluster: ImportedCluster
    keywords: dict[str, Value]
    pools: dict[str, dict[str, Value]]
    """Pool address -> its keywords."""
    origins: dict[str, str]
    """Keyword (``<pools keyword>[<name>].<keyword>`` for a pool's) -> Terraform attribute."""
    shared: SharedDecl | None = None
    """The declaration it uses (its project), if any."""
    imports: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Module -> the names the declaration uses from it (a catalog's constants)."""
    module: Path = Path()


@dataclass(frozen=True, kw_only=True)
class Mismatch:
    """One state value the rendered objects lose or change."""

    where: str
    """``<state> <address>`` of the object."""
    attribute: str
    fate: str
    message: str
    field: str
    """The rendered field."""
    group: str | None = None
    """The pool's name in the cloud, for a pool's value."""


Notes = dict[tuple[str, str], list[str]]
"""(environment, cluster name) -> what the report says about it."""


@dataclass(frozen=True, kw_only=True)
class StateRequest:
    """One ``fleet import tfstate``, as an importer reads it."""

    config: FleetConfig
    files: Sequence[StateFile]
    environment: str | None
    """``--environment``."""
    configurations: Mapping[str, Configuration]
    """State source -> the configuration that wrote it (``--source``)."""
    fleet: FleetAccess
    observe: bool = False
    sourced: bool = False
    """Whether any ``--source`` was given."""
    options: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """The importers' own options (:class:`fleet.clouds.base.ImportOption`): flag -> the
    values given, in order (a flag not given is absent)."""


class StatePlanner(Protocol):
    """One state import by one cloud's importer (:meth:`CloudImporter.plan_states`)."""

    @property
    def clusters(self) -> Sequence[ImportedCluster]:
        """Every cluster the states hold, in state order."""
        ...

    @property
    def ignored(self) -> Sequence[str]:
        """Report lines: what the states hold that is not read."""
        ...

    def prepare(self, existing: ExistingFleet, notes: Notes) -> dict[Path, str]:
        """Decide what the clusters share (catalogs, ...): the files to write besides the
        cluster modules; problems are kept for :meth:`errors`."""
        ...

    def members(
        self, existing: ExistingFleet, promoted: Mapping[str, frozenset[str]], notes: Notes
    ) -> list[Member]:
        """Every cluster as the keywords of its declaration (its module is set by the
        orchestration); ``promoted`` (by ``where``) the inherited attributes to declare all
        the same (the fleet renders them otherwise)."""
        ...

    def errors(self) -> list[DefinitionError]:
        """The problems found so far (nothing is written while there are any)."""
        ...

    def verify(self, cluster: ImportedCluster, manifests: Sequence[Manifest]) -> list[Mismatch]:
        """Every value of ``cluster`` against the rendered objects of its environment."""
        ...

    def report(self, cluster: ImportedCluster) -> list[str]:
        """What the report says of ``cluster`` after where it went (how it is adopted,
        what each value became), each line starting with ``<name> (<environment>): ``."""
        ...


# --- a tfvars import --------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TfvarsOptions:
    """The command line of ``fleet import tfvars``."""

    paths: Sequence[Path]
    out: Path | None = None
    environment: str | None = None
    derive_templates: bool = False
    observe: bool = False
    states: Sequence[Path] = ()
    """Terraform state files (or ``terraform show -json`` output) of the same clusters."""
    template_uuids: Mapping[str, str] = field(default_factory=dict)
    """Template name -> UUID, for derived templates (``--template-uuid``)."""


Translate = Callable[[str, int, str, str, str], DefinitionError | None]
"""``(module file name, line, what, field, message)`` -> the error naming the input value
that caused it, or None when the line is not the import's."""


class TfvarsPlan(Protocol):
    """What a tfvars import decided: its files, and how to check their render."""

    @property
    def files(self) -> dict[Path, str]:
        """Absolute path -> text."""
        ...

    @property
    def report(self) -> list[str]:
        """The report lines."""
        ...

    @property
    def environments(self) -> list[str]:
        """The environments its clusters are in."""
        ...

    @property
    def counts(self) -> tuple[int, int]:
        """(clusters, declarations)."""
        ...

    def translate(
        self, file: str, line: int, what: str, field: str, message: str
    ) -> DefinitionError | None:
        """A problem of the render, as the input value that caused it (see
        :data:`Translate`)."""
        ...

    def verify(self, manifests: Mapping[str, Sequence[Manifest]]) -> list[DefinitionError]:
        """Every input value compared with the render (by environment)."""
        ...


class TfvarsImporter(Protocol):
    """A cloud's tfvars layout (``fleet import tfvars``)."""

    def plan(self, config: FleetConfig, options: TfvarsOptions, fleet: FleetAccess) -> TfvarsPlan:
        """Parse the input and decide every file; raises DefinitionErrors, writes nothing."""
        ...


# --- the importer -----------------------------------------------------------------------------


class CloudImporter(Protocol):
    """What a cloud's importer is (loaded through :class:`ImporterEntry`)."""

    @property
    def name(self) -> str:
        """The cloud, for messages."""
        ...

    @property
    def specs(self) -> Mapping[str, ResourceSpec]:
        """Each resource type it reads, by Terraform type."""
        ...

    @property
    def code(self) -> GeneratedCode:
        """What its generated modules call."""
        ...

    @property
    def clusters(self) -> frozenset[str]:
        """The resource types that are clusters (a state with none is nothing to import)."""
        ...

    @property
    def tfvars(self) -> TfvarsImporter | None:
        """Its tfvars layout, if it reads one."""
        ...

    def plan_states(self, request: StateRequest) -> StatePlanner:
        """Read what the states hold; raises DefinitionErrors (all problems at once)."""
        ...


# --- rules every importer applies -------------------------------------------------------------


def environment_of(
    name: str, state: StateFile, flag: str | None, config: FleetConfig, where: str = ""
) -> tuple[str, str]:
    """The environment of a cluster and why: from its name (one dash-separated segment
    naming an environment), else from its state file (``--state ENV=PATH``), else
    ``--environment``; ``where`` (its state and address) names it in the error."""
    found = sorted({s for s in name.split("-") if s in config.environments})
    if len(found) == 1:
        env = found[0]
        rule = f"the name {name!r} has the segment {env!r}"
        if state.environment not in (None, env):
            rule += f" (the state was given as {state.environment}=: the name decides)"
        return env, rule
    if state.environment is not None:
        return state.environment, f"the state was given as --state {state.environment}=PATH"
    if flag is not None:
        return flag, f"--environment {flag}"
    which = f"several ({', '.join(found)})" if found else "none"
    raise DefinitionError(
        f"cannot tell the environment of cluster {name!r}: its name holds {which} of "
        f"{', '.join(config.environments)}; pass the state as --state ENV=PATH, or "
        "--environment ENV",
        where=where or state.source,
    )


def tainted_lines(head: str, resource: StateResource, cloud: str) -> list[str]:
    """The report line for an object the state marks tainted, if it is."""
    if not resource.tainted:
        return []
    return [
        f"{head}: tainted in the state (Terraform would destroy and re-create it on its next "
        f"apply): adopted as it is, as {cloud} holds it"
    ]


def fate_lines(values: Sequence[StateValue], parent: str, cloud: str) -> list[str]:
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
        COMPUTED: f"computed, left to {cloud}",
    }
    for fate in (CARRIED, CREATE_ONLY, AUTOSCALED, INHERITED, COMPUTED):
        parts = [f"{', '.join(names)} ({rule})" for (f, rule), names in groups.items() if f == fate]
        if parts:
            out.append(f"{titles[fate]}: {'; '.join(parts)}")
    return out


# --- object names ------------------------------------------------------------------------------


def pinned_object_name(cloud_name: str, fallback: str) -> str:
    """An object name to pin (``object_name=``) where the one derived from ``cloud_name``
    is empty, longer than 63 characters or taken: the derived one cut to fit (``fallback``
    when nothing is left), ``-`` and 8 hex digits of the SHA-256 of the cloud's name.
    Stable: the same name gives the same pin in every environment and every re-import."""
    suffix = hashlib.sha256(cloud_name.encode("utf-8")).hexdigest()[:8]
    base = object_name_from(cloud_name) or fallback
    return f"{base[: MAX_LABEL - len(suffix) - 1].rstrip('-')}-{suffix}"


def why_pinned(derived: str, taken_by: str | None) -> str:
    """Why the object name derived from a cloud's name cannot be used as it is."""
    if taken_by is not None:
        return f"the derived {derived!r} is taken by {taken_by}"
    if not derived:
        return "nothing is left of the name in the derived one"
    if len(derived) > MAX_LABEL:
        return f"the derived one has {len(derived)} characters (at most {MAX_LABEL})"
    return f"the derived {derived!r} is not a DNS-1123 label"


def keyword_after(
    keywords: dict[str, Value], after: str, key: str, value: Value
) -> dict[str, Value]:
    """``keywords`` with ``key=value`` right after ``after`` (the order a generated call
    shows them in)."""
    out: dict[str, Value] = {}
    for name, given in keywords.items():
        out[name] = given
        if name == after:
            out[key] = value
    return out


def with_object_name(keywords: dict[str, Value], pin: str) -> dict[str, Value]:
    """``keywords`` with ``object_name=pin`` right after ``name``."""
    return keyword_after(keywords, "name", "object_name", pin)


def needs_pin(derived: str, taken: bool) -> bool:
    """Whether a derived object name must be pinned: taken, or not a DNS-1123 label."""
    return taken or not is_dns_label(derived)
