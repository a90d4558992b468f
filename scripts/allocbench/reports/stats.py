"""Per-side statistics of a comparison page: what one side's time samples look like, and three
distribution tests that say when their mean should not be taken at face value.

All pure: samples in, numbers out. A side is a list of forks, each fork its samples in the
order measured; the forks concatenated in fork order are the measurement order.

- Descriptive: min, mean ± sd (sample sd, ddof = 1), median ± MAD (the *unscaled* median
  absolute deviation from the median: not multiplied by 1.4826), p75, p95, p99 (numpy's
  default linear interpolation), max, cv = sd / |mean|, sem = sd / √n, skewness and excess
  kurtosis as the bias-corrected sample statistics G1 and G2 (scipy's `skew` and `kurtosis`
  with `bias=False`; Excel's SKEW and KURT), computed here from the central moments.
- Interval: Student's t interval of the mean, mean ± t(1 − α/2, n − 1) · sem. It pools every
  sample as if independent, so it is too narrow when forks differ (the gate's two-level
  bootstrap in allocbench/stats.py accounts for that; this interval only describes a side).
- Shapiro-Wilk (scipy) on all samples; Ljung-Box (statsmodels) at lag 1 on the samples in
  measurement order: Q = n(n + 2) r1² / (n − 1) against χ²(1).
- Hartigan's dip (Hartigan & Hartigan, "The dip test of unimodality", Ann. Statist. 13(1),
  1985): the sup distance from the empirical distribution function to the nearest unimodal one,
  computed by their algorithm (Applied Statistics AS 217): alternately take the greatest
  convex minorant and the least concave majorant over the current modal interval, narrow the
  interval to where they are farthest apart, and keep the largest distance between each hull
  and the steps it leaves outside. Exact; at least 1/(2n) when there are two distinct values,
  at most 1/4, 0 for a single point mass. Tied values are handled as the limit of spreading
  each tie over an interval that shrinks to a point (the hull tests are cross products on the
  sample ranks, which do not change along that limit); for two or more distinct values this is
  the dip of the tied sample itself (the tests check it against a linear program that solves
  the definition directly, ties included).
- Dip p-value: the fraction of dips of uniform samples of the same size that are at least the
  observed one (the uniform is the least favourable unimodal null, as in Hartigan's tables),
  (1 + count) / (1 + draws) with 2000 draws from a fixed seed: reproducible, never 0, resolution
  0.0005; the null dips are computed once per n per process. Above 1000 samples the null of
  1000 is used, the dip scaled by √(n / 1000) (√n · dip converges in distribution; its
  quantiles grow by about 2% from n = 1000 to 72000 in Hartigan's and R diptest's tables, so
  the p-value is slightly small there): one simulation costs about 2 s at n = 1000.

None marks a test that cannot say anything: fewer than 3 samples for Shapiro-Wilk and the
skewness (4 for the kurtosis, Ljung-Box and the dip: with 3 samples or fewer every sample that
is not constant has the same dip, 1/(2n)), or all samples equal.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats as sps

NULL_DRAWS = 2000
NULL_SEED = 1985
NULL_MAX_N = 1000          # larger samples are compared with the null of this size, rescaled

TESTS = (
    ("Shapiro-Wilk", "low p: not normal (skewed, outliers): the mean and its interval are less "
                     "reliable; prefer the median"),
    ("Ljung-Box (lag 1)", "low p: consecutive samples are correlated (drift, warm-up, thermal or "
                          "frequency changes): the samples are not independent and the interval "
                          "of the mean is not to be trusted (too narrow under drift)"),
    ("Hartigan's dip", "low p: more than one mode (e.g. two code paths, two CPU frequencies, "
                       "ASLR layouts): a single mean describes neither mode"),
)


@dataclass(frozen=True)
class Summary:
    """One side of a comparison; see the module comment for each number's definition."""
    n: int                      # samples, all forks
    forks: int
    min: float
    mean: float
    sd: float                   # sample standard deviation (ddof = 1); 0 for n = 1
    median: float
    mad: float                  # median absolute deviation from the median, unscaled
    p75: float
    p95: float
    p99: float
    max: float
    cv: float                   # sd / |mean|; 0 when n < 2 or the mean is 0
    sem: float                  # sd / sqrt(n)
    skewness: float | None      # G1; None when n < 3 or all samples equal
    kurtosis: float | None      # excess G2; None when n < 4 or all samples equal
    ci_low: float               # Student-t interval of the mean; both = mean when n < 2
    ci_high: float
    shapiro_p: float | None     # None when n < 3 or all samples equal
    ljung_box_p: float | None   # lag 1, measurement order; None when n < 4 or all equal
    dip: float | None           # None when n < 4 or all samples equal
    dip_p: float | None


