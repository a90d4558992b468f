"""Dispatches `allocbench <verb>` to allocbench.commands.<verb>.

Each command module has `setup_arguments(parser)` and `run(**kwargs) -> int`; tests call
`run` directly.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import NoReturn

from allocbench.base import exit_codes, packages
from allocbench.base.errors import MeasurementFailed, UserError
from allocbench.base.escape import terminal

COMMANDS = {
    "run": "build if needed, run the scenarios, write results/<revision>.json and a report",
    "test": "build and run every test (C++, Python, sanitizers)",
    "compare": "gate candidate results against baseline results (exit 1 on a regression)",
    "ab": "build two revisions' plugins, count in interleaved forks, time paired, compare",
    "calibrate": "A/A runs of one build: the time gate's false positives and detectable effect",
    "sweep": "measure many revisions (tags, a range) with today's scenarios; the sweep table",
    "sweep-table": "the sweep table from the store, markdown or CSV (nothing is built or run)",
    "bisect": "find the commit where a scenario's allocations changed",
    "merge": "combine the stores of a sharded sweep",
    "report": "a static HTML site of results, comparisons and sweeps (reports/)",
    "profile": "where each instance's bytes come from: heaptrack, and exact per-op sites",
}


def _module(command: str) -> str:
    return "allocbench.commands." + command.replace("-", "_")


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, like every other bad input (argparse prints the usage too)."""

    def error(self, message: str) -> NoReturn:
        self.exit(exit_codes.BAD_INPUT,
                  f"allocbench: error: {message} (see '{self.prog} --help')\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every command's arguments, or only those of the command `only` (the others listed by
    name): importing every command costs a second (scipy, the importers) that a `report` or
    `sweep-table` of a long history should not pay."""
    parser = _Parser(
        prog="allocbench",
        description="Exact allocation counts (B/op, allocs/op) and time for C++ scenarios.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        command = sub.add_parser(name, help=help_text, description=help_text)
        if only is None or name == only:
            importlib.import_module(_module(name)).setup_arguments(command)
    return parser


def _command_of(argv: list[str]) -> str | None:
    """The command the arguments name: the first that is not an option (the top level has no
    option that takes a value)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Exit codes (exit_codes.CODES, docs/exit-codes.md): 0 pass, 1 a gated regression or a
    failed instance, revision or test, 2 bad input or usage, 3 the measurement could not be
    made or an internal error, 130 interrupted by SIGINT or SIGTERM."""
    # Installed explicitly: a shell without job control starts background commands with SIGINT
    # ignored, and SIGTERM's default would leave allocbench-run without its parent's clean-up.
    signal.signal(signal.SIGINT, _interrupted)
    signal.signal(signal.SIGTERM, _interrupted)
    # A report of a long history keeps the brief records of thousands of revisions: with the
    # default threshold the collector walks them again every 700 allocations (0.13 ms a brief
    # record read instead of 0.05); the commands make few reference cycles.
    gc.set_threshold(50_000, 20, 20)
    try:
        packages.ensure(packages.PYTHON_PACKAGES)
    except UserError as e:
        print(f"allocbench: error: {e}", file=sys.stderr)
        return exit_codes.BAD_INPUT
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(_command_of(argv))
    args = vars(parser.parse_args(argv))
    command = args.pop("command")
    if command is None:
        parser.print_help()
        return exit_codes.BAD_INPUT
    module = importlib.import_module(_module(command))
    try:
        return module.run(**args)
    except UserError as e:
        print(f"allocbench: error: {terminal(str(e), multiline=True)}", file=sys.stderr)
        return exit_codes.BAD_INPUT
    except MeasurementFailed as e:
        print(f"allocbench: error: {terminal(str(e), multiline=True)}", file=sys.stderr)
        return exit_codes.NOT_MEASURED
    except KeyboardInterrupt:
        print("allocbench: interrupted", file=sys.stderr)
        return exit_codes.INTERRUPTED
    except Exception as e:  # a bug: one line, the traceback only on request
        if os.environ.get("ALLOCBENCH_DEBUG"):
            traceback.print_exc()
        where = traceback.extract_tb(e.__traceback__)[-1]
        print(f"allocbench: internal error: {type(e).__name__}: {terminal(str(e))} (at "
              f"{Path(where.filename).name}:{where.lineno}); please report it, with the "
              "traceback that ALLOCBENCH_DEBUG=1 prints", file=sys.stderr)
        return exit_codes.NOT_MEASURED
