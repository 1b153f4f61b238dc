"""What the modules ``fleet import`` writes may hold, checked before anything writes or
runs them: one allow-list (:data:`SHAPE`) for both import commands, from what their
generators emit (:mod:`fleet.importers.codegen`, :mod:`fleet.importers.state_codegen`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from fleet.codegen.source_check import Shape, check_source
from fleet.importers.codegen import (
    DECLARATION_CALLS,
    GENERATED_PREFIX,
    LOOKUPS,
    MODULE_LEVEL_CALLS,
    TEMPLATES_MODULE,
)

SHAPE = Shape(
    docstring_prefix=GENERATED_PREFIX,
    calls=DECLARATION_CALLS,
    module_calls=MODULE_LEVEL_CALLS,
    lookups=LOOKUPS,
)


def check_generated(files: Mapping[Path, str], package: str) -> None:
    """Refuse (GeneratedCodeError, one line) unless every module of ``files`` has the
    shape a generator writes; ``package`` is the fleet's declarations package."""
    for path, text in sorted(files.items()):
        check_source(
            text,
            SHAPE,
            package=package,
            catalog=path.stem == TEMPLATES_MODULE,
            where=path.name,
        )
