"""The fleet an import writes into, as ``fleet synth`` loads it: its modules' module-level
values (templates, account declarations a generated module imports), and what it declares
outside the modules an import replaces. Each is loaded fresh and forgotten afterwards."""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType

from fleet.clouds.base import FleetCluster
from fleet.clouds.importer import ExistingFleet, FleetAccess, ModuleValues
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionErrors
from fleet.core.values import location_root
from fleet.pipeline.discovery import helper_modules, import_modules, load_fleet


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


def module_values(config: FleetConfig) -> list[ModuleValues]:
    """The module-level values of the modules ``fleet synth`` loads (``define`` not
    called): the declaration modules, imported by the one function synth imports them with
    (:func:`fleet.pipeline.discovery.import_modules`), and the helper modules they import;
    a module of these that fails to import is one error. Then, ``loaded=False``, each other
    helper module (a template catalog no cluster uses yet, ``clusters/_example.py``): read
    only as templates to refer to, never a reason to refuse (one that fails to import is
    not read: synth never loads it)."""
    package = config.clusters_dir.name
    if not config.clusters_dir.is_dir():
        return []
    # Locations (a template's `where`) relative to the project, as load_fleet gives them.
    with project_modules(config.clusters_dir.parent, package), location_root(config.root):
        _, errors = import_modules(config, package)
        if errors:
            raise DefinitionErrors(errors)
        found = [
            _values_of(name, module, loaded=True)
            for name, module in sorted(sys.modules.items())
            if name.startswith(package + ".") and getattr(module, "__file__", None)
        ]
        loaded = {m.module for m in found}
        for path in helper_modules(config):
            name = f"{package}.{path.stem}"
            if name in loaded:
                continue
            try:
                module = importlib.import_module(name)
            except Exception:  # user code synth never runs: not read
                continue
            found.append(_values_of(name, module, loaded=False))
    return found


def _values_of(name: str, module: ModuleType, *, loaded: bool) -> ModuleValues:
    return ModuleValues(
        path=Path(str(module.__file__)),
        module=name,
        values=dict(sorted(vars(module).items())),
        loaded=loaded,
    )


def _file_of(config: FleetConfig, where: str) -> Path:
    path = Path(where.rsplit(":", 1)[0])
    return (path if path.is_absolute() else config.root / path).resolve()


def scan_fleet(config: FleetConfig, ours: Mapping[str, Path]) -> ExistingFleet:
    """Load the fleet as ``fleet synth`` does and list its declarations and clusters; those
    of ``ours`` (the modules this import rewrites) are kept apart."""
    if not config.clusters_dir.is_dir():
        return ExistingFleet()
    replaced = set(ours.values())
    fleet = load_fleet(config)
    found = ExistingFleet()
    others = []
    for decl in fleet.declarations():
        file = _file_of(config, decl.where)
        mine = file in replaced
        if not mine:
            found.ids[decl.construct_id] = decl.where
            others.append((decl, file))
        if isinstance(decl, FleetCluster):
            for env in decl.environments:
                key = (env, decl.cloud_name(env))
                if mine:
                    found.ours[key] = file
                else:
                    found.clusters[key] = decl.context
    return ExistingFleet(
        clusters=found.clusters, ids=found.ids, ours=found.ours, declarations=tuple(others)
    )


def access(config: FleetConfig) -> FleetAccess:
    """How an importer reads ``config``'s fleet."""
    return FleetAccess(
        module_values=lambda: module_values(config),
        existing=lambda ours: scan_fleet(config, ours),
    )
