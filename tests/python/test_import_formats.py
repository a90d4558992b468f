"""Importing Google Benchmark, JMH and BenchmarkDotNet JSON (scripts/allocbench/imports/):
detection by content and each format's conversion, pinned by hand from the fixtures.

The fixtures in data/import/ follow the formats as these versions write them: Google Benchmark
1.7.1 (Debian's libbenchmark-dev; src/json_reporter.cc), JMH 1.37 (JSONResultFormat.java;
`·gc.alloc.rate.norm` before 1.37) and BenchmarkDotNet 0.13.12 (JsonExporterBase.cs, the
`*-report-full.json` of JsonExporter.Full). data/import/README.md says how each was made.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from allocbench import imports
from allocbench.imports import jmh
from test_gbench_dropin import EXPECTED   # per op, from the ground truth's source

DATA = Path(__file__).parent / "data" / "import"
T_9995_3 = 12.92398   # Student t, 99.95th percentile, 3 degrees of freedom (tables)


def load(name: str) -> tuple[str, list[dict]]:
    return imports.load(DATA / name)


def by_name(doc: dict) -> dict[str, dict]:
    return {r["name"]: r for r in doc["results"]}


@pytest.mark.parametrize("name, kind", [
    ("gbench-base.json", "gbench"), ("gbench-nocounters-cand.json", "gbench"),
    ("jmh-base.json", "jmh"), ("bdn-base-report-full.json", "bdn"),
    ("../compare/base.json", "allocbench")])
def test_detected_by_content(name, kind):
    assert imports.detect(json.loads((DATA / name).read_text())) == kind


def test_detection_ignores_the_file_name(tmp_path):
    renamed = tmp_path / "results-report-full.json"   # a BDN-like name, JMH content
    renamed.write_text((DATA / "jmh-base.json").read_text())
    assert imports.load(renamed)[0] == "jmh"
    for doc in ({"foo": 1}, [1, 2], "text", {"benchmark": "x"}):
        assert imports.detect(doc) is None


def test_gbench_with_counters():
    kind, docs = load("gbench-base.json")
    assert kind == "gbench" and len(docs) == 1
    doc = docs[0]
    assert [(f["key"], f["gate"]) for f in doc["fields"]] == [
        ("bytes_per_op", "exact"), ("allocs_per_op", "exact"), ("ns_per_op", "time"),
        ("cpu_ns_per_op", "time")]
    runs = by_name(doc)
    assert list(runs) == ["BM_SpanCreate/web", "BM_TagMap/tags:7"]   # "/repeats:5" dropped
    span, tags = runs["BM_SpanCreate/web"], runs["BM_TagMap/tags:7"]
    # 5 repetitions, the mean/median/stddev aggregates ignored
    assert span["time"]["samples_ns_per_op"] == [101.0, 102.0, 100.5, 101.5, 100.0]
    assert span["time"]["samples_cpu_ns_per_op"] == [100.75, 101.75, 100.25, 101.25, 99.75]
    assert span["alloc"]["samples_bytes_per_op"] == [96.0] * 5
    assert span["alloc"]["samples_allocs_per_op"] == [2.0] * 5
    # time_unit "us": 1.250 us is 1250 ns
    assert tags["time"]["samples_ns_per_op"] == pytest.approx([1250, 1252, 1249, 1251, 1248])
    assert tags["time"]["ns_per_op"] == pytest.approx(1250)
    assert (tags["alloc"]["bytes_per_op"], tags["threads"]) == (448.0, 1)
    assert doc["context"]["source"]["format"] == "gbench"
    assert "counted exactly by allocbench::gbench" in doc["context"]["source"]["note"]


def test_gbench_without_counters_is_time_only_with_the_note():
    doc = load("gbench-nocounters-base.json")[1][0]
    assert [f["key"] for f in doc["fields"]] == ["ns_per_op", "cpu_ns_per_op"]
    assert all(r["alloc"] is None for r in doc["results"])
    assert doc["context"]["count"] is None
    assert "B/op and allocs/op need the drop-in" in doc["context"]["source"]["note"]
    assert "allocbench::gbench" in doc["context"]["source"]["note"]


def test_gbench_tolerates_nan_where_it_is_not_read(tmp_path):
    text = (DATA / "gbench-base.json").read_text()
    doc = json.loads(text)
    doc["benchmarks"][5]["cpu_time"] = float("nan")   # a stddev aggregate: ignored
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(doc))   # json writes NaN as Google Benchmark does
    assert "NaN" in path.read_text()
    assert by_name(imports.load(path)[1][0])["BM_SpanCreate/web"]["time"]["ns_per_op"] == 101.0


def test_gbench_aggregates_only_reads_the_mean(tmp_path):
    doc = json.loads((DATA / "gbench-base.json").read_text())
    doc["benchmarks"] = [e for e in doc["benchmarks"] if e["run_type"] == "aggregate"]
    path = tmp_path / "aggregates.json"
    path.write_text(json.dumps(doc))
    converted = imports.load(path)[1][0]
    span = by_name(converted)["BM_SpanCreate/web"]
    assert span["time"]["samples_ns_per_op"] == [101.0]   # the mean of the five
    assert "aggregates only" in converted["context"]["source"]["note"]


def test_jmh_one_document_per_fork_units_converted():
    kind, docs = load("jmh-base.json")
    assert kind == "jmh" and len(docs) == 2
    avgt = "datadog.trace.core.SpanCreationBenchmark.startSpan (avgt)"
    thrpt = "datadog.trace.core.TraceAssemblyBenchmark.assemble/childCount:5 (thrpt)"
    sample = "datadog.trace.core.SpanCreationBenchmark.startSpan (sample)"
    assert [r["name"] for r in docs[0]["results"]] == [avgt, thrpt, sample]
    assert [(f["key"], f["gate"]) for f in docs[0]["fields"]] == [
        ("bytes_per_op", "sampled"), ("ns_per_op", "time"), ("ops_per_s", "time")]
    fork0, fork1 = by_name(docs[0]), by_name(docs[1])
    # avgt us/op → ns/op: fork 1's rawData [0.209, 0.213, 0.211]
    assert fork1[avgt]["time"]["samples_ns_per_op"] == pytest.approx([209, 213, 211])
    # thrpt ops/ms → ops/s: fork 0's rawData [2100, 2110, 2105]
    assert fork0[thrpt]["time"]["samples_ops_per_s"] == pytest.approx([2.1e6, 2.11e6, 2.105e6])
    # sample mode: each iteration the mean of its histogram, (0.2·3 + 0.3·1) / 4 = 0.225 us
    assert fork0[sample]["time"]["samples_ns_per_op"] == pytest.approx([225, 230])
    assert fork1[sample]["time"]["samples_ns_per_op"] == pytest.approx([220, 230])
    # B/op: the gc.alloc.rate.norm score and its scoreError, one estimate over both forks, so
    # in the first fork's document only (a side of several files averages files, not forks)
    assert fork0[avgt]["alloc"] == {"bytes_per_op": 96.0, "error_bytes_per_op": 0.001}
    assert fork1[avgt]["alloc"] is None
    assert fork0[thrpt]["alloc"] == {"bytes_per_op": 1880.5, "error_bytes_per_op": 2.0}
    # scoreError "NaN": from rawData [96, 96.5, 95.5, 96]: sd √(0.5/3), t(99.95%, 3) · sd / √4
    assert fork0[sample]["alloc"]["error_bytes_per_op"] == pytest.approx(
        T_9995_3 * (0.5 / 3) ** 0.5 / 2, rel=1e-5)
    source = docs[0]["context"]["source"]
    assert (source["tool"], source["version"]) == ("JMH", "1.37")
    assert docs[0]["fields"][0]["sampled_by"] == "JMH 1.37 -prof gc (gc.alloc.rate.norm)"


def test_jmh_before_1_37_names_the_norm_with_a_middle_dot(tmp_path):
    doc = json.loads((DATA / "jmh-base.json").read_text())
    for entry in doc:
        del entry["jmhVersion"]
        entry["secondaryMetrics"] = {"\u00b7" + k: v for k, v in
                                     entry["secondaryMetrics"].items()}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc, ensure_ascii=False))
    old, new = imports.load(path)[1], load("jmh-base.json")[1]
    assert [d["results"] for d in old] == [d["results"] for d in new]
    assert old[0]["fields"][0]["sampled_by"] == "JMH < 1.37 -prof gc (gc.alloc.rate.norm)"


def test_jmh_profiled_without_the_norm_allocated_nothing(tmp_path):
    doc = json.loads((DATA / "jmh-base.json").read_text())
    del doc[0]["secondaryMetrics"]["gc.alloc.rate.norm"]   # JMH 1.37 when 0 bytes allocated
    path = tmp_path / "zero.json"
    path.write_text(json.dumps(doc))
    first = imports.load(path)[1][0]["results"][0]
    assert first["alloc"] == {"bytes_per_op": 0.0, "error_bytes_per_op": 0.0}


def test_jmh_half_width_needs_three_values():
    assert jmh.half_width([96.0, 97.0]) is None
    assert jmh.half_width([1.0, 2.0, 3.0]) == pytest.approx(31.5991 * 1.0 / 3 ** 0.5, rel=1e-4)


def test_bdn_full_json():
    kind, docs = load("bdn-base-report-full.json")
    assert kind == "bdn" and len(docs) == 1
    doc = docs[0]
    assert [(f["key"], f["gate"]) for f in doc["fields"]] == [
        ("bytes_per_op", "sampled"), ("ns_per_op", "time")]
    runs = by_name(doc)
    name = "Datadog.Trace.Benchmarks.ClientSchemaBenchmark.GetOperationName(Protocol: http)"
    assert list(runs) == [name,
                          "Datadog.Trace.Benchmarks.ClientSchemaBenchmark.GetServiceName"
                          "(Protocol: http)",
                          "Datadog.Trace.Benchmarks.SpanBenchmark.StartFinishSpan"]
    assert runs[name]["time"]["samples_ns_per_op"] == [9.36, 9.41, 9.35, 9.38, 9.40, 9.37]
    assert [r["alloc"]["bytes_per_op"] for r in runs.values()] == [48.0, 56.0, 536.0]
    assert all(r["alloc"]["error_bytes_per_op"] is None for r in runs.values())
    assert doc["context"]["source"]["version"] == "0.13.12"
    assert doc["fields"][0]["sampled_by"] == "BenchmarkDotNet 0.13.12 MemoryDiagnoser"


def test_bdn_without_memory_diagnoser_is_time_only_with_the_note(tmp_path):
    doc = json.loads((DATA / "bdn-base-report-full.json").read_text())
    for entry in doc["Benchmarks"]:
        del entry["Memory"]
    path = tmp_path / "time-only-report-full.json"
    path.write_text(json.dumps(doc))
    kind, (loaded,) = imports.load(path)
    assert kind == "bdn"
    assert [f["key"] for f in loaded["fields"]] == ["ns_per_op"]
    assert [r["alloc"] for r in loaded["results"]] == [None, None, None]
    assert loaded["context"]["source"]["note"] == \
        "run without [MemoryDiagnoser]: time only; B/op needs it"


def bdn_launches(launches: list[list[tuple[int, float]]]) -> dict:
    """The base fixture, its first benchmark run in len(launches) launches: each launch's
    Workload Result measurements (operations, nanoseconds), around the stages that are not
    results (pilot, overhead, actual), as BenchmarkDotNet's Measurements list them."""
    doc = json.loads((DATA / "bdn-base-report-full.json").read_text())
    measurements = []
    for launch, results in enumerate(launches, 1):
        def m(mode: str, stage: str, index: int, ops: int, ns: float) -> dict:
            return {"IterationMode": mode, "IterationStage": stage, "LaunchIndex": launch,
                    "IterationIndex": index, "Operations": ops, "Nanoseconds": ns}
        measurements += [m("Workload", "Pilot", 1, 16, 999.0), m("Overhead", "Actual", 1, 1000,
                                                                  700.0)]
        measurements += [m("Workload", "Actual", i, ops, ns + 700.0)
                         for i, (ops, ns) in enumerate(results, 1)]
        measurements += [m("Workload", "Result", i, ops, ns)
                         for i, (ops, ns) in enumerate(results, 1)]
    first = doc["Benchmarks"][0]
    first["Measurements"] = measurements
    first["Statistics"]["OriginalValues"] = [ns / ops for results in launches
                                             for ops, ns in results]
    return doc


