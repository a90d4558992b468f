"""The tolerance of a *sampled* metric: B/op that JMH and BenchmarkDotNet read from a runtime's
allocated-bytes counter rather than count, so that two runs of the same code may differ a
little.

    tolerance = max(spread, floor)
    spread = √(e_base² + e_cand²)   the files' own uncertainty, where they state it: JMH's
                                    scoreError, the half-width of the 99.9% interval of each
                                    side's mean (or computed so from rawData when JMH wrote
                                    "NaN"); the two sides' errors combined as independent
    floor  = [sampled] tolerance in allocbench.toml (bytes, or a percent of the base) if set,
             else the tool's default: BenchmarkDotNet 0.5% of the base, at least 1 B (its
             documentation: "MemoryDiagnoser is 99.5% accurate about allocated memory when
             using default settings or Job.ShortRun (or any longer job than it)", and it rounds
             BytesAllocatedPerOperation to a whole byte); JMH none (its spread is its own).
    bound  = max(5% of the base, 1 B, floor)

A side given as several files is the mean of their values, and its error the error of that
mean, √(Σ e_i²) / n: each file is one estimate (over all its forks, which is why an importer
puts it in the first fork's document only), and two files that carry the same value and error
are two estimates, not one.

The candidate is *worse* when it exceeds the base by more than the tolerance plus the budget,
*allowed* within the budget, *better* when below the base by more than the tolerance, else
*same*. It is *unstable* when there is nothing to judge with (no spread and no floor: JMH with
fewer than 3 iterations, nothing configured) or when the tolerance is wider than its bound.

The bound. The spread comes from the files, so without a bound the noisier a candidate, the
wider its own pass: a scoreError of 1e9 would call 96 → 5,096 B/op *same*. For a deterministic
benchmark the runtime's counter is exact, and JMH's scoreError on gc.alloc.rate.norm is a few
thousandths of a byte (its own bookkeeping spread over millions of ops), far below 0.1% of the
value; BenchmarkDotNet states 0.5%. The files' spread may widen the tolerance up to 5% of the
base, ten times that: the most a regression can hide behind noise (at 500 B/op, one 24-byte
object; a tolerance of 100% would judge nothing). A benchmark whose B/op moves more than that
between iterations allocates differently from one iteration to the next, and the gate cannot
judge it. The bound is never below 1 B (the resolution BenchmarkDotNet reports; also the bound
when the base allocated nothing, so that 0 → 96 B/op is judged), nor below the floor: a
configured tolerance is the policy, read at the base revision, and widens the bound with it.
Beyond the bound the metric is *unstable*: named in the summary and, unless `[sampled]
unstable = "show"`, failing the gate (compare.gated).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from allocbench.gate.config import Limit

# The floor when allocbench.toml sets none: (percent of the base, at least this many bytes).
DEFAULTS = {"BenchmarkDotNet": (0.5, 1.0)}
# The widest tolerance that still judges: (percent of the base, at least this many bytes).
BOUND = (5.0, 1.0)
SPREAD = {"scoreError": "√(base² + candidate²) of the sides' scoreError (99.9% interval "
                         "half-widths)"}


@dataclass(frozen=True)
class Tolerance:
    amount: float | None   # None: nothing to judge with
    source: str            # how it was found, for the outputs
    bound: float           # the widest amount that still judges (beyond it: unstable)


def estimate(rows: list[dict[str, Any]], field: dict[str, Any]
             ) -> tuple[float, float | None] | None:
    """One side's (value, 99.9% half-width or None): the mean of its files' values (one row per
    file carries one) and the error of that mean."""
    found = []
    for r in rows:
        section = r.get(field["section"]) or {}
        if section.get(field["key"]) is not None:
            found.append((section[field["key"]], section.get(f"error_{field['key']}")))
    if not found:
        return None
    value = sum(v for v, _ in found) / len(found)
    if any(e is None for _, e in found):
        return value, None
    return value, math.sqrt(sum(e * e for _, e in found)) / len(found)


def tolerance(field: dict[str, Any], base: tuple[float, float | None],
              cand: tuple[float, float | None], configured: Limit | None) -> Tolerance:
    spread = floor = None   # (amount, how it was found)
    if field.get("spread") and base[1] is not None and cand[1] is not None:
        spread = math.hypot(base[1], cand[1]), SPREAD.get(field["spread"], field["spread"])
    tool = field.get("sampled_by", "").split(" ")[0]
    if configured is not None:
        floor = configured.allowed(base[0]), f"[sampled] tolerance {configured}"
    elif tool in DEFAULTS:
        percent, least = DEFAULTS[tool]
        floor = (max(base[0] * percent / 100.0, least),
                 f"{tool}'s {percent:g}% accuracy, at least {least:g} {field['unit']}")
    bound = max(base[0] * BOUND[0] / 100.0, BOUND[1], floor[0] if floor else 0.0)
    found = [x for x in (spread, floor) if x is not None]
    if not found:
        return Tolerance(None, "no spread in the files (fewer than 3 iterations) and no "
                               "[sampled] tolerance in allocbench.toml", bound)
    source = found[0][1] if len(found) == 1 else \
        "the larger of " + " and ".join(how for _, how in found)
    return Tolerance(max(amount for amount, _ in found), source, bound)


def bound_rule(unit: str) -> str:
    """How the bound is found, for the outputs."""
    return (f"{BOUND[0]:g}% of the base, at least {BOUND[1]:g} {unit} and at least the "
            "configured or default tolerance")
