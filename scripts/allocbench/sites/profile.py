"""Profiling one scenario instance under heaptrack: two runs of allocbench-run-profile (the
runner whose allocations reach heaptrack's hooks), one measuring N ops per count window and one
2·N, then the per-op sites of the difference (per_op.py).

Each run is one process (--no-isolation), one instance (--filter ^name$), no time pass. The
second run's profile (.zst) is kept for heaptrack_gui and heaptrack_print; its count pass gives
the allocs/op and B/op the sites must sum to (Profiled.exact).

When they do not (the instance is not deterministic), the sum cannot say which site is to
blame, so a third run measures 3·N ops per window: its extra ops over the second run are as
many as the second run's over the first, and a site whose allocations per op are the same in
both differences allocated alike over two stretches of ops; the others are `unsteady`
(Profiled.unsteady), and a [[sites]] budget judges only the steady ones (site_budget.py). An
exact table needs no third run: a site that varied while the sum stayed exact can only have
traded allocations with another site, which a budget sees as a change, never as a pass.
"""

from __future__ import annotations

import difflib
import functools
import json
import platform
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from allocbench.base.errors import MeasurementFailed, UserError
from allocbench.base.fileio import read_json, write_atomically
from allocbench.base.names import slug
from allocbench.sites import heaptrack, per_op

HEAPTRACK = "heaptrack"
WARMUP = 3   # ops per thread before the windows, the cold one included


@dataclass(frozen=True)
class Profiled:
    instance: str
    ops: int                          # the measured ops the sites are divided by
    costs: list[per_op.SiteCost]
    count: dict[str, float]           # the second run's count pass: allocs/B per op, background
    profile: Path                     # the second run's heaptrack file
    steady: bool
    # When not exact(): the sites that allocated differently per op over the third run's
    # extra ops than over the second's (a site of one of them only included); see above.
    unsteady: frozenset[per_op.Site] = frozenset()

    def total(self) -> tuple[Fraction, Fraction]:
        """allocs/op and B/op of every site, the other threads' included."""
        return (sum((c.allocs for c in self.costs), Fraction(0)),
                sum((c.bytes for c in self.costs), Fraction(0)))

    def expected(self) -> tuple[Fraction, Fraction]:
        """What the sites must sum to: the count pass's allocs/op and B/op, which include the
        threads an op starts, plus its background (other threads) per op."""
        c = self.count
        return (Fraction(c["allocs_per_op"]) + Fraction(c["background_allocs_per_op"]),
                Fraction(c["bytes_per_op"]) + Fraction(c["background_bytes_per_op"]))

    def exact(self) -> bool:
        return self.total() == self.expected()


def instances(runner: Path, plugins: list[Path]) -> list[str]:
    command = [str(runner), *(a for p in plugins for a in ("--plugin", str(p))), "--list"]
    done = subprocess.run(command, capture_output=True, text=True, errors="replace", check=False)
    if done.returncode != 0:
        raise UserError(f"{runner} --list failed: {done.stderr.strip()[:300]}")
    return done.stdout.split("\n")[:-1] if done.stdout else []


def check_names(names: list[str], known: list[str]) -> None:
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else \
                "; 'allocbench-run --list' shows the instances"
            raise UserError(f"no scenario instance is named {name!r}{hint}")


@functools.cache
def _no_aslr() -> list[str]:
    """`setarch <arch> -R`, where it works: without address randomization, a frame that has no
    symbol (a stripped plugin) is at the same address in both runs, so its sites still pair
    up."""
    command = ["setarch", platform.machine(), "-R"]
    try:
        works = subprocess.run([*command, "true"], capture_output=True, check=False).returncode
    except OSError:
        return []
    return command if works == 0 else []


