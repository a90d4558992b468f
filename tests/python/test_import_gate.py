"""The gate on imported results: verdicts, the comment, the exit codes through `./allocbench
compare`, and bad input (unknown kind, mixed kinds, damaged foreign files)."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

from allocbench.gate import compare, compare_format, compare_json, config
from allocbench.gate.config import Config
from docs_pages import page

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data" / "import"
GOLDEN = (Path(__file__).parent / "data" / "compare" / "comment.md").read_text()
AVGT = "datadog.trace.core.SpanCreationBenchmark.startSpan (avgt)"
THRPT = "datadog.trace.core.TraceAssemblyBenchmark.assemble/childCount:5 (thrpt)"
SPAN = "Datadog.Trace.Benchmarks.SpanBenchmark.StartFinishSpan"
SERVICE = "Datadog.Trace.Benchmarks.ClientSchemaBenchmark.GetServiceName(Protocol: http)"
NAME = "Datadog.Trace.Benchmarks.ClientSchemaBenchmark.GetOperationName(Protocol: http)"
GB_SPAN = "BM_SpanCreate/web"   # gbench-*.json: benchmarks[0..4] its repetitions, [5..7] aggregates


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "allocbench"), "compare", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def judged(base: str | Path, cand: str | Path, cfg: Config = Config()) -> compare.Comparison:
    return compare.compare(compare.load_side(DATA / base), compare.load_side(DATA / cand), cfg)


def change(c: compare.Comparison, name: str, metric: str = "bytes_per_op"):
    inst = next(i for i in c.instances if i.name == name)
    return next(x for x in (*inst.exact, *inst.time) if x.metric == metric)


def edited(tmp_path: Path, source: str, edit, name: str = "edited.json") -> Path:
    doc = json.loads((DATA / source).read_text())
    edit(doc)
    path = tmp_path / name
    path.write_text(json.dumps(doc, ensure_ascii=False))
    return path


def one_line(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and done.stdout == "", done
    assert lines[0].startswith("allocbench: error: ")
    return lines[0][len("allocbench: error: "):]


def test_gbench_plus_32_bytes_is_worse_and_exits_1(tmp_path):
    c = judged("gbench-base.json", "gbench-cand.json")
    bytes_ = change(c, "BM_SpanCreate/web")
    assert (bytes_.verdict, bytes_.delta, bytes_.gate) == (compare.WORSE, 32.0, "exact")
    assert change(c, "BM_SpanCreate/web", "allocs_per_op").delta == 1.0
    assert change(c, "BM_TagMap/tags:7").verdict == compare.SAME
    done = cli(DATA / "gbench-base.json", DATA / "gbench-cand.json", "--format", "markdown",
               cwd=tmp_path)
    assert done.returncode == 1 and done.stderr == ""
    lines = done.stdout.splitlines()
    # The structure of allocbench's own comment (data/compare/comment.md)
    assert lines[0] == "## allocbench: `gbench-base.json` → `gbench-cand.json`"
    assert lines[2].startswith("**Found 2 regressions and 0 improvements;")
    assert lines[4].startswith("❌ Gate failed: 2 gated regressions (--fail-on any) in "
                               "BM_SpanCreate/web (bytes_per_op, allocs_per_op)")
    assert lines[6:11] == ["### Regressions", "", "scenario:`BM_SpanCreate/web`", "",
                           "- 🟥 `bytes_per_op` +32 B (96 → 128, +33.3%)"]
    header = "| scenario | metric | base | candidate | change | verdict |"
    assert header in GOLDEN.splitlines() and header in lines
    assert "| `BM_SpanCreate/web` | `bytes_per_op` | 96 | 128 | +32 B (+33.3%) | 🟥 worse |" \
        in lines
    assert lines[-1].startswith("<sub>Allocation metrics are exact: any increase beyond the "
                                "budget (default: none) is a regression. Time: 95% interval")


def test_gbench_repetitions_that_disagree_are_nondeterministic(tmp_path):
    def damage(doc):
        doc["benchmarks"][2]["bytes_per_op"] = 136.0   # repetition 2 of BM_SpanCreate
    c = judged("gbench-base.json", edited(tmp_path, "gbench-cand.json", damage))
    bytes_ = change(c, "BM_SpanCreate/web")
    assert (bytes_.verdict, bytes_.cand) == (compare.NONDETERMINISTIC, (128.0, 136.0))
    assert ("BM_SpanCreate/web", "bytes_per_op") not in compare.gated(c, "any")


def failed_run(flag: str, message_key: str, message: str):
    """BM_SpanCreate's five repetitions as Google Benchmark writes a skipped run (1.8+:
    skipped/skip_message; SkipWithError: error_occurred/error_message): zero times and
    counters, and no aggregates (none are computed of a skipped run)."""
    def edit(doc):
        for entry in doc["benchmarks"][:5]:
            entry.update({flag: True, message_key: message, "real_time": 0.0, "cpu_time": 0.0,
                          "bytes_per_op": 0.0, "allocs_per_op": 0.0, "iterations": 1})
        del doc["benchmarks"][5:8]
    return edit


@pytest.mark.parametrize("flag, message_key, message", [
    ("skipped", "skip_message", "needs a network"),
    ("error_occurred", "error_message", "backend unreachable")])
def test_gbench_run_skipped_in_the_candidate_fails_the_gate(tmp_path, flag, message_key,
                                                            message):
    cand = edited(tmp_path, "gbench-cand.json", failed_run(flag, message_key, message))
    c = judged("gbench-base.json", cand)
    inst = next(i for i in c.instances if i.name == GB_SPAN)
    assert (inst.failure, inst.exact, inst.time) == (f"candidate: {flag}: {message}", (), ())
    # Before: 96 → 0 B/op and 2 → 0 allocs/op read as improvements, and exit 0.
    assert (compare.verdicts(c)[compare.FAILED], compare.verdicts(c)[compare.BETTER]) == (1, 0)
    assert compare.gated(c, "alloc") == [(GB_SPAN, compare.FAILED)]
    done = cli(DATA / "gbench-base.json", cand, "--fail-on", "alloc", cwd=tmp_path)
    lines = done.stdout.splitlines()
    assert (done.returncode, lines[-1]) == (
        1, f"Gate failed: 1 gated regression (--fail-on alloc) in {GB_SPAN} (failed).")
    # BM_TagMap's two counters and two times unchanged
    assert lines[3] == ("Found 0 regressions and 0 improvements; 4 metrics unchanged, 0 "
                        "unstable, 1 failed.")
    assert lines[6].split() == ["failed", GB_SPAN, "candidate:", f"{flag}:", *message.split()]


def test_gbench_run_skipped_in_the_base_only_is_listed_not_gated(tmp_path):
    base = edited(tmp_path, "gbench-base.json",
                  failed_run("skipped", "skip_message", "needs a network"))
    c = judged(base, "gbench-cand.json")
    assert next(i for i in c.instances if i.name == GB_SPAN).failure == \
        "base: skipped: needs a network"
    assert compare.gated(c, "alloc") == []
    done = cli(base, DATA / "gbench-cand.json", "--fail-on", "alloc", cwd=tmp_path)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (
        0, "Gate passed: no gated regression (--fail-on alloc).")


def test_gbench_flags_that_are_false_are_a_normal_run(tmp_path):
    def edit(doc):
        for entry in doc["benchmarks"]:
            entry.update(error_occurred=False, skipped=False)
    c = judged("gbench-base.json", edited(tmp_path, "gbench-cand.json", edit))
    assert (change(c, GB_SPAN).verdict, change(c, GB_SPAN).delta) == (compare.WORSE, 32.0)


def bdn_failed(doc):
    """StartFinishSpan as BenchmarkDotNet writes a benchmark that failed: no result runs, so
    Statistics null, MemoryDiagnoser's bytes null, no measurements."""
    entry = doc["Benchmarks"][2]
    entry.update(Statistics=None, Measurements=[])
    entry["Memory"]["BytesAllocatedPerOperation"] = None


