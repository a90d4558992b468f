"""allocbench sweep [REV ...] [--tags GLOB] [--range OLD..NEW --every N]: the allocation curve
over a project's history.

Every revision is checked out in its own worktree of the subject repository (--repo), gets
today's scenarios grafted on (--graft), is built (the project's CMake, or [build] in
allocbench.toml) and run by ONE fixed harness. Each result goes to the store as soon as it
exists: a revision already stored is neither rebuilt nor rerun (--force does), and an
interrupted sweep resumes where it stopped. A revision that fails to build, crashes or times out
is recorded with the end of its log and the sweep goes on. Prints the sweep table and writes it
beside the records it shows, <store>/sweep.md and sweep.csv (the default store:
<repo>/.allocbench/results/), so a side sweep into another store never replaces it.

--instructions also counts instructions per op (the instructions pass, under callgrind: exact,
like B/op) and adds their Ir/op table; `--metric instructions_per_op` implies it. A revision
stored without a pass the sweep asks for (time, instructions) is measured again (sweep.py).

Exit codes: 0 every revision measured, 1 some revision failed (its column shows ✗) or an
instance failed in one, 2 bad input, 3 allocbench's own harness could not be built.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path

from allocbench.base.errors import UserError
from allocbench.base.fileio import write_atomically
from allocbench.harness import instructions_pass, runners
from allocbench.harness.runners import ALLOCATORS
from allocbench.history import buildconfig, buildspec, graft as grafting, selection
from allocbench.history import submodules as submodules_of, sweep as sweeping, sweep_plot
from allocbench.history import sweep_progress, sweep_table, worktrees
from allocbench.history.revision import git
from allocbench.history.store import Store, machine_id
from allocbench.gate import config
from allocbench.commands import arguments, report as report_command

def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", type=Path, metavar="PATH",
                        help="the repository whose revisions to measure [the current checkout]")
    parser.add_argument("--store", type=Path, metavar="DIR",
                        help="results store [<repo>/.allocbench/results]")
    parser.add_argument("--machine", metavar="ID",
                        help="machine id in the store [$ALLOCBENCH_MACHINE, else the host name]")
    parser.add_argument("--allocator", choices=ALLOCATORS, default="system",
                        help="allocator backend of the harness [system = glibc]")


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="REV",
                        help="revisions to measure, in this order (after --tags and --range)")
    parser.add_argument("--tags", metavar="GLOB", help="every tag matching GLOB, in version "
                                                        "order, e.g. 'v1.*'")
    parser.add_argument("--range", metavar="OLD..NEW", dest="range_",
                        help="OLD, every N-th first-parent commit after it, and NEW")
    parser.add_argument("--every", type=arguments.positive, default=1, metavar="N",
                        help="the step of --range [1: every commit]")
    parser.add_argument("--shard", metavar="I/N",
                        help="measure only shard I of N (every N-th revision from the I-th); "
                             "combine the shards' stores with 'allocbench merge'")


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    arguments.add_cmake_arguments(parser)
    arguments.add_recipe_arguments(parser)
    parser.add_argument("--runner", type=Path, metavar="PATH",
                        help="allocbench-run for every revision [this checkout's, built if "
                             "needed]")
    parser.add_argument("--timeout", type=float, default=1800, metavar="SECONDS",
                        help="a revision's whole run taking longer is recorded as timed out "
                             "[1800]")
    parser.add_argument("--instance-timeout", metavar="SECONDS",
                        help="an instance still running after this long is killed and recorded "
                             "as failed [allocbench-run's: 600]")
    parser.add_argument("--force", action="store_true",
                        help="measure again even what the store has")
    parser.add_argument("--retry-failed", action="store_true",
                        help="measure again the revisions stored as failed")


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    add_selection_arguments(parser)
    add_store_arguments(parser)
    add_build_arguments(parser)
    parser.add_argument("--repetitions", type=arguments.positive, metavar="N",
                        help="time-pass samples per revision [allocbench-run's: 5]")
    parser.add_argument("--min-time", metavar="SECONDS",
                        help="minimum time per sample [allocbench-run's: 0.05]")
    parser.add_argument("--no-time", action="store_true",
                        help="skip the time pass (allocation metrics only)")
    add_instructions_arguments(parser, "adds their Ir/op table (instructions_per_op); "
                               "--metric instructions_per_op implies it")
    add_table_arguments(parser)
    report_command.add_report_argument(parser, "the whole store (every machine and allocator)")


def add_instructions_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """instructions_pass's --instructions and --estimated-cycles, with what they do here."""
    instructions_pass.add_arguments(parser)
    for action in parser._actions:   # argparse has no public way to reword an argument
        if action.dest == "instructions":
            action.help = (f"{action.help}; every revision stored without them is measured "
                           f"again; {what}")


