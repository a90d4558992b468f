"""Comparing results: pairing, the exact gate, forks, failures, --fail-on, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allocbench import cli
from allocbench.gate import calibration, compare, config
from allocbench.gate.config import Config
from allocbench.commands import compare as compare_command

DATA = Path(__file__).parent / "data" / "compare"


@pytest.fixture(autouse=True)
def elsewhere(tmp_path, monkeypatch):
    """Away from any ./allocbench.toml or ./.allocbench/calibration.json of the checkout."""
    monkeypatch.chdir(tmp_path)


def doc(side: str) -> dict:
    return json.loads((DATA / f"{side}.json").read_text())


def write(path: Path, document: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))
    return path


def result(document: dict, name: str) -> dict:
    return next(r for r in document["results"] if r["name"] == name)


def comparison(base: Path, cand: Path, cfg: Config = Config(), **kwargs) -> compare.Comparison:
    return compare.compare(compare.load_side(base), compare.load_side(cand), cfg, **kwargs)


def instance(c: compare.Comparison, name: str) -> compare.InstanceComparison:
    return next(i for i in c.instances if i.name == name)


def exact(c: compare.Comparison, name: str, metric: str) -> compare.ExactChange:
    return next(e for e in instance(c, name).exact if e.metric == metric)


def test_plus_96_bytes_per_op_is_worse_with_delta_exactly_96():
    c = comparison(DATA / "base.json", DATA / "cand.json")
    change = exact(c, "ground_truth/sized/bytes:24", "bytes_per_op")
    assert change.verdict == compare.WORSE
    assert change.delta == 96 and isinstance(change.delta, int)
    assert change.percent == 400.0
    assert ("ground_truth/sized/bytes:24", "bytes_per_op") in compare.gated(c, "alloc")


def test_pairs_by_scenario_args_threads_allocator_and_lists_added_and_removed():
    c = comparison(DATA / "base.json", DATA / "cand.json")
    assert [i.name for i in c.instances] == [
        "ground_truth/mixed", "ground_truth/sized/bytes:24", "strings/interpolated_name",
        "containers/vector_fill/elements:20/reserve:0", "trace_fanout/web_trace/children:5",
        "ground_truth/fails"]
    assert c.added == ("strings/precomputed_name",)
    assert c.removed == ("ground_truth/growing_vector",)


def test_gated_metrics_come_from_the_documents_fields(tmp_path):
    base, cand = doc("base"), doc("cand")
    for d in (base, cand):
        for f in d["fields"]:
            if f["key"] in ("allocs_per_op", "ns_per_op", "cpu_ns_per_op"):
                f["gate"] = "info"
    c = comparison(write(tmp_path / "b.json", base), write(tmp_path / "c.json", cand))
    sized = instance(c, "ground_truth/sized/bytes:24")
    assert [e.metric for e in sized.exact] == ["bytes_per_op", "frees_per_op"]
    assert sized.time == ()


def test_budget_allows_an_increase_up_to_it(tmp_path):
    budgets = config.load(DATA / "allocbench.toml")
    c = comparison(DATA / "base.json", DATA / "cand.json", budgets)
    change = exact(c, "trace_fanout/web_trace/children:5", "bytes_per_op")
    assert (change.verdict, change.delta, change.budget) == (compare.ALLOWED, 8, "64")
    # A percent budget of the base's 11 allocs/op: +1 is 9.1% (allowed), +2 is 18.2% (worse).
    for allocs, verdict in ((12, compare.ALLOWED), (13, compare.WORSE)):
        cand = doc("cand")
        result(cand, "trace_fanout/web_trace/children:5")["alloc"]["allocs_per_op"] = allocs
        c = comparison(DATA / "base.json", write(tmp_path / f"c{allocs}.json", cand), budgets)
        change = exact(c, "trace_fanout/web_trace/children:5", "allocs_per_op")
        assert (change.verdict, change.delta, change.budget) == (verdict, allocs - 11, "10%")
    # Without the budget, the same +8 B is a regression.
    plain = comparison(DATA / "base.json", DATA / "cand.json")
    assert exact(plain, "trace_fanout/web_trace/children:5", "bytes_per_op").verdict == \
        compare.WORSE


def test_forks_that_disagree_on_an_exact_metric_are_nondeterministic(tmp_path):
    base1, base2, cand = doc("base"), doc("base"), doc("cand")
    result(base2, "ground_truth/mixed")["alloc"]["frees_per_op"] = 6
    write(tmp_path / "base" / "fork-1.json", base1)
    write(tmp_path / "base" / "fork-2.json", base2)
    write(tmp_path / "cand" / "fork-1.json", cand)
    write(tmp_path / "cand" / "fork-2.json", cand)
    c = comparison(tmp_path / "base", tmp_path / "cand")
    frees = exact(c, "ground_truth/mixed", "frees_per_op")
    assert (frees.verdict, frees.base, frees.cand, frees.delta) == (
        compare.NONDETERMINISTIC, (5, 6), (5,), None)
    assert ("ground_truth/mixed", "frees_per_op") not in compare.gated(c, "any")
    # The time samples of both forks are pooled: 2 × 12 a side.
    wall, cpu = instance(c, "ground_truth/mixed").time
    assert (wall.metric, cpu.metric) == ("ns_per_op", "cpu_ns_per_op")
    assert (wall.base_n, wall.cand_n) == (cpu.base_n, cpu.cand_n) == (24, 24)


def test_a_scenario_failing_in_the_candidate_gates_failing_in_the_base_does_not(tmp_path):
    c = comparison(DATA / "base.json", DATA / "cand.json")
    assert instance(c, "ground_truth/fails").failure == (
        "candidate: SkipWithError: the tag table is full")
    for fail_on in compare.FAIL_ON:
        assert ("ground_truth/fails", compare.FAILED) in compare.gated(c, fail_on)
    reverse = comparison(DATA / "cand.json", DATA / "base.json")
    assert instance(reverse, "ground_truth/fails").failure.startswith("base: ")
    assert ("ground_truth/fails", compare.FAILED) not in compare.gated(reverse, "any")


def test_fail_on_chooses_what_gates(tmp_path):
    cand = doc("cand")
    cand["results"] = [r for r in cand["results"] if r["name"] != "ground_truth/fails"]
    c = comparison(DATA / "base.json", write(tmp_path / "c.json", cand))
    assert {m for _, m in compare.gated(c, "time")} == {"ns_per_op", "cpu_ns_per_op"}
    assert "ns_per_op" not in {m for _, m in compare.gated(c, "alloc")}
    assert {m for _, m in compare.gated(c, "any")} == {
        "ns_per_op", "cpu_ns_per_op", "bytes_per_op", "allocs_per_op", "frees_per_op"}


def test_exit_codes(tmp_path, capsys):
    same = cli.main(["compare", str(DATA / "base.json"), str(DATA / "base.json")])
    assert same == 0
    assert "Found 0 regressions and 0 improvements" in capsys.readouterr().out
    assert cli.main(["compare", str(DATA / "base.json"), str(DATA / "cand.json")]) == 1


def test_without_time_samples_each_fork_gives_one_value(tmp_path):
    base, cand = doc("base"), doc("cand")
    for d in (base, cand):
        for r in d["results"]:
            (r.get("time") or {}).pop("samples_ns_per_op", None)
            (r.get("time") or {}).pop("samples_cpu_ns_per_op", None)
    c = comparison(write(tmp_path / "b.json", base), write(tmp_path / "c.json", cand))
    for time in instance(c, "ground_truth/mixed").time:   # wall and CPU alike
        assert time.base_n == 1 and time.verdict == compare.UNSTABLE
        assert time.reason == "1 samples, fewer than 5"


def test_calibration_marks_noisy_instances(tmp_path):
    entry = {"scenario": "ground_truth/sized", "args": {"bytes": 24}, "threads": 1,
             "allocator": "glibc", "name": "ground_truth/sized/bytes:24", "metric": "ns_per_op",
             "noisy": True, "mde_percent": 14.25, "false_positive_rate": 0.1, "forks": 2,
             "repetitions": 5}
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"allocbench_calibration": 1, "scenarios": [entry]}))
    c = comparison(DATA / "base.json", DATA / "cand.json",
                   calibration=calibration.load_calibration(path))
    time, cpu = instance(c, "ground_truth/sized/bytes:24").time
    assert cpu.noise == ""   # calibrated for ns_per_op only
    assert time.noise == ("A/A calibration: minimum detectable effect 14.2%, false positives "
                          "10% at 2 forks × 5 repetitions")
    assert time.verdict == compare.WORSE   # marked, not silenced
    assert instance(c, "ground_truth/mixed").time[0].noise == ""


def one_line_error(argv: list[str], capsys) -> str:
    code = cli.main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("allocbench: error: ")
    return err[0][len("allocbench: error: "):]


@pytest.mark.parametrize("key, index, value", [
    ("samples_ns_per_op", 3, 0.0), ("samples_cpu_ns_per_op", 0, -44.7), ("ns_per_op", None, 0)])
def test_a_time_not_above_zero_is_refused_not_judged(tmp_path, capsys, key, index, value):
    """A time <= 0 is no measurement: before, a base sample of 0 made time *unstable* and a
    candidate's passed as an improvement. Now both sides' files are refused on load, as an
    imported file's are (results_check.time_sample)."""
    damaged = doc("cand")
    first = damaged["results"][0]   # ground_truth/mixed
    if index is None:
        first["time"][key] = value
    else:
        first["time"][key][index] = value
    path = write(tmp_path / "cand.json", damaged)
    where = f"{key}[{index}]" if index is not None else key
    assert one_line_error(["compare", str(DATA / "base.json"), str(path)], capsys) == (
        f"{path}: results[0] ('ground_truth/mixed').time.{where} is {value}, not a finite "
        "number > 0 (a time or a rate); the file is damaged, re-run the measurement")


