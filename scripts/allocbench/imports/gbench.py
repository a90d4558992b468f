"""Google Benchmark JSON: `--benchmark_format=json` or `--benchmark_out=FILE`, as version 1.7.1
(Debian's libbenchmark-dev) writes it in src/json_reporter.cc: {"context": {...}, "benchmarks":
[{"name", "family_index", "per_family_instance_index", "run_name", "run_type": "iteration" |
"aggregate", "repetitions", "repetition_index", "threads", "aggregate_name" (aggregates),
"error_occurred": true, "error_message" (SkipWithError), "iterations", "real_time",
"cpu_time", "time_unit", user counters as keys}]}. 1.8 on also write "skipped": true,
"skip_message" (SkipWithMessage); a run skipped either way reports real_time 0.

Each run (run_name, without its "/repeats:N") is an instance; each of its iteration entries (a
repetition) is a time sample of real_time (ns_per_op) and cpu_time (cpu_ns_per_op), converted
to ns, each > 0. Aggregates are ignored when iteration entries exist; with aggregates only
(--benchmark_report_aggregates_only) the mean is one sample. allocbench::gbench adds the exact
counters bytes_per_op and allocs_per_op to every entry: then they gate exactly, and
repetitions that disagree are nondeterministic. Without them time alone is compared.

A run with an entry skipped or in error is a failed instance (its message kept): it gates in
the candidate, as allocbench's own failed instances do, instead of reading its zeros as an
improvement. The entries of one run are one instance measured several times, so they agree on
what identifies it (IDENTITY) and hold each repetition once: else they came from different
runs, and reading them as one instance (or as two that pair with nothing) would go ungated.
"""

from __future__ import annotations

import re
from typing import Any

from allocbench.base.fileio import json_path
from allocbench.base.validate import MISSING, Checker, describe
from allocbench.imports import common

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
# What identifies the instance an entry measured (each checked, then the same in every entry
# of a run); iterations, times and counters vary by repetition, repetition_index by design.
IDENTITY = ("threads", "time_unit", "repetitions", "family_index", "per_family_instance_index")
FAILURES = (("error_occurred", "error_message"), ("skipped", "skip_message"))


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


def _identity(c: Checker, entry: dict[str, Any], at: str) -> tuple[Any, ...]:
    """The IDENTITY of one entry, each field checked (the indices and count are optional:
    versions before 1.6 lack them)."""
    def optional(key: str, low: int) -> Any:
        value = entry.get(key, MISSING)
        return value if value is MISSING else c.integer(value, json_path(at, key), low=low)

    return (common.positive_int(c, entry.get("threads", MISSING), json_path(at, "threads")),
            c.member(entry.get("time_unit", MISSING), json_path(at, "time_unit"), UNITS),
            optional("repetitions", 1), optional("family_index", 0),
            optional("per_family_instance_index", 0))


def _agree(c: Checker, run: str, entries: list[tuple[str, dict[str, Any]]]) -> None:
    """UserError, naming both entries, unless the entries of `run` agree on their IDENTITY and
    hold each repetition_index once."""
    first_at, _ = entries[0]
    first = _identity(c, entries[0][1], first_at)
    repetitions: dict[int, str] = {}
    for at, entry in entries:
        for key, mine, theirs in zip(IDENTITY, _identity(c, entry, at), first):
            if mine != theirs:
                c.fail(json_path(at, key), f"is {describe(mine)}, but {json_path(first_at, key)} "
                       f"is {describe(theirs)}, in the same run ('{run[:60]}'): the "
                       f"repetitions of one run must agree on {key}")
        index = entry.get("repetition_index", MISSING)
        if index is not MISSING:
            index = c.integer(index, json_path(at, "repetition_index"), low=0)
            if index in repetitions:
                c.fail(json_path(at, "repetition_index"), f"is {index}, as "
                       f"{json_path(repetitions[index], 'repetition_index')} is, in the same "
                       f"run ('{run[:60]}'): one repetition written twice")
            repetitions[index] = at


def _failure(c: Checker, entries: list[tuple[str, dict[str, Any]]]) -> str:
    """'error_occurred: <message>' or 'skipped: <message>' of the run's first entry that failed
    or was skipped (every entry's flags checked), '' when none did."""
    found = ""
    for at, entry in entries:
        for key, message in FAILURES:
            if common.flag(c, entry, key, at):
                text = c.text(entry.get(message, ""), json_path(at, message))
                found = found or (f"{key}: {text}" if text else key)
    return found


def _instance(c: Checker, counted: Checker | None, name: str,
              entries: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    threads = entries[0][1]["threads"]
    failed = _failure(c, entries)
    if failed:
        return common.result(name, threads, None, None, failed)
    real, cpu, counters = [], [], {key: [] for key in COUNTERS}
    for at, entry in entries:
        scale = common.NS_PER[entry["time_unit"]]
        real.append(common.sample(c, entry.get("real_time", MISSING),
                                  json_path(at, "real_time")) * scale)
        cpu.append(common.sample(c, entry.get("cpu_time", MISSING),
                                 json_path(at, "cpu_time")) * scale)
        for key in COUNTERS if counted else ():   # missing: a benchmark without the drop-in
            counters[key].append(common.amount(c if key in entry else counted,
                                               entry.get(key, MISSING), json_path(at, key)))
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
        _agree(c, run, found)
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