def add_table_arguments(parser: argparse.ArgumentParser) -> None:
    """What the sweep table shows: shared by sweep and sweep-table."""
    parser.add_argument("--metric", action="append", metavar="NAME",
                        help="add a table of this metric after B/op's (always shown), "
                             "repeatable: allocs_per_op, usable_bytes_per_op …, or "
                             "instructions_per_op (Ir/op, from --instructions)")
    parser.add_argument("--changed-only", action="store_true",
                        help="only the scenarios whose allocation metrics (and Ir/op, when "
                             "shown) differ between revisions")
    parser.add_argument("--plot", type=Path, metavar="FILE",
                        help="also draw the allocation curve: FILE.svg, .png or .pdf "
                             "(allocation metrics only)")


def build_spec(repo: Path, config_path: Path | None, *, target: str | None = None,
               plugin_path: str | None = None, cmake_arg: list[str] | None = None,
               bench: Path | None = None, cmake: str | None = None, jobs: int | None = None
               ) -> buildspec.CMakeBuild | buildspec.CommandBuild:
    """[build] of the configuration with the command line's options over it; the project's
    own CMake when neither says otherwise."""
    if config_path is None and (repo / config.DEFAULT_NAME).is_file():
        config_path = repo / config.DEFAULT_NAME
    table = config.load(config_path).build if config_path is not None else None
    if isinstance(table, buildspec.CommandBuild):
        if target or plugin_path or cmake_arg or bench or cmake:
            raise UserError(f"{config_path} has a [build] command, so --target, --plugin-path, "
                            "--cmake-arg, --bench and --cmake do not apply; drop them or the "
                            "[build] command")
        return table if jobs is None else \
            dataclasses.replace(table, common=dataclasses.replace(table.common, jobs=jobs))
    table = table or buildconfig.CMakeSettings()
    common = table.common if jobs is None else dataclasses.replace(table.common, jobs=jobs)
    if bench is not None:
        bench = bench.resolve()
        if not (bench / "CMakeLists.txt").is_file():
            raise UserError(f"--bench {bench}: no CMakeLists.txt there; give the folder of the "
                            "CMake project that builds your scenario plugin")
    elif table.bench is not None:
        bench = table.bench
        if not (bench / "CMakeLists.txt").is_file():
            raise UserError(f"{config_path}: 'build.bench' names {bench} (relative to that "
                            "file's folder), which has no CMakeLists.txt; fix build.bench to the "
                            "folder of the CMake project that builds your scenario plugin")
    program = buildspec.cmake_program(cmake or table.cmake)
    return buildspec.CMakeBuild(
        target or table.target or buildspec.DEFAULT_TARGET,
        plugin_path or table.plugin or buildspec.DEFAULT_PLUGIN,
        (*table.cmake_args, *(cmake_arg or [])), bench, program, common,
        grafting.fingerprint([grafting.Graft(bench, "bench")]) if bench is not None else "")


