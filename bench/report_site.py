#!/usr/bin/python3
"""Cost of `allocbench report --store`: a published sweep of --revisions revisions of the
built-in plugin, built cold and rebuilt after one more revision.

usage: bench/report_site.py [--revisions N] [--repeat K] [--seed S] [--out FILE] [--keep DIR]
       (default: 50 revisions, 3 repetitions of each timing)
       bench/report_site.py --from FILE   (the table of an earlier --out; measures nothing)

The store is written here, not measured: every revision holds the 46 instances of
bench/data/builtin-results.json (a real run of the built-in plugin: its names, values, byte
counters, context and 5 time samples each) for two allocators, "system" and "jemalloc", with the
history a project's sweep has: the allocation metrics identical from revision to revision except
for a few instances that change B/op (and allocs/op) at a few revisions, a failed build or two
(build_failed, with a compiler's error in the log's tail), a tag v1.<k> on every fifth revision
and commits in between, `committed` dates increasing, and time samples that differ by a few
percent from revision to revision (noise, as real sweeps have; jemalloc's ~8 % faster, with
larger usable sizes and footprints). Records are written by allocbench's own Store.put, in the
format a sweep writes; the report must read them all (exit code 0).

Each timing is a fresh `<repo>/allocbench report` process (Python start and imports included,
as a CI job pays them), measured --repeat times:
  cold build          --store S --out O, O new (a fresh folder every time)
  one more revision   a commit after the newest, for both allocators, added to a copy of the
                      store, then --out of a cold build of the smaller store: the rebuild that
                      a CI job does after every push (unchanged pictures are reused)
It prints the median and range of the wall time, the median CPU time (user + system, which
other load on the machine hardly changes), the pages and the pictures drawn and reused
that each build reports, the site's total size (every file, in bytes) and the issue's goals
(cold ≤ 60 s, one more revision ≤ 5 s, size ≤ 20 MB) as markdown; --out also writes them as
JSON. --keep DIR keeps the stores and the sites there (to look at, or to profile a rebuild:
python3 -m cProfile -o prof -m allocbench report --store DIR/store-plus-one --out DIR/cold-1,
with PYTHONPATH=<repo>/scripts:<repo>).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import math
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from allocbench.history.store import Store  # noqa: E402

DATA = ROOT / "bench" / "data" / "builtin-results.json"
MACHINE = "ci-runner"
ALLOCATORS = ("system", "jemalloc")
GOALS = {"cold": 60.0, "one_more": 5.0, "size_mb": 20.0}
BUILT = re.compile(r"allocbench: report of (\d+) pages in .*; (\d+) pictures drawn, "
                   r"(\d+) reused")
SUBJECTS = ("Reuse the span builder's tag buffer", "Intern tag keys once per context",
            "Move the exporter to its own thread", "Shard the string dictionary",
            "Fix a use-after-free in propagation", "Precompute protocol names",
            "Update the vendored fmt", "Docs: sampling rules", "CI: run the sweep weekly",
            "Reserve the fan-out's child list", "Refactor the span context", "Clean up headers")
# (instances whose name starts with…, at this fraction of the history, B/op change, allocs/op
# change): from that revision on. B/op as a function of the instance's args (a family's slope).
CHANGES = (
    ("span_creation/bare_start_span", 0.25, lambda a: 32, 1),
    ("span_creation/bare_build_span/builder_reuse:0", 0.25, lambda a: 32, 1),
    ("span_creation/bare_start_span", 0.6, lambda a: -32, -1),      # and back
    ("trace_fanout/web_trace/", 0.5, lambda a: 24 * a.get("children", 0), 0),
    ("tag_interning/init/", 0.75, lambda a: -8 * a.get("contexts", 0), 0),
)
FAILED_AT = (0.42, 0.82)   # build_failed commits (never the first revision nor the newest)
BUILD_ERROR = ("cmake --build failed (exit code 2)\n"
               "[ 41%] Building CXX object src/CMakeFiles/trace.dir/span.cc.o\n"
               "/__w/project/src/span.cc:212:5: error: 'SpanBuffer' was not declared in this "
               "scope\n  212 |     SpanBuffer buffer(tags);\n      |     ^~~~~~~~~~\n"
               "gmake[2]: *** [src/CMakeFiles/trace.dir/build.make:76: span.cc.o] Error 1")


# ---- the store


class History:
    """The revisions of the generated store: their sha, label, subject, date and status."""

    def __init__(self, revisions: int, seed: int):
        self.rng = random.Random(seed)
        self.base = json.loads(DATA.read_text())
        self.count = revisions
        failed = {max(1, int(revisions * f)) for f in FAILED_AT} - {0, revisions - 1}
        self.failed = sorted(failed) if revisions >= 3 else []
        start = datetime(2025, 1, 6, 9, 30, tzinfo=timezone(timedelta(hours=1)))
        self.revisions = []
        when = start
        for i in range(revisions + 1):   # the last is the "one more revision"
            when += timedelta(days=self.rng.uniform(0.3, 4.0))
            sha = hashlib.sha1(f"report-site revision {i}".encode()).hexdigest()
            tag = f"v1.{i // 5}" if i % 5 == 0 and i < revisions else ""
            self.revisions.append({"index": i, "sha": sha, "label": tag or sha[:10],
                                   "subject": SUBJECTS[i % len(SUBJECTS)],
                                   "committed": when.isoformat(timespec="seconds")})
        self.measured = datetime(2026, 12, 1, 1, 0, tzinfo=timezone.utc)

    def tags(self) -> int:
        return sum(1 for r in self.revisions[:self.count] if not r["label"].startswith(
            r["sha"][:10]))

    def record(self, index: int, allocator: str) -> dict[str, Any]:
        rev = self.revisions[index]
        self.measured += timedelta(seconds=self.rng.uniform(40, 90))
        recipe_detail = {"build": {"kind": "cmake", "target": "allocbench_builtin",
                                   "plugin": "lib/allocbench/allocbench_builtin.so",
                                   "cmake_args": ["-DCMAKE_BUILD_TYPE=Release"]},
                         "grafts": []}
        recipe = hashlib.sha256(json.dumps(recipe_detail, sort_keys=True).encode()
                                ).hexdigest()[:16]
        runner = f"/__w/project/allocbench-tool/build/{allocator}/bin/allocbench-run"
        record: dict[str, Any] = {
            "store_version": 1, "sha": rev["sha"], "label": rev["label"],
            "subject": rev["subject"], "committed": rev["committed"], "machine": MACHINE,
            "allocator": allocator, "recipe": recipe, "recipe_detail": recipe_detail,
            "harness": runner, "status": "ok", "time_measured": True,
            "seconds": {"build": round(self.rng.uniform(30, 60), 3)}, "results": None,
            "recorded": self.measured.isoformat(timespec="seconds")}
        if index in self.failed:
            record.update(status="build_failed", step="build", log_tail=BUILD_ERROR,
                          log=f"/__w/project/.allocbench/logs/{rev['sha']}-build.log")
            return record
        record["seconds"]["run"] = round(self.rng.uniform(60, 120), 3)
        record["results"] = self.document(index, allocator, runner)
        return record

    def document(self, index: int, allocator: str, runner: str) -> dict[str, Any]:
        rev = self.revisions[index]
        doc = copy.deepcopy(self.base)
        context = doc["context"]
        context["date"] = self.measured.strftime("%Y-%m-%dT%H:%M:%SZ")
        context["revision"] = {"describe": rev["label"], "dirty": False, "sha": rev["sha"]}
        context["allocator"] = {"name": "glibc", "version": "2.36"} if allocator == "system" \
            else {"name": allocator, "version": "5.3.0"}
        context["host"]["name"] = MACHINE
        context["command"] = [runner, "--quiet", "--out", f"/__w/project/.allocbench/runs/"
                              f"{MACHINE}-{allocator}-{rev['sha']}.json"]
        for result in doc["results"]:
            self.result(result, index, allocator)
        return doc

    def result(self, result: dict[str, Any], index: int, allocator: str) -> None:
        result["allocator"] = "glibc" if allocator == "system" else allocator
        alloc = result["alloc"]
        if alloc is not None:
            delta_bytes = delta_allocs = 0
            for prefix, at, grow, allocs in CHANGES:
                if result["name"].startswith(prefix) and index >= max(1, int(self.count * at)):
                    delta_bytes += grow(result.get("args") or {})
                    delta_allocs += allocs
            if delta_bytes or delta_allocs:
                ops = alloc["window_ops"]
                alloc["bytes_per_op"] = max(0, alloc["bytes_per_op"] + delta_bytes)
                alloc["allocs_per_op"] = max(0, alloc["allocs_per_op"] + delta_allocs)
                alloc["frees_per_op"] = alloc["allocs_per_op"]
                alloc["usable_bytes_per_op"] = max(0, alloc["usable_bytes_per_op"] + delta_bytes)
                for window in alloc["windows"]:
                    window.update(allocs=alloc["allocs_per_op"] * ops,
                                  frees=alloc["allocs_per_op"] * ops,
                                  requested_bytes=alloc["bytes_per_op"] * ops,
                                  usable_bytes=alloc["usable_bytes_per_op"] * ops)
            if allocator != "system":   # another allocator: other size classes, other footprint
                alloc["usable_bytes_per_op"] = int(alloc["usable_bytes_per_op"] * 1.06)
                alloc["peak_live_bytes"] = int(alloc["peak_live_bytes"] * 1.12)
                for window in alloc["windows"]:
                    window["usable_bytes"] = int(window["usable_bytes"] * 1.06)
                for counter in (result.get("counters") or {}).values():
                    if counter["unit"] == "B":
                        counter["value"] = float(int(counter["value"] * 1.2))
        if result.get("time"):
            self.noise(result["time"], 0.92 if allocator != "system" else 1.0)

    def noise(self, section: dict[str, Any], speed: float) -> None:
        """The samples of another run: the whole run a little off (±1 %), each sample ±2 %."""
        shift = speed * math.exp(self.rng.gauss(0, 0.01))
        samples = [s * shift * math.exp(self.rng.gauss(0, 0.02))
                   for s in section["samples_ns_per_op"]]
        median = statistics.median(samples)
        mean = statistics.fmean(samples)
        sd = statistics.stdev(samples) if len(samples) > 1 else 0.0
        section.update(samples_ns_per_op=samples, ns_per_op=median, mean_ns_per_op=mean,
                       min_ns_per_op=min(samples), max_ns_per_op=max(samples),
                       stddev_ns_per_op=sd, cv=sd / mean if mean else 0.0,
                       ops_per_s=1e9 / median if median else 0.0)


def write_store(root: Path, history: History, indices: range) -> int:
    store = Store(root)
    for index in indices:
        for allocator in ALLOCATORS:
            store.put(history.record(index, allocator))
    return len(indices) * len(ALLOCATORS)


# ---- measuring


def size(folder: Path) -> tuple[int, int]:
    """(bytes, files) of every file under `folder`."""
    total = files = 0
    for base, _, names in os.walk(folder):
        for name in names:
            total += os.lstat(os.path.join(base, name)).st_size
            files += 1
    return total, files


def report(store: Path, out: Path) -> dict[str, Any]:
    command = [str(ROOT / "allocbench"), "report", "--store", str(store), "--out", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    built = BUILT.search(done.stderr)
    if done.returncode != 0 or built is None:
        sys.exit(f"{' '.join(command)}\nexit code {done.returncode}\n{done.stderr[-4000:]}")
    pages, drawn, reused = map(int, built.groups())
    return {"seconds": seconds, "cpu_seconds": cpu, "pages": pages, "drawn": drawn,
            "reused": reused}


def summary(runs: list[dict[str, Any]], sizes: list[tuple[int, int]]) -> dict[str, Any]:
    seconds = [r["seconds"] for r in runs]
    out = {"seconds": seconds, "median_s": statistics.median(seconds), "min_s": min(seconds),
           "max_s": max(seconds), "cpu_seconds": [r["cpu_seconds"] for r in runs],
           "median_cpu_s": statistics.median(r["cpu_seconds"] for r in runs),
           "size_bytes": max(s for s, _ in sizes),
           "files": max(f for _, f in sizes)}
    for key in ("pages", "drawn", "reused"):   # the same every time, else a range
        values = sorted({r[key] for r in runs})
        out[key] = values[0] if len(values) == 1 else values
    return out


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    found = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    return found[1].strip() if found else "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--revisions", type=int, default=50,
                        help="revisions in the store before the one more [50]")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each timing [3]")
    parser.add_argument("--seed", type=int, default=1, help="of the generated noise [1]")
    parser.add_argument("--out", type=Path, metavar="FILE", help="also write the numbers as JSON")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep the stores and sites in DIR (new or empty)")
    parser.add_argument("--from", dest="source", type=Path, metavar="FILE",
                        help="print the table of numbers an earlier --out wrote (nothing is "
                             "measured): how the table of docs/reports.md is checked")
    args = parser.parse_args()
    if args.source is not None:
        print(table(json.loads(args.source.read_text())))
        return
    if args.revisions < 1 or args.repeat < 1:
        parser.error("--revisions and --repeat take a number of at least 1")
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep}: give a new or empty folder")

    with tempfile.TemporaryDirectory(prefix="report-site-") as temp:
        work = args.keep.resolve() if args.keep is not None else Path(temp)
        work.mkdir(parents=True, exist_ok=True)
        history = History(args.revisions, args.seed)
        store, plus_one = work / "store", work / "store-plus-one"
        records = write_store(store, history, range(args.revisions))
        store_bytes, _ = size(store)
        shutil.copytree(store, plus_one)
        write_store(plus_one, history, range(args.revisions, args.revisions + 1))

        load_before = uptime()
        cold, cold_sizes, rebuilt, rebuilt_sizes = [], [], [], []
        for k in range(1, args.repeat + 1):
            site = work / f"cold-{k}"
            cold.append(report(store, site))
            cold_sizes.append(size(site))
        for k in range(1, args.repeat + 1):
            site = work / f"cold-{k}"   # a cold build of the smaller store, rebuilt
            rebuilt.append(report(plus_one, site))
            rebuilt_sizes.append(size(site))
        load_after = uptime()

    instances = len(history.base["results"])
    doc = {
        "revisions": args.revisions, "instances": instances, "allocators": list(ALLOCATORS),
        "tags": history.tags(), "failed": len(history.failed), "records": records,
        "store_bytes": store_bytes, "repeat": args.repeat, "seed": args.seed,
        "cpus": os.cpu_count(), "cpu": cpu_model(),
        "cold": summary(cold, cold_sizes), "one_more": summary(rebuilt, rebuilt_sizes),
        "goals": {"cold_s": GOALS["cold"], "one_more_s": GOALS["one_more"],
                  "size_bytes": int(GOALS["size_mb"] * 1e6)}}
    head = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %s"],
                          capture_output=True, text=True).stdout.strip()
    print(f"allocbench {ROOT} ({head[:72]})")
    print(f"store: {args.revisions} revisions ({doc['tags']} tags, {doc['failed']} failed "
          f"builds) × {instances} instances × {len(ALLOCATORS)} allocators = {records} records, "
          f"{store_bytes / 1e6:.1f} MB; then one more revision ({len(ALLOCATORS)} records)")
    print(f"machine: {doc['cpus']} CPUs ({doc['cpu']})\nload before: {load_before}\n"
          f"load after:  {load_after}\n")
    print(table(doc))
    if args.out is not None:
        args.out.write_text(json.dumps(doc, indent=1) + "\n")


def table(doc: dict[str, Any]) -> str:
    def verdict(value: float, goal: float, unit: str) -> str:
        return f"≤ {goal:g} {unit}: {'met' if value <= goal else 'MISSED'}"

    def count(value: Any) -> str:
        return str(value) if isinstance(value, int) else "–".join(map(str, value))

    lines = [f"| site of {doc['revisions']} revisions, median of {doc['repeat']} | median | "
             "range | CPU | pages | pictures drawn | reused | goal |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for key, name, goal in (("cold", "cold build (new --out)", GOALS["cold"]),
                            ("one_more", "one more revision (rebuild)", GOALS["one_more"])):
        s = doc[key]
        lines.append(f"| {name} | {s['median_s']:.2f} s | {s['min_s']:.2f}–{s['max_s']:.2f} s | "
                     f"{s['median_cpu_s']:.2f} s | {count(s['pages'])} | {count(s['drawn'])} | "
                     f"{count(s['reused'])} | {verdict(s['median_s'], goal, 's')} |")
    for key, name in (("cold", "size after the cold build"),
                      ("one_more", "size after one more revision")):
        s = doc[key]
        lines.append(f"| {name} | {s['size_bytes'] / 1e6:.2f} MB | {s['files']} files | | "
                     f"{count(s['pages'])} | | | "
                     f"{verdict(s['size_bytes'] / 1e6, GOALS['size_mb'], 'MB')} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
