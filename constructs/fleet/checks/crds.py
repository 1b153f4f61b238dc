"""Find, load and fetch the CustomResourceDefinitions the fleet's objects are checked against.

The CRD files are never copied into the repository. They are found in, in order:
an explicit ``--crds DIR``, the ``FLEET_CRDS_DIR`` environment variable, or the project
cache ``.fleet/crds/`` (git-ignored), which ``fleet crds pull`` fills from the pinned
upstream URLs in ``crds.lock.yaml`` after checking each file's sha256.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from fleet.core.errors import FleetError

LOCK_FILE = "crds.lock.yaml"
CACHE_DIR = Path(".fleet") / "crds"
ENV_VAR = "FLEET_CRDS_DIR"
CACHE_HOME_VAR = "FLEET_CACHE_DIR"

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, slots=True)
class CrdSchema:
    """The openAPIV3Schema of one served version of one CRD."""

    api_version: str
    kind: str
    scope: str
    """``Namespaced`` or ``Cluster``."""
    schema: dict[str, Any]
    source: str
    """The file the CRD came from."""


class CrdIndex:
    """``(apiVersion, kind) -> CrdSchema`` for every served version found."""

    def __init__(self, schemas: dict[tuple[str, str], CrdSchema], directory: Path | None) -> None:
        self.schemas = schemas
        self.directory = directory

    def get(self, api_version: str, kind: str) -> CrdSchema | None:
        """The schema for ``apiVersion``/``kind``, or None if no served CRD version defines it."""
        return self.schemas.get((api_version, kind))

    def __len__(self) -> int:
        return len(self.schemas)


def project_root(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` (default: cwd) holding ``crds.lock.yaml``.

    Falls back to ``start`` itself when no lock file is found.
    """
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / LOCK_FILE).is_file():
            return folder
    return here


def resolve_crds_dir(explicit: Path | None = None, *, root: Path | None = None) -> Path:
    """Where to read CRDs from: ``explicit``, else ``$FLEET_CRDS_DIR``, else ``.fleet/crds/``.

    Raises FleetError when the chosen folder does not exist, saying how to fill it.
    """
    if explicit is not None:
        directory, origin = Path(explicit), "--crds"
    elif os.environ.get(ENV_VAR):
        directory, origin = Path(os.environ[ENV_VAR]), ENV_VAR
    else:
        directory, origin = project_root(root) / CACHE_DIR, "the project cache"
    if not directory.is_dir():
        raise FleetError(
            f"CRD folder {directory} (from {origin}) does not exist; "
            f"run `fleet crds pull`, or pass --crds DIR, or set {ENV_VAR}"
        )
    return directory


def _documents(path: Path) -> Iterator[dict[str, Any]]:
    try:
        with path.open("rb") as stream:
            for doc in yaml.load_all(stream, Loader=_Loader):
                if isinstance(doc, dict):
                    yield doc
    except yaml.YAMLError as exc:
        raise FleetError(f"{path}: not valid YAML: {exc}") from exc


def _parse_crds(directory: Path, files: list[Path]) -> dict[tuple[str, str], CrdSchema]:
    schemas: dict[tuple[str, str], CrdSchema] = {}
    for path in files:
        for doc in _documents(path):
            if doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc.get("spec") or {}
            group = spec.get("group", "")
            kind = (spec.get("names") or {}).get("kind", "")
            scope = spec.get("scope", "Namespaced")
            for version in spec.get("versions") or []:
                if not version.get("served", False):
                    continue
                schema = (version.get("schema") or {}).get("openAPIV3Schema")
                if not isinstance(schema, dict):
                    continue
                api_version = f"{group}/{version['name']}"
                key = (api_version, kind)
                if key in schemas and schemas[key].source != str(path):
                    raise FleetError(
                        f"{api_version} {kind} is defined twice: {schemas[key].source} and {path}"
                    )
                schemas[key] = CrdSchema(api_version, kind, scope, schema, str(path))
    return schemas


def index_cache_dir() -> Path:
    """Where parsed CRD indexes are kept: ``$FLEET_CACHE_DIR``, else the user's cache folder.

    That is ``$XDG_CACHE_HOME/fleet``, else ``~/.cache/fleet``. An index is keyed by the
    CRD files themselves (path, size, mtime), so one cache serves every project and
    working directory, and nothing is written where the command happens to run. Without
    it every process re-parses the CRD YAML (about 2 s for the pinned set).
    """
    explicit = os.environ.get(CACHE_HOME_VAR)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fleet"


