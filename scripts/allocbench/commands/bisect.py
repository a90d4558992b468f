"""allocbench bisect SCENARIO --good REV --bad REV [--metric bytes_per_op] [--all]: the commit
where an exact metric of one scenario instance changed, or with --all every commit where it
steps: an allocation metric, or instructions_per_op (the instructions pass, --instructions,
which that metric implies).

Binary search over the first-parent history from good to bad (--all: divide and conquer,
bisection.every_change), measuring with the sweep's machinery and store (count pass only, and
the instructions pass when asked for): revisions a sweep already measured cost nothing, and the
ones bisect measures are there for the next sweep. A commit that does not build or run is
skipped, as `git bisect skip` does, and named. Allocation and instruction counts are exact, so
every probe is decided with certainty; each progress line shows the value it found. The
metric's section (alloc or instructions) comes from the results' field list. The allocation
sites' diff that ends a plain bisect is heaptrack's, so only an allocation metric gets one.

Exit codes: 0 the commit (--all: every step) is named, 1 some change cannot be narrowed to one
commit (skipped commits hide it) or good and bad have the same value, 2 bad input.
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import math
import sys
from pathlib import Path
from typing import Any

from allocbench.base import packages
from allocbench.base.errors import UserError
from allocbench.base.escape import terminal
from allocbench.harness import instructions_pass, runners
from allocbench.history import bisected, bisection, selection, sweep, sweep_progress
from allocbench.history import sweep_table, worktrees
from allocbench.history.store import problem
from allocbench.sites import changes, per_op, profile
from allocbench.commands import sweep as sweep_command


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", metavar="SCENARIO",
                        help="the instance name, as in the results, e.g. span_creation/web_span")
    parser.add_argument("--good", required=True, metavar="REV", help="an older revision")
    parser.add_argument("--bad", required=True, metavar="REV",
                        help="a newer revision on the same first-parent line, whose value "
                             "differs")
    parser.add_argument("--metric", default="bytes_per_op", metavar="NAME",
                        help="an exact metric: bytes_per_op, allocs_per_op, frees_per_op, or "
                             "instructions_per_op, which implies --instructions [bytes_per_op]")
    parser.add_argument("--all", dest="every_step", action="store_true",
                        help="every commit where the value steps, not only the first change; "
                             "a change undone between two commits of equal value is not "
                             "searched for")
    parser.add_argument("--no-sites", action="store_true",
                        help="do not profile the last unchanged and the first changed commit "
                             "(by default, for an allocation metric: their allocation sites' "
                             "diff ends the output; with --all, one diff per exact step)")
    instructions_pass.add_arguments(parser)
    for action in parser._actions:   # argparse has no public way to reword an argument
        if action.dest == "instructions":
            action.help = ("measure every probe with the instructions pass too (callgrind: "
                           "exact instructions per op), as --metric instructions_per_op needs "
                           "and implies; a revision stored without it is measured again "
                           "(valgrind is installed on first use)")
    sweep_command.add_store_arguments(parser)
    sweep_command.add_build_arguments(parser)


def _instance(record: dict[str, Any], scenario: str) -> dict[str, Any] | None:
    return next((r for r in record["results"]["results"] if r["name"] == scenario), None)


def _fields(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The metrics bisect can name, by key: the results' fields of sections alloc and
    instructions."""
    return {f["key"]: f for f in record["results"]["fields"]
            if f["section"] in sweep_table.SECTIONS}


def _section(record: dict[str, Any], metric: str) -> str:
    """The results section that holds `metric`: from the record's field list."""
    return _fields(record).get(metric, {}).get("section", "alloc")


def _without_pass(record: dict[str, Any], metric: str) -> bool:
    """Whether the record's run lacked the pass that measures `metric` (the instructions
    pass: allocbench-run without --instructions)."""
    return _section(record, metric) == "instructions" and \
        record["results"]["context"].get("instructions") is None


def _value(record: dict[str, Any], scenario: str, metric: str) -> float | None:
    """The metric at this revision, None when it cannot be known (failed, scenario absent)."""
    if record["status"] != "ok":
        return None
    found = _instance(record, scenario)
    if found is None or found.get("error"):
        return None
    return (found.get(_section(record, metric)) or {}).get(metric)


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
    fields = _fields(record)
    if fields.get(metric, {}).get("gate") != "exact":
        exact = [key for key, f in fields.items() if f["gate"] == "exact"]
        raise UserError(f"--metric {terminal(metric)}: bisect needs an exact metric, one of "
                        f"{', '.join(map(terminal, exact))}")
    if _without_pass(record, metric):
        raise UserError(f"{where} was measured without the instructions pass, so it has no "
                        f"{terminal(metric)}; add --instructions")
    value = _value(record, scenario, metric)
    if value is None:
        raise UserError(f"{where}: '{terminal(scenario)}' failed there, so it has no "
                        f"{terminal(metric)}")
    return value


