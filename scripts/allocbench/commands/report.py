"""allocbench report [INPUT ...] [--store DIR] --out DIR: a static HTML site of runs,
comparisons and sweeps. The report itself is made in the top-level reports/ folder; this is
its command line.

INPUTs: results files (or folders of them), `ab` folders (with base/ and cand/), compare JSON
(`compare --format json`); --store adds a sweep store's histories (every machine and allocator,
or those named). Exit codes: 0 built, 1 built but some store record could not be read (its
revision is shown as unreadable), 2 bad input or nothing to report.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from allocbench.base import exit_codes, packages
from allocbench.harness.runners import ALLOCATORS


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inputs", nargs="*", type=Path, metavar="INPUT",
                        help="results files or folders of them, ab folders, compare JSON files")
    parser.add_argument("--store", type=Path, metavar="DIR",
                        help="a sweep store (allocbench sweep --store; default of a sweep: "
                             "<repo>/.allocbench/results)")
    parser.add_argument("--machine", action="append", default=[], metavar="ID",
                        help="only this machine's records of the store (repeatable) [all]")
    parser.add_argument("--allocator", action="append", default=[], choices=ALLOCATORS,
                        help="only this allocator's records of the store (repeatable) [all]")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="allocbench.toml whose budgets and time settings judge ab folders "
                             "[the defaults]")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="the site's folder: new, empty, or a report written before "
                             "(replaced in one step, keeping the files you added there; "
                             "unchanged pictures are reused)")


def add_report_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """--report DIR of ab and sweep."""
    parser.add_argument("--report", type=Path, metavar="DIR",
                        help=f"also build the HTML report of {what} into DIR (as 'allocbench "
                             "report' does)")


def check_out(out: Path) -> None:
    """Refuses a --out/--report folder before anything is measured into it."""
    packages.ensure(packages.REPORT_PACKAGES)
    from allocbench.reports import folder
    folder.check_out(out)


def publish(found, out: Path) -> int:
    """Builds the site of `found` (reports.inputs.Site) into `out`; the exit code."""
    from allocbench.reports import site
    built = site.build(found, out)
    print(f"allocbench: report of {built.pages} pages in {out} (open {out / 'index.html'}); "
          f"{built.drawn} pictures drawn, {built.reused} reused; {built.copied} pages of older "
          "revisions unchanged, copied", file=sys.stderr)
    if built.left is not None:
        print(f"allocbench: {built.left} holds what was added to {out} during the build; move "
              "it back into the report's folder", file=sys.stderr)
    if found.problems:
        n = len(found.problems)
        print(f"allocbench: {n} store file{'' if n == 1 else 's'} could not be read: a record's "
              "revision is shown as unreadable, a bisect's result is left out (see the index "
              "page)", file=sys.stderr)
        return exit_codes.FAILED
    return exit_codes.OK


def run(*, inputs: list[Path], store: Path | None = None, machine: list[str] | None = None,
        allocator: list[str] | None = None, config: Path | None = None, out: Path) -> int:
    check_out(out)
    from allocbench.reports import inputs as reading
    return publish(reading.read(inputs, store, machine or [], allocator or [], config), out)
