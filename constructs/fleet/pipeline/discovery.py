"""Finds the fleet's declarations: every module in ``clusters/``, no registration needed.

Every module of the declarations folder whose name does not start with ``_`` is a
declaration module and must have a ``define(fleet)`` function; one without is an error
(a forgotten or misspelt ``define`` would otherwise drop its clusters without a word).
Modules whose name starts with ``_`` (``clusters/_templates.py``) are helpers: never
loaded by discovery, imported by the declaration modules that use them. Sub-packages are
not searched.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import py_compile
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors, FleetError
from fleet.core.fleet import Fleet
from fleet.core.usercode import call, check_signature, raised_at, wrong_result
from fleet.core.values import location_root

DEFINE = "define(fleet): def define(fleet: Fleet) -> None"
"""What a declaration module's ``define`` must be."""
HELPER_PREFIX = "_"
"""A module of ``clusters/`` whose name starts with this is a helper, not a declaration."""


def discover(config: FleetConfig) -> list[Path]:
    """The declaration modules, sorted by file name (helpers, ``_``-prefixed, left out)."""
    folder = config.clusters_dir
    if not folder.is_dir():
        raise DefinitionError(f"no declarations folder {folder}", field="clusters")
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith(HELPER_PREFIX))


def helper_modules(config: FleetConfig) -> list[Path]:
    """The helper modules of the declarations folder (``_``-prefixed, ``__init__`` aside):
    loaded by synth only when a declaration module imports them."""
    folder = config.clusters_dir
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(HELPER_PREFIX + "*.py") if p.name != "__init__.py")


def missing_define(path: Path, config: FleetConfig, found: object = None) -> DefinitionError:
    """The error for a declaration module without a ``define(fleet)`` function (``found``:
    what its ``define`` is instead, if anything)."""
    helper = path.with_name(HELPER_PREFIX + path.name)
    instead = f" (`define` is of type {type(found).__name__})" if found is not None else ""
    return DefinitionError(
        f"no define(fleet) function{instead}; every module of "
        f"{_rel(str(config.clusters_dir), config)}/ declares with one, and a helper module's "
        f"name starts with `{HELPER_PREFIX}` (rename it to {_rel(str(helper), config)})",
        where=f"{_rel(str(path), config)}:1",
    )


def load_fleet(config: FleetConfig) -> Fleet:
    """Import every declaration module, call its ``define(fleet)``, then run the phases.

    Once every ``define()`` ran, :meth:`Fleet.run_phases` locks the tree, applies
    Aspects, runs each declaration's ``prepare()`` and the validations: nothing depends
    on the order modules load in. Modules are imported fresh on each call (so a second
    synth in the same process, or another project, sees the current files). All problems
    are collected and raised together, one line each.
    """
    package = config.clusters_dir.name
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]
    # The project's root goes first on sys.path for the duration of the load, so a
    # `clusters` package of another project loaded earlier in this process never wins.
    saved_path = list(sys.path)
    root = str(config.clusters_dir.parent)
    sys.path[:] = [root, *(p for p in sys.path if p != root)]
    try:
        with location_root(config.root):
            return _load(config, package)
    finally:
        sys.path[:] = saved_path


_CHECKED_HASH = (0b11).to_bytes(4, "little")
"""The flags of a checked hash-based ``.pyc`` (PEP 552): validated against the source's hash."""


def _bytecode_checks_content(folder: Path) -> None:
    """Make the cached bytecode of every module in ``folder`` checked hash-based.

    Python's default ``.pyc`` is valid while the source's mtime, in whole seconds, and its
    size are unchanged (CPython ``importlib/_bootstrap_external.py``
    ``_validate_timestamp_pyc``): an edit of the same size within the second of the last
    load (``node_count=3`` -> ``4``) would render the old declarations. A checked
    hash-based ``.pyc`` is validated against the source's content on every import, and
    importlib keeps writing that kind once it found one. Only a module with a timestamp
    ``.pyc`` is compiled here (once); without one, the import compiles it as usual.
    """
    for source in folder.rglob("*.py"):
        cached = Path(importlib.util.cache_from_source(str(source)))
        try:
            with cached.open("rb") as f:
                head = f.read(8)
        except OSError:
            continue  # no bytecode cached (or unreadable): importing compiles the source
        if head[:4] == importlib.util.MAGIC_NUMBER and head[4:8] == _CHECKED_HASH:
            continue
        try:
            py_compile.compile(
                str(source),
                cfile=str(cached),
                invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
                quiet=2,
            )
        except OSError:  # a read-only cache: drop the stale file if we can
            with contextlib.suppress(OSError):
                cached.unlink()


def import_modules(
    config: FleetConfig, package: str
) -> tuple[list[tuple[Path, ModuleType]], list[DefinitionError]]:
    """Import the declaration modules (:func:`discover`) of ``package`` as ``fleet synth``
    does, ``define`` not called: the one way the fleet's modules are loaded (synth, and
    ``fleet import`` reading their module-level values). Helper modules are loaded only
    when a declaration module imports them. Each module that fails is one error."""
    _bytecode_checks_content(config.clusters_dir)
    importlib.invalidate_caches()
    loaded: list[tuple[Path, ModuleType]] = []
    errors: list[DefinitionError] = []
    for path in discover(config):
        with _collected(errors, path, config):
            loaded.append((path, importlib.import_module(f"{package}.{path.stem}")))
    return loaded, errors


@contextlib.contextmanager
def _collected(errors: list[DefinitionError], path: Path, config: FleetConfig) -> Iterator[None]:
    """Run the block for the module at ``path``; what it raises for bad input joins
    ``errors`` (an exception of the user's code as one line naming where it failed), so
    that every module's problems are reported at once. The fleet's other errors stop."""
    try:
        yield
    except DefinitionErrors as e:
        errors.extend(e.errors)
    except DefinitionError as e:
        errors.append(e)
    except FleetError:
        raise
    except Exception as e:
        errors.append(_module_error(e, path, config))


def _module_error(e: Exception, path: Path, config: FleetConfig) -> DefinitionError:
    """A module's import that raised, as one line naming where it failed."""
    if isinstance(e, SyntaxError):
        return DefinitionError(
            f"syntax error: {e.msg}", where=f"{_rel(e.filename, config)}:{e.lineno}"
        )
    where = raised_at(e, f"{_rel(str(path), config)}:1")
    return DefinitionError(f"{type(e).__name__}: {e}", where=where)


def _load(config: FleetConfig, package: str) -> Fleet:
    fleet = Fleet(config)
    loaded, errors = import_modules(config, package)
    for path, module in loaded:
        with _collected(errors, path, config):
            define = getattr(module, "define", None)
            if not callable(define):
                errors.append(missing_define(path, config, define))
                continue
            check_signature(define, fleet, field="define", expected=DEFINE)
            returned = call(define, fleet, field="define")
            if returned is not None:
                errors.append(
                    wrong_result(
                        define,
                        returned,
                        field="define",
                        expected="define(fleet) declares on the fleet and returns None",
                    )
                )
    if errors:
        raise DefinitionErrors(errors)
    fleet.run_phases()
    return fleet


def _rel(filename: str | None, config: FleetConfig) -> str:
    if not filename:
        return "?"
    try:
        return str(Path(filename).resolve().relative_to(config.root))
    except ValueError:
        return filename