def test_bdn_launches_are_forks(tmp_path):
    """LaunchCount = 2: the first benchmark's Result measurements of launch 1 are one fork and
    launch 2's another (ns / ops each); the benchmarks run in one launch are in the first."""
    path = tmp_path / "launches-report-full.json"
    path.write_text(json.dumps(bdn_launches([[(1000, 9400.0), (1000, 9300.0)],
                                             [(2000, 19000.0), (2000, 18800.0), (500, 4800.0)]])))
    kind, docs = imports.load(path)
    assert kind == "bdn" and len(docs) == 2
    name = "Datadog.Trace.Benchmarks.ClientSchemaBenchmark.GetOperationName(Protocol: http)"
    first, second = by_name(docs[0]), by_name(docs[1])
    assert first[name]["time"]["samples_ns_per_op"] == [9.4, 9.3]
    assert second[name]["time"]["samples_ns_per_op"] == [9.5, 9.4, 9.6]
    assert first[name]["alloc"] == {"bytes_per_op": 48.0, "error_bytes_per_op": None}
    assert second[name]["alloc"] is None   # one estimate over both launches, in the first
    assert list(second) == [name] and len(first) == 3   # the others ran once
    # One launch of Result measurements: OriginalValues, one fork, as before.
    path.write_text(json.dumps(bdn_launches([[(1000, 9400.0), (1000, 9300.0)]])))
    (doc,) = imports.load(path)[1]
    assert by_name(doc)[name]["time"]["samples_ns_per_op"] == [9.4, 9.3]


