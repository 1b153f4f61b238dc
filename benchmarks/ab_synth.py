"""Compare ``fleet synth`` of several checkouts side by side, interleaved, in one session.

Usage: ``python benchmarks/ab_synth.py REPO_A REPO_B [REPO_C ...] [--clusters 1000]
[--rounds 4]``

Each round runs, for every checkout in turn (the order rotates from round to round, so
none always goes first), what :mod:`synth_bench` calls ``full_s`` (``fleet synth`` of a
freshly generated project: empty ``dist/``, empty cache, validation on) and
``incremental_s`` (again after one cluster's node count changed), each with that
checkout's own ``.venv/bin/python`` and pinned CRDs, then the floor once
(:func:`synth_bench.measure_floor`: the same objects dumped with PyYAML's C dumper, one
file each). The machine's load and its disk drift during a session; interleaving exposes
every side to them alike. Prints every run and, per side, the best and the median of the
wall and CPU seconds, the peak RSS, and the best ``full_s`` against the best floor.

Every run gets a project folder of its own, and nothing is deleted before the end (see
``synth_bench``: files deleted less than a minute before make creating files slow).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
from typing import Any

import fleet_gen
from synth_bench import SYNTH, Measured, _env, crds_dir, load_bodies, measure_floor, run_measured


def side_crds(repo: Path) -> Path | None:
    """The CRDs ``repo`` pins: in its package, or ``crds/`` in older checkouts; else ours."""
    for folder in (repo / "constructs" / "fleet" / "data" / "crds", repo / "crds"):
        if folder.is_dir():
            return folder
    return crds_dir()


def one_run(repo: Path, project: Path, clusters: int) -> tuple[Measured, Measured]:
    """The full and the incremental synth of a fresh project in ``project`` with ``repo``'s
    fleet (its ``.venv``), validated against the CRDs it pins."""
    fleet_gen.write_project(project, clusters=clusters, envs=3)
    env = _env(side_crds(repo), None)
    cmd = [str(repo / ".venv" / "bin" / "python"), "-c", SYNTH, "--root", str(project), "synth"]
    full = run_measured(cmd, env=env)
    fleet_gen.change_one_cluster(project)
    incremental = run_measured(cmd, env=env)
    return full, incremental


def _summary(values: list[float]) -> str:
    return f"best {min(values):.2f} median {statistics.median(values):.2f}"


def main() -> None:
    """Run the rounds and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", type=Path, nargs="+", help="two or more checkouts")
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    if len(args.repos) < 2:
        parser.error("give two or more checkouts")
    sides = [repo.resolve() for repo in args.repos]
    runs: dict[Path, list[tuple[Measured, Measured]]] = {side: [] for side in sides}
    floors: list[float] = []
    with tempfile.TemporaryDirectory(prefix="fleet-ab-") as tmp:
        bodies: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for round_no in range(args.rounds):
            shift = round_no % len(sides)
            for index, side in enumerate(sides[shift:] + sides[:shift]):
                project = Path(tmp) / f"r{round_no}-{index}"  # never a deleted one's place
                full, incremental = one_run(side, project, args.clusters)
                runs[side].append((full, incremental))
                print(
                    f"round {round_no + 1} {side}: full_s {full.seconds:.2f} "
                    f"(CPU {full.cpu_s:.2f})  incremental_s {incremental.seconds:.2f} "
                    f"(CPU {incremental.cpu_s:.2f})  peak RSS {full.peak_rss_mb:.0f} MB",
                    flush=True,
                )
                bodies = bodies or load_bodies(project / "dist")
            seconds, cpu = measure_floor(bodies, Path(tmp) / f"floor-{round_no}")
            floors.append(seconds)
            print(f"round {round_no + 1} floor: {seconds:.2f} (CPU {cpu:.2f})", flush=True)
    print(f"floor_s {_summary(floors)}")
    for side, results in runs.items():
        full = [r[0] for r in results]
        incremental = [r[1] for r in results]
        print(
            f"{side}:\n"
            f"  full_s {_summary([m.seconds for m in full])}; "
            f"CPU {_summary([m.cpu_s for m in full])}\n"
            f"  incremental_s {_summary([m.seconds for m in incremental])}; "
            f"CPU {_summary([m.cpu_s for m in incremental])}\n"
            f"  peak RSS {max(m.peak_rss_mb for r in results for m in r):.0f} MB; "
            f"best full_s / best floor_s {min(m.seconds for m in full) / min(floors):.2f}x"
        )


if __name__ == "__main__":
    main()
