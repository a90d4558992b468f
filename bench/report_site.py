#!/usr/bin/python3
"""Cost of `allocbench report --store`, `sweep-table` and a sweep's store lookups, side by side
for stores of several sizes: published sweeps of the built-in plugin of --revisions revisions.

usage: bench/report_site.py [--revisions N,N…] [--large] [--repeat K] [--seed S] [--out FILE]
                            [--keep DIR]
       (default: 50,200 revisions, 3 repetitions of each timing; --large adds 10000)
       bench/report_site.py --from FILE [--scale]   (the table of an earlier --out, or the
                                                    README's rows of it; measures nothing)

The stores are written here (report_site_store.py), not measured: every revision holds the
46 instances of bench/data/builtin-results.json (a real run of the built-in plugin: its names,
values, byte counters, context and 5 time samples each) for two allocators, "system" and
"jemalloc", with the history a project's sweep has: the allocation metrics identical from revision to revision except
for a few instances that change B/op (and allocs/op) at a few revisions, a failed build or two
(build_failed, with a compiler's error in the log's tail), a tag v1.<k> on every fifth revision
and commits in between, `committed` dates increasing, and time samples that differ by a few
percent from revision to revision (noise, as real sweeps have; jemalloc's ~8 % faster, with
larger usable sizes and footprints). Records are written one at a time by allocbench's own
Store.put, in the format and with the recipe a default `allocbench sweep` writes (sweep.Plan's),
at <size>/store/results and committed there, as ci/github/publish.yml keeps a store on a branch
of its own (store/results of a worktree of that branch); beside it a git repository
(<size>/repo) holds the revisions as commits (their subjects, dates and tags), which
sweep-table selects from as it would from the project's.

Each timing is a fresh process (Python start and imports included, as a CI job pays them),
measured --repeat times, for every size; the wall time and the CPU time (user + system of the
child, which other load on the machine hardly changes) are kept:
  first read          `allocbench report --store S --out O` of a store no command read before:
                      its index (<store>/.allocbench-index*, removed before each run) is built
  cold report         the same, O new, the index built, of a clone of the store's branch at
                      one path (<size>/published/results): the store as a CI job has it, its
                      files checked out anew (other inodes and ctimes), its index restored
                      from a cache
  sweep-table         `allocbench sweep-table --range FIRST..LAST` of every revision of one
                      allocator (stdout to <size>/sweep-table.md; it must exit 0)
  sweep probe         what `allocbench sweep` does with the store for one new revision
                      (--probe-sweep: sweep.Plan.stored, twice as sweep asks, Plan.previous,
                      then Store.put of its two records), into a new clone at that path,
                      then committed there (publish.yml's "Keep the store", not timed)
  one more revision   `allocbench report` of that clone into the cold report's --out: the
                      rebuild a CI job does after every push (unchanged pictures and older
                      pages are reused); these two are measured once every size is ready,
                      a repetition of every size in turn (the goal is their ratio: a machine
                      that slows down meanwhile costs each size alike)
and the sizes: the store's record files (an index beside them counted apart), the site after
the cold build. It prints one markdown table, a column per size, with the issue's goals judged
at 2,000 revisions (else the largest size measured; time goals on the CPU time): one more
revision ≤ 5 s and ≤ 1.3× its cost at 500 revisions (else the next smaller size), cold report
≤ 60 s, sweep-table ≤ 3 s, store ≤ 100 MB and ≤ 25 KB per record, site ≤ 40 MB. --out also
writes every number as JSON. --keep DIR keeps the repositories, stores and sites there, one
folder per size (to look at, or to profile a rebuild: python3 -m cProfile -o prof -m allocbench
report --store DIR/500/store-plus-one/results --out DIR/500/cold-3, with
PYTHONPATH=<repo>/scripts; the clone moved there from published/ had its report already: copy
cold-3 first).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_site_store import (  # noqa: E402
    ALLOCATORS, DATA, INDEX, MACHINE, ROOT, History, check_out, commit, sweep_plan, write_store)
from allocbench.history.store import Store  # noqa: E402

PYTHON = os.environ.get("ALLOCBENCH_PYTHON", "/usr/bin/python3")   # the one ./allocbench runs
FORMAT = 2                     # of --out: a column per size
BUILT = re.compile(r"allocbench: report of (\d+) pages in .*; (\d+) pictures drawn, "
                   r"(\d+) reused")
# ---- measuring


def size(folder: Path) -> tuple[int, int]:
    """(bytes, files) of every file under `folder` (a site)."""
    total = files = 0
    for base, _, names in os.walk(folder):
        for name in names:
            total += os.lstat(os.path.join(base, name)).st_size
            files += 1
    return total, files


def store_size(root: Path) -> tuple[int, int]:
    """(bytes, files) of the store's record files only: not its index nor its .gitignore."""
    paths = Store(root).paths()
    return sum(os.lstat(p).st_size for p in paths), len(paths)


