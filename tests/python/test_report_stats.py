"""The comparison page's per-side statistics (scripts/allocbench/reports/stats.py), against values worked out by
hand, published values (R's diptest, Hartigan's tables, textbook t quantiles) and an independent
linear-programming computation of the dip from its definition."""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from scipy.optimize import linprog

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from allocbench.reports import stats  # noqa: E402

# Three forks; in measurement order 4 1 3 2 10 5 3 4, sorted 1 2 3 3 4 4 5 10.
FORKS = [[4.0, 1.0, 3.0], [2.0, 10.0], [5.0, 3.0, 4.0]]

# Hartigan's statistics-faculty ages (R diptest's `statfaculty`, the paper's example).
STATFACULTY = [30, 33, 35, 36, 37, 37, 39, 39, 39, 39, 39, 40, 40, 40, 40, 41, 42, 43, 43, 43, 44,
               44, 45, 45, 46, 46, 47, 47, 48, 48, 48, 49, 50, 50, 51, 52, 52, 53, 53, 53, 53, 53,
               54, 54, 57, 57, 59, 60, 60, 60, 61, 61, 61, 61, 62, 62, 62, 62, 63, 66, 70, 72, 72]


def ljung_box_lag1(x: list[float]) -> float:
    """Q = n(n+2) r1² / (n-1) against χ²(1), r1 the lag-1 autocorrelation, from the formula."""
    n = len(x)
    m = sum(x) / n
    r1 = (sum((x[t] - m) * (x[t + 1] - m) for t in range(n - 1))
          / sum((v - m) ** 2 for v in x))
    return float(sps.chi2.sf(n * (n + 2) * r1 * r1 / (n - 1), 1))


def dip_by_lp(sample) -> float:
    """The dip from its definition, min over unimodal G of sup |F_n - G|, by linear programs.

    A unimodal G is convex left of a mode and concave right of it, with an atom allowed at the
    mode. For the empirical F_n it suffices to know G's left and right limits L_j, R_j at the
    distinct values u_j: between two of them F_n is constant, so the sup is reached at the
    limits; chords of a convex (concave) function are again convex (concave), so G may be
    taken linear between values; and a mode strictly between two values can be moved onto one
    of them. So for each mode u_k: minimise d subject to |L_j - F(u_j-)| <= d,
    |R_j - F(u_j)| <= d, 0 <= L_1, L_j <= R_j <= L_{j+1}, R_m <= 1, L_j = R_j except at u_k,
    the segment slopes nondecreasing left of u_k and nonincreasing right of it.
    """
    u, counts = np.unique(np.asarray(sample, dtype=float), return_counts=True)
    m, n = len(u), counts.sum()
    hi = np.cumsum(counts) / n
    lo = hi - counts / n
    size = 1 + 2 * m                      # d, L_0..L_{m-1}, R_0..R_{m-1}

    def var(kind: str, j: int) -> int:
        return 1 + j if kind == "L" else 1 + m + j

    def vec(**coef: float) -> np.ndarray:
        v = np.zeros(size)
        for name, c in coef.items():
            v[int(name[1:]) if name[0] == "d" else var(name[0], int(name[1:]))] += c
        return v

    def slope(j: int) -> np.ndarray:      # of the segment u_j .. u_{j+1}
        gap = u[j + 1] - u[j]
        return (vec(**{f"L{j + 1}": 1.0}) - vec(**{f"R{j}": 1.0})) / gap

    best = math.inf
    for k in range(m):
        ub, rhs, eq = [], [], []
        for j in range(m):
            for kind, target in (("L", lo[j]), ("R", hi[j])):
                ub += [vec(**{f"{kind}{j}": 1.0, "d0": -1.0}),
                       vec(**{f"{kind}{j}": -1.0, "d0": -1.0})]
                rhs += [target, -target]
            ub.append(vec(**{f"L{j}": 1.0, f"R{j}": -1.0}))
            rhs.append(0.0)
            if j + 1 < m:
                ub.append(vec(**{f"R{j}": 1.0, f"L{j + 1}": -1.0}))
                rhs.append(0.0)
            if j != k:
                eq.append(vec(**{f"L{j}": 1.0, f"R{j}": -1.0}))
        ub += [vec(L0=-1.0), vec(**{f"R{m - 1}": 1.0})]
        rhs += [0.0, 1.0]
        for j in range(m - 2):
            if j + 1 < k:
                ub.append(slope(j) - slope(j + 1))
                rhs.append(0.0)
            elif j >= k:
                ub.append(slope(j + 1) - slope(j))
                rhs.append(0.0)
        res = linprog(vec(d0=1.0), A_ub=np.array(ub), b_ub=np.array(rhs),
                      A_eq=np.array(eq) if eq else None, b_eq=np.zeros(len(eq)) if eq else None,
                      bounds=[(None, None)] * size, method="highs")
        assert res.status == 0
        best = min(best, res.fun)
    return best


