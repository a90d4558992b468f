"""Dispatches `allocbench <verb>` to allocbench.commands.<verb>.

Each command module has `setup_arguments(parser)` and `run(**kwargs) -> int`; tests call
`run` directly.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from allocbench import packages
from allocbench.errors import UserError

COMMANDS = {
    "run": "build if needed, run the scenarios, write results/<revision>.json and a report",
    "test": "build and run every test (C++, Python, sanitizers)",
    "compare": "gate candidate results against baseline results (exit 1 on a regression)",
    "ab": "build two revisions' plugins, run them with interleaved forks, compare",
    "calibrate": "A/A runs of one build: the time gate's false positives and detectable effect",
    "sweep": "measure many revisions (tags, a range) with today's scenarios; the sweep table",
    "sweep-table": "the sweep table from the store, markdown or CSV (nothing is built or run)",
    "bisect": "find the commit where a scenario's allocations changed",
    "merge": "combine the stores of a sharded sweep",
}


def _module(command: str) -> str:
    return "allocbench.commands." + command.replace("-", "_")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="allocbench",
        description="Exact allocation counts (B/op, allocs/op) and time for C++ scenarios.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        module = importlib.import_module(_module(name))
        module.setup_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        packages.ensure(packages.PYTHON_PACKAGES)
    except UserError as e:
        print(f"allocbench: error: {e}", file=sys.stderr)
        return 2
    parser = build_parser()
    args = vars(parser.parse_args(argv))
    command = args.pop("command")
    if command is None:
        parser.print_help()
        return 2
    module = importlib.import_module(_module(command))
    try:
        return module.run(**args)
    except UserError as e:
        print(f"allocbench: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("allocbench: interrupted", file=sys.stderr)
        return 130