def _describe(record: dict[str, Any], scenario: str, metric: str) -> str:
    """What a probe found, for its progress line: the value, or why there is none."""
    value = _value(record, scenario, metric)
    return f"{metric} {_number(value)}" if value is not None else _why(record, scenario, metric)


def _why(record: dict[str, Any], scenario: str, metric: str = "") -> str:
    """Why a revision has no value: its failure, or its instance's."""
    if record["status"] != "ok":
        return problem(record)
    found = _instance(record, scenario)
    if found is None:
        return f"no instance {scenario}"
    if found.get("error"):
        return f"{scenario} failed: {found['error']}"
    if metric and _without_pass(record, metric):
        return "measured without the instructions pass"
    return "no value"


def _number(value: float, sign: str = "") -> str:
    """Every digit: Ir/op (instructions over the window's ops) is exact and seldom whole."""
    return sweep_table.exact_number(value, sign)


def _step(before: float, after: float) -> str:
    """`before → after (+delta, +percent)`; no percent from 0."""
    change = after - before
    percent = f", {change / before * 100:+.1f}%" if before else ""
    return f"{_number(before)} → {_number(after)} ({_number(change, '+')}{percent})"


def _named(record: dict[str, Any]) -> str:
    """The full sha, and the tag when the label is one."""
    tag = ("" if record["label"] == record["sha"][:len(record["label"])]
           else f" ({terminal(record['label'])})")
    return f"{record['sha']}{tag}"


def _report(found: bisection.Search, probed: list[dict[str, Any] | None], scenario: str,
            metric: str, good_sha: str, good_value: float) -> None:
    """The first changed commit with before → after, or the suspects skips leave; the skips.
    Labels, subjects and log lines are escaped for the terminal."""
    if found.exact:
        after = probed[found.high]
        before = (probed[found.low]["sha"] if found.low >= 0 else good_sha)[:10]
        print(f"first change: {_named(after)}\n"
              f"    {terminal(after['subject'])}\n"
              f"    {terminal(metric)} {_step(good_value, _value(after, scenario, metric))}; "
              f"its parent {before} has {_number(good_value)}")
    else:
        print(f"the first change is one of these {len(found.suspects())} commits; the skipped "
              "ones hide which:")
        _suspects(probed, found.suspects(), found.skipped, scenario)
    _skipped(probed, found.skipped, scenario)


def _suspects(probed: list[dict[str, Any] | None], suspects: range, skipped: list[int],
              scenario: str) -> None:
    for i in suspects:
        state = f"skipped, {_why(probed[i], scenario)}" if i in skipped else "changed"
        print(terminal(f"    {probed[i]['sha'][:10]} ({state}) {probed[i]['subject']}"))


def _skipped(probed: list[dict[str, Any] | None], skipped: list[int], scenario: str) -> None:
    for i in sorted(skipped):
        print(terminal(f"skipped {probed[i]['sha'][:10]}: {_why(probed[i], scenario)}"))


def _print_step(number: int, change: bisection.Change, probed: list[dict[str, Any] | None],
                metric: str, scenario: str) -> None:
    """One step of --all, printed as soon as it is found: the commit, its subject and before →
    after; or, when skipped commits hide which one it is, all of them."""
    after, before = probed[change.high], probed[change.low]
    step = f"{terminal(metric)} {_step(change.before, change.after)}"
    if change.exact:
        print(f"change {number}: {_named(after)}\n    {terminal(after['subject'])}\n"
              f"    {step}; its parent {before['sha'][:10]} has {_number(change.before)}")
    else:
        print(f"change {number} is one of these {len(change.suspects())} commits; the skipped "
              f"ones hide which ({step} from {before['sha'][:10]}):")
        _suspects(probed, change.suspects(), list(change.suspects())[:-1], scenario)
    sys.stdout.flush()


