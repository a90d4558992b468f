"""allocbench bisect SCENARIO --good REV --bad REV [--metric bytes_per_op]: the commit where an
exact allocation metric of one scenario instance changed.

Binary search over the first-parent history from good to bad, measuring with the sweep's
machinery and store (count pass only): revisions a sweep already measured cost nothing, and the
ones bisect measures are there for the next sweep. A commit that does not build or run is
skipped, as `git bisect skip` does, and named. Allocation counts are exact, so every probe is
decided with certainty.

Exit codes: 0 the commit is named, 1 no single commit can be named (good and bad have the same
value, or skipped commits hide the change), 2 bad input.
"""

from __future__ import annotations

import argparse
import difflib
import math
from pathlib import Path
from typing import Any

from allocbench import bisection, history, revisions, sweep_progress
from allocbench.commands import sweep as sweep_command
from allocbench.errors import UserError
from allocbench.escape import terminal
from allocbench.store import problem


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", metavar="SCENARIO",
                        help="the instance name, as in the results, e.g. span_creation/web_span")
    parser.add_argument("--good", required=True, metavar="REV", help="an older revision")
    parser.add_argument("--bad", required=True, metavar="REV",
                        help="a newer revision on the same first-parent line, whose value "
                             "differs")
    parser.add_argument("--metric", default="bytes_per_op", metavar="NAME",
                        help="an exact metric: bytes_per_op, allocs_per_op or frees_per_op "
                             "[bytes_per_op]")
    sweep_command.add_store_arguments(parser)
    sweep_command.add_build_arguments(parser)


def _instance(record: dict[str, Any], scenario: str) -> dict[str, Any] | None:
    return next((r for r in record["results"]["results"] if r["name"] == scenario), None)


def _value(record: dict[str, Any], scenario: str, metric: str) -> float | None:
    """The metric at this revision, None when it cannot be known (failed, scenario absent)."""
    if record["status"] != "ok":
        return None
    found = _instance(record, scenario)
    if found is None or found.get("error"):
        return None
    return found.get("alloc", {}).get(metric)


def _endpoint(record: dict[str, Any], which: str, scenario: str, metric: str) -> float:
    """The value at --good or --bad; a clear error when there is none."""
    where = f"--{which} {terminal(record['label'])} ({record['sha'][:10]})"
    if record["status"] != "ok":
        raise UserError(f"{where}: {terminal(problem(record))} (log: {terminal(record['log'])}); "
                        f"choose a --{which} revision that builds and runs")
    if _instance(record, scenario) is None:
        names = [r["name"] for r in record["results"]["results"]]
        close = difflib.get_close_matches(scenario, names, n=3, cutoff=0.8)
        hint = f"did you mean {', '.join(map(terminal, close))}? " if close else ""
        hint += "if the scenario is newer than this revision, graft today's scenarios with " \
            "--graft"
        raise UserError(f"{where} has no scenario instance '{terminal(scenario)}'; {hint}")
    fields = {f["key"]: f for f in record["results"]["fields"] if f["section"] == "alloc"}
    if fields.get(metric, {}).get("gate") != "exact":
        exact = [key for key, f in fields.items() if f["gate"] == "exact"]
        raise UserError(f"--metric {terminal(metric)}: bisect needs an exact metric, one of "
                        f"{', '.join(map(terminal, exact))}")
    value = _value(record, scenario, metric)
    if value is None:
        raise UserError(f"{where}: '{terminal(scenario)}' failed there, so it has no "
                        f"{terminal(metric)}")
    return value


def _number(value: float) -> str:
    return f"{value:g}"


