"""Writes rendered environments into ``dist/``.

The first write of an environment is all-or-nothing: the tree is filled in a hidden folder
beside it and renamed into place. Later writes update ``dist/<env>/`` in place: each changed
file is replaced atomically, unchanged files are not touched, and files no longer produced
are deleted only after every write succeeded (see ``write_environment``). A render that
fails writes nothing; that is the caller's decision (``fleet.pipeline.synth``).

A first write can also be staged while the synth still renders (:class:`Staging`): a helper
process fills the hidden folder from the files the synth hands it, so the disk works while
Python renders, and the folder is renamed into place only when the whole synth succeeded.
"""

from __future__ import annotations

import fcntl
import os
import queue
import secrets
import shutil
import struct
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

Files = Mapping[str, bytes]
"""Relative path inside ``dist/<env>/`` -> file bytes."""

TEMP_PREFIX = ".fleet-tmp-"
"""Prefix of the hidden file a changed file is written to before it is renamed into place."""


def _outside(relpath: str) -> bool:
    """Whether ``relpath`` is not a plain relative path below its folder (empty, absolute,
    with a ``.`` or ``..`` part or an empty one, or a NUL): it could name a file elsewhere."""
    padded = f"/{relpath}/"
    return "/../" in padded or "/./" in padded or "//" in padded or "\0" in relpath


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
                elif entry.name.startswith(TEMP_PREFIX):
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


def _update(root: str, files: Files) -> int:
    """Make ``root`` hold exactly ``files``: writes first, then deletions (see below).
    Returns how many files it wrote or deleted."""
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
        temp = os.path.join(root, folder, f"{TEMP_PREFIX}{token}-{written}")
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
    deleted = 0
    for relpath in (existing | others) - files.keys():
        with suppress(FileNotFoundError, NotADirectoryError):
            os.unlink(os.path.join(root, relpath))
            deleted += 1
    needed = {""}
    for relpath in files:
        folder = relpath.rpartition("/")[0]
        while folder not in needed:
            needed.add(folder)
            folder = folder.rpartition("/")[0]
    for folder in sorted(folders - needed, reverse=True):  # "a/b" before "a"
        with suppress(FileNotFoundError, NotADirectoryError):
            os.rmdir(os.path.join(root, folder))
    return written + deleted


def _new_folder(dist: Path, environment: str) -> Path:
    """A fresh name for the hidden folder a first write of ``environment`` fills."""
    return dist / f".{environment}.new-{os.getpid()}-{secrets.token_hex(4)}"


def _remove_leftovers(dist: Path, environment: str) -> None:
    """Remove staging (:func:`_new_folder`; or, from earlier versions, retired) trees of an
    interrupted write."""
    prefixes = (f".{environment}.new-", f".{environment}.old-")
    with os.scandir(dist) as entries:
        leftovers = [e.path for e in entries if e.name.startswith(prefixes)]
    for path in leftovers:
        _remove(path)


def _lock(folder: Path, *, wait: bool = True) -> int | None:
    """Lock ``folder``, the lock that keeps two synths' writes apart; returns the descriptor,
    whose closing releases it. Waits for another holder, unless not ``wait``: then None.

    An flock on the folder's own descriptor: no lock file appears in dist/."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException as e:
        os.close(fd)
        if wait or not isinstance(e, OSError):
            raise
        return None  # held by another (or not lockable): the caller writes without it
    return fd


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = _lock(folder)
    assert fd is not None
    try:
        yield
    finally:
        os.close(fd)


def write_environment(
    dist: Path, environment: str, files: Files, *, staging: Staging | None = None
) -> int:
    """Make ``dist/<environment>/`` hold exactly ``files``; returns how many files it
    created, replaced or deleted there (0: the folder held exactly ``files`` already).

    A lock on the ``dist`` folder itself keeps two synths at once from interleaving (with
    ``staging``, the lock it holds already; an environment it staged is renamed into place).

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
    wrong = next((p for p in files if _outside(p)), None)
    if wrong is not None:  # the renderer refuses such names (pipeline.render.check_unique)
        raise ValueError(f"not a path inside dist/{environment}/: {wrong!r}")
    if staging is not None and staging.dist == dist:
        return staging.install(environment, files)
    return _write_unstaged(dist, environment, files)


def _write_unstaged(dist: Path, environment: str, files: Files) -> int:
    """:func:`write_environment` without staging: waits for the lock on ``dist``."""
    dist.mkdir(parents=True, exist_ok=True)
    with _locked(dist):
        return _write_locked(dist, environment, files)