def summarize(forks: Sequence[Sequence[float]] | Sequence[np.ndarray],
              confidence: float = 0.95) -> Summary:
    """The statistics of one side's samples, `forks` in measurement order.

    REQUIRES: at least one sample; 0 < confidence < 1.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), not {confidence}")
    x = np.concatenate([np.asarray(f, dtype=float).ravel() for f in forks] or [np.empty(0)])
    n = len(x)
    if n == 0:
        raise ValueError("no samples")
    constant = bool(x.min() == x.max())
    mean = float(x.mean())
    sd = 0.0 if constant else float(x.std(ddof=1))
    median = float(np.median(x))
    sem = sd / math.sqrt(n)
    half = 0.0 if n < 2 else float(sps.t.ppf(0.5 + confidence / 2.0, n - 1)) * sem
    p75, p95, p99 = (float(v) for v in np.percentile(x, [75, 95, 99]))
    skewness, kurtosis = _shape(x) if not constant else (None, None)
    informative = not constant and n >= 4
    dip = dip_statistic(x) if informative else None
    return Summary(
        n=n, forks=len(forks), min=float(x.min()), mean=mean, sd=sd, median=median,
        mad=float(np.median(np.abs(x - median))), p75=p75, p95=p95, p99=p99, max=float(x.max()),
        cv=sd / abs(mean) if n >= 2 and mean != 0 else 0.0, sem=sem,
        skewness=skewness, kurtosis=kurtosis, ci_low=mean - half, ci_high=mean + half,
        shapiro_p=shapiro_p(x) if not constant and n >= 3 else None,
        ljung_box_p=ljung_box_p(x) if informative else None,
        dip=dip, dip_p=dip_p_value(dip, n) if dip is not None else None)


def _shape(x: np.ndarray) -> tuple[float | None, float | None]:
    """Bias-corrected skewness G1 (n >= 3) and excess kurtosis G2 (n >= 4) of a non-constant x."""
    n = len(x)
    d = x - x.mean()
    m2, m3, m4 = (float(np.mean(d ** k)) for k in (2, 3, 4))
    skew = None
    if n >= 3:
        skew = m3 / m2 ** 1.5 * math.sqrt(n * (n - 1)) / (n - 2)
    kurt = None
    if n >= 4:
        g2 = m4 / m2 ** 2 - 3.0
        kurt = ((n + 1) * g2 + 6.0) * (n - 1) / ((n - 2) * (n - 3))
    return skew, kurt


def shapiro_p(x: np.ndarray) -> float:
    """Shapiro-Wilk p-value (scipy). REQUIRES: n >= 3, not all equal. Above 5000 samples scipy
    warns that its p-value approximation was fitted for smaller n; it is still reported. Clipped
    to [0, 1]: scipy's single-precision W gives about -1e-6 at the smallest W of n = 3 (two
    equal samples), where the exact p is 0."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="p-value may not be accurate for N > 5000",
                                category=UserWarning)
        return min(1.0, max(0.0, float(sps.shapiro(x).pvalue)))


def ljung_box_p(x: np.ndarray) -> float:
    """Ljung-Box p-value at lag 1 of x in its order (statsmodels). REQUIRES: n >= 4, not all
    equal."""
    from statsmodels.stats.diagnostic import acorr_ljungbox   # slow to import: only when used
    table = acorr_ljungbox(np.asarray(x, dtype=float), lags=[1], return_df=True)
    return float(table["lb_pvalue"].iloc[0])


def dip_statistic(samples: Sequence[float] | np.ndarray) -> float:
    """Hartigan's dip of the samples' empirical distribution (see the module comment).

    REQUIRES: at least one sample.
    """
    x = np.sort(np.asarray(samples, dtype=float).ravel())
    if len(x) == 0:
        raise ValueError("no samples")
    if x[0] == x[-1]:
        return 0.0   # a single point mass is unimodal
    return _dip_counts(x.tolist()) / (2 * len(x))


def dip_p_value(dip: float, n: int) -> float:
    """The Monte Carlo p-value of a dip of n samples against the uniform null (see the module
    comment): small when the samples are multimodal."""
    if n > NULL_MAX_N:
        dip, n = dip * math.sqrt(n / NULL_MAX_N), NULL_MAX_N
    null = _null_dips(int(n))
    at_least = len(null) - int(np.searchsorted(null, dip - 1e-12, side="left"))
    return (1 + at_least) / (1 + len(null))


@functools.lru_cache(maxsize=64)
def _null_dips(n: int) -> np.ndarray:
    """The sorted dips of NULL_DRAWS uniform samples of size n, from NULL_SEED."""
    rng = np.random.default_rng(NULL_SEED)
    draws = np.sort(rng.random((NULL_DRAWS, n)), axis=1)
    dips = np.array([_dip_counts(row) if n > 1 else 0.0 for row in draws.tolist()])
    return np.sort(dips / (2 * n))


