#!/usr/bin/python3
"""What `allocbench ab`'s time gate and instructions gate detect: +1%, +3%, +10% of work.

usage: bench/instructions_gate.py [--rounds N] [--timing-runs N] [--forks N] [--filter REGEX]
                                  [--knob-rounds R1,R3,R10] [--workdir DIR] [--out FILE]
       bench/instructions_gate.py --from FILE   (the table of an earlier --out; measures nothing)
       bench/instructions_gate.py --stop FILE   (mark a run killed before its end as stopped)

Copies this allocbench tree (what `git ls-files -co --exclude-standard` lists: tracked,
modified and untracked-but-not-ignored files) into a temporary git repository and commits it as
A, the reference tracer's benchmark knob at 0 (kExtraHashRounds in
scenarios/tracer/src/extra_work.h: extra hashing rounds per finished span, no allocation). The
knob's cost is linear, 7 + 7 × rounds instructions per span here; two probe commits (20 and 200
rounds) measure it, and round_counts() turns it into the rounds that add +1%, +3% and +10% to
the instructions per op of span_creation/web_server_span/dense:0, committed as B1, B3, B10
(--knob-rounds gives them instead). Every measurement is the copy's own entry point on the copy
(`<copy>/allocbench ab --repo <copy> ...`, with its own build), so editing this checkout during
the run changes nothing. Each revision's plugin is built once, before anything is timed.

Then --rounds rounds, each of: A/A, A/B1, A/B3, A/B10, all four as
  allocbench ab --base A --cand X --instructions --filter '^span_creation/' --format json
(3 interleaved forks per side: the time gate and the instructions gate in one ab), the kinds
interleaved so that machine drift hits all alike; and, spread over the rounds, --timing-runs
A/B runs of each gate alone: without --instructions (the time gate alone, gating) and with
--no-time --instructions (the instructions gate alone). Recorded per run: exit code, wall
seconds, the target's ns_per_op verdict and instructions_per_op verdict (and both sides' Ir/op),
and every instance whose time verdict went beyond the threshold, or whose instructions verdict
was not "same". With --instructions the time verdicts are directional ("slower"/"faster"):
"slower" is the time gate's detection, and in A/A "slower" or "faster" a false positive.

Prints a markdown table on stdout (rows: time gate, instructions gate; columns: detections at
+1/+3/+10%, false positives in the A/A runs for the target and for any instance, median wall
seconds of an ab of that gate alone) and a caption; progress goes to stderr. --out FILE keeps
every run, written again after each one (a run in progress renders with --from). --rounds 1
--timing-runs 1 --forks 1 is the smoke version (still seven plugin builds and the copy's
runner). The copy is deleted at the end unless --workdir names where to keep it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
KNOB_FILE = "scenarios/tracer/src/extra_work.h"
KNOB_LINE = re.compile(r"^inline constexpr int kExtraHashRounds = (\d+);$", re.MULTILINE)
TARGET = "span_creation/web_server_span/dense:0"
FILTER = "^span_creation/"
PERCENTS = (1, 3, 10)
PROBES = (20, 200)
TIME_METRIC, IR_METRIC = "ns_per_op", "instructions_per_op"
BEYOND = ("worse", "better", "slower", "faster")   # time verdicts beyond the threshold
CLAIMS = ("worse", "better", "allowed")   # exact verdicts that claim a change
GIT_ENV = {"GIT_AUTHOR_NAME": "instructions_gate", "GIT_AUTHOR_EMAIL": "bench@localhost",
           "GIT_COMMITTER_NAME": "instructions_gate", "GIT_COMMITTER_EMAIL": "bench@localhost",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def log(text: str) -> None:
    print(f"instructions_gate.py: {text}", file=sys.stderr, flush=True)


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, metavar="FILE",
                        help="print the table of this --out file; measures nothing")
    parser.add_argument("--rounds", type=int, default=20,
                        help="rounds of A/A, +1%%, +3%%, +10%% [20]")
    parser.add_argument("--timing-runs", type=int, default=5, metavar="N",
                        help="A/B runs of each gate alone, spread over the rounds [5]")
    parser.add_argument("--forks", type=int, metavar="N", help="ab --forks [ab's: 3]")
    parser.add_argument("--filter", default=FILTER, metavar="REGEX",
                        help=f"ab --filter [{FILTER}]; must match {TARGET}")
    parser.add_argument("--knob-rounds", metavar="R1,R3,R10",
                        help="the knob's rounds for +1%%, +3%%, +10%% [measured: two probes]")
    parser.add_argument("--workdir", type=Path, metavar="DIR",
                        help="make the copy here and keep it [a temporary folder, deleted]")
    parser.add_argument("--out", type=Path, metavar="FILE", help="keep every run as JSON")
    parser.add_argument("--stop", type=Path, metavar="FILE",
                        help="mark the run kept in FILE as stopped early (one killed before its "
                             "last round): its table then counts the rounds it has")
    args = parser.parse_args()
    if args.source is None and (args.rounds < 1 or args.timing_runs < 0):
        parser.error("--rounds must be at least 1 and --timing-runs at least 0")
    if not re.search(args.filter, TARGET):
        parser.error(f"--filter {args.filter!r} does not match {TARGET}")
    return args


# --- the copy and its commits ---------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args],
                          capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    if done.returncode != 0:
        sys.exit(f"instructions_gate.py: git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def copy_tree(dest: Path) -> int:
    """This tree's tracked, modified and untracked-but-not-ignored files into `dest`."""
    names = git(ROOT, "ls-files", "-co", "--exclude-standard", "-z").split("\0")
    copied = 0
    for name in filter(None, dict.fromkeys(names)):
        source = ROOT / name
        if not source.exists() and not source.is_symlink():
            continue   # tracked, deleted in the working tree
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
        copied += 1
    return copied