def test_bdn_benchmark_without_a_result_fails_the_gate_in_the_candidate(tmp_path):
    failure = ("no result (Statistics: null): the benchmark failed; BenchmarkDotNet's log "
               "says why")
    c = judged("bdn-base-report-full.json", edited(tmp_path, "bdn-cand-report-full.json",
                                                   bdn_failed, "cand-report-full.json"))
    assert next(i for i in c.instances if i.name == SPAN).failure == f"candidate: {failure}"
    assert compare.gated(c, "alloc") == [(SPAN, compare.FAILED)]
    c = judged(edited(tmp_path, "bdn-base-report-full.json", bdn_failed,
                      "base-report-full.json"), "bdn-cand-report-full.json")
    assert next(i for i in c.instances if i.name == SPAN).failure == f"base: {failure}"
    assert compare.gated(c, "alloc") == []   # GetOperationName better, GetServiceName same


def test_gbench_without_counters_compares_time_and_says_why_no_bytes(tmp_path):
    c = judged("gbench-nocounters-base.json", "gbench-nocounters-cand.json")
    assert all(i.exact == () for i in c.instances)
    assert [t.metric for t in c.instances[0].time] == ["ns_per_op", "cpu_ns_per_op"]
    assert c.instances[0].time[0].base_n == 5
    note = "B/op and allocs/op need the drop-in"
    assert note in compare_format.console(c, "any")
    assert note in compare_format.markdown(c, "any")
    assert any(note in n for n in json.loads(compare_json.to_json(c, "any"))["notes"])
    done = cli(DATA / "gbench-nocounters-base.json", DATA / "gbench-nocounters-cand.json",
               cwd=tmp_path)
    assert done.returncode == 0 and "allocbench::gbench" in done.stdout


