"""The progress lines of sweep and bisect: `[i/n] label: step (elapsed, ETA)` on stderr."""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any, Callable

from allocbench.base.escape import terminal
from allocbench.history import worktrees
from allocbench.history.store import problem
from allocbench.history.sweep import Plan, label, measure

# A stored failure is replayed, not rebuilt: the line says how to measure it again.
RETRY_HINT = "(--retry-failed measures it again)"


class Progress:
    """`[i/n] label: step (elapsed, ETA)` lines on stderr. The ETA is what a revision costs
    times the ones still to measure, less the time already spent on the one being measured, so
    that the lines of a long build or run count down. What a revision costs is the median of
    those measured after the first: the first builds the tree cold and the later ones reuse it
    (dd-trace-cpp: a 460 s first probe, then a tenth of that), so the first alone is used only
    until a second is measured. The label (a git tag) and the step (which can quote a build
    log) are escaped for the terminal."""

    def __init__(self, total: int, to_measure: int):
        self.total, self.left = total, to_measure
        self.started = time.monotonic()
        self.durations: list[float] = []
        self.index, self.name = 0, ""
        self.current: float | None = None   # when the revision being measured was started

    def expect(self, to_measure: int) -> None:
        """A new count of the revisions still to measure, for a caller that learns it as it
        goes (bisect --all)."""
        self.left = to_measure

    @staticmethod
    def _clock(seconds: float) -> str:
        minutes, seconds = divmod(int(seconds), 60)
        return f"{minutes}:{seconds:02d}"

    def eta(self) -> float | None:
        """Seconds still to go, never below 0; None before a revision was measured."""
        if not self.durations:
            return None
        ahead = statistics.median(self.durations[1:] or self.durations) * max(self.left, 0)
        if self.current is not None:
            ahead -= time.monotonic() - self.current
        return max(ahead, 0.0)

    def say(self, what: str) -> None:
        elapsed = time.monotonic() - self.started
        eta = self.eta()
        later = "" if eta is None else f", ETA {self._clock(eta)}"
        print(f"allocbench: [{self.index}/{self.total}] {terminal(self.name)}: {terminal(what)} "
              f"({self._clock(elapsed)} elapsed{later})", file=sys.stderr, flush=True)

    def measure(self, plan: Plan, index: int, sha: str,
                describe: Callable[[dict[str, Any]], str] | None = None) -> dict[str, Any]:
        """The stored record of `sha`, or a new measurement, announced; `describe` words what
        a good record found (bisect: the value of its metric) after `stored:` or `measured:`."""
        self.index, self.name = index, label(plan.repo, sha)
        record = plan.stored(sha)
        if record is not None:
            self.say(self._outcome("stored", record, describe)
                     if record["status"] == "ok" else f"stored, {problem(record)} {RETRY_HINT}")
            return record
        started = self.current = time.monotonic()
        try:
            with worktrees.announcing(self.say):
                record = measure(plan, sha, self.name)
        finally:
            self.current = None
        self.left -= 1
        self.durations.append(time.monotonic() - started)
        self.say(self._outcome("measured", record, describe)
                 if record["status"] == "ok" else f"{problem(record)} — going on")
        return record

    @staticmethod
    def _outcome(how: str, record: dict[str, Any],
                 describe: Callable[[dict[str, Any]], str] | None) -> str:
        return how if describe is None else f"{how}: {describe(record)}"
