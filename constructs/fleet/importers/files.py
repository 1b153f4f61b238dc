"""Writing what an import decided: every module checked first, each file atomically."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from fleet.clouds.importer import CloudImporter
from fleet.core.config import FleetConfig
from fleet.importers.generated import check_generated


def write_files(
    files: dict[Path, str], config: FleetConfig, importers: Sequence[CloudImporter] | None = None
) -> list[Path]:
    """Write each file atomically (a temporary file, then a rename); sorted paths. Every
    module is checked first (:func:`check_generated`), so that none is written unless all
    have the shape an import writes."""
    check_generated(files, config.clusters_dir.name, importers)
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
