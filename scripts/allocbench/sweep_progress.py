"""The progress lines of sweep and bisect: `[i/n] label: step (elapsed, ETA)` on stderr."""

from __future__ import annotations

import sys
import time
from typing import Any

from allocbench.escape import terminal
from allocbench.store import problem
from allocbench.sweep import Plan, label, measure
from allocbench import revisions


class Progress:
    """`[i/n] label: step (elapsed, ETA)` lines on stderr; the ETA is the mean time of the
    revisions measured so far times the ones still to measure. The label (a git tag) and the
    step (which can quote a build log) are escaped for the terminal."""

    def __init__(self, total: int, to_measure: int):
        self.total, self.left = total, to_measure
        self.started = time.monotonic()
        self.durations: list[float] = []
        self.index, self.name = 0, ""

    @staticmethod
    def _clock(seconds: float) -> str:
        minutes, seconds = divmod(int(seconds), 60)
        return f"{minutes}:{seconds:02d}"

    def say(self, what: str) -> None:
        elapsed = time.monotonic() - self.started
        eta = ""
        if self.durations:
            eta = f", ETA {self._clock(sum(self.durations) / len(self.durations) * self.left)}"
        print(f"allocbench: [{self.index}/{self.total}] {terminal(self.name)}: {terminal(what)} "
              f"({self._clock(elapsed)} elapsed{eta})", file=sys.stderr, flush=True)

    def measure(self, plan: Plan, index: int, sha: str) -> dict[str, Any]:
        """The stored record of `sha`, or a new measurement, announced."""
        self.index, self.name = index, label(plan.repo, sha)
        record = plan.stored(sha)
        if record is not None:
            self.say("stored" if record["status"] == "ok" else f"stored, {problem(record)}")
            return record
        started = time.monotonic()
        with revisions.announcing(self.say):
            record = measure(plan, sha, self.name)
        self.left -= 1
        self.durations.append(time.monotonic() - started)
        what = "measured" if record["status"] == "ok" else f"{problem(record)} — going on"
        self.say(what)
        return record
