"""Cached and parallel synths give the bytes of a clean serial one; the writer, the progress
display, and a smoke run of the benchmark (benchmarks/synth_bench.py, N=2: that it runs and
reports every measure; the numbers themselves are the benchmark's business, not a test's)."""

from __future__ import annotations

import gc
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from crd_samples import crds_dir
from support import REPO

from fleet import FleetConfig
from fleet.checks import schema
from fleet.checks.problem import InvalidObjects
from fleet.pipeline import synth as synth_module
from fleet.pipeline.cache import FOLDER, SynthCache, object_key
from fleet.pipeline.progress import Progress
from fleet.pipeline.synth import choose_jobs, synthesize, write
from fleet.pipeline.writer import Staging, read_tree, write_environment

sys.path.insert(0, str(REPO / "benchmarks"))
import fleet_gen

CRDS = crds_dir()


@pytest.fixture
def bench_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FleetConfig:
    """A generated hybrid fleet of 10 clusters per environment (Magnum, OKE, ArgoCD)."""
    if CRDS.is_dir():
        monkeypatch.setenv("FLEET_CRDS_DIR", str(CRDS))
    monkeypatch.delenv("FLEET_NO_CACHE", raising=False)
    monkeypatch.delenv("FLEET_JOBS", raising=False)
    root = tmp_path / "bench"
    fleet_gen.write_project(root, clusters=10, envs=3)
    return FleetConfig.load(root)


def clean(config: FleetConfig) -> dict[str, dict[str, bytes]]:
    """A clean serial render: no cache, one process."""
    return synthesize(config, jobs=1, use_cache=False).files


def test_cached_and_parallel_synth_equal_a_clean_serial_one(bench_project: FleetConfig) -> None:
    config = bench_project
    reference = clean(config)
    assert sum(len(f) for f in reference.values()) > 100

    cold = synthesize(config, jobs=1, use_cache=True)
    assert cold.cache_hits == 0
    assert cold.files == reference
    warm = synthesize(config, jobs=1, use_cache=True)
    assert warm.cache_hits == warm.object_count  # everything came from the cache
    assert warm.files == reference
    parallel = synthesize(config, jobs=2, use_cache=True)
    assert parallel.cache_hits == parallel.object_count
    assert parallel.files == reference
    assert synthesize(config, jobs=2, use_cache=False).files == reference

    # After a definition change, the cache must not serve the old cluster.
    fleet_gen.change_one_cluster(config.root)
    changed = clean(config)
    assert changed != reference
    differing = {
        (env, path)
        for env in changed
        for path in changed[env]
        if changed[env][path] != reference[env].get(path)
    }
    assert {env for env, _ in differing} == {"dev", "test", "prod"}
    assert all("k8s-bench-00000" in path for _, path in differing)
    after = synthesize(config, jobs=1, use_cache=True)
    assert after.files == changed
    assert 0 < after.cache_hits < after.object_count
    assert synthesize(config, jobs=2, use_cache=True).files == changed

    write(config, after)
    assert {env: read_tree(config.dist_dir / env) for env in changed} == changed


def test_a_warm_cache_still_catches_an_invalid_object(bench_project: FleetConfig) -> None:
    if not CRDS.is_dir():
        pytest.fail(f"the CRDs are needed for this test: {CRDS}")
    config = bench_project
    synthesize(config, jobs=1, use_cache=True)
    bench = config.clusters_dir / "bench.py"
    source = bench.read_text().replace("    per_env,\n", "    per_env,\n    JsonPatch,\n")
    source = source.replace(
        '    MagnumCluster(\n        fleet,\n        "magnum-00000"',
        ('    first = MagnumCluster(\n        fleet,\n        "magnum-00000"'),
    )
    bench.write_text(
        source
        + "    first.add_json_patch(JsonPatch.replace('/spec/forProvider/nodeCount', 'three'),"
        " kind='ClusterV1')\n"
    )
    with pytest.raises(InvalidObjects, match=r"nodeCount"):
        synthesize(config, jobs=1, use_cache=True)


def test_cache_keys_see_types_and_shared_objects() -> None:
    shared = {"a": 1}
    assert object_key({"x": shared, "y": shared}) != object_key({"x": {"a": 1}, "y": {"a": 1}})
    keys = {object_key({"v": value}) for value in (1, True, "1", 1.0, None, [1])}
    assert len(keys) == 6


