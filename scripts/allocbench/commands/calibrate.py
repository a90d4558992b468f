"""allocbench calibrate: how noisy is the time gate on this machine? An A/A measurement.

Runs the same build against itself: --rounds rounds, each of --forks forks per side,
interleaved (A, B, A, B …) exactly as `ab` runs base and candidate. Every round is one A/A
comparison through the real time gate. Per scenario instance and time metric:

- false-positive rate: the share of rounds the gate called worse or better (nothing changed);
- minimum detectable effect (MDE): the smallest slowdown of B that the gate would call worse in
  80% of the rounds. Slowing B by δ multiplies every bootstrap resample of mean(B)/mean(A) by
  1 + δ, so a round detects it exactly when (1 + δ)(1 + low) > 1 + threshold, low being that
  round's lower bound: δ_r = (1 + threshold) / (1 + low) − 1, and the MDE is the 80th
  percentile of δ_r over the rounds (an unstable round never detects anything);
- noisy: unstable in more than 20% of the rounds, an MDE above twice the threshold (a change
  of twice the threshold would be missed), or false positives in more than 10% of the rounds;
- the same two rates for the interval alone, as if *unstable* gated too: what the instability
  checks protect against (on a loaded machine, fork-to-fork drift makes the pooled interval
  too narrow).

With --instructions, every process also measures instructions per op under callgrind, and the
calibration says which instances repeated them exactly in every process (what the exact gate
on instructions_per_op assumes) and how far the others spread.

With --layout (the same scenarios built at another code layout), also an A/A′ paired run:
per instance and clock, how far layout alone moves the paired estimate (the end of its interval
farthest from 0). The paired gate judges that instance at that threshold where it is more than
[time] paired_threshold: a difference another layout of the same source makes is no
regression (docs/paired.md, "Code layout").

Written to .allocbench/calibration.json (--out), where `compare` and `ab` find it and mark the
noisy instances; the runs are kept next to it in calibration-runs/.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from allocbench.base import paired_results
from allocbench.base.errors import UserError
from allocbench.base.escape import md_code, terminal
from allocbench.base.fileio import write_atomically
from allocbench.harness import runners
from allocbench.history import worktrees
from allocbench.gate import compare, paired_gate
from allocbench.gate.config import Config, load as load_config
from allocbench.commands import arguments

POWER = 0.8
DEFAULT_OUT = Path(".allocbench") / "calibration.json"


@dataclass(frozen=True)
class Calibration:
    scenario: str
    args: dict[str, Any]
    threads: int
    allocator: str
    name: str
    metric: str
    rounds: int
    samples_per_side: int      # median over rounds
    median_cv: float
    unstable_rounds: int
    false_positives: int
    false_positive_rate: float
    mde_percent: float | None  # None: not detectable in 80% of the rounds (too unstable)
    half_width_percent: float | None   # median half-width of the stable rounds' intervals
    threshold: float
    noisy: bool
    interval_false_positives: int      # rounds whose interval alone lies beyond ±threshold
    interval_mde_percent: float        # the MDE if unstable rounds gated too


def detection_shift(change: compare.TimeChange, interval_only: bool = False) -> float:
    """The smallest relative slowdown of the candidate that this round would call worse
    (`interval_only`: judging by the interval, even when the round is unstable)."""
    if change.interval is None or (change.verdict == compare.UNSTABLE and not interval_only):
        return math.inf
    t = change.threshold / 100.0
    if change.unit.endswith("/s"):   # a rate: slower means lower, worse when high < -t
        return max(0.0, 1.0 - (1.0 - t) / (1.0 + change.interval.relative_high))
    return max(0.0, (1.0 + t) / (1.0 + change.interval.relative_low) - 1.0)


def calibrate(rounds: list[tuple[compare.Side, compare.Side]], cfg: Config
              ) -> list[Calibration]:
    """Per instance and time metric present in every round: the A/A rates (see above)."""
    per_round = [(a.by_key(), b.by_key()) for a, b in rounds]
    keys = [k for k in per_round[0][0] if all(k in a and k in b for a, b in per_round)]
    out = []
    for key in keys:
        first = per_round[0][0][key][0]
        for field in (f for f in rounds[0][0].fields if f["gate"] == "time"):
            changes = []
            for a, b in per_round:
                base = compare.fork_samples(a[key], field)
                cand = compare.fork_samples(b[key], field)
                if base and cand:
                    changes.append(compare.time_change(
                        field["key"], field["unit"], base, cand,
                        threshold=cfg.threshold(first["name"]), settings=cfg.time,
                        seed=compare.seed_of(first["name"], field["key"])))
            if changes:
                out.append(summarise(key, first["name"], field["key"], changes))
    return out


def summarise(key: compare.Key, name: str, metric: str, changes: list[compare.TimeChange]
               ) -> Calibration:
    n = len(changes)
    threshold = changes[0].threshold
    unstable = sum(c.verdict == compare.UNSTABLE for c in changes)
    false_positives = sum(c.verdict in (compare.WORSE, compare.BETTER) for c in changes)
    shifts = sorted(detection_shift(c) for c in changes)
    mde = shifts[math.ceil(POWER * n) - 1]
    interval_mde = sorted(detection_shift(c, True) for c in changes)[math.ceil(POWER * n) - 1]
    limit = threshold / 100.0
    interval_fp = sum(c.interval is not None and (c.interval.relative_low > limit
                                                  or c.interval.relative_high < -limit)
                      for c in changes)
    widths = [(c.interval.relative_high - c.interval.relative_low) / 2 for c in changes
              if c.verdict != compare.UNSTABLE and c.interval is not None]
    half_width = 100 * float(np.median(widths)) if widths else None
    mde_percent = None if math.isinf(mde) else 100 * mde
    noisy = (unstable > 0.2 * n or mde_percent is None or mde_percent > 2 * threshold
             or false_positives > 0.1 * n)
    return Calibration(
        scenario=key[0], args=dict(key[1]), threads=key[2], allocator=key[3], name=name,
        metric=metric, rounds=n,
        samples_per_side=int(np.median([min(c.base_n, c.cand_n) for c in changes])),
        median_cv=float(np.median([max(c.base_cv, c.cand_cv) for c in changes])),
        unstable_rounds=unstable, false_positives=false_positives,
        false_positive_rate=false_positives / n, mde_percent=mde_percent,
        half_width_percent=half_width, threshold=threshold, noisy=noisy,
        interval_false_positives=interval_fp, interval_mde_percent=100 * interval_mde)


@dataclass(frozen=True)
class Repeatability:
    """instructions_per_op of one instance over every process of the calibration."""
    name: str
    processes: int
    values: tuple[float, ...]   # the distinct values, sorted

    @property
    def repeatable(self) -> bool:
        return len(self.values) == 1

    @property
    def spread_percent(self) -> float:
        low, high = self.values[0], self.values[-1]
        return 100.0 * (high - low) / low if low else 0.0


def repeatability(rounds: list[tuple[compare.Side, compare.Side]]) -> list[Repeatability]:
    """Per instance measured with --instructions in every process: the values it took."""
    seen: dict[compare.Key, tuple[str, list[float]]] = {}
    for side in (side for pair in rounds for side in pair):
        for key, rows in side.by_key().items():
            for r in rows:
                value = (r.get("instructions") or {}).get("instructions_per_op")
                if value is not None:
                    seen.setdefault(key, (r["name"], []))[1].append(value)
    return [Repeatability(name, len(values), tuple(sorted(set(values))))
            for name, values in seen.values()]


def repeatability_text(found: list[Repeatability], markdown: bool) -> str:
    """'Instructions per op, 12 processes each: 38 of 46 instances identical in every
    process', then the others with their spread."""
    name = md_code if markdown else terminal
    processes = min(r.processes for r in found)
    same = sum(r.repeatable for r in found)
    lines = [f"Instructions per op, {processes} processes each: {same} of {len(found)} "
             "instances identical in every process."]
    for r in found:
        if not r.repeatable:
            lines.append(f"{'- ' if markdown else '  '}{name(r.name)}: {len(r.values)} "
                         f"values, {r.values[0]:,.3f}–{r.values[-1]:,.3f} Ir/op "
                         f"(spread {r.spread_percent:.3g}%)")
    return "\n".join(lines) + "\n"