@pytest.mark.parametrize("base, cand", [([10.0, 0.0, 10.0], [10.0] * 3),
                                        ([10.0] * 3, [10.0, -1.0, 10.0])])
def test_time_change_never_judges_a_sample_not_above_zero(base, cand):
    with pytest.raises(ValueError, match="time_change needs samples > 0 on both sides"):
        compare.time_change("ns_per_op", "ns", [base], [cand], threshold=5.0,
                            settings=config.TimeSettings(), seed=1)


def test_missing_file(tmp_path, capsys):
    missing = tmp_path / "gone.json"
    assert one_line_error(["compare", str(missing), str(DATA / "cand.json")], capsys) == (
        f"{missing}: cannot read (No such file or directory)")


def test_malformed_json(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1,\n  "results": [}')
    assert one_line_error(["compare", str(DATA / "base.json"), str(bad)], capsys) == (
        f"{bad}: not valid JSON (line 2, column 15: Expecting value); the file is damaged, "
        "re-run the measurement")


def test_other_schema_version_says_which_and_what_to_do(tmp_path, capsys):
    old = doc("base")
    old["schema_version"] = 2
    path = write(tmp_path / "v2.json", old)
    assert one_line_error(["compare", str(path), str(DATA / "cand.json")], capsys) == (
        f"{path}: results schema version 2, but this allocbench reads version 1; re-run the "
        "measurement with this allocbench to regenerate it")


def test_nothing_in_common(tmp_path, capsys):
    other = doc("cand")
    for r in other["results"]:
        r["scenario"] = "other/" + r["scenario"]
    path = write(tmp_path / "other.json", other)
    assert one_line_error(["compare", str(DATA / "base.json"), str(path)], capsys) == (
        f"{DATA / 'base.json'} (7 instances) and {path} (7) have no scenario instance in "
        "common (paired by scenario, arguments, threads and allocator): compare results of "
        "the same scenarios")


def test_empty_directory(tmp_path, capsys):
    assert one_line_error(["compare", str(tmp_path), str(DATA / "cand.json")], capsys) == (
        f"{tmp_path}: no results files (*.json) in this directory")


def test_damaged_calibration(tmp_path, capsys):
    bad = tmp_path / "calibration.json"
    bad.write_text("[]")
    assert one_line_error(["compare", str(DATA / "base.json"), str(DATA / "cand.json"),
                           "--calibration", str(bad)], capsys) == (
        f"{bad}: not a calibration file written by 'allocbench calibrate'; run it again to "
        "regenerate the file")


def test_run_is_callable_directly(capsys):
    assert compare_command.run(base=DATA / "base.json", cand=DATA / "base.json",
                               format="json") == 0
    assert json.loads(capsys.readouterr().out)["gate"]["failed"] == []


@pytest.mark.parametrize("flag", ["--fail-on=everything", "--format=html"])
def test_bad_flag_values_are_usage_errors(flag, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["compare", str(DATA / "base.json"), str(DATA / "cand.json"), flag])
    assert e.value.code == 2
