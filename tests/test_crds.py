"""CRD loading, folder resolution, and `fleet crds pull` against a local HTTP server."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from crd_samples import crds_dir

import fleet
from fleet.checks.crds import (
    CACHE_HOME_VAR,
    ENV_VAR,
    PACKAGED_CRDS,
    PACKAGED_LOCK,
    CrdPullError,
    compress,
    crd_files,
    index_cache_dir,
    load_crds,
    pull,
    read_lock,
    resolve_crds_dir,
    verify_vendored,
)
from fleet.core.errors import FleetError


def test_load_indexes_served_versions_with_scope() -> None:
    index = load_crds(crds_dir())
    cluster = index.get("containerinfra.openstack.crossplane.io/v1alpha1", "ClusterV1")
    assert cluster is not None and cluster.scope == "Cluster"
    assert "spec" in cluster.schema["properties"]
    namespaced = index.get("containerinfra.openstack.m.crossplane.io/v1alpha1", "ClusterV1")
    assert namespaced is not None and namespaced.scope == "Namespaced"
    assert index.get("external-secrets.io/v1", "ExternalSecret") is not None
    assert index.get("external-secrets.io/v1beta1", "ExternalSecret") is None  # served: false
    assert index.get("cluster.x-k8s.io/v1beta1", "MachinePool") is not None
    assert index.get("cluster.x-k8s.io/v1beta2", "MachinePool") is not None


def _crd(group: str, kind: str, versions: list[tuple[str, bool]]) -> dict[str, object]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.lower()}s.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": f"{kind.lower()}s"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": name,
                    "served": served,
                    "storage": served,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
                for name, served in versions
            ],
        },
    }


def test_load_multi_document_files_and_nested_folders(tmp_path: Path) -> None:
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    docs = [
        _crd("example.org", "Widget", [("v1", True), ("v1beta1", False)]),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ignored"}},
        _crd("example.org", "Gadget", [("v2", True)]),
    ]
    (nested / "bundle.yaml").write_text(yaml.safe_dump_all(docs))
    index = load_crds(tmp_path)
    assert sorted(index.schemas) == [("example.org/v1", "Widget"), ("example.org/v2", "Gadget")]


def test_index_cache_is_used_and_invalidated(tmp_path: Path) -> None:
    crds, cache = tmp_path / "crds", tmp_path / "cache"
    crds.mkdir()
    (crds / "w.yaml").write_text(yaml.safe_dump(_crd("example.org", "Widget", [("v1", True)])))
    first = load_crds(crds, cache_dir=cache)
    [cache_file] = cache.iterdir()
    assert load_crds(crds, cache_dir=cache).schemas == first.schemas
    cache_file.write_text("not json")
    assert load_crds(crds, cache_dir=cache).schemas == first.schemas  # damaged: rebuilt
    (crds / "w.yaml").write_text(yaml.safe_dump(_crd("example.org", "Widget", [("v2", True)])))
    assert sorted(load_crds(crds, cache_dir=cache).schemas) == [("example.org/v2", "Widget")]


def test_the_index_cache_is_the_users_not_the_working_directorys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CACHE_HOME_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert index_cache_dir() == tmp_path / "xdg" / "fleet"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert index_cache_dir() == tmp_path / "home" / ".cache" / "fleet"
    monkeypatch.setenv(CACHE_HOME_VAR, str(tmp_path / "explicit"))
    assert index_cache_dir() == tmp_path / "explicit"


def test_a_synth_run_from_elsewhere_writes_nothing_there(
    example_project: Path, tmp_path: Path
) -> None:
    # `fleet --root PROJECT synth` from another folder: the parsed CRD index goes to the
    # user's cache, and the folder the command ran in stays as it was.
    elsewhere, cache = tmp_path / "elsewhere", tmp_path / "user-cache"
    elsewhere.mkdir()
    env = {**os.environ, ENV_VAR: str(crds_dir()), CACHE_HOME_VAR: str(cache)}
    code = "import sys; from fleet.cli.main import main; sys.exit(main(sys.argv[1:]))"
    args = [sys.executable, "-c", code, "--root", str(example_project), "synth", "--no-cache"]
    result = subprocess.run(args, cwd=elsewhere, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert list(elsewhere.iterdir()) == []
    assert [p.name.startswith("crd-index-") for p in cache.iterdir()] == [True]


def test_duplicate_definitions_are_an_error(tmp_path: Path) -> None:
    crd = _crd("example.org", "Widget", [("v1", True)])
    (tmp_path / "one.yaml").write_text(yaml.safe_dump(crd))
    (tmp_path / "two.yaml").write_text(yaml.safe_dump(crd))
    with pytest.raises(FleetError, match=r"example\.org/v1 Widget is defined twice"):
        load_crds(tmp_path)


def test_resolve_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--crds, else $FLEET_CRDS_DIR, else the package's own; wherever the command runs."""
    explicit, env, project = tmp_path / "explicit", tmp_path / "env", tmp_path / "project"
    for folder in (explicit, env, project / "crds"):
        folder.mkdir(parents=True)
    (project / "crds.lock.yaml").write_text("crds: []\n")  # a project's own: not looked for
    monkeypatch.chdir(project)
    monkeypatch.setenv(ENV_VAR, str(env))
    assert resolve_crds_dir(explicit) == explicit
    assert resolve_crds_dir(None) == env
    monkeypatch.delenv(ENV_VAR)
    assert resolve_crds_dir(None) == PACKAGED_CRDS
    assert PACKAGED_CRDS.parent == Path(fleet.__file__).resolve().parent / "data"
    with pytest.raises(FleetError, match="run `fleet crds pull`"):
        resolve_crds_dir(tmp_path / "missing")


