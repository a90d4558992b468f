#!/usr/bin/python3
"""A mutation check: do the tests notice when the code that makes the numbers is wrong?

usage: bench/mutation.py [--only ID]... [--list] [--keep] [--jobs N] [--no-baseline]

Copies this checkout's working tree (the files `git ls-files -co --exclude-standard` lists, as
they are on disk, uncommitted changes included) into a temporary folder, configures one
Release build there (tests on, ccache) and builds it once. Then, for each mutation of MUTATIONS
(bench/mutations.py) — a one-token change of a snippet that must occur exactly once in its file — it applies
the change, rebuilds (incrementally; nothing for a Python file), runs the tests that should
catch it (ctest -R REGEX on the temporary build, then pytest with ALLOCBENCH_BUILD_DIR pointing
at it; both stop at the first failure), records *caught* (a test failed) or *survived* (all
passed), and puts the file back (a C++ one rebuilt at once). A mutation whose build fails, or
whose tests cannot run (no test matches, pytest usage error), is *broken*: the list has
rotted.

Before the mutations, the same tests run once on the unmutated copy (the baseline; skip it
with --no-baseline): a test that fails there would make every mutation look caught.

Prints a markdown table (mutation, file, change, result, the first failing test, seconds) and
"N of M mutations caught"; exit code 0 when every mutation was caught, 1 when one survived or
is broken, 2 for bad usage, a snippet that does not occur exactly once, or a failing baseline.
--list prints the mutations and checks their snippets against this checkout without building
(exit 2 if one does not occur exactly once). --keep keeps the temporary folder (its build and
logs/<id>.log). ccache runs with CCACHE_BASEDIR at the temporary folder, so a second run finds
its objects although the folder's name differs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutations import MUTATIONS, Mutation  # noqa: E402
from workspace import (CPP_SUFFIXES, PYTHON, ROOT, Workspace, failed_tests,  # noqa: E402
                       first_error, run)


def change(m: Mutation) -> str:
    """The changed words only: what differs between snippet and replacement, widened to the
    whitespace around it."""
    a, b = m.original, m.replacement
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    while prefix > 0 and not a[prefix - 1].isspace():
        prefix -= 1
    while suffix > 0 and not a[len(a) - suffix].isspace():
        suffix -= 1

    def show(text: str) -> str:
        text = " ".join(text.split())
        return f"`{text[:45]}{'…' if len(text) > 45 else ''}`" if text else "(nothing)"
    return f"{show(a[prefix:len(a) - suffix])} → {show(b[prefix:len(b) - suffix])}"


def snippet_problems(root: Path, mutations: tuple[Mutation, ...] = MUTATIONS) -> list[str]:
    """Each mutation whose file is missing or whose snippet does not occur exactly once."""
    problems = []
    ids = [m.id for m in mutations]
    problems += [f"{i}: the id is used twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
    for m in mutations:
        path = root / m.file
        if not path.is_file():
            problems.append(f"{m.id}: no file {m.file}")
            continue
        found = path.read_text().count(m.original)
        if found != 1:
            problems.append(f"{m.id}: the snippet occurs {found} times in {m.file}, not once: "
                            f"{m.original!r}")
        if m.original == m.replacement:
            problems.append(f"{m.id}: the replacement is the snippet itself")
        if m.ctest is None and not m.pytest:
            problems.append(f"{m.id}: no test to run")
    return problems


def log(message: str) -> None:
    print(f"mutation: {message}", file=sys.stderr, flush=True)


@dataclass
class Outcome:
    result: str          # caught, survived, broken
    by: str              # the first failing test, or why it is broken
    seconds: float


def run_tests(ws: Workspace, ctest: str | None, pytest: tuple[str, ...], log_file: Path
              ) -> tuple[str, str]:
    """('caught', test) when a test failed, ('survived', '') when all passed, ('broken', why)
    when they could not run."""
    if ctest is not None:
        code, output = ws.ctest(ctest, log_file)
        if "No tests were found" in output:
            return "broken", f"no ctest matches {ctest}"
        if code is None:
            return "caught", "ctest timed out"
        if code != 0:
            return "caught", (failed_tests(output) or ["ctest failed"])[0]
    if pytest:
        code, output = ws.pytest(pytest, log_file)
        if code is None:
            return "caught", "pytest timed out"
        if code == 1:
            return "caught", (failed_tests(output) or ["pytest failed"])[0]
        if code != 0:
            return "broken", f"pytest exit code {code} (usage error or no tests)"
    return "survived", ""


def mutate(ws: Workspace, m: Mutation) -> Outcome:
    started = time.monotonic()
    path = ws.src / m.file
    original = path.read_text()
    if original.count(m.original) != 1:
        return Outcome("broken", f"the snippet occurs {original.count(m.original)} times", 0.0)
    log_file = ws.logs / f"{m.id}.log"
    try:
        path.write_text(original.replace(m.original, m.replacement))
        if path.suffix in CPP_SUFFIXES:
            code, output = ws.compile(log_file)
            if code != 0:
                return Outcome("broken", f"build: {first_error(output)}",
                               time.monotonic() - started)
        result, by = run_tests(ws, m.ctest, m.pytest, log_file)
        return Outcome(result, by, time.monotonic() - started)
    finally:
        path.write_text(original)
        # Built again unmutated at once: else the mutations after it (a Python one needs no
        # build) are tested against this one's binary, and "caught" by its failures.
        if path.suffix in CPP_SUFFIXES:
            ws.compile(log_file)


def baseline(ws: Workspace, mutations: list[Mutation]) -> list[str]:
    """Runs every selected test once on the unmutated copy; the failures."""
    regexes = sorted({m.ctest for m in mutations if m.ctest is not None})
    pytest_args = list(dict.fromkeys(a for m in mutations for a in m.pytest))
    log_file = ws.logs / "baseline.log"
    failures = []
    if regexes:
        code, output = run(["ctest", "--test-dir", str(ws.build), "-R", "|".join(regexes),
                            "-j", str(ws.jobs), "--output-on-failure", "--timeout", "300"],
                           log_file, env=ws.env)
        if code != 0:
            failures += failed_tests(output) or [f"ctest exit code {code}"]
    if pytest_args:
        code, output = run([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            *pytest_args], log_file, cwd=ws.src, env=ws.env)
        if code != 0:
            failures += failed_tests(output) or [f"pytest exit code {code}"]
    return failures


def table(rows: list[tuple[Mutation, Outcome]]) -> str:
    lines = ["| mutation | file | change | result | caught by | s |",
             "|---|---|---|---|---|---:|"]
    for m, o in rows:
        by = o.by.replace("|", "\\|")
        lines.append(f"| `{m.id}` | `{m.file}` | {change(m).replace('|', chr(92) + '|')} | "
                     f"{o.result} | {by} | {o.seconds:.0f} |")
    return "\n".join(lines)


def list_mutations(mutations: list[Mutation]) -> int:
    for m in mutations:
        tests = " ".join(([f"ctest -R '{m.ctest}'"] if m.ctest else [])
                         + ([f"pytest {' '.join(m.pytest)}"] if m.pytest else []))
        print(f"{m.id}\n  {m.file}: {change(m)}\n  {m.what}\n  tests: {tests}")
    problems = snippet_problems(ROOT, tuple(mutations))
    for problem in problems:
        print(f"mutation: {problem}", file=sys.stderr)
    print(f"{len(mutations)} mutations; snippets "
          f"{'all occur exactly once' if not problems else 'BROKEN: see above'}")
    return 2 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], metavar="ID",
                        help="run only this mutation (repeatable, or comma-separated)")
    parser.add_argument("--list", action="store_true",
                        help="list the mutations and check their snippets; build nothing")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                        help="build and ctest jobs [the CPUs]")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the run of the tests on the unmutated copy")
    args = parser.parse_args()
    wanted = [i for value in args.only for i in value.split(",") if i]
    known = {m.id for m in MUTATIONS}
    unknown = [i for i in wanted if i not in known]
    if unknown:
        print(f"mutation: unknown id {', '.join(unknown)}; --list shows them", file=sys.stderr)
        return 2
    mutations = [m for m in MUTATIONS if not wanted or m.id in wanted]
    if args.list:
        return list_mutations(mutations)
    problems = snippet_problems(ROOT, tuple(mutations))
    if problems:
        for problem in problems:
            print(f"mutation: {problem}", file=sys.stderr)
        return 2

    started = time.monotonic()
    temp = Path(tempfile.mkdtemp(prefix="allocbench-mutation-"))
    try:
        ws = Workspace(temp, args.jobs)
        log(f"copying the working tree to {ws.src}: {ws.copy()} files")
        problems = snippet_problems(ws.src, tuple(mutations))   # the copy is what is mutated
        if problems:
            for problem in problems:
                log(problem)
            return 2
        build_started = time.monotonic()
        for step, action in (("configuring", ws.configure),
                             ("building", lambda: ws.compile(ws.logs / "build.log"))):
            log(f"{step} {ws.build}")
            code, output = action()
            if code != 0:
                log(f"{step} failed: {first_error(output)} (log: {ws.logs / 'build.log'}; "
                    "--keep keeps it)")
                return 2
        log(f"built in {time.monotonic() - build_started:.0f} s")
        if not args.no_baseline:
            baseline_started = time.monotonic()
            log("baseline: the selected tests on the unmutated copy")
            failures = baseline(ws, mutations)
            if failures:
                log(f"the baseline fails ({', '.join(failures[:5])}): every mutation would "
                    f"look caught (log: {ws.logs / 'baseline.log'})")
                return 2
            log(f"baseline passed in {time.monotonic() - baseline_started:.0f} s")
        rows = []
        for i, m in enumerate(mutations, start=1):
            log(f"[{i}/{len(mutations)}] {m.id}: {m.file}: {change(m)}")
            outcome = mutate(ws, m)
            log(f"[{i}/{len(mutations)}] {m.id}: {outcome.result}"
                f"{' by ' + outcome.by if outcome.by else ''} ({outcome.seconds:.0f} s)")
            rows.append((m, outcome))
        caught = sum(o.result == "caught" for _, o in rows)
        print(table(rows))
        print()
        print(f"{caught} of {len(rows)} mutations caught"
              + "".join(f"; {n} {what}" for what in ("survived", "broken")
                        if (n := sum(o.result == what for _, o in rows))))
        print(f"total {time.monotonic() - started:.0f} s")
        return 0 if caught == len(rows) else 1
    finally:
        if args.keep:
            log(f"kept {temp}")
        else:
            shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