def test_schema_verdicts_follow_the_crd_files_and_schemaless_kinds(
    tmp_path: Path,
) -> None:
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "a.yaml").write_text("kind: CustomResourceDefinition\n")
    before = schema.schema_inputs(crds)
    assert schema.schema_inputs(crds) == before
    (crds / "a.yaml").write_text("kind: CustomResourceDefinition\n# changed\n")
    changed = schema.schema_inputs(crds)
    assert changed != before
    assert schema.schema_inputs(crds, {("v1", "X")}) != changed
    assert schema.schema_inputs(None) not in (before, changed)


def test_a_damaged_cache_file_is_ignored(tmp_path: Path) -> None:
    (tmp_path / FOLDER).mkdir(parents=True)
    (tmp_path / FOLDER / "dev.marshal").write_bytes(b"not marshal data")
    store = SynthCache(tmp_path, "dev")
    assert store.get(b"k") is None
    store.put(b"k", (b"a: 1\n", ""))
    store.save()
    assert SynthCache(tmp_path, "dev").get(b"k") == (b"a: 1\n", "")


def test_jobs_are_chosen_by_fleet_size(
    bench_project: FleetConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert choose_jobs(bench_project, 3) == 1  # 10 clusters: workers would cost more
    assert choose_jobs(bench_project, 3, 8) == 3  # never more workers than environments
    monkeypatch.setenv("FLEET_JOBS", "2")
    assert choose_jobs(bench_project, 3) == 2


def test_writer_keeps_unchanged_files_and_replaces_changed_ones(tmp_path: Path) -> None:
    write_environment(tmp_path, "dev", {"a/x.yaml": b"1", "a/y.yaml": b"2", "z.yaml": b"3"})
    before = {p: os.stat(tmp_path / "dev" / p).st_ino for p in ("a/x.yaml", "a/y.yaml")}
    write_environment(tmp_path, "dev", {"a/x.yaml": b"1", "a/y.yaml": b"changed"})
    assert read_tree(tmp_path / "dev") == {"a/x.yaml": b"1", "a/y.yaml": b"changed"}
    assert os.stat(tmp_path / "dev" / "a/x.yaml").st_ino == before["a/x.yaml"]
    assert os.stat(tmp_path / "dev" / "a/y.yaml").st_ino != before["a/y.yaml"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".dev")] == []


def test_progress_shows_a_bar_on_a_terminal() -> None:
    out = io.StringIO()
    with Progress(stream=out, force_terminal=True, delay_s=0) as progress:
        progress.expect(2)
        progress.advance("rendered dev")
        progress.advance("rendered test")
    text = out.getvalue()
    assert "\x1b[" in text  # rich drew (and removed) a live bar
    assert "synth" in text


def test_progress_prints_plain_lines_elsewhere() -> None:
    out = io.StringIO()
    with Progress(stream=out, force_terminal=False, delay_s=0) as progress:
        progress.expect(2)
        progress.advance("rendered dev")
        progress.advance("wrote dev")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("synth: [0/0] starting, working...")
    assert lines[1].startswith("synth: [1/2] rendered dev (")
    assert lines[2].startswith("synth: [2/2] wrote dev (")
    assert "\x1b[" not in out.getvalue()


def test_progress_shows_nothing_for_a_fast_synth() -> None:
    out = io.StringIO()
    with Progress(stream=out, force_terminal=True, delay_s=30) as progress:
        progress.expect(1)
        progress.advance("rendered dev")
    assert out.getvalue() == ""
    assert not progress.shown


def test_benchmark_smoke(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "synth_bench.py"), "--clusters", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    line = json.loads(result.stdout.strip().splitlines()[-1])
    required = "clusters envs objects full_s incremental_s naive_cdk8s_s floor_s peak_rss_mb"
    assert set(required.split()) <= set(line)
    assert line["clusters"] == 2 and line["envs"] == 3
    assert line["objects"] > 20
    assert all(isinstance(line[k], int | float) for k in required.split())


# --- synthesize(write=True): first writes staged while rendering ------------------------------


