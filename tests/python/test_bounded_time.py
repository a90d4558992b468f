"""Every test can fail in bounded time: a TIMEOUT on every ctest test, a timeout on every pytest
test, and a test that leaves a process running fails with that process's command line."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import process_leaks
from docs_pages import folded

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def cmake_list(name: str) -> list[str]:
    text = (ROOT / "tests" / "CMakeLists.txt").read_text()
    return re.search(rf"set\({name}\s+([^)]*)\)", text).group(1).split()


def test_every_ctest_test_has_a_timeout_and_the_slow_ones_are_named(build_dir):
    shown = subprocess.run(["ctest", "--test-dir", str(build_dir), "--show-only=json-v1"],
                           capture_output=True, text=True, timeout=60, check=True)
    tests = json.loads(shown.stdout)["tests"]
    timeouts = {t["name"]: {p["name"]: p["value"] for p in t.get("properties", [])}.get("TIMEOUT")
                for t in tests}
    default, = cmake_list("ALLOCBENCH_TEST_TIMEOUT")
    slow_timeout, = cmake_list("ALLOCBENCH_SLOW_TEST_TIMEOUT")
    slow = cmake_list("ALLOCBENCH_SLOW_TESTS")
    assert len(timeouts) > 500
    assert [name for name in slow if name not in timeouts] == [], "a slow test that is gone"
    assert {name: t for name, t in timeouts.items() if name in slow} == \
        {name: float(slow_timeout) for name in slow}
    assert {name: t for name, t in timeouts.items() if name not in slow and t != float(default)} \
        == {}


def test_every_pytest_test_has_a_timeout(request):
    assert request.config.pluginmanager.hasplugin("timeout")
    assert request.config.getini("timeout") == "300"


def test_the_readme_says_the_timeouts_the_suites_have(request):
    readme = folded("tests")
    default, = cmake_list("ALLOCBENCH_TEST_TIMEOUT")
    slow, = cmake_list("ALLOCBENCH_SLOW_TEST_TIMEOUT")
    assert f"every ctest test has a `TIMEOUT` ({default} s; the " \
           f"{['zero', 'one', 'two', 'three'][len(cmake_list('ALLOCBENCH_SLOW_TESTS'))]} " \
           f"thread-heavy counter tests, which TSan slows tenfold, {slow} s:" in readme
    assert f"every pytest test has one ({request.config.getini('timeout')} s, setup and " \
           "teardown included" in readme


def test_a_daemon_a_process_orphaned_is_found_with_its_command_line():
    before = process_leaks.children()
    # sh starts sleep in the background and exits: the sleep is an orphan, reparented to us.
    subprocess.run(["sh", "-c", "sleep 97 &"], check=True, timeout=10)
    left = process_leaks.left_behind(before, grace=0.2)
    assert list(left.values()) == ["sleep 97"]
    pid, = left
    process_leaks.kill_tree(pid)
    assert pid not in process_leaks.children()
    assert not Path(f"/proc/{pid}").exists()


def test_a_process_that_ends_within_the_grace_is_no_leak():
    before = process_leaks.children()
    subprocess.run(["sh", "-c", "sleep 0.3 &"], check=True, timeout=10)
    assert process_leaks.left_behind(before, grace=5) == {}


def test_a_test_that_leaks_or_hangs_fails_with_a_message(tmp_path):
    for name in ("conftest.py", "process_leaks.py"):
        shutil.copy(HERE / name, tmp_path / name)
    (tmp_path / "pytest.ini").write_text("[pytest]\ntimeout = 3\n")
    (tmp_path / "test_bad.py").write_text(textwrap.dedent("""
        import subprocess, time

        def test_leaks_a_child():
            subprocess.Popen(["sleep", "93"])

        def test_leaks_an_orphan():
            subprocess.run(["sh", "-c", "sleep 94 &"], check=True)

        def test_hangs():
            time.sleep(60)

        def test_is_fine():
            subprocess.run(["true"], check=True)
    """))
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "-rA", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert time.monotonic() - start < 60
    out = done.stdout
    for test, command in (("test_leaks_a_child", "sleep 93"),
                          ("test_leaks_an_orphan", "sleep 94")):
        assert f"ERROR test_bad.py::{test} - AssertionError: the test left" in out
        assert re.search(rf"ERROR at teardown of {test} _+\n(.*\n)*?E +AssertionError: the test "
                         rf"left processes running \(killed now\): pid \d+: {command}\n", out), out
    assert re.search(r"FAILED test_bad.py::test_hangs - Failed: Timeout >3.0s", out), out
    assert "PASSED test_bad.py::test_is_fine" in out
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, timeout=10).stdout
    assert "sleep 93" not in ps and "sleep 94" not in ps