def test_jmh_beyond_the_tolerance_is_worse_within_it_same(tmp_path):
    c = judged("jmh-base.json", "jmh-cand.json")
    worse, same = change(c, AVGT), change(c, THRPT)
    assert (worse.verdict, worse.delta, worse.gate) == (compare.WORSE, 32.0, "sampled")
    assert worse.tolerance == pytest.approx(math.hypot(0.001, 0.001))
    # +1.5 B/op against √(2.0² + 2.1²) = 2.9 B/op
    assert (same.verdict, same.delta) == (compare.SAME, 1.5)
    assert same.tolerance == pytest.approx(2.9)
    assert "scoreError" in same.tolerance_from
    assert change(c, THRPT, "ops_per_s").unit == "ops/s"
    done = cli(DATA / "jmh-base.json", DATA / "jmh-cand.json", "--format", "markdown",
               cwd=tmp_path)
    assert done.returncode == 1
    assert ("- 🟥 `bytes_per_op` +32 B (96 → 128, +33.3%), sampled: tolerance ±0.001 B"
            in done.stdout.splitlines())
    assert "JMH 1.37: B/op is gc.alloc.rate.norm (-prof gc): sampled" in done.stdout
    assert "tolerance: √(base² + candidate²) of the sides' scoreError" in done.stdout


def test_a_configured_tolerance_is_a_floor(tmp_path):
    toml = tmp_path / "allocbench.toml"
    toml.write_text('[sampled]\ntolerance = 40\n')
    c = judged("jmh-base.json", "jmh-cand.json", config.load(toml))
    assert (change(c, AVGT).verdict, change(c, AVGT).tolerance) == (compare.SAME, 40.0)
    assert change(c, THRPT).tolerance == 40.0
    toml.write_text('[sampled]\ntolerance = "0.1%"\n')   # 0.1% of 1880.5 is 1.88 < 2.9
    c = judged("jmh-base.json", "jmh-cand.json", config.load(toml))
    assert change(c, THRPT).tolerance == pytest.approx(2.9)
    assert change(c, AVGT).verdict == compare.WORSE
    assert cli(DATA / "jmh-base.json", DATA / "jmh-cand.json", "--config", toml,
               cwd=tmp_path).returncode == 1


def test_a_budget_allows_a_sampled_increase(tmp_path):
    toml = tmp_path / "allocbench.toml"
    toml.write_text('[[budget]]\nmatch = "*startSpan (avgt)"\nbytes_per_op = 32\n')
    c = judged("jmh-base.json", "jmh-cand.json", config.load(toml))
    assert change(c, AVGT).verdict == compare.ALLOWED


def test_jmh_without_any_spread_is_unstable_unless_configured(tmp_path):
    def two_iterations(doc):
        norm = doc[0]["secondaryMetrics"]["gc.alloc.rate.norm"]
        norm["scoreError"], norm["rawData"] = "NaN", [[96.0], [96.0]]
    base = edited(tmp_path, "jmh-base.json", two_iterations, "b.json")
    c = judged(base, DATA / "jmh-cand.json")
    assert (change(c, AVGT).verdict, change(c, AVGT).tolerance) == (compare.UNSTABLE, None)
    assert ("no [sampled] tolerance" in
            compare_format.markdown(c, "any").split("scenario:`" + AVGT)[1])
    toml = tmp_path / "allocbench.toml"
    toml.write_text('[sampled]\ntolerance = "1%"\n')
    c = judged(base, DATA / "jmh-cand.json", config.load(toml))
    assert (change(c, AVGT).verdict, change(c, AVGT).tolerance) == (compare.WORSE, 0.96)