# The sorted samples x[0..n-1] as points (x[j], j): j is the count below sample j, j + 1 the
# count up to it. The greatest convex minorant (GCM) runs under the lower corners (x[j], j), the
# least concave majorant (LCM) over the upper corners (x[j], j + 1); both are hulls of the same
# points, so they share one orientation test, a cross product that needs no division (and so
# stays right for ties, x[i] == x[j]). Distances are in counts: the dip is count / (2n).

def _hull_links(x: list[float]) -> tuple[list[int], list[int]]:
    """below[j]: the vertex before j of the GCM of points 0..j; above[j]: the vertex after j
    of the LCM of points j..n-1."""
    n = len(x)
    below = [0] * n
    for j in range(1, n):
        k = j - 1
        while k > 0:   # keep k while the slope turns up at it, (k-i)/(x_k-x_i) < (j-k)/(x_j-x_k)
            i = below[k]
            if (k - i) * (x[j] - x[k]) < (j - k) * (x[k] - x[i]):
                break
            k = i
        below[j] = k
    above = [n - 1] * n
    for j in range(n - 3, -1, -1):
        k = j + 1
        while k < n - 1:   # keep k while the slope turns down at it
            m = above[k]
            if (k - j) * (x[m] - x[k]) > (m - k) * (x[k] - x[j]):
                break
            k = m
        above[j] = k
    return below, above


def _along(x: list[float], a: int, j: int, b: int) -> float:
    """How far point j lies along the hull segment a..b (0 at a, 1 at b). A segment inside one
    tie (vertical) can only be a hull's end, which the algorithm does not interpolate along; the
    rank spacing there (the limit of a spread tie) is a guard against dividing by zero."""
    if x[b] == x[a]:
        return (j - a) / (b - a)
    return (x[j] - x[a]) / (x[b] - x[a])


def _dip_counts(x: list[float]) -> float:
    """2n times the dip of the sorted samples x, which hold at least two distinct values."""
    below, above = _hull_links(x)
    low, high = 0, len(x) - 1
    dip = 1.0
    while True:
        gcm = [high]
        while gcm[-1] > low:
            gcm.append(below[gcm[-1]])
        gcm.reverse()
        lcm = [low]
        while lcm[-1] < high:
            lcm.append(above[lcm[-1]])
        if len(gcm) == 2 and len(lcm) == 2:
            break
        d, new_low, new_high = _widest_gap(x, gcm, lcm, low, high)
        if d < dip:
            break
        dip = max(dip, _gcm_gap(x, gcm, new_low), _lcm_gap(x, lcm, new_high))
        if (new_low, new_high) == (low, high):
            break
        low, high = new_low, new_high
    return dip


def _widest_gap(x: list[float], gcm: list[int], lcm: list[int], low: int, high: int
                ) -> tuple[float, int, int]:
    """The largest LCM − GCM distance at the hulls' vertices, walked left to right until they
    meet (the last one wins ties), and the modal interval it bounds: the GCM vertex at or before
    it and the LCM vertex at or after it."""
    d, new_low, new_high = 0.0, low, high
    g, c = 1, 1
    last_g, last_c = len(gcm) - 1, len(lcm) - 1
    while True:
        gv, cv = gcm[g], lcm[c]
        if gv > cv:      # an LCM vertex, over the GCM segment gcm[g-1]..gv
            a = gcm[g - 1]
            dx = cv + 1 - (a + (gv - a) * _along(x, a, cv, gv))
            c += 1
            if dx >= d:
                d, new_low, new_high = dx, a, cv
        else:            # a GCM vertex, under the LCM segment lcm[c-1]..cv
            a = lcm[c - 1]
            dx = a + 1 + (cv - a) * _along(x, a, gv, cv) - gv
            g += 1
            if dx >= d:
                d, new_low, new_high = dx, gv, cv
        g, c = min(g, last_g), min(c, last_c)
        if gcm[g] == lcm[c]:
            return d, new_low, new_high


def _gcm_gap(x: list[float], gcm: list[int], new_low: int) -> float:
    """The largest distance from the GCM up to the steps' upper corners between the old low
    (gcm[0]) and new_low."""
    gap = 0.0
    for s in range(gcm.index(new_low)):
        a, b = gcm[s], gcm[s + 1]
        for j in range(a, b + 1):
            gap = max(gap, j + 1 - (a + (b - a) * _along(x, a, j, b)))
    return gap


def _lcm_gap(x: list[float], lcm: list[int], new_high: int) -> float:
    """The largest distance from the steps' lower corners up to the LCM between new_high and
    the old high (lcm[-1])."""
    gap = 0.0
    for s in range(lcm.index(new_high), len(lcm) - 1):
        a, b = lcm[s], lcm[s + 1]
        for j in range(a, b + 1):
            gap = max(gap, a + 1 + (b - a) * _along(x, a, j, b) - j)
    return gap