class _Probes:
    """The revisions bisect looked at, by position (0 good, the last bad): each measured or
    taken from the store, with the value it found on its progress line."""

    def __init__(self, plan: sweep.Plan, commits: list[str], scenario: str, metric: str,
                 to_measure: int):
        self.plan, self.commits, self.scenario, self.metric = plan, commits, scenario, metric
        self.progress = sweep_progress.Progress(len(commits), to_measure)
        self.records: dict[int, dict[str, Any]] = {}
        self.values: dict[int, float | None] = {}   # None: skipped

    def record(self, position: int) -> dict[str, Any]:
        record = self.progress.measure(self.plan, position + 1, self.commits[position],
                                       lambda r: _describe(r, self.scenario, self.metric))
        self.records[position] = record
        self.values[position] = _value(record, self.scenario, self.metric)
        return record

    def value(self, position: int) -> float | None:
        self.record(position)
        return self.values[position]

    def probed(self) -> list[dict[str, Any] | None]:
        return [self.records.get(i) for i in range(len(self.commits))]

    def cost(self) -> str:
        """How the revisions looked at were had: one count of them, the ends included, so
        that `8 probed between the ends` and the 10 it took do not read as 18."""
        measured = len(self.progress.durations)
        return (f"{len(self.records)} revisions looked at, the ends included: {measured} "
                f"measured, {len(self.records) - measured} from the store "
                f"{terminal(str(self.plan.store.root))}")


def _keep(probes: _Probes, search: str, steps: list[bisection.Change]) -> None:
    """What the search found, into the store beside its records (history/bisected.py): what
    a report names as the commit of a step."""
    plan, probed = probes.plan, probes.probed()
    bisected.write(plan.store.root, {
        "machine": plan.machine, "allocator": plan.allocator, "recipe": plan.recipe_id,
        "scenario": probes.scenario, "metric": probes.metric, "good": probes.commits[0],
        "bad": probes.commits[-1], "search": search,
        "steps": [{"before": probes.commits[c.low], "after": probes.commits[c.high],
                   "exact": c.exact, "from": c.before, "to": c.after,
                   "label": probed[c.high]["label"], "subject": probed[c.high]["subject"]}
                  for c in steps]})


def _first_change(probes: _Probes, good_sha: str, good_value: float
                  ) -> tuple[int, tuple[str, str] | None]:
    """Without --all: the first commit whose value differs from good's; the exit code, and
    (the last unchanged commit, the first changed one) when the search named one."""
    def differs(index: int) -> bool | None:
        value = probes.value(index + 1)
        return None if value is None else value != good_value

    count = len(probes.commits) - 1
    found = bisection.search(count, differs)
    _report(found, probes.probed()[1:], probes.scenario, probes.metric, good_sha, good_value)
    print(f"{count} commits after good; {probes.cost()}")
    low, high = found.low + 1, found.high + 1
    _keep(probes, "first", [bisection.Change(low, high, good_value, probes.values[high])])
    if not found.exact:
        return 1, None
    return 0, (probes.commits[found.low + 1], probes.commits[found.high + 1])


def _sites(plan, scenario: str, before: str, after: str, what: str = "") -> None:
    """The site diff of `scenario` between the last unchanged and the first changed commit:
    the plugins the probes were measured with (built again as they were, when no longer
    kept), profiled under heaptrack (sites/profile.py)."""
    try:
        packages.ensure(changes.PROFILE_PACKAGES)
    except UserError as e:
        print(f"allocation sites skipped: {terminal(str(e).splitlines()[0])}")
        return
    folder = worktrees.state_dir(plan.repo) / "sites" / f"{before[:12]}-{after[:12]}"
    runner = runners.profile_runner(plan.runner)
    tables = []
    for sha in (before, after):
        tables.append(profile.profile(runner, [sweep.plugin_of(plan, sha)], scenario,
                                      folder / sha[:12],
                                      changes.SITE_OPS))
    print(f"sites of {what}{terminal(scenario)}, {before[:10]} → {after[:10]} (heaptrack, per "
          f"op; profiles in {terminal(str(folder))}):")
    moved = per_op.diff(tables[0].costs, tables[1].costs)
    for change in moved:
        print(f"  {change.text(terminal, terminal)}")
    if not moved:
        print("  no allocation site changed")


