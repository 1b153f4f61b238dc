"""Compare ``full_s`` and ``incremental_s`` of two checkouts, interleaved, in one session.

Usage: ``python benchmarks/ab_synth.py A_REPO B_REPO [--clusters 1000] [--rounds 4]``

Each round runs, for A then B (then B then A in the next round, so neither side always
goes first), what :mod:`synth_bench` calls ``full_s`` (``fleet synth`` of a freshly
generated project: empty ``dist/``, empty cache, validation on) and ``incremental_s``
(again after one cluster's node count changed), each with that checkout's own
``.venv/bin/python``. The machine's load drifts during a session; interleaving exposes
both sides to it alike. Prints every run and, per side, the best and the median.

Every run gets a project folder of its own, and nothing is deleted before the end (see
``synth_bench``: files deleted less than a minute before make creating files slow).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import fleet_gen
from synth_bench import SYNTH, _env, crds_dir, run_measured


def one_run(python: Path, project: Path, clusters: int) -> tuple[float, float]:
    """(full_s, incremental_s) of a fresh project in ``project`` with ``python``'s fleet."""
    fleet_gen.write_project(project, clusters=clusters, envs=3)
    env = _env(crds_dir(), None)
    cmd = [str(python), "-c", SYNTH, "--root", str(project), "synth"]
    full, _, _ = run_measured(cmd, env=env)
    fleet_gen.change_one_cluster(project)
    incremental, _, _ = run_measured(cmd, env=env)
    return full, incremental


def main() -> None:
    """Run the rounds and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    sides = {"A": args.a.resolve(), "B": args.b.resolve()}
    times: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
    with tempfile.TemporaryDirectory(prefix="fleet-ab-") as tmp:
        for round_no in range(args.rounds):
            order = ["A", "B"] if round_no % 2 == 0 else ["B", "A"]
            for side in order:
                project = Path(tmp) / f"{side}-{round_no}"  # never a deleted one's place
                result = one_run(sides[side] / ".venv" / "bin" / "python", project, args.clusters)
                times[side].append(result)
                print(
                    f"round {round_no + 1} {side}: full_s {result[0]:.2f}  "
                    f"incremental_s {result[1]:.2f}",
                    flush=True,
                )
    for side, runs in times.items():
        fulls, incs = [r[0] for r in runs], [r[1] for r in runs]
        print(
            f"{side} {sides[side]}: full_s best {min(fulls):.2f} median "
            f"{statistics.median(fulls):.2f}; incremental_s best {min(incs):.2f} median "
            f"{statistics.median(incs):.2f}"
        )
    sys.exit(0)


if __name__ == "__main__":
    main()
