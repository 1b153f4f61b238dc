"""CPU seconds of loading (define + phases) and rendering a fleet, two checkouts interleaved.

Usage: ``python benchmarks/ab_cpu.py A_REPO B_REPO [--clusters 1000] [--rounds 8]``

On a machine shared with other work, wall-clock synth times swing by more than the
differences worth measuring; the CPU time of the process doing the work swings less.
Each round generates nothing new: one project (:mod:`fleet_gen`, N clusters, 3
environments) is loaded and rendered (no validation, nothing written) in a fresh process
by each checkout's ``.venv/bin/python``, alternating which goes first. Prints every run
and the median and best per side.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from pathlib import Path

import fleet_gen

CODE = r"""
import sys, time
from pathlib import Path
from fleet.core.config import FleetConfig
from fleet.pipeline.discovery import load_fleet
from fleet.pipeline.render import render_environment
config = FleetConfig.load(Path(sys.argv[1]))
t0 = time.process_time(); fleet = load_fleet(config); t1 = time.process_time()
n = sum(len(render_environment(fleet, env)) for env in config.environments)
print(t1 - t0, time.process_time() - t1, n)
"""


def main() -> None:
    """Run the rounds and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    sides = {"A": args.a.resolve(), "B": args.b.resolve()}
    runs: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
    with tempfile.TemporaryDirectory(prefix="fleet-ab-cpu-") as tmp:
        project = Path(tmp) / "project"
        fleet_gen.write_project(project, clusters=args.clusters, envs=3)
        for round_no in range(args.rounds):
            for side in ("A", "B") if round_no % 2 == 0 else ("B", "A"):
                python = sides[side] / ".venv" / "bin" / "python"
                out = subprocess.run(
                    [str(python), "-c", CODE, str(project)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                load, render, objects = out.stdout.split()
                runs[side].append((float(load), float(render)))
                print(
                    f"round {round_no + 1} {side}: load {float(load):.3f} s  "
                    f"render {float(render):.3f} s  ({objects} objects)",
                    flush=True,
                )
    for side, r in runs.items():
        loads, renders = [x[0] for x in r], [x[1] for x in r]
        print(
            f"{side} {sides[side]}: load median {statistics.median(loads):.3f} best "
            f"{min(loads):.3f}; render median {statistics.median(renders):.3f} best "
            f"{min(renders):.3f}"
        )


if __name__ == "__main__":
    main()