def test_bdn_beyond_its_default_tolerance_is_worse_within_it_same(tmp_path):
    c = judged("bdn-base-report-full.json", "bdn-cand-report-full.json")
    worse, same, better = change(c, SPAN), change(c, SERVICE), change(c, NAME)
    # 0.5% of 536 B is 2.68 B: +32 is beyond it
    assert (worse.verdict, worse.delta, worse.tolerance) == (compare.WORSE, 32.0,
                                                             pytest.approx(2.68))
    # 0.5% of 56 B is 0.28 B, below the 1 B floor: +1 is within it
    assert (same.verdict, same.delta, same.tolerance) == (compare.SAME, 1.0, 1.0)
    assert (better.verdict, better.delta) == (compare.BETTER, -48.0)
    assert change(c, NAME, "ns_per_op").verdict == compare.BETTER
    doc = json.loads(compare_json.to_json(c, "any"))
    span = next(i for i in doc["instances"] if i["name"] == SPAN)["exact"][0]
    assert (span["gate"], span["tolerance_from"]) == (
        "sampled", "BenchmarkDotNet's 0.5% accuracy, at least 1 B")
    again, _ = compare_json.from_json(doc, "c.json")
    assert compare_format.markdown(again, "any") == compare_format.markdown(c, "any")
    done = cli(DATA / "bdn-base-report-full.json", DATA / "bdn-cand-report-full.json",
               "--format", "json", cwd=tmp_path)
    assert done.returncode == 1
    assert json.loads(done.stdout)["gate"]["failed"] == [
        {"instance": SPAN, "metric": "bytes_per_op"}]


def test_a_file_of_an_unknown_kind_is_one_line_and_2(tmp_path):
    other = tmp_path / "other.json"
    other.write_text('{"results": []}')
    assert one_line(cli(DATA / "jmh-base.json", other, cwd=tmp_path)) == (
        f"{other}: not an allocbench results file (no 'schema_version') nor a benchmark "
        "result compare can import; give allocbench results, Google Benchmark JSON "
        "(--benchmark_format=json), JMH JSON (-rf json) or BenchmarkDotNet full JSON "
        "(JsonExporter.Full, *-report-full.json)")


def test_mixed_kinds_are_2(tmp_path):
    base, cand = DATA / "gbench-base.json", DATA / "jmh-cand.json"
    assert one_line(cli(base, cand, cwd=tmp_path)) == (
        f"{base} is Google Benchmark JSON and {cand} is JMH JSON; compare results of one kind "
        "on both sides")
    ours = ROOT / "tests" / "python" / "data" / "compare" / "base.json"
    assert "is allocbench results and" in one_line(cli(ours, base, cwd=tmp_path))
    folder = tmp_path / "side"
    folder.mkdir()
    (folder / "a.json").write_text((DATA / "bdn-base-report-full.json").read_text())
    (folder / "b.json").write_text((DATA / "jmh-base.json").read_text())
    assert one_line(cli(folder, DATA / "jmh-cand.json", cwd=tmp_path)) == (
        f"{folder / 'a.json'} is BenchmarkDotNet JSON and {folder / 'b.json'} is JMH JSON; "
        "compare results of one kind on both sides")


def test_counters_on_one_side_only_are_2(tmp_path):
    base, cand = DATA / "gbench-base.json", DATA / "gbench-nocounters-cand.json"
    assert one_line(cli(base, cand, cwd=tmp_path)) == (
        f"{base} has allocs_per_op (exact) and {cand} does not, so they cannot be compared; "
        "build both sides' benchmarks with allocbench::gbench")


def _del(*keys):
    def edit(doc):
        for key in keys[:-1]:
            doc = doc[key]
        del doc[keys[-1]]
    return edit


def _set(value, *keys):
    def edit(doc):
        for key in keys[:-1]:
            doc = doc[key]
        doc[keys[-1]] = value
    return edit


