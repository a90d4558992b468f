"""The paired time estimator (allocbench.gate.paired) on synthetic pairs with fixed seeds.

Every expectation comes from what was planted in the data (an effect, a trend, two modes),
not from running the code.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import signal
from scipy import stats as sps

from allocbench.gate import paired


def pairs(rng, n, *, effect=0.0, sd=0.01, phi=0.0, outliers=0.0, drift=0.0, datasets=None):
    """(base, cand) ns/op: a common level (drift from 1 to 1 + drift, plus noise both sides
    share), per-pair log-ratio noise AR(1)(phi) of marginal sd `sd`, a fraction `outliers` of
    pairs with one side (either) twice as slow. With `datasets`, arrays of that many rows."""
    shape = (n,) if datasets is None else (datasets, n)
    noise = rng.normal(0.0, sd * math.sqrt(1.0 - phi * phi), shape)
    noise[..., 0] = rng.normal(0.0, sd, shape[:-1])          # start stationary
    r = signal.lfilter([1.0], [1.0, -phi], noise, axis=-1)
    level = 100.0 * (1.0 + drift * np.linspace(0.0, 1.0, n)) * rng.lognormal(0.0, 0.05, shape)
    base, cand = level.copy(), level * np.exp(r) * (1.0 + effect)
    hit, side = rng.random(shape) < outliers, rng.random(shape) < 0.5
    base[hit & side] *= 2.0
    cand[hit & ~side] *= 2.0
    return base, cand


def contains(est, value):
    return est.relative_low <= value <= est.relative_high


@pytest.mark.parametrize("effect, expected", [(0.02, "worse"), (-0.02, "better")])
def test_a_planted_two_percent_is_found_and_gated_at_one_not_five(effect, expected):
    est = paired.estimate(*pairs(np.random.default_rng(1), 2000, effect=effect))
    assert contains(est, effect) and not contains(est, 0.0)
    assert est.relative == pytest.approx(effect, abs=0.002)
    assert paired.verdict(est, 0.01) == expected
    assert paired.verdict(est, 0.05) == "same"
    assert est.pairs == 2000 and est.blocks == paired.BLOCKS and est.unstable == ""


def test_a_constant_ratio_is_exact_both_ways():
    base = np.random.default_rng(2).uniform(50.0, 150.0, 600)
    est = paired.estimate(base, base * 1.05)
    assert est.relative == pytest.approx(0.05, abs=1e-12)
    assert est.relative_low == pytest.approx(est.relative_high, abs=1e-12)
    assert est.relative_low == pytest.approx(0.05, abs=1e-12)
    swapped = paired.estimate(base * 1.05, base)
    assert swapped.relative == pytest.approx(1.0 / 1.05 - 1.0, abs=1e-12)
    assert swapped.relative_high == pytest.approx(1.0 / 1.05 - 1.0, abs=1e-12)
    assert est.base_median == pytest.approx(np.median(base))
    assert est.cand_median == pytest.approx(1.05 * np.median(base))
    assert est.unstable == "" and est.confidence == 0.95


def test_level_drift_of_both_sides_cancels():
    est = paired.estimate(*pairs(np.random.default_rng(3), 3000, drift=0.5, phi=0.3))
    assert est.unstable == ""
    assert contains(est, 0.0)
    assert paired.verdict(est, 0.005) == "same"
    assert est.cand_median / est.base_median == pytest.approx(1.0, abs=0.01)


def test_the_interval_matches_a_t_interval_over_scipy_trimmed_block_means():
    base, cand = pairs(np.random.default_rng(4), 1234, phi=0.5, outliers=0.02)
    blocks = [sps.trim_mean(b, 0.1) for b in np.array_split(np.log(cand / base), 30)]
    low, high = sps.t.interval(0.9, 29, loc=np.mean(blocks), scale=sps.sem(blocks))
    est = paired.estimate(base, cand, confidence=0.9)
    assert est.blocks == 30 and est.confidence == 0.9
    assert est.relative == pytest.approx(math.expm1(np.mean(blocks)), abs=1e-12)
    assert est.relative_low == pytest.approx(math.expm1(low), abs=1e-12)
    assert est.relative_high == pytest.approx(math.expm1(high), abs=1e-12)


@pytest.mark.parametrize("n, blocks", [(99, 9), (150, 15), (299, 29), (300, 30), (10_000, 30)])
def test_blocks_hold_at_least_ten_pairs_and_are_at_most_thirty(n, blocks):
    assert paired.estimate(np.ones(n), np.full(n, 2.0)).blocks == blocks


def naive_trimmed_misses(base, cand, value):
    """Misses of the interval that takes the pairs as independent: the 10% trimmed mean of all
    log-ratios with the Tukey-McLaughlin (winsorized) standard error, one row per dataset."""
    r = np.sort(np.log(cand / base), axis=1)
    n = r.shape[1]
    g = int(0.1 * n)
    mean = r[:, g:n - g].mean(axis=1)
    winsorized = np.clip(r, r[:, [g]], r[:, [n - g - 1]])
    half = sps.t.ppf(0.975, n - 2 * g - 1) * winsorized.std(axis=1, ddof=1) / (
        (1.0 - 2.0 * g / n) * math.sqrt(n))
    return int(np.count_nonzero(np.abs(mean - math.log1p(value)) > half))


def test_coverage_under_autocorrelation_and_outliers():
    rng = np.random.default_rng(5)
    datasets, n = 400, 1500
    base, cand = pairs(rng, n, phi=0.5, outliers=0.01, drift=0.3, datasets=datasets)
    estimates = [paired.estimate(b, c) for b, c in zip(base, cand)]
    excluded = sum(not contains(e, 0.0) for e in estimates)
    assert 0.01 * datasets <= excluded <= 0.08 * datasets
    assert sum(bool(e.unstable) for e in estimates) <= 0.01 * datasets
    # Teeth: the same data, taken as independent pairs, excludes 0 about a quarter of the time
    # (the AR(1) with phi 0.5 triples the variance of the mean). A plain t over all log-ratios
    # misses 26% without the outliers; with them it is too wide (the x2 pairs dominate its sd).
    assert naive_trimmed_misses(base, cand, 0.0) > 0.15 * datasets

    base, cand = pairs(rng, n, phi=0.5, outliers=0.01, effect=0.01, datasets=datasets)
    covered = sum(contains(paired.estimate(b, c), 0.01) for b, c in zip(base, cand))
    assert covered >= 0.92 * datasets
    assert naive_trimmed_misses(base, cand, 0.01) > 0.15 * datasets


def test_preempted_base_batches_barely_move_the_estimate():
    rng = np.random.default_rng(6)
    base, cand = pairs(rng, 3000)
    clean = paired.estimate(base, cand)
    hit = rng.random(3000) < 0.02
    dirty = paired.estimate(np.where(hit, 3.0 * base, base), cand)
    # a plain mean of the log-ratios would move by 2% * log(3) = 2.2%
    assert abs(dirty.relative - clean.relative) <= 0.002
    assert dirty.unstable == ""


def test_too_few_pairs_is_unstable():
    base, cand = pairs(np.random.default_rng(7), 100, effect=0.05)
    est = paired.estimate(base[:99], cand[:99])
    assert "99 pairs" in est.unstable and paired.verdict(est, 0.01) == "unstable"
    assert "pairs, fewer" not in paired.estimate(base, cand).unstable
    tiny = paired.estimate([1.0], [2.0])
    assert tiny.blocks == 1 and tiny.unstable == "1 pair, fewer than 100" and tiny.relative == 1.0
    assert paired.estimate([], []).unstable.startswith("0 pairs")


def test_two_interleaved_ratios_are_bimodal():
    rng = np.random.default_rng(8)
    base, cand = pairs(rng, 2000, sd=0.005, outliers=0.01)
    second = rng.random(2000) < 0.5
    est = paired.estimate(base, cand * np.where(second, 1.12, 1.0))
    assert est.unstable.startswith("bimodal ratios (")
    counts = [int(c.replace(",", ""))
              for c in re.findall(r"([\d,]+) (?:pairs )?near", est.unstable)]
    assert sum(counts) == 2000 and abs(counts[1] - second.sum()) <= 40
    assert "near +12.0%" in est.unstable or "near +11.9%" in est.unstable
    assert paired.verdict(est, 0.5) == "unstable"


def test_a_stretch_of_the_run_at_another_ratio_is_bimodal():
    base, cand = pairs(np.random.default_rng(9), 3000)
    middle = np.r_[np.zeros(1000), np.ones(1000), np.zeros(1000)].astype(bool)
    est = paired.estimate(base, cand * np.where(middle, 1.05, 1.0))
    assert "bimodal ratios from one stretch" in est.unstable
    assert "2,000 pairs near +0.0%" in est.unstable and "1,000 near +5.0%" in est.unstable


def test_a_trend_larger_than_relevant_is_unstable_and_a_smaller_one_is_not():
    base, cand = pairs(np.random.default_rng(10), 3000, sd=0.001, phi=0.5)
    ramp = np.linspace(0.0, 1.0, 3000)
    est = paired.estimate(base, cand * (1.0 + 0.06 * ramp))
    moved = re.search(r"trend within the run: the ratio moved \+([\d.]+)% from the first to "
                      r"the last block", est.unstable)
    # from the first block's middle (pair 49.5) to the last's (2949.5): 6% * 2900 / 2999
    assert moved and float(moved.group(1)) == pytest.approx(5.8, abs=0.1)
    falling = paired.estimate(base, cand / (1.0 + 0.06 * ramp))
    assert "moved -" in falling.unstable
    base, cand = pairs(np.random.default_rng(11), 3000, sd=0.0005)
    slight = (base, cand * (1.0 + 0.003 * ramp))               # significant, but only 0.3%
    assert paired.estimate(*slight).unstable == ""
    assert "trend" in paired.estimate(*slight, relevant=0.002).unstable


def test_noise_is_no_trend():
    """Noisy A/A runs move the ratio by more than `relevant` from block to block, by chance."""
    rng = np.random.default_rng(12)
    base, cand = pairs(rng, 600, sd=0.05, phi=0.5, outliers=0.01, datasets=100)
    assert sum(bool(paired.estimate(b, c).unstable) for b, c in zip(base, cand)) <= 2


@pytest.mark.parametrize("base, cand, message", [
    ([1.0, 2.0, 3.0], [1.0, 2.0], "base has 3 values and cand 2"),
    ([1.0, 0.0, 3.0], [1.0, 2.0, 3.0], r"base\[1\] is 0.0"),
    ([1.0, 2.0, 3.0], [1.0, 2.0, -3.0], r"cand\[2\] is -3.0"),
    ([1.0, 2.0, math.nan], [1.0, 2.0, 3.0], r"base\[2\] is nan"),
    ([1.0, 2.0, 3.0], [math.inf, 2.0, 3.0], r"cand\[0\] is inf"),
    ([[1.0, 2.0]], [[1.0, 2.0]], "flat sequence"),
])
def test_bad_input_is_refused_naming_what_is_wrong(base, cand, message):
    with pytest.raises(ValueError, match=message):
        paired.estimate(base, cand)


def test_a_confidence_outside_0_1_is_refused():
    with pytest.raises(ValueError, match="confidence 1.0"):
        paired.estimate([1.0] * 200, [1.0] * 200, confidence=1.0)


def test_verdict_is_strict_at_the_threshold():
    def est(low, high, unstable=""):
        return paired.PairedEstimate((low + high) / 2, low, high, 500, 30, 1.0, 1.0, unstable,
                                     0.95)
    assert paired.verdict(est(0.02, 0.04), 0.02) == "same"
    assert paired.verdict(est(0.0201, 0.04), 0.02) == "worse"
    assert paired.verdict(est(-0.04, -0.02), 0.02) == "same"
    assert paired.verdict(est(-0.04, -0.0201), 0.02) == "better"
    assert paired.verdict(est(0.1, 0.2, "trend"), 0.02) == "unstable"


# Sessions: every session's processes bring a speed of their own (measured: the same build
# 1-2% apart in two processes for a whole session on the built-in span scenarios), so the
# sessions, not the pairs, are the independent units.

def sessions_of(rng, count, per, *, effect=0.0, offset_sd=0.01):
    base, cand = pairs(rng, count * per, effect=effect, phi=0.5, outliers=0.01)
    return base, cand * np.repeat(np.exp(rng.normal(0.0, offset_sd, count)), per), [per] * count


def test_sessions_with_speeds_of_their_own_keep_the_interval_honest():
    rng = np.random.default_rng(11)
    misses = naive = 0
    for _ in range(300):
        base, cand, sessions = sessions_of(rng, 10, 150)
        misses += not contains(paired.estimate(base, cand, sessions=sessions), 0.0)
        naive += not contains(paired.estimate(base, cand), 0.0)
    assert 3 <= misses <= 27         # nominal 5% of 300: 15
    assert naive > 60                # the pairs as one run: the sessions' spread unseen


def test_a_constant_ratio_over_sessions_is_exact_and_their_offsets_are_no_instability():
    base = np.full(1000, 100.0)
    est = paired.estimate(base, base * 1.05, sessions=[100] * 10)
    assert est.relative == pytest.approx(0.05, abs=1e-12)
    assert est.relative_low == est.relative_high and est.blocks == 10
    rng = np.random.default_rng(5)
    base, cand, sessions = sessions_of(rng, 10, 200, offset_sd=0.03)
    assert paired.estimate(base, cand, sessions=sessions).unstable == ""


def test_a_planted_effect_is_found_across_sessions():
    rng = np.random.default_rng(6)
    base, cand, sessions = sessions_of(rng, 10, 200, effect=0.05, offset_sd=0.005)
    est = paired.estimate(base, cand, sessions=sessions)
    assert contains(est, 0.05) and paired.verdict(est, 0.01) == "worse"


def test_sessions_must_add_up_to_the_pairs():
    with pytest.raises(ValueError, match=r"sessions \[5, 4\] do not add up to the 10 pairs"):
        paired.estimate([1.0] * 10, [1.0] * 10, sessions=[5, 4])