# --- descriptive statistics and the interval ------------------------------------------------

def test_descriptive_statistics_match_hand_arithmetic():
    s = stats.summarize(FORKS)
    sd = math.sqrt(52 / 7)    # squared deviations from the mean 4: 9+4+1+1+0+0+1+36 = 52
    assert (s.n, s.forks, s.min, s.max, s.mean, s.median) == (8, 3, 1.0, 10.0, 4.0, 3.5)
    assert s.mad == 1.0       # |x - 3.5| sorted: .5 .5 .5 .5 1.5 1.5 2.5 6.5 -> unscaled 1.0
    # linear percentiles at rank q·(n-1): 5.25 -> 4 + .25, 6.65 -> 5 + .65·5, 6.93 -> 5 + .93·5
    assert s.p75 == pytest.approx(4.25, abs=1e-12)
    assert s.p95 == pytest.approx(8.25, abs=1e-12)
    assert s.p99 == pytest.approx(9.65, abs=1e-12)
    assert s.sd == pytest.approx(sd, rel=1e-12)
    assert s.sem == pytest.approx(sd / math.sqrt(8), rel=1e-12)
    assert s.cv == pytest.approx(sd / 4, rel=1e-12)


def test_arrays_and_lists_give_the_same_summary():
    assert stats.summarize([np.array(f) for f in FORKS]) == stats.summarize(FORKS)


def test_student_t_interval_with_textbook_quantiles():
    s = stats.summarize(FORKS)
    sem = math.sqrt(52 / 7) / math.sqrt(8)
    assert s.ci_low == pytest.approx(4 - 2.364624 * sem, rel=1e-6)    # t(0.975, 7)
    assert s.ci_high == pytest.approx(4 + 2.364624 * sem, rel=1e-6)
    s90 = stats.summarize(FORKS, confidence=0.90)
    assert s90.ci_high == pytest.approx(4 + 1.894579 * sem, rel=1e-6)  # t(0.95, 7)


def test_skewness_and_kurtosis_are_the_bias_corrected_g1_g2():
    s = stats.summarize([[1.0, 2.0, 3.0, 4.0]])
    assert s.skewness == pytest.approx(0.0, abs=1e-12)
    assert s.kurtosis == pytest.approx(-1.2, rel=1e-12)   # Excel KURT(1,2,3,4); biased: -1.36
    for sample in (sum(FORKS, []), [1.0, 2.0, 3.0, 10.0], [3.0, 1.0, 1.0, 1.0, 8.0, 2.5]):
        s = stats.summarize([sample])
        assert s.skewness == pytest.approx(sps.skew(sample, bias=False), rel=1e-10)
        assert s.kurtosis == pytest.approx(sps.kurtosis(sample, bias=False), rel=1e-10)


# --- Shapiro-Wilk and Ljung-Box ------------------------------------------------------------

def test_shapiro_wilk_matches_the_exact_distribution_for_three_samples():
    # n = 3: W = (x3 - x1)² / (2·SS); here 9 / (2·14/3) = 27/28, and exactly
    # P(W <= w) = 6/π·(asin √w − asin √(3/4)) (Shapiro & Wilk 1965).
    s = stats.summarize([[1.0, 2.0], [4.0]])
    expected = 6 / math.pi * (math.asin(math.sqrt(27 / 28)) - math.pi / 3)
    assert s.shapiro_p == pytest.approx(expected, rel=1e-5)   # scipy's W is single precision


def test_shapiro_wilk_p_is_never_negative():
    assert stats.summarize([[1.0, 1.0, 2.0]]).shapiro_p == 0.0   # smallest W of n = 3: p = 0


def test_shapiro_wilk_separates_normal_from_exponential():
    rng = np.random.default_rng(5)
    assert stats.summarize([rng.normal(100.0, 2.0, 50)]).shapiro_p > 0.1
    assert stats.summarize([rng.exponential(1.0, 50)]).shapiro_p < 0.001


def test_ljung_box_uses_the_forks_in_measurement_order():
    in_order = [4.0, 1.0, 3.0, 2.0, 10.0, 5.0, 3.0, 4.0]
    assert ljung_box_lag1(in_order) != pytest.approx(ljung_box_lag1(sorted(in_order)))
    assert stats.summarize(FORKS).ljung_box_p == pytest.approx(ljung_box_lag1(in_order),
                                                               rel=1e-9)


