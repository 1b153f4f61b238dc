"""What the modules ``fleet import`` writes may hold, checked before anything writes or
runs them: one allow-list for both import commands, from what every importer's generators
emit (:class:`fleet.clouds.importer.GeneratedCode`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from fleet.clouds.importer import CloudImporter
from fleet.codegen.layout import GENERATED_PREFIX, PER_ENV
from fleet.codegen.source_check import Shape, check_source
from fleet.importers.registry import cloud_importers


def shape(importers: Sequence[CloudImporter]) -> Shape:
    """The allow-list of ``importers``' generated modules."""
    return Shape(
        docstring_prefix=GENERATED_PREFIX,
        calls=frozenset({PER_ENV, *(c for i in importers for c in i.code.calls)}),
        module_calls=frozenset(c for i in importers for c in i.code.module_calls),
        lookups=frozenset(c for i in importers for c in i.code.lookups),
        plugin_names={
            i.code.module: frozenset(i.code.calls | i.code.lookups)
            for i in importers
            if i.code.module != "fleet"
        },
    )


def check_generated(
    files: Mapping[Path, str], package: str, importers: Sequence[CloudImporter] | None = None
) -> None:
    """Refuse (GeneratedCodeError, one line) unless every module of ``files`` has the
    shape a generator writes; ``package`` is the fleet's declarations package, ``importers``
    those whose modules these are (default: every importer)."""
    found = cloud_importers() if importers is None else tuple(importers)
    allowed = shape(found)
    catalogs = {stem for i in found for stem in i.code.catalogs}
    for path, text in sorted(files.items()):
        check_source(text, allowed, package=package, catalog=path.stem in catalogs, where=path.name)
