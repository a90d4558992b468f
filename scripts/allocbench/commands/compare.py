"""allocbench compare BASE CAND: gate a candidate's results against a baseline's.

BASE and CAND are results files, or directories of them (one file per fork). Prints a console
table, a pull-request comment (--format markdown) or JSON; exit code 0 when nothing gated
regressed, 1 when something did, 2 on bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from allocbench.sites import per_op as sites_of, profile
from allocbench.sites.per_op import SiteChange
from allocbench.gate import compare as cmp, compare_format, compare_json, config, policy
from allocbench.base import paired_results
from allocbench.gate import paired_gate, site_budget
from allocbench.commands import arguments

FORMATS = ("console", "markdown", "json")
DEFAULT_CONFIG = config.DEFAULT_NAME
DEFAULT_CALIBRATION = Path(policy.CALIBRATION)
PAIRED_FILE = "paired.json"   # where ab writes its pairs, beside the sides' folders


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """The options `compare` shares with `ab`."""
    parser.add_argument("--format", choices=FORMATS, default="console",
                        help="console table, pull-request comment, or JSON [console]")
    parser.add_argument("--fail-on", choices=cmp.FAIL_ON, default="any",
                        help="what makes the exit code 1: the exact metrics (allocations and, "
                             "measured with --instructions, instructions), time, or either; "
                             "time is directional, never gating, when instructions were "
                             "measured, unless this is 'time' [any]")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="budgets and time settings, read as the file is on disk "
                             "[ab: allocbench.toml as the base revision holds it; compare: "
                             "of an ab folder the one ab used, else ./allocbench.toml if "
                             "present]")
    parser.add_argument("--threshold", type=arguments.percent, metavar="PERCENT",
                        help="time threshold in percent, replaces the config's [time] "
                             "threshold and paired_threshold [5 unpaired, 1 paired]")
    parser.add_argument("--calibration", type=Path, metavar="FILE",
                        help="A/A noise from 'allocbench calibrate' [found as --config is: "
                             f"{DEFAULT_CALIBRATION}]")
    parser.add_argument("--all", dest="show_all", action="store_true",
                        help="console: list unchanged metrics too")


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", type=Path, help="baseline results file or directory of forks")
    parser.add_argument("cand", type=Path, help="candidate results file or directory of forks")
    add_gate_arguments(parser)
    parser.add_argument("--paired", type=Path, metavar="FILE",
                        help="time judged from the pairs of allocbench-run --against BASE and "
                             "CAND's plugins [of ab's folders: the paired.json beside them]")
    parser.add_argument("--sites", nargs=2, type=Path, metavar=("BASE_DIR", "CAND_DIR"),
                        help="the two sides' site tables (*.sites.json of allocbench profile): "
                             "their changes are shown under each instance, and judged against "
                             "the [[sites]] budgets of the config")


def gate(base: Path, cand: Path, *, format: str = "console", fail_on: str = "any",
         rules: policy.Policy | None = None, threshold: float | None = None,
         show_all: bool = False, sites: dict[str, list[SiteChange]] | None = None,
         sites_note: str = "", paired: Path | None = None) -> tuple[cmp.Comparison, str, int]:
    """Compares, formats; returns (comparison, text, exit code). No `rules`: the defaults."""
    comparison = judge(base, cand, rules=rules, threshold=threshold, fail_on=fail_on,
                       sites=sites, paired=paired)
    text = render(comparison, format=format, fail_on=fail_on, show_all=show_all, sites=sites,
                  sites_note=sites_note)
    return comparison, text, 1 if cmp.gated(comparison, fail_on) else 0


def judge(base: Path, cand: Path, *, rules: policy.Policy | None = None,
          threshold: float | None = None, fail_on: str = "any",
          sites: dict[str, list[SiteChange]] | None = None,
          paired: Path | None = None) -> cmp.Comparison:
    """The comparison by `rules` (None: the defaults), which it carries with the candidate's
    changes to them; with `sites` (the site changes of instances profiled on both sides), its
    sites beyond their [[sites]] budgets too; with `paired` (allocbench-run --against's
    results), time judged from its pairs."""
    rules = rules or policy.from_files(None, None)
    comparison = policy.compare(rules, cmp.load_side(base), cmp.load_side(cand), fail_on,
                                threshold)
    if paired is not None:
        config = rules.config if threshold is None else rules.config.with_threshold(threshold)
        comparison = paired_gate.apply(comparison, paired_results.load(paired), config,
                                       rules.calibration)
    return site_budget.judge(comparison, rules.config, sites) if sites else comparison


def ab_pairs(base: Path, cand: Path) -> Path | None:
    """The pairs ab measured beside the folders of its two sides, if these are they."""
    found = Path(base).parent / PAIRED_FILE
    same = Path(base).parent == Path(cand).parent
    return found if same and policy.recorded(base, cand) is not None and found.is_file() \
        else None


def rules_for(base: Path, cand: Path, config: Path | None, calibration: Path | None
              ) -> policy.Policy:
    """compare's policy: the files given; of an `ab` run's folders, the policy it recorded
    (its base revision's) in place of what the current directory holds; else ./allocbench.toml
    and ./.allocbench/calibration.json where they exist."""
    found = policy.recorded(base, cand)
    if found is not None:
        return policy.overridden(found, config, calibration)
    if config is None and Path(DEFAULT_CONFIG).is_file():
        config = Path(DEFAULT_CONFIG)
    if calibration is None and DEFAULT_CALIBRATION.is_file():
        calibration = DEFAULT_CALIBRATION
    return policy.from_files(config, calibration)


def render(comparison: cmp.Comparison, *, format: str, fail_on: str, show_all: bool = False,
           sites: dict[str, list[SiteChange]] | None = None, sites_note: str = "") -> str:
    if format == "markdown":
        return compare_format.markdown(comparison, fail_on, sites, sites_note)
    if format == "json":
        return compare_json.to_json(comparison, fail_on, sites)
    return compare_format.console(comparison, fail_on, show_all, sites, sites_note)


def run(*, base: Path, cand: Path, format: str = "console", fail_on: str = "any",
        config: Path | None = None, threshold: float | None = None,
        calibration: Path | None = None, show_all: bool = False,
        sites: list[Path] | None = None, paired: Path | None = None) -> int:
    rules = rules_for(base, cand, config, calibration)
    if paired is None:
        paired = ab_pairs(base, cand)
    changes = None
    if sites:
        base_sites, cand_sites = (profile.load_tables(folder) for folder in sites)
        changes = {name: sites_of.diff(base_sites[name], cand_sites[name])
                   for name in base_sites if name in cand_sites}
    _, text, code = gate(base, cand, format=format, fail_on=fail_on, rules=rules,
                         threshold=threshold, show_all=show_all, sites=changes, paired=paired)
    print(text, end="")
    return code
