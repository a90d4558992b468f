#!/usr/bin/python3
"""The paired time gate against today's unpaired one, side by side on this machine: planted
effects, A/A and A/A′ (another code layout of the same source).

usage: bench/paired_gate.py [--rounds N] [--builtin-rounds N] [--runner PATH] [--out FILE]
       bench/paired_gate.py --from FILE   (the tables of an earlier --out; measures nothing)

Part 1, planted effects: builds of tests/plugins/paired/paired_truth.cc whose op is 2,000
iterations of a latency-bound chain, and 1, 2, 5, 10% more (bench/CMakeLists.txt; the Ir/op of
each is measured here under callgrind, so the planted effect is checked, not assumed), and the
base's loop at other addresses (A/A′). Every round compares the base build with each of
A/A, A/A′, +1%, +2%, +5%, +10%, in an order shuffled per round, each comparison by both gates
one after the other, so both see the same load:

  paired    allocbench-run --plugin BASE --against CAND, --paired-time 1 (the default), judged
            by gate/paired.py
  unpaired  3 forks × 5 repetitions a side, interleaved (ab --unpaired's layout), judged by
            compare.time_change (the bootstrap interval)

on the wall clock (ns_per_op) and the CPU clock (cpu_ns_per_op). Every interval is kept, so a
table is computed for any threshold: the paired gate at 0.5, 1 and 2%, the unpaired at its 5%.

Part 2, the built-in plugin's span-creation and fan-out instances (allocating, cache-sensitive:
the honest case): A/A and A/A′ rounds, the A′ being the built-in plugin built with
-falign-functions=64 (in build/bench-layout, configured and built here when missing). No effect
is planted: what is measured is each gate's interval half-width and how far another layout
alone moves the paired estimate, per instance: the layout noise a paired threshold must allow.

The 1-minute load average before and after every round is recorded. Wall seconds per instance
of each gate are measured around its runs (the paired run's budget includes its warm-up).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from allocbench.base import paired_results, results  # noqa: E402
from allocbench.base.errors import UserError  # noqa: E402
from allocbench.commands import arguments  # noqa: E402
from allocbench.gate import compare, paired  # noqa: E402
from allocbench.gate.config import TimeSettings  # noqa: E402
from allocbench.harness import runners  # noqa: E402
from allocbench.history import worktrees  # noqa: E402

FORMAT = 1
EFFECTS = {"A/A": "effect-0", "A/A′": "layout", "+1%": "effect-1", "+2%": "effect-2",
           "+5%": "effect-5", "+10%": "effect-10"}
PLANTED = {"A/A": 0.0, "A/A′": 0.0, "+1%": 0.01, "+2%": 0.02, "+5%": 0.05, "+10%": 0.10}
CLOCKS = ("ns_per_op", "cpu_ns_per_op")
PAIRED_THRESHOLDS = (0.5, 1.0, 2.0)   # percent
SETTINGS = TimeSettings()             # the unpaired gate's defaults: 5%, cv 0.10, 95%
BUILTIN_FILTER = (r"^(span_creation/(bare_start_span|web_server_span/dense:[01])|"
                  r"trace_fanout/web_trace/children:(1|5|20)/share:0)$")
LAYOUT_FLAGS = "-falign-functions=64"


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def run_paired(runner: Path, base: Path, cand: Path, out: Path, filter: str
               ) -> tuple[dict[str, dict[str, list[float]]], float]:
    """{instance: {clock: [relative, low, high, unstable]}} of one paired run, and its wall
    seconds per instance."""
    started = time.monotonic()
    with worktrees.announcing(lambda what: None):
        worktrees.run_paired(runner, base, cand, out, ["--filter", filter])
    seconds = time.monotonic() - started
    found = {}
    for entry in paired_results.load(out).entries.values():
        if entry.error:
            raise UserError(f"{entry.name}: {entry.error}")
        found[entry.name] = {}
        for clock in CLOCKS:
            est = paired.estimate(*entry.per_op(clock, entry.key[2]), sessions=entry.sessions)
            found[entry.name][clock] = [est.relative, est.relative_low, est.relative_high,
                                        bool(est.unstable)]
    return found, seconds / len(found)


def run_unpaired(runner: Path, base: Path, cand: Path, out: Path, filter: str
                 ) -> tuple[dict[str, dict[str, list[Any]]], float]:
    """The same for 3 interleaved forks × 5 repetitions a side: [relative, low, high,
    unstable, verdict at 5%]."""
    subjects = [worktrees.Subject("base", (base,)), worktrees.Subject("cand", (cand,))]
    started = time.monotonic()
    with worktrees.announcing(lambda what: None):
        folders = worktrees.run_interleaved(runner, subjects, 3, out, ["--filter", filter,
                                                                       "--no-count"])
    seconds = time.monotonic() - started
    sides = [compare.load_side(folders[s]) for s in ("base", "cand")]
    rows = [side.by_key() for side in sides]
    found = {}
    for key, base_rows in rows[0].items():
        name = base_rows[0]["name"]
        found[name] = {}
        for clock in CLOCKS:
            field = {"section": "time", "key": clock, "unit": "ns"}
            c = compare.time_change(clock, "ns", compare.fork_samples(base_rows, field),
                                    compare.fork_samples(rows[1][key], field),
                                    threshold=SETTINGS.threshold, settings=SETTINGS,
                                    seed=compare.seed_of(name, clock))
            found[name][clock] = [c.interval.relative, c.interval.relative_low,
                                  c.interval.relative_high, c.verdict == compare.UNSTABLE,
                                  c.verdict]
    return found, seconds / len(found)


def instructions(runner: Path, plugin: Path, out: Path) -> float:
    done = subprocess.run([str(runner), "--plugin", str(plugin), "--filter", "^paired/work$",
                           "--no-time", "--instructions", "--quiet", "--out", str(out)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise UserError(f"the instructions pass of {plugin} failed: {done.stderr.strip()}")
    return results.load(out)["results"][0]["instructions"]["instructions_per_op"]


def layout_build(build: Path) -> Path:
    """The built-in plugin at another code layout (A′), configured and built when missing."""
    plugin = build / "lib" / "allocbench" / "allocbench_builtin.so"
    if not plugin.exists():
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                        f"-DCMAKE_CXX_FLAGS={LAYOUT_FLAGS}", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", str(build), "-j", "2", "--target",
                        "allocbench_builtin"], check=True, stdout=subprocess.DEVNULL)
    return plugin


def measure(args: argparse.Namespace) -> dict[str, Any]:
    build = Path(os.environ.get("ALLOCBENCH_BUILD_DIR", ROOT / "build" / "release"))
    runner = args.runner or build / "bin" / "allocbench-run"
    runners.check(runner, [])
    plugins = {label: build / "bench" / "paired" / folder / "paired_truth.so"
               for label, folder in EFFECTS.items()}
    missing = [str(p) for p in plugins.values() if not p.exists()]
    if missing:
        raise UserError(f"no {missing[0]}: build the bench targets (cmake --build {build})")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    started = time.monotonic()
    rng = random.Random(args.seed)
    doc: dict[str, Any] = {"allocbench_paired_gate": FORMAT, "date": date,
                           "logical_cpus": os.cpu_count(), "runner": str(runner),
                           "settings": {"unpaired_threshold": SETTINGS.threshold,
                                        "paired_thresholds": list(PAIRED_THRESHOLDS),
                                        "paired_time_s": runners.PAIRED_TIME_S,
                                        "unpaired": "3 forks x 5 repetitions x 0.05 s a side"},
                           "rounds": args.rounds, "builtin_rounds": args.builtin_rounds}
    with tempfile.TemporaryDirectory(prefix="paired-gate-") as temp:
        out = Path(temp)
        doc["ir_per_op"] = {label: instructions(runner, p, out / "ir.json")
                            for label, p in plugins.items()}
        planted, load = [], []
        for number in range(1, args.rounds + 1):
            before = load_average()
            order = list(EFFECTS)
            rng.shuffle(order)
            for label in order:
                gates = [("paired", run_paired), ("unpaired", run_unpaired)]
                rng.shuffle(gates)
                for gate, measure_with in gates:
                    found, seconds = measure_with(runner, plugins["A/A"], plugins[label],
                                                  out / f"{number}-{EFFECTS[label]}-{gate}",
                                                  "^paired/work$")
                    planted.append({"round": number, "comparison": label, "gate": gate,
                                    "seconds_per_instance": round(seconds, 3),
                                    **found["paired/work"]})
            load.append([number, before, load_average()])
            print(f"paired_gate: round {number}/{args.rounds} ({order}), load {load[-1][1:]}",
                  file=sys.stderr, flush=True)
        doc["planted"], doc["load"] = planted, load
        if args.builtin_rounds:
            builtin = build / "lib" / "allocbench" / "allocbench_builtin.so"
            layout = layout_build(ROOT / "build" / "bench-layout")
            records, load = [], []
            for number in range(1, args.builtin_rounds + 1):
                before = load_average()
                for label, cand in (("A/A", builtin), ("A/A′", layout)):
                    for gate, measure_with in (("paired", run_paired),
                                               ("unpaired", run_unpaired)):
                        found, seconds = measure_with(runner, builtin, cand,
                                                      out / f"b{number}-{len(label)}-{gate}",
                                                      BUILTIN_FILTER)
                        for name, clocks in found.items():
                            records.append({"round": number, "comparison": label,
                                            "gate": gate, "instance": name,
                                            "seconds_per_instance": round(seconds, 3),
                                            **clocks})
                load.append([number, before, load_average()])
                print(f"paired_gate: built-in round {number}/{args.builtin_rounds}, load "
                      f"{load[-1][1:]}", file=sys.stderr, flush=True)
            doc["builtin"], doc["builtin_load"] = records, load
            doc["layout_flags"] = LAYOUT_FLAGS
    doc["minutes"] = round((time.monotonic() - started) / 60, 1)
    return doc


def judged(record: list[Any], gate: str, threshold: float) -> str:
    """worse / better / same / unstable of one clock's record at `threshold` (percent)."""
    relative, low, high, unstable = record[:4]
    if unstable:
        return "unstable"
    if gate == "unpaired":
        return record[4]
    limit = threshold / 100
    return "worse" if low > limit else "better" if high < -limit else "same"


