"""CPU seconds per phase of a serial ``fleet synth``, for one or more checkouts, interleaved.

Usage: ``python benchmarks/synth_phases.py REPO [REPO ...] [--clusters 1000] [--rounds 3]``

Each round generates a fresh project (:mod:`fleet_gen`) per checkout (the order rotates
from round to round) and runs ``fleet synth`` twice in it with that checkout's
``.venv/bin/python`` and ``FLEET_JOBS=1`` (one process: every phase in it): cold, then
after one cluster's node count changed. Timers wrap the pipeline's functions by name where a
checkout has them (loading, rendering, YAML, the cache, each check, writing), so older
checkouts are measured the same way. A timer reads the process's CPU time (user +
system); the CPU of helper processes (the writing helper) is reported on its own. Prints
the median of each phase per checkout; nothing is deleted before the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

import fleet_gen
from ab_synth import side_crds
from synth_bench import _env

PHASES = r"""
import importlib, json, os, sys, time
from collections import defaultdict
T = defaultdict(float)
def wrap(module, attr, label):
    try:
        owner = importlib.import_module(module)
    except ImportError:
        return
    *path, name = attr.split(".")
    for step in path:
        owner = getattr(owner, step, None)
        if owner is None:
            return
    f = getattr(owner, name, None)
    if f is None or getattr(f, "_timed", False):
        return
    def timed(*a, **k):
        t0 = time.process_time()
        try:
            return f(*a, **k)
        finally:
            T[label] += time.process_time() - t0
    timed._timed = True
    setattr(owner, name, timed)
t0, c0 = time.process_time(), os.times()
S = "fleet.pipeline.synth"
for attr, label in (("load_fleet", "load"), ("render_environment", "render"),
                    ("fast_to_yaml", "YAML"), ("write_environment", "write"),
                    ("validate_manifests", "schema + CEL"), ("check_references", "references"),
                    ("find_secret_material", "secret guard")):
    wrap(S, attr, label)
for attr in ("object_key", "SynthCache.save", "SynthCache._load"):
    wrap("fleet.pipeline.cache", attr, "cache")
wrap("fleet.checks.registry", "check_references", "references")
wrap("fleet.checks.registry", "check_waves", "waves")
wrap("fleet.checks.registry", "find_secret_material", "secret guard")
wrap("fleet.checks.schema", "validate_manifests", "schema + CEL")
wrap("fleet.pipeline.writer", "Staging.add", "write")
from fleet.cli.main import main
code = main(["--root", sys.argv[1], "synth"])
c1 = os.times()
T["total (this process)"] = time.process_time() - t0
T["helper processes"] = (c1.children_user - c0.children_user) + (
    c1.children_system - c0.children_system
)
print(json.dumps(T))
sys.exit(code)
"""


def main() -> None:
    """Run the rounds and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", type=Path, nargs="+")
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sides = [repo.resolve() for repo in args.repos]
    runs: dict[Path, dict[str, list[dict[str, float]]]] = {
        side: {"full": [], "incremental": []} for side in sides
    }
    with tempfile.TemporaryDirectory(prefix="fleet-phases-") as tmp:
        for round_no in range(args.rounds):
            shift = round_no % len(sides)
            for index, side in enumerate(sides[shift:] + sides[:shift]):
                project = Path(tmp) / f"r{round_no}-{index}"
                fleet_gen.write_project(project, clusters=args.clusters, envs=3)
                env = _env(side_crds(side), 1)
                for kind in ("full", "incremental"):
                    if kind == "incremental":
                        fleet_gen.change_one_cluster(project)
                    out = subprocess.run(
                        [str(side / ".venv" / "bin" / "python"), "-c", PHASES, str(project)],
                        env=env,
                        capture_output=True,
                        text=True,
                        check=True,
                    )
                    runs[side][kind].append(json.loads(out.stdout.strip().splitlines()[-1]))
                print(f"round {round_no + 1}: {side}", flush=True)
    for kind in ("full", "incremental"):
        print(f"\n{kind} synth, CPU s per phase, median of {args.rounds} (FLEET_JOBS=1)")
        phases = sorted({p for side in sides for r in runs[side][kind] for p in r})
        print(f"{'phase':22}" + "".join(f"{side.name:>14}" for side in sides))
        for phase in phases:
            medians = [
                statistics.median(r.get(phase, 0.0) for r in runs[side][kind]) for side in sides
            ]
            print(f"{phase:22}" + "".join(f"{m:14.3f}" for m in medians))


if __name__ == "__main__":
    main()