def _write_locked(dist: Path, environment: str, files: Files) -> int:
    """:func:`write_environment` under the lock on ``dist``."""
    _remove_leftovers(dist, environment)
    target = dist / environment
    if target.is_dir() and not target.is_symlink():
        return _update(str(target), files)
    staging = _new_folder(dist, environment)
    staging.mkdir()
    try:
        _fill(str(staging), files)
        _install(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return len(files)


def _install(staging: Path, target: Path) -> None:
    """Rename the filled ``staging`` folder to ``target`` (not a folder: nothing to keep)."""
    if target.is_symlink() or target.exists():
        target.unlink()
    staging.rename(target)


# --- staging first writes while the synth renders ---------------------------------------------

_STAGER = r"""
import os, struct, sys
head = struct.Struct("<II")
root, folders, buf, done = sys.argv[1], set(), b"", False
flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
try:
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            break
        buf = buf + chunk if buf else chunk
        pos, end = 0, len(buf)
        while end - pos >= 8:
            path_size, data_size = head.unpack_from(buf, pos)
            if path_size == 0:
                done, pos = True, pos + 8
                continue
            stop = pos + 8 + path_size + data_size
            if stop > end:
                break
            relpath = buf[pos + 8 : pos + 8 + path_size].decode()
            folder = relpath.rpartition("/")[0]
            if folder not in folders:
                os.makedirs(os.path.join(root, folder), exist_ok=True)
                folders.add(folder)
            fd = os.open(os.path.join(root, relpath), flags, 0o666)
            try:
                data = memoryview(buf)[pos + 8 + path_size : stop]
                while data:
                    data = data[os.write(fd, data) :]
            finally:
                os.close(fd)
            pos = stop
        buf = buf[pos:]
    if not done:  # the synth died (SIGKILL) or gave up: leave nothing of it in dist/
        import shutil
        for folder in sys.argv[2:]:
            shutil.rmtree(os.path.join(root, folder), ignore_errors=True)
        sys.exit("stager: stopped before the end")
    if buf:
        sys.exit("stager: the last file was cut short")
except OSError as e:
    sys.exit(f"stager: {e}")
"""
"""The helper process: reads ``<path size, data size, path, data>`` records (little-endian
u32 sizes, UTF-8 paths relative to its root, the staging folders its other arguments) from
stdin and creates each file as :func:`_write_file` does (``O_EXCL``, mode 0o666 less the
umask). A record of path size 0 says that everything was sent; at the end of its input
without one, the synth that started it is gone (killed), and it removes the staging
folders. It imports nothing but the standard library (``python -I -S``: about 20 ms to
start)."""

_HEAD = struct.Struct("<II")
_IOV_MAX = 512
"""Buffers per ``os.writev`` (POSIX guarantees at least 16; Linux and macOS allow 1,024)."""


def _writev_all(fd: int, buffers: list[bytes]) -> None:
    """Write every byte of ``buffers`` to ``fd`` (``os.writev`` may write part of them)."""
    views = [memoryview(b) for b in buffers if b]
    i = 0
    while i < len(views):
        written = os.writev(fd, views[i : i + _IOV_MAX])
        while written:
            size = views[i].nbytes
            if written >= size:
                written -= size
                i += 1
            else:
                views[i] = views[i][written:]
                written = 0


class Staging:
    """The first writes of a synth's environments, filled while the synth still renders.

    ``fleet synth`` renders for seconds and writes thousands of files, and on most disks
    creating a file is system time that Python's rendering does not use. So the synth
    hands each environment's files to this object as soon as they passed every object
    check (:meth:`add`); a helper process (:data:`_STAGER`) creates them in the hidden
    folder ``dist/.<env>.new-...``, the one :func:`write_environment` fills for a first
    write, while this process renders on. :func:`write_environment` then only renames it
    into place (:meth:`install`), after every check of every environment passed; a failed
    synth removes it (:meth:`close`). So the rules of a first write hold: nothing appears
    in ``dist/`` unless the whole synth succeeded, and all of an environment or none.

    Only environments without a folder in ``dist/`` are staged (an update in place writes
    few files). The lock on ``dist`` is held from the first :meth:`add` to :meth:`close`.
    Staging is only a head start: when the lock is taken by another synth, or the helper
    fails, or an environment's files did not all reach it, nothing is staged for it and
    :func:`write_environment` writes it the ordinary way (and meets the same error, if any).
    """

    def __init__(self, dist: Path, environments: Iterable[str]) -> None:
        self.dist = dist
        self._wanted = list(dict.fromkeys(environments))
        self._started = False
        self._lock: int | None = None
        self._created: list[Path] = []
        """``dist`` and its ancestors that :meth:`_start` created, deepest first."""
        self._folders: dict[str, Path] = {}
        """Environment -> its staging folder, until installed or given up."""
        self._made: list[Path] = []
        """Every staging folder made: :meth:`close` removes what is still there, whatever
        was interrupted (a folder renamed into place no longer is)."""
        self._sent: dict[str, int] = {}
        self._process: subprocess.Popen[bytes] | None = None
        self._queue: queue.SimpleQueue[list[bytes] | None] = queue.SimpleQueue()
        self._feeder: threading.Thread | None = None
        self._broken = False
        self._finished: bool | None = None

    def _start(self) -> None:
        """Lock ``dist``, pick the environments to stage, start the helper (once)."""
        self._started = True
        try:
            missing = self.dist
            while not missing.exists() and not missing.is_symlink():
                self._created.append(missing)
                missing = missing.parent
            self.dist.mkdir(parents=True, exist_ok=True)
            self._lock = _lock(self.dist, wait=False)
            if self._lock is None:
                return  # another synth writes: write_environment waits for it later
            for env in self._wanted:
                _remove_leftovers(self.dist, env)
                target = self.dist / env
                if target.is_dir() and not target.is_symlink():
                    continue
                folder = _new_folder(self.dist, env)
                folder.mkdir()
                self._made.append(folder)
                self._folders[env] = folder
                self._sent[env] = 0
            if not self._folders:
                return
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    "-c",
                    _STAGER,
                    str(self.dist),
                    *(folder.name for folder in self._folders.values()),
                ],
                stdin=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError:
            self._broken = True
            return
        assert self._process.stdin is not None
        if hasattr(fcntl, "F_SETPIPE_SZ"):
            # 1 MB in the pipe (Linux's default maximum): the helper keeps working while
            # the feeder thread waits for Python's lock.
            with suppress(OSError):
                fcntl.fcntl(self._process.stdin.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
        self._feeder = threading.Thread(target=self._feed, name="fleet-staging", daemon=True)
        self._feeder.start()

    def _feed(self) -> None:
        """The feeder thread: hand queued records to the helper; stop at None or a failure."""
        assert self._process is not None and self._process.stdin is not None
        fd = self._process.stdin.fileno()
        while True:
            buffers = self._queue.get()
            if buffers is None:
                break
            if self._broken:
                continue
            try:
                _writev_all(fd, buffers)
            except OSError:  # the helper stopped (it says why on stderr)
                self._broken = True
        with suppress(OSError):
            self._process.stdin.close()

    def add(self, environment: str, files: Iterable[tuple[str, bytes]]) -> bool:
        """Stage ``files`` (relative path, bytes) of ``environment``, every one of which
        passed the object checks. False (and nothing done) for an environment that is not
        staged."""
        if not self._started:
            self._start()
        folder = self._folders.get(environment)
        if folder is None or self._broken:
            return False
        buffers: list[bytes] = []
        count = 0
        for relpath, data in files:
            if _outside(relpath):  # never sent: the environment is not staged any more
                del self._folders[environment]
                return False
            path = f"{folder.name}/{relpath}".encode()
            buffers += (_HEAD.pack(len(path), len(data)), path, data)
            count += 1
        self._sent[environment] += count
        self._queue.put(buffers)
        return True

    def _finish(self) -> bool:
        """Wait for the helper to create everything it was given; whether it did."""
        if self._finished is None:
            finished = False
            if self._process is not None and self._feeder is not None:
                self._queue.put([_HEAD.pack(0, 0)])  # everything was sent
                self._queue.put(None)
                self._feeder.join()
                assert self._process.stderr is not None
                self._process.stderr.read()
                finished = self._process.wait() == 0 and not self._broken
            self._finished = finished  # only once it is known (an interrupt leaves None)
        return self._finished

    def install(self, environment: str, files: Files) -> int:
        """Put ``files`` in ``dist/<environment>/`` (under the held lock): rename the staged
        folder when it holds all of them, else write the ordinary way. Returns what
        :func:`write_environment` does."""
        if not self._started:
            self._start()
        if self._lock is None:  # not locked: a writer like any other
            return _write_unstaged(self.dist, environment, files)
        folder = self._folders.pop(environment, None)
        target = self.dist / environment
        if (
            folder is None
            or not self._finish()
            or self._sent[environment] != len(files)
            or (target.is_dir() and not target.is_symlink())
        ):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
            return _write_locked(self.dist, environment, files)
        _install(folder, target)
        return len(files)

    def close(self) -> None:
        """Stop the helper, remove what was staged and not installed, release the lock.
        After a failed or interrupted synth that is everything: ``dist`` is as it was
        (``dist`` and the ancestors that staging created are removed again when empty)."""
        try:
            if self._process is not None:
                if self._process.poll() is None:  # still running: the synth did not finish
                    self._process.kill()
                self._queue.put(None)
                if self._feeder is not None:
                    self._feeder.join()
                self._process.wait()  # dead before its folders are removed
                if self._process.stderr is not None:
                    self._process.stderr.close()
        finally:
            for folder in self._made:
                shutil.rmtree(folder, ignore_errors=True)
            self._made.clear()
            self._folders.clear()
            if self._lock is not None:
                os.close(self._lock)
                self._lock = None
            for folder in self._created:
                try:
                    folder.rmdir()  # only when empty: nothing was installed
                except OSError:
                    break
            self._created.clear()

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
