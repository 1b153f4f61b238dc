"""``fleet diff`` against a full ``fleet synth`` on a generated fleet without ``constructs/``.

The fleet of :mod:`fleet_gen` (N clusters per environment) is a git repository that installs
the tool (no ``constructs/``), with ``dist/`` committed. Measured, each in a subprocess of the
real command line, with the synth cache off (``FLEET_NO_CACHE=1``) so both do the full work:

* ``synth_s``: ``fleet synth`` of the changed working tree;
* ``diff_s``: ``fleet diff --base HEAD`` after one cluster's node count changed;
* ``diff_removal_s``: the same after one cluster was retired (the guard renders the
  working tree again, reviving retired definitions);

and the objects the diff reports as added, removed and changed.

    python benchmarks/diff_bench.py --clusters 1000 [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import fleet_gen

REPO = Path(__file__).resolve().parents[1]
FLEET = [sys.executable, "-c", "import sys; from fleet.cli.main import main; sys.exit(main())"]


def _run(root: Path, *args: str, env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        [*FLEET, "--root", str(root), *args], capture_output=True, text=True, env=env, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"fleet {' '.join(args)} failed:\n{proc.stderr}")
    return elapsed, proc.stdout


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@example.org", *args],
        check=True,
        capture_output=True,
    )


def _counts(out: str) -> dict[str, int]:
    totals = {"added": 0, "removed": 0, "changed": 0}
    for match in re.finditer(r"(\d+) added, (\d+) removed, (\d+) changed", out):
        for key, value in zip(totals, match.groups(), strict=True):
            totals[key] += int(value)
    return totals


def measure(clusters: int, envs: int) -> dict[str, object]:
    """Generate, commit, change, and time synth and diff."""
    env = {**os.environ, "FLEET_NO_CACHE": "1"}
    env.setdefault("FLEET_CRDS_DIR", str(REPO / "crds"))
    with tempfile.TemporaryDirectory(prefix="fleet-diff-bench-") as tmp:
        root = Path(tmp) / "fleet"
        fleet_gen.write_project(root, clusters=clusters, envs=envs)
        _git(root, "init", "--quiet", "--initial-branch=main")
        _run(root, "synth", env=env)
        _git(root, "add", "-A")
        _git(root, "commit", "--quiet", "-m", "base")
        fleet_gen.change_one_cluster(root)
        synth_s, _ = _run(root, "synth", env=env)
        diff_s, out = _run(root, "diff", "--base", "HEAD", env=env)
        changed = _counts(out)
        source = root / "clusters" / "bench.py"
        text = source.read_text()
        source.write_text(
            text.replace("        node_count=", "        retired=True,\n        node_count=", 1)
        )
        removal_s, removal_out = _run(root, "diff", "--base", "HEAD", env=env)
    return {
        "clusters": clusters,
        "envs": envs,
        "synth_s": round(synth_s, 2),
        "diff_s": round(diff_s, 2),
        "diff_over_synth": round(diff_s / synth_s, 2),
        "diff_removal_s": round(removal_s, 2),
        "diff": changed,
        "diff_removal": _counts(removal_out),
        "removal_guard_errors": removal_out.count("\nerror: "),
    }


def main() -> None:
    """Run once and print the measures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--envs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.clusters, args.envs)
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
