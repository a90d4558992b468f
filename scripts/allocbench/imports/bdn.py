"""BenchmarkDotNet full JSON (`JsonExporter.Full`, `--exporters json`: *-report-full.json), as
0.13.x and 0.14 write it (Exporters/Json/JsonExporterBase.cs): {"Title", "HostEnvironmentInfo":
{"BenchmarkDotNetVersion", …}, "Benchmarks": [{"DisplayInfo", "Namespace", "Type", "Method",
"MethodTitle", "Parameters", "FullName", "Statistics": {"OriginalValues" (ns per op, one per
workload iteration), "N", "Mean", …}, "Memory": {"Gen0Collections", …, "TotalOperations",
"BytesAllocatedPerOperation"} (with [MemoryDiagnoser] only), "Measurements"}]}.

Each benchmark is an instance named by FullName (with its job when several jobs share it);
its OriginalValues are the time samples (one fork): the ns per op of its Measurements of
IterationMode "Workload" and IterationStage "Result" (BenchmarkReport.GetResultRuns). With
LaunchCount > 1 those come from several processes, told apart by LaunchIndex: each launch is
then a fork of its own, its samples Nanoseconds / Operations of its Result measurements, as
JMH's forks are (one document per launch). B/op is Memory.BytesAllocatedPerOperation:
read from the runtime's allocated-bytes counter (GC.GetTotalAllocatedBytes(precise: true) on
.NET 6+) over the diagnoser's run, divided by its operations and rounded to a whole byte
(Engines/GcStats.cs): *sampled*, and the file says nothing of its spread, so it gates with the
configured tolerance or BenchmarkDotNet's default (tolerance.py). It is one estimate over all
the launches, so it is in the first launch's document only (a side of several files averages
files). Each time sample is > 0 and B/op >= 0 (common.py); a Result measurement is one launch's
one iteration, so two of the same LaunchIndex and IterationIndex are refused.

A benchmark that failed has no result runs, and BenchmarkDotNet writes its Statistics as null
(BenchmarkReport.ResultStatistics): a failed instance, gated in the candidate as allocbench's
own failed instances are, never a file refused nor a benchmark dropped.
"""

from __future__ import annotations

from typing import Any

from allocbench.base.fileio import json_path
from allocbench.base.validate import MISSING, Checker
from allocbench.imports import common

TOOL = "BenchmarkDotNet"
FIX = "export it again with JsonExporter.Full (--exporters json)"
NOTE_TIME_ONLY = "run without [MemoryDiagnoser]: time only; B/op needs it"
FAILED = "no result (Statistics: null): the benchmark failed; BenchmarkDotNet's log says why"


def detect(doc: Any) -> bool:
    return isinstance(doc, dict) and "Benchmarks" in doc and "schema_version" not in doc


def _job(display: Any) -> str:
    """'Job-ABC(Runtime=.NET 8.0)' of 'Type.Method: Job-ABC(Runtime=.NET 8.0) [N=10]'."""
    if not isinstance(display, str) or ": " not in display:
        return ""
    return display.split(": ", 1)[1].split(" [", 1)[0]


def _bytes(c: Checker, memory: Any, where: str) -> float:
    c.obj(memory, where)
    at = json_path(where, "BytesAllocatedPerOperation")
    value = memory.get("BytesAllocatedPerOperation", MISSING)
    if value is None:
        c.fail(at, "is null: MemoryDiagnoser could not read allocations on this runtime "
               "(Mono, WASM); benchmark on .NET (Core) or drop [MemoryDiagnoser]")
    return float(common.amount(c, value, at))


