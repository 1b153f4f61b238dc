"""Writes rendered environments into ``dist/``: whole environments, atomically."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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


def _same_bytes(path: str, data: bytes) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(data) + 1) == data
    except OSError:
        return False


def _write_file(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _fill(staging: str, current: str | None, files: Files) -> None:
    """Write ``files`` into ``staging``; a file equal to the one in ``current`` is hard-linked.

    Linking instead of writing keeps an unchanged file's inode, so a re-synth that changes
    one cluster writes a handful of files, and git's index still sees the others unchanged.
    """
    folders = {""}
    for relpath, data in files.items():
        folder = relpath.rpartition("/")[0]
        if folder not in folders:
            os.makedirs(os.path.join(staging, folder), exist_ok=True)
            folders.add(folder)
        path = os.path.join(staging, relpath)
        if current is not None:
            old = os.path.join(current, relpath)
            if _same_bytes(old, data):
                try:
                    os.link(old, path)
                    continue
                except OSError:  # a file system without hard links: write it
                    pass
        _write_file(path, data)


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    # flock on the folder's own descriptor: no lock file appears in dist/.
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def write_environment(
    dist: Path, environment: str, files: Files, *, wait: bool = True
) -> threading.Thread | None:
    """Replace ``dist/<environment>/`` with exactly ``files``.

    The new tree is written beside the old one and swapped in with renames, so a
    reader (or a crash) sees either the old or the new environment, never half of
    one; files that are no longer produced disappear with the old tree. A lock on the
    ``dist`` folder itself keeps two synths at once from interleaving their swaps.

    With ``wait=False`` the old tree (hidden: ``.<env>.old-*``) is removed by a thread
    that is returned, so the caller can write the next environment meanwhile and join.
    """
    dist.mkdir(parents=True, exist_ok=True)
    with _locked(dist):
        target = dist / environment
        staging = Path(tempfile.mkdtemp(prefix=f".{environment}.new-", dir=dist))
        retired = dist / f".{environment}.old-{staging.name.rsplit('-', 1)[1]}"
        try:
            _fill(str(staging), str(target) if target.is_dir() else None, files)
            staging.chmod(0o755)
            if target.exists():
                target.rename(retired)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            if wait or not retired.exists():
                shutil.rmtree(retired, ignore_errors=True)
                retired_removal = None
            else:
                # Deleting thousands of files and folders is I/O-bound: overlap it with
                # writing the next environment.
                retired_removal = threading.Thread(
                    target=shutil.rmtree, args=(retired,), kwargs={"ignore_errors": True}
                )
                retired_removal.start()
    return retired_removal