def with_rounds(text: str, rounds: int) -> str:
    """The knob header's text with kExtraHashRounds set to `rounds`."""
    if len(KNOB_LINE.findall(text)) != 1:
        sys.exit(f"instructions_gate.py: {KNOB_FILE} has no single line of the form "
                 f"'{KNOB_LINE.pattern}'")
    return KNOB_LINE.sub(f"inline constexpr int kExtraHashRounds = {rounds};", text)


def make_repository(copy: Path) -> str:
    """Commit A: the copy, knob at 0. Its sha."""
    knob = copy / KNOB_FILE
    knob.write_text(with_rounds(knob.read_text(), 0))
    git(copy, "init", "-q")
    git(copy, "add", "-A")
    git(copy, "commit", "-q", "-m", "A: this allocbench tree, kExtraHashRounds = 0")
    return git(copy, "rev-parse", "HEAD")


def commit_rounds(copy: Path, parent: str, rounds: int) -> str:
    """A child of `parent` that differs only in the knob; the work tree stays at `parent`."""
    knob = copy / KNOB_FILE
    original = knob.read_text()
    try:
        knob.write_text(with_rounds(original, rounds))
        git(copy, "add", KNOB_FILE)
        tree = git(copy, "write-tree")
        return git(copy, "commit-tree", tree, "-p", parent, "-m",
                   f"kExtraHashRounds = {rounds}")
    finally:
        knob.write_text(original)
        git(copy, "add", KNOB_FILE)


# --- one ab ---------------------------------------------------------------------------------------


