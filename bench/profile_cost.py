#!/usr/bin/python3
"""Cost of `allocbench profile` per instance, against the instance's count pass.

usage: bench/profile_cost.py [--build-dir DIR] [--filter REGEX] [--out FILE]
       bench/profile_cost.py --from FILE   (the table of an earlier --out; measures nothing)

For every built-in instance (or those --filter matches), one process each, on this machine:
  count pass   allocbench-run --no-time --no-isolation (1000 + 2 × 1000 ops, or the
               scenario's own CountOps)
  profile      allocbench profile's two heaptrack runs of allocbench-run-profile (N = 2) and
               the per-op site table (profile.profile: what `profile` and `ab` do per side)
It prints the median and the largest of each, the instance that costs most, and whether every
site table summed to its count pass; --out writes the numbers per instance as JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from allocbench.sites import profile  # noqa: E402


def count_seconds(runner: Path, plugin: Path, name: str) -> float:
    started = time.monotonic()
    subprocess.run([str(runner), "--plugin", str(plugin), "--filter", f"^{re.escape(name)}$",
                    "--no-time", "--no-isolation", "--quiet"], check=True,
                   capture_output=True)
    return time.monotonic() - started


def table(doc: dict) -> str:
    rows = doc["instances"]
    count = [r["count_s"] for r in rows]
    prof = [r["profile_s"] for r in rows]
    worst = max(rows, key=lambda r: r["profile_s"])
    exact = sum(r["exact"] for r in rows)
    return "\n".join([
        f"| {len(rows)} instances, one process each | median | largest |",
        "|---|---:|---:|",
        f"| count pass (its usual windows) | {statistics.median(count):.2f} s | "
        f"{max(count):.2f} s |",
        f"| profile (2 heaptrack runs, N = {doc['ops']}) | {statistics.median(prof):.2f} s | "
        f"{max(prof):.2f} s |",
        "",
        f"The largest: `{worst['name']}` ({worst['allocs_per_op']:,} allocs/op). Site tables "
        f"equal to their count pass: {exact} of {len(rows)}."])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build" / "release")
    parser.add_argument("--filter", default="", metavar="REGEX")
    parser.add_argument("--out", type=Path, metavar="FILE")
    parser.add_argument("--from", dest="source", type=Path, metavar="FILE")
    args = parser.parse_args()
    if args.source is not None:
        print(table(json.loads(args.source.read_text())))
        return
    runner = args.build_dir / "bin" / "allocbench-run"
    profiler = args.build_dir / "bin" / "allocbench-run-profile"
    plugin = args.build_dir / "lib" / "allocbench" / "allocbench_builtin.so"
    names = [n for n in profile.instances(runner, [plugin]) if re.search(args.filter, n)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="profile-cost-") as folder:
        for name in names:
            count = count_seconds(runner, plugin, name)
            started = time.monotonic()
            found = profile.profile(profiler, [plugin], name, Path(folder), 2)
            rows.append({"name": name, "count_s": count,
                         "profile_s": time.monotonic() - started, "exact": found.exact(),
                         "allocs_per_op": found.count["allocs_per_op"]})
            print(f"{rows[-1]['profile_s']:6.2f} s  {rows[-1]['count_s']:5.2f} s  {name}",
                  file=sys.stderr, flush=True)
    doc = {"ops": 2, "instances": rows}
    print(table(doc))
    if args.out is not None:
        args.out.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