@pytest.fixture
def staged(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, bytes]]:
    """What :class:`Staging` took to write: environment -> relative path -> bytes."""
    seen: dict[str, dict[str, bytes]] = {}
    add = Staging.add

    def spy(self: Staging, environment: str, files: list[tuple[str, bytes]]) -> bool:
        taken = add(self, environment, files)
        if taken:
            seen.setdefault(environment, {}).update(files)
        return taken

    monkeypatch.setattr(Staging, "add", spy)
    return seen


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_staged_synth_writes_what_synth_then_write_does(
    bench_project: FleetConfig,
    staged: dict[str, dict[str, bytes]],
    monkeypatch: pytest.MonkeyPatch,
    jobs: int,
) -> None:
    config = bench_project
    monkeypatch.setattr(synth_module, "BATCH", 16)  # several batches per environment
    result = synthesize(config, jobs=jobs, use_cache=False, write=True)
    assert staged == result.files
    dist = {env: read_tree(config.dist_dir / env) for env in result.files}
    assert dist == clean(config)
    assert sorted(p.name for p in config.dist_dir.iterdir()) == ["dev", "prod", "test"]

    fleet_gen.change_one_cluster(config.root)  # folders exist now: updated in place
    staged.clear()
    changed = synthesize(config, jobs=jobs, write=True)
    assert staged == {}
    assert {env: read_tree(config.dist_dir / env) for env in changed.files} == changed.files


def test_an_environment_check_that_fails_after_staging_leaves_no_dist(
    bench_project: FleetConfig, staged: dict[str, dict[str, bytes]]
) -> None:
    config = bench_project
    (config.clusters_dir / "zz_refuse.py").write_text(
        "from fleet import Check, Checks, Problem\n\n\n"
        "def refuse(manifests, context):\n"
        "    return [Problem.of(manifests[-1], '', 'refused by the test')]\n\n\n"
        "def define(fleet):\n"
        "    Checks.of(fleet).add(Check(name='refuse', scope='environment', run=refuse))\n"
    )
    with pytest.raises(InvalidObjects, match="refused by the test"):
        synthesize(config, jobs=1, use_cache=False, write=True)
    assert set(staged) == {"dev"}  # staged, then the environment check failed
    assert not config.dist_dir.exists()


def test_an_object_with_a_secret_is_never_staged(
    bench_project: FleetConfig, staged: dict[str, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = bench_project
    monkeypatch.setattr(synth_module, "BATCH", 8)
    bench = config.clusters_dir / "bench.py"
    token = "ghp_" + "a1B2" * 9
    source = bench.read_text().replace("    per_env,\n", "    per_env,\n    JsonPatch,\n")
    source = source.replace(
        '    MagnumCluster(\n        fleet,\n        "magnum-00008"',
        '    last = MagnumCluster(\n        fleet,\n        "magnum-00008"',
    )
    bench.write_text(
        source + f"    last.add_json_patch(JsonPatch.add('/metadata/annotations/x', {token!r}),"
        " kind='ClusterV1')\n"
    )
    with pytest.raises(InvalidObjects, match="GitHub token"):
        synthesize(config, jobs=1, use_cache=False, write=True)
    assert staged["dev"]  # the batches before it were staged
    assert not any(token.encode() in data for data in staged["dev"].values())
    assert not config.dist_dir.exists()


# --- the collector paused while rendering (synth._GcPause) -------------------------------------


@pytest.mark.parametrize("where", ["serial", "worker"])
def test_the_collector_is_paused_while_rendering_and_back_after_any_error(
    bench_project: FleetConfig, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    # A worker's body (_in_worker) is run in this process, to see the collector in it.
    environment = synth_module._environment
    seen: list[bool] = []

    def render(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        if len(seen) == 2:
            raise RuntimeError("a bug in the second environment")
        return environment(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(synth_module, "_environment", render)
    assert gc.isenabled()
    if where == "serial":
        with pytest.raises(RuntimeError, match="a bug"):
            synthesize(bench_project, jobs=1, use_cache=False)
    else:
        settings = synth_module._Settings(bench_project, True, None, False)
        assert not isinstance(synth_module._in_worker(settings, "dev"), tuple)
        assert gc.isenabled()
        with pytest.raises(RuntimeError, match="a bug"):
            synth_module._in_worker(settings, "test")
        synth_module._WORKER_FLEET.clear()
    assert seen == [False, False]
    assert gc.isenabled()
    gc.disable()  # a caller's choice is kept: not paused, so not enabled afterwards
    try:
        monkeypatch.setattr(synth_module, "_environment", environment)
        synthesize(bench_project, ["dev"], jobs=1, use_cache=False)
        assert not gc.isenabled()
    finally:
        gc.enable()
