"""Statistics of the paired time measurement: cand/base - 1 from the per-pair ratios.

Owns the estimate, its interval, the "unstable" checks and the verdict of one instance × metric
measured in pairs (base and candidate batches run alternately); the harness owns the measuring.
Pure: arrays in, numbers out, no randomness.

- r_i = log(cand_i / base_i): drift, frequency changes and neighbours hit both batches of a pair
  alike and cancel here (the random order within a pair keeps what is left unbiased).
- Sessions: allocbench-run measures an instance in several sessions, each with fresh processes
  of both sides, because a process brings a speed of its own (measured on the built-in span
  scenarios: the same build 1-2% apart in two processes, for a whole session; the heap's and
  the pages' placement). With two sessions or more, each session's 10%-trimmed mean of r is one
  independent unit: estimate = their mean, interval = mean ± t(k-1)·sd/√k over the k
  sessions. (Simulated, 10 sessions of 150 pairs, AR(1) 0.5, 1% outliers, session offsets of
  sd 1%: 95% intervals miss in ~6%; the pairs taken as one run: 20% or more.)
- One session (or pairs without sessions): batch means. The pairs, in run order, make
  k = min(BLOCKS, pairs // MIN_BLOCK) consecutive blocks; each block's statistic is its
  10%-each-tail trimmed mean of r (a preempted batch, ratio ×2 or ×0.5, is cut); estimate = mean of the k statistics, interval = mean ±
  t(k-1)·sd/√k, reported as exp(·) - 1. Blocks of hundreds of pairs are far longer than the
  autocorrelation time, so their statistics are ~independent: the interval stays honest where
  one over the pairs taken as independent is not. The estimate is a (trimmed) geometric mean of
  the per-pair ratios, not a ratio of mean times.
- Unstable (the verdict is "unstable", the interval would be a lie): fewer than MIN_PAIRS pairs;
  bimodal ratios, by stats.bimodal on the ratios of the central 90% of the pairs (the tails
  dropped first: with them, the 1% of ×2 pairs hide two clusters 12% apart from a 2,000-pair
  check every time) or, with at least BIMODAL_BLOCKS blocks, on the block statistics (a stretch
  of the run at another ratio); a trend, a least-squares slope of the block statistics with
  p < TREND_P that moves the ratio by more than `relevant` from the first block to the last.
  With sessions, both checks read the ratios about their own session's (the sessions' offsets
  are the interval's business), and the trend is one within the sessions.

Measured by simulation (/tmp scripts, not kept: per pair a common level drifting 1 → 1.5 with a
wobble, shared log-normal noise of 5%, r Gaussian AR(1) of marginal sd 1% unless said, a
fraction of pairs with one side, either, ×2; 2,000 seeded datasets a row; "miss" = the 95%
interval excludes the true value, nominal 5%):

    iid, no outliers             n = 100: 4.2%   300: 5.2%   2,000: 3.9%   10,000: 4.7%
    AR(1) phi 0.5, 1% ×2         n = 100: 6.0%   300: 6.5%   2,000: 5.1%   10,000: 4.5%
      same, sd 0.5% / 5%         n = 2,000: 5.1% / 5.1%;  5% outliers: 4.5%
      a 10%-trimmed mean of all pairs with an iid standard error: 25% (the AR(1) triples the
      variance of the mean); AR(1) phi 0.8 / 0.9, n = 2,000: 5.7% / 6.7% (iid: 48% / 63%)
    planted +1%, AR(1) phi 0.5, 1% ×2: covered in 94.9% (n = 2,000), 95.5% (n = 10,000); the
      estimator is shift-equivariant in r, so this is the A/A rate again, as it should be

Unstable on those A/A datasets: 0% at n ≥ 2,000, ≤ 0.15% at n = 100-300 (trend). Bimodality
false alarms, 1,000 datasets: 0% on the central pairs (iid, AR(1) with 1% or 5% outliers, t(3),
t(1.5), skewed, 10% one-sided preemption ×1.1-2), 0.4-0.9% on the block statistics of 10
blocks (hence BIMODAL_BLOCKS), ≤ 0.3% at 20, ≤ 0.1% from 30. The trim: per-block 10% costs 1% of
the interval's width on clean data (0.156% vs 0.154% at n = 2,000, phi 0.5); with 1% of ×2
pairs the untrimmed interval is 4× as wide (0.64% vs 0.16%), with 5% 8× (1.40% vs 0.17%).
Time per call on the 2-core development VM: 2.5 ms at 10,000 pairs (0.7 ms at 2,000).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from allocbench.gate import stats

MIN_PAIRS = 100
BLOCKS = 30
MIN_BLOCK = 10         # pairs in a block, at least
TRIM = 0.10            # cut from each tail of a block before its mean
TREND_P = 0.001        # a slope of the block statistics this significant is a trend (if relevant)
BIMODAL_TAIL = 0.05    # the bimodality check looks at the log-ratios without this much each tail
BIMODAL_BLOCKS = 20    # fewer block statistics are not checked for two modes (false alarms)


@dataclass(frozen=True)
class PairedEstimate:
    """cand/base - 1 with its interval, from the per-pair ratios."""
    relative: float        # point estimate of cand/base - 1
    relative_low: float    # interval ends, same scale
    relative_high: float
    pairs: int
    blocks: int
    base_median: float     # median of base (ns/op), for display
    cand_median: float
    unstable: str          # "" or the reasons, joined by "; "
    confidence: float


def _checked(name: str, values: Sequence[float]) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of numbers, got shape {x.shape}")
    bad = ~(np.isfinite(x) & (x > 0))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name}[{i}] is {float(x[i])!r}: every value must be finite and > 0 "
                         f"({int(bad.sum())} are not)")
    return x


def block_bounds(pairs: int, most: int = BLOCKS) -> np.ndarray:
    """Where each block starts, and the end: min(most, pairs // MIN_BLOCK) consecutive blocks
    (at least one), split as np.array_split does (the first pairs % k one pair longer)."""
    k = max(1, min(most, pairs // MIN_BLOCK))
    sizes = pairs // k + (np.arange(k) < pairs % k)
    return np.concatenate([[0], np.cumsum(sizes)])


def block_statistics(r: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """The TRIM-trimmed mean of each block of `r` (scipy's trim_mean, vectorised): sort within
    blocks, drop floor(TRIM * size) values from each end, average the rest."""
    sizes = np.diff(bounds)
    block = np.repeat(np.arange(len(sizes)), sizes)
    ordered = r[np.lexsort((r, block))]
    rank = np.arange(len(r)) - bounds[block]
    cut = (TRIM * sizes).astype(int)
    keep = (rank >= cut[block]) & (rank < (sizes - cut)[block])
    sums = np.bincount(block[keep], weights=ordered[keep], minlength=len(sizes))
    return sums / (sizes - 2 * cut)


def _percent(x: float) -> str:
    """x as a signed percentage with one decimal, never "-0.0%"."""
    return f"{round(100.0 * x, 1) + 0.0:+.1f}%"


def _bimodal(r: np.ndarray, stat: np.ndarray, sizes: np.ndarray, relevant: float) -> str:
    """Two clusters of ratios, among the pairs (their central 1 - 2*BIMODAL_TAIL, so that the
    preempted batches do not blur the clusters) or among the block statistics (the candidate
    switched for a stretch of the run)."""
    cut = int(BIMODAL_TAIL * len(r))
    central = np.sort(r)[cut:len(r) - cut]
    modes = stats.bimodal(np.exp(central), relevant)
    if modes is not None:
        middle = math.log((modes.low_mean + modes.high_mean) / 2.0)
        low = int(np.count_nonzero(r < middle))
        where = "ratios"
    else:
        modes = stats.bimodal(np.exp(stat), relevant) if len(stat) >= BIMODAL_BLOCKS else None
        if modes is None:
            return ""
        middle = math.log((modes.low_mean + modes.high_mean) / 2.0)
        low = int(sizes[stat < middle].sum())
        where = "ratios from one stretch of the run to another"
    return (f"bimodal {where} ({low:,} pairs near {_percent(modes.low_mean - 1.0)}, "
            f"{len(r) - low:,} near {_percent(modes.high_mean - 1.0)})")


def _trend(stat: np.ndarray, relevant: float, x: np.ndarray | None = None) -> str:
    """A least-squares slope of the block statistics against their place `x` in the run (block
    index by default; with sessions, the place within its session from 0 to 1, each session's
    statistics about their own mean) with p < TREND_P that moves the ratio by more than
    `relevant` from the first block to the last."""
    k = len(stat)
    if k < 3:
        return ""
    places_are_indexes = x is None
    x = np.arange(k) - (k - 1) / 2.0 if x is None else x - x.mean()
    if not (x @ x) > 0:
        return ""
    slope = float(x @ (stat - stat.mean()) / (x @ x))
    residual = stat - stat.mean() - slope * x
    if slope == 0.0:
        return ""
    se = math.sqrt(float(residual @ residual) / (k - 2) / float(x @ x))
    p = 0.0 if se == 0.0 else float(2.0 * sps.t.sf(abs(slope) / se, k - 2))
    moved = math.expm1(slope * float(x.max() - x.min()))
    if p >= TREND_P or abs(moved) <= relevant:
        return ""
    where = "the run" if places_are_indexes else "each session"
    return (f"trend within {where}: the ratio moved {_percent(moved)} from the first to "
            f"the last block")


def _session_blocks(r: np.ndarray, sessions: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per session its statistic, and its blocks' (the session's share of BLOCKS, at least one)
    statistics about the session's own mean, their place within the session (0 to 1) and
    sizes: what the bimodality and trend checks read, without the sessions' offsets."""
    starts = np.concatenate([[0], np.cumsum(sessions)])
    per_session = block_statistics(r, starts)
    stats_, places, sizes = [], [], []
    for i, (start, count) in enumerate(zip(starts[:-1], sessions)):
        bounds = block_bounds(count, BLOCKS // len(sessions) + 1)
        k = len(bounds) - 1
        block = block_statistics(r[start:start + count], bounds)
        stats_.append(block - per_session[i])
        places.append(np.linspace(0.0, 1.0, k) if k > 1 else np.zeros(1))
        sizes.append(np.diff(bounds))
    return per_session, np.concatenate(stats_), np.concatenate(places), np.concatenate(sizes)


def estimate(base: Sequence[float], cand: Sequence[float], *, confidence: float = 0.95,
             relevant: float = 0.005, sessions: Sequence[int] | None = None
             ) -> PairedEstimate:
    """cand/base - 1 from paired measurements (see the module comment).

    base, cand: sequences of equal length, each value > 0 (ValueError otherwise, naming what is
    wrong); pair i is (base[i], cand[i]), in the order the pairs ran. sessions: how many pairs
    each session (fresh processes of both sides) measured, in order; None: one session.
    """
    b, c = _checked("base", base), _checked("cand", cand)
    if len(b) != len(c):
        raise ValueError(f"base has {len(b)} values and cand {len(c)}: they must pair up")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence {confidence!r} is not between 0 and 1")
    n = len(b)
    counts = np.asarray([n] if sessions is None else list(sessions), dtype=int)
    if counts.sum() != n or (counts < 0).any():
        raise ValueError(f"sessions {counts.tolist()} do not add up to the {n} pairs")
    counts = counts[counts > 0]
    if n == 0:
        nan = math.nan
        return PairedEstimate(nan, nan, nan, 0, 0, nan, nan,
                              f"0 pairs, fewer than {MIN_PAIRS}", confidence)
    r = np.log(c) - np.log(b)
    if len(counts) >= 2:
        # Each session is one draw of the processes' own speeds: the sessions, not the pairs,
        # are the independent units.
        stat, blocks, places, sizes = _session_blocks(r, counts)
    else:
        bounds = block_bounds(n)
        stat = blocks = block_statistics(r, bounds)
        places, sizes = None, np.diff(bounds)
    k = len(stat)
    center = float(stat.mean())
    if k < 2:
        half = math.inf
    else:
        spread = 0.0 if np.ptp(stat) == 0.0 else float(stat.std(ddof=1))
        half = float(sps.t.ppf(0.5 + confidence / 2.0, k - 1)) * spread / math.sqrt(k)
    reasons = []
    if n < MIN_PAIRS:
        reasons.append(f"{n:,} pair{'s' * (n != 1)}, fewer than {MIN_PAIRS}")
    if places is not None:   # the pairs' ratios about their session's: the sessions' offsets out
        r = r - np.repeat(stat, counts) + center
    reasons.append(_bimodal(r, blocks + (center if places is not None else 0.0), sizes,
                            relevant))
    reasons.append(_trend(blocks, relevant, places))
    return PairedEstimate(
        relative=math.expm1(center), relative_low=math.expm1(center - half),
        relative_high=math.expm1(center + half), pairs=n, blocks=k,
        base_median=float(np.median(b)), cand_median=float(np.median(c)),
        unstable="; ".join(x for x in reasons if x), confidence=confidence)


def verdict(est: PairedEstimate, threshold: float) -> str:
    """'unstable' if est.unstable; 'worse' if relative_low > threshold; 'better' if
    relative_high < -threshold; else 'same'. threshold is a fraction (0.02 = 2%)."""
    if est.unstable:
        return "unstable"
    if est.relative_low > threshold:
        return "worse"
    if est.relative_high < -threshold:
        return "better"
    return "same"