def ab(copy: Path, base: str, cand: str, args: argparse.Namespace, *, mode: str,
       filter: str | None = None) -> dict[str, Any]:
    """One `<copy>/allocbench ab`: its exit code, wall seconds and comparison document.
    mode: "both" (--instructions), "time" (neither), "instructions" (--no-time
    --instructions)."""
    command = [str(copy / "allocbench"), "ab", "--repo", str(copy), "--base", base,
               "--cand", cand, "--filter", filter or args.filter, "--format", "json"]
    command += {"both": ["--instructions"], "time": [],
                "instructions": ["--no-time", "--instructions"]}[mode]
    if args.forks is not None:
        command += ["--forks", str(args.forks)]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, cwd=copy)
    wall = time.monotonic() - started
    (copy / ".allocbench" / "bench-logs").mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%H%M%S")
    (copy / ".allocbench" / "bench-logs" / f"{stamp}-{base[:7]}-{cand[:7]}-{mode}.log"
     ).write_text(done.stderr)
    try:
        doc = json.loads(done.stdout)
    except ValueError:
        doc = None
    return {"exit": done.returncode, "wall_s": round(wall, 2), "doc": doc,
            "stderr": done.stderr[-2000:] if doc is None else ""}


def instance(doc: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((i for i in doc["instances"] if i["name"] == name), None)


def metric(entries: list[dict[str, Any]], key: str) -> dict[str, Any] | None:
    return next((e for e in entries if e["metric"] == key), None)


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """What a run records: no samples, only verdicts and the target's numbers."""
    doc = result.pop("doc")
    out = {**result, "target": None, "time_beyond": [], "time_unstable": [],
           "instructions_changed": [], "gate_failed": []}
    if doc is None:
        return out
    for inst in doc["instances"]:
        time_ = metric(inst["time"], TIME_METRIC)
        ir = metric(inst["exact"], IR_METRIC)
        if time_ is not None and time_["verdict"] in BEYOND:
            out["time_beyond"].append([inst["name"], time_["verdict"]])
        if time_ is not None and time_["verdict"] == "unstable":
            out["time_unstable"].append(inst["name"])
        if ir is not None and ir["verdict"] != "same":
            out["instructions_changed"].append([inst["name"], ir["verdict"]])
    out["gate_failed"] = [[f["instance"], f["metric"]] for f in doc["gate"]["failed"]]
    target = instance(doc, TARGET)
    if target is not None:
        time_ = metric(target["time"], TIME_METRIC)
        ir = metric(target["exact"], IR_METRIC)
        out["target"] = {
            "failure": target["failure"],
            "time_verdict": time_ and time_["verdict"],
            "time_base_ns": time_ and time_["base_mean"],
            "time_cand_ns": time_ and time_["cand_mean"],
            "time_interval": time_ and time_["interval"],
            "ir_verdict": ir and ir["verdict"],
            "ir_base": ir and statistics.median(ir["base"]),
            "ir_cand": ir and statistics.median(ir["cand"])}
    return out


# --- the knob's rounds ----------------------------------------------------------------------------


def round_counts(base_ir: float, probes: list[tuple[int, float]],
                 percents: tuple[int, ...] = PERCENTS) -> dict[int, int]:
    """The knob's rounds that add each percent to `base_ir` (knob 0's Ir/op), from the Ir/op of
    two probe round counts: a line through them (slope per round, intercept: the knob's cost
    at any rounds > 0), rounded to the nearest count."""
    (r1, i1), (r2, i2) = probes
    slope = (i2 - i1) / (r2 - r1)
    intercept = i1 - base_ir - slope * r1
    return {p: max(1, round((p / 100 * base_ir - intercept) / slope)) for p in percents}


def measure_knob(copy: Path, a: str, args: argparse.Namespace) -> dict[str, Any]:
    """Ir/op of the target at knob 0 and at the probes (an --instructions --no-time ab of the
    target alone, one fork); builds A's and the probes' plugins on the way."""
    name = "^" + re.escape(TARGET) + "$"
    probes = []
    base_ir = None
    for rounds in PROBES:
        sha = commit_rounds(copy, a, rounds)
        log(f"probe: {rounds} rounds ({sha[:12]}), building and measuring")
        started = time.monotonic()
        done = summary(ab(copy, a, sha, argparse.Namespace(forks=1, filter=name),
                          mode="instructions"))
        target = done["target"]
        if target is None or target["ir_base"] is None:
            sys.exit(f"instructions_gate.py: the probe ab failed (exit code {done['exit']}):\n"
                     f"{done['stderr']}")
        base_ir = target["ir_base"]
        probes.append({"rounds": rounds, "sha": sha, "ir": target["ir_cand"],
                       "seconds": round(time.monotonic() - started, 1)})
        log(f"probe: {rounds} rounds: {target['ir_cand']} Ir/op (knob 0: {base_ir})")
    counts = round_counts(base_ir, [(p["rounds"], p["ir"]) for p in probes])
    return {"base_ir": base_ir, "probes": probes, "rounds": counts}


# --- the schedule ---------------------------------------------------------------------------------


def schedule(rounds: int, timing_runs: int) -> list[dict[str, Any]]:
    """Every run in order: A/A, +1, +3, +10 per round; after the rounds spread evenly, a run of
    the time gate alone and one of the instructions gate alone, the size cycling."""
    after = {min(rounds - 1, int((k + 0.5) * rounds / timing_runs)): k
             for k in range(timing_runs)} if timing_runs else {}
    runs = []
    for r in range(rounds):
        for percent in (None, *PERCENTS):
            runs.append({"round": r + 1, "mode": "both", "percent": percent})
        k = after.get(r)
        if k is not None:
            percent = PERCENTS[k % len(PERCENTS)]
            runs += [{"round": r + 1, "mode": "time", "percent": percent},
                     {"round": r + 1, "mode": "instructions", "percent": percent}]
    # Spreading 5 over fewer rounds lands several on one round: one pair per round is enough
    # for the medians, so the rest follow the last round.
    for k in range(timing_runs - len(after)):
        percent = PERCENTS[k % len(PERCENTS)]
        runs += [{"round": rounds, "mode": "time", "percent": percent},
                 {"round": rounds, "mode": "instructions", "percent": percent}]
    return runs


# --- the table ------------------------------------------------------------------------------------


def achieved(doc: dict[str, Any]) -> dict[int, float]:
    """Per size, the target's Ir/op increase in percent, as the A/B runs measured it."""
    out = {}
    for p in PERCENTS:
        ratios = [r["target"]["ir_cand"] / r["target"]["ir_base"] for r in doc["runs"]
                  if r["percent"] == p and r["mode"] != "time" and r["target"]
                  and r["target"]["ir_base"]]
        if ratios:
            out[p] = round((statistics.median(ratios) - 1) * 100, 3)
    return out


def table(doc: dict[str, Any]) -> str:
    runs = doc["runs"]
    both = [r for r in runs if r["mode"] == "both"]
    aa = [r for r in both if r["percent"] is None]

    def verdict(r: dict[str, Any], key: str) -> str | None:
        return r["target"][key] if r["target"] else None

    def detected(p: int, key: str, hits: tuple[str, ...]) -> str:
        sized = [r for r in both if r["percent"] == p]
        return f"{sum(verdict(r, key) in hits for r in sized)} of {len(sized)}"

    def false_positives(key: str, field: str, claims: tuple[str, ...]) -> list[str]:
        target = sum(verdict(r, key) in claims for r in aa)
        family = sum(any(v in claims for _, v in r[field]) for r in aa)
        return [f"{target} of {len(aa)}", f"{family} of {len(aa)}"]

    def wall(mode: str) -> str:
        walls = [r["wall_s"] for r in runs if r["mode"] == mode and r["exit"] in (0, 1)]
        return f"{statistics.median(walls):.0f} s" if walls else "n/a"

    threshold = doc["threshold"] or 5
    cells = {
        f"time (interval, ±{threshold:g}% threshold)":
            [detected(p, "time_verdict", ("slower", "worse")) for p in PERCENTS]
            + false_positives("time_verdict", "time_beyond", BEYOND) + [wall("time")],
        "instructions (exact)":
            [detected(p, "ir_verdict", ("worse",)) for p in PERCENTS]
            + false_positives("ir_verdict", "instructions_changed", CLAIMS)
            + [wall("instructions")]}
    rows = ["| gate | +1% | +3% | +10% | false positives in A/A: target | any instance | "
            "median s per ab (that gate alone) |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    rows += [f"| {gate} | {' | '.join(values)} |" for gate, values in cells.items()]

    measured = achieved(doc)
    sizes = sorted((int(p), s) for p, s in doc["knob"]["sizes"].items())
    knob = ", ".join(f"+{p}%: {s['rounds']} rounds (+{measured.get(p, s['achieved_percent'])}%"
                     " Ir/op)" for p, s in sizes)
    instances = max((r["instances"] for r in both), default=0)
    unstable = sum(verdict(r, "time_verdict") == "unstable" for r in both)
    undecided: dict[str, int] = {}
    for r in aa:
        for name, v in r["instructions_changed"]:
            if v == "nondeterministic":
                undecided[name] = undecided.get(name, 0) + 1
    status = ("" if doc.get("complete") else " (the run was stopped early)" if doc.get("stopped")
              else " **(in progress)**")
    caption = [
        f"{len(aa)} rounds{status} of A/A, +1%, +3%, +10% of `{TARGET}`'s "
        f"{doc['knob']['base_ir']:,} instructions per op (extra hashing per span: {knob}), each "
        f"an `allocbench ab --instructions --filter '{doc['filter']}'` ({instances} instances, "
        f"{doc['forks']} interleaved forks per side; median {wall('both')}) on {doc['machine']}. "
        f"Detections are the target's verdict (time: *slower*; instructions: *worse*); a false "
        f"positive is a time verdict beyond the threshold, or an instructions verdict other "
        f"than *same* or *nondeterministic*. The target's time verdict was *unstable* in "
        f"{unstable} of {len(both)} runs."]
    if undecided:
        caption.append("Instructions *nondeterministic* (not gated) in A/A: " + ", ".join(
            f"`{n}` ({k} of {len(aa)})" for n, k in sorted(undecided.items())) + ".")
    return "\n".join(rows + [""] + [" ".join(caption)])


# --- the run --------------------------------------------------------------------------------------


def save(doc: dict[str, Any], out: Path | None) -> None:
    if out is None:
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    partial.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    os.replace(partial, out)


def first(doc: dict[str, Any], compared: dict[str, Any]) -> None:
    """What the first comparison says of every run: the target's Ir/op at knob 0 and the
    time threshold."""
    target = instance(compared, TARGET)
    if target is None:
        return
    ir, time_ = metric(target["exact"], IR_METRIC), metric(target["time"], TIME_METRIC)
    if doc["knob"]["base_ir"] is None and ir is not None:
        doc["knob"]["base_ir"] = statistics.median(ir["base"])
    if doc["threshold"] is None and time_ is not None:
        doc["threshold"] = time_["threshold"]


def measure(args: argparse.Namespace, copy: Path) -> dict[str, Any]:
    log(f"copying {ROOT} into {copy}")
    log(f"{copy_tree(copy)} files copied")
    a = make_repository(copy)
    source = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip()
    doc: dict[str, Any] = {
        "source": source, "copy": str(copy), "filter": args.filter, "target": TARGET,
        "forks": args.forks or 3, "threshold": None, "complete": False,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "started": datetime.datetime.now().isoformat(timespec="seconds"), "runs": []}
    if args.knob_rounds:
        counts = dict(zip(PERCENTS, (int(x) for x in args.knob_rounds.split(","))))
        doc["knob"] = {"file": KNOB_FILE, "base_ir": None, "probes": [], "rounds": counts}
    else:
        doc["knob"] = {"file": KNOB_FILE, **measure_knob(copy, a, args)}
    shas = {p: commit_rounds(copy, a, r) for p, r in doc["knob"]["rounds"].items()}
    doc["shas"] = {"A": a, **{f"+{p}%": s for p, s in shas.items()}}
    doc["knob"]["sizes"] = {str(p): {"rounds": r, "sha": shas[p], "achieved_percent": None}
                            for p, r in doc["knob"].pop("rounds").items()}
    save(doc, args.out)

    # Builds out of the timing: every plugin (and the copy's runner) once, on one instance.
    warm = "^" + re.escape("span_creation/bare_start_span") + "$"
    doc["build_seconds"] = {}
    for p, sha in shas.items():
        log(f"building +{p}% ({sha[:12]}) and A")
        done = ab(copy, a, sha, argparse.Namespace(forks=1, filter=warm), mode="instructions")
        if done["doc"] is None:
            sys.exit(f"instructions_gate.py: building +{p}% failed (exit code {done['exit']}):"
                     f"\n{done['stderr']}")
        doc["build_seconds"][f"+{p}%"] = done["wall_s"]
    save(doc, args.out)

    plan = schedule(args.rounds, args.timing_runs)
    started = time.monotonic()
    for i, run in enumerate(plan):
        cand = a if run["percent"] is None else shas[run["percent"]]
        result = ab(copy, a, cand, args, mode=run["mode"])
        compared = result["doc"]
        record = {**run, **summary(result),
                  "instances": len(compared["instances"]) if compared else 0,
                  "at": datetime.datetime.now().isoformat(timespec="seconds")}
        doc["runs"].append(record)
        if compared is not None:
            first(doc, compared)
        t = record["target"] or {}
        kind = "A/A" if run["percent"] is None else f"+{run['percent']}%"
        elapsed = time.monotonic() - started
        log(f"{i + 1}/{len(plan)} round {run['round']} {kind} {run['mode']}: exit "
            f"{record['exit']}, {record['wall_s']:.0f} s, time {t.get('time_verdict')}, "
            f"instructions {t.get('ir_verdict')} ({t.get('ir_base')} -> {t.get('ir_cand')}); "
            f"ETA {elapsed / (i + 1) * (len(plan) - i - 1) / 60:.0f} min")
        if compared is None or record["exit"] not in (0, 1):
            log(f"ab failed (exit code {record['exit']}):\n{record['stderr']}")
        save(doc, args.out)
    finish(doc, stopped=False)
    save(doc, args.out)
    return doc


def finish(doc: dict[str, Any], stopped: bool) -> None:
    """The sizes' achieved percents from the runs, and how the run ended: complete, or stopped
    before its last round (what was measured still counts, as measured)."""
    for p, value in achieved(doc).items():
        doc["knob"]["sizes"][str(p)]["achieved_percent"] = value
    now = datetime.datetime.now().isoformat(timespec="seconds")
    if stopped:
        doc["stopped"] = now
    else:
        doc["complete"] = True
        doc["finished"] = now


def main() -> None:
    args = parse_arguments()
    if args.stop is not None:
        doc = json.loads(args.stop.read_text())
        if not doc.get("complete"):
            finish(doc, stopped=True)
            save(doc, args.stop)
        print(table(doc))
        return
    if args.source is not None:
        try:
            doc = json.loads(args.source.read_text())
        except (OSError, ValueError) as e:
            sys.exit(f"instructions_gate.py: {args.source}: {e}")
        print(table(doc))
        return
    if args.workdir is not None:
        if args.workdir.exists() and any(args.workdir.iterdir()):
            sys.exit(f"instructions_gate.py: --workdir {args.workdir} is not empty")
        args.workdir.mkdir(parents=True, exist_ok=True)
        doc = measure(args, args.workdir.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="instructions-gate-") as folder:
            doc = measure(args, Path(folder))
    print(table(doc))


if __name__ == "__main__":
    main()
