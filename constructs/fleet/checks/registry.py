"""Every check on rendered objects, in one registry: what synth, ``fleet validate`` and
``fleet diff`` run (``fleet validate`` and ``fleet diff`` run it through the synth).

A :class:`Check` is a value: a name, a scope, whether its verdict may be cached, and the
function that runs it. The tool's own checks are :data:`BUILTIN_CHECKS`, in the order their
problems are reported; a fleet adds its own in a ``define()``, after them::

    from fleet import Check, Checks, Problem

    def no_latest_tag(manifests, context):
        return [
            Problem.of(m, "spec.image", "pin a version, not latest")
            for m in manifests
            if str(m.body.get("spec", {}).get("image", "")).endswith(":latest")
        ]

    def define(fleet):
        Checks.of(fleet).add(
            Check(name="no-latest-tag", scope="object", cacheable=True, run=no_latest_tag)
        )

``Checks.of(fleet).all`` is the one list that every consumer iterates. Adding a check to
the tool is its module, its tests and one entry in :data:`BUILTIN_CHECKS`.

**Scope.** An ``"object"`` check judges each object on its own: it may be handed any subset
of one environment's objects, and what it says about an object must not depend on the
others (the schema, CEL rules, the secret guard). An ``"environment"`` check is handed every
object of one environment at once (references between objects, bootstrap waves).

**Cacheable** (object scope only). The synth keeps the verdict "no problem" of each object in
``.fleet/cache/synth`` (:mod:`fleet.pipeline.cache`), keyed by the object's content and by
:func:`verdict_key`: the name, code and inputs of every cacheable check. An object whose
kept verdict matches is not handed to cacheable checks again. A check's code is the
``fleet`` package (any change drops the whole cache) and, for a check defined outside it,
the source file of the module that defines its ``run``; whatever else its verdict depends on
(data files, settings) its ``inputs`` function returns as a string (a digest). A check that
cannot say so must not be cacheable.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from fleet.checks.crds import plugin_crds
from fleet.checks.problem import Problem
from fleet.checks.references import check_references
from fleet.checks.secret_guard import find_secret_material
from fleet.checks.waves import check_waves
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError
from fleet.core.fleet import Fleet, fleet_argument
from fleet.core.manifest import Manifest
from fleet.core.tree import MetadataEntry
from fleet.core.usercode import call, wrong_result
from fleet.core.values import caller_location
from fleet.platform.plugins import Platform, PluginSet

CheckScope = Literal["object", "environment"]
"""``"object"``: each object judged on its own; ``"environment"``: one environment at once."""


@dataclass(frozen=True)
class CheckContext:
    """What a check may read besides the objects: the fleet's configuration, the CRD
    folder schemas are checked against (None: no CRDs, schemas are not checked), and the
    fleet's plug-ins (:meth:`of` takes them from the fleet)."""

    config: FleetConfig
    crds_dir: Path | None
    plugins: PluginSet
    """The plug-ins of the fleet's declarations and its fleet-wide components
    (``Platform.of(fleet).plugins``): which component owns a kind, the reference rules,
    the plug-ins' CRDs."""
    schemaless: frozenset[tuple[str, str]] = frozenset()
    """(apiVersion, kind) the fleet accepts without a schema (:meth:`Checks.accept_schemaless`)."""

    @classmethod
    def of(cls, fleet: Fleet, crds_dir: Path | None) -> CheckContext:
        """The context of ``fleet``'s checks: its configuration, schemaless kinds and
        plug-ins, against ``crds_dir``."""
        return cls(fleet.config, crds_dir, Platform.of(fleet).plugins, Checks.of(fleet).schemaless)


CheckFunction = Callable[[Sequence[Manifest], CheckContext], list[Problem]]
"""``run(manifests, context) -> problems``, one :class:`Problem` per thing wrong."""


def no_inputs(context: CheckContext) -> str:
    """The ``inputs`` of a check whose verdict depends only on the object and its code."""
    return ""


