"""The instructions pass (allocbench-run --instructions): the flags every command that runs
allocbench-run offers for it, and installing valgrind when it is asked for."""

from __future__ import annotations

import argparse

from allocbench.base import packages
from allocbench.base.errors import UserError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The instructions pass's flags, as allocbench-run takes them: shared by every command
    that runs it."""
    parser.add_argument("--instructions", action="store_true",
                        help="also count instructions per op under valgrind's callgrind, in "
                             "the count windows' own ops: exact, so they gate like B/op "
                             "(valgrind is installed on first use)")
    parser.add_argument("--estimated-cycles", action="store_true",
                        help="with --instructions: also simulate the caches and report "
                             "estimated_cycles_per_op (slower)")


def flags(instructions: bool, estimated_cycles: bool) -> list[str]:
    """allocbench-run's flags for the instructions pass; installs valgrind when it is asked
    for (UserError, one line, when it cannot be)."""
    if estimated_cycles and not instructions:
        raise UserError("--estimated-cycles needs --instructions (it is part of that pass); "
                        "add it")
    if not instructions:
        return []
    try:
        packages.ensure(packages.INSTRUCTIONS_PACKAGES)
    except UserError as e:   # one line: what is missing, how to get it, how to do without
        raise UserError(f"--instructions needs valgrind: {' '.join(str(e).split())}; or drop "
                        "--instructions (every other measurement works without it)") from None
    return ["--instructions"] + (["--estimated-cycles"] if estimated_cycles else [])
