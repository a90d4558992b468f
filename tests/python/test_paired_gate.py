"""The gate of paired time (gate/paired_gate.py) on pairs with a planted ratio: each side's
batches are what allocbench-run --against wrote for tests/plugins/paired/, their candidate
times replaced by the base's × a known factor and seeded noise, so the verdict is known."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from allocbench import cli
from allocbench.base import paired_results
from allocbench.base.errors import UserError
from allocbench.gate import calibration, compare as cmp, compare_format, compare_json, paired_gate
from allocbench.gate.config import Config
from conftest import count_only, run_runner

FILTER = "paired/(work|alloc)$"


@pytest.fixture(scope="module")
def measured(runner, build_dir, tmp_path_factory) -> dict[str, Path]:
    """Count-only results of the base build on both sides, and a real paired document."""
    out = tmp_path_factory.mktemp("measured")
    plugin = build_dir / "tests" / "plugins" / "paired" / "base" / "paired_truth.so"
    for side in ("base", "cand"):
        (out / side).mkdir()
        count_only(runner, plugin, out / side / "fork-1.json", "--filter", FILTER)
    done = run_runner(runner, "--plugin", str(plugin), "--against", str(plugin), "--filter",
                      FILTER, "--paired-time", "0.2", "--quiet", "--out", str(out / "real.json"))
    assert done.returncode == 0, done.stderr
    return {"base": out / "base", "cand": out / "cand", "real": out / "real.json"}


def planted(measured: dict[str, Path], tmp_path: Path, factors: dict[str, object],
            errors: dict[str, str] | None = None, seed: int = 1) -> Path:
    """The real paired document with each instance's candidate batches = its base batches ×
    factors[name] (a number, or a function of the pair index) × 0.2% seeded noise."""
    doc = json.loads(measured["real"].read_text())
    rng = np.random.default_rng(seed)
    for r in doc["results"]:
        p = r["paired"]
        n = len(p["base_wall_ns"])
        factor = factors[r["name"]]
        scale = np.array([factor(i) for i in range(n)]) if callable(factor) else factor
        for clock in ("wall", "cpu"):
            base = np.asarray(p[f"base_{clock}_ns"], dtype=float)
            noise = np.exp(rng.normal(0, 0.002, n))
            p[f"cand_{clock}_ns"] = [max(1, round(x)) for x in base * scale * noise]
        if errors and r["name"] in errors:
            r["error"] = errors[r["name"]]
            r["paired"] = None
    path = tmp_path / "paired.json"
    path.write_text(json.dumps(doc))
    return path


def judge(measured, pairs: Path, config: Config = Config(), time_gates: bool = True
          ) -> cmp.Comparison:
    base, cand = cmp.load_side(measured["base"]), cmp.load_side(measured["cand"])
    comparison = cmp.compare(base, cand, config)
    if not time_gates:
        from dataclasses import replace
        comparison = replace(comparison, time_gates=False)
    return paired_gate.apply(comparison, paired_results.load(pairs), config)


def verdicts(comparison: cmp.Comparison) -> dict[tuple[str, str], str]:
    return {(i.name, t.metric): t.verdict for i in comparison.instances for t in i.time}


def test_a_planted_ratio_is_estimated_and_judged_by_the_paired_threshold(measured, tmp_path):
    pairs = planted(measured, tmp_path, {"paired/work": 1.05, "paired/alloc": 0.97})
    comparison = judge(measured, pairs)
    assert verdicts(comparison) == {
        ("paired/work", "ns_per_op"): "worse", ("paired/work", "cpu_ns_per_op"): "worse",
        ("paired/alloc", "ns_per_op"): "better", ("paired/alloc", "cpu_ns_per_op"): "better"}
    work = comparison.instances[0].time[0]
    assert work.interval.relative_low < 0.05 < work.interval.relative_high
    assert work.interval.relative == pytest.approx(0.05, abs=0.001)
    n = len(json.loads(pairs.read_text())["results"][0]["paired"]["cand_first"])
    assert work.pairs == work.base_n == work.cand_n == n
    assert work.threshold == 1.0 and work.p_value is None
    assert comparison.paired == str(pairs)
    # The whole interval must lie beyond the threshold: at 6%, +5% is no regression.
    wide = judge(measured, pairs, Config().with_threshold(6.0))
    assert set(verdicts(wide).values()) == {"same"}


def test_identical_pairs_are_the_same_and_a_drifting_ratio_is_unstable(measured, tmp_path):
    same = judge(measured, planted(measured, tmp_path, {"paired/work": 1.0,
                                                         "paired/alloc": 1.0}))
    assert set(verdicts(same).values()) == {"same"}
    n = len(json.loads(measured["real"].read_text())["results"][0]["paired"]["cand_first"])
    drifting = judge(measured, planted(measured, tmp_path, {
        "paired/work": lambda i: 1.0 + 0.08 * i / n, "paired/alloc": 1.0}))
    change = drifting.instances[0].time[0]
    # Ten sessions of fresh processes: each sees its tenth of the drift, +0.8% from its start
    # to its end (less from its first block's middle to its last's).
    assert change.verdict == "unstable"
    assert change.reason.startswith("trend within each session: the ratio moved +0.")
    assert cmp.gated(drifting, "any") == []   # unstable never gates


def test_where_instructions_gate_cpu_paired_time_is_directional(measured, tmp_path):
    pairs = planted(measured, tmp_path, {"paired/work": 1.05, "paired/alloc": 1.0})
    comparison = judge(measured, pairs, time_gates=False)
    assert verdicts(comparison)[("paired/work", "ns_per_op")] == "slower"
    assert cmp.gated(comparison, "any") == []


@pytest.mark.parametrize("side, gates", [("candidate", True), ("base", False)])
def test_a_side_that_failed_its_paired_pass_fails_the_instance_on_that_side(measured, tmp_path,
                                                                            side, gates):
    error = f"paired time pass: {side}: crashed with SIGSEGV (Segmentation fault)"
    pairs = planted(measured, tmp_path, {"paired/work": 1.0, "paired/alloc": 1.0},
                    {"paired/work": error})
    comparison = judge(measured, pairs)
    work = comparison.instances[0]
    assert (work.failure, work.time) == (f"{side}: {error}", ())
    assert (("paired/work", cmp.FAILED) in cmp.gated(comparison, "any")) == gates


def test_the_comment_says_time_was_paired_and_the_json_keeps_it(measured, tmp_path):
    pairs = planted(measured, tmp_path, {"paired/work": 1.05, "paired/alloc": 1.0})
    comparison = judge(measured, pairs)
    comment = compare_format.markdown(comparison, "any")
    n = comparison.instances[0].time[0].pairs
    assert "Time was measured paired: base and candidate in one run" in comment
    assert "beyond ±1%" in comment
    assert f", {n:,} pairs |" in comment and "+5.0" in comment
    doc = json.loads(compare_json.to_json(comparison, "any"))
    again, _ = compare_json.from_json(doc, "c.json")
    assert again.paired == str(pairs) and again.settings == comparison.settings
    assert [t.pairs for i in again.instances for t in i.time] == [n, n, *[
        t.pairs for t in comparison.instances[1].time]]


def test_compare_takes_the_pairs_from_the_command_line(measured, tmp_path, capsys):
    pairs = planted(measured, tmp_path, {"paired/work": 1.05, "paired/alloc": 1.0})
    code = cli.main(["compare", str(measured["base"]), str(measured["cand"]), "--paired",
                     str(pairs), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["gate"]["failed"] == [
        {"instance": "paired/work", "metric": "ns_per_op"},
        {"instance": "paired/work", "metric": "cpu_ns_per_op"}]


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.pop("allocbench_paired"), "not the results of a paired time pass (no "
                                           "'allocbench_paired'); give the file allocbench-run "
                                           "--against wrote"),
    (lambda d: d.update(allocbench_paired=2), "paired results version 2, but this allocbench "
                                              "reads version 1; measure again with this "
                                              "allocbench"),
    (lambda d: d["results"][0]["paired"]["base_wall_ns"].__setitem__(3, -5),
     "results[0].paired.base_wall_ns[3] is -5, not a whole number of ns > 0"),
    (lambda d: d["results"][0]["paired"]["cand_cpu_ns"].__setitem__(0, 1.5),
     "results[0].paired.cand_cpu_ns[0] is 1.5, not a whole number of ns > 0"),
    (lambda d: d["results"][0]["paired"]["cand_cpu_ns"].pop(),
     "results[0].paired has series of different lengths"),
    (lambda d: d["results"][0]["paired"].update(batch_ops=0),
     "results[0].paired.batch_ops is 0, not an integer >= 1"),
    (lambda d: d["results"].append(d["results"][0]), "results[2] repeats the instance "
                                                     "'paired/work'"),
    (lambda d: d["results"][1].update(paired=None), "results[1].paired is null, not an object"),
])
def test_a_damaged_paired_file_is_refused_naming_file_and_field(measured, tmp_path, edit,
                                                                 message):
    doc = json.loads(measured["real"].read_text())
    edit(doc)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError) as e:
        paired_results.load(path)
    assert str(e.value).startswith(f"{path}: {message}")


def layout_calibration(tmp_path: Path, key: tuple, moved: dict[str, float],
                       unstable: str = "") -> dict:
    """A calibration file with an A/A′ entry per clock, read back as the gate reads it."""
    doc = {"allocbench_calibration": 1, "scenarios": [], "layout": [
        {"scenario": key[0], "args": dict(key[1]), "threads": key[2], "allocator": key[3],
         "name": key[0], "metric": metric, "relative_percent": 0.0, "low_percent": -percent,
         "high_percent": percent, "layout_percent": percent, "unstable": unstable}
        for metric, percent in moved.items()]}
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(doc))
    return calibration.load_calibration(path)


def test_an_instance_another_layout_moves_more_is_judged_at_that_bound(measured, tmp_path):
    pairs = planted(measured, tmp_path, {"paired/work": 1.05, "paired/alloc": 1.0})
    base = cmp.load_side(measured["base"])
    key = next(k for k in base.by_key() if k[0] == "paired/work")
    comparison = cmp.compare(base, cmp.load_side(measured["cand"]), Config())
    judged = paired_gate.apply(comparison, paired_results.load(pairs), Config(),
                               layout_calibration(tmp_path, key, {"ns_per_op": 6.0,
                                                                  "cpu_ns_per_op": 0.5}))
    wall, cpu = judged.instances[0].time
    # +5% lies within the 6% another layout made on the wall clock; the CPU clock's layout
    # effect is under the paired threshold, which stays.
    assert (wall.verdict, wall.threshold, cpu.verdict, cpu.threshold) == (
        "same", 6.0, "worse", 1.0)
    assert wall.noise == ("A/A′ calibration: another code layout moved it by up to 6.00%, so "
                          "it is judged at ±6.00% (not ±1%)") and cpu.noise == ""
    # An A/A′ that was unstable bounds nothing.
    shaky = paired_gate.apply(comparison, paired_results.load(pairs), Config(),
                              layout_calibration(tmp_path, key, {"ns_per_op": 6.0}, "57 pairs"))
    assert shaky.instances[0].time[0].verdict == "worse"


def test_a_damaged_layout_entry_is_refused_naming_it(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"allocbench_calibration": 1, "scenarios": [], "layout": [
        {"scenario": "a", "args": {}, "threads": 1, "allocator": "glibc", "metric": "ns_per_op",
         "layout_percent": -1, "unstable": ""}]}))
    with pytest.raises(UserError, match=re.escape(
            f"{path}: layout[0].layout_percent is -1, not a number of percent >= 0")):
        calibration.load_calibration(path)
