#!/usr/bin/python3
"""The "What the time gate can see here" table of docs/gating.md, from an `allocbench calibrate`
run.

usage: bench/calibration_table.py [--rounds N] [--forks N] [--repetitions N] [--min-time S]
                                  [--filter REGEX] [--runner PATH] [--out FILE]
       bench/calibration_table.py --from FILE

Runs `./allocbench calibrate` (A/A rounds of the built-in plugin against itself, see
scripts/allocbench/commands/calibrate.py) with the runner of ALLOCBENCH_BUILD_DIR (default
build/release; never built here), or reads the calibration.json of an earlier run (--from),
and prints the table as markdown on stdout, summed over every calibrated instance:

  false positives of the time gate              rounds the gate called worse or better
  rounds marked *unstable*                      rounds the gate would not judge
  minimum detectable effect (interval alone)    range and median over the instances

calibrate's own output and a caption (rounds × forks × repetitions, instances) go to stderr.
The calibration is written to a temporary folder unless --out FILE keeps it (not to
.allocbench/calibration.json, where `compare` would start using it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, metavar="FILE",
                        help="read this calibration.json instead of running calibrate")
    parser.add_argument("--rounds", type=int, default=20, help="A/A rounds [20]")
    parser.add_argument("--forks", type=int, default=3, help="forks per side [3]")
    parser.add_argument("--repetitions", type=int, default=5,
                        help="time-pass samples per fork [5]")
    parser.add_argument("--min-time", metavar="SECONDS",
                        help="minimum time per sample [allocbench-run's: 0.05]")
    parser.add_argument("--filter", metavar="REGEX", help="only instances whose name matches")
    parser.add_argument("--runner", type=Path, metavar="PATH",
                        help="allocbench-run [$ALLOCBENCH_BUILD_DIR/bin/allocbench-run, "
                             "default build/release]")
    parser.add_argument("--out", type=Path, metavar="FILE",
                        help="keep the calibration here [a temporary folder]")
    return parser.parse_args()


def run_calibrate(args: argparse.Namespace, out: Path) -> None:
    build = Path(os.environ.get("ALLOCBENCH_BUILD_DIR", ROOT / "build" / "release"))
    runner = args.runner or build / "bin" / "allocbench-run"
    if not runner.is_file():
        sys.exit(f"calibration_table.py: no {runner}; build it (./allocbench run) or pass "
                 "--runner")
    command = [str(ROOT / "allocbench"), "calibrate", "--runner", str(runner),
               "--rounds", str(args.rounds), "--forks", str(args.forks),
               "--repetitions", str(args.repetitions), "--out", str(out)]
    if args.min_time is not None:
        command += ["--min-time", args.min_time]
    if args.filter is not None:
        command += ["--filter", args.filter]
    # calibrate's table and progress go to stderr: stdout is this script's table alone.
    done = subprocess.run(command, stdout=sys.stderr)
    if done.returncode != 0:
        sys.exit(f"calibration_table.py: allocbench calibrate failed (exit code "
                 f"{done.returncode})")


def rows(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The table's rows from a calibration document (commands/calibrate.py's fields): the wall
    clock's (ns_per_op), the time gate the table describes; bench/time_noise.py compares it
    with the CPU clock's."""
    found = doc.get("scenarios") if isinstance(doc, dict) else None
    found = [c for c in found or [] if c.get("metric", "ns_per_op") == "ns_per_op"]
    if not found:
        sys.exit("calibration_table.py: the calibration has no scenarios")
    rounds = sum(c["rounds"] for c in found)
    fp = sum(c["false_positives"] for c in found)
    unstable = sum(c["unstable_rounds"] for c in found)
    mde = [c["interval_mde_percent"] for c in found]
    return [
        ("false positives of the time gate",
         f"{fp} of {rounds} instance-rounds ({fp / rounds:.1%})"),
        ("rounds marked *unstable*", f"{unstable} of {rounds} ({unstable / rounds:.0%})"),
        ("minimum detectable effect (interval alone)",
         f"{min(mde):.1f}% – {max(mde):.1f}%, median {statistics.median(mde):.1f}%"),
    ]


def caption(doc: dict[str, Any]) -> str:
    names = sorted({c["name"] for c in doc["scenarios"]})
    return (f"{doc.get('rounds')} rounds × {doc.get('forks')} forks × "
            f"{doc.get('repetitions')} repetitions, {len(names)} instances: {', '.join(names)}")


def main() -> None:
    args = parse_arguments()
    with tempfile.TemporaryDirectory(prefix="calibration-table-") as temp:
        path = args.source
        if path is None:
            path = args.out or Path(temp) / "calibration.json"
            run_calibrate(args, path)
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            sys.exit(f"calibration_table.py: {path}: {e}")
    table = rows(doc)
    print(caption(doc), file=sys.stderr)
    print("| | measured |\n|---|---|")
    for name, value in table:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
