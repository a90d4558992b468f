"""Values of Google Benchmark, JMH and BenchmarkDotNet JSON that no measurement can carry, and
entries of one instance that disagree on what it is: each refused with exit 2, one line naming
the file, the JSON path and the fix, nothing on stdout (issue 23, items 5, 6 and 8).

Before, a time sample <= 0 passed as an improvement, a negative gc.alloc.rate.norm as fewer
bytes, "error_occurred": "true" as false, and the repetitions of one run that disagree on
threads as two instances that paired with nothing, so their regression went ungated. Every
expectation below is the edited fixture's own path and value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allocbench import cli

DATA = Path(__file__).parent / "data" / "import"
GBENCH_FIX = "write it again with --benchmark_format=json (or --benchmark_out=FILE)"
JMH_FIX = "write it again with -rf json (and -prof gc for B/op)"
BDN_FIX = "export it again with JsonExporter.Full (--exporters json)"
SAMPLE = "not a finite number > 0 (a time or a rate)"
AMOUNT = "not a finite number >= 0 (bytes or a count)"
NORM = '.secondaryMetrics."gc.alloc.rate.norm"'
SPAN_RUN = "BM_SpanCreate/web/repeats:5"   # gbench-cand.json's benchmarks[0..7]
TAGS_RUN = "BM_TagMap/tags:7/repeats:5"    # benchmarks[8..15], time_unit "us"


@pytest.fixture(autouse=True)
def elsewhere(tmp_path, monkeypatch):
    """Away from any ./allocbench.toml of the checkout."""
    monkeypatch.chdir(tmp_path)


def refused(tmp_path: Path, capsys, source: str, edit) -> str:
    """The one line `compare BASE EDITED` prints, its exit code 2 and stdout empty asserted;
    the edited file's path replaced by 'EDITED'."""
    doc = json.loads((DATA / source).read_text())
    edit(doc)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc, ensure_ascii=False))
    code = cli.main(["compare", str(DATA / source.replace("cand", "base")), str(path)])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert (code, out, len(lines)) == (2, "", 1), (code, out, err)
    assert lines[0].startswith("allocbench: error: ")
    return lines[0][len("allocbench: error: "):].replace(str(path), "EDITED")


def put(value, *keys):
    def edit(doc):
        for key in keys[:-1]:
            doc = doc[key]
        doc[keys[-1]] = value
    return edit


def result_measurements(index: int, *measurements: tuple[int, int, int, float]):
    """Benchmarks[index]'s Measurements: Workload Result (LaunchIndex, IterationIndex,
    Operations, Nanoseconds) each."""
    def edit(doc):
        doc["Benchmarks"][index]["Measurements"] = [
            {"IterationMode": "Workload", "IterationStage": "Result", "LaunchIndex": launch,
             "IterationIndex": iteration, "Operations": ops, "Nanoseconds": ns}
            for launch, iteration, ops, ns in measurements]
    return edit


def aggregates_only(doc):
    doc["benchmarks"] = [e for e in doc["benchmarks"] if e["run_type"] == "aggregate"]
    doc["benchmarks"][0]["real_time"] = 0.0   # BM_SpanCreate's mean: its one sample


# --- item 5: a time sample <= 0 ---------------------------------------------------------------

