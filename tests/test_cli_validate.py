"""``fleet crds pull`` and ``fleet validate`` wiring (no network: a local http.server)."""

from __future__ import annotations

import argparse
import functools
import gzip
import hashlib
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from builders import builtin_plugins
from crd_samples import argocd_application, crds_dir, manifest, nodegroup_v1

from fleet.checks.crds import PACKAGED_CRDS, PACKAGED_LOCK, PullResult
from fleet.checks.registry import BUILTIN_CHECKS, CheckContext, check_environments
from fleet.cli import validate as validate_module
from fleet.cli.validate import add_parsers
from fleet.core.config import FleetConfig


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_parsers(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    root = tmp_path / "upstream"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(root))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_crds_pull_into_the_folder_beside_the_lock(
    upstream: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served, base = upstream
    (served / "a.yaml").write_bytes(b"a")
    (served / "b.yaml").write_bytes(b"tampered")
    project = tmp_path / "project"
    project.mkdir()
    entries = [
        {"name": n, "url": f"{base}/{n}.yaml", "release": "v1", "path": f"x/{n}.yaml", "sha256": h}
        for n, h in (("a", hashlib.sha256(b"a").hexdigest()), ("b", "0" * 64))
    ]
    (project / "crds.lock.yaml").write_text(yaml.safe_dump({"crds": entries}))
    args = parse(["crds", "pull", "--lock", str(project / "crds.lock.yaml")])  # into crds/ beside
    assert args.handler(args, FleetConfig(root=tmp_path)) == 1
    assert gzip.decompress((project / "crds" / "x" / "a.yaml.gz").read_bytes()) == b"a"
    assert not (project / "crds" / "x" / "b.yaml.gz").exists()
    assert "error: b: sha256 of" in capsys.readouterr().err


def test_crds_pull_defaults_to_the_packages_own_lock_and_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pulled: list[tuple[Path, Path]] = []

    def fake_pull(lock: Path, into: Path) -> PullResult:
        pulled.append((lock, into))
        return PullResult([], [], [])

    monkeypatch.setattr(validate_module, "pull", fake_pull)
    args = parse(["crds", "pull"])
    assert args.handler(args, FleetConfig(root=tmp_path)) == 0
    args = parse(["crds", "pull", "--lock", str(tmp_path / "my.lock.yaml")])
    assert args.handler(args, FleetConfig(root=tmp_path)) == 0
    assert pulled == [
        (PACKAGED_LOCK, PACKAGED_CRDS),
        (tmp_path / "my.lock.yaml", tmp_path / "crds"),
    ]


def test_the_built_in_checks_run_in_registry_order(tmp_path: Path) -> None:
    group = nodegroup_v1()
    group["spec"]["forProvider"]["password"] = "hunter2"
    context = CheckContext(FleetConfig(root=tmp_path), crds_dir(), builtin_plugins())
    found = check_environments(
        BUILTIN_CHECKS, {"dev": [manifest(group), manifest(argocd_application())]}, context
    )
    assert [p.field_path for p in found] == [
        "spec.forProvider.password",  # unknown field (schema)
        "spec.providerConfigRef.name",  # no ProviderConfig (references)
        "spec.forProvider.clusterId",  # no ClusterV1 (references)
        "spec.forProvider.password",  # literal credential (secret guard)
    ]
