"""Loading the declarations reads the modules as they are now, whatever bytecode is cached."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest
from support import REPO

from fleet import FleetConfig
from fleet.pipeline.discovery import load_fleet
from fleet.pipeline.synth import synthesize

sys.path.insert(0, str(REPO / "benchmarks"))
import fleet_gen


@pytest.mark.parametrize("dont_write_bytecode", [False, True])
def test_an_edit_of_the_same_size_in_the_same_second_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dont_write_bytecode: bool
) -> None:
    """Python's default bytecode cache is valid while the source's mtime (in whole seconds)
    and size are unchanged (CPython ``importlib._bootstrap_external``
    ``_validate_timestamp_pyc``): a node count 3 -> 4 saved within the second of the last
    load would render the old count. Declarations are compiled into checked hash-based
    bytecode instead, which is validated against the source's content."""
    monkeypatch.delenv("FLEET_NO_CACHE", raising=False)
    root = tmp_path / "fleet"
    fleet_gen.write_project(root, clusters=2, envs=1)
    config = FleetConfig.load(root)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    before = synthesize(config, jobs=1, use_cache=False, validate=False).files
    bench = root / "clusters" / "bench.py"
    assert Path(importlib.util.cache_from_source(str(bench))).is_file()

    monkeypatch.setattr(sys, "dont_write_bytecode", dont_write_bytecode)
    stat = bench.stat()
    fleet_gen.change_one_cluster(root)
    os.utime(bench, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the same second, to the ns
    assert bench.stat().st_size == stat.st_size
    after = synthesize(config, jobs=1, use_cache=False, validate=False).files
    assert after != before
    assert load_fleet(config) is not None
