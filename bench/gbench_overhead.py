#!/usr/bin/python3
"""What linking allocbench::gbench costs a Google Benchmark suite's timings: the same suite
(tests/gbench/ground_truth_benchmarks.cc) built plain and with the drop-in, timed side by side.

usage: bench/gbench_overhead.py [--rounds N] [--min-time SECONDS] [--filter REGEX]
                                [--build DIR] [--out FILE]
       bench/gbench_overhead.py --from FILE   (the table of an earlier --out; measures nothing)

Each round runs both executables once (which goes first alternates from round to round, so
drift on the machine hits both alike) with --benchmark_format=json and the given min time, and
keeps every benchmark's real_time per iteration in ns. The table, on stdout, has per benchmark
the allocations per op (the drop-in's own count), the median ns/op of each side over the
rounds, and the median over rounds of the paired ratio drop-in / plain; a caption (rounds,
date, load) goes to stderr. The executables are never built here: they are
<build>/tests/gbench/gbench_ground_truth{,_plain}, --build defaulting to
$ALLOCBENCH_BUILD_DIR or build/release.
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
SIDES = {"plain": "gbench_ground_truth_plain", "drop_in": "gbench_ground_truth"}
DEFAULT_FILTER = "^BM_(ThreeNew32|MallocFamily|OneIn8|NoAlloc)$"


def run(exe: Path, min_time: float, filter: str) -> dict[str, dict[str, Any]]:
    """Each benchmark's iteration entry of one run of `exe`."""
    done = subprocess.run([str(exe), "--benchmark_format=json", f"--benchmark_filter={filter}",
                           f"--benchmark_min_time={min_time}"], capture_output=True, text=True,
                          timeout=600, check=True)
    return {e["name"]: e for e in json.loads(done.stdout)["benchmarks"]
            if e["run_type"] == "iteration"}


def measure(build: Path, rounds: int, min_time: float, filter: str) -> dict[str, Any]:
    exes = {side: build / "tests" / "gbench" / name for side, name in SIDES.items()}
    for exe in exes.values():
        if not exe.is_file():
            sys.exit(f"gbench_overhead: no {exe}; build it first (cmake --build {build})")
    samples: dict[str, dict[str, list[float]]] = {}
    allocs: dict[str, float] = {}
    for r in range(rounds):
        order = list(SIDES) if r % 2 == 0 else list(reversed(SIDES))
        for side in order:
            for name, entry in run(exes[side], min_time, filter).items():
                assert entry["time_unit"] == "ns", entry
                samples.setdefault(name, {s: [] for s in SIDES})[side].append(entry["real_time"])
                if side == "drop_in":
                    allocs[name] = entry["allocs_per_op"]
    return {"format": FORMAT, "rounds": rounds, "min_time_s": min_time,
            "date": datetime.date.today().isoformat(),
            "load_average": os.getloadavg()[0],
            "benchmarks": [{"name": name, "allocs_per_op": allocs[name], "ns": sides}
                           for name, sides in samples.items()]}


def table(doc: dict[str, Any]) -> str:
    lines = ["| benchmark | allocs/op | plain ns/op | with allocbench::gbench | "
             "paired ratio |", "|---|---:|---:|---:|---:|"]
    for b in doc["benchmarks"]:
        plain, drop_in = b["ns"]["plain"], b["ns"]["drop_in"]
        ratio = statistics.median(d / p for p, d in zip(plain, drop_in))
        lines.append(f"| `{b['name']}` | {b['allocs_per_op']:g} | "
                     f"{statistics.median(plain):.3g} | {statistics.median(drop_in):.3g} | "
                     f"{ratio:.3f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--min-time", type=float, default=0.1)
    parser.add_argument("--filter", default=DEFAULT_FILTER)
    parser.add_argument("--build", type=Path,
                        default=Path(os.environ.get("ALLOCBENCH_BUILD_DIR",
                                                    ROOT / "build" / "release")))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--from", dest="source", type=Path)
    args = parser.parse_args()
    if args.source:
        doc = json.loads(args.source.read_text())
    else:
        doc = measure(args.build, args.rounds, args.min_time, args.filter)
        if args.out:
            args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(table(doc), end="")
    print(f"{doc['rounds']} rounds, min time {doc['min_time_s']} s, {doc['date']}, load "
          f"average {doc['load_average']:.1f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
