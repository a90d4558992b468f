"""Searches of the first-parent line between good and bad for where an exact metric changed.

`search`: binary search for the first commit whose value differs from good's. The commits are
the line after good, bad last; `differs(i)` measures commit i and says whether its value
differs from good's, or None when it cannot be measured (the build or run failed): that commit
is skipped, like `git bisect skip`, and the search probes the untested commit nearest the
middle instead.

`every_change`: every step of the value, by divide and conquer over positions 0 (good) … last
(bad), whose values are known. An interval whose two ends have equal values is assumed to hold
no change, so a change undone before the interval's end (A → B → A) is not searched for; an
interval whose ends differ is halved at its untested commit nearest the middle (skipping as
above), the left half first, so that the changes come out in history order. Allocation counts
are exact, so equal and different are certain and no probe is repeated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class Search:
    low: int = -1                   # last index known equal to good (-1: good itself)
    high: int = 0                   # first index known to differ
    skipped: list[int] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return self.high - self.low == 1

    def suspects(self) -> range:
        """What the change may be when skips keep it from being exact: low+1 … high."""
        return range(self.low + 1, self.high + 1)


def _nearest_middle(low: int, high: int, skipped: list[int]) -> int | None:
    """The untested, unskipped index strictly between low and high nearest their middle (the
    lower of two equally near), as `git bisect skip` picks; None when there is none."""
    middle = (low + high) // 2
    pool = [i for i in range(low + 1, high) if i not in skipped]
    return min(pool, key=lambda i: (abs(i - middle), i)) if pool else None


def search(count: int, differs: Callable[[int], bool | None]) -> Search:
    """`count` commits, the last (bad) known to differ. Probes at most ⌈log2 count⌉ commits,
    plus up to two per skip (the skip, and the uneven halving around it)."""
    state = Search(high=count - 1)
    while state.high - state.low > 1:
        probe = _nearest_middle(state.low, state.high, state.skipped)
        if probe is None:
            break
        verdict = differs(probe)
        if verdict is None:
            state.skipped.append(probe)
        elif verdict:
            state.high = probe
        else:
            state.low = probe
    return state


@dataclass(frozen=True)
class Change:
    """A step from `before` to `after`: `low` is the last position known to hold `before`,
    `high` the first known to hold `after`; every position between them was skipped, so the
    step is exact only when they are neighbours."""
    low: int
    high: int
    before: float
    after: float

    @property
    def exact(self) -> bool:
        return self.high - self.low == 1

    def suspects(self) -> range:
        """The commits that may hold the step: the skipped ones and `high`."""
        return range(self.low + 1, self.high + 1)


@dataclass
class Survey:
    changes: list[Change] = field(default_factory=list)   # in history order
    skipped: list[int] = field(default_factory=list)      # in the order they were probed


def every_change(last: int, ends: tuple[float, float], value: Callable[[int], float | None],
                 found: Callable[[Change], None] = lambda change: None) -> Survey:
    """The steps between position 0 and `last`, whose values are `ends`; `value(i)` measures
    position i (None: skip it) and is the only probe, never called for the ends. `found` hears
    each step as soon as it is known, in history order. Without skips it probes at most
    k·⌈log2 last⌉ positions for the k steps it finds: at each depth of halving at most k
    intervals have different ends, and ⌈log2 last⌉ halvings leave intervals of one commit."""
    survey = Survey()
    known = {0: ends[0], last: ends[1]}
    pending = [(0, last)] if ends[0] != ends[1] else []   # a stack: the leftmost on top
    while pending:
        low, high = pending.pop()
        probe = _nearest_middle(low, high, survey.skipped)
        if probe is None:
            survey.changes.append(Change(low, high, known[low], known[high]))
            found(survey.changes[-1])
            continue
        measured = value(probe)
        if measured is None:
            survey.skipped.append(probe)
            pending.append((low, high))
            continue
        known[probe] = measured
        pending.extend(part for part in ((probe, high), (low, probe))
                       if known[part[0]] != known[part[1]])
    return survey


def probes_ahead(known: dict[int, float | None]) -> int:
    """An estimate of every_change's probes still to come, from the positions probed so far
    (None: skipped), for an ETA: ⌈log2⌉ of each interval whose ends differ, as if it held one
    step and nothing more were skipped."""
    measured = sorted(i for i, v in known.items() if v is not None)
    ahead = 0
    for low, high in zip(measured, measured[1:]):
        untested = sum(i not in known for i in range(low + 1, high))
        if untested and known[low] != known[high]:
            ahead += math.ceil(math.log2(untested + 1))
    return ahead