@pytest.mark.parametrize("sample", [
    [100.0 + t + 0.3 * (t % 3) for t in range(30)],              # drift
    [100.0 + (-1) ** t + 0.1 * (t % 4) for t in range(30)],      # alternating
])
def test_ljung_box_flags_correlated_samples(sample):
    p = stats.summarize([sample[:10], sample[10:]]).ljung_box_p
    assert p == pytest.approx(ljung_box_lag1(sample), rel=1e-6, abs=1e-12)
    assert p < 1e-3


def test_ljung_box_does_not_flag_independent_samples():
    sample = list(np.random.default_rng(5).normal(100.0, 2.0, 50))
    p = stats.summarize([sample]).ljung_box_p
    assert p == pytest.approx(ljung_box_lag1(sample), rel=1e-9)
    assert p > 0.1


# --- the dip --------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 4, 5, 10, 37, 100])
def test_dip_of_evenly_spaced_points_is_one_over_2n(n):
    assert stats.dip_statistic(3.0 + 0.7 * np.arange(n)) == pytest.approx(1 / (2 * n), rel=1e-12)


def test_dip_of_any_three_distinct_points_is_one_sixth():
    # G convex up to the middle point and concave after it meets 1/6 ... 5/6 at the three
    # points within 1/6, and no G can do better than half a step of 1/3.
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.exponential(1.0, 3)
        assert stats.dip_statistic(x) == pytest.approx(1 / 6, rel=1e-12)


@pytest.mark.parametrize("a, b", [(10, 10), (1, 9), (9, 1), (3, 7), (2, 2), (4, 1)])
def test_dip_of_two_point_masses(a, b):
    # An atom is allowed only at the mode, so G is continuous at the other point and must
    # climb through its step within d on both sides: d >= (its count)/(2n); the smaller atom
    # is the cheaper one to smooth, and a mode at the larger one with G flat elsewhere attains it.
    x = [0.0] * a + [1.0] * b
    assert stats.dip_statistic(x) == pytest.approx(min(a, b) / (2 * (a + b)), rel=1e-12)


@pytest.mark.parametrize("x, dip", [
    ([1, 1, 2, 2], 1 / 4),                    # R diptest tests/ex1.R
    ([0, 1, 3, 6], 1 / 8),                    # cumsum(0:3): 1/(2n)
    ([0, 2, 3, 5, 6], 4 / 3 / 10),            # ex1.Rout.save: 2n·dip = 1.33333, dip 0.133
    ([6, 4, 3, 1, 0], 4 / 3 / 10),            # 6 - x, the mirrored one
    ([1] + [2] * 9, 0.05),                    # Yong Lu's example
    (STATFACULTY, 7.5 / 126),                 # 2n·dip = 7.5, dip 0.0595
])
def test_dip_matches_published_r_diptest_values(x, dip):
    assert stats.dip_statistic(x) == pytest.approx(dip, rel=1e-12)


def test_a_point_mass_has_dip_zero():
    assert stats.dip_statistic([2.5]) == 0.0
    assert stats.dip_statistic([7.0] * 6) == 0.0