def load_crds(directory: Path, *, cache_dir: Path | None = None) -> CrdIndex:
    """Read every ``*.yaml``/``*.yml`` under ``directory`` and index the served CRD versions.

    Non-CRD documents are ignored. Two files defining the same served apiVersion/kind
    are an error, since which one wins would depend on file order. With ``cache_dir``, the
    parsed index is kept there as JSON, keyed by the files' paths, sizes and mtimes
    (parsing the YAML takes about a second; reading the JSON about 30 ms).
    """
    files = sorted(p for p in directory.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    cache_file = None
    if cache_dir is not None:
        stamp = hashlib.sha256(str(directory.resolve()).encode())
        for path in files:
            stat = path.stat()
            stamp.update(
                f"\0{path.relative_to(directory)}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()
            )
        cache_file = cache_dir / f"crd-index-{stamp.hexdigest()[:32]}.json"
        if cache_file.is_file():
            try:
                cached = json.loads(cache_file.read_bytes())
                return CrdIndex({(c[0], c[1]): CrdSchema(*c) for c in cached}, directory)
            except (OSError, ValueError, TypeError):
                pass  # a damaged cache is rebuilt below
    schemas = _parse_crds(directory, files)
    if cache_file is not None:
        rows = [[c.api_version, c.kind, c.scope, c.schema, c.source] for c in schemas.values()]
        with contextlib.suppress(OSError):  # the cache is an optimisation only
            _write_atomically(cache_file, json.dumps(rows).encode())
    return CrdIndex(schemas, directory)


@dataclass(frozen=True, slots=True)
class LockEntry:
    """One pinned upstream CRD file."""

    name: str
    url: str
    release: str
    sha256: str
    path: str
    """Where the file goes, relative to the CRD cache."""


def read_lock(lock_path: Path) -> list[LockEntry]:
    """Parse ``crds.lock.yaml``; raises FleetError naming the entry and field that is wrong."""
    try:
        data = yaml.load(lock_path.read_bytes(), Loader=_Loader)
    except (OSError, yaml.YAMLError) as exc:
        raise FleetError(f"{lock_path}: cannot read: {exc}") from exc
    entries: list[LockEntry] = []
    for i, raw in enumerate((data or {}).get("crds") or []):
        where = f"{lock_path}: crds[{i}]"
        if not isinstance(raw, dict):
            raise FleetError(f"{where}: expected a mapping")
        missing = [f for f in ("name", "url", "release", "sha256", "path") if not raw.get(f)]
        if missing:
            raise FleetError(f"{where}: missing {', '.join(missing)}")
        rel = PurePosixPath(str(raw["path"]))
        if rel.is_absolute() or ".." in rel.parts:
            raise FleetError(f"{where}: path must stay inside the cache, got {rel}")
        sha = str(raw["sha256"]).lower()
        if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise FleetError(f"{where}: sha256 must be 64 hex digits")
        entries.append(
            LockEntry(str(raw["name"]), str(raw["url"]), str(raw["release"]), sha, str(rel))
        )
    return entries


Fetch = Callable[[str], bytes]


def _urlopen_fetch(url: str) -> bytes:
    if not url.startswith(("https://", "http://")):
        raise FleetError(f"refusing to fetch {url}: only http(s) URLs are allowed")
    import urllib.request  # only `fleet crds pull` downloads (20 ms to import)

    with urllib.request.urlopen(url, timeout=60) as response:
        data: bytes = response.read()
        return data


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass(frozen=True, slots=True)
class PullResult:
    """What ``pull`` did: files written, files already up to date, files refused."""

    written: list[Path]
    unchanged: list[Path]
    refused: list[str]


class CrdPullError(FleetError):
    """Some locked CRDs could not be fetched or did not match their sha256."""

    def __init__(self, result: PullResult) -> None:
        self.result = result
        super().__init__("refused to write CRDs:\n" + "\n".join(result.refused))


def pull(lock_path: Path, cache_dir: Path, *, fetch: Fetch = _urlopen_fetch) -> PullResult:
    """Download each locked CRD into ``cache_dir`` unless it is already there with the right hash.

    A download whose sha256 differs from the lock is refused: nothing is written for that
    file, and FleetError is raised after the other files are handled, naming each refusal.
    """
    written: list[Path] = []
    unchanged: list[Path] = []
    refused: list[str] = []
    for entry in read_lock(lock_path):
        target = cache_dir / entry.path
        if target.is_file() and _sha256(target.read_bytes()) == entry.sha256:
            unchanged.append(target)
            continue
        try:
            data = fetch(entry.url)
        except OSError as exc:
            refused.append(f"{entry.name}: download of {entry.url} failed: {exc}")
            continue
        got = _sha256(data)
        if got != entry.sha256:
            refused.append(
                f"{entry.name}: sha256 of {entry.url} is {got}, "
                f"the lock file expects {entry.sha256}"
            )
            continue
        _write_atomically(target, data)
        written.append(target)
    result = PullResult(written, unchanged, refused)
    if refused:
        raise CrdPullError(result)
    return result