@dataclass(frozen=True, kw_only=True)
class Check:
    """One check on rendered objects (see the module docstring for scope and caching)."""

    name: str
    """Unique among the fleet's checks (the built-in ones and those a fleet adds)."""
    scope: CheckScope
    run: CheckFunction
    cacheable: bool = False
    """Whether synth may keep an object's "no problem" verdict (object scope only)."""
    inputs: Callable[[CheckContext], str] = no_inputs
    """What the verdict depends on besides the object and the check's code, as a string."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise DefinitionError(
                f"a check needs a name, got {self.name!r}", where=caller_location(), field="name"
            )
        if self.scope not in get_args(CheckScope):
            raise DefinitionError(
                f"expected 'object' or 'environment', got {self.scope!r}",
                where=caller_location(),
                field="scope",
            )
        if not callable(self.run):
            raise DefinitionError(
                f"expected a function (manifests, context) -> problems, got {self.run!r}",
                where=caller_location(),
                field="run",
            )
        if self.cacheable and self.scope != "object":
            raise DefinitionError(
                f"check {self.name!r}: only an 'object' check may be cacheable (an "
                "'environment' check's verdict depends on the other objects)",
                where=caller_location(),
                field="cacheable",
            )


# --- the built-in checks ---------------------------------------------------------------------


def _schema(manifests: Sequence[Manifest], context: CheckContext) -> list[Problem]:
    if context.crds_dir is None:
        return []
    # Imported here: jsonschema-rs and the CEL runtime cost 40 ms, which `import fleet`
    # (every command, a fleet's own checks) need not pay.
    from fleet.checks.schema import validate_manifests

    return validate_manifests(
        manifests,
        crds_dir=context.crds_dir,
        schemaless=context.schemaless,
        extra=plugin_crds(context.plugins),
    )


def _schema_inputs(context: CheckContext) -> str:
    from fleet.checks.schema import schema_inputs

    return schema_inputs(context.crds_dir, context.schemaless, plugin_crds(context.plugins))


def _references(manifests: Sequence[Manifest], context: CheckContext) -> list[Problem]:
    return check_references(manifests, context.plugins)


def _waves(manifests: Sequence[Manifest], context: CheckContext) -> list[Problem]:
    return check_waves(manifests, context.plugins, context.config.dist)


def _secret_guard(manifests: Sequence[Manifest], context: CheckContext) -> list[Problem]:
    return find_secret_material(manifests)


BUILTIN_CHECKS: tuple[Check, ...] = (
    # Every object against its CRD (or core Kubernetes) schema and CEL rules: checks/schema.py.
    Check(name="schema", scope="object", run=_schema, cacheable=True, inputs=_schema_inputs),
    # Names, and every reference resolves in the environment: checks/references.py.
    Check(name="references", scope="environment", run=_references),
    # Every kind's CRD is installed in an earlier bootstrap wave: checks/waves.py.
    Check(name="waves", scope="environment", run=_waves),
    # No credential material in dist/: checks/secret_guard.py.
    Check(name="secret-guard", scope="object", run=_secret_guard, cacheable=True),
)
"""The tool's checks, in the order their problems are reported."""


# --- a fleet's own checks ----------------------------------------------------------------------

_METADATA = "fleet:check"
_SCHEMALESS = "fleet:schemaless"
"""The ``add_metadata`` type a fleet's own checks are kept under, on the Fleet's node."""


class Checks:
    """The checks of one fleet: ``Checks.of(fleet).add(check)`` in a ``define()``.

    A check added here runs wherever the built-in ones do (synth, its parallel workers,
    ``fleet validate``, ``fleet diff``, :func:`fleet.testing.synth` with ``validate``),
    after them. It belongs to the fleet: another fleet loaded in the same process does not
    see it.
    """

    __slots__ = ("_fleet",)

    def __init__(self, fleet: Fleet) -> None:
        self._fleet = fleet

    @classmethod
    def of(cls, fleet: Fleet) -> Checks:
        """The checks of ``fleet``."""
        return cls(fleet_argument(fleet, "checks belong"))

    def add(self, check: Check) -> None:
        """Run ``check`` too. Its name must not be taken (built-in or added before)."""
        if not isinstance(check, Check):
            raise DefinitionError(
                f"expected a fleet.Check, got {type(check).__name__}",
                where=caller_location(),
                field="check",
            )
        for builtin in BUILTIN_CHECKS:
            if builtin.name == check.name:
                raise DefinitionError(
                    f"a built-in check is named {check.name!r}; choose another name",
                    where=caller_location(),
                    field="name",
                )
        for entry in self._entries():
            if entry.data.name == check.name:
                raise DefinitionError(
                    f"a check named {check.name!r} was added at {entry.where}",
                    where=caller_location(),
                    field="name",
                )
        self._fleet.node.add_metadata(_METADATA, check)

    def accept_schemaless(self, api_version: str, kind: str) -> None:
        """Let objects of ``api_version``/``kind`` pass the schema check without a CRD (a
        kind of your own whose CRD the fleet does not have): they are then not checked."""
        for value, field in ((api_version, "api_version"), (kind, "kind")):
            if not isinstance(value, str) or not value:
                raise DefinitionError(
                    f"must be a non-empty string, got {value!r}",
                    where=caller_location(),
                    field=field,
                )
        self._fleet.node.add_metadata(_SCHEMALESS, (api_version, kind))

    @property
    def schemaless(self) -> frozenset[tuple[str, str]]:
        """The (apiVersion, kind) pairs :meth:`accept_schemaless` let through."""
        return frozenset(e.data for e in self._fleet.node.metadata if e.type == _SCHEMALESS)

    def _entries(self) -> list[MetadataEntry]:
        return [e for e in self._fleet.node.metadata if e.type == _METADATA]

    @property
    def all(self) -> tuple[Check, ...]:
        """The built-in checks, then the fleet's own in the order they were added."""
        return (*BUILTIN_CHECKS, *(e.data for e in self._entries()))


