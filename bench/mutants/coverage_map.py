"""Which tests execute each line of the Python code: one coverage run of the Python suite on
the workspace's copy, with a context per test, subprocesses included (a sitecustomize.py in
the copy's scripts/ — every way the tests start the CLI puts that folder on PYTHONPATH — starts
coverage and names the context after $PYTEST_CURRENT_TEST; the pytest process starts it the
same way, and a plugin switches it per test). The map (and each test's duration, outcome and whether it needs the
C++ build) is cached by the hash of the tree's files."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from workspace import PYTHON, Workspace, run

FORMAT = 3   # of the cached map; part of the cache file's name
SITECUSTOMIZE = '''import os
if os.environ.get("COVERAGE_PROCESS_START"):
    import coverage
    _cov = coverage.process_startup()
    _test = os.environ.get("PYTEST_CURRENT_TEST", "")
    if _cov is not None and _test:
        _cov.switch_context(_test.rsplit(" (", 1)[0])
'''
PLUGIN = '''import json, os, time
import coverage
import pytest

_tests = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cov = coverage.Coverage.current()
    if cov is not None:
        cov.switch_context(item.nodeid)
    started = time.monotonic()
    _tests[item.nodeid] = {"seconds": 0.0, "build": "build_dir" in item.fixturenames,
                           "passed": True}
    yield
    _tests[item.nodeid]["seconds"] = round(time.monotonic() - started, 3)
    if cov is not None:
        cov.switch_context("")


def pytest_runtest_logreport(report):
    if report.failed and report.nodeid in _tests:
        _tests[report.nodeid]["passed"] = False


def pytest_sessionfinish(session):
    with open(os.environ["MUTATE_TESTS_FILE"], "w") as f:
        json.dump(_tests, f)
'''


@dataclass
class CoverageMap:
    tests: dict[str, dict]                 # node id → seconds, build, passed
    lines: dict[str, dict[int, list[str]]]  # file → line → node ids that execute it
    seconds: float                          # how long the coverage run took

    def covering(self, file: str, line: int) -> list[str]:
        """The passing tests that execute the line, fastest first."""
        return self.fastest(self.lines.get(file, {}).get(line, []))

    def fastest(self, names: list[str]) -> list[str]:
        known = [n for n in dict.fromkeys(names) if self.tests.get(n, {}).get("passed")]
        return sorted(known, key=lambda n: (self.tests[n]["seconds"], n))

    def failing(self) -> list[str]:
        return sorted(n for n, t in self.tests.items() if not t["passed"])


def tree_hash(src: Path, names: list[str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(names):
        digest.update(name.encode() + b"\0" + (src / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "allocbench" / "mutate"


def load_or_measure(ws: Workspace, names: list[str], tests: tuple[str, ...], timeout: float,
                    log) -> CoverageMap:
    key = tree_hash(ws.src, names) + "-" + hashlib.sha256(" ".join(tests).encode()).hexdigest()[:8]
    cached = cache_dir() / f"coverage-{FORMAT}-{key}.json"
    if cached.is_file():
        found = load(cached)
        log(f"coverage map from {cached} (measured in {found.seconds:.0f} s)")
        return found
    log(f"coverage run of {' '.join(tests)} on the copy (cached as {cached})")
    found = measure(ws, tests, timeout)
    cached.parent.mkdir(parents=True, exist_ok=True)
    save(found, cached)
    return found


def save(found: CoverageMap, path: Path) -> None:
    """Written atomically; a line's tests as indexes into the list of names (a map of the
    whole suite names some tests on thousands of lines)."""
    names = sorted(found.tests)
    index = {n: i for i, n in enumerate(names)}
    temp = path.with_name(path.name + ".tmp")
    temp.write_text(json.dumps({"format": FORMAT, "seconds": found.seconds, "names": names,
                                "tests": [found.tests[n] for n in names],
                                "lines": {f: {str(k): [index[t] for t in v]
                                              for k, v in lines.items()}
                                          for f, lines in found.lines.items()}}))
    os.replace(temp, path)


def load(path: Path) -> CoverageMap:
    doc = json.loads(path.read_text())
    names = doc["names"]
    return CoverageMap(dict(zip(names, doc["tests"])),
                       {f: {int(k): [names[i] for i in v] for k, v in lines.items()}
                        for f, lines in doc["lines"].items()}, doc["seconds"])


def measure(ws: Workspace, tests: tuple[str, ...], timeout: float) -> CoverageMap:
    import coverage   # installed by bench/mutate.py before this runs
    hooks = ws.temp / "coverage"
    hooks.mkdir(exist_ok=True)
    (hooks / "mutate_coverage_plugin.py").write_text(PLUGIN)
    hook = ws.src / "scripts" / "sitecustomize.py"
    hook.write_text(SITECUSTOMIZE)
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
    rc = hooks / "coveragerc"
    rc.write_text(f"[run]\nparallel = True\ndata_file = {hooks / 'data'}\n"
                  f"source =\n    {ws.src / 'scripts' / 'allocbench'}\n    {ws.src / 'reports'}\n")
    tests_file = hooks / "tests.json"
    # Not the name of a test that runs this tool (its own test does): pytest's process would
    # start with it as its context.
    env = {k: v for k, v in ws.env.items() if k != "PYTEST_CURRENT_TEST"}
    env.update(COVERAGE_PROCESS_START=str(rc), MUTATE_TESTS_FILE=str(tests_file),
               PYTHONPATH=str(hooks))
    started = time.monotonic()
    try:
        code, output = run([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "mutate_coverage_plugin",
                            f"--basetemp={ws.temp / 'pytest'}", *tests],
                           ws.logs / "coverage.log", cwd=ws.src, env=env, timeout=timeout)
    finally:
        hook.unlink()
    if code is None or not tests_file.is_file():
        print(f"mutate: the coverage run {'timed out' if code is None else 'failed'} "
                 f"(exit code {code}); see {ws.logs / 'coverage.log'}", file=sys.stderr)
        raise SystemExit(3)
    run([PYTHON, "-m", "coverage", "combine", f"--rcfile={rc}"], ws.logs / "coverage.log",
        cwd=ws.src, env=env, timeout=600)
    data = coverage.CoverageData(basename=str(hooks / "data"))
    data.read()
    tests_run = json.loads(tests_file.read_text())
    # A line run in no test's context ran when pytest imported the module, collecting the tests
    # (a class body, a default, a constant): what it does is there for every test of the run.
    every = sorted(tests_run)
    lines: dict[str, dict[int, list[str]]] = {}
    prefix = str(ws.src) + os.sep
    for measured in data.measured_files():
        if measured.startswith(prefix):
            by_line = data.contexts_by_lineno(measured)
            lines[measured[len(prefix):]] = {n: every if "" in ctx else sorted(ctx)
                                            for n, ctx in by_line.items()}
    return CoverageMap(tests_run, lines, time.monotonic() - started)
