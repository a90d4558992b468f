"""Google Benchmark JSON: `--benchmark_format=json` or `--benchmark_out=FILE`, as version 1.7.1
(Debian's libbenchmark-dev) writes it in src/json_reporter.cc: {"context": {...}, "benchmarks":
[{"name", "run_name", "run_type": "iteration" | "aggregate", "repetitions",
"repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
"aggregate_name" (aggregates), "error_occurred"/"error_message", user counters as keys}]}.

Each run (run_name, without its "/repeats:N") is an instance; each of its iteration entries (a
repetition) is a time sample of real_time (ns_per_op) and cpu_time (cpu_ns_per_op), converted
to ns. Aggregates are ignored when iteration entries exist; with aggregates only
(--benchmark_report_aggregates_only) the mean is one sample. allocbench::gbench adds the exact
counters bytes_per_op and allocs_per_op to every entry: then they gate exactly, and
repetitions that disagree are nondeterministic. Without them time alone is compared.
"""

from __future__ import annotations

import re
from typing import Any

from allocbench.fileio import json_path
from allocbench.imports import common
from allocbench.validate import MISSING, Checker

TOOL = "Google Benchmark"
FIX = "write it again with --benchmark_format=json (or --benchmark_out=FILE)"
DROP_IN = "allocbench::gbench"
COUNTER_FIX = f"link every benchmark of the binary with the {DROP_IN} CMake target"
COUNTERS = ("bytes_per_op", "allocs_per_op")
UNITS = ("ns", "us", "ms", "s")
REPEATS = re.compile(r"/repeats:\d+")
NOTE_TIME_ONLY = (f"no {DROP_IN} counters in the file: time only; B/op and "
                  f"allocs/op need the drop-in (link the benchmarks with the {DROP_IN} CMake "
                  "target)")
NOTE_COUNTED = (f"B/op and allocs/op counted exactly by {DROP_IN} (user counters "
                "bytes_per_op, allocs_per_op)")


def detect(doc: Any) -> bool:
    return isinstance(doc, dict) and "benchmarks" in doc and "schema_version" not in doc


def _runs(c: Checker, entries: list[Any]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """The entries to read per run, in first-seen order: its iterations, else its mean."""
    iterations: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    means: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for i, entry in enumerate(entries):
        at = json_path("benchmarks", i)
        c.obj(entry, at)
        run = entry.get("run_name", entry.get("name", MISSING))
        c.text(run, json_path(at, "run_name"), empty=False)
        kind = entry.get("run_type", "aggregate" if "aggregate_name" in entry else "iteration")
        c.member(kind, json_path(at, "run_type"), ("iteration", "aggregate"))
        iterations.setdefault(run, [])
        if kind == "iteration":
            iterations[run].append((at, entry))
        elif entry.get("aggregate_name") == "mean":
            means.setdefault(run, []).append((at, entry))
    out = {}
    for run, found in iterations.items():
        out[run] = found or means.get(run, [])
        if not out[run]:
            c.fail(f"benchmarks (run '{run[:60]}')", "has aggregates but neither iteration "
                   "entries nor a mean to read; report the repetitions (or the mean)")
    return out


def _instance(c: Checker, counted: Checker | None, name: str,
              entries: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    first_at, first = entries[0]
    threads = common.positive_int(c, first.get("threads", MISSING),
                                  json_path(first_at, "threads"))
    failed = [e for _, e in entries if e.get("error_occurred") is True]
    if failed:
        return common.result(name, threads, None, None,
                             f"error_occurred: {failed[0].get('error_message', '')}".strip())
    real, cpu, counters = [], [], {key: [] for key in COUNTERS}
    for at, entry in entries:
        unit = c.member(entry.get("time_unit", MISSING), json_path(at, "time_unit"), UNITS)
        scale = common.NS_PER[unit]
        real.append(c.number(entry.get("real_time", MISSING), json_path(at, "real_time")) * scale)
        cpu.append(c.number(entry.get("cpu_time", MISSING), json_path(at, "cpu_time")) * scale)
        for key in COUNTERS if counted else ():
            value = counted.number(entry.get(key, MISSING), json_path(at, key))
            counted.want(value >= 0, json_path(at, key), value, "a count >= 0")
            counters[key].append(value)
    time = {**common.time_section("ns_per_op", real), **common.time_section("cpu_ns_per_op", cpu)}
    alloc = None
    if counted:
        alloc = {}
        for key, values in counters.items():
            alloc.update({key: values[0], f"samples_{key}": values})
    return common.result(name, threads, alloc, time)


def load(doc: dict[str, Any], origin: str) -> list[dict[str, Any]]:
    c = Checker(origin, FIX)
    context = c.obj(doc.get("context", MISSING), "context")
    entries = c.array(doc["benchmarks"], "benchmarks")
    if not entries:
        c.fail("benchmarks", "is an empty list: no benchmark ran (check --benchmark_filter)")
    counted = any(isinstance(e, dict) and any(k in e for k in COUNTERS) for e in entries)
    runs = _runs(c, entries)
    results, names = [], {}
    for run, found in runs.items():
        name = REPEATS.sub("", run)
        if name in names:
            c.fail(found[0][0], f"repeats the benchmark '{name[:60]}' of {names[name]} (only "
                   "the repetition count differs); keep one run per benchmark in a file")
        names[name] = found[0][0]
        results.append(_instance(c, Checker(origin, COUNTER_FIX) if counted else None, name,
                                 found))
    fields = []
    if counted:
        fields = [common.field(common.BYTES, f"bytes per op counted by {DROP_IN}",
                               gate="exact"),
                  common.field(common.ALLOCS, f"allocations per op counted by {DROP_IN}",
                               gate="exact")]
    fields += [common.field(common.NS, "real_time per iteration, in ns; each repetition a "
                                       "sample"),
               common.field(common.CPU_NS, "cpu_time per iteration, in ns; each repetition a "
                                           "sample")]
    note = NOTE_COUNTED if counted else NOTE_TIME_ONLY
    if any(e.get("run_type") == "aggregate" for _, found in runs.items() for _, e in found):
        note += ("; aggregates only (--benchmark_report_aggregates_only): each mean is one "
                 "time sample, too few to judge time")
    source = {"format": "gbench", "tool": TOOL, "version": None, "note": note,
              "date": context.get("date") if isinstance(context.get("date"), str) else None}
    return [common.document(source, fields, results)]