def samples_with_ties_and_without(count: int, largest: int):
    rng = np.random.default_rng(11)
    for i in range(count):
        n = int(rng.integers(2, largest + 1))
        yield [rng.random(n),
               rng.integers(0, 4, n).astype(float),
               np.round(rng.exponential(1.0, n), 1),
               np.concatenate([rng.normal(0, 1, n), rng.normal(6, 1, n // 2 + 1)]),
               rng.integers(0, 5, n) * 0.5 + rng.choice([0.0, 20.0], n)][i % 5]


def test_dip_matches_linear_programming_from_the_definition():
    for x in samples_with_ties_and_without(40, 12):
        expected = dip_by_lp(x) if len(set(x)) > 1 else 0.0
        assert stats.dip_statistic(x) == pytest.approx(expected, abs=1e-9), sorted(x)


def test_dip_bounds_and_invariances():
    for x in samples_with_ties_and_without(60, 40):
        if len(set(x)) == 1:
            continue
        d = stats.dip_statistic(x)
        assert 1 / (2 * len(x)) - 1e-15 <= d <= 0.25
        assert stats.dip_statistic(4.0 * x - 7.0) == pytest.approx(d, rel=1e-9)
        assert stats.dip_statistic(-x) == pytest.approx(d, rel=1e-9)
        assert stats.dip_statistic(x[::-1]) == d


# --- the dip's p-value ----------------------------------------------------------------------

def test_dip_p_value_is_a_monte_carlo_fraction_never_zero():
    assert stats.dip_p_value(0.0, 15) == 1.0                     # every null dip is >= 0
    assert stats.dip_p_value(0.25, 15) == 1 / (1 + stats.NULL_DRAWS)   # none reaches 1/4
    ps = [stats.dip_p_value(d, 15) for d in (0.05, 0.08, 0.1, 0.12, 0.15)]
    assert ps == sorted(ps, reverse=True) and all(0 < p <= 1 for p in ps)


@pytest.mark.parametrize("n, quantiles", [
    # R diptest's qDiptab (Hartigan's table re-simulated): the dip's quantiles under the uniform
    (15, {0.5: 0.083621033469191, 0.9: 0.110087496900906, 0.95: 0.118760769203664}),
    (30, {0.5: 0.061451085730434, 0.9: 0.081479137939013, 0.95: 0.088168914312667}),
])
def test_dip_p_value_agrees_with_the_published_null_quantiles(n, quantiles):
    for level, dip in quantiles.items():
        # 2000 draws: 4 standard errors of the simulated fraction
        tolerance = 4 * math.sqrt(level * (1 - level) / stats.NULL_DRAWS)
        assert stats.dip_p_value(dip, n) == pytest.approx(1 - level, abs=tolerance)


def test_a_dip_equal_to_a_null_dip_up_to_rounding_counts_as_reached():
    null = np.unique(stats._null_dips(15))
    dip = null[len(null) // 2]
    assert stats.dip_p_value(dip * (1 + 1e-15), 15) == stats.dip_p_value(dip, 15)


def test_dip_p_value_is_reproducible_across_processes():
    first = stats.dip_p_value(0.09, 21)
    stats._null_dips.cache_clear()     # as a new process would
    assert stats.dip_p_value(0.09, 21) == first


def test_dip_p_value_rescales_beyond_the_simulated_size(monkeypatch):
    monkeypatch.setattr(stats, "NULL_MAX_N", 20)
    assert stats.dip_p_value(0.05, 80) == stats.dip_p_value(0.1, 20)   # sqrt(80/20) = 2


def test_two_clusters_across_forks_are_multimodal():
    rng = np.random.default_rng(8)
    low, high = rng.normal(100.0, 1.0, 15), rng.normal(130.0, 1.0, 15)
    s = stats.summarize([low, high])
    assert s.dip == stats.dip_statistic(np.concatenate([low, high]))
    assert s.dip_p == stats.dip_p_value(s.dip, 30) < 0.01
    assert stats.summarize([low]).dip_p > 0.1      # either cluster alone is unimodal


@pytest.mark.parametrize("seed, draw", [(7, "normal"), (9, "uniform")])
def test_unimodal_samples_are_not_flagged(seed, draw):
    rng = np.random.default_rng(seed)
    x = rng.normal(100.0, 2.0, 30) if draw == "normal" else rng.uniform(90.0, 110.0, 30)
    s = stats.summarize([x[:15], x[15:]])
    assert s.dip_p == stats.dip_p_value(s.dip, 30) > 0.1


# --- small and constant samples -------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_tests_need_enough_samples(n):
    s = stats.summarize([[1.0, 2.0, 4.0, 8.0][:n]])
    assert (s.shapiro_p is None, s.skewness is None) == (n < 3, n < 3)
    assert (s.kurtosis is None, s.ljung_box_p is None) == (n < 4, n < 4)
    assert (s.dip is None, s.dip_p is None) == (n < 4, n < 4)
    if n == 1:
        assert (s.sd, s.sem, s.cv, s.ci_low, s.ci_high) == (0.0, 0.0, 0.0, 1.0, 1.0)
    if n == 2:   # mean 1.5, sem = sd/√2 = 0.5, t(0.975, 1) = 12.7062
        assert (s.ci_low, s.ci_high) == pytest.approx((1.5 - 6.3531, 1.5 + 6.3531), rel=1e-5)


@pytest.mark.parametrize("forks", [[[0.1] * 10], [[3.0], [3.0, 3.0]], [[5.0] * 20, [5.0] * 20]])
def test_equal_samples_give_no_tests_and_no_warnings(forks):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = stats.summarize(forks)
    value = forks[0][0]
    assert (s.sd, s.mad, s.sem, s.cv) == (0.0, 0.0, 0.0, 0.0)
    assert s.ci_low == s.ci_high == s.mean == pytest.approx(value)
    assert (s.skewness, s.kurtosis, s.shapiro_p, s.ljung_box_p, s.dip, s.dip_p) == (None,) * 6


def test_bad_input_is_rejected():
    with pytest.raises(ValueError):
        stats.summarize([[], []])
    with pytest.raises(ValueError):
        stats.summarize(FORKS, confidence=1.0)
    with pytest.raises(ValueError):
        stats.dip_statistic([])


def test_every_test_says_what_a_low_p_means():
    names = [name for name, _ in stats.TESTS]
    assert names == ["Shapiro-Wilk", "Ljung-Box (lag 1)", "Hartigan's dip"]
    assert all(meaning.startswith("low p: ") for _, meaning in stats.TESTS)