def test_the_packaged_crds_are_the_locked_upstream_files() -> None:
    vendored = PACKAGED_CRDS
    entries = read_lock(PACKAGED_LOCK)
    assert len(entries) == len({e.path for e in entries}) > 0
    files = sorted(p.relative_to(vendored).as_posix() for p in crd_files(vendored))
    assert files == sorted(f"{e.path}.gz" for e in entries)
    for entry in entries:
        assert entry.url.startswith("https://raw.githubusercontent.com/"), entry.name
        raw = (vendored / f"{entry.path}.gz").read_bytes()
        assert hashlib.sha256(gzip.decompress(raw)).hexdigest() == entry.sha256, entry.name
        assert compress(gzip.decompress(raw)) == raw, f"{entry.name}: not reproducibly gzipped"
    verify_vendored(vendored, PACKAGED_LOCK)  # what every load does


def _vendored_project(tmp_path: Path) -> tuple[Path, Path]:
    """A project with one locked CRD vendored in crds/: (its crds/ folder, the lock)."""
    body = yaml.safe_dump(_crd("example.org", "Widget", [("v1", True)])).encode()
    lock = _lock(
        tmp_path / "crds.lock.yaml",
        [
            {
                "name": "widgets",
                "url": "https://example.org/widgets.yaml",
                "release": "v1",
                "sha256": hashlib.sha256(body).hexdigest(),
                "path": "example/widgets.yaml",
            }
        ],
    )
    vendored = tmp_path / "crds"
    (vendored / "example").mkdir(parents=True)
    (vendored / "example" / "widgets.yaml.gz").write_bytes(compress(body))
    return vendored, lock


def test_a_vendored_folder_is_checked_against_its_lock_on_load(tmp_path: Path) -> None:
    vendored, _ = _vendored_project(tmp_path)
    cache = tmp_path / "cache"
    assert sorted(load_crds(vendored, cache_dir=cache).schemas) == [("example.org/v1", "Widget")]
    widgets = vendored / "example" / "widgets.yaml.gz"
    tampered = yaml.safe_dump(_crd("example.org", "Widget", [("v2", True)])).encode()
    widgets.write_bytes(compress(tampered))
    with pytest.raises(FleetError, match=r"widgets\.yaml\.gz: sha256 is .* expects"):
        load_crds(vendored, cache_dir=cache)  # the cached index is not used either
    widgets.unlink()
    with pytest.raises(FleetError, match=r"widgets\.yaml\.gz: missing \(locked as widgets\)"):
        load_crds(vendored)
    (vendored / "extra.yaml").write_bytes(tampered)
    with pytest.raises(FleetError, match=r"extra\.yaml: not in crds\.lock\.yaml"):
        load_crds(vendored)


