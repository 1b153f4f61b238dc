"""Benchmark ``fleet synth`` on a synthetic hybrid fleet, against naive cdk8s and a YAML floor.

Usage: ``python benchmarks/synth_bench.py --clusters N [--envs 3] [--json] [--jobs J]
[--repeat R] [--skip-naive]``

Generates a temporary fleet project (:mod:`fleet_gen`: 80% Magnum clusters with 3 node
groups and about 60 labels, 20% OKE clusters with 2 node pools, all registered in ArgoCD)
with N clusters in each environment, then measures:

* ``full_s``: ``fleet synth`` (the real command line, in a subprocess) into an empty
  ``dist/`` with an empty cache, in a freshly generated project; validation included when
  CRDs are available (``$FLEET_CRDS_DIR``, else the CRDs pinned in the package);
* ``incremental_s``: ``fleet synth`` again after one cluster's node count changed;
* ``novalidate_s``: the cold synth with validation off (for the validation overhead);
* ``peak_rss_mb``: the largest sum of the resident memory of the synth process and all
  its descendants (workers, Node), sampled from /proc every 10 ms during both runs;
* ``full_cpu_s``, ``incremental_cpu_s``, ``floor_cpu_s``: CPU seconds (user + system) of
  those runs, the synth's workers and helpers included (the best of the rounds);
* ``naive_cdk8s_s``: the same objects built the naive way, one ``ApiObject`` plus one
  ``add_json_patch`` per object, then ``App.synth()`` (file per resource), timed from
  ``import cdk8s`` (Node start included) to the end of synth, in a subprocess;
* ``floor_s``: the same objects as plain dicts, each dumped with PyYAML's C dumper
  (``fleet.pipeline.yaml_canonical.to_yaml``) into its own file (building the dicts not timed).

Wall-clock seconds; with ``--repeat R`` each timing is the best of R runs and the memory
the largest of them; each round measures the floor right after the synth, and no run's
files are deleted before the end. Prints a table, or with ``--json`` one line of JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "constructs"))

import fleet_gen  # noqa: E402

SYNTH = "import sys; from fleet.cli.main import main; sys.exit(main(sys.argv[1:]))"
SYNTH_NO_VALIDATE = """
import sys
from pathlib import Path
from fleet.core.config import FleetConfig
from fleet.pipeline import synth
config = FleetConfig.load(Path(sys.argv[1]))
synth.synthesize(config, validate=False, write=True)
"""
NAIVE = """
import json, sys, time
import yaml
from pathlib import Path
dist, out = Path(sys.argv[1]), sys.argv[2]
bodies = {}
for env in sorted(p.name for p in dist.iterdir() if p.is_dir()):
    bodies[env] = [
        yaml.load(p.read_bytes(), Loader=yaml.CSafeLoader)
        for p in sorted((dist / env).rglob("*.yaml"))
    ]
start = time.perf_counter()
import cdk8s
app = cdk8s.App(outdir=out, yaml_output_type=cdk8s.YamlOutputType.FILE_PER_RESOURCE)
for env, objects in bodies.items():
    chart = cdk8s.Chart(app, env, disable_resource_name_hashes=True)
    for i, body in enumerate(objects):
        obj = cdk8s.ApiObject(
            chart, f"o{i}", api_version=body["apiVersion"], kind=body["kind"],
            metadata=body.get("metadata"),
        )
        rest = [
            cdk8s.JsonPatch.add("/" + key, value)
            for key, value in body.items()
            if key not in ("apiVersion", "kind", "metadata")
        ]
        if rest:
            obj.add_json_patch(*rest)
app.synth()
print(json.dumps({"seconds": time.perf_counter() - start}))
"""


def crds_dir() -> Path | None:
    """The CRDs the synth validates against: ``$FLEET_CRDS_DIR``, else the packaged ones."""
    from fleet.checks.crds import PACKAGED_CRDS

    explicit = os.environ.get("FLEET_CRDS_DIR")
    if explicit:
        return Path(explicit).resolve()
    return PACKAGED_CRDS if PACKAGED_CRDS.is_dir() else None


def _children(pid: int) -> list[int]:
    """``pid`` and all its descendants, from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        parents.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(parents.get(p, []))
    return out


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Measured(NamedTuple):
    """One command's run: wall seconds, peak RSS of its process tree (MB), CPU seconds
    (user + system, of it and every descendant it waited for: workers, helpers), stdout."""

    seconds: float
    peak_rss_mb: float
    cpu_s: float
    stdout: str