def index_size(root: Path) -> int | None:
    """Bytes of the store's index files, None if it has none."""
    found = list(root.glob(INDEX))
    return sum(os.lstat(p).st_size for p in found) if found else None


def timed(command: list[str], **options: Any) -> tuple[dict[str, float],
                                                      subprocess.CompletedProcess]:
    """Runs `command` to its end: its wall time and its CPU time (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(command, text=True, **options)
    seconds = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {"seconds": seconds, "cpu_seconds": cpu}, done


def failed(command: list[str], done: subprocess.CompletedProcess) -> None:
    sys.exit(f"{' '.join(command)}\nexit code {done.returncode}\n"
             f"{(done.stdout or '')[-2000:]}{(done.stderr or '')[-4000:]}")


def report(store: Path, out: Path) -> dict[str, Any]:
    command = [str(ROOT / "allocbench"), "report", "--store", str(store), "--out", str(out)]
    run, done = timed(command, capture_output=True)
    built = BUILT.search(done.stderr)
    if done.returncode != 0 or built is None:
        failed(command, done)
    pages, drawn, reused = map(int, built.groups())
    return {**run, "pages": pages, "drawn": drawn, "reused": reused}


def sweep_table(repo: Path, store: Path, history: History, out: Path) -> dict[str, Any]:
    first, last = history.revisions[0]["sha"], history.revisions[history.count - 1]["sha"]
    command = [str(ROOT / "allocbench"), "sweep-table", "--repo", str(repo), "--store",
               str(store), "--machine", MACHINE, "--allocator", ALLOCATORS[0],
               *(["--range", f"{first}..{last}"] if history.count > 1 else [first])]
    with open(out, "w") as table:
        run, done = timed(command, stdout=table, stderr=subprocess.PIPE)
    if done.returncode != 0:
        failed(command, done)
    return {**run, "exit_code": done.returncode}


def sweep_probe(store: Path, sha: str, records: Path) -> dict[str, Any]:
    command = [PYTHON, str(Path(__file__).resolve()), "--probe-sweep", str(store), sha,
               "--records", str(records)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}
    run, done = timed(command, capture_output=True, env=env)
    outcome = json.loads(done.stdout) if done.returncode == 0 else None
    if outcome != {allocator: "measured" for allocator in ALLOCATORS}:
        failed(command, done)   # the new revision was stored already: nothing measured
    return run


def probe(store: Path, sha: str, records: Path) -> None:
    """--probe-sweep: what `allocbench sweep --store STORE SHA` does with the store for each
    allocator (sweep.run counts what is left, Progress.measure asks again, measure() looks up
    the earlier record, _put stores the new one), the new records read from --records instead
    of being measured. Prints {allocator: "stored" | "measured"}."""
    new = {r["allocator"]: r for r in json.loads(records.read_text())}
    outcome = {}
    for allocator in ALLOCATORS:
        plan = sweep_plan(store, allocator)
        plan.stored(sha)                   # sweep.run: counts what is left to measure
        if plan.stored(sha) is not None:   # Progress.measure: stored, nothing to measure
            outcome[allocator] = "stored"
            continue
        plan.previous(sha)                 # measure(): the earlier record it supersedes
        plan.store.put(new[allocator])
        outcome[allocator] = "measured"
    print(json.dumps(outcome))


def summary(runs: list[dict[str, Any]], sizes: list[tuple[int, int]] | None = None
            ) -> dict[str, Any]:
    seconds = [r["seconds"] for r in runs]
    cpu = [r["cpu_seconds"] for r in runs]
    out: dict[str, Any] = {"seconds": seconds, "median_s": statistics.median(seconds),
                           "min_s": min(seconds), "max_s": max(seconds), "cpu_seconds": cpu,
                           "median_cpu_s": statistics.median(cpu)}
    if sizes:
        out.update(size_bytes=max(s for s, _ in sizes), files=max(f for _, f in sizes))
    for key in ("pages", "drawn", "reused", "exit_code"):   # the same every time, else a range
        if key in runs[0]:
            values = sorted({r[key] for r in runs})
            out[key] = values[0] if len(values) == 1 else values
    return out


def measure(work: Path, revisions: int, repeat: int, seed: int, keep: bool
            ) -> tuple[dict[str, Any], Callable[[int], None]]:
    """Every number of one size but its rebuilds' (the sweep probe and the one more
    revision), and what measures its k-th rebuild, which adds them after the last; the
    folders of `work` removed as soon as measured unless `keep`."""
    def done_with(folder: Path) -> None:
        if not keep:
            shutil.rmtree(folder)

    repo, branch, new = work / "repo", work / "store", work / "one-more.json"
    store = branch / "results"
    history = History(revisions, seed, repo)
    records = write_store(store, history, range(revisions))
    commit(branch, init=True)
    new.write_text(json.dumps([history.record(revisions, a) for a in ALLOCATORS]))

    first = []
    for k in range(1, repeat + 1):
        for index in store.glob(INDEX):
            index.unlink()
        first.append(report(store, work / f"first-{k}"))
        done_with(work / f"first-{k}")
    store_bytes, store_files = store_size(store)   # the index beside: counted apart
    index_bytes = index_size(store)
    # The cold build and its rebuild read the store where a CI job has it: one path every
    # push, its files checked out anew (other inodes and ctimes), its index restored.
    published = work / "published"
    cold, cold_sizes = [], []
    for k in range(1, repeat + 1):
        check_out(branch, published)
        commit(published)   # nothing new: git's index refreshed, as publish.yml's add does
        cold.append(report(published / "results", work / f"cold-{k}"))
        cold_sizes.append(size(work / f"cold-{k}"))
        shutil.rmtree(published)
    tables = [sweep_table(repo, store, history, work / "sweep-table.md")
              for _ in range(repeat)]
    probes, rebuilt, rebuilt_sizes = [], [], []
    sha = history.revisions[revisions]["sha"]
    cold_summary = summary(cold, cold_sizes)
    run = {
        "revisions": revisions, "records": records, "tags": history.tags(),
        "failed": len(history.failed), "new_sha": sha,
        "store": {"bytes": store_bytes, "files": store_files,
                  "bytes_per_record": store_bytes / store_files, "index_bytes": index_bytes},
        "site": {"bytes": cold_summary["size_bytes"], "files": cold_summary["files"]},
        "first_read": summary(first), "cold": cold_summary, "sweep_table": summary(tables)}

    def rebuild(k: int) -> None:
        check_out(branch, published)
        probes.append(sweep_probe(published / "results", sha, new))
        commit(published)   # the cold build's site, rebuilt:
        rebuilt.append(report(published / "results", work / f"cold-{k}"))
        rebuilt_sizes.append(size(work / f"cold-{k}"))
        if keep and k == repeat:
            published.rename(work / "store-plus-one")
        else:
            shutil.rmtree(published)
        done_with(work / f"cold-{k}")
        if k == repeat:
            run.update(sweep_probe=summary(probes), one_more=summary(rebuilt, rebuilt_sizes))
    return run, rebuild


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    found = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    return found[1].strip() if found else "unknown"


def sizes_of(text: str) -> list[int]:
    try:
        sizes = sorted({int(part) for part in text.split(",")})
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give revision counts separated by commas, "
                                         "e.g. 500,2000") from None
    if sizes[0] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: every size is at least 1 revision")
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--revisions", type=sizes_of, default=[50, 200], metavar="N,N…",
                        help="the sizes measured: revisions in the store before the one more "
                             "[50,200]")
    parser.add_argument("--large", action="store_true", help="also 10000 revisions")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each timing [3]")
    parser.add_argument("--seed", type=int, default=1, help="of the generated noise [1]")
    parser.add_argument("--out", type=Path, metavar="FILE", help="also write the numbers as JSON")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep the repositories, stores and sites in DIR/<size>/ (DIR new "
                             "or empty)")
    parser.add_argument("--from", dest="source", type=Path, metavar="FILE",
                        help="print the table of numbers an earlier --out wrote (nothing is "
                             "measured): how the table of docs/reports.md is checked")
    parser.add_argument("--scale", action="store_true",
                        help="with --from: only the rows of the README's scale table (store, "
                             "site, cold report, one more revision, sweep-table)")
    parser.add_argument("--probe-sweep", nargs=2, metavar=("STORE", "SHA"),
                        help=argparse.SUPPRESS)   # internal: the timed sweep-probe process
    parser.add_argument("--records", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe_sweep is not None:
        if args.records is None:
            parser.error("--probe-sweep takes --records FILE too")
        probe(Path(args.probe_sweep[0]), args.probe_sweep[1], args.records)
        return
    if args.source is not None:
        doc = json.loads(args.source.read_text())
        if doc.get("format") != FORMAT:   # the one size of the first version: no "runs"
            print(f"{args.source}: numbers of an older bench/report_site.py (one size, no "
                  f"\"format\": {FORMAT}); measure again and write it with --out",
                  file=sys.stderr)
            sys.exit(2)
        print(table(doc, SCALE if args.scale else None))
        return
    if args.scale:
        parser.error("--scale takes --from FILE (it prints a table of an earlier --out)")
    if args.repeat < 1:
        parser.error("--repeat takes a number of at least 1")
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep}: give a new or empty folder")
    sizes = sorted(set(args.revisions) | ({LARGE} if args.large else set()))

    load_before = uptime()
    with tempfile.TemporaryDirectory(prefix="report-site-") as temp:
        work = args.keep.resolve() if args.keep is not None else Path(temp)
        runs, rebuilds = [], []
        for revisions in sizes:
            (work / str(revisions)).mkdir(parents=True)
            run, rebuild = measure(work / str(revisions), revisions, args.repeat, args.seed,
                                   args.keep is not None)
            runs.append(run)
            rebuilds.append(rebuild)
            print(f"measured {revisions} revisions", file=sys.stderr)
        # The rebuilds, whose ratio between sizes is a goal, side by side: each repetition
        # of every size in turn, so that a machine that slows down meanwhile costs each alike.
        for k in range(1, args.repeat + 1):
            for rebuild in rebuilds:
                rebuild(k)
        print("measured the rebuilds", file=sys.stderr)
    load_after = uptime()

    instances = len(json.loads(DATA.read_text())["results"])
    doc = {"format": FORMAT, "sizes": sizes, "instances": instances,
           "allocators": list(ALLOCATORS), "repeat": args.repeat, "seed": args.seed,
           "cpus": os.cpu_count(), "cpu": cpu_model(), "load_before": load_before,
           "load_after": load_after, "runs": runs}
    doc["goals"] = judged(doc)
    head = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %s"],
                          capture_output=True, text=True).stdout.strip()
    print(f"allocbench {ROOT} ({head[:72]})")
    for run in runs:
        print(f"store: {run['revisions']} revisions ({run['tags']} tags, {run['failed']} failed "
              f"builds) × {instances} instances × {len(ALLOCATORS)} allocators = "
              f"{run['records']} records, {run['store']['bytes'] / 1e6:.1f} MB; then one more "
              f"revision ({len(ALLOCATORS)} records)")
    print(f"machine: {doc['cpus']} CPUs ({doc['cpu']})\nload before: {load_before}\n"
          f"load after:  {load_after}\n")
    print(table(doc))
    if args.out is not None:
        args.out.write_text(json.dumps(doc, indent=1) + "\n")


# ---- the table: one list of rows drives it, and the goals it judges


LARGE = 10000
GOAL_AT, GOAL_BASE = 2000, 500   # the goals are of 2,000 revisions, growth from 500
LIMITS = {"store_mb": 100.0, "record_kb": 25.0, "site_mb": 40.0, "cold_s": 60.0,
          "one_more_s": 5.0, "one_more_growth": 1.3, "sweep_table_s": 3.0}


def judged_sizes(doc: dict[str, Any]) -> tuple[int, int | None]:
    """The size the goals are judged at (2,000, else the largest measured) and the one the
    rebuild's growth is judged from (500, else the largest smaller one; None if none)."""
    sizes = [run["revisions"] for run in doc["runs"]]
    at = GOAL_AT if GOAL_AT in sizes else max(sizes)
    smaller = [n for n in sizes if n < at]
    return at, (GOAL_BASE if GOAL_BASE in smaller else max(smaller, default=None))