@pytest.mark.parametrize("source, edit, message", [
    ("gbench-cand.json", put(0, "benchmarks", 2, "real_time"),
     f"benchmarks[2].real_time is 0, {SAMPLE}; {GBENCH_FIX}"),
    ("gbench-cand.json", put(-1.5, "benchmarks", 9, "cpu_time"),
     f"benchmarks[9].cpu_time is -1.5, {SAMPLE}; {GBENCH_FIX}"),
    ("gbench-cand.json", aggregates_only,
     f"benchmarks[0].real_time is 0.0, {SAMPLE}; {GBENCH_FIX}"),
    ("gbench-cand.json", put("101.0", "benchmarks", 1, "real_time"),
     f'benchmarks[1].real_time is a string ("101.0"), {SAMPLE}; {GBENCH_FIX}'),
    ("jmh-cand.json", put(0, 0, "primaryMetric", "rawData", 1, 2),
     f"[0].primaryMetric.rawData[1][2] is 0, {SAMPLE}; {JMH_FIX}"),
    ("jmh-cand.json", put(-2101.0, 1, "primaryMetric", "rawData", 0, 0),   # a throughput
     f"[1].primaryMetric.rawData[0][0] is -2101.0, {SAMPLE}; {JMH_FIX}"),
    ("jmh-cand.json", put(0.0, 2, "primaryMetric", "rawDataHistogram", 0, 0, 1, 0),
     f"[2].primaryMetric.rawDataHistogram[0][0][1][0] is 0.0, {SAMPLE}; {JMH_FIX}"),
    ("jmh-cand.json", put(-1, 2, "primaryMetric", "rawDataHistogram", 0, 0, 1, 1),
     f"[2].primaryMetric.rawDataHistogram[0][0][1][1] is -1, not an integer >= 0; {JMH_FIX}"),
    ("bdn-cand-report-full.json", put(0, "Benchmarks", 2, "Statistics", "OriginalValues", 3),
     f"Benchmarks[2].Statistics.OriginalValues[3] is 0, {SAMPLE}; {BDN_FIX}"),
    ("bdn-cand-report-full.json", result_measurements(1, (1, 1, 1000, 15020.0),
                                                      (1, 2, 1000, 0.0)),
     f"Benchmarks[1].Measurements[1].Nanoseconds is 0.0, {SAMPLE}; {BDN_FIX}"),
    ("bdn-cand-report-full.json", result_measurements(1, (1, 1, 1000, "15020")),
     f'Benchmarks[1].Measurements[0].Nanoseconds is a string ("15020"), {SAMPLE}; {BDN_FIX}'),
], ids=["gbench-zero", "gbench-negative-cpu", "gbench-aggregates-only", "gbench-string",
        "jmh-zero", "jmh-negative-throughput", "jmh-histogram-value", "jmh-histogram-count",
        "bdn-original-values", "bdn-launch-nanoseconds", "bdn-string"])
def test_a_time_sample_not_above_zero_is_refused(tmp_path, capsys, source, edit, message):
    assert refused(tmp_path, capsys, source, edit) == f"EDITED: {message}"


# --- item 6 and alike: bytes and counts < 0, numbers as strings --------------------------------

@pytest.mark.parametrize("source, edit, message", [
    ("jmh-cand.json", put(-96.0, 0, "secondaryMetrics", "gc.alloc.rate.norm", "score"),
     f"[0]{NORM}.score is -96.0, {AMOUNT}; {JMH_FIX}"),
    ("jmh-cand.json", put("96", 0, "secondaryMetrics", "gc.alloc.rate.norm", "score"),
     f'[0]{NORM}.score is a string ("96"), {AMOUNT}; {JMH_FIX}'),
    # scoreError "NaN" (2 iterations a fork): the error is computed from rawData, checked too
    ("jmh-cand.json", put(-95.5, 2, "secondaryMetrics", "gc.alloc.rate.norm", "rawData", 1, 0),
     f"[2]{NORM}.rawData[1][0] is -95.5, {AMOUNT}; {JMH_FIX}"),
    ("jmh-cand.json", put(-0.001, 0, "secondaryMetrics", "gc.alloc.rate.norm", "scoreError"),
     f'[0]{NORM}.scoreError is -0.001, not a finite number >= 0 or "NaN"; {JMH_FIX}'),
    ("bdn-cand-report-full.json", put(-8, "Benchmarks", 0, "Memory",
                                      "BytesAllocatedPerOperation"),
     f"Benchmarks[0].Memory.BytesAllocatedPerOperation is -8, {AMOUNT}; {BDN_FIX}"),
    ("bdn-cand-report-full.json", put("48", "Benchmarks", 0, "Memory",
                                      "BytesAllocatedPerOperation"),
     f'Benchmarks[0].Memory.BytesAllocatedPerOperation is a string ("48"), {AMOUNT}; '
     f"{BDN_FIX}"),
    ("gbench-cand.json", put(-96.0, "benchmarks", 0, "bytes_per_op"),
     f"benchmarks[0].bytes_per_op is -96.0, {AMOUNT}; {GBENCH_FIX}"),
    ("gbench-cand.json", put("7", "benchmarks", 10, "allocs_per_op"),
     f'benchmarks[10].allocs_per_op is a string ("7"), {AMOUNT}; {GBENCH_FIX}'),
], ids=["jmh-negative-norm", "jmh-string-norm", "jmh-negative-raw-norm", "jmh-negative-error",
        "bdn-negative-bytes", "bdn-string-bytes", "gbench-negative-bytes", "gbench-string-count"])
def test_bytes_below_zero_or_not_a_number_are_refused(tmp_path, capsys, source, edit, message):
    assert refused(tmp_path, capsys, source, edit) == f"EDITED: {message}"


