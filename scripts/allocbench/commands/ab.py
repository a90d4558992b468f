"""allocbench ab --base REV --cand REV: the pull-request gate in one command.

Builds each revision's scenario plugin in its own git worktree of the subject repository
(--repo, default: the checkout you are in), runs ONE harness on both plugins with interleaved
forks (base, cand, base, cand …) for the exact counts, then times both in one paired run
(allocbench-run --against: short batches of each in turn, docs/paired.md; --unpaired: the forks
time them instead), and compares as `allocbench compare` does: same output formats, same exit codes (0 pass, 1 gated regression or
an instance that failed in the candidate, 2 bad input, 3 a build or allocbench-run failed).
Then heaptrack profiles, on both sides, the instances whose allocations changed and those a
[[sites]] budget of allocbench.toml names, and a site beyond its budget gates too. Results go to
<repo>/.allocbench/ab/<base>-<cand>/{base,cand}/fork-<i>.json and paired.json, with the
pull-request comment next to them as comparison.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from allocbench.base import packages
from allocbench.base.errors import UserError
from allocbench.base.fileio import write_atomically
from allocbench.harness import runners
from allocbench.history import buildspec, worktrees
from allocbench.sites import changes
from allocbench.sites.per_op import SiteChange
from allocbench.gate import compare as cmp, compare_format, compare_json, config as config_file
from allocbench.gate import policy, site_budget
from allocbench.commands import arguments, compare as compare_command, report as report_command


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base", required=True, metavar="REV", help="baseline revision")
    parser.add_argument("--cand", required=True, metavar="REV", help="candidate revision")
    parser.add_argument("--repo", type=Path, metavar="PATH",
                        help="the repository whose revisions to build [the current checkout]")
    arguments.add_cmake_arguments(parser)
    arguments.add_run_arguments(parser, forks=3)
    compare_command.add_gate_arguments(parser)
    report_command.add_report_argument(parser, "the comparison")
    parser.add_argument("--unpaired", action="store_true",
                        help="time each side in its own forks, as before (by default base and "
                             "candidate are timed together, paired: docs/paired.md)")
    parser.add_argument("--paired-time", type=arguments.positive_seconds, metavar="SECONDS",
                        help="time per instance of the paired pass "
                             f"[{runners.PAIRED_TIME_S:g}]")
    parser.add_argument("--no-sites", action="store_true",
                        help="do not profile the instances whose allocations changed (by "
                             "default: heaptrack on both sides, the site changes in the comment)")
    parser.add_argument("--max-sites", type=arguments.positive, default=3, metavar="N",
                        help="profile at most N instances, the biggest B/op changes first [3]")


def _check_time_options(paired: bool, unpaired: bool, repetitions: int | None,
                        min_time: str | None, paired_time: float | None) -> None:
    """UserError for an option of the time pass that does not run: it would be ignored."""
    if paired and (repetitions is not None or min_time is not None):
        flag = "--repetitions" if repetitions is not None else "--min-time"
        raise UserError(f"{flag} sets the unpaired time pass, and ab times base and candidate "
                        "paired: add --unpaired to time them in forks, or drop it (--paired-time "
                        "sets the paired pass)")
    if not paired and paired_time is not None:
        raise UserError("--paired-time sets the paired time pass, which "
                        f"{'--unpaired' if unpaired else '--no-time'} turns off; drop one")


def judge_sites(comparison: cmp.Comparison, settings: config_file.Config,
                found: changes.SiteChanges | None
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
        cmake: str | None = None, jobs: int | None = None, runner: Path | None = None,
        forks: int = 3, repetitions: int | None = None, min_time: str | None = None,
        filter: str | None = None, instance_timeout: str | None = None, no_time: bool = False,
        instructions: bool = False, estimated_cycles: bool = False,
        format: str = "console", fail_on: str = "any",
        config: Path | None = None, threshold: float | None = None,
        calibration: Path | None = None, show_all: bool = False, report: Path | None = None,
        no_sites: bool = False, max_sites: int = 3, unpaired: bool = False,
        paired_time: float | None = None) -> int:
    if report is not None:
        report_command.check_out(report)
    repo = worktrees.toplevel(repo or Path.cwd())
    shas = {"base": worktrees.resolve(repo, base), "cand": worktrees.resolve(repo, cand)}
    # The policy is the base revision's, read before anything is built: neither the
    # candidate's diff nor its build can loosen the rules it is judged by (policy.py).
    rules = policy.at_base(repo, shas["base"], shas["cand"], config, calibration)
    settings = rules.config
    if settings.sites and not no_sites:   # [[sites]] budgets cannot be judged without it
        try:
            packages.ensure(changes.PROFILE_PACKAGES)
        except UserError as e:
            raise UserError(f"{rules.judged_by(policy.CONFIG)}: its [[sites]] budgets need "
                            f"heaptrack to profile allocation sites (or pass --no-sites): {e}"
                            ) from None
    paired = not (unpaired or no_time)
    _check_time_options(paired, unpaired, repetitions, min_time, paired_time)
    runner = runners.find(runner, instructions=instructions, jobs=jobs)
    options = runners.options(repetitions=repetitions, min_time=min_time, filter=filter,
                              no_time=no_time or paired, instance_timeout=instance_timeout,
                              instructions=instructions, estimated_cycles=estimated_cycles)
    runners.check(runner, options)
    pair_options = runners.paired_options(filter=filter, instance_timeout=instance_timeout,
                                          paired_time=paired_time)
    if paired:
        runners.check(runner, ["--plugin", "x", "--against", "y", *pair_options])
    pair = f"{shas['base'][:12]}-{shas['cand'][:12]}"
    out = worktrees.state_dir(repo) / "ab" / pair
    # Two abs of one pair would share its folder, one clearing it while the other compares:
    # they take turns, each from its builds to its comparison.md.
    with worktrees.locked(repo, f"ab-{pair}", f"the ab folder {out}"):
        plugins = buildspec.build_plugins(repo, list(shas.values()), runner, target=target,
                                          plugin_path=plugin_path, cmake_arg=cmake_arg,
                                          cmake=cmake, jobs=jobs)
        subjects = [worktrees.Subject(side, (plugins[sha],),
                                      tuple(worktrees.revision(repo, sha).context_flags()))
                    for side, sha in shas.items()]
        folders = worktrees.run_interleaved(runner, subjects, forks, out, options)
        pairs = None
        if paired:
            pairs = worktrees.run_paired(runner, plugins[shas["base"]], plugins[shas["cand"]],
                                         out / compare_command.PAIRED_FILE, pair_options)
        else:
            (out / compare_command.PAIRED_FILE).unlink(missing_ok=True)

        policy.record(rules, out)
        comparison = compare_command.judge(folders["base"], folders["cand"], rules=rules,
                                           threshold=threshold, fail_on=fail_on, paired=pairs)
        found = None if no_sites else changes.site_changes(
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
        from allocbench.reports import inputs
        doc = json.loads(compare_json.to_json(comparison, fail_on))
        report_command.publish(inputs.Site(comparisons=[(str(out), doc)]), report)
    return code