@pytest.mark.parametrize("source, damage, message", [
    ("jmh-cand.json", _del(0, "primaryMetric", "rawData"),
     "[0].primaryMetric.rawData is missing, not a list; write it again with -rf json"),
    ("jmh-cand.json", _set("NaN", 1, "primaryMetric", "rawData", 0, 2),
     "[1].primaryMetric.rawData[0][2] is a string (\"NaN\"), not a finite number"),
    ("jmh-cand.json", _set("bananas/op", 0, "primaryMetric", "scoreUnit"),
     "[0].primaryMetric.scoreUnit is 'bananas/op', not a time per op (us/op) or a throughput"),
    ("jmh-cand.json", _set("NaN", 0, "secondaryMetrics", "gc.alloc.rate.norm", "score"),
     "[0].secondaryMetrics.\"gc.alloc.rate.norm\".score is a string (\"NaN\"), not a finite"),
    ("jmh-cand.json", _set({}, 1, "secondaryMetrics"),
     "[1].secondaryMetrics lacks gc.alloc.rate.norm, which other entries have: run every "
     "benchmark with -prof gc"),
    ("jmh-cand.json", lambda d: d.clear(),
     "the document is an empty list: JMH ran no benchmark"),
    ("bdn-cand-report-full.json", _set([], "Benchmarks", 2, "Statistics", "OriginalValues"),
     "Benchmarks[2].Statistics.OriginalValues is a list, not a non-empty list; export it again "
     "with JsonExporter.Full (--exporters json)"),
    ("bdn-cand-report-full.json", _set(None, "Benchmarks", 1, "Memory",
                                       "BytesAllocatedPerOperation"),
     "Benchmarks[1].Memory.BytesAllocatedPerOperation is null: MemoryDiagnoser could not"),
    ("bdn-cand-report-full.json", _del("Benchmarks", 0, "FullName"),
     "Benchmarks[0].FullName is missing, not a non-empty string"),
    ("bdn-cand-report-full.json", lambda d: d["Benchmarks"][0]["Measurements"][0].update(
        IterationStage="Result", LaunchIndex=0),
     "Benchmarks[0].Measurements[0].LaunchIndex is 0, not an integer >= 1"),
    ("bdn-cand-report-full.json", lambda d: d["Benchmarks"][1]["Measurements"][2].update(
        IterationStage="Result", Nanoseconds=-5),
     "Benchmarks[1].Measurements[2].Nanoseconds is -5, not a finite number > 0 (a time or "
     "a rate)"),
    ("gbench-cand.json", _set("fortnights", "benchmarks", 3, "time_unit"),
     "benchmarks[3].time_unit is a string (\"fortnights\"), not one of ns, us, ms, s"),
    ("gbench-cand.json", _set(float("nan"), "benchmarks", 1, "real_time"),
     "benchmarks[1].real_time is NaN, not a finite number > 0 (a time or a rate); write it "
     "again with --benchmark_format=json"),
    ("gbench-cand.json", _del("benchmarks", 9, "bytes_per_op"),
     "benchmarks[9].bytes_per_op is missing, not a finite number >= 0 (bytes or a count); link "
     "every benchmark of the binary with the allocbench::gbench CMake target"),
    ("gbench-cand.json", _set([], "benchmarks"),
     "benchmarks is an empty list: no benchmark ran"),
])
def test_damaged_foreign_files_name_the_file_and_the_path(tmp_path, source, damage, message):
    path = edited(tmp_path, source, damage, "damaged.json")
    base = DATA / source.replace("cand", "base")
    assert one_line(cli(base, path, cwd=tmp_path)).startswith(f"{path}: {message}")


def test_a_damaged_allocbench_file_is_still_refused_as_before(tmp_path):
    """Importing relaxes nothing for allocbench's own files."""
    ours = json.loads((ROOT / "tests/python/data/compare/cand.json").read_text())
    ours["fields"] = [f for f in ours["fields"] if f["key"] != "bytes_per_op"]
    path = tmp_path / "cand.json"
    path.write_text(json.dumps(ours))
    assert one_line(cli(ROOT / "tests/python/data/compare/base.json", path, cwd=tmp_path)) == (
        f"{path}: fields lacks alloc.bytes_per_op with gate 'exact'; the file is damaged, "
        "re-run the measurement")


def test_the_readme_example_is_this_output():
    """The README's BenchmarkDotNet example is this command's output, exit code 1."""
    files = ("bdn-base-report-full.json", "bdn-cand-report-full.json")
    done = cli(*files, cwd=DATA)
    assert done.returncode == 1, done.stderr
    readme = page("imports")
    block = readme.split("<!-- import-example:begin -->\n")[1].split(
        "<!-- import-example:end -->")[0]
    assert block == f"```\n$ allocbench compare {' '.join(files)}\n{done.stdout}```\n"
