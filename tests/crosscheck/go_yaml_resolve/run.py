"""Cross-check :func:`fleet.pipeline.yaml_scalars.go_yaml_tag` (the port of go-yaml's
``resolve``) against the Go library itself, on a generated corpus of plain scalars.

Not part of the test suite (CI has no Go toolchain): run by hand where Debian's packages
``golang-go``, ``golang-gopkg-yaml.v2-dev`` and ``golang-gopkg-yaml.v3-dev`` are installed
(``apt-get install``; offline, GOPATH mode)::

    .venv/bin/python tests/crosscheck/go_yaml_resolve/run.py [--count N] [--seed S]

Prints the counts and every disagreement; exit 1 if there is one. The result of the last run
is recorded in docs/upstream-behaviour.md ("YAML that Kubernetes reads as we wrote it").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fleet.pipeline.yaml_scalars import STR, go_yaml_tag

HERE = Path(__file__).resolve().parent
GOPATH = "/usr/share/gocode"  # where Debian's golang-gopkg-yaml.v*-dev put the sources

SPECIAL = [
    *[
        "y",
        "Y",
        "n",
        "N",
        "yes",
        "Yes",
        "YES",
        "no",
        "No",
        "NO",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
        "true",
        "True",
        "TRUE",
        "false",
        "False",
    ],
    *[
        "FALSE",
        "~",
        "null",
        "Null",
        "NULL",
        ".inf",
        ".Inf",
        ".INF",
        "-.inf",
        "+.inf",
        ".nan",
        ".NaN",
        ".NAN",
        "=",
        "<<",
    ],
    *[
        "1e3",
        "1E3",
        "1e+3",
        "1e-3",
        ".5",
        ".5e3",
        "._5",
        ".5_5",
        ".5__5",
        "1.",
        "0.",
        "08",
        "09",
        "0777",
        "0o17",
        "0O17",
        "-0o17",
    ],
    *[
        "0x1F",
        "0X1F",
        "-0x1F",
        "0b101",
        "0B101",
        "-0b101",
        "0b+1",
        "0b-1",
        "-0b+1",
        "0x_1F",
        "1_000",
        "1__",
        "-_",
        "+_",
        "_1",
    ],
    *[
        "1:20",
        "190:20:30",
        "190:20:30.15",
        "-1:20",
        "1:2:3",
        "2001-12-14",
        "2002-1-1",
        "2001-02-29",
        "2000-02-29",
    ],
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14T21:59:43Z",
    "2001-12-14 21:59:43.10",
    "2001-12-14  21:59:43,5",
    "2001-12-14 21:59:43.10 -5",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    *[
        "-9223372036854775808",
        "-9223372036854775809",
        "1e308",
        "1e309",
        ".1e309",
        "1e-400",
        "0x",
        "0b",
        "0o",
    ],
    *[
        "v1.30.1",
        "1.25.3",
        "10.0.0.0/16",
        "ocid1.image.oc1",
        "+1",
        "-1",
        "+",
        "-",
        ".",
        "..",
        "0",
        "-0",
        "+0",
        "00",
        "0.0.0",
    ],
]

ALPHABETS = [
    "0123456789",
    "0123456789_",
    "0123456789.eE+-_",
    "0123456789abcdefABCDEFxXoObB_+-",
    "0123456789:._",
    "0123456789-:TtZ.,+ ",
    "yYnNtTfFoO~.sSeEuUlLrRaA",
]


def corpus(count: int, seed: int) -> list[str]:
    """The special strings, then ``count`` random ones biased towards numbers and dates."""
    rnd = random.Random(seed)
    out = list(SPECIAL)
    for _ in range(count):
        alphabet = rnd.choice(ALPHABETS)
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 12)))
        if rnd.random() < 0.2:
            text = rnd.choice("+-.") + text
        if rnd.random() < 0.15:
            text = f"{rnd.randint(0, 9999):04d}-{rnd.randint(0, 13)}-{rnd.randint(0, 32)}" + (
                rnd.choice(["", "T", "t", " ", "  "]) + text if rnd.random() < 0.5 else ""
            )
        out.append(text.strip())
    return list(dict.fromkeys(out))


def expected(tag: str, *, v3: bool) -> set[str]:
    """What the Go decoder reports (its Go type) for a port's tag."""
    return {
        STR: {"string"},
        "!!bool": {"bool"},
        "!!int": {"int", "int64", "uint64"},
        "!!float": {"float64"},
        "!!null": {"null"},
        "!!timestamp": {"time.Time"} if v3 else {"string"},
    }[tag]


def main() -> int:
    """Build the Go program, run it on the corpus, compare with the port."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    if shutil.which("go") is None:
        print(
            "no Go toolchain: apt-get install golang-go golang-gopkg-yaml.v2-dev "
            "golang-gopkg-yaml.v3-dev",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GO111MODULE": "off", "GOPATH": GOPATH, "GOCACHE": f"{tmp}/cache"}
        binary = f"{tmp}/resolve"
        subprocess.run(["go", "build", "-o", binary, str(HERE / "main.go")], env=env, check=True)
        version = subprocess.run(["go", "version"], capture_output=True, text=True).stdout
        texts = [t for t in corpus(args.count, args.seed) if t != "<<"]  # a key-only merge
        lines = "".join(json.dumps(t) + "\n" for t in texts)
        done = subprocess.run([binary], input=lines, capture_output=True, text=True, check=True)
    compared = parse_errors = 0
    disagreements: list[str] = []
    for line in done.stdout.splitlines():
        r = json.loads(line)
        text = r["in"]
        for lib in ("v2", "v3"):
            got = r[lib]
            if got == "error":
                parse_errors += 1
                continue
            compared += 1
            tag = go_yaml_tag(text, v3=lib == "v3")
            ok = got in expected(tag, v3=lib == "v3")
            if got == "string" and not r[f"{lib}_str"]:
                ok = False  # a string, but not the same one
            if lib == "v2" and ok and got == "string":
                ok = (tag == "!!timestamp") == r["v2_timestamp"]
            if not ok:
                disagreements.append(f"{lib} {text!r}: port {tag}, Go {got}")
    print(version.strip())
    print(
        f"{len(texts)} strings, {compared} decodings compared, {parse_errors} not a plain "
        f"scalar there (parse errors), {len(disagreements)} disagreements"
    )
    for d in disagreements[:50]:
        print(" ", d)
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