def growth(doc: dict[str, Any]) -> float | None:
    at, base = judged_sizes(doc)
    runs = {run["revisions"]: run for run in doc["runs"]}
    if base is None:
        return None
    return runs[at]["one_more"]["median_cpu_s"] / runs[base]["one_more"]["median_cpu_s"]


def goal(value: float, limit: float, unit: str) -> tuple[str, bool]:
    met = value <= limit
    return f"≤ {limit:g} {unit}: {'met' if met else 'MISSED'}", met


def one_more_goal(run: dict[str, Any], doc: dict[str, Any]) -> tuple[str, bool]:
    text, met = goal(run["one_more"]["median_cpu_s"], LIMITS["one_more_s"], "s CPU")
    ratio, (_, base) = growth(doc), judged_sizes(doc)
    if ratio is None:
        return f"{text}; ≤ {LIMITS['one_more_growth']:g}× a smaller store's: n/a", met
    grown = ratio <= LIMITS["one_more_growth"]
    return (f"{text}; ≤ {LIMITS['one_more_growth']:g}× at {base:,}: "
            f"{'met' if grown else 'MISSED'} ({ratio:.2f}×)"), met and grown


def count(value: int | list[int]) -> str:
    """A count the same in every run, else its range."""
    return str(value) if isinstance(value, int) else f"{value[0]}–{value[-1]}"


