"""The largest allocation changes over a whole history, for the index: every step of an exact
allocation metric (B/op, allocs/op) between two neighbouring revisions that measured the
instance (inputs.sweep_order), largest first, each with the commit that made it when a bisect
kept in the store (history/bisected.py) named it exactly.

Largest: by the larger relative change of the two metrics (from 0: first), then by the B/op
change, so that +9 allocs/op at a release outranks +24 B/op at the next one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from allocbench.history import slim
from allocbench.reports.inputs import History, Point

METRICS = slim.STEPPED   # bytes_per_op, allocs_per_op: what the brief records keep
SHOWN = 10   # steps listed on the index; the rest are counted


@dataclass(frozen=True)
class Step:
    history: History
    name: str
    old: Point
    new: Point
    values: dict[str, tuple[float, float]]   # metric → (before, after)
    commit: dict[str, Any] | None            # the bisected step whose after is `new`

    def size(self) -> tuple[float, float]:
        def relative(before: float, after: float) -> float:
            return abs(after - before) / before if before else math.inf
        return (max(relative(*v) for v in self.values.values() if v[0] != v[1]),
                abs(self.values["bytes_per_op"][1] - self.values["bytes_per_op"][0]))


def _exact(bisects: list[dict[str, Any]], history: History) -> dict[tuple[str, str, str], dict]:
    """(scenario, before sha, after sha) → the exact step a bisect of this machine and
    allocator kept."""
    return {(doc["scenario"], step["before"], step["after"]): step
            for doc in bisects
            if (doc["machine"], doc["allocator"]) == (history.machine, history.allocator)
            for step in doc["steps"] if step["exact"]}


def steps(histories: list[History], bisects: list[dict[str, Any]]) -> list[Step]:
    """Every step of every history, largest first."""
    found = []
    for history in histories:
        exact = _exact(bisects, history)
        where: dict[str, Point] = {}                 # name → where it was last measured
        last: dict[str, list[float]] = {}            # … and what it measured there
        of: dict[str, list[Step]] = {}
        text, measured = None, []
        for point in history.measured():   # one pass over the revisions, each brief
            if point.brief["results"] == text:   # what the revision before measured: no step
                where.update(dict.fromkeys(measured, point))
                continue
            text, steps = point.brief["results"], point.steps
            measured = [name for name, values in steps.items() if values is not None]
            for name in measured:
                values, before = steps[name], last.get(name)
                if before is not None and values != before:
                    old = where[name]
                    of.setdefault(name, []).append(Step(
                        history, name, old, point,
                        {m: (before[k], values[k]) for k, m in enumerate(METRICS)},
                        exact.get((name, old.sha, point.sha))))
                where[name], last[name] = point, values
        found += [step for name in history.names() for step in of.get(name, [])]
    # Stable: steps of one size in the order of the history's names, then of its revisions.
    return sorted(found, key=lambda s: tuple(-x for x in s.size()))