def layout_text(moved: list[dict[str, Any]], markdown: bool) -> str:
    """'A/A′ (another code layout), paired:', then per instance and clock the estimate, its
    interval and how far layout may move it (what the paired gate allows for)."""
    name = md_code if markdown else terminal
    lines = ["A/A′ (the same scenarios at another code layout), paired:"]
    for m in moved:
        what = (f"unstable ({m['unstable']})" if m["unstable"] else
                f"{m['relative_percent']:+.2f}% [{m['low_percent']:+.2f}%; "
                f"{m['high_percent']:+.2f}%]: layout moves it by up to "
                f"{m['layout_percent']:.2f}%")
        lines.append(f"{'- ' if markdown else '  '}{name(m['name'])} {m['metric']}: {what}")
    return "\n".join(lines) + "\n"


def table(found: list[Calibration], markdown: bool) -> str:
    """The console table or markdown; instance names (from the results) escaped for either."""
    header = ["scenario", "samples/side", "cv", "unstable", "false positives", "MDE",
              "false pos. (interval alone)", "MDE (interval alone)", ""]
    name = md_code if markdown else terminal
    rows = [[name(c.name + ("" if c.metric == "ns_per_op" else f" {c.metric}")),
             str(c.samples_per_side), f"{c.median_cv:.3f}", f"{c.unstable_rounds}/{c.rounds}",
             f"{c.false_positives}/{c.rounds}",
             "—" if c.mde_percent is None else f"{c.mde_percent:.1f}%",
             f"{c.interval_false_positives}/{c.rounds}", f"{c.interval_mde_percent:.1f}%",
             "noisy" if c.noisy else ""] for c in found]
    if markdown:
        lines = ["| " + " | ".join(header[:-1]) + " |", "|---|" + "---:|" * (len(header) - 2)]
        lines += ["| " + r[0] + " | " + " | ".join(r[1:-1]) + (" ⚠️ |" if r[-1] else " |")
                  for r in rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    return "\n".join("  ".join([r[0].ljust(widths[0])] + [r[i].rjust(widths[i])
                                                          for i in range(1, len(r))]).rstrip()
                     for r in [header] + rows) + "\n"


def overall(found: list[Calibration], threshold: float) -> str:
    """One summary per time metric (the wall clock's ns_per_op, the CPU clock's
    cpu_ns_per_op), each on its own line, named when there are several."""
    metrics = list(dict.fromkeys(c.metric for c in found))
    if len(metrics) > 1:
        return "\n".join(f"{m}: {overall([c for c in found if c.metric == m], threshold)}"
                         for m in metrics)
    rounds = sum(c.rounds for c in found)
    fp = sum(c.false_positives for c in found)
    unstable = sum(c.unstable_rounds for c in found)
    mdes = [c.mde_percent for c in found if c.mde_percent is not None]
    mde = (f"median MDE {np.median(mdes):.1f}%" if mdes else
           "no MDE: every instance was unstable in more than 20% of the rounds")
    raw_fp = sum(c.interval_false_positives for c in found)
    raw_mde = np.median([c.interval_mde_percent for c in found])
    return (f"threshold {threshold:g}%: false positives in {fp} of {rounds} instance-rounds "
            f"({fp / rounds:.1%}), unstable {unstable} ({unstable / rounds:.0%}); {mde}; "
            f"{sum(c.noisy for c in found)} of {len(found)} instances noisy. The interval "
            f"alone: false positives {raw_fp} ({raw_fp / rounds:.1%}), median MDE "
            f"{raw_mde:.1f}%")


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plugin", action="append", default=[], type=Path, metavar="PATH",
                        help="scenario plugin to calibrate (repeatable) [the built-in ones]")
    parser.add_argument("--rounds", type=arguments.positive, default=10, metavar="N",
                        help="A/A comparisons [10]")
    arguments.add_run_arguments(parser, forks=3, with_no_time=False)
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="time settings [./allocbench.toml if present]")
    parser.add_argument("--threshold", type=arguments.percent, metavar="PERCENT",
                        help="time threshold in percent [the config's, 5]")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, metavar="FILE",
                        help=f"where compare finds it [{DEFAULT_OUT}]")
    parser.add_argument("--format", choices=("console", "markdown"), default="console",
                        help="the table as console text or markdown [console]")
    parser.add_argument("--layout", action="append", default=[], type=Path, metavar="PATH",
                        help="the same scenarios built at another code layout (e.g. with "
                             "-falign-functions=64), one per --plugin in order: also an A/A′ "
                             "paired run, whose per-instance layout effect the paired gate "
                             "allows for (docs/paired.md)")
    parser.add_argument("--paired-time", type=arguments.positive_seconds, metavar="SECONDS",
                        help="time per instance of the A/A′ paired run "
                             f"[{runners.PAIRED_TIME_S:g}]")