def test_pull_refreshes_the_vendored_folder_and_drops_unlocked_files(tmp_path: Path) -> None:
    vendored, lock = _vendored_project(tmp_path)
    widgets = vendored / "example" / "widgets.yaml.gz"
    body = gzip.decompress(widgets.read_bytes())
    widgets.write_bytes(compress(b"stale"))
    (vendored / "old.yaml.gz").write_bytes(compress(b"unlocked"))
    fetched: list[str] = []

    def fetch(url: str) -> bytes:
        fetched.append(url)
        return body

    result = pull(lock, vendored, fetch=fetch)
    assert result.written == [widgets] and fetched == ["https://example.org/widgets.yaml"]
    assert not (vendored / "old.yaml.gz").exists()
    verify_vendored(vendored, lock)
    assert pull(lock, vendored, fetch=fetch).unchanged == [widgets] and len(fetched) == 1


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder served by http.server on 127.0.0.1, and its base URL."""
    root = tmp_path / "upstream"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _lock(path: Path, entries: list[dict[str, str]]) -> Path:
    path.write_text(yaml.safe_dump({"crds": entries}))
    return path


def test_pull_writes_files_whose_hash_matches(served: tuple[Path, str], tmp_path: Path) -> None:
    root, base = served
    content = b"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
    (root / "widgets.yaml").write_bytes(content)
    lock = _lock(
        tmp_path / "crds.lock.yaml",
        [
            {
                "name": "widgets",
                "url": f"{base}/widgets.yaml",
                "release": "v1.0.0",
                "sha256": hashlib.sha256(content).hexdigest(),
                "path": "example/widgets.yaml",
            }
        ],
    )
    cache = tmp_path / "crds"
    result = pull(lock, cache)
    target = cache / "example" / "widgets.yaml.gz"
    assert gzip.decompress(target.read_bytes()) == content
    assert result.written == [target]
    again = pull(lock, cache)
    assert again.written == [] and again.unchanged == [target]


def test_pull_refuses_a_file_whose_hash_differs(served: tuple[Path, str], tmp_path: Path) -> None:
    root, base = served
    (root / "good.yaml").write_bytes(b"good")
    (root / "bad.yaml").write_bytes(b"tampered")
    lock = _lock(
        tmp_path / "crds.lock.yaml",
        [
            {
                "name": "bad",
                "url": f"{base}/bad.yaml",
                "release": "v1",
                "sha256": hashlib.sha256(b"original").hexdigest(),
                "path": "bad.yaml",
            },
            {
                "name": "good",
                "url": f"{base}/good.yaml",
                "release": "v1",
                "sha256": hashlib.sha256(b"good").hexdigest(),
                "path": "good.yaml",
            },
        ],
    )
    cache = tmp_path / "crds"
    with pytest.raises(CrdPullError, match=r"bad: sha256 of .* is ") as raised:
        pull(lock, cache)
    assert not (cache / "bad.yaml.gz").exists()
    assert gzip.decompress((cache / "good.yaml.gz").read_bytes()) == b"good"
    assert len(raised.value.result.refused) == 1
    assert sorted(p.name for p in cache.iterdir()) == ["good.yaml.gz"]  # no temp files left


def test_pull_reports_missing_upstream_file(served: tuple[Path, str], tmp_path: Path) -> None:
    _, base = served
    lock = _lock(
        tmp_path / "crds.lock.yaml",
        [
            {
                "name": "gone",
                "url": f"{base}/gone.yaml",
                "release": "v1",
                "sha256": "0" * 64,
                "path": "gone.yaml",
            }
        ],
    )
    with pytest.raises(CrdPullError, match=r"gone: download of .* failed"):
        pull(lock, tmp_path / "cache")


def test_lock_paths_must_stay_inside_the_cache(tmp_path: Path) -> None:
    lock = _lock(
        tmp_path / "crds.lock.yaml",
        [
            {
                "name": "x",
                "url": "http://127.0.0.1/x",
                "release": "v1",
                "sha256": "0" * 64,
                "path": "../outside.yaml",
            }
        ],
    )
    with pytest.raises(FleetError, match="path must stay inside the cache"):
        read_lock(lock)
