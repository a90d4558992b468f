"""The command-line options and argument types that several commands share (not a command
itself: cli.py loads only the modules it names).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from allocbench.harness import instructions_pass, project
from allocbench.history.submodules import MODES


def percent(text: str) -> float:
    """A time threshold: 0, NaN or infinity would turn the time gate off without a word."""
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive, finite percentage, e.g. 5")
    return value


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0.0 < value < 1e6:   # NaN and inf too
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds > 0")
    return value


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


def add_cmake_arguments(parser: argparse.ArgumentParser) -> None:
    """How a revision's plugin is built with the project's CMake, and with how many jobs:
    shared by ab, profile and the sweeps."""
    parser.add_argument("--target", metavar="NAME",
                        help=f"CMake target of the scenario plugin [{project.DEFAULT_TARGET}]")
    parser.add_argument("--plugin-path", metavar="PATH",
                        help="the plugin, relative to the build folder "
                             f"[{project.DEFAULT_PLUGIN}]")
    parser.add_argument("--cmake-arg", action="append", default=[], metavar="ARG",
                        help="extra configure argument, repeatable; write it with '=': "
                             "--cmake-arg=-DMY_OPTION=ON")
    parser.add_argument("--cmake", metavar="PATH",
                        help="the cmake program to configure and build with [cmake on PATH]")
    parser.add_argument("--jobs", type=positive, metavar="N",
                        help="build jobs at once (the harness's and each revision's), for a "
                             "machine shared with other work [[build] jobs where a recipe is "
                             "read, else $ALLOCBENCH_JOBS, else one per CPU]")


def add_recipe_arguments(parser: argparse.ArgumentParser) -> None:
    """The rest of a recipe (with add_cmake_arguments): how sweep, bisect and profile --rev
    build a revision, each also a key of [build] in the toml that --config names (its grafts
    are applied before the command line's)."""
    parser.add_argument("--graft", action="append", default=[], metavar="PATH[:DEST]",
                        help="copy PATH (today's scenario sources) over DEST of every revision "
                             "[DEST: PATH's place in the repository]; repeatable")
    parser.add_argument("--bench", type=Path, metavar="DIR",
                        help="a CMake project beside the subject that builds the plugin, "
                             "configured per revision with -DALLOCBENCH_SUBJECT_DIR=<its "
                             "source tree> (instead of the revision's own CMake)")
    parser.add_argument("--submodules", choices=MODES, default=None,
                        help="where each revision's git submodules come from: auto (your "
                             "checkout's when it has them, works offline; else their URL), "
                             "remote (their URL), none [[build] submodules, else auto]")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="allocbench.toml whose [build] says how each revision is built "
                             "[<repo>/allocbench.toml if it has one]")
