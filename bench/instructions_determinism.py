#!/usr/bin/python3
"""The "Which instances repeat exactly" list of docs/instructions.md: instructions per op of every built-in
instance in several separate processes.

usage: bench/instructions_determinism.py [--processes N] [--filter REGEX] [--runner PATH]
                                         [--out FILE]
       bench/instructions_determinism.py --from FILE

Runs `allocbench-run --instructions --no-time` N times (default 3, one after the other) with the
runner of ALLOCBENCH_BUILD_DIR (default build/release; never built here), or reads the JSON an
earlier run kept (--from), and prints as markdown how many instances executed exactly the same
instructions per op in every process and, for the others, their values and spread — the text
`allocbench calibrate --instructions` prints (calibrate.repeatability_text). Wall seconds per
process go to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from allocbench.commands import calibrate  # noqa: E402


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, metavar="FILE",
                        help="print the list from this JSON instead of measuring")
    parser.add_argument("--processes", type=int, default=3, help="separate processes [3]")
    parser.add_argument("--filter", metavar="REGEX", help="only instances whose name matches")
    parser.add_argument("--runner", type=Path, metavar="PATH",
                        help="allocbench-run [$ALLOCBENCH_BUILD_DIR/bin/allocbench-run, "
                             "default build/release]")
    parser.add_argument("--out", type=Path, metavar="FILE", help="keep the values here")
    return parser.parse_args()


def measure(args: argparse.Namespace) -> dict:
    build = Path(os.environ.get("ALLOCBENCH_BUILD_DIR", ROOT / "build" / "release"))
    runner = args.runner or build / "bin" / "allocbench-run"
    if not runner.is_file():
        sys.exit(f"instructions_determinism.py: no {runner}; build it (./allocbench run) or "
                 "pass --runner")
    values: dict[str, list[float]] = {}
    seconds = []
    with tempfile.TemporaryDirectory(prefix="instructions-determinism-") as folder:
        for i in range(args.processes):
            out = Path(folder) / f"p{i}.json"
            command = [str(runner), "--instructions", "--no-time", "--quiet", "--out", str(out)]
            if args.filter:
                command += ["--filter", args.filter]
            start = time.monotonic()
            done = subprocess.run(command, capture_output=True, text=True)
            seconds.append(time.monotonic() - start)
            if done.returncode != 0:
                sys.exit(f"instructions_determinism.py: {runner} exited {done.returncode}: "
                         f"{done.stderr.strip().splitlines()[-1:]}")
            for r in json.loads(out.read_text())["results"]:
                values.setdefault(r["name"], []).append(r["instructions"]["instructions_per_op"])
    return {"processes": args.processes, "seconds": seconds,
            "date": time.strftime("%Y-%m-%d", time.gmtime()), "values": values}


def render(doc: dict) -> str:
    found = [calibrate.Repeatability(name, len(v), tuple(sorted(set(v))))
             for name, v in doc["values"].items()]
    return calibrate.repeatability_text(found, markdown=True)


def main() -> None:
    args = parse_arguments()
    doc = json.loads(args.source.read_text()) if args.source else measure(args)
    if args.out:
        args.out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    if not args.source:
        print(f"{doc['processes']} processes, seconds each: "
              f"{', '.join(f'{s:.1f}' for s in doc['seconds'])}", file=sys.stderr)
    print(render(doc), end="")


if __name__ == "__main__":
    main()
