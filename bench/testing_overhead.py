#!/usr/bin/python3
"""What an allocbench::testing check costs over its bare statement: bench/testing_overhead.cc's
benchmarks (<build>/bench/testing_overhead), run in rounds.

usage: bench/testing_overhead.py [--rounds N] [--min-time SECONDS] [--build DIR] [--out FILE]
       bench/testing_overhead.py --from FILE   (the table of an earlier --out; measures nothing)

Each round runs the executable once with --benchmark_format=json; every benchmark's real time
per iteration is kept per round. The table, on stdout, has per statement its median ns bare,
in Count() and in a passing check, each with the median over rounds of its paired ratio to bare
(the same round); then the capturing run and the failing check's end-to-end cost. A caption
(rounds, date, load) goes to stderr. The executable is never built here.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FORMAT = 1
STATEMENTS = {"0": "quiet: ~1 µs of work, no allocation",
              "1": "allocating: the same work and 5 allocations (206 B)"}
SIDES = ("BM_Bare", "BM_Count", "BM_PassingCheck")


def run(exe: Path, min_time: float) -> dict[str, float]:
    done = subprocess.run([str(exe), "--benchmark_format=json",
                           f"--benchmark_min_time={min_time}"], capture_output=True, text=True,
                          timeout=900, check=True)
    times = {}
    for entry in json.loads(done.stdout)["benchmarks"]:
        if entry.get("error_occurred"):
            sys.exit(f"testing_overhead: {entry['name']}: {entry.get('error_message')}")
        scale = {"ns": 1, "us": 1e3, "ms": 1e6}[entry["time_unit"]]
        times[entry["name"]] = entry["real_time"] * scale
    return times


def measure(build: Path, rounds: int, min_time: float) -> dict[str, Any]:
    exe = build / "bench" / "testing_overhead"
    if not exe.is_file():
        sys.exit(f"testing_overhead: no {exe}; build it first (cmake --build {build} "
                 "--target testing_overhead)")
    samples: dict[str, list[float]] = {}
    for _ in range(rounds):
        for name, ns in run(exe, min_time).items():
            samples.setdefault(name, []).append(ns)
    return {"format": FORMAT, "rounds": rounds, "min_time_s": min_time,
            "date": datetime.date.today().isoformat(), "load_average": os.getloadavg()[0],
            "ns": samples}


def table(doc: dict[str, Any]) -> str:
    ns = doc["ns"]
    lines = ["| statement | bare | in `Count()` | in a passing check |", "|---|---:|---:|---:|"]
    for arg, what in STATEMENTS.items():
        bare = ns[f"BM_Bare/{arg}"]
        cells = [f"{statistics.median(bare):.0f} ns"]
        for side in SIDES[1:]:
            times = ns[f"{side}/{arg}"]
            ratio = statistics.median(t / b for t, b in zip(times, bare))
            cells.append(f"{statistics.median(times):.0f} ns ({ratio:.3f}×)")
        lines.append(f"| {what} | " + " | ".join(cells) + " |")
    capture = statistics.median(ns["BM_CapturingRun"])
    failing = statistics.median(ns["BM_FailingCheck/iterations:20"])
    lines += ["", f"A run that keeps the 5 allocations' stacks: {capture / 1e3:.1f} µs; a failing "
              f"exact check end to end (the counted run, the capturing run, `addr2line`, the "
              f"message): {failing / 1e6:.0f} ms."]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument("--build", type=Path,
                        default=Path(os.environ.get("ALLOCBENCH_BUILD_DIR",
                                                    ROOT / "build" / "release")))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--from", dest="source", type=Path)
    args = parser.parse_args()
    if args.source:
        doc = json.loads(args.source.read_text())
    else:
        doc = measure(args.build, args.rounds, args.min_time)
        if args.out:
            args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(table(doc), end="")
    print(f"{doc['rounds']} rounds, min time {doc['min_time_s']:g} s, {doc['date']}, load "
          f"average {doc['load_average']:.1f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