def check_cmake(repo: Path, spec: buildspec.CMakeBuild, revisions: list[str]) -> None:
    """A bench project that asks for a newer CMake than the one it would be configured with
    fails every revision: refused. A revision that does (the first and the last of a sweep,
    the ends of a bisect are looked at) will fail to configure: said, before anything is
    built."""
    if spec.bench is not None:
        lists = spec.bench / "CMakeLists.txt"
        need = buildspec.required_cmake(lists.read_text(errors="replace"))
        have = buildspec.too_old(spec.cmake, need)
        if have is not None:
            raise UserError(f"{lists} requires CMake {need} (cmake_minimum_required), but "
                            f"{spec.cmake} is {have}; pass --cmake (or [build] cmake) with a "
                            "newer one")
    for sha in dict.fromkeys(revisions[:1] + revisions[-1:]):
        shown = git(repo, "show", f"{sha}:CMakeLists.txt")
        need = buildspec.required_cmake(shown.stdout) if shown.returncode == 0 else None
        have = buildspec.too_old(spec.cmake, need)
        if have is not None:
            print(f"allocbench: warning: {sha[:12]}'s CMakeLists.txt requires CMake {need}, but "
                  f"{spec.cmake} is {have}: revisions like it will fail to configure; pass "
                  "--cmake (or [build] cmake) with a newer one", file=sys.stderr)


@dataclasses.dataclass(frozen=True)
class Recipe:
    """How each revision is built: [build] of the toml with the command line over it."""
    spec: buildspec.CMakeBuild | buildspec.CommandBuild
    grafts: tuple[grafting.Graft, ...]
    submodules: str


def recipe(*, repo: Path, config: Path | None, graft: list[str], target: str | None,
           plugin_path: str | None, cmake_arg: list[str], bench: Path | None = None,
           cmake: str | None = None, submodules: str | None = None, jobs: int | None = None,
           revisions: list[str] | None = None) -> Recipe:
    """The recipe of sweep, bisect and profile --rev. What can be checked of the subject's
    side is checked here, before the harness is built (minutes, cold): a bad $ALLOCBENCH_JOBS,
    and that cmake is new enough for the bench project and for `revisions`."""
    spec = build_spec(repo, config, target=target, plugin_path=plugin_path,
                      cmake_arg=cmake_arg, bench=bench, cmake=cmake, jobs=jobs)
    spec.common.jobs_text()
    if isinstance(spec, buildspec.CMakeBuild):
        check_cmake(repo, spec, revisions or [])
    # the toml's grafts first, then the command line's
    grafts = tuple([grafting.parse(text, repo, Path(origin).resolve().parent, origin)
                    for origin, text in spec.common.grafts]
                   + [grafting.parse(text, repo) for text in graft])
    return Recipe(spec, grafts, submodules or spec.common.submodules or submodules_of.DEFAULT)


def make_plan(*, repo: Path, store: Path | None, machine: str | None, allocator: str,
              graft: list[str], target: str | None, plugin_path: str | None,
              cmake_arg: list[str], config: Path | None, runner: Path | None, timeout: float,
              force: bool, retry_failed: bool, time: bool, run_options: list[str],
              bench: Path | None = None, cmake: str | None = None,
              submodules: str | None = None, instructions: bool = False,
              estimated_cycles: bool = False, jobs: int | None = None,
              revisions: list[str] | None = None) -> sweeping.Plan:
    """What every revision is measured with: the recipe, checked first, then the harness;
    `instructions` (and `estimated_cycles`): the instructions pass too, with valgrind
    installed and a harness that can run it."""
    if not 0 < timeout < math.inf:
        raise UserError(f"--timeout {timeout:g}: give a number of seconds above 0")
    pass_flags = instructions_pass.flags(instructions, estimated_cycles)
    how = recipe(repo=repo, config=config, graft=graft, target=target,
                 plugin_path=plugin_path, cmake_arg=cmake_arg, bench=bench, cmake=cmake,
                 submodules=submodules, jobs=jobs, revisions=revisions)
    runner = runners.find(runner, allocator, instructions=instructions, jobs=how.spec.common.jobs)
    runners.check(runner, [*run_options, *([] if time else ["--no-time"]), *pass_flags])
    return sweeping.Plan(repo, how.spec, how.grafts, runner, allocator, machine_id(machine),
                         Store(store or worktrees.state_dir(repo) / "results"),
                         tuple(run_options), time, timeout, force, retry_failed,
                         how.submodules, instructions, estimated_cycles)


