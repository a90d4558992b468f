"""The time gate of a paired run: each instance's time verdicts from its pairs, in place of the
unpaired ones (allocbench-run --against wrote them; gate/paired.py estimates).

A paired result compares *this* base binary with *this* candidate binary, measured together:
drift and neighbours cancel, code layout does not (two builds of one source can differ by a
percent for where their functions land). Hence its own threshold ([time] paired_threshold,
from the A/A′ measurement in docs/paired.md) and the comment's wording (compare_format.py).

Verdicts per instance and time metric: *worse* / *better* when the whole interval of cand/base
- 1 lies beyond ±threshold, *same* otherwise, *unstable* (gate/paired.py's checks; never gates);
*slower* / *faster* in place of worse / better where time is directional (the instructions pass
gates CPU cost). An instance whose paired pass failed is failed, on the side the error names (a
candidate that crashes, throws or hangs gates, as it does in the count pass).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from allocbench.base import paired_results
from allocbench.base.errors import UserError
from allocbench.base.results import Key
from allocbench.gate import compare as cmp, paired, stats
from allocbench.gate.config import Config

UNIT = "ns"


def change(metric: str, base: np.ndarray, cand: np.ndarray, sessions: tuple[int, ...], *,
           threshold: float, confidence: float) -> cmp.TimeChange:
    """The time verdict of one metric from its pairs (`sessions`: the pairs of each);
    `threshold` in percent."""
    est = paired.estimate(base, cand, confidence=confidence, relevant=threshold / 200.0,
                          sessions=sessions)
    verdict = paired.verdict(est, threshold / 100.0)
    b, c = est.base_median, est.cand_median
    interval = stats.Interval(relative=est.relative, relative_low=est.relative_low,
                              relative_high=est.relative_high, absolute=b * est.relative,
                              absolute_low=b * est.relative_low,
                              absolute_high=b * est.relative_high, tail=1.0 - confidence)
    return cmp.TimeChange(metric=metric, unit=UNIT, base_n=est.pairs, cand_n=est.pairs,
                          base_mean=b, cand_mean=c, base_cv=stats.cv(base),
                          cand_cv=stats.cv(cand), interval=interval, p_value=None,
                          threshold=threshold, verdict=verdict, reason=est.unstable,
                          pairs=est.pairs)


def _failure(error: str) -> str:
    """The instance's failure, on the side the paired pass's error names (the candidate's when
    it names none: a pair that could not be measured is not a pass)."""
    side = "base" if error.startswith("paired time pass: base:") else "candidate"
    return f"{side}: {error}"


def layout(run: paired_results.Paired) -> list[dict[str, Any]]:
    """Per instance and clock of an A/A′ run (a build against itself at another code layout,
    calibrate --layout): the estimate and interval, in percent, and `layout_percent`, the end
    of the interval farthest from 0: how far layout alone may move the instance. Failed
    instances are left out; an unstable one says why, and judges nothing."""
    out = []
    for entry in run.entries.values():
        if entry.error:
            continue
        for metric in paired_results.METRICS:
            est = paired.estimate(*entry.per_op(metric, entry.key[2]), sessions=entry.sessions)
            out.append({"scenario": entry.key[0], "args": dict(entry.key[1]),
                        "threads": entry.key[2], "allocator": entry.key[3], "name": entry.name,
                        "metric": metric, "relative_percent": 100 * est.relative,
                        "low_percent": 100 * est.relative_low,
                        "high_percent": 100 * est.relative_high,
                        "layout_percent": 100 * max(abs(est.relative_low),
                                                    abs(est.relative_high)),
                        "unstable": est.unstable})
    return out


def _threshold(configured: float, calibrated: dict[str, Any] | None) -> tuple[float, str]:
    """The instance's paired threshold, in percent, and the note when an A/A′ calibration
    raised it: a difference that another layout of the same source makes is no regression."""
    moved = (calibrated or {}).get("layout_percent")
    if moved is None or (calibrated or {}).get("layout_unstable") or moved <= configured:
        return configured, ""
    return moved, (f"A/A′ calibration: another code layout moved it by up to {moved:.2f}%, "
                   f"so it is judged at ±{moved:.2f}% (not ±{configured:g}%)")


def apply(comparison: cmp.Comparison, run: paired_results.Paired, config: Config,
          calibration: dict[tuple[Key, str], dict[str, Any]] | None = None
          ) -> cmp.Comparison:
    """`comparison` with the time of every instance `run` measured judged from its pairs, each
    by the paired threshold, or by how far another layout moved it where `calibration` (an
    A/A′ of calibrate --layout) says so and that is more."""
    if not run.complete:
        raise UserError(f"{run.path}: the pairs of an interrupted run (complete: false); the "
                        "instances it did not reach would go unjudged: measure again")
    confidence = comparison.settings.confidence
    instances = []
    for inst in comparison.instances:
        entry = run.entries.get(inst.key)
        if entry is None or inst.failure:
            instances.append(inst)
        elif entry.error:
            instances.append(replace(inst, time=(), failure=_failure(entry.error)))
        else:
            time = []
            for metric in paired_results.METRICS:
                threshold, note = _threshold(config.threshold(inst.name, paired=True),
                                             (calibration or {}).get((inst.key, metric)))
                base, cand = entry.per_op(metric, inst.key[2])
                t = replace(change(metric, base, cand, entry.sessions, threshold=threshold,
                                   confidence=confidence), noise=note)
                if not comparison.time_gates:
                    t = replace(t, verdict=cmp.DIRECTIONAL.get(t.verdict, t.verdict))
                time.append(t)
            instances.append(replace(inst, time=tuple(time)))
    return replace(comparison, instances=tuple(instances), paired=str(run.path))


def method(comparison: cmp.Comparison) -> str:
    """How paired time was judged, as the comment says it."""
    s = comparison.settings
    out = (f"Time was measured paired: base and candidate in one run, short batches of each in "
           f"turn on the same CPU, so that machine noise cancels in each pair's ratio; "
           f"{s.confidence:.0%} interval of the candidate's relative difference over sessions "
           "of fresh processes (each session's trimmed mean of the per-pair log-ratios); ")
    if comparison.time_gates:
        out += (f"worse or better only when the whole interval lies beyond "
                f"±{s.paired_threshold:g}%; *unstable* (too few pairs, bimodal ratios, a "
                "trend within sessions) never gates.")
    else:
        out += (f"directional: *slower* or *faster* when the whole interval lies beyond "
                f"±{s.paired_threshold:g}%, never gating (instructions gate CPU cost).")
    return out + (" A paired result compares this base binary with this candidate binary, "
                  "and code layout alone (where the compiler and linker put functions) moved "
                  "allocating span scenarios by up to 3% on allocbench's own machine: an "
                  "instance that moves so gets its own time_threshold (docs/paired.md).")
