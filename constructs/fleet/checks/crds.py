"""Find, load and fetch the CustomResourceDefinitions the fleet's objects are checked against.

The pinned upstream CRDs ship inside the package: ``fleet/data/crds/<path>.gz`` for every
entry of ``fleet/data/crds.lock.yaml`` (gzip without a timestamp, so the bytes are
reproducible), so an installed wheel validates offline, with no checkout anywhere. They are
found in, in order: an explicit ``--crds DIR``, the ``FLEET_CRDS_DIR`` environment variable
(an override), or the package's own folder (:data:`PACKAGED_CRDS`). A ``crds/`` folder
beside a ``crds.lock.yaml`` is checked against it whenever its index is built: every locked
file present with the locked sha256 (of the uncompressed upstream file), nothing unlocked.
``fleet crds pull`` refreshes a folder from the pinned URLs, refusing any download whose
sha256 differs from the lock.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from fleet.core.errors import FleetError
from fleet.platform.plugins import PluginSet

LOCK_FILE = "crds.lock.yaml"
PACKAGE_DATA = Path(__file__).resolve().parent.parent / "data"
"""The package's data folder (``fleet/data``), shipped in the wheel."""
PACKAGED_CRDS = PACKAGE_DATA / "crds"
"""The pinned upstream CRDs every object is validated against by default."""
PACKAGED_LOCK = PACKAGE_DATA / LOCK_FILE
"""Their lock file: upstream URL, release and sha256 of each."""
GZ_SUFFIX = ".gz"
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


def resolve_crds_dir(explicit: Path | None = None) -> Path:
    """Where to read CRDs from: ``explicit``, else ``$FLEET_CRDS_DIR``, else the packaged ones.

    Raises FleetError when the chosen folder does not exist, saying how to fill it.
    """
    if explicit is not None:
        directory, origin = Path(explicit), "--crds"
    elif os.environ.get(ENV_VAR):
        directory, origin = Path(os.environ[ENV_VAR]), ENV_VAR
    else:
        directory, origin = PACKAGED_CRDS, "the fleet package"
    if not directory.is_dir():
        what = "is not a folder" if directory.exists() else "does not exist"
        raise FleetError(
            f"CRD folder {directory} (from {origin}) {what}; "
            f"run `fleet crds pull`, or pass --crds DIR, or set {ENV_VAR}"
        )
    return directory


def read_crd_file(path: Path) -> bytes:
    """The bytes of a CRD file, uncompressed when its name ends in ``.gz``."""
    data = path.read_bytes()
    if path.name.endswith(GZ_SUFFIX):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise FleetError(f"{path}: not a valid gzip file: {exc}") from exc
    return data