def run(*, plugin: list[Path], rounds: int = 10, runner: Path | None = None, forks: int = 3,
        repetitions: int | None = None, min_time: str | None = None, filter: str | None = None,
        instance_timeout: str | None = None, config: Path | None = None,
        threshold: float | None = None, out: Path = DEFAULT_OUT, format: str = "console",
        instructions: bool = False, estimated_cycles: bool = False,
        layout: list[Path] | None = None, paired_time: float | None = None) -> int:
    layout = layout or []
    if layout and len(layout) != len(plugin):
        raise UserError(f"--layout gives the A′ build of each --plugin, in order: {len(plugin)} "
                        f"--plugin and {len(layout)} --layout given")
    if paired_time is not None and not layout:
        raise UserError("--paired-time sets the A/A′ paired run, which only --layout asks for; "
                        "add --layout or drop it")
    cfg = load_config(config)
    if threshold is not None:
        cfg = cfg.with_threshold(threshold)
    runner = runners.find(runner, instructions=instructions)
    options = runners.options(repetitions=repetitions, min_time=min_time, filter=filter,
                                no_time=False, instance_timeout=instance_timeout,
                                instructions=instructions, estimated_cycles=estimated_cycles)
    runners.check(runner, options)
    subjects = [worktrees.Subject(side, tuple(plugin)) for side in ("a", "b")]
    runs = out.parent / "calibration-runs"
    pairs = []
    for i in range(1, rounds + 1):
        print(f"allocbench: A/A round {i}/{rounds}", file=sys.stderr, flush=True)
        folders = worktrees.run_interleaved(runner, subjects, forks, runs / f"round-{i}", options)
        pairs.append((compare.load_side(folders["a"]), compare.load_side(folders["b"])))
    found = calibrate(pairs, cfg)
    if not found:
        raise UserError("no scenario instance with time samples to calibrate; check --filter "
                        "(allocbench-run --list shows the instances)")
    repeats = repeatability(pairs)
    moved = []
    for i, (a, a_prime) in enumerate(zip(plugin, layout), 1):
        print(f"allocbench: A/A′ paired run {i}/{len(layout)}", file=sys.stderr, flush=True)
        found_pairs = worktrees.run_paired(
            runner, a, a_prime, runs / f"layout-{i}.json",
            runners.paired_options(filter=filter, instance_timeout=instance_timeout,
                                   paired_time=paired_time))
        moved += paired_gate.layout(paired_results.load(found_pairs))
    context = pairs[0][0].docs[0]["context"]
    repetitions = (context.get("time") or {}).get("repetitions", repetitions)
    doc = {"allocbench_calibration": 1,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "host": context.get("host"), "cpu": context.get("cpu"),
           "rounds": rounds, "forks": forks, "repetitions": repetitions, "min_time": min_time,
           "settings": asdict(cfg.time),
           "summary": overall(found, cfg.time.threshold),
           "scenarios": [asdict(c) | {"forks": forks, "repetitions": repetitions}
                         for c in found],
           "instructions": [{"name": r.name, "processes": r.processes,
                             "values": list(r.values), "repeatable": r.repeatable,
                             "spread_percent": r.spread_percent} for r in repeats],
           "layout": moved}
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(out, json.dumps(doc, indent=2, sort_keys=True) + "\n")
    print(f"A/A calibration, {rounds} rounds of {forks} forks per side "
          f"× {repetitions} repetitions:")
    print(table(found, markdown=format == "markdown"), end="")
    print(doc["summary"])
    if repeats:
        print(repeatability_text(repeats, markdown=format == "markdown"), end="")
    if moved:
        print(layout_text(moved, markdown=format == "markdown"), end="")
    print(f"allocbench: calibration written to {out}", file=sys.stderr)
    return 0
