#!/usr/bin/python3
"""The README's numbers of the built-in scenarios, rendered from one committed measurement.

    bench/readme_builtin.py [--results FILE]                    # print the generated blocks
    bench/readme_builtin.py [--results FILE] --check README.md docs/scenarios.md  # exit 1, a diff
    bench/readme_builtin.py [--results FILE] --write README.md docs/scenarios.md  # replace in place

FILE (default bench/data/builtin-results.json) is what allocbench-run writes, with both passes:

    build/release/bin/allocbench-run --plugin build/release/lib/allocbench/allocbench_builtin.so \\
        --context revision.sha=... --out bench/data/builtin-results.json

Three blocks are generated, each between HTML-comment markers on one of the pages given (a
block's markers once each, on one page):

- `what-you-get` (README.md): the console excerpt under "What you get" (WHAT_YOU_GET's
  instances, the console table's first columns, aligned as allocbench-run aligns them);
- `builtin-table` (docs/scenarios.md): every instance in the runner's order with the console's
  columns, formatted as the console and `allocbench run`'s report format them
  (allocbench.harness.run_report.format_value);
- `fanout-table` (docs/scenarios.md): the least-squares fits of trace_fanout's B/op over its
  children (allocbench.harness.scaling, as in the report).

tests/python/test_readme_builtin.py checks the pages against FILE, and FILE's counts against a
fresh count pass of the built-in plugin. Exit codes: 0 done (or no difference), 1 a page
differs, 2 bad input (unreadable results, a failed or unmeasured instance, a block's markers
missing, repeated or on more than one page).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from allocbench.base.escape import md_code  # noqa: E402
from allocbench.base.results import metric  # noqa: E402
from allocbench.harness import scaling  # noqa: E402
from allocbench.harness.run_report import format_value  # noqa: E402

DEFAULT_RESULTS = ROOT / "bench" / "data" / "builtin-results.json"

# The rows of the "What you get" excerpt, in the README's order, and how many of the console's
# columns it shows (the rest are elided as "...").
WHAT_YOU_GET = [
    "span_creation/bare_start_span",
    "span_creation/bare_build_span/builder_reuse:0",
    "span_creation/web_server_span/dense:0",
    "span_creation/web_server_span/dense:1",
    "naming_schema/protocol_names/schema:0/precomputed:0",
    "naming_schema/protocol_names/schema:0/precomputed:1",
]
WHAT_YOU_GET_COLUMNS = 3

# The fits shown in the fan-out table: those of scenarios under this prefix.
FANOUT_PREFIX = "trace_fanout/"

class InputError(Exception):
    """Bad input: exit code 2."""


def load(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read results {path}: {e}") from None
    if not isinstance(doc, dict) or not doc.get("results") or not doc.get("fields"):
        raise InputError(f"{path}: not an allocbench-run results file")
    if doc.get("complete") is False:
        raise InputError(f"{path}: an incomplete run (interrupted)")
    for r in doc["results"]:
        if r.get("error"):
            raise InputError(f"{path}: {r['name']} failed: {r['error']}")
        if not isinstance(r.get("alloc"), dict) or not isinstance(r.get("time"), dict):
            raise InputError(f"{path}: {r['name']} lacks the count or the time pass; "
                             "the README needs both (no --no-count, no --no-time)")
    return doc


def _columns(doc: dict) -> list[dict]:
    return [f for f in doc["fields"] if f.get("column")]


def _cells(doc: dict, result: dict) -> list[str]:
    cells = []
    for f in _columns(doc):
        value = metric(result, f)
        cells.append("-" if value is None else format_value(value, f["unit"]))
    return cells


def builtin_table(doc: dict) -> str:
    columns = _columns(doc)
    lines = ["| scenario | " + " | ".join(f["column"] for f in columns) + " |",
             "|---|" + "---:|" * len(columns)]
    for r in doc["results"]:
        lines.append("| " + " | ".join([md_code(r["name"])] + _cells(doc, r)) + " |")
    return "\n".join(lines)


def what_you_get(doc: dict) -> str:
    by_name = {r["name"]: r for r in doc["results"]}
    missing = [name for name in WHAT_YOU_GET if name not in by_name]
    if missing:
        raise InputError(f"the results lack {', '.join(missing)} (the 'What you get' rows)")
    columns = _columns(doc)[:WHAT_YOU_GET_COLUMNS]
    rows = [["scenario"] + [f["column"] for f in columns]]
    rows += [[name] + _cells(doc, by_name[name])[:WHAT_YOU_GET_COLUMNS] for name in WHAT_YOU_GET]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:  # as allocbench-run's console: names left, numbers right, two spaces apart
        line = row[0].ljust(widths[0]) + "".join(
            "  " + cell.rjust(width) for cell, width in zip(row[1:], widths[1:]))
        lines.append(line)
    lines[0] += "  ..."
    return "```\n" + "\n".join(lines) + "\n```"


def fanout_table(doc: dict) -> str:
    found = [f for f in scaling.fits(doc["results"]) if f.scenario.startswith(FANOUT_PREFIX)]
    if not found:
        raise InputError(f"the results have no fit under {FANOUT_PREFIX} (three or more "
                         "values of one argument)")
    lines = ["| scenario | argument | slope (B/op per unit) | intercept (B/op) | points |",
             "|---|---|---:|---:|---|"]
    for f in found:
        points = ", ".join(f"{x}: {format_value(float(y), 'B')}" for x, y in f.points)
        exact = " (exact)" if f.exact else ""
        lines.append(f"| {md_code(f.label)} | {f.argument} | "
                     f"{format_value(float(f.slope), 'B')}{exact} | "
                     f"{format_value(float(f.intercept), 'B')} | {points} |")
    return "\n".join(lines)


def render(doc: dict) -> dict[str, str]:
    return {"what-you-get": what_you_get(doc), "builtin-table": builtin_table(doc),
            "fanout-table": fanout_table(doc)}


def _markers(block: str) -> tuple[str, str]:
    return f"<!-- {block}:begin -->\n", f"\n<!-- {block}:end -->"


def split(page: str, block: str) -> tuple[str, str, str]:
    """(text before the block, the block, text after), markers kept in the outer parts."""
    begin, end = _markers(block)
    head, rest = page.split(begin)
    body, tail = rest.split(end)
    return head + begin, body, end + tail


def locate(paths: list[Path], blocks: dict[str, str]) -> dict[str, Path]:
    """{block: the one page of `paths` that holds it}: each block's two markers, once each, on
    one of the pages (the README holds one block, docs/scenarios.md the others)."""
    texts = {path: path.read_text() for path in paths}
    found = {}
    for block in blocks:
        begin, end = _markers(block)
        holding = [path for path, text in texts.items() if begin in text or end in text]
        if len(holding) != 1 or texts[holding[0]].count(begin) != 1 or \
                texts[holding[0]].count(end) != 1:
            pages = ", ".join(map(str, paths))
            where = ", ".join(map(str, holding)) or "none of them"
            raise InputError(f"expected one '{begin.strip()}' and one '{end.strip()}' marker, "
                             f"each on a line of its own, on one of {pages}; found on {where}")
        found[block] = holding[0]
    return found


def check(paths: list[Path], blocks: dict[str, str]) -> int:
    diff = []
    for block, path in locate(paths, blocks).items():
        _, body, _ = split(path.read_text(), block)
        if body != blocks[block]:
            diff += difflib.unified_diff((body + "\n").splitlines(keepends=True),
                                         (blocks[block] + "\n").splitlines(keepends=True),
                                         f"{path} ({block})", f"rendered ({block})")
    if diff:
        sys.stdout.write("".join(diff))
        pages = " ".join(map(str, paths))
        print(f"{pages}: the generated blocks differ from the results; "
              f"run bench/readme_builtin.py --write {pages}")
        return 1
    return 0


def write(paths: list[Path], blocks: dict[str, str]) -> None:
    """Every block replaced on its page; nothing is written unless every block was found."""
    texts = {}
    for block, path in locate(paths, blocks).items():
        head, _, tail = split(texts.get(path, path.read_text()), block)
        texts[path] = head + blocks[block] + tail
    for path, text in texts.items():
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".readme_builtin.")
        try:
            with os.fdopen(fd, "w") as out:
                out.write(text)
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS,
                        help="allocbench-run results JSON [bench/data/builtin-results.json]")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", type=Path, nargs="+", metavar="PAGE",
                      help="exit 1 and print a diff when the pages' blocks differ")
    mode.add_argument("--write", type=Path, nargs="+", metavar="PAGE",
                      help="replace the blocks on the pages that hold them")
    args = parser.parse_args(argv)
    try:
        blocks = render(load(args.results))
        if args.check:
            return check(args.check, blocks)
        if args.write:
            write(args.write, blocks)
            return 0
    except InputError as e:
        print(f"readme_builtin: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"readme_builtin: error: {e}", file=sys.stderr)
        return 2
    for block, text in blocks.items():
        begin, end = _markers(block)
        print(begin + text + end)
    return 0


if __name__ == "__main__":
    sys.exit(main())