def run(*, names: list[str], tags: str | None = None, range_: str | None = None,
        every: int = 1, shard: str | None = None, repo: Path | None = None,
        store: Path | None = None, machine: str | None = None, allocator: str = "system",
        graft: list[str] | None = None, target: str | None = None,
        plugin_path: str | None = None, cmake_arg: list[str] | None = None,
        config: Path | None = None, runner: Path | None = None, timeout: float = 1800,
        force: bool = False, retry_failed: bool = False, repetitions: int | None = None,
        min_time: str | None = None, no_time: bool = False,
        instance_timeout: str | None = None, metric: list[str] | None = None,
        changed_only: bool = False, plot: Path | None = None, bench: Path | None = None,
        cmake: str | None = None, submodules: str | None = None, report: Path | None = None,
        instructions: bool = False, estimated_cycles: bool = False, jobs: int | None = None
        ) -> int:
    if plot is not None:
        sweep_plot.check_path(plot)
    if report is not None:
        report_command.check_out(report)
    # A table of the instructions pass's measures them; measuring them shows them.
    needs = sweep_table.passes_for(metric or [])
    instructions, estimated_cycles = instructions or needs[0], estimated_cycles or needs[1]
    metrics = sweep_table.metrics_of([*(metric or []),
                                      *(["instructions_per_op"] if instructions else []),
                                      *([sweep_table.ESTIMATED_CYCLES]
                                        if instructions and estimated_cycles else [])])
    repo = worktrees.toplevel(repo or Path.cwd())
    todo = sweeping.shard(selection.select(repo, names, tags, range_, every),
                          sweeping.parse_shard(shard))
    plan = make_plan(repo=repo, store=store, machine=machine, allocator=allocator,
                     revisions=todo,
                     graft=graft or [], target=target, plugin_path=plugin_path,
                     cmake_arg=cmake_arg or [], config=config, runner=runner, timeout=timeout,
                     force=force, retry_failed=retry_failed, time=not no_time,
                     run_options=runners.options(repetitions=repetitions, min_time=min_time,
                                                   filter=None, no_time=False,
                                                   instance_timeout=instance_timeout),
                     bench=bench, cmake=cmake, submodules=submodules, jobs=jobs,
                     instructions=instructions, estimated_cycles=estimated_cycles)
    progress = sweep_progress.Progress(len(todo), sum(plan.stored(sha) is None for sha in todo))
    columns: list[sweep_table.Column] = []
    try:
        for index, sha in enumerate(todo, 1):
            record = progress.measure(plan, index, sha)
            columns.append(sweep_table.Column(sha, record["label"], record))
            if sum(c.ok for c in columns) == 1 and columns[-1].ok:
                sweep_table.check_metrics(columns, metrics)  # a typo stops it now, not at the end
    except KeyboardInterrupt:
        print(f"allocbench: interrupted; {len(columns)} of {len(todo)} revisions are in "
              f"{plan.store.root}: run the same command again to go on", file=sys.stderr)
        raise
    text = sweep_table.markdown(columns, metrics, changed_only)
    tables = plan.store.root   # the store's own table: another --store has its own
    tables.mkdir(parents=True, exist_ok=True)
    write_atomically(tables / "sweep.md", text)
    write_atomically(tables / "sweep.csv", sweep_table.csv_text(columns, metrics, changed_only))
    if plot is not None:
        sweep_plot.plot(columns, metrics, plot, changed_only)
    print(text, end="")
    failed = [c for c in columns if not c.ok]
    instances = sum(bool(r.get("error")) for c in columns if c.ok
                    for r in c.record["results"]["results"])
    print(f"allocbench: {len(columns) - len(failed)} of {len(columns)} revisions measured"
          f"{f', {len(failed)} failed' if failed else ''}"
          f"{f', {instances} failed instance(s)' if instances else ''}"
          f"{' (✗ in the table)' if failed or instances else ''}; table in "
          f"{tables / 'sweep.md'} and sweep.csv, beside the results", file=sys.stderr)
    code = 1 if failed or instances else 0
    if report is not None:
        from allocbench.reports import inputs
        code = max(code, report_command.publish(inputs.read([], plan.store.root, [], []),
                                                report))
    return code

