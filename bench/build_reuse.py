#!/usr/bin/python3
"""Build cost of `allocbench sweep` and `bisect` on a realistic project, before/after changes.

usage: bench/build_reuse.py [--allocbench PATH] [--runner PATH] [--prefix PATH] [--runs N]
                            [--units N] [--extra-commits N] [--route project|bench]
                            [--offline] [--allocbench-arg=ARG ...] [--bisect-arg=ARG ...]

The subject is tests/python/realistic_subject.py's libtrace with plugin_in_project: a static
library of `--units` generated files (about a second of compiling each) plus a git submodule,
8 commits that each touch one or two paths, `--extra-commits` more that each edit one unit,
and the bench project last. A sweep that builds every revision from scratch pays the whole
library each time; one that reuses a build tree pays the one or two files that changed. This
script measures that, each time as a fresh `<allocbench>/allocbench` process with ccache off
(CCACHE_DISABLE=1) and a fresh copy of the subject (nothing checked out, built or stored):

  cold sweep    every commit, v1.0..main, count pass only (--no-time)
  cold bisect   --good v1.0 --bad main of one instance's bytes_per_op (--instance)

It prints the median and range over --runs of the wall time, of the build seconds the store
records (`seconds.build` of each record, <store>/**/*.json.gz or .json, read tolerantly:
another layout gives "n/a", not an error) and of the probes bisect built, then each bisect's probes, as markdown. It
also checks each stored value against the subject's knobs, so a faster build that measures the
wrong revision does not pass unnoticed.

--allocbench is the checkout whose ./allocbench runs (default: this one), so that code from
before a change can be measured: `git worktree add /tmp/ab-before <rev>`, then
  bench/build_reuse.py --allocbench /tmp/ab-before --runner build/release/bin/allocbench-run \\
      --prefix <cmake --install of that build>
--route project (today's way) passes --target/--plugin-path/--cmake-arg to build the plugin
in-project; --route bench passes --bench <repo>/bench instead. The submodule's URL is the local
upstream (git is allowed file clones through GIT_CONFIG_*) unless --offline, which records the
unreachable URL, for an allocbench that takes submodules from the checkout.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))
import realistic_subject as rs  # noqa: E402

MACHINE = "build-reuse"


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--allocbench", type=Path, default=ROOT,
                        help="the allocbench checkout to measure [this one]")
    parser.add_argument("--runner", type=Path,
                        help="allocbench-run [<allocbench>/build/release/bin/allocbench-run]")
    parser.add_argument("--prefix", type=Path,
                        help="allocbench installed (cmake --install), for --route project "
                             "[an install of the runner's build folder into a temp folder]")
    parser.add_argument("--runs", type=int, default=3, help="runs of each measurement [3]")
    parser.add_argument("--units", type=int, default=50, help="generated library files [50]")
    parser.add_argument("--extra-commits", type=int, default=3,
                        help="commits after v1.3 that each edit one unit [3]")
    parser.add_argument("--instance", default=rs.LOG_LINE, help=f"bisected [{rs.LOG_LINE}]")
    parser.add_argument("--route", choices=("project", "bench"), default="project",
                        help="how the plugin is built [project]")
    parser.add_argument("--offline", action="store_true",
                        help="record the unreachable submodule URL in .gitmodules")
    parser.add_argument("--allocbench-arg", action="append", default=[], metavar="ARG",
                        help="passed to both commands, e.g. --allocbench-arg=--submodules=auto")
    parser.add_argument("--bisect-arg", action="append", default=[], metavar="ARG",
                        help="passed to bisect only, e.g. --bisect-arg=--all")
    return parser.parse_args()


def store_records(store: Path) -> list[dict]:
    """Every record under the store that names a sha; unreadable files are skipped."""
    records = []
    for path in sorted([*store.rglob("*.json"), *store.rglob("*.json.gz")]):
        try:
            data = path.read_bytes()
            record = json.loads(gzip.decompress(data) if path.name.endswith(".gz") else data)
        except (OSError, ValueError, EOFError, gzip.BadGzipFile, zlib.error):
            continue
        if isinstance(record, dict) and isinstance(record.get("sha"), str):
            records.append(record)
    return records


def build_seconds(record: dict) -> float | None:
    seconds = record.get("seconds")
    value = seconds.get("build") if isinstance(seconds, dict) else None
    return float(value) if isinstance(value, (int, float)) else None


def wrong_values(records: list[dict], subject: rs.Subject) -> list[str]:
    """Stored values that differ from the knobs of their commit."""
    expected = {c.sha: c.expected() for c in subject.commits}
    wrong = []
    for record in records:
        results = (record.get("results") or {}).get("results") or []
        for instance in results:
            want = expected.get(record["sha"], {}).get(instance.get("name"))
            got = instance.get("alloc") or {}
            if want and any(got.get(key) != value for key, value in want.items()):
                wrong.append(f"{record['sha'][:10]} {instance['name']}: {got} != {want}")
    return wrong


def measure(args: argparse.Namespace, prefix: Path, verb: str) -> dict:
    """One cold run of `verb` (sweep or bisect) on a fresh subject."""
    with tempfile.TemporaryDirectory(prefix="build-reuse-") as temp:
        subject = rs.make_subject(Path(temp), units=args.units, plugin_in_project=True,
                                  extra_commits=args.extra_commits,
                                  reachable_submodule=not args.offline)
        store = Path(temp) / "store"
        command = [str(args.allocbench / "allocbench"), verb]
        if verb == "sweep":
            command += ["--range", "v1.0..main", "--no-time"]
        else:
            command += [args.instance, "--good", "v1.0", "--bad", "main",
                        "--metric", "bytes_per_op"]
        command += ["--repo", str(subject.repo), "--store", str(store), "--machine", MACHINE,
                    "--runner", str(args.runner), "--target", rs.TARGET,
                    "--plugin-path", rs.PLUGIN]
        if args.route == "project":
            command += [f"--cmake-arg=-DCMAKE_PREFIX_PATH={prefix}",
                        f"--cmake-arg=-D{rs.BACKEND_OPTION}=null"]
        else:
            command += ["--bench", str(subject.bench)]
        command += args.allocbench_arg + (args.bisect_arg if verb == "bisect" else [])
        env = dict(os.environ, CCACHE_DISABLE="1")
        if not args.offline:
            env.update(rs.ALLOW_FILE_ENV)
        started = time.monotonic()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.monotonic() - started
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)}\nexit code {done.returncode}\n{done.stdout}"
                     f"{done.stderr[-4000:]}")
        records = store_records(store)
        index = {c.sha: c.index for c in subject.commits}
        records.sort(key=lambda r: index.get(r["sha"], 0))
        labels = {c.sha: c.tag or f"#{c.index}" for c in subject.commits}
        probes = [(labels.get(r["sha"], r["sha"][:10]), build_seconds(r)) for r in records]
        found = None
        if verb == "bisect":
            first = subject.change_points(args.instance, "bytes_per_op")[0]
            found = first.sha in done.stdout
        return {"wall": wall, "probes": probes, "found": found, "commits": len(subject.commits),
                "wrong": wrong_values(records, subject)}


def summary(values: list[float | None]) -> tuple[str, str]:
    if not values or any(v is None for v in values):
        return "n/a", "n/a"

    def text(value: float) -> str:  # counts as they are, seconds to a tenth
        return str(value) if isinstance(value, int) else f"{value:.1f}"
    return text(statistics.median(values)), f"{text(min(values))}–{text(max(values))}"


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    args = parse_arguments()
    args.allocbench = args.allocbench.resolve()
    args.runner = (args.runner or args.allocbench / "build/release/bin/allocbench-run").resolve()
    if not args.runner.is_file():
        sys.exit(f"no {args.runner}: build it, or pass --runner")
    with tempfile.TemporaryDirectory(prefix="build-reuse-prefix-") as temp:
        prefix = args.prefix
        if prefix is None and args.route == "project":
            prefix = Path(temp)
            subprocess.run(["cmake", "--install", str(args.runner.parents[1]), "--prefix",
                            str(prefix)], check=True, capture_output=True)
        load_before = uptime()
        runs = []
        for _ in range(args.runs):
            runs.append((measure(args, prefix, "sweep"), measure(args, prefix, "bisect")))
        load_after = uptime()

    head = subprocess.run(["git", "-C", str(args.allocbench), "log", "-1", "--format=%h %s"],
                          capture_output=True, text=True).stdout.strip()
    commits = runs[0][0]["commits"]
    print(f"allocbench {args.allocbench} ({head}), runner {args.runner}")
    print(f"subject: {commits} commits, {args.units} units, route {args.route}, "
          f"{'offline' if args.offline else 'local'} submodule, ccache off; "
          f"{' '.join(args.allocbench_arg)} bisect {' '.join(args.bisect_arg)}".rstrip())
    print(f"load before: {load_before}\nload after:  {load_after}\n")

    def total(run: dict) -> float | None:
        seconds = [s for _, s in run["probes"]]
        return None if None in seconds or not seconds else sum(seconds)

    def per_build(run: dict) -> float | None:
        seconds = [s for _, s in run["probes"]]
        return None if None in seconds or not seconds else statistics.median(seconds)

    rows = [
        (f"cold sweep of {commits} commits: wall s", [s["wall"] for s, _ in runs]),
        ("cold sweep: build s, sum over revisions", [total(s) for s, _ in runs]),
        ("cold sweep: build s per revision (median)", [per_build(s) for s, _ in runs]),
        ("cold bisect: wall s", [b["wall"] for _, b in runs]),
        ("cold bisect: revisions built", [len(b["probes"]) for _, b in runs]),
        ("cold bisect: build s per probe (median)", [per_build(b) for _, b in runs]),
    ]
    print(f"| median of {args.runs} runs | median | range |\n|---|---:|---:|")
    for name, values in rows:
        print(f"| {name} | {' | '.join(summary(values))} |")
    print()
    for i, (sweep, bisect) in enumerate(runs, start=1):
        print(f"sweep run {i}: wall {sweep['wall']:.1f} s, build s per revision: "
              + ", ".join(f"{label} {'n/a' if s is None else f'{s:.1f}'}"
                          for label, s in sweep["probes"]))
    for i, (sweep, bisect) in enumerate(runs, start=1):
        probes = ", ".join(f"{label} {'n/a' if s is None else f'{s:.1f}'}"
                           for label, s in bisect["probes"])
        print(f"bisect run {i} (first change {'found' if bisect['found'] else 'NOT found'}): "
              f"build s per probe: {probes}")
    wrong = [w for sweep, bisect in runs for w in sweep["wrong"] + bisect["wrong"]]
    print(f"stored values that differ from the knobs: {len(wrong)}")
    for line in wrong[:10]:
        print(f"  {line}")


if __name__ == "__main__":
    main()
