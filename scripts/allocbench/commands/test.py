"""allocbench test: build and run every test.

1. the Release build (build/release): all C++ tests with ctest, then the Python tests with
   pytest against that build (its 15 slowest tests listed at the end);
2. ASan+UBSan (build/asan) and TSan (build/tsan) builds of the tests that can run under a
   sanitizer (ctest label `sanitizer-safe`: everything but the interposed operator new/malloc,
   which the sanitizers replace with their own).
Ends with a line per stage (its counts, and the minutes and seconds it took with its build)
and one line 'tests: N passed, M failed'. Exit code 1 when a test failed, or when a
stage ran no test at all (a label or -k that selects nothing, a suite that wrote no report):
such a stage counts as one failure and gets an error line that names it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from allocbench.base import exit_codes, packages
from allocbench.base.errors import MeasurementFailed, UserError
from allocbench.harness import project

SANITIZERS = [("asan", "address"), ("tsan", "thread")]


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-sanitizers", action="store_true",
                        help="skip the ASan+UBSan and TSan builds (a quicker local loop)")
    parser.add_argument("-k", dest="keyword", metavar="EXPR",
                        help="only Python tests matching EXPR (pytest -k)")


def _junit_counts(path: Path) -> tuple[int, int]:
    """(passed, failed) from a JUnit XML report; a missing report ran no test: (0, 0), and a
    damaged one is one failure, said on a line of its own."""
    if not path.exists():
        return 0, 0
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        print(f"allocbench: error: {path}: not a JUnit XML report ({e}); the suite's output "
              "above says why", file=sys.stderr)
        return 0, 1
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = failed = skipped = 0
    for suite in suites:
        total += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0) or suite.get("disabled", 0))
    return total - failed - skipped, failed


def _ctest(build: Path, label: str | None) -> tuple[int, int]:
    report = build / "ctest-junit.xml"
    report.unlink(missing_ok=True)
    command = ["ctest", "--test-dir", str(build), "--output-on-failure", "-j",
               project.build_jobs(),
               "--output-junit", str(report)]
    if label:
        command += ["-L", label]
    subprocess.run(command, check=False)
    return _junit_counts(report)


def _pytest(build: Path, keyword: str | None) -> tuple[int, int]:
    report = build / "pytest-junit.xml"
    report.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pytest", str(project.ROOT / "tests" / "python"),
               f"--junitxml={report}", "-p", "no:cacheprovider", "--durations=15"]
    if keyword:
        command += ["-k", keyword]
    env = dict(os.environ, ALLOCBENCH_BUILD_DIR=str(build))
    subprocess.run(command, env=env, cwd=project.ROOT, check=False)
    return _junit_counts(report)


def _stage(tally: list[tuple[str, int, int, float]], name: str, counts: tuple[int, int],
           selected: str, started: float) -> None:
    """Adds a stage's (passed, failed, seconds since `started`) to `tally`; a stage that ran no
    test is one failure, said on a line of its own (`selected`: what should have selected its
    tests)."""
    passed, failed = counts
    if passed + failed == 0:
        print(f"allocbench: error: {name} ran no test: {selected} selected none, or the suite "
              "wrote no report (its output above says why)", file=sys.stderr)
        failed = 1
    tally.append((name, passed, failed, time.monotonic() - started))


def run(*, no_sanitizers: bool, keyword: str | None) -> int:
    packages.ensure(packages.BUILD_PACKAGES + packages.TEST_PACKAGES)
    tally: list[tuple[str, int, int, float]] = []
    release = project.build_dir("release")
    started = time.monotonic()
    project.configure_and_build(release)
    _stage(tally, "C++ (release)", _ctest(release, None), f"ctest in {release}", started)
    started = time.monotonic()
    _stage(tally, "Python", _pytest(release, keyword),
           "pytest" + (f" -k {keyword!r}" if keyword else ""), started)
    if not no_sanitizers:
        for name, sanitize in SANITIZERS:
            build = project.build_dir(name)
            started = time.monotonic()
            try:
                project.configure_and_build(build, sanitize=sanitize)
            except (UserError, MeasurementFailed) as e:
                print(f"allocbench: error: {e}", file=sys.stderr)
                tally.append((f"C++ ({name})", 0, 1, time.monotonic() - started))
                continue
            _stage(tally, f"C++ ({name})", _ctest(build, "sanitizer-safe"),
                   f"ctest -L sanitizer-safe in {build}", started)
    passed = sum(t[1] for t in tally)
    failed = sum(t[2] for t in tally)
    print()
    for name, p, f, seconds in tally:
        minutes, rest = divmod(round(seconds), 60)
        print(f"  {name:<16} {p:>4} passed, {f} failed  {minutes:>3}:{rest:02}")
    print(f"tests: {passed} passed, {failed} failed")
    return exit_codes.OK if failed == 0 else exit_codes.FAILED
