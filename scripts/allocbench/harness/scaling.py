"""How a metric grows with one argument: least-squares line over a scenario's instances.

For trace fan-out this is the per-child slope (B/op per child) and the intercept (the root's
share); for any scenario with one argument that varies over three or more values while the
others stay fixed, the same fit applies. Exact rational arithmetic: B/op values are exact, so a
linear relation gives an exact slope, and two slopes can be compared for equality.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any


@dataclass(frozen=True)
class Fit:
    scenario: str             # e.g. "trace_fanout/web_trace"
    fixed: tuple[tuple[str, int], ...]  # the other arguments, e.g. (("share", 1),)
    threads: int
    argument: str             # the varying argument, e.g. "children"
    metric: str
    points: tuple[tuple[int, Fraction], ...]
    slope: Fraction
    intercept: Fraction

    @property
    def label(self) -> str:
        fixed = "".join(f"/{k}:{v}" for k, v in self.fixed)
        threads = f"/threads:{self.threads}" if self.threads != 1 else ""
        return f"{self.scenario}{fixed}{threads}"

    @property
    def exact(self) -> bool:
        """Whether every point lies on the line."""
        return all(self.intercept + self.slope * x == y for x, y in self.points)


def least_squares(points: list[tuple[int, Fraction]]) -> tuple[Fraction, Fraction]:
    n = len(points)
    sx = sum(Fraction(x) for x, _ in points)
    sy = sum(y for _, y in points)
    sxx = sum(Fraction(x) * x for x, _ in points)
    sxy = sum(x * y for x, y in points)   # y is a Fraction already
    slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    return slope, (sy - slope * sx) / n


def fits(results: list[dict[str, Any]], metric: str = "bytes_per_op",
         min_points: int = 3) -> list[Fit]:
    """Every (scenario, fixed arguments, threads, varying argument) with enough points."""
    groups: dict[tuple, list[tuple[int, Fraction]]] = {}
    for r in results:
        alloc = r.get("alloc") or {}
        if metric not in alloc or not r.get("args"):
            continue
        for varying, x in r["args"].items():
            fixed = tuple((k, v) for k, v in r["args"].items() if k != varying)
            key = (r["scenario"], fixed, r["threads"], varying)
            groups.setdefault(key, []).append((x, Fraction(alloc[metric])))
    out = []
    for (scenario, fixed, threads, varying), points in groups.items():
        points.sort()
        if len({x for x, _ in points}) < min_points:
            continue
        slope, intercept = least_squares(points)
        out.append(Fit(scenario, fixed, threads, varying, metric, tuple(points), slope,
                       intercept))
    return out
