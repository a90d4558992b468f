#!/usr/bin/python3
"""What fault isolation costs: allocbench-run on the built-in plugin with one child process per
instance (the default) and with --no-isolation, interleaved run by run so that machine drift
hits both alike; prints the median wall time of each and their ratio.

usage: bench/isolation_cost.py [--rounds N] [--time] [--filter REGEX] [BUILD_DIR]
       (default: 5 rounds, count pass only, every instance, build/release)

The count pass alone shows the fixed cost best (a fork, a pipe and a fresh heap per instance);
--time adds the time pass (5 repetitions of at least 0.05 s per instance), where the cost
disappears in the measuring itself. --filter measures only the instances whose name matches
(allocbench-run --filter), e.g. for a quick smoke run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wall(command: list[str]) -> float:
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--time", action="store_true", help="with the time pass")
    parser.add_argument("--filter", metavar="REGEX", help="only instances whose name matches")
    parser.add_argument("build", nargs="?", type=Path, default=ROOT / "build" / "release")
    args = parser.parse_args()
    runner = args.build / "bin" / "allocbench-run"
    with tempfile.TemporaryDirectory() as scratch:
        selection = ["--filter", args.filter] if args.filter is not None else []
        base = [str(runner), "--quiet", "--out", str(Path(scratch) / "r.json"), *selection]
        if not args.time:
            base.append("--no-time")
        modes = {"isolated (default)": base, "--no-isolation": [*base, "--no-isolation"]}
        seconds: dict[str, list[float]] = {mode: [] for mode in modes}
        for _ in range(args.rounds):
            for mode, command in modes.items():
                seconds[mode].append(wall(command))
    instances = subprocess.run([str(runner), "--list", *selection], capture_output=True,
                               text=True).stdout.count("\n")
    plain = statistics.median(seconds["--no-isolation"])
    passes = "count and time passes" if args.time else "count pass only"
    print(f"built-in plugin, {instances} instances, {passes}, {args.rounds} rounds interleaved:")
    print("| mode | median wall time | range | vs --no-isolation |")
    print("|---|---:|---:|---:|")
    for mode, values in seconds.items():
        median = statistics.median(values)
        # Milliseconds shown: a filtered count-only run takes a few of them, not 0.00 s.
        print(f"| {mode} | {median:.3f} s | {min(values):.3f}–{max(values):.3f} s | "
              f"{median / plain:.3f}× |")
    overhead = statistics.median(seconds["isolated (default)"]) - plain
    print(f"per instance: {1000 * overhead / instances:+.1f} ms")


if __name__ == "__main__":
    main()
