"""The stores bench/report_site.py measures, generated: a published sweep of the built-in plugin
of N revisions (bench/data/builtin-results.json's 46 instances for two allocators each), with
a few B/op steps, failed builds and tags, committed on a git branch as
ci/github/publish.yml keeps a store, and the git repository of its revisions. See
report_site.py's docstring for what each holds.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from allocbench.history import buildspec, sweep as sweeping  # noqa: E402
from allocbench.history.store import STORE_VERSION, Store  # noqa: E402

DATA = ROOT / "bench" / "data" / "builtin-results.json"
MACHINE = "ci-runner"
ALLOCATORS = ("system", "jemalloc")
INDEX = ".allocbench-index*"   # the store's index (store_index.py), with its -wal and -shm
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


def runner(allocator: str) -> str:
    return f"/__w/project/allocbench-tool/build/{allocator}/bin/allocbench-run"


def sweep_plan(store: Path, allocator: str) -> sweeping.Plan:
    """The plan of a default `allocbench sweep --allocator A --store S --machine ci-runner` of
    the built-in plugin: its recipe is the generated records' own, so that its lookups find them."""
    spec = buildspec.CMakeBuild(buildspec.DEFAULT_TARGET, buildspec.DEFAULT_PLUGIN)
    return sweeping.Plan(ROOT, spec, (), Path(runner(allocator)), allocator, MACHINE,
                         Store(store))


class History:
    """The revisions of the generated store: their sha, label, subject, date and status, and
    the git repository that holds them as commits."""

    def __init__(self, revisions: int, seed: int, repo: Path):
        self.rng = random.Random(seed)
        self.base_text = DATA.read_text()   # parsed again per record: 3× faster than deepcopy
        self.base = json.loads(self.base_text)
        self.count = revisions
        failed = {max(1, int(revisions * f)) for f in FAILED_AT} - {0, revisions - 1}
        self.failed = sorted(failed) if revisions >= 3 else []
        start = datetime(2025, 1, 6, 9, 30, tzinfo=timezone(timedelta(hours=1)))
        self.revisions = []
        when = start
        for i in range(revisions + 1):   # the last is the "one more revision"
            when += timedelta(days=self.rng.uniform(0.3, 4.0))
            tag = f"v1.{i // 5}" if i % 5 == 0 and i < revisions else ""
            self.revisions.append({"index": i, "tag": tag, "subject": SUBJECTS[i % len(SUBJECTS)],
                                   "committed": when.isoformat(timespec="seconds")})
        for rev, sha in zip(self.revisions, make_repo(repo, self.revisions)):
            rev.update(sha=sha, label=rev["tag"] or sha[:10])
        self.measured = datetime(2026, 12, 1, 1, 0, tzinfo=timezone.utc)
        plan = sweep_plan(repo, ALLOCATORS[0])
        self.recipe, self.recipe_id = plan.recipe, plan.recipe_id

    def tags(self) -> int:
        return sum(1 for r in self.revisions[:self.count] if r["tag"])

    def record(self, index: int, allocator: str) -> dict[str, Any]:
        rev = self.revisions[index]
        self.measured += timedelta(seconds=self.rng.uniform(40, 90))
        record: dict[str, Any] = {
            "store_version": STORE_VERSION, "sha": rev["sha"], "label": rev["label"],
            "subject": rev["subject"], "committed": rev["committed"], "machine": MACHINE,
            "allocator": allocator, "recipe": self.recipe_id, "recipe_detail": self.recipe,
            "harness": runner(allocator), "status": "ok", "time_measured": True,
            "seconds": {"build": round(self.rng.uniform(30, 60), 3)}, "results": None,
            "recorded": self.measured.isoformat(timespec="seconds")}
        if index in self.failed:
            record.update(status="build_failed", step="build", log_tail=BUILD_ERROR,
                          log=f"/__w/project/.allocbench/logs/{rev['sha']}-build.log")
            return record
        record["seconds"]["run"] = round(self.rng.uniform(60, 120), 3)
        record["results"] = self.document(index, allocator, runner(allocator))
        return record

    def document(self, index: int, allocator: str, harness: str) -> dict[str, Any]:
        rev = self.revisions[index]
        doc = json.loads(self.base_text)
        context = doc["context"]
        context["date"] = self.measured.strftime("%Y-%m-%dT%H:%M:%SZ")
        context["revision"] = {"describe": rev["label"], "dirty": False, "sha": rev["sha"]}
        context["allocator"] = {"name": "glibc", "version": "2.36"} if allocator == "system" \
            else {"name": allocator, "version": "5.3.0"}
        context["host"]["name"] = MACHINE
        context["command"] = [harness, "--quiet", "--out", f"/__w/project/.allocbench/runs/"
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


def make_repo(folder: Path, revisions: list[dict[str, Any]]) -> list[str]:
    """A git repository of `revisions`, one commit each on main (its subject and date) and
    the tags; their shas, in order. One `git fast-import`: thousands of commits in a second."""
    subprocess.run(["git", "init", "--quiet", "--initial-branch=main", str(folder)], check=True)
    stream = bytearray()
    for mark, rev in enumerate(revisions, 1):
        when = datetime.fromisoformat(rev["committed"])
        minutes = int(when.utcoffset().total_seconds()) // 60
        zone = f"{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"
        message, content = f"{rev['subject']}\n".encode(), f"revision {mark}\n".encode()
        stream += (f"commit refs/heads/main\nmark :{mark}\ncommitter Report Site "
                   f"<report-site@example.com> {int(when.timestamp())} {zone}\n"
                   f"data {len(message)}\n").encode() + message
        stream += f"M 100644 inline README\ndata {len(content)}\n".encode() + content + b"\n"
    for mark, rev in enumerate(revisions, 1):
        if rev["tag"]:
            stream += f"reset refs/tags/{rev['tag']}\nfrom :{mark}\n\n".encode()
    marks = folder / ".git" / "report-site-marks"
    subprocess.run(["git", "-C", str(folder), "fast-import", "--quiet",
                    f"--export-marks={marks}"], input=bytes(stream), check=True)
    shas = dict(line.split() for line in marks.read_text().splitlines())
    return [shas[f":{mark}"] for mark in range(1, len(revisions) + 1)]


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=Report Site", "-c",
                    "user.email=report-site@example.com", *args], check=True,
                   capture_output=True)