# --- item 5: a flag is true or false ----------------------------------------------------------

@pytest.mark.parametrize("key, value, shown", [
    ("error_occurred", "true", 'a string ("true")'),
    ("error_occurred", "false", 'a string ("false")'), ("skipped", "true", 'a string ("true")'),
    ("skipped", 1, "1"), ("error_occurred", None, "null")])
def test_a_flag_that_is_not_a_boolean_is_refused(tmp_path, capsys, key, value, shown):
    assert refused(tmp_path, capsys, "gbench-cand.json", put(value, "benchmarks", 3, key)) == (
        f"EDITED: benchmarks[3].{key} is {shown}, not true or false; {GBENCH_FIX}")


def test_a_failure_message_that_is_not_text_is_refused(tmp_path, capsys):
    def edit(doc):
        doc["benchmarks"][0].update(error_occurred=True, error_message=42)
    assert refused(tmp_path, capsys, "gbench-cand.json", edit) == (
        f"EDITED: benchmarks[0].error_message is 42, not a string; {GBENCH_FIX}")


# --- item 8: the entries of one instance agree on what it is ------------------------------------

@pytest.mark.parametrize("index, key, value, first, shown, theirs", [
    (3, "threads", 2, 0, "2", "1"),                                # the split run
    (9, "time_unit", "ns", 8, 'a string ("ns")', 'a string ("us")'),
    (4, "repetitions", 4, 0, "4", "5"),
    (12, "family_index", 0, 8, "0", "1"),
    (2, "per_family_instance_index", 1, 0, "1", "0"),
])
def test_repetitions_of_one_run_that_disagree_are_refused(tmp_path, capsys, index, key, value,
                                                          first, shown, theirs):
    run = SPAN_RUN if index < 8 else TAGS_RUN
    assert refused(tmp_path, capsys, "gbench-cand.json", put(value, "benchmarks", index, key)) \
        == (f"EDITED: benchmarks[{index}].{key} is {shown}, but benchmarks[{first}].{key} is "
            f"{theirs}, in the same run ('{run}'): the repetitions of one run must agree on "
            f"{key}; {GBENCH_FIX}")


def test_a_repetition_written_twice_is_refused(tmp_path, capsys):
    assert refused(tmp_path, capsys, "gbench-cand.json",
                   put(1, "benchmarks", 4, "repetition_index")) == (
        f"EDITED: benchmarks[4].repetition_index is 1, as benchmarks[1].repetition_index is, in "
        f"the same run ('{SPAN_RUN}'): one repetition written twice; {GBENCH_FIX}")


def jmh_assemble(*params: dict[str, str]):
    """The thrpt entry [1] with its params replaced by params[0], and copies of it with each
    further params appended as [3], [4], …"""
    def edit(doc):
        doc[1]["params"] = params[0]
        for more in params[1:]:
            doc.append(json.loads(json.dumps(doc[1])))
            doc[-1]["params"] = more
    return edit


def test_jmh_entries_of_one_benchmark_that_name_other_parameters_are_refused(tmp_path, capsys):
    edit = jmh_assemble({"childCount": "5"}, {"childCount": "10", "depth": "2"})
    assert refused(tmp_path, capsys, "jmh-cand.json", edit) == (
        "EDITED: [3].params names childCount, depth, but [1].params of the same benchmark names "
        f"childCount: the entries of one benchmark must agree on its parameters; {JMH_FIX}")


def test_jmh_one_instance_with_its_parameters_in_another_order_is_a_repeat(tmp_path, capsys):
    edit = jmh_assemble({"childCount": "5", "depth": "2"}, {"depth": "2", "childCount": "5"})
    assert refused(tmp_path, capsys, "jmh-cand.json", edit) == (
        "EDITED: [3].benchmark repeats [1] (datadog.trace.core.TraceAssemblyBenchmark.assemble, "
        f"thrpt); keep one entry per benchmark, mode, parameters and threads; {JMH_FIX}")


def test_bdn_one_result_measurement_written_twice_is_refused(tmp_path, capsys):
    edit = result_measurements(0, (1, 1, 1000, 374.0), (2, 1, 1000, 375.0), (1, 1, 1000, 373.0))
    assert refused(tmp_path, capsys, "bdn-cand-report-full.json", edit) == (
        "EDITED: Benchmarks[0].Measurements[2] is launch 1's iteration 1, as "
        f"Benchmarks[0].Measurements[0] is: one Result measurement written twice; {BDN_FIX}")
