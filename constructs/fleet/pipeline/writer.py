"""Writes rendered environments into ``dist/``.

The first write of an environment is all-or-nothing: the tree is filled in a hidden folder
beside it and renamed into place. Later writes update ``dist/<env>/`` in place: each changed
file is replaced atomically, unchanged files are not touched, and files no longer produced
are deleted only after every write succeeded (see ``write_environment``). A render that
fails writes nothing; that is the caller's decision (``fleet.pipeline.synth``).
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

Files = Mapping[str, bytes]
"""Relative path inside ``dist/<env>/`` -> file bytes."""

_TEMP = ".fleet-tmp-"
"""Prefix of the hidden file a changed file is written to before it is renamed into place."""


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
    # Raw descriptors: about twice as fast as open() for thousands of small files. A short
    # read (never seen for a regular file) only makes an unchanged file be written again.
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        return os.read(fd, len(data) + 1) == data
    except OSError:
        return False
    finally:
        os.close(fd)


def _write_file(path: str, data: bytes) -> None:
    # O_EXCL: never write through something already at ``path`` (a symlink included).
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _fill(staging: str, files: Files) -> None:
    """Write ``files`` into the empty folder ``staging``."""
    folders = {""}
    for relpath, data in files.items():
        folder = relpath.rpartition("/")[0]
        if folder not in folders:
            os.makedirs(os.path.join(staging, folder), exist_ok=True)
            folders.add(folder)
        _write_file(os.path.join(staging, relpath), data)


def _scan(root: str) -> tuple[set[str], set[str], set[str], list[str]]:
    """What is under ``root``, by relative path, without following symlinks.

    Returns regular files, folders (``""`` is ``root``), anything else (symlinks, FIFOs,
    ...), and this module's temporary files left by an interrupted write.
    """
    files: set[str] = set()
    folders = {""}
    others: set[str] = set()
    temps: list[str] = []
    pending = [""]
    while pending:
        folder = pending.pop()
        with os.scandir(os.path.join(root, folder)) as entries:
            for entry in entries:
                relpath = f"{folder}/{entry.name}" if folder else entry.name
                if entry.is_dir(follow_symlinks=False):
                    folders.add(relpath)
                    pending.append(relpath)
                elif entry.name.startswith(_TEMP):
                    temps.append(relpath)
                elif entry.is_file(follow_symlinks=False):
                    files.add(relpath)
                else:
                    others.add(relpath)
    return files, folders, others, temps


def _remove(path: str) -> None:
    """Remove a file, symlink or folder tree at ``path`` (a symlink is not followed)."""
    with suppress(FileNotFoundError):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def _update(root: str, files: Files) -> None:
    """Make ``root`` hold exactly ``files``: writes first, then deletions (see below)."""
    existing, folders, others, temps = _scan(root)
    for relpath in temps:
        _remove(os.path.join(root, relpath))
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    written = 0
    for relpath, data in files.items():
        path = f"{root}/{relpath}"
        if relpath in existing and _same_bytes(path, data):
            continue
        # Every ancestor must be a real folder: whatever else is there (a file, a symlink
        # that could lead outside dist/) is not produced, since a file is produced below it.
        folder = relpath.rpartition("/")[0]
        if folder not in folders:
            parts = folder.split("/")
            for depth in range(1, len(parts) + 1):
                ancestor = "/".join(parts[:depth])
                if ancestor not in folders:
                    if ancestor in existing or ancestor in others:
                        os.unlink(os.path.join(root, ancestor))
                        existing.discard(ancestor)
                        others.discard(ancestor)
                    os.mkdir(os.path.join(root, ancestor))
                    folders.add(ancestor)
        temp = os.path.join(root, folder, f"{_TEMP}{token}-{written}")
        written += 1
        try:
            _write_file(temp, data)
            if relpath in folders:  # a folder where the file goes: nothing in it is produced
                shutil.rmtree(path)
                folders.discard(relpath)
            os.replace(temp, path)  # replaces a symlink itself, never its target
        except BaseException:
            _remove(temp)
            raise
    # Already gone (or a file now) when below a folder that a produced file replaced.
    for relpath in (existing | others) - files.keys():
        with suppress(FileNotFoundError, NotADirectoryError):
            os.unlink(os.path.join(root, relpath))
    needed = {""}
    for relpath in files:
        folder = relpath.rpartition("/")[0]
        while folder not in needed:
            needed.add(folder)
            folder = folder.rpartition("/")[0]
    for folder in sorted(folders - needed, reverse=True):  # "a/b" before "a"
        with suppress(FileNotFoundError, NotADirectoryError):
            os.rmdir(os.path.join(root, folder))


def _remove_leftovers(dist: Path, environment: str) -> None:
    """Remove staging (or, from earlier versions, retired) trees of an interrupted write."""
    prefixes = (f".{environment}.new-", f".{environment}.old-")
    with os.scandir(dist) as entries:
        leftovers = [e.path for e in entries if e.name.startswith(prefixes)]
    for path in leftovers:
        _remove(path)


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    # flock on the folder's own descriptor: no lock file appears in dist/.
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def write_environment(dist: Path, environment: str, files: Files) -> None:
    """Make ``dist/<environment>/`` hold exactly ``files``.

    A lock on the ``dist`` folder itself keeps two synths at once from interleaving.

    When the folder does not exist yet, the tree is filled in a hidden folder in ``dist``
    and renamed into place: a reader (or a crash) sees all of it or none of it.

    When it exists, it is updated in place, because rebuilding thousands of folders and
    files to change a handful costs more than the rest of an incremental synth:

    1. every file whose bytes differ (or that is missing) is written to a hidden temporary
       file in its folder and renamed over the old one, so each file changes atomically;
       an unchanged file is not touched (same inode and mtime, so git sees it unchanged);
    2. only after every write succeeded, files that are no longer produced are deleted,
       then folders left empty.

    So a crash or an error halfway can leave a mix of old and new files, but never deletes a
    file the new render still produces, and never removes a file before the new ones exist:
    ArgoCD prunes what is missing from ``dist/``, so deleting last is the safe direction.
    The next synth completes the update, and ``fleet synth --check`` reports a half-written
    folder in CI. (One exception to "deletions last": a file or symlink where the new render
    needs a folder, or a folder where it needs a file, is removed when that path is written;
    the new render produces nothing at it.) Symlinks in the tree are replaced, never
    followed, and temporary files left by an interrupted write are removed.
    """
    dist.mkdir(parents=True, exist_ok=True)
    with _locked(dist):
        _remove_leftovers(dist, environment)
        target = dist / environment
        if target.is_dir() and not target.is_symlink():
            _update(str(target), files)
            return
        staging = dist / f".{environment}.new-{os.getpid()}-{secrets.token_hex(4)}"
        staging.mkdir()
        try:
            _fill(str(staging), files)
            if target.is_symlink() or target.exists():  # not a folder: nothing to keep
                target.unlink()
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
