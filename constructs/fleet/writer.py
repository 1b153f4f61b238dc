"""Writes rendered environments into ``dist/``: whole environments, atomically."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

Files = Mapping[str, bytes]
"""Relative path inside ``dist/<env>/`` -> file bytes."""


def read_tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by relative POSIX path (empty when it does not exist)."""
    if not folder.is_dir():
        return {}
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for filename in sorted(filenames):
            path = Path(dirpath, filename)
            out[path.relative_to(folder).as_posix()] = path.read_bytes()
    return out


def diff_tree(folder: Path, files: Files) -> list[str]:
    """Relative paths that differ between ``folder`` and ``files`` (added, changed, removed)."""
    current = read_tree(folder)
    return sorted(p for p in current.keys() | files.keys() if current.get(p) != files.get(p))


def write_environment(dist: Path, environment: str, files: Files) -> None:
    """Replace ``dist/<environment>/`` with exactly ``files``.

    The new tree is written beside the old one and swapped in with renames, so a
    reader (or a crash) sees either the old or the new environment, never half of
    one; files that are no longer produced disappear with the old tree.
    """
    dist.mkdir(parents=True, exist_ok=True)
    target = dist / environment
    staging = dist / f".{environment}.new"
    retired = dist / f".{environment}.old"
    for leftover in (staging, retired):
        if leftover.exists():
            shutil.rmtree(leftover)
    for relpath, data in files.items():
        path = staging / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    staging.mkdir(exist_ok=True)
    if target.exists():
        target.rename(retired)
    staging.rename(target)
    if retired.exists():
        shutil.rmtree(retired)
