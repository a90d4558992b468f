"""Reading the paired time pass's results (allocbench-run --against), validated on load.

A paired document is {"allocbench_paired": 1, "complete", "context", "results"}; each result
names its instance as a results file does (name, scenario, args, threads, allocator) and holds
either "error" or a "paired" section: the batch length (`batch_ops`, per thread) and, per pair
in the order they ran, each side's batch wall and CPU time in ns and which side went first. A
journal (FILE.partial of an interrupted run) reads as the document of its pairs so far, as
results.read reads one.

What the gate judges of an entry: each side's ns per op per thread of every pair, on the wall
clock (`ns_per_op`) and on the timed threads' CPU clocks (`cpu_ns_per_op`): the metrics of the
same names that the unpaired time pass reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from allocbench.base.errors import UserError
from allocbench.base.fileio import json_path
from allocbench.base.results import read
from allocbench.base.results_check import Key, key_of
from allocbench.base.validate import Checker

VERSION = 1
FIX = "the file is damaged: measure again (allocbench-run --against, or allocbench ab)"
MARK = "allocbench_paired"
SERIES = ("base_wall_ns", "cand_wall_ns", "base_cpu_ns", "cand_cpu_ns")
# metric → (the series of each side, whether it is summed over the instance's threads)
METRICS = {"ns_per_op": (("base_wall_ns", "cand_wall_ns"), False),
           "cpu_ns_per_op": (("base_cpu_ns", "cand_cpu_ns"), True)}


@dataclass(frozen=True)
class Entry:
    name: str
    key: Key
    error: str
    batch_ops: int = 0
    pairs: int = 0
    series: dict[str, np.ndarray] | None = None   # SERIES → per-batch ns, in pair order
    sessions: tuple[int, ...] = ()   # the pairs of each session (fresh processes), in order

    def per_op(self, metric: str, threads: int) -> tuple[np.ndarray, np.ndarray]:
        """(base, candidate) ns per op per thread of every pair, for a METRICS key."""
        assert self.series is not None, "a failed entry has no pairs"
        (base, cand), summed = METRICS[metric]
        ops = float(self.batch_ops) * (threads if summed else 1)
        return self.series[base] / ops, self.series[cand] / ops


@dataclass(frozen=True)
class Paired:
    path: Path
    context: dict[str, Any]
    entries: dict[Key, Entry]
    complete: bool


def load(path: Path) -> Paired:
    """The paired document at `path`; UserError naming the file, the field and the fix."""
    path = Path(path)
    doc, origin = read(path), str(path)
    if not isinstance(doc, dict) or MARK not in doc:
        raise UserError(f"{origin}: not the results of a paired time pass (no '{MARK}'); "
                        "give the file allocbench-run --against wrote")
    c = Checker(origin, FIX)
    version = doc[MARK]
    if version != VERSION or isinstance(version, bool):
        raise UserError(f"{origin}: paired results version {version!r}, but this allocbench "
                        f"reads version {VERSION}; measure again with this allocbench")
    c.flag(doc.get("complete"), "complete")
    context = c.obj(doc.get("context"), "context")
    entries: dict[Key, Entry] = {}
    for i, result in enumerate(c.array(doc.get("results"), "results")):
        entry = _entry(c, result, json_path("results", i))
        if entry.key in entries:
            c.fail(json_path("results", i), f"repeats the instance {entry.name!r}")
        entries[entry.key] = entry
    return Paired(path, context, entries, doc["complete"])


def _entry(c: Checker, result: Any, where: str) -> Entry:
    c.obj(result, where)
    c.each(result, where, {"name": c.text, "scenario": c.text, "args": c.integers,
                           "threads": lambda v, at: c.integer(v, at, low=1),
                           "allocator": c.text})
    name, key = result["name"], key_of(result)
    if "error" in result:
        return Entry(name, key, c.text(result["error"], json_path(where, "error"), empty=False))
    at = json_path(where, "paired")
    paired = c.obj(result.get("paired"), at)
    batch_ops = c.integer(paired.get("batch_ops"), json_path(at, "batch_ops"), low=1)
    series = {}
    for name_ in SERIES:
        values = c.array(paired.get(name_), json_path(at, name_))
        for j, v in enumerate(values):
            c.want(isinstance(v, int) and not isinstance(v, bool) and v > 0,
                   json_path(json_path(at, name_), j), v, "a whole number of ns > 0")
        series[name_] = np.asarray(values, dtype=float)
    lengths = {len(v) for v in series.values()}
    if len(lengths) != 1:
        c.fail(at, f"has series of different lengths ({', '.join(map(str, sorted(lengths)))}): "
                   "every pair has four times")
    pairs = lengths.pop()
    where = json_path(at, "session_pairs")
    sessions = tuple(c.integer(v, json_path(where, j), low=0)
                     for j, v in enumerate(c.array(paired.get("session_pairs"), where)))
    if sum(sessions) != pairs:
        c.fail(where, f"adds up to {sum(sessions)} pairs, not the {pairs} measured")
    return Entry(name, key, "", batch_ops, pairs, series, sessions)