def timing(section: dict[str, Any]) -> str:
    return f"{section['median_s']:.2f} / {section['median_cpu_s']:.2f} s"


Row = tuple[str, str, Callable[[dict[str, Any]], str],
            Callable[[dict[str, Any], dict[str, Any]], tuple[str, bool]] | None]
ROWS: tuple[Row, ...] = (
    ("records", "records (revisions × 2 allocators)", lambda r: f"{r['records']:,}", None),
    ("store", "store: its record files", lambda r: f"{r['store']['bytes'] / 1e6:.2f} MB "
     f"({r['store']['files']:,} files)",
     lambda r, d: goal(r["store"]["bytes"] / 1e6, LIMITS["store_mb"], "MB")),
    ("record", "store: bytes per record", lambda r: f"{r['store']['bytes_per_record'] / 1e3:.1f}"
     " KB", lambda r, d: goal(r["store"]["bytes_per_record"] / 1e3, LIMITS["record_kb"], "KB")),
    ("index", "store: its index, after the first read",
     lambda r: "none" if r["store"]["index_bytes"] is None
     else f"{r['store']['index_bytes'] / 1e6:.2f} MB", None),
    ("site", "site after the cold build", lambda r: f"{r['site']['bytes'] / 1e6:.2f} MB "
     f"({r['site']['files']:,} files)",
     lambda r, d: goal(r["site"]["bytes"] / 1e6, LIMITS["site_mb"], "MB")),
    ("first_read", "first report of a store not read before (its index built)",
     lambda r: timing(r["first_read"]), None),
    ("cold", "cold report (new --out)", lambda r: timing(r["cold"]),
     lambda r, d: goal(r["cold"]["median_cpu_s"], LIMITS["cold_s"], "s CPU")),
    ("one_more", "report after one more revision (rebuild)", lambda r: timing(r["one_more"]),
     one_more_goal),
    ("pictures", "pictures drawn / reused by that rebuild",
     lambda r: f"{count(r['one_more']['drawn'])} / {count(r['one_more']['reused'])}", None),
    ("sweep_table", "sweep-table of every revision (one allocator)",
     lambda r: timing(r["sweep_table"]),
     lambda r, d: goal(r["sweep_table"]["median_cpu_s"], LIMITS["sweep_table_s"], "s CPU")),
    ("sweep_probe", "sweep of one new revision: its store lookups and puts",
     lambda r: timing(r["sweep_probe"]), None),
)