def commit(folder: Path, init: bool = False) -> None:
    """publish.yml's "Keep the store": every record under `folder` added to git's index and
    committed when anything is new (the store's .gitignore keeps its index out)."""
    if init:
        git(folder, "init", "--quiet", "--initial-branch=allocbench-store")
    git(folder, "add", "-A")
    if subprocess.run(["git", "-C", str(folder), "diff", "--cached", "--quiet"]).returncode:
        git(folder, "commit", "--quiet", "-m", "store")


def check_out(branch: Path, to: Path) -> None:
    """A fresh clone of the store's branch at `to`, with the index of the branch's store
    beside its records (what publish.yml restores from the actions cache). A CI job's sweep
    takes minutes between its checkout and its "Keep the store" (git add -A): git's index
    then holds each file's stat as clean. Files written within a second of that index, as a
    clone here is, would be "racily clean" to git, compared by their contents on every git
    status; the bench waits that second, then adds (commit())."""
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(branch), str(to)],
                   check=True, capture_output=True)
    for index in (branch / "results").glob(INDEX):
        shutil.copyfile(index, to / "results" / index.name)
    time.sleep(1.1)


def write_store(root: Path, history: History, indices: range) -> int:
    """Writes each record as soon as it is made: a large store is never held in memory."""
    store = Store(root)
    for index in indices:
        for allocator in ALLOCATORS:
            store.put(history.record(index, allocator))
    return len(indices) * len(ALLOCATORS)
