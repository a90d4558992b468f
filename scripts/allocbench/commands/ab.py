"""allocbench ab --base REV --cand REV: the pull-request gate in one command.

Builds each revision's scenario plugin in its own git worktree of the subject repository
(--repo, default: the checkout you are in), runs ONE harness on both plugins with interleaved
forks (base, cand, base, cand …) so machine drift hits both alike, then compares as
`allocbench compare` does: same output formats, same exit codes (0 pass, 1 gated regression or
an instance that failed in the candidate, 2 bad input, 3 a build or allocbench-run failed).
Then heaptrack profiles, on both sides, the instances whose allocations changed and those a
[[sites]] budget of allocbench.toml names, and a site beyond its budget gates too. Results go to
<repo>/.allocbench/ab/<base>-<cand>/{base,cand}/fork-<i>.json, with the pull-request comment
next to them as comparison.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from allocbench import buildspec, compare_format, compare_json, graft, packages
from allocbench import instructions_pass, policy, proc, project, revisions, site_budget
from allocbench import config as config_file
from allocbench import compare as cmp
from allocbench.commands import compare as compare_command
from allocbench.commands import profile as profile_command
from allocbench.commands import report as report_command
from allocbench.errors import UserError
from allocbench.fileio import write_atomically
from allocbench.sites import SiteChange


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive integer")
    return value


def add_run_arguments(parser: argparse.ArgumentParser, forks: int, with_no_time: bool = True
                      ) -> None:
    """How the harness runs: shared by ab and calibrate."""
    parser.add_argument("--runner", type=Path, metavar="PATH",
                        help="allocbench-run to use for every fork [this checkout's "
                             "build/release/bin/allocbench-run, built if needed]")
    parser.add_argument("--forks", type=positive, default=forks, metavar="N",
                        help=f"processes per side, interleaved [{forks}]")
    parser.add_argument("--repetitions", type=positive, metavar="N",
                        help="time-pass samples per fork [allocbench-run's: 5]")
    parser.add_argument("--min-time", metavar="SECONDS",
                        help="minimum time per sample [allocbench-run's: 0.05]")
    parser.add_argument("--filter", metavar="REGEX", help="only instances whose name matches")
    parser.add_argument("--instance-timeout", metavar="SECONDS",
                        help="an instance still running after this long is killed and recorded "
                             "as failed [allocbench-run's: 600]")
    if with_no_time:
        parser.add_argument("--no-time", action="store_true",
                            help="skip the time pass (allocation metrics only)")
    instructions_pass.add_arguments(parser)


def runner_options(*, repetitions: int | None, min_time: str | None, filter: str | None,
                   no_time: bool, instance_timeout: str | None = None,
                   instructions: bool = False, estimated_cycles: bool = False) -> list[str]:
    options = []
    for flag, value in (("--filter", filter), ("--repetitions", repetitions),
                        ("--min-time", min_time), ("--instance-timeout", instance_timeout)):
        if value is not None:
            options += [flag, str(value)]
    return options + (["--no-time"] if no_time else []) + \
        instructions_pass.flags(instructions, estimated_cycles)


def check_runner(runner: Path, options: list[str]) -> None:
    """Refuses, before anything is built, run or stored, a runner that is not an allocbench-run
    and options it would refuse: a bad --min-time must not become a revision's failure."""
    try:
        done = proc.run([str(runner), *options, "--help"], capture_output=True, text=True,
                        errors="replace", timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UserError(f"--runner {runner}: cannot run it ({getattr(e, 'strerror', None) or e})"
                        "; pass an allocbench-run or drop --runner") from None
    prefix = "allocbench-run: error: "
    if done.returncode == 2 and done.stderr.startswith(prefix):
        raise UserError(f"{done.stderr.splitlines()[0][len(prefix):]} (an option for "
                        f"{runner.name})")
    if done.returncode != 0 or not done.stdout.startswith("usage: allocbench-run"):
        raise UserError(f"--runner {runner}: not an allocbench-run (its --help shows no "
                        "allocbench-run usage); pass one, e.g. build/release/bin/allocbench-run, "
                        "or drop --runner")


def harness(runner: Path | None, allocator: str = "system", instructions: bool = False
            ) -> Path:
    """The given runner, or this checkout's Release allocbench-run for `allocator` (built when
    missing; with `instructions`, built with valgrind's client requests)."""
    if runner is not None:
        if not runner.is_file():
            raise UserError(f"{runner}: no such runner; build allocbench-run or drop --runner")
        return runner
    packages.ensure(packages.BUILD_PACKAGES)
    build = project.build_dir()
    runner = project.runner_path(build, allocator)
    if instructions:
        packages.ensure(packages.INSTRUCTIONS_PACKAGES)
        project.configure_and_build(build, targets=[runner.name, buildspec.DEFAULT_TARGET],
                                    instructions=True)
    elif not runner.exists():
        project.configure_and_build(build, targets=[runner.name, buildspec.DEFAULT_TARGET])
    if not runner.exists():
        raise UserError(f"{runner} was not built: the {allocator} backend's library is missing; "
                        "see the configure output above")
    return runner


def add_cmake_arguments(parser: argparse.ArgumentParser) -> None:
    """How a revision's plugin is built with the project's CMake: shared by ab and sweeps."""
    parser.add_argument("--target", metavar="NAME",
                        help=f"CMake target of the scenario plugin [{buildspec.DEFAULT_TARGET}]")
    parser.add_argument("--plugin-path", metavar="PATH",
                        help="the plugin, relative to the build folder "
                             f"[{buildspec.DEFAULT_PLUGIN}]")
    parser.add_argument("--cmake-arg", action="append", default=[], metavar="ARG",
                        help="extra configure argument, repeatable; write it with '=': "
                             "--cmake-arg=-DMY_OPTION=ON")
    parser.add_argument("--cmake", metavar="PATH",
                        help="the cmake program to configure and build with [cmake on PATH]")


def build_plugins(repo: Path, shas: list[str], runner: Path, *, target: str | None,
                  plugin_path: str | None, cmake_arg: list[str] | None, cmake: str | None
                  ) -> dict[str, Path]:
    """Each revision's plugin, built with the project's CMake in its own worktree (folders
    kept and reused) against the package of `runner`'s build."""
    spec = buildspec.CMakeBuild(target or buildspec.DEFAULT_TARGET,
                                plugin_path or buildspec.DEFAULT_PLUGIN, tuple(cmake_arg or ()),
                                cmake=buildspec.cmake_program(cmake))
    plugins: dict[str, Path] = {}
    for sha in dict.fromkeys(shas):
        with revisions.locked(repo, sha):
            plugins[sha] = spec.build(graft.checkout(repo, sha, []), spec.folder(repo, sha), sha,
                                      buildspec.package_dir(runner))
    return plugins


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base", required=True, metavar="REV", help="baseline revision")
    parser.add_argument("--cand", required=True, metavar="REV", help="candidate revision")
    parser.add_argument("--repo", type=Path, metavar="PATH",
                        help="the repository whose revisions to build [the current checkout]")
    add_cmake_arguments(parser)
    add_run_arguments(parser, forks=3)
    compare_command.add_gate_arguments(parser)
    report_command.add_report_argument(parser, "the comparison")
    parser.add_argument("--no-sites", action="store_true",
                        help="do not profile the instances whose allocations changed (by "
                             "default: heaptrack on both sides, the site changes in the comment)")
    parser.add_argument("--max-sites", type=positive, default=3, metavar="N",
                        help="profile at most N instances, the biggest B/op changes first [3]")


def judge_sites(comparison: cmp.Comparison, settings: config_file.Config,
                found: profile_command.SiteChanges | None
                ) -> tuple[cmp.Comparison, dict[str, list[SiteChange]], str]:
    """The comparison with its sites beyond their [[sites]] budgets and the budgets it could not
    judge (site_budget.judge: those gate), the site changes to show and a note of what was not
    profiled; `found` None: --no-sites, each budget named as not judged, without gating (the
    user asked for it)."""
    if found is None:
        return site_budget.unjudged(comparison, settings, "not profiled (--no-sites)"), {}, ""
    comparison = site_budget.judge(comparison, settings, found.changes, found.unsteady,
                                   found.failed)
    notes = [found.note] if found.note else []
    notes += [f"the sites of {name} were not profiled: {why}"
              for name, why in found.failed.items() if not site_budget.budgeted(settings, name)]
    return comparison, found.changes, "; ".join(notes)


def run(*, base: str, cand: str, repo: Path | None = None, target: str | None = None,
        plugin_path: str | None = None, cmake_arg: list[str] | None = None,
        cmake: str | None = None, runner: Path | None = None, forks: int = 3,
        repetitions: int | None = None, min_time: str | None = None, filter: str | None = None,
        instance_timeout: str | None = None, no_time: bool = False,
        instructions: bool = False, estimated_cycles: bool = False,
        format: str = "console", fail_on: str = "any",
        config: Path | None = None, threshold: float | None = None,
        calibration: Path | None = None, show_all: bool = False, report: Path | None = None,
        no_sites: bool = False, max_sites: int = 3) -> int:
    if report is not None:
        report_command.check_out(report)
    repo = revisions.toplevel(repo or Path.cwd())
    shas = {"base": revisions.resolve(repo, base), "cand": revisions.resolve(repo, cand)}
    # The policy is the base revision's, read before anything is built: neither the
    # candidate's diff nor its build can loosen the rules it is judged by (policy.py).
    rules = policy.at_base(repo, shas["base"], shas["cand"], config, calibration)
    settings = rules.config
    if settings.sites and not no_sites:   # [[sites]] budgets cannot be judged without it
        try:
            packages.ensure(profile_command.PROFILE_PACKAGES)
        except UserError as e:
            raise UserError(f"{rules.judged_by(policy.CONFIG)}: its [[sites]] budgets need "
                            f"heaptrack to profile allocation sites (or pass --no-sites): {e}"
                            ) from None
    runner = harness(runner, instructions=instructions)
    options = runner_options(repetitions=repetitions, min_time=min_time, filter=filter,
                             no_time=no_time, instance_timeout=instance_timeout,
                             instructions=instructions, estimated_cycles=estimated_cycles)
    check_runner(runner, options)
    pair = f"{shas['base'][:12]}-{shas['cand'][:12]}"
    out = revisions.state_dir(repo) / "ab" / pair
    # Two abs of one pair would share its folder, one clearing it while the other compares:
    # they take turns, each from its builds to its comparison.md.
    with revisions.locked(repo, f"ab-{pair}", f"the ab folder {out}"):
        plugins = build_plugins(repo, list(shas.values()), runner, target=target,
                                plugin_path=plugin_path, cmake_arg=cmake_arg, cmake=cmake)
        subjects = [revisions.Subject(side, (plugins[sha],),
                                      tuple(revisions.revision(repo, sha).context_flags()))
                    for side, sha in shas.items()]
        folders = revisions.run_interleaved(runner, subjects, forks, out, options)

        policy.record(rules, out)
        comparison = compare_command.judge(folders["base"], folders["cand"], rules=rules,
                                           threshold=threshold, fail_on=fail_on)
        found = None if no_sites else profile_command.site_changes(
            comparison, [plugins[shas["base"]]], [plugins[shas["cand"]]], out / "sites",
            max_sites, runner, budgeted=lambda name: site_budget.budgeted(settings, name))
        comparison, sites, note = judge_sites(comparison, settings, found)
        text = compare_command.render(comparison, format=format, fail_on=fail_on,
                                      show_all=show_all, sites=sites, sites_note=note)
        code = 1 if cmp.gated(comparison, fail_on) else 0
        write_atomically(out / "comparison.md",
                         compare_format.markdown(comparison, fail_on, sites, note,
                                                 max_chars=None))
        print(f"allocbench: results and comparison.md in {out}", file=sys.stderr)
        print(text, end="")
    if report is not None:
        from reports import inputs
        doc = json.loads(compare_json.to_json(comparison, fail_on))
        report_command.publish(inputs.Site(comparisons=[(str(out), doc)]), report)
    return code
