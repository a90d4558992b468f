"""Running one mutant on a workspace: apply it, rebuild when C++ (a failed build is
"not compiled"), run the tests that can see it, fastest first and stopping at the first
failure, put the file back. The build goes back to the unmutated code with the next mutant's
build (the next C++ mutant's, or a rebuild before a Python one), not at once."""

from __future__ import annotations

import ast
import time
from dataclasses import dataclass

from workspace import Workspace, failed_tests

from .areas import language
from .coverage_map import CoverageMap
from .model import Mutant

CI_TESTS = "tests/python/test_ci_"
# A mutant's time limit: this many times its tests' time in the coverage run, plus the
# --timeout constant (PIT's timeoutFactor/timeoutConst): a module-level line runs under
# hundreds of tests, and their plain duration is no hang.
TIMEOUT_FACTOR = 1.5


@dataclass
class Outcome:
    result: str     # one of results.RESULTS
    by: str         # the killing test, or why
    seconds: float


def statement_lines(text: str, line: int) -> range:
    """The lines from the start of the innermost statement holding `line` (the one that starts
    last) to `line`: coverage records a statement under its first line."""
    start = max((node.lineno for node in ast.walk(ast.parse(text))
                 if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or 0)),
                default=line)
    return range(start, line + 1)


def selection(mutant: Mutant, text: str, cmap: CoverageMap) -> list[str]:
    """The pytest node ids to run against a mutant, fastest first."""
    kind = language(mutant.file)
    if kind == "python":
        return cmap.fastest([t for n in statement_lines(text, mutant.line)
                             for t in cmap.lines.get(mutant.file, {}).get(n, [])])
    if kind == "shell":
        return cmap.fastest([n for n in cmap.tests if n.startswith(CI_TESTS)])
    return cmap.fastest([n for n, t in cmap.tests.items() if t["build"]])


def run_mutant(ws: Workspace, mutant: Mutant, cmap: CoverageMap, extra: float) -> Outcome:
    """`extra`: the seconds a mutant may take beyond TIMEOUT_FACTOR × its tests' time."""
    started = time.monotonic()
    path = ws.src / mutant.file
    original = path.read_text()
    log_file = ws.logs / "mutants.log"
    tests = selection(mutant, original, cmap)
    timeout = TIMEOUT_FACTOR * sum(cmap.tests[t]["seconds"] for t in tests) + extra
    cpp = language(mutant.file) == "cpp"
    if not tests and not cpp:
        return Outcome("not-covered", "", 0.0)
    if not cpp and ws.dirty:   # the last C++ mutant's objects are still in the build
        if ws.compile(log_file, timeout=timeout)[0] != 0:
            raise RuntimeError(f"the unmutated copy no longer builds; see {log_file}")
        ws.dirty = False
    try:
        path.write_text(mutant.apply(original))
        if cpp:
            ws.dirty = True
            code, _ = ws.compile(log_file, timeout=timeout)
            if code != 0:
                return Outcome("not-compiled", "the build timed out" if code is None else "",
                               time.monotonic() - started)
            left = timeout - (time.monotonic() - started)
            code, output = ws.ctest(None, log_file, timeout=max(left, 1))
            if code is None:
                return Outcome("timed-out", "ctest", time.monotonic() - started)
            if code != 0:
                return Outcome("killed", (failed_tests(output) or ["ctest"])[0],
                               time.monotonic() - started)
        if tests:
            left = timeout - (time.monotonic() - started)
            code, output = ws.pytest(tuple(tests), log_file, timeout=max(left, 1))
            if code is None:
                return Outcome("timed-out", "pytest", time.monotonic() - started)
            if code in (1, 2):   # a test failed, or collecting one did (an import broke)
                return Outcome("killed", (failed_tests(output) or [f"pytest exit code {code}"])[0],
                               time.monotonic() - started)
            if code != 0:
                raise RuntimeError(f"pytest could not run the selection (exit code {code}); "
                                   f"see {log_file}")
        return Outcome("survived", "", time.monotonic() - started)
    finally:
        path.write_text(original)   # rebuilt with the next mutant (ws.dirty)