def test_bdn_jobs_sharing_a_full_name_are_told_apart(tmp_path):
    doc = json.loads((DATA / "bdn-base-report-full.json").read_text())
    second = json.loads(json.dumps(doc["Benchmarks"][0]))
    second["DisplayInfo"] = ("ClientSchemaBenchmark.GetOperationName: .NET 6.0(Runtime=.NET "
                             "6.0) [Protocol=http]")
    doc["Benchmarks"][0]["DisplayInfo"] = ("ClientSchemaBenchmark.GetOperationName: .NET 8.0"
                                           "(Runtime=.NET 8.0) [Protocol=http]")
    doc["Benchmarks"].append(second)
    path = tmp_path / "jobs-report-full.json"
    path.write_text(json.dumps(doc))
    names = [r["name"] for r in imports.load(path)[1][0]["results"]]
    assert names[0].endswith("(Protocol: http) [.NET 8.0(Runtime=.NET 8.0)]")
    assert names[-1].endswith("(Protocol: http) [.NET 6.0(Runtime=.NET 6.0)]")


def test_the_drop_ins_own_json_meets_every_rule(build_dir, tmp_path):
    """Google Benchmark's own output of the drop-in's ground truth, repetitions interleaved
    (each repetition a run of its own in between others'): every time sample > 0, every run's
    repetitions agreeing on their identity, each once; B/op and threads as its source says."""
    out = tmp_path / "gbench.json"
    exe = build_dir / "tests" / "gbench" / "gbench_ground_truth"
    subprocess.run([str(exe), f"--benchmark_out={out}", "--benchmark_out_format=json",
                    "--benchmark_min_time=0.01", "--benchmark_repetitions=3",
                    "--benchmark_enable_random_interleaving=true"], check=True,
                   capture_output=True, timeout=300)
    (doc,) = imports.load(out)[1]
    found = {r["name"]: (r["threads"], r["alloc"]["samples_bytes_per_op"],
                         len(r["time"]["samples_ns_per_op"])) for r in doc["results"]}
    expected = {}
    for name, (bytes_per_op, _) in EXPECTED.items():
        threads = int(name.split("threads:")[1]) if "threads:" in name else 1
        expected[name.replace("/repeats:3", "")] = (threads, [bytes_per_op] * 3, 3)
    assert found == expected