def _launches(c: Checker, entry: dict[str, Any], at: str) -> list[list[float]]:
    """Each launch's ns per op of its Workload Result measurements, in launch order, when
    there are several launches; else [] (OriginalValues are the one fork)."""
    where = json_path(at, "Measurements")
    if "Measurements" not in entry:
        return []
    by_launch: dict[int, list[float]] = {}
    seen: dict[tuple[int, int], str] = {}
    for i, m in enumerate(c.array(entry["Measurements"], where)):
        here = json_path(where, i)
        c.obj(m, here)
        if (m.get("IterationMode"), m.get("IterationStage")) != ("Workload", "Result"):
            continue
        launch = common.positive_int(c, m.get("LaunchIndex", MISSING),
                                     json_path(here, "LaunchIndex"))
        iteration = common.positive_int(c, m.get("IterationIndex", MISSING),
                                        json_path(here, "IterationIndex"))
        if (launch, iteration) in seen:
            c.fail(here, f"is launch {launch}'s iteration {iteration}, as "
                   f"{seen[launch, iteration]} is: one Result measurement written twice")
        seen[launch, iteration] = here
        ops = common.positive_int(c, m.get("Operations", MISSING), json_path(here, "Operations"))
        ns = common.sample(c, m.get("Nanoseconds", MISSING), json_path(here, "Nanoseconds"))
        by_launch.setdefault(launch, []).append(ns / ops)
    return [by_launch[k] for k in sorted(by_launch)] if len(by_launch) > 1 else []


def load(doc: dict[str, Any], origin: str) -> list[dict[str, Any]]:
    c = Checker(origin, FIX)
    entries = c.array(doc["Benchmarks"], "Benchmarks")
    if not entries:
        c.fail("Benchmarks", "is an empty list: no benchmark ran (check --filter)")
    measured = any(isinstance(e, dict) and "Memory" in e for e in entries)
    names = [c.text(c.obj(e, json_path("Benchmarks", i)).get("FullName", MISSING),
                    json_path(json_path("Benchmarks", i), "FullName"), empty=False)
             for i, e in enumerate(entries)]
    found, seen = [], {}
    for i, entry in enumerate(entries):
        at = json_path("Benchmarks", i)
        name = names[i]
        if names.count(name) > 1:
            name += f" [{_job(entry.get('DisplayInfo'))}]"
        if name in seen:
            c.fail(json_path(at, "FullName"), f"repeats {seen[name]} ({name[:60]}); keep one "
                   "entry per benchmark and job")
        seen[name] = at
        if entry.get("Statistics", MISSING) is None:
            found.append((name, None, [[]], FAILED))
            continue
        stats = c.obj(entry.get("Statistics", MISSING), json_path(at, "Statistics"))
        samples = common.samples(c, stats.get("OriginalValues", MISSING),
                                 json_path(json_path(at, "Statistics"), "OriginalValues"))
        alloc = None
        if measured:
            if "Memory" not in entry:
                c.fail(json_path(at, "Memory"), "is missing, and other benchmarks have it: run "
                       "them all with [MemoryDiagnoser]")
            alloc = {"bytes_per_op": _bytes(c, entry["Memory"], json_path(at, "Memory")),
                     "error_bytes_per_op": None}
        found.append((name, alloc, _launches(c, entry, at) or [samples], ""))
    host = doc.get("HostEnvironmentInfo")
    version = host.get("BenchmarkDotNetVersion") if isinstance(host, dict) else None
    version = version if isinstance(version, str) else None
    fields = []
    if measured:
        fields.append(common.sampled_field(
            "bytes allocated per op: Memory.BytesAllocatedPerOperation of MemoryDiagnoser, "
            "from the runtime's allocated-bytes counter, rounded to a byte",
            f"{TOOL} {version or ''} MemoryDiagnoser".replace("  ", " "), ""))
    fields.append(common.field(common.NS, "Statistics.OriginalValues: ns per op of each "
                                          "workload iteration, each a sample, per launch"))
    note = NOTE_TIME_ONLY if not measured else (
        "B/op is MemoryDiagnoser's BytesAllocatedPerOperation: sampled from the "
        "runtime's allocated-bytes counter, not counted, so it gates with a tolerance")
    source = {"format": "bdn", "tool": TOOL, "version": version, "note": note}

    def result(name: str, alloc: dict[str, Any] | None, samples: list[float], error: str,
               k: int) -> dict[str, Any]:
        if error:
            return common.result(name, 1, None, None, error)
        return common.result(name, 1, alloc if k == 0 else None,
                             common.time_section("ns_per_op", samples))

    return [common.document(source, fields, [
        result(name, alloc, forks[k], error, k) for name, alloc, forks, error in found
        if k < len(forks)]) for k in range(max(len(forks) for _, _, forks, _ in found))]
