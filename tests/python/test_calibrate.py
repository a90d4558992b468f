"""allocbench calibrate: A/A false-positive rate and minimum detectable effect."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from allocbench.base.errors import UserError
from allocbench.gate import calibration, compare, stats
from allocbench.gate.config import Config
from allocbench.commands import calibrate

DATA = Path(__file__).parent / "data" / "compare"
FIELDS = json.loads((DATA / "base.json").read_text())["fields"]
NS_PER_OP = next(f for f in FIELDS if f["gate"] == "time")


def side(forks: list[np.ndarray], name: str = "x/steady") -> compare.Side:
    docs = tuple({"fields": FIELDS, "context": {}, "results": [{
        "name": name, "scenario": name, "args": {}, "threads": 1, "allocator": "glibc",
        "alloc": {"bytes_per_op": 16}, "time": {"samples_ns_per_op": list(samples)}}]}
        for samples in forks)
    return compare.Side(Path(name), name, docs)


def a_a_rounds(rng: np.random.Generator, rounds: int, sd: float, name: str = "x/steady"
               ) -> list[tuple[compare.Side, compare.Side]]:
    """`rounds` A/A pairs: 2 forks × 5 samples a side, all from one distribution."""
    return [(side(list(rng.normal(100.0, sd, (2, 5))), name),
             side(list(rng.normal(100.0, sd, (2, 5))), name)) for _ in range(rounds)]


def shifted(rounds, factor):
    return [(a, side([np.asarray(d["results"][0]["time"]["samples_ns_per_op"]) * factor
                      for d in b.docs], b.label)) for a, b in rounds]


def detected(rounds, factor) -> float:
    """The share of rounds the real gate calls worse after slowing B down by `factor`."""
    cfg = Config()
    verdicts = []
    for a, b in shifted(rounds, factor):
        base = compare.fork_samples(next(iter(a.by_key().values())), NS_PER_OP)
        cand = compare.fork_samples(next(iter(b.by_key().values())), NS_PER_OP)
        verdicts.append(compare.time_change("ns_per_op", "ns", base, cand, threshold=5.0,
                                            settings=cfg.time,
                                            seed=compare.seed_of(a.label, "ns_per_op")).verdict)
    return verdicts.count(compare.WORSE) / len(verdicts)


def test_quiet_scenario_no_false_positives_and_an_exact_mde():
    rounds = a_a_rounds(np.random.default_rng(1), 10, sd=2.0)
    (found,) = calibrate.calibrate(rounds, Config())
    assert (found.name, found.metric, found.rounds, found.samples_per_side) == (
        "x/steady", "ns_per_op", 10, 10)
    assert found.false_positives == 0 and found.unstable_rounds == 0
    assert 5.0 < found.mde_percent < 10.0 and not found.noisy
    # No round unstable: the interval alone says the same.
    assert (found.interval_false_positives, found.interval_mde_percent) == (0, found.mde_percent)
    # The closed form is the gate's own threshold: 80% of the rounds detect a slowdown of
    # exactly the MDE, fewer detect one 0.05% smaller.
    mde = found.mde_percent / 100
    assert detected(rounds, 1 + mde + 0.0005) >= 0.8
    assert detected(rounds, 1 + mde - 0.0005) < 0.8


def test_noisy_scenario_is_marked():
    (found,) = calibrate.calibrate(a_a_rounds(np.random.default_rng(2), 10, sd=15.0), Config())
    assert found.unstable_rounds >= 8          # cv 0.15 > 0.10
    assert found.mde_percent is None and found.noisy
    assert found.interval_mde_percent > 20.0   # what gating on the interval alone could see


def test_a_rate_slows_down_by_going_down():
    change = compare.time_change("ops_per_s", "ops/s", [np.full(10, 100.0)],
                                 [np.full(10, 100.0)], threshold=5.0, settings=Config().time,
                                 seed=0)
    assert calibrate.detection_shift(change) == pytest.approx(0.05)


def test_calibrate_runs_a_a_and_compare_uses_the_result(runner, ground_truth, tmp_path,
                                                        capsys):
    out = tmp_path / "state" / "calibration.json"
    code = calibrate.run(plugin=[ground_truth], rounds=2, runner=runner, forks=1,
                         repetitions=3, min_time="0.001", filter="sized", out=out)
    printed = capsys.readouterr().out
    assert code == 0
    assert "A/A calibration, 2 rounds of 1 forks per side × 3 repetitions:" in printed
    assert "ground_truth/sized/bytes:24" in printed
    doc = json.loads(out.read_text())
    assert (doc["rounds"], doc["forks"], doc["repetitions"]) == (2, 1, 3)
    names = [(s["name"], s["metric"]) for s in doc["scenarios"]]   # both clocks, each gated
    assert names == [("ground_truth/sized/bytes:24", "ns_per_op"),
                     ("ground_truth/sized/bytes:24", "cpu_ns_per_op"),
                     ("ground_truth/sized/bytes:96", "ns_per_op"),
                     ("ground_truth/sized/bytes:96", "cpu_ns_per_op")]
    assert all(s["samples_per_side"] == 3 and s["noisy"] for s in doc["scenarios"])  # n < 5
    assert sorted(p.name for p in (out.parent / "calibration-runs" / "round-2").iterdir()) == [
        "a", "b"]
    # compare finds every calibrated instance by its pairing key.
    noise = calibration.load_calibration(out)
    runs = out.parent / "calibration-runs" / "round-1"
    comparison = compare.compare(compare.load_side(runs / "a"), compare.load_side(runs / "b"),
                                 Config(), noise)
    assert all(i.time[0].noise.startswith("A/A calibration: ") for i in comparison.instances)


# --- the noisy mark's three boundaries, each on its own (threshold 50%: binary-exact numbers) ---

def change(verdict: str = compare.SAME, low: float = -0.01) -> compare.TimeChange:
    interval = stats.Interval(0.0, low, 0.01, 0.0, low, 0.01, 0.05)
    return compare.TimeChange("ns_per_op", "ns", 10, 10, 100.0, 100.0, 0.01, 0.01, interval,
                              0.5, 50.0, verdict)


def summary(changes: list[compare.TimeChange]) -> calibrate.Calibration:
    return calibrate.summarise(("x/y", (), 1, "glibc"), "x/y", "ns_per_op", changes)


@pytest.mark.parametrize("unstable, noisy", [(2, False), (3, True)])
def test_noisy_when_more_than_a_fifth_of_the_rounds_are_unstable(unstable, noisy):
    found = summary([change(compare.UNSTABLE)] * unstable + [change()] * (10 - unstable))
    assert (found.unstable_rounds, found.noisy) == (unstable, noisy)


@pytest.mark.parametrize("low, noisy", [(-0.25, False), (-0.25 - 2 ** -10, True)])
def test_noisy_when_the_mde_exceeds_twice_the_threshold(low, noisy):
    # Detecting needs (1 + δ)(1 + low) > 1.5: low = -0.25 gives δ = 100%, twice the threshold.
    found = summary([change(low=low)] * 10)
    assert (found.mde_percent == 100.0, found.mde_percent > 100.0) == (not noisy, noisy)
    assert (found.false_positives, found.unstable_rounds, found.noisy) == (0, 0, noisy)


@pytest.mark.parametrize("positives, noisy", [(1, False), (2, True)])
def test_noisy_when_more_than_a_tenth_of_the_rounds_are_false_positives(positives, noisy):
    found = summary([change(compare.WORSE)] * positives + [change()] * (10 - positives))
    assert (found.false_positives, found.noisy) == (positives, noisy)


# --- calibrate --layout: the A/A′ paired run and the threshold it gives the paired gate ---------

def test_layout_measures_how_far_another_build_moves_each_instance(runner, build_dir, tmp_path,
                                                                   capsys):
    """The A′ here is the +10% build (tests/plugins/paired/slower): a layout effect of known
    size, so the bound it records must hold 10%, and the paired gate then lets a +5% pass."""
    paired = build_dir / "tests" / "plugins" / "paired"
    out = tmp_path / "calibration.json"
    assert calibrate.run(plugin=[paired / "base" / "paired_truth.so"], rounds=1, runner=runner,
                         forks=1, repetitions=2, min_time="0.001", filter="^paired/work$",
                         out=out, layout=[paired / "slower" / "paired_truth.so"],
                         paired_time=1.0) == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    moved = {m["metric"]: m for m in doc["layout"]}
    assert sorted(moved) == ["cpu_ns_per_op", "ns_per_op"]
    for m in moved.values():
        assert m["name"] == "paired/work" and m["unstable"] == ""
        assert m["low_percent"] <= m["relative_percent"] <= m["high_percent"]
        assert m["layout_percent"] == max(abs(m["low_percent"]), abs(m["high_percent"]))
        assert m["layout_percent"] > 7   # holds the 10% (wider where the machine was busy)
        assert (f"  paired/work {m['metric']}: {m['relative_percent']:+.2f}% "
                f"[{m['low_percent']:+.2f}%; {m['high_percent']:+.2f}%]: layout moves it by up "
                f"to {m['layout_percent']:.2f}%") in printed
    assert (tmp_path / "calibration-runs" / "layout-1.json").is_file()
    calibrated = calibration.load_calibration(out)
    key = ("paired/work", (), 1, doc["layout"][0]["allocator"])
    assert calibrated[(key, "ns_per_op")]["layout_percent"] == moved["ns_per_op"]["layout_percent"]


@pytest.mark.parametrize("kwargs, message", [
    ({"layout": [Path("a.so"), Path("b.so")]},
     "--layout gives the A′ build of each --plugin, in order: 1 --plugin and 2 --layout given"),
    ({"paired_time": 1.0}, "--paired-time sets the A/A′ paired run, which only --layout asks "
                           "for; add --layout or drop it"),
])
def test_layout_options_that_do_not_fit_are_refused(tmp_path, kwargs, message):
    with pytest.raises(UserError, match=re.escape(message)):
        calibrate.run(plugin=[Path("x.so")], out=tmp_path / "c.json", **kwargs)