def run_measured(args: list[str], *, env: dict[str, str]) -> Measured:
    """Run ``args`` and measure it (:class:`Measured`)."""
    peak = 0
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, sum(_rss_kb(p) for p in _children(proc.pid)))
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[:3])} failed ({proc.returncode}):\n{err.decode()}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measured(seconds, peak / 1024, cpu, out.decode())


def _env(crds: Path | None, jobs: int | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("FLEET_NO_CACHE", None)
    if crds is not None:
        env["FLEET_CRDS_DIR"] = str(crds)
    if jobs is not None:
        env["FLEET_JOBS"] = str(jobs)
    return env


def measure_synth(
    work: Path, *, clusters: int, envs: int, jobs: int | None, crds: Path | None
) -> dict[str, float]:
    """One cold full synth, one incremental synth and one cold synth without validation,
    in fresh folders ``work/project`` and ``work/bare``."""
    project = work / "project"
    fleet_gen.write_project(project, clusters=clusters, envs=envs)
    env = _env(crds, jobs)
    cmd = [sys.executable, "-c", SYNTH, "--root", str(project), "synth"]
    full = run_measured(cmd, env=env)
    fleet_gen.change_one_cluster(project)
    incremental = run_measured(cmd, env=env)

    bare = work / "bare"
    fleet_gen.write_project(bare, clusters=clusters, envs=envs)
    novalidate = run_measured([sys.executable, "-c", SYNTH_NO_VALIDATE, str(bare)], env=env)
    return {
        "full_s": full.seconds,
        "incremental_s": incremental.seconds,
        "novalidate_s": novalidate.seconds,
        "peak_rss_mb": max(full.peak_rss_mb, incremental.peak_rss_mb),
        "full_cpu_s": full.cpu_s,
        "incremental_cpu_s": incremental.cpu_s,
    }


def load_bodies(dist: Path) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """The rendered objects, per environment, with their paths (parsed, not timed)."""
    import yaml

    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for env_dir in sorted(p for p in dist.iterdir() if p.is_dir()):
        out[env_dir.name] = [
            (p.relative_to(env_dir).as_posix(), yaml.load(p.read_bytes(), Loader=yaml.CSafeLoader))
            for p in sorted(env_dir.rglob("*.yaml"))
        ]
    return out


def measure_floor(
    bodies: dict[str, list[tuple[str, dict[str, Any]]]], out: Path
) -> tuple[float, float]:
    """Dump every object with PyYAML's C dumper into its own file, in the new folder ``out``:
    (wall seconds, CPU seconds)."""
    from fleet.pipeline.yaml_canonical import to_yaml

    before = os.times()
    start = time.perf_counter()
    for env, objects in bodies.items():
        for relpath, body in objects:
            path = out / env / relpath
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(to_yaml(body))
    seconds = time.perf_counter() - start
    after = os.times()
    return seconds, (after.user - before.user) + (after.system - before.system)


def measure_naive(dist: Path, out: Path) -> float:
    """The naive cdk8s construct tree of the same objects, in a subprocess."""
    shutil.rmtree(out, ignore_errors=True)
    result = subprocess.run(
        [sys.executable, "-c", NAIVE, str(dist), str(out)],
        check=True,
        capture_output=True,
        env=dict(os.environ),
    )
    return float(json.loads(result.stdout.decode().strip().splitlines()[-1])["seconds"])


def machine() -> str:
    """CPU model, cores, memory, Python and Node versions, for the report."""
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kb = int(f.readline().split()[1])
    node = os.environ.get("JSII_NODE") or shutil.which("node") or "node"
    try:
        node_version = subprocess.run(
            [node, "--version"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        node_version = "?"
    return (
        f"{model}, {os.cpu_count()} cores, {mem_kb / 1024 / 1024:.0f} GiB; "
        f"Python {platform.python_version()}, Node {node_version}"
    )


def main() -> None:
    """Run the benchmark and print the table (or one JSON line)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clusters", type=int, required=True, help="clusters per environment")
    parser.add_argument("--envs", type=int, default=3, help="environments (default 3)")
    parser.add_argument("--json", action="store_true", help="print one line of JSON")
    parser.add_argument("--jobs", type=int, help="FLEET_JOBS for the synth (default: auto)")
    parser.add_argument("--repeat", type=int, default=1, help="best of R runs (default 1)")
    parser.add_argument("--skip-naive", action="store_true", help="do not run naive cdk8s")
    args = parser.parse_args()
    from fleet.core import nodejs  # noqa: F401  (JSII_NODE for the naive run and the report)

    crds = crds_dir()
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp:
        # Every run writes into folders of its own and nothing is deleted before the end:
        # on ext4 without a journal, creating a file skips every inode of its block group
        # freed in the last minute (fs/ext4/ialloc.c, recently_deleted()), so deleting the
        # last run's 20,000 files made the next run's writes twice as slow or more. The
        # floor is measured in each round, right after the synth, on the same disk.
        runs: list[dict[str, float]] = []
        floors: list[tuple[float, float]] = []
        bodies: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for round_no in range(args.repeat):
            work = Path(tmp) / f"round-{round_no}"
            runs.append(
                measure_synth(
                    work, clusters=args.clusters, envs=args.envs, jobs=args.jobs, crds=crds
                )
            )
            bodies = bodies or load_bodies(work / "project" / "dist")
            floors.append(measure_floor(bodies, work / "floor"))
        # Times: the best run (least disturbed by other work); memory: the largest seen.
        best = {key: min(r[key] for r in runs) for key in runs[0]}
        best["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
        dist = Path(tmp) / "round-0" / "project" / "dist"
        objects = sum(len(v) for v in bodies.values())
        floor = min(f[0] for f in floors)
        floor_cpu = min(f[1] for f in floors)
        naive = (
            None
            if args.skip_naive
            else min(measure_naive(dist, Path(tmp) / f"naive-{i}") for i in range(args.repeat))
        )
    result: dict[str, Any] = {
        "clusters": args.clusters,
        "envs": args.envs,
        "objects": objects,
        "full_s": round(best["full_s"], 2),
        "incremental_s": round(best["incremental_s"], 2),
        "naive_cdk8s_s": None if naive is None else round(naive, 2),
        "floor_s": round(floor, 2),
        "peak_rss_mb": round(best["peak_rss_mb"]),
        "novalidate_s": round(best["novalidate_s"], 2),
        "full_cpu_s": round(best["full_cpu_s"], 2),
        "incremental_cpu_s": round(best["incremental_cpu_s"], 2),
        "floor_cpu_s": round(floor_cpu, 2),
        "validated": crds is not None,
        "jobs": args.jobs or "auto",
        "repeat": args.repeat,
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"machine: {machine()}")
    print(
        f"fleet: {args.clusters} clusters x {args.envs} environments = {objects} objects; "
        f"validation: {'CRDs in ' + str(crds) if crds else 'off (no CRDs found)'}; "
        f"best of {args.repeat}"
    )
    print(f"{'measure':28} {'value':>10}")
    rows = [
        ("full synth (cold) s", result["full_s"]),
        ("incremental synth s", result["incremental_s"]),
        ("full synth, no validation s", result["novalidate_s"]),
        ("naive cdk8s s", result["naive_cdk8s_s"]),
        ("floor (PyYAML C dumper) s", result["floor_s"]),
        ("peak RSS MB (Python+Node)", result["peak_rss_mb"]),
        ("full synth CPU s", result["full_cpu_s"]),
        ("incremental synth CPU s", result["incremental_cpu_s"]),
        ("floor CPU s", result["floor_cpu_s"]),
    ]
    for label, value in rows:
        print(f"{label:28} {'-' if value is None else value:>10}")
    full = best["full_s"]
    if naive:
        print(f"{'naive / full':28} {naive / full:>10.1f}x")
    print(f"{'full / floor':28} {full / floor:>10.2f}x")
    print(f"{'validation overhead':28} {(full / best['novalidate_s'] - 1) * 100:>9.0f}%")


if __name__ == "__main__":
    main()
