"""Writes rendered environments into ``dist/``: whole environments, atomically."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
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
    one; files that are no longer produced disappear with the old tree. A lock file
    keeps two synths running at once from interleaving their swaps.
    """
    dist.mkdir(parents=True, exist_ok=True)
    with (dist / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        target = dist / environment
        staging = Path(tempfile.mkdtemp(prefix=f".{environment}.new-", dir=dist))
        retired = dist / f".{environment}.old-{staging.name.rsplit('-', 1)[1]}"
        try:
            for relpath, data in files.items():
                path = staging / relpath
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            staging.chmod(0o755)
            if target.exists():
                target.rename(retired)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            shutil.rmtree(retired, ignore_errors=True)