def compress(data: bytes) -> bytes:
    """``data`` gzipped reproducibly: no timestamp, no file name, level 9."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def _is_crd_name(name: str) -> bool:
    return name.removesuffix(GZ_SUFFIX).endswith((".yaml", ".yml"))


def crd_files(directory: Path) -> list[Path]:
    """Every ``*.yaml``, ``*.yml`` (optionally ``.gz``) file under ``directory``, sorted."""
    found = []
    for folder, _, names in os.walk(directory):
        for name in names:
            path = Path(folder, name)
            if _is_crd_name(name) and path.is_file():
                found.append(path)
    return sorted(found)


def folder_stamp(directory: Path) -> str:
    """What identifies the CRDs of ``directory`` and the lock beside it: every file's path,
    size and modification time (a file changed on disk is another stamp)."""
    stamp = hashlib.sha256(str(directory.resolve()).encode())
    lock = lock_for(directory)
    for path in [*crd_files(directory), *([lock] if lock else [])]:
        stat = path.stat()
        rel = path.relative_to(directory.parent)
        stamp.update(f"\0{rel}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return stamp.hexdigest()


def lock_for(directory: Path) -> Path | None:
    """The lock file a CRD folder is checked against: a ``crds/`` beside ``crds.lock.yaml``."""
    lock = directory.parent / LOCK_FILE
    return lock if directory.name == PACKAGED_CRDS.name and lock.is_file() else None


def verify_vendored(directory: Path, lock_path: Path) -> None:
    """Check ``directory`` against ``lock_path``: every entry present with its sha256.

    A file present but not in the lock is an error too (which CRD validates what would
    otherwise depend on an unpinned file). Raises FleetError listing every problem.
    """
    problems: list[str] = []
    expected: set[Path] = set()
    for entry in read_lock(lock_path):
        target = vendored_path(directory, entry)
        expected.add(target)
        if not target.is_file():
            problems.append(f"{target}: missing (locked as {entry.name})")
            continue
        got = _sha256(read_crd_file(target))
        if got != entry.sha256:
            problems.append(
                f"{target}: sha256 is {got}, {lock_path.name} expects {entry.sha256} ({entry.name})"
            )
    for path in crd_files(directory):
        if path not in expected:
            problems.append(f"{path}: not in {lock_path.name}")
    if problems:
        raise FleetError(
            "the vendored CRDs do not match the lock file (run `fleet crds pull`):\n"
            + "\n".join(problems)
        )


def plugin_crds(plugins: PluginSet) -> tuple[Path, ...]:
    """The CRD folders of the fleet's platform components that bring their own
    (``PlatformComponent.crds``), resolved, once each, in component order."""
    return tuple(
        dict.fromkeys(c.crds.resolve() for c in plugins.catalogue.components if c.crds is not None)
    )


def load_plugin_crds(directory: Path, *, cache_dir: Path | None = None) -> CrdIndex:
    """:func:`load_crds` for a plug-in's folder, which must be pinned: a ``crds/`` folder
    beside a ``crds.lock.yaml`` whose every entry is there with its sha256."""
    if lock_for(directory) is None:
        raise FleetError(
            f"a platform component's CRD folder {directory} is not a crds/ folder beside a "
            f"{LOCK_FILE}: a plug-in's CRDs are pinned like the tool's (URL, release and "
            "sha256 of each; `fleet crds pull --lock LOCK` fills the folder)"
        )
    return load_crds(directory, cache_dir=cache_dir)


def merged(indexes: Sequence[CrdIndex]) -> CrdIndex:
    """One index of several folders' (the first's folder names it); a kind two folders
    define is an error naming both files."""
    schemas: dict[tuple[str, str], CrdSchema] = {}
    for index in indexes:
        for key, crd in index.schemas.items():
            other = schemas.get(key)
            if other is not None and other.source != crd.source:
                raise FleetError(
                    f"{key[0]} {key[1]} is defined twice: {other.source} and {crd.source}"
                )
            schemas[key] = crd
    return CrdIndex(schemas, indexes[0].directory if indexes else None)


def _documents(path: Path) -> Iterator[dict[str, Any]]:
    try:
        for doc in yaml.load_all(read_crd_file(path), Loader=_Loader):
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
    """Read every ``*.yaml``/``*.yml`` (or ``.gz``) under ``directory``; index served versions.

    Non-CRD documents are ignored. Two files defining the same served apiVersion/kind
    are an error, since which one wins would depend on file order. A ``crds/`` folder
    beside a lock file (the packaged one, for instance) is first checked against it
    (:func:`verify_vendored`). With ``cache_dir``, the parsed index is kept there as JSON,
    keyed by the files' (and the lock's) paths, sizes and mtimes (parsing the YAML takes
    about a second; reading the JSON about 30 ms).
    """
    files = crd_files(directory)
    lock = lock_for(directory)
    cache_file = None
    if cache_dir is not None:
        cache_file = cache_dir / f"crd-index-{folder_stamp(directory)[:32]}.json"
        if cache_file.is_file():
            try:
                cached = json.loads(cache_file.read_bytes())
                return CrdIndex({(c[0], c[1]): CrdSchema(*c) for c in cached}, directory)
            except (OSError, ValueError, TypeError):
                pass  # a damaged cache is rebuilt below
    if lock is not None:
        verify_vendored(directory, lock)
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
    """Where the file goes, relative to ``crds/`` (vendored with ``.gz`` appended)."""


def vendored_path(directory: Path, entry: LockEntry) -> Path:
    """Where ``entry`` is vendored under ``directory``: its path plus ``.gz``."""
    return directory / (entry.path + GZ_SUFFIX)


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


def pinned_releases(crds_dir: Path) -> dict[str, str]:
    """Platform component name -> the release whose CRDs ``crds_dir`` holds, read from the
    lock beside it (an entry's folder is its component's name); empty without a lock."""
    lock = lock_for(crds_dir)
    return {} if lock is None else {e.path.split("/", 1)[0]: e.release for e in read_lock(lock)}


def _bare(version: str) -> str:
    return version.removeprefix("helm-chart-").removeprefix("v")


def unvalidated_versions(deployed: Mapping[str, str], crds_dir: Path) -> list[tuple[str, str, str]]:
    """``(component, deployed version, pinned release)`` for each component in ``deployed``
    whose CRDs in ``crds_dir`` are of another release: its objects would be validated
    against schemas the deployed release does not serve.

    Without a lock beside ``crds_dir`` nothing says which release its CRDs are of: a
    component with CRDs (in the packaged lock) deployed at another release than the
    packaged one is returned with ``""`` as its pinned release."""
    if not deployed:
        return []
    if lock_for(crds_dir) is None:
        packaged = pinned_releases(PACKAGED_CRDS)
        return [
            (name, version, "")
            for name, version in sorted(deployed.items())
            if name in packaged and _bare(version) != _bare(packaged[name])
        ]
    pinned = pinned_releases(crds_dir)
    return [
        (name, version, pinned[name])
        for name, version in sorted(deployed.items())
        if name in pinned and _bare(version) != _bare(pinned[name])
    ]


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


def pull(lock_path: Path, vendor_dir: Path, *, fetch: Fetch = _urlopen_fetch) -> PullResult:
    """Download each locked CRD into ``vendor_dir`` (gzipped) unless it is there with its hash.

    A download whose sha256 differs from the lock is refused: nothing is written for that
    file, and FleetError is raised after the other files are handled, naming each refusal.
    Files in ``vendor_dir`` that the lock no longer lists are removed.
    """
    written: list[Path] = []
    unchanged: list[Path] = []
    refused: list[str] = []
    entries = read_lock(lock_path)
    for entry in entries:
        target = vendored_path(vendor_dir, entry)
        with contextlib.suppress(FleetError):
            if target.is_file() and _sha256(read_crd_file(target)) == entry.sha256:
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
        _write_atomically(target, compress(data))
        written.append(target)
    locked = {vendored_path(vendor_dir, e) for e in entries}
    for stale in crd_files(vendor_dir) if vendor_dir.is_dir() else []:
        if stale not in locked:
            stale.unlink()
    result = PullResult(written, unchanged, refused)
    if refused:
        raise CrdPullError(result)
    return result