def judged(doc: dict[str, Any]) -> dict[str, Any]:
    """The goals, as --out records them (the table judges the numbers again)."""
    at, base = judged_sizes(doc)
    run = next(r for r in doc["runs"] if r["revisions"] == at)
    return {"at": at, "base": base, "limits": LIMITS, "growth": growth(doc),
            "met": {key: judge(run, doc)[1] for key, _, _, judge in ROWS if judge}}


SCALE = ("store", "site", "cold", "one_more", "sweep_table")   # the README's rows (--scale)


def table(doc: dict[str, Any], keys: tuple[str, ...] | None = None) -> str:
    """The table of every row, or of the rows `keys` names (the README's: --scale)."""
    at, base = judged_sizes(doc)
    judged_run = next(r for r in doc["runs"] if r["revisions"] == at)
    lines = [f"| median of {doc['repeat']}: wall / CPU | "
             + " | ".join(f"{r['revisions']:,} revisions" for r in doc["runs"])
             + f" | goal at {at:,} revisions |",
             "|---|" + "---:|" * len(doc["runs"]) + "---|"]
    for key, name, cell, judge in ROWS:
        if keys is not None and key not in keys:
            continue
        verdict = judge(judged_run, doc)[0] if judge else ""
        lines.append(f"| {name} | " + " | ".join(cell(r) for r in doc["runs"])
                     + f" | {verdict} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