def planted_table(doc: dict[str, Any]) -> str:
    """Per comparison: how often each gate said worse (a detection, or a false positive for
    A/A and A/A′), the median estimate and half-width, seconds per instance."""
    head = ["comparison", "Ir/op", "gate", "clock", "worse at 0.5% / 1% / 2% (paired), "
            "5% (unpaired)", "unstable", "median estimate", "median ± half-width", "s/instance"]
    lines = ["| " + " | ".join(head) + " |", "|---|---:|---|---|---|---:|---:|---:|---:|"]
    base_ir = doc["ir_per_op"]["A/A"]
    for label in EFFECTS:
        ir = f"{100 * (doc['ir_per_op'][label] / base_ir - 1):+.2f}%"
        for gate in ("paired", "unpaired"):
            rows = [r for r in doc["planted"] if r["comparison"] == label and r["gate"] == gate]
            n = len(rows)
            for clock in CLOCKS:
                records = [r[clock] for r in rows]
                thresholds = PAIRED_THRESHOLDS if gate == "paired" else (SETTINGS.threshold,)
                worse = " / ".join(
                    f"{sum(judged(x, gate, t) == 'worse' for x in records)} of {n}"
                    for t in thresholds)
                unstable = sum(bool(x[3]) for x in records)
                estimate = np.median([x[0] for x in records])
                half = np.median([(x[2] - x[1]) / 2 for x in records])
                seconds = np.median([r["seconds_per_instance"] for r in rows])
                lines.append(f"| {label} | {ir} | {gate} | {clock} | {worse} | {unstable} | "
                             f"{100 * estimate:+.2f}% | ±{100 * half:.2f}% | {seconds:.2f} |")
    return "\n".join(lines) + "\n"