def _report(found: bisection.Search, probed: list[dict[str, Any] | None], scenario: str,
            metric: str, good_sha: str, good_value: float) -> None:
    """The first changed commit with before → after, or the suspects skips leave; the skips.
    Labels, subjects and log lines are escaped for the terminal."""
    if found.exact:
        after = probed[found.high]
        before = (probed[found.low]["sha"] if found.low >= 0 else good_sha)[:10]
        change = _value(after, scenario, metric) - good_value
        percent = f", {change / good_value * 100:+.1f}%" if good_value else ""
        tag = ("" if after["label"] == after["sha"][:len(after["label"])]
               else f" ({terminal(after['label'])})")
        print(f"first change: {after['sha']}{tag}\n"
              f"    {terminal(after['subject'])}\n"
              f"    {terminal(metric)} {_number(good_value)} → {_number(good_value + change)} "
              f"({change:+g}{percent}); its parent {before} has {_number(good_value)}")
    else:
        print(f"the first change is one of these {len(found.suspects())} commits; the skipped "
              "ones hide which:")
        for i in found.suspects():
            state = f"skipped, {problem(probed[i])}" if i in found.skipped else "changed"
            print(terminal(f"    {probed[i]['sha'][:10]} ({state}) {probed[i]['subject']}"))
    for i in found.skipped:
        print(terminal(f"skipped {probed[i]['sha'][:10]}: {problem(probed[i])}"))


def run(*, scenario: str, good: str, bad: str, metric: str = "bytes_per_op",
        repo: Path | None = None, store: Path | None = None, machine: str | None = None,
        allocator: str = "system", graft: list[str] | None = None, target: str | None = None,
        plugin_path: str | None = None, cmake_arg: list[str] | None = None,
        config: Path | None = None, runner: Path | None = None, timeout: float = 1800,
        instance_timeout: str | None = None, force: bool = False,
        retry_failed: bool = False) -> int:
    repo = revisions.toplevel(repo or Path.cwd())
    good_sha, bad_sha = revisions.resolve(repo, good), revisions.resolve(repo, bad)
    if good_sha == bad_sha:
        raise UserError(f"--good {good} and --bad {bad} are the same commit {good_sha[:12]}")
    line = history.first_parent(repo, good_sha, bad_sha)
    plan = sweep_command.make_plan(
        repo=repo, store=store, machine=machine, allocator=allocator, graft=graft or [],
        target=target, plugin_path=plugin_path, cmake_arg=cmake_arg or [], config=config,
        runner=runner, timeout=timeout, force=force, retry_failed=retry_failed, time=False,
        run_options=[] if instance_timeout is None else ["--instance-timeout", instance_timeout])
    commits = [good_sha, *line]          # position 0 is good, the last is bad
    progress = sweep_progress.Progress(len(commits), math.ceil(math.log2(len(line))) + 2)
    records: dict[int, dict[str, Any]] = {}

    def measure(position: int) -> dict[str, Any]:
        records[position] = progress.measure(plan, position + 1, commits[position])
        return records[position]

    good_value = _endpoint(measure(0), "good", scenario, metric)
    bad_value = _endpoint(measure(len(line)), "bad", scenario, metric)
    what = terminal(f"{scenario} {metric}")
    if bad_value == good_value:
        print(f"{what} is {_number(good_value)} at both {terminal(good)} and {terminal(bad)}: "
              "nothing to bisect (a change that was undone in between is not searched for)")
        return 1

    def differs(index: int) -> bool | None:
        value = _value(measure(index + 1), scenario, metric)
        return None if value is None else value != good_value

    found = bisection.search(len(line), differs)
    print(f"{what}: {_number(good_value)} at {terminal(good)} ({good_sha[:10]}), "
          f"{_number(bad_value)} at {terminal(bad)} ({bad_sha[:10]})")
    _report(found, [records[i + 1] if i + 1 in records else None for i in range(len(line))],
            scenario, metric, good_sha, good_value)
    measured = len(progress.durations)
    print(f"{len(line)} commits after good; {measured} measured, "
          f"{len(records) - measured} from the store {terminal(str(plan.store.root))}")
    return 0 if found.exact else 1
