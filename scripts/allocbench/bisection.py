"""Binary search for the first commit where an exact metric leaves its value at `good`.

The commits are the first-parent line after good, bad last; `differs(i)` measures commit i and
says whether its value differs from good's, or None when it cannot be measured (the build or run
failed): that commit is skipped, like `git bisect skip`, and the search probes the untested
commit nearest the middle instead.
"""

from __future__ import annotations

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


def search(count: int, differs: Callable[[int], bool | None]) -> Search:
    """`count` commits, the last (bad) known to differ. Probes at most ⌈log2 count⌉ commits,
    plus one per skip."""
    state = Search(high=count - 1)
    while state.high - state.low > 1:
        middle = (state.low + state.high) // 2
        pool = [i for i in range(state.low + 1, state.high) if i not in state.skipped]
        if not pool:
            break
        probe = min(pool, key=lambda i: (abs(i - middle), i))
        verdict = differs(probe)
        if verdict is None:
            state.skipped.append(probe)
        elif verdict:
            state.high = probe
        else:
            state.low = probe
    return state