def builtin_table(doc: dict[str, Any]) -> str:
    """Per instance and clock: the A/A′ paired estimate (median, and its largest size), and
    the median half-width of each gate's interval over A/A and A/A′ rounds."""
    head = ["instance", "clock", "A/A′ paired estimate: median (largest)",
            "A/A′ beyond ±0.5% / 1% / 2%", "A/A paired: median", "A/A beyond ±0.5%",
            "paired ± half-width", "unpaired ± half-width", "unpaired unstable"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    records = doc.get("builtin", [])
    for name in sorted({r["instance"] for r in records}):
        for clock in CLOCKS:
            def of(gate: str, label: str | None = None) -> list[list[Any]]:
                return [r[clock] for r in records if r["instance"] == name and
                        r["gate"] == gate and (label is None or r["comparison"] == label)]
            layout = [x[0] for x in of("paired", "A/A′")]
            same = [x[0] for x in of("paired", "A/A")]
            half = {g: np.median([(x[2] - x[1]) / 2 for x in of(g)]) for g in
                    ("paired", "unpaired")}
            unstable = sum(bool(x[3]) for x in of("unpaired"))
            largest = max(layout, key=abs)
            def beyond(label: str, threshold: float) -> str:
                found = of("paired", label)
                n = sum(judged(x, "paired", threshold) in ("worse", "better") for x in found)
                return f"{n} of {len(found)}"
            lines.append(f"| {name} | {clock} | {100 * np.median(layout):+.2f}% "
                         f"({100 * largest:+.2f}%) | "
                         f"{' / '.join(beyond('A/A′', t) for t in PAIRED_THRESHOLDS)} | "
                         f"{100 * np.median(same):+.2f}% | {beyond('A/A', 0.5)} | "
                         f"±{100 * half['paired']:.2f}% | ±{100 * half['unpaired']:.1f}% | "
                         f"{unstable} of {len(of('unpaired'))} |")
    return "\n".join(lines) + "\n"


def claim(doc: dict[str, Any]) -> str:
    """The README's sentence of the planted-effect rounds, on the wall clock, at the default
    paired threshold (1%) against the unpaired gate."""
    def rows(label: str, gate: str) -> list[list[Any]]:
        return [r["ns_per_op"] for r in doc["planted"]
                if r["comparison"] == label and r["gate"] == gate]

    def found(label: str, gate: str, threshold: float = 1.0) -> int:
        return sum(judged(x, gate, threshold) == "worse" for x in rows(label, gate))

    def half(gate: str) -> float:
        return 100 * float(np.median([(x[2] - x[1]) / 2 for r in PLANTED
                                      for x in rows(r, gate)]))

    def seconds(gate: str) -> float:
        return float(np.median([r["seconds_per_instance"] for r in doc["planted"]
                                if r["gate"] == gate]))

    n = doc["rounds"]
    false = sum(judged(x, "paired", 1.0) in ("worse", "better")
                for label in ("A/A", "A/A′") for x in rows(label, "paired"))
    return (f"a planted +2% found in {found('+2%', 'paired')} of {n} rounds "
            f"(unpaired: {found('+2%', 'unpaired')} of {n}), +1% in "
            f"{found('+1%', 'paired', 0.5)} of {n} at a 0.5% threshold, the same build or "
            f"another layout of it gated in {false} of {2 * n}; an interval of "
            f"±{half('paired'):.2f}% against ±{half('unpaired'):.1f}%, in "
            f"{seconds('paired'):.1f} s per instance against {seconds('unpaired'):.1f} s")


def caption(doc: dict[str, Any]) -> str:
    loads = [x for r in doc["load"] + doc.get("builtin_load", []) for x in r[1:]]
    return (f"{doc['rounds']} rounds of planted effects, {doc['builtin_rounds']} built-in "
            f"rounds, {doc['date']}, {doc['minutes']:.0f} min, 1-min load average "
            f"{min(loads):.1f}–{max(loads):.1f} on {doc['logical_cpus']} CPUs")


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, metavar="FILE",
                        help="print the tables of this earlier --out instead of measuring")
    parser.add_argument("--rounds", type=arguments.positive, default=20,
                        help="rounds of planted effects [20]")
    parser.add_argument("--builtin-rounds", type=int, default=10,
                        help="A/A and A/A′ rounds of the built-in instances, 0 for none [10]")
    parser.add_argument("--claim", action="store_true",
                        help="with --from: print the README's sentence instead of the tables")
    parser.add_argument("--seed", type=int, default=1, help="of the orders within rounds [1]")
    parser.add_argument("--runner", type=Path, metavar="PATH",
                        help="allocbench-run [$ALLOCBENCH_BUILD_DIR/bin/allocbench-run]")
    parser.add_argument("--out", type=Path, metavar="FILE", help="keep the results as JSON")
    return parser.parse_args()


def main() -> None:
    args = parse_arguments()
    if args.source is not None:
        doc = json.loads(args.source.read_text())
    else:
        try:
            doc = measure(args)
        except UserError as e:
            sys.exit(f"paired_gate.py: {e}")
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    if args.claim:
        print(claim(doc))
        return
    print(caption(doc), file=sys.stderr)
    print(planted_table(doc))
    if doc.get("builtin"):
        print(builtin_table(doc), end="")


if __name__ == "__main__":
    main()