def _every_step(probes: _Probes, ends: tuple[float, float], sites: bool) -> int:
    """--all: each step printed as soon as it is found, in history order; then the skips and
    what it cost, then (`sites`) the allocation sites' diff of each exact step. The ETA
    follows bisection.probes_ahead, as the number of steps is unknown."""
    last = len(probes.commits) - 1
    numbers = itertools.count(1)

    def value(position: int) -> float | None:
        probes.progress.expect(bisection.probes_ahead(probes.values))
        return probes.value(position)

    def found(change: bisection.Change) -> None:
        _print_step(next(numbers), change, probes.probed(), probes.metric, probes.scenario)

    survey = bisection.every_change(last, ends, value, found)
    _keep(probes, "all", survey.changes)
    _skipped(probes.probed(), survey.skipped, probes.scenario)
    hidden = sum(not c.exact for c in survey.changes)
    steps = f"{len(survey.changes)} step{'' if len(survey.changes) == 1 else 's'}"
    named = f"{hidden} hidden among skipped commits" if hidden else "each named exactly"
    print(f"{steps}, {named}; a change undone between two commits of equal value is not "
          "searched for")
    print(f"{last} commits after good, {len(probes.records) - 2} probed between the ends; "
          f"{probes.cost()}")
    if sites:
        for number, change in enumerate(survey.changes, 1):
            if change.exact:
                _sites(probes.plan, probes.scenario, probes.commits[change.low],
                       probes.commits[change.high], f"change {number}, ")
            else:
                print(f"no allocation sites of change {number}: skipped commits hide which "
                      "commit it is; profile two of them: allocbench profile --rev A --rev B")
    return 1 if hidden else 0


def run(*, scenario: str, good: str, bad: str, metric: str = "bytes_per_op",
        every_step: bool = False,
        repo: Path | None = None, store: Path | None = None, machine: str | None = None,
        allocator: str = "system", graft: list[str] | None = None, target: str | None = None,
        plugin_path: str | None = None, cmake_arg: list[str] | None = None,
        config: Path | None = None, runner: Path | None = None, timeout: float = 1800,
        instance_timeout: str | None = None, force: bool = False,
        retry_failed: bool = False, bench: Path | None = None, cmake: str | None = None,
        submodules: str | None = None, no_sites: bool = False, instructions: bool = False,
        estimated_cycles: bool = False, jobs: int | None = None) -> int:
    repo = worktrees.toplevel(repo or Path.cwd())
    # a metric of the instructions pass needs it (known before anything is measured: FALLBACK)
    instructions = instructions or sweep_table.passes_for([metric])[0]
    good_sha, bad_sha = worktrees.resolve(repo, good), worktrees.resolve(repo, bad)
    if good_sha == bad_sha:
        raise UserError(f"--good {good} and --bad {bad} are the same commit {good_sha[:12]}")
    line = selection.first_parent(repo, good_sha, bad_sha)
    plan = sweep_command.make_plan(
        repo=repo, store=store, machine=machine, allocator=allocator, graft=graft or [],
        revisions=[good_sha, bad_sha],
        target=target, plugin_path=plugin_path, cmake_arg=cmake_arg or [], config=config,
        runner=runner, timeout=timeout, force=force, retry_failed=retry_failed, time=False,
        run_options=[] if instance_timeout is None else ["--instance-timeout", instance_timeout],
        bench=bench, cmake=cmake, submodules=submodules, instructions=instructions,
        estimated_cycles=estimated_cycles, jobs=jobs)
    probes = _Probes(plan, [good_sha, *line], scenario, metric,
                     math.ceil(math.log2(len(line))) + 2)
    good_value = _endpoint(probes.record(0), "good", scenario, metric)
    section = _section(probes.records[0], metric)
    bad_value = _endpoint(probes.record(len(line)), "bad", scenario, metric)
    what = terminal(f"{scenario} {metric}")
    if bad_value == good_value:
        print(f"{what} is {_number(good_value)} at both {terminal(good)} and {terminal(bad)}: "
              "nothing to bisect (a change that was undone in between is not searched for)")
        return 1
    print(f"{what}: {_number(good_value)} at {terminal(good)} ({good_sha[:10]}), "
          f"{_number(bad_value)} at {terminal(bad)} ({bad_sha[:10]})", flush=True)
    sites = not no_sites and section == "alloc"
    # heaptrack's sites explain bytes and allocations, not instructions
    why = "" if no_sites or sites else (
        f"no allocation sites: {terminal(metric)} is not an allocation metric (callgrind, e.g. "
        "valgrind --tool=callgrind, shows where instructions go)")
    if every_step:
        code = _every_step(probes, (good_value, bad_value), sites)
        if why:
            print(why)
        return code
    code, pair = _first_change(probes, good_sha, good_value)
    if pair is not None and sites:
        _sites(plan, scenario, *pair)
    elif pair is not None and why:
        print(why)
    return code