def _run(runner: Path, plugins: list[Path], name: str, ops: str, out: Path) -> dict[str, Any]:
    """One heaptrack run; the instance's result from its results file. The runs of a profile
    must do the same work outside the ops, to the byte: their command lines and file names
    have the same length (`ops` zero-padded, `out` named .run1/.run2/.run3)."""
    results = out.with_name(out.name + ".results.json")
    command = [*_no_aslr(), HEAPTRACK, "-o", str(out), str(runner),
               *(a for p in plugins for a in ("--plugin", str(p))),
               "--filter", f"^{re.escape(name)}$", "--no-time", "--no-isolation", "--quiet",
               "--count-warmup", str(WARMUP), "--count-ops", ops, "--force-count-ops",
               "--out", str(results)]
    done = subprocess.run(command, capture_output=True, text=True, errors="replace", check=False)
    zst = out.with_name(out.name + ".zst")
    if done.returncode not in (0, 1) or not zst.is_file() or not results.is_file():
        said = [line for line in done.stderr.splitlines() if line.startswith("allocbench-run")]
        tail = said or (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise MeasurementFailed(f"heaptrack {runner.name} ({name}) failed with exit code "
                                f"{done.returncode}: {' / '.join(tail)}")
    (result,) = json.loads(results.read_text())["results"]
    results.unlink()
    if result.get("error"):
        raise MeasurementFailed(f"{name} failed under heaptrack: {result['error']}")
    return result


def profile(runner: Path, plugins: list[Path], name: str, folder: Path, ops: int
            ) -> Profiled:
    """Runs `name` with `ops` and 2·`ops` ops per window, and 3·`ops` when the sites of the
    first two do not sum to the count pass; keeps the second run's profile, named after the
    instance (names.slug: short, and apart from every other instance's)."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / slug(name)
    width = len(str(3 * ops))
    runs: list[Path] = []   # their profiles
    data: list[dict[per_op.Site, Counter[int]]] = []   # their calls by site
    owned = {p.name for p in plugins}

    def measure(times: int) -> dict[str, Any]:
        run = stem.with_name(f"{stem.name}.run{times}")
        result = _run(runner, plugins, name, f"{times * ops:0{width}d}", run)
        if result["alloc"]["window_ops"] != times * ops:
            raise MeasurementFailed(f"{name}: the run of {times * ops} ops per window measured "
                                    f"{result['alloc']['window_ops']}; is {runner.name} older "
                                    "than this allocbench?")
        runs.append(run.with_name(run.name + ".zst"))
        data.append(per_op.calls_by_site(heaptrack.read(runs[-1]), owned, runner.name))
        return result

    measure(1)
    result = measure(2)
    measured = 2 * ops * result["threads"]   # the second run's extra ops: 2 windows of N more
    count = {k: result["alloc"][k] for k in ("allocs_per_op", "bytes_per_op",
                                             "background_allocs_per_op",
                                             "background_bytes_per_op")}
    kept = stem.with_name(stem.name + ".zst")
    runs[1].replace(kept)
    found = Profiled(name, measured, per_op.per_op(data[0], data[1], measured), count, kept,
                     bool(result["alloc"].get("steady", True)))
    if not found.exact():
        measure(3)
        found = replace(found, unsteady=per_op.unsteady(
            found.costs, per_op.per_op(data[1], data[2], measured)))
    for run in (runs[0], *runs[2:]):   # the second one is kept
        run.unlink()
    return found


def write(profiled: Profiled, folder: Path) -> Path:
    """<slug>.sites.json beside the profile (<slug>.zst); its path."""
    doc = {"instance": profiled.instance, "ops": profiled.ops,
           "count_pass": profiled.count, "steady": profiled.steady,
           "exact": profiled.exact(), "profile": profiled.profile.name,
           "sites": per_op.to_json(profiled.costs),
           # Looked for only when not exact (the third run): [] of an exact table says nothing.
           "unsteady": [per_op.site_json(s) for s in sorted(profiled.unsteady,
                                                           key=per_op.Site.label)]}
    path = profiled.profile.with_name(profiled.profile.name[:-len(".zst")] + ".sites.json")
    write_atomically(path, json.dumps(doc, indent=1) + "\n")
    return path


def load_tables(folder: Path) -> dict[str, list[per_op.SiteCost]]:
    """The site tables (*.sites.json) in `folder`, by instance."""
    if not folder.is_dir():
        raise UserError(f"--sites {folder}: no such folder; give the --out of allocbench "
                        "profile (it holds <instance>.sites.json)")
    tables = {}
    for path in sorted(folder.glob("*.sites.json")):
        doc = read_json(path, "the site table", "profile the instance again")
        if not isinstance(doc, dict) or not isinstance(doc.get("instance"), str) or \
                not isinstance(doc.get("sites"), list):
            raise UserError(f"{path}: not a site table of allocbench profile; profile the "
                            "instance again")
        try:
            tables[doc["instance"]] = per_op.from_json(doc["sites"])
        except (KeyError, TypeError, ValueError) as e:
            raise UserError(f"{path}: a site is damaged ({type(e).__name__}: {e}); profile "
                            "the instance again") from None
    if not tables:
        raise UserError(f"--sites {folder}: no site tables (*.sites.json) there")
    return tables
