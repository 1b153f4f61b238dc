"""The synth cache: each rendered object's YAML and check verdict, keyed by its content.

What is cached is everything after rendering: the YAML bytes of an object and whether it
passed the cacheable checks (:mod:`fleet.checks.registry`: the schema, the secret guard, a
fleet's own cacheable checks). The key is a digest of the object itself (``pickle`` of the
rendered dict: every value with its type), so an object whose definition, template, project,
environment or library changed renders to a different dict and misses. Nothing is keyed by
file names or times, so a hit can never serve stale bytes. On top, the whole cache is
dropped when the ``fleet`` sources or the YAML/schema libraries change
(:func:`library_digest`), and a verdict is used only under the same
:func:`~fleet.checks.registry.verdict_key` (the same cacheable checks, with the same code
and inputs, such as the CRD files).

Rendering itself is not cached: declarations are Python code that must run to be known,
and turning declarations into dicts is a small part of a synth (see docs/performance.md).

Files live in ``.fleet/cache/synth/`` (git-ignored), one per environment, written
atomically; a damaged or foreign file is ignored. ``FLEET_NO_CACHE=1`` turns the cache off.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import pickle
import sys
import tempfile
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

FORMAT = 1
"""Bump when the layout of a cache file changes."""
NO_CACHE_VAR = "FLEET_NO_CACHE"
FOLDER = Path(".fleet") / "cache" / "synth"
_LIBRARIES = ("PyYAML", "jsonschema-rs", "kubernetes-validate", "cel-expr-python")


def enabled() -> bool:
    """False when ``$FLEET_NO_CACHE`` is set to anything but "" or "0"."""
    return os.environ.get(NO_CACHE_VAR, "") in ("", "0")


@cache
def library_digest() -> str:
    """Digest of the ``fleet`` package sources, the libraries that shape output, Python."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{FORMAT}\0{sys.version}\0".encode())
    for name in _LIBRARIES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "-"
        h.update(f"{name}={version}\0".encode())
    package = Path(__file__).resolve().parent.parent
    for path in sorted(package.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".json", ".yaml", ".lua"):
            h.update(path.relative_to(package).as_posix().encode() + b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()


def object_key(body: dict[str, Any]) -> bytes:
    """The content key of one rendered object (every value with its type)."""
    return hashlib.blake2b(pickle.dumps(body, protocol=5), digest_size=20).digest()


Entry = tuple[bytes, str]
"""(YAML bytes, digest of the checks it passed, or "" when not checked)."""


class SynthCache:
    """The cache of one environment: load, look up, record, save."""

    def __init__(self, root: Path, environment: str, *, active: bool = True) -> None:
        self.path = root / FOLDER / f"{environment}.marshal"
        self.active = active
        self._old: dict[bytes, Entry] = {}
        self._new: dict[bytes, Entry] = {}
        self.hits = 0
        if active:
            self._old = self._load()

    def _load(self) -> dict[bytes, Entry]:
        try:
            data = marshal.loads(self.path.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        if not isinstance(data, tuple) or len(data) != 2 or data[0] != library_digest():
            return {}
        entries = data[1]
        return entries if isinstance(entries, dict) else {}

    def get(self, key: bytes) -> Entry | None:
        """The entry for ``key`` from the previous synth, if any."""
        entry = self._old.get(key)
        if entry is not None:
            self.hits += 1
        return entry

    def put(self, key: bytes, entry: Entry) -> None:
        """Keep ``entry`` for the next synth (only what this synth used is kept)."""
        self._new[key] = entry

    def save(self) -> None:
        """Write the entries of this synth atomically; a failure only loses the cache."""
        if not self.active or self._new == self._old:
            return
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(marshal.dumps((library_digest(), self._new)))
                os.replace(tmp, self.path)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
