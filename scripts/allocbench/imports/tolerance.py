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

The candidate is *worse* when it exceeds the base by more than the tolerance plus the budget,
*allowed* within the budget, *better* when below the base by more than the tolerance, else
*same*. No spread and no floor (JMH with fewer than 3 iterations, nothing configured): the
metric is *unstable* and never gates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from allocbench.config import Limit

# The floor when allocbench.toml sets none: (percent of the base, at least this many bytes).
DEFAULTS = {"BenchmarkDotNet": (0.5, 1.0)}
SPREAD = {"scoreError": "√(base² + candidate²) of the sides' scoreError (99.9% interval "
                         "half-widths)"}


@dataclass(frozen=True)
class Tolerance:
    amount: float | None   # None: nothing to judge with
    source: str            # how it was found, for the outputs


def estimate(rows: list[dict[str, Any]], field: dict[str, Any]
             ) -> tuple[float, float | None] | None:
    """One side's (value, 99.9% half-width or None): the distinct values of its forks (the
    forks of one file carry the same), their mean, and the error of that mean."""
    found = []
    for r in rows:
        section = r.get(field["section"]) or {}
        if section.get(field["key"]) is not None:
            found.append((section[field["key"]], section.get(f"error_{field['key']}")))
    pairs = list(dict.fromkeys(found))
    if not pairs:
        return None
    value = sum(v for v, _ in pairs) / len(pairs)
    if any(e is None for _, e in pairs):
        return value, None
    return value, math.sqrt(sum(e * e for _, e in pairs)) / len(pairs)


def tolerance(field: dict[str, Any], base: tuple[float, float | None],
              cand: tuple[float, float | None], configured: Limit | None) -> Tolerance:
    parts, amounts = [], []
    if field.get("spread") and base[1] is not None and cand[1] is not None:
        amounts.append(math.hypot(base[1], cand[1]))
        parts.append(SPREAD.get(field["spread"], field["spread"]))
    tool = field.get("sampled_by", "").split(" ")[0]
    if configured is not None:
        amounts.append(configured.allowed(base[0]))
        parts.append(f"[sampled] tolerance {configured}")
    elif tool in DEFAULTS:
        percent, least = DEFAULTS[tool]
        amounts.append(max(base[0] * percent / 100.0, least))
        parts.append(f"{tool}'s {percent:g}% accuracy, at least {least:g} {field['unit']}")
    if not amounts:
        return Tolerance(None, "no spread in the files (fewer than 3 iterations) and no "
                               "[sampled] tolerance in allocbench.toml")
    return Tolerance(max(amounts), "the larger of " + " and ".join(parts) if len(parts) > 1
                     else parts[0])
