"""allocbench compare BASE CAND: gate a candidate's results against a baseline's.

BASE and CAND are results files, or directories of them (one file per fork). Prints a console
table, a pull-request comment (--format markdown) or JSON; exit code 0 when nothing gated
regressed, 1 when something did, 2 on bad input.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from allocbench import compare as cmp
from allocbench import compare_format, compare_json, config

FORMATS = ("console", "markdown", "json")
DEFAULT_CONFIG = config.DEFAULT_NAME
DEFAULT_CALIBRATION = Path(".allocbench") / "calibration.json"


def percent(text: str) -> float:
    """A time threshold: 0, NaN or infinity would turn the time gate off without a word."""
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive, finite percentage, e.g. 5")
    return value


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """The options `compare` shares with `ab`."""
    parser.add_argument("--format", choices=FORMATS, default="console",
                        help="console table, pull-request comment, or JSON [console]")
    parser.add_argument("--fail-on", choices=cmp.FAIL_ON, default="any",
                        help="what makes the exit code 1: allocation metrics, time, or "
                             "either [any]")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="budgets and time settings [allocbench.toml in the current "
                             "directory (ab: in --repo) if present]")
    parser.add_argument("--threshold", type=percent, metavar="PERCENT",
                        help="time threshold in percent, replaces the config's [time] "
                             "threshold [5]")
    parser.add_argument("--calibration", type=Path, metavar="FILE",
                        help="A/A noise from 'allocbench calibrate' "
                             f"[{DEFAULT_CALIBRATION} (ab: in --repo) if present]")
    parser.add_argument("--all", dest="show_all", action="store_true",
                        help="console: list unchanged metrics too")


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", type=Path, help="baseline results file or directory of forks")
    parser.add_argument("cand", type=Path, help="candidate results file or directory of forks")
    add_gate_arguments(parser)


def gate(base: Path, cand: Path, *, format: str = "console", fail_on: str = "any",
         config_path: Path | None = None, threshold: float | None = None,
         calibration: Path | None = None, show_all: bool = False
         ) -> tuple[cmp.Comparison, str, int]:
    """Compares, formats; returns (comparison, text, exit code). No `config_path`, no
    `calibration`: the defaults, whatever the current directory holds."""
    cfg = config.load(config_path) if config_path else config.Config()
    if threshold is not None:
        cfg = cfg.with_threshold(threshold)
    noise = cmp.load_calibration(calibration) if calibration else None
    comparison = cmp.compare(cmp.load_side(base), cmp.load_side(cand), cfg, noise)
    if format == "markdown":
        text = compare_format.markdown(comparison, fail_on)
    elif format == "json":
        text = compare_json.to_json(comparison, fail_on)
    else:
        text = compare_format.console(comparison, fail_on, show_all)
    return comparison, text, 1 if cmp.gated(comparison, fail_on) else 0


def run(*, base: Path, cand: Path, format: str = "console", fail_on: str = "any",
        config: Path | None = None, threshold: float | None = None,
        calibration: Path | None = None, show_all: bool = False) -> int:
    if config is None and Path(DEFAULT_CONFIG).is_file():
        config = Path(DEFAULT_CONFIG)
    if calibration is None and DEFAULT_CALIBRATION.is_file():
        calibration = DEFAULT_CALIBRATION
    _, text, code = gate(base, cand, format=format, fail_on=fail_on, config_path=config,
                         threshold=threshold, calibration=calibration, show_all=show_all)
    print(text, end="")
    return code