# --- running them ------------------------------------------------------------------------------


def run_checks(
    checks: Sequence[Check],
    manifests: Sequence[Manifest],
    context: CheckContext,
    *,
    unchecked: Sequence[Manifest] | None = None,
) -> dict[str, list[Problem]]:
    """Run ``checks`` on one environment's ``manifests``: check name -> its problems.

    A cacheable check gets only ``unchecked`` (default: every object), and is not called
    when that is empty; every other check gets every object. (An object check may also be
    run on consecutive parts of the objects, and its problems joined in order.)
    """
    out: dict[str, list[Problem]] = {}
    for check in checks:
        subject = manifests if unchecked is None or not check.cacheable else unchecked
        out[check.name] = _run(check, subject, context) if subject else []
    return out


def _run(check: Check, manifests: Sequence[Manifest], context: CheckContext) -> list[Problem]:
    """``check.run``; a fleet's own check that raises, or returns anything but a list of
    problems, is one DefinitionError at its line (as a ``define()`` that raises)."""
    if any(check is builtin for builtin in BUILTIN_CHECKS):
        return check.run(manifests, context)
    field = f"check {check.name}"
    found = call(
        check.run,
        manifests,
        context,
        field=field,
        doing=lambda: f"on {manifests[0].environment}",
    )
    if not isinstance(found, list) or not all(isinstance(p, Problem) for p in found):
        raise wrong_result(check.run, found, field=field, expected="expected a list of Problem")
    return found


def collect(results: Sequence[Mapping[str, Sequence[Problem]]]) -> list[Problem]:
    """The problems of several environments' :func:`run_checks` (all from the same checks),
    check by check in registry order, each check's environment by environment."""
    names = dict.fromkeys(name for result in results for name in result)
    return [p for name in names for result in results for p in result.get(name, ())]


def check_environments(
    checks: Sequence[Check], environments: Mapping[str, Sequence[Manifest]], context: CheckContext
) -> list[Problem]:
    """Run ``checks`` on every environment's objects (no cache): their problems, in order."""
    return collect([run_checks(checks, ms, context) for ms in environments.values()])


def _code_digest(function: Callable[..., object]) -> bytes:
    """The source file of the module that defines ``function`` (else its bytecode); for a
    ``functools.partial``, that of the function it wraps, and the arguments it binds."""
    h = hashlib.blake2b(digest_size=16)
    while isinstance(function, functools.partial):
        # repr() of an object without its own holds its address: a new value every run,
        # so never a stale verdict.
        h.update(repr((function.args, sorted(function.keywords.items()))).encode())
        function = function.func
    module = sys.modules.get(getattr(function, "__module__", "") or "")
    path = getattr(module, "__file__", None)
    try:
        h.update(Path(path).read_bytes() if path else b"")
    except OSError:
        path = None
    if not path:
        code = getattr(function, "__code__", None)
        h.update(marshal.dumps(code) if code is not None else repr(function).encode())
    return h.digest()


def verdict_key(checks: Sequence[Check], context: CheckContext) -> str:
    """What an object's cached "no problem" verdict stands for: the name, the code and the
    inputs of every cacheable check in ``checks``. Any change gives another key."""
    h = hashlib.blake2b(digest_size=16)
    for check in checks:
        if check.cacheable:
            h.update(check.name.encode() + b"\0" + _code_digest(check.run) + b"\0")
            h.update(check.inputs(context).encode() + b"\0")
    return h.hexdigest()
