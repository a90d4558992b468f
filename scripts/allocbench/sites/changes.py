"""The allocation sites behind a comparison, for `ab`: the instances whose exact allocation
metrics changed (and those a [[sites]] budget covers), profiled on both sides under heaptrack,
and their per-op site changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from allocbench.base import packages
from allocbench.base.errors import MeasurementFailed, UserError
from allocbench.harness import runners
from allocbench.sites import per_op, profile

PROFILE_PACKAGES = ["heaptrack", "zstd"]
SITE_OPS = 2   # ops per window of the shorter profile run in `ab`


@dataclass(frozen=True)
class SiteChanges:
    """What `ab` learnt of the allocation sites: the site changes of the instances profiled on
    both sides; of those whose sites do not sum to their count pass on a side, which sites were
    not steady (site_budget judges the others); why profiling an instance failed; and what was
    not profiled."""
    changes: dict[str, list[per_op.SiteChange]]
    unsteady: dict[str, per_op.Unsteady] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    note: str = ""


def site_changes(comparison, base_plugins: list[Path], cand_plugins: list[Path],
                 folder: Path, limit: int, near: Path | None = None,
                 budgeted: Callable[[str], bool] = lambda name: False) -> SiteChanges:
    """The site changes of the instances whose exact allocation metrics changed (at most
    `limit`, the biggest |ΔB/op| first) and of every `budgeted` instance (a [[sites]] budget
    applies to it), profiled on both sides. For `ab`: the gate stands without them, so an
    instance whose profiling fails is named in `failed`, and the others are still profiled."""
    def alloc(inst):
        return [c for c in inst.exact if c.section == "alloc"]

    measured = [inst for inst in comparison.instances if not inst.failure]
    moved = [inst for inst in measured if any(
        c.verdict in ("worse", "better", "allowed") for c in alloc(inst))]
    moved.sort(key=lambda inst: -max(abs(c.delta or 0) for c in alloc(inst)))
    chosen = moved[:limit] + [i for i in measured if budgeted(i.name) and i not in moved[:limit]]
    if not chosen:
        return SiteChanges({})
    try:
        packages.ensure(PROFILE_PACKAGES)
    except UserError as e:
        return SiteChanges({}, note=f"skipped, heaptrack is not available "
                                    f"({str(e).splitlines()[0]}: apt-get install heaptrack)")
    runner = runners.profile_runner(near)
    found, unsteady, failed = {}, {}, {}
    for inst in chosen:
        name = inst.name
        try:
            base, cand = (profile.profile(runner, plugins, name, folder / side, SITE_OPS)
                          for side, plugins in (("base", base_plugins), ("cand", cand_plugins)))
        except MeasurementFailed as e:
            failed[name] = str(e)
            continue
        for table in (base, cand):
            profile.write(table, table.profile.parent)
        found[name] = per_op.diff(base.costs, cand.costs)
        if not (base.exact() and cand.exact()):
            unsteady[name] = per_op.Unsteady.of(base.costs, base.unsteady, cand.costs,
                                                  cand.unsteady)
    note = "" if len(moved) <= limit else \
        f"profiled {limit} of the {len(moved)} instances whose allocations changed " \
        "(--max-sites)"
    return SiteChanges(found, unsteady, failed, note)
