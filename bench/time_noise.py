#!/usr/bin/python3
"""Does the time gate's noise on this machine drop with a CPU clock, more shorter forks, or
pinning? A/A rounds of three fork layouts, each judged on two clocks.

usage: bench/time_noise.py [--rounds N] [--filter REGEX] [--runner PATH] [--cpu N]
                           [--min-time SECONDS] [--runs DIR] [--out FILE]
       bench/time_noise.py --from FILE   (the table of an earlier --out; measures nothing)

Every round runs the built-in plugin against itself (A/A) in three layouts, through
worktrees.run_interleaved as `ab` and `calibrate` run their forks:

  V1  3 forks × 5 repetitions × min time (0.05 s)     today's default
  V2  6 forks × 5 repetitions × half the min time      more, shorter forks, same time per side
  V3  V1 with every fork pinned to one CPU (--cpu, default 1: this process's affinity is set
      to that CPU around the forks, and allocbench-run and its per-instance children inherit
      it)

The variants take turns fork by fork (slot s of a round: V1's pair of forks, V2's two pairs,
V3's pair, the order rotating from slot to slot), so drift on the machine hits them alike.
Every variant is judged on both clocks the runner records from the same repetitions:

  wall  time.samples_ns_per_op       wall clock per op per thread (what the gate uses today)
  cpu   time.samples_cpu_ns_per_op   CPU time of the timed threads per op per thread

by allocbench's own gate: compare.fork_samples and compare.time_change per instance and round
(default settings: threshold 5%, max cv 0.10, min 5 samples, 95% confidence), then
calibrate.summarise per instance over the rounds (unstable rounds, false positives, minimum
detectable effect at 80% power, and the same for the interval alone). The table, on stdout,
sums the instance-rounds of each variant × clock and takes medians over the instances; an MDE
of "—" means the gate would miss even a huge slowdown in more than 20% of the rounds (too many
unstable ones), and the gate's median counts such instances as infinite. A caption (rounds,
instances, date, load) goes to stderr. The runner is never built here: --runner, or
$ALLOCBENCH_BUILD_DIR/bin/allocbench-run (default build/release). --out keeps the summaries and
every round's verdicts as JSON; --runs DIR keeps the runner's fork files (else a temporary
folder).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from allocbench.base import results  # noqa: E402
from allocbench.base.errors import UserError  # noqa: E402
from allocbench.harness import runners  # noqa: E402
from allocbench.history import worktrees  # noqa: E402
from allocbench.gate import compare  # noqa: E402
from allocbench.gate.config import TimeSettings  # noqa: E402
from allocbench.commands import arguments, calibrate  # noqa: E402

FORMAT = 1
FORKS = 3
REPETITIONS = 5
DEFAULT_FILTER = r"^span_creation/(bare|web_server_span/)"
CLOCKS = (("wall", "ns_per_op"), ("cpu", "cpu_ns_per_op"))   # samples_<key> in time
SETTINGS = TimeSettings()   # the gate's defaults: 5%, 0.10, 0.95, 5


@dataclass(frozen=True)
class Variant:
    key: str
    forks: int
    min_time: float
    cpu: int | None      # pinned to this CPU, or not pinned

    @property
    def label(self) -> str:
        pinned = "" if self.cpu is None else f", pinned to CPU {self.cpu}"
        return (f"{self.key}: {self.forks} forks × {REPETITIONS} repetitions × "
                f"{self.min_time:g} s{pinned}")


def variants(min_time: float, cpu: int) -> list[Variant]:
    return [Variant("V1", FORKS, min_time, None), Variant("V2", 2 * FORKS, min_time / 2, None),
            Variant("V3", FORKS, min_time, cpu)]


@contextmanager
def pinned(cpu: int | None) -> Iterator[None]:
    """This process (and so every child started meanwhile) on `cpu` alone."""
    if cpu is None:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def reason_kind(change: compare.TimeChange) -> str:
    """Why a round was unstable, in a word per check: cv, bimodal, samples, zero."""
    kinds = [kind for kind, word in (("cv", " cv "), ("bimodal", "bimodal"),
                                     ("samples", "samples, fewer"), ("zero", "not positive"))
             if word in f" {change.reason}"]
    return "+".join(kinds)


def measure_round(runner: Path, found: list[Variant], options: list[str], out: Path,
                  number: int, rounds: int) -> dict[str, tuple[compare.Side, compare.Side]]:
    """One round: each variant's A and B sides, their forks interleaved across variants."""
    subjects = [worktrees.Subject(side, ()) for side in ("a", "b")]
    per_slot = {v.key: v.forks // FORKS for v in found}
    for slot in range(FORKS):
        turn = (number * FORKS + slot) % len(found)
        for v in found[turn:] + found[:turn]:
            where = f"round {number}/{rounds}, slot {slot + 1}/{FORKS}, {v.key}"
            with pinned(v.cpu), worktrees.announcing(
                    lambda what, where=where: print(f"time_noise: {where}: {what}",
                                                    file=sys.stderr, flush=True)):
                worktrees.run_interleaved(runner, subjects, per_slot[v.key],
                                          out / v.key / f"slot-{slot + 1}",
                                          options + ["--min-time", f"{v.min_time:g}"])
    sides = {}
    for v in found:
        pair = []
        for name in ("a", "b"):
            files = sorted((out / v.key).glob(f"slot-*/{name}/fork-*.json"))
            docs = tuple(results.load(f) for f in files)
            for f, doc in zip(files, docs):
                if not doc["complete"]:
                    raise UserError(f"{f}: an incomplete run")
            pair.append(compare.Side(out / v.key, name, docs))
        sides[v.key] = (pair[0], pair[1])
    return sides


Changes = dict[tuple[str, str], dict[compare.Key, list[tuple[int, compare.TimeChange]]]]


def judge(sides: dict[str, tuple[compare.Side, compare.Side]], number: int, changes: Changes,
          names: dict[compare.Key, str]) -> None:
    """Every instance of every variant, on both clocks, through the gate: into `changes` per
    (variant, clock) and instance, with the round's number."""
    for variant, (a, b) in sides.items():
        a_rows, b_rows = a.by_key(), b.by_key()
        for clock, metric in CLOCKS:
            field = {"section": "time", "key": metric, "unit": "ns"}
            for key, rows in a_rows.items():
                names[key] = rows[0]["name"]
                base = compare.fork_samples(rows, field)
                cand = compare.fork_samples(b_rows.get(key, []), field)
                if len(base) != len(a.docs) or len(cand) != len(b.docs):
                    raise UserError(f"{rows[0]['name']}: no time.samples_{metric} in every "
                                    "fork (it failed in one, or the runner records only wall "
                                    "time: rebuild it)")
                change = compare.time_change(metric, "ns", base, cand,
                                             threshold=SETTINGS.threshold, settings=SETTINGS,
                                             seed=compare.seed_of(rows[0]["name"], metric))
                changes.setdefault((variant, clock), {}).setdefault(key, []).append(
                    (number, change))


def record(number: int, c: compare.TimeChange) -> list[Any]:
    low = high = None
    if c.interval is not None:
        low, high = (round(100 * c.interval.relative_low, 3),
                     round(100 * c.interval.relative_high, 3))
    return [number, c.verdict, reason_kind(c), low, high, round(c.base_cv, 4),
            round(c.cand_cv, 4)]


RECORD_FIELDS = ["round", "verdict", "unstable_because", "relative_low_percent",
                 "relative_high_percent", "base_cv", "cand_cv"]


def summarise(found: list[Variant], changes: Changes, names: dict[compare.Key, str]
              ) -> list[dict[str, Any]]:
    """Per variant × clock: calibrate's summary of every instance, the verdicts' totals, and
    every round's verdict per instance (RECORD_FIELDS)."""
    rows = []
    for v in found:
        for clock, metric in CLOCKS:
            instances, records = [], {}
            for key, numbered in changes[(v.key, clock)].items():
                judged = [c for _, c in numbered]
                name = names[key]
                instances.append(asdict(calibrate.summarise(key, name, metric, judged)))
                records[name] = [record(n, c) for n, c in numbered]
            verdicts = [r[1] for rs in records.values() for r in rs]
            totals = {"instance_rounds": len(verdicts),
                      "unstable": verdicts.count(compare.UNSTABLE),
                      "judged": sum(x in (compare.SAME, compare.WORSE, compare.BETTER)
                                    for x in verdicts),
                      "false_positives": sum(x in (compare.WORSE, compare.BETTER)
                                             for x in verdicts)}
            rows.append({"variant": v.key, "label": v.label, "forks": v.forks,
                         "repetitions": REPETITIONS, "min_time_s": v.min_time, "cpu": v.cpu,
                         "clock": clock, "metric": metric, "totals": totals,
                         "instances": instances, "records": records})
    return rows


def median_mde(values: list[float | None]) -> tuple[float, int]:
    """The median MDE over the instances, None counting as infinite, and how many were None."""
    return (float(np.median([math.inf if v is None else v for v in values])),
            sum(v is None for v in values))


def table(doc: dict[str, Any]) -> str:
    header = ["variant", "clock", "unstable", "false positives", "false pos. (interval alone)",
              "median MDE", "median MDE (interval alone)", "median cv"]
    lines = ["| " + " | ".join(header) + " |", "|---|---|" + "---:|" * (len(header) - 2)]
    for row in doc["rows"]:
        found = row["instances"]
        n = sum(c["rounds"] for c in found)
        unstable = sum(c["unstable_rounds"] for c in found)
        fp = sum(c["false_positives"] for c in found)
        raw_fp = sum(c["interval_false_positives"] for c in found)
        mde, missing = median_mde([c["mde_percent"] for c in found])
        gate = "—" if math.isinf(mde) else f"{mde:.1f}%"
        if missing:
            gate += f" ({missing} of {len(found)} —)"
        raw = statistics.median(c["interval_mde_percent"] for c in found)
        cv = statistics.median(c["median_cv"] for c in found)
        layout = f"{row['forks']} × {row['repetitions']} × {row['min_time_s']:g} s"
        if row["cpu"] is not None:
            layout += f", CPU {row['cpu']}"
        lines.append(f"| {row['variant']} ({layout}) | {row['clock']} | {unstable} of {n} "
                     f"({unstable / n:.0%}) | {fp} of {n} | {raw_fp} of {n} | {gate} | "
                     f"{raw:.1f}% | {cv:.3f} |")
    return "\n".join(lines) + "\n"


def caption(doc: dict[str, Any]) -> str:
    loads = [x for r in doc["load"] for x in r[1:]]
    return (f"{doc['rounds']} A/A rounds, {len(doc['instances'])} instances "
            f"({', '.join(doc['instances'])}), {doc['date']}, {doc['minutes']:.0f} min, "
            f"1-min load average {min(loads):.1f}–{max(loads):.1f} on {doc['logical_cpus']} CPUs")


def dumps(doc: dict[str, Any]) -> str:
    """JSON with every innermost list on one line (the records stay readable)."""
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    return re.sub(r"\[\s+([^\[\]{}]*?)\s+\]",
                  lambda m: "[" + " ".join(m[1].split()) + "]", text) + "\n"


def measure(args: argparse.Namespace) -> dict[str, Any]:
    build = Path(os.environ.get("ALLOCBENCH_BUILD_DIR", ROOT / "build" / "release"))
    runner = args.runner or build / "bin" / "allocbench-run"
    if not runner.is_file():
        sys.exit(f"time_noise.py: no {runner}; build it (./allocbench run) or pass --runner")
    if args.cpu not in os.sched_getaffinity(0):
        sys.exit(f"time_noise.py: --cpu {args.cpu} is not one this process may run on "
                 f"({sorted(os.sched_getaffinity(0))})")
    options = runners.options(repetitions=REPETITIONS, min_time=None, filter=args.filter,
                              no_time=False)
    runners.check(runner, options)
    found = variants(args.min_time, args.cpu)
    changes: Changes = {}
    names: dict[compare.Key, str] = {}
    load = []
    started = time.monotonic()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    with tempfile.TemporaryDirectory(prefix="time-noise-") as temp:
        runs = args.runs or Path(temp)
        for number in range(1, args.rounds + 1):
            before = os.getloadavg()[0]
            sides = measure_round(runner, found, options, runs / f"round-{number}", number,
                                  args.rounds)
            load.append([number, round(before, 2), round(os.getloadavg()[0], 2)])
            judge(sides, number, changes, names)
            context = sides["V1"][0].docs[0]["context"]
    if not names:
        sys.exit(f"time_noise.py: no instance matches --filter {args.filter}")
    return {"allocbench_time_noise": FORMAT, "date": date,
            "minutes": round((time.monotonic() - started) / 60, 1),
            "host": context.get("host"), "cpu": context.get("cpu"),
            "logical_cpus": os.cpu_count(), "runner": str(runner), "filter": args.filter,
            "rounds": args.rounds, "instances": sorted(set(names.values())),
            "settings": asdict(SETTINGS), "pinned_cpu": args.cpu, "load": load,
            "record_fields": RECORD_FIELDS, "rows": summarise(found, changes, names)}


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, metavar="FILE",
                        help="print the table of this earlier --out instead of measuring")
    parser.add_argument("--rounds", type=arguments.positive, default=10, help="A/A rounds [10]")
    parser.add_argument("--filter", default=DEFAULT_FILTER, metavar="REGEX",
                        help=f"the instances [{DEFAULT_FILTER}]")
    parser.add_argument("--runner", type=Path, metavar="PATH",
                        help="allocbench-run [$ALLOCBENCH_BUILD_DIR/bin/allocbench-run, "
                             "default build/release]")
    parser.add_argument("--cpu", type=int, default=1, metavar="N", help="V3's CPU [1]")
    parser.add_argument("--min-time", type=float, default=0.05, metavar="SECONDS",
                        help="V1's and V3's time per repetition; V2 takes half [0.05]")
    parser.add_argument("--runs", type=Path, metavar="DIR",
                        help="keep the runner's fork files here [a temporary folder]")
    parser.add_argument("--out", type=Path, metavar="FILE", help="keep the results as JSON")
    return parser.parse_args()


def main() -> None:
    args = parse_arguments()
    if args.source is not None:
        try:
            doc = json.loads(args.source.read_text())
        except (OSError, ValueError) as e:
            sys.exit(f"time_noise.py: {args.source}: {e}")
    else:
        try:
            doc = measure(args)
        except UserError as e:
            sys.exit(f"time_noise.py: {e}")
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(dumps(doc))
    print(caption(doc), file=sys.stderr)
    print(table(doc), end="")


if __name__ == "__main__":
    main()
