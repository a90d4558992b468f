"""Every exit code of every command and of allocbench-run: the table of them
(scripts/allocbench/base/exit_codes.py) against the README and the runner's code, and a test for each
documented (command, code) pair.

Pairs pinned by tests in other files are listed in EXISTING below;
test_every_documented_pair_has_a_test checks that each named test still exists and compares an
exit code with that number.

Every other pair is pinned here, by the tests marked @covers(command, code); some pairs pinned
elsewhere are pinned here again through another door (`run` 130 by SIGINT through the
`allocbench` script). Nothing here runs the real test suites or builds build/release: the
`run` and `test` commands are pointed at a stand-in CMake project (STAND_IN_CMAKE) whose
runner is build/release's allocbench-run.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import resource
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable

import pytest

import synthetic_history as synth
from allocbench import cli
from allocbench.base import exit_codes, packages, results
from allocbench.base.errors import UserError
from allocbench.harness import project
from allocbench.commands import test as test_command
from allocbench.base.exit_codes import (BAD_INPUT, COMMANDS, EVERY, FAILED, INTERRUPTED,
                                   NOT_MEASURED, OK, RUNNER)
from conftest import ROOT, run_runner
from docs_pages import page
from test_faults import _alive, _children
from test_sweep import run_cli, store_flags

TESTS = Path(__file__).resolve().parent
ENTRY = ROOT / "allocbench"

EXISTING: dict[tuple[str, int], str] = {
    ("run", OK): "test_cli.py::test_run_writes_results_and_report",
    ("compare", OK): "test_compare.py::test_exit_codes",
    ("ab", OK): "test_ab.py::test_identical_builds_pass",
    ("calibrate", OK): "test_calibrate.py::test_calibrate_runs_a_a_and_compare_uses_the_result",
    ("sweep", OK): "test_sweep.py::test_graft_measures_old_commits_with_todays_scenarios",
    ("sweep-table", OK): "test_hostile_inputs.py::test_a_valid_store_record_is_merged_and_tabled",
    ("bisect", OK): "test_sweep.py::test_bisect_names_each_known_change",
    ("merge", OK): "test_sweep.py::test_shards_merged_equal_the_unsharded_sweep",
    ("report", OK): "test_report_site.py::test_results_files_make_a_history_by_date",
    ("profile", OK): "test_profile.py::test_the_command_writes_the_profile_and_the_table",
    (RUNNER, OK): "test_runner_results.py::test_document_schema_and_context",
    ("compare", FAILED): "test_compare.py::test_exit_codes",
    ("ab", FAILED): "test_ab.py::test_a_crashing_candidate_is_a_failed_instance_that_gates",
    ("sweep", FAILED): "test_sweep.py::test_sweep_measures_the_known_bytes_of_every_commit",
    ("profile", FAILED): "test_profile.py::test_a_site_table_that_misses_its_count_pass_is_1",
    ("report", FAILED): "test_report_site.py::"
        "test_an_unreadable_record_is_a_revision_shown_with_its_reason_and_exit_1",
    (RUNNER, FAILED): "test_runner_results.py::test_a_failing_scenario_is_recorded_and_exits_1",
    ("run", BAD_INPUT): "test_cli.py::test_run_rejects_an_unknown_allocator",
    ("compare", BAD_INPUT):
        "test_hostile_inputs.py::test_threshold_must_be_a_positive_finite_percentage",
    ("ab", BAD_INPUT): "test_ab.py::test_unknown_revision_is_a_one_line_error",
    ("sweep", BAD_INPUT): "test_sweep.py::test_bad_input_is_one_clear_line_and_exit_2",
    ("bisect", BAD_INPUT): "test_sweep.py::test_bad_input_is_one_clear_line_and_exit_2",
    ("report", BAD_INPUT): "test_report_site.py::test_bad_input_is_one_line_and_exit_2",
    ("profile", BAD_INPUT): "test_profile.py::test_an_unknown_instance_names_the_closest",
    (RUNNER, BAD_INPUT): "test_runner_errors.py::test_unwritable_out",
    ("run", NOT_MEASURED):
        "test_paths.py::test_run_never_reports_a_results_file_it_did_not_write",
    ("ab", NOT_MEASURED):
        "test_ab.py::test_a_candidate_that_does_not_build_is_a_failed_measurement",
    ("run", INTERRUPTED):
        "test_faults.py::test_stopping_allocbench_stops_its_runner_and_the_instance",
    ("sweep", INTERRUPTED):
        "test_sweep.py::test_interrupted_sweep_resumes_with_every_result_intact",
    (RUNNER, INTERRUPTED):
        "test_faults.py::test_one_signal_stops_a_hanging_run_and_keeps_what_was_measured",
}

COVERED: dict[tuple[str, int], list[str]] = {}


def covers(*pairs: tuple[str, int]) -> Callable:
    """Marks a test of this file as the one pinning these (command, code) pairs."""
    def mark(test: Callable) -> Callable:
        for pair in pairs:
            COVERED.setdefault(pair, []).append(test.__name__)
        return test
    return mark


def entry(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """`allocbench ARGS` as a user types it: the shell script at the top of the checkout."""
    return subprocess.run([str(ENTRY), *args], cwd=cwd, env=user_env(), capture_output=True,
                          text=True, timeout=timeout)


def user_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "ALLOCBENCH_DEBUG"}


def error_line(stderr: str) -> str:
    """The one 'allocbench: error: ' line of `stderr` (other lines are progress), never with a
    traceback."""
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("allocbench: error: ")]
    assert len(errors) == 1, stderr
    return errors[0]


# --- the table: the README, the runner's code, the CLI --------------------------------------


def readme() -> str:
    return page("exit-codes")


def readme_table() -> str:
    text = readme()
    assert text.count("<!-- exit-codes:begin -->\n") == 1, \
        "docs/exit-codes.md lost its table markers"
    return text.split("<!-- exit-codes:begin -->\n")[1].split("<!-- exit-codes:end -->")[0]


def test_the_readme_table_is_the_one_the_module_generates():
    assert readme_table() == exit_codes.markdown(), (
        "docs/exit-codes.md's table differs from scripts/allocbench/base/exit_codes.py; paste the "
        "output of `PYTHONPATH=scripts python3 -m allocbench.base.exit_codes` between the markers")


def test_the_command_the_message_above_names_prints_the_readme_table():
    done = subprocess.run(["/usr/bin/python3", "-m", "allocbench.base.exit_codes"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "scripts")))
    assert (done.returncode, done.stdout, done.stderr) == (0, readme_table(), "")


def test_each_readme_row_names_the_commands_that_return_its_code():
    """Read as a user reads it: the code column, and who returns it."""
    found = {}
    for row in readme_table().splitlines()[2:]:
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        named = set(re.findall(r"`([^`]+)`", cells[2]))
        if cells[2].startswith("every command"):
            named |= set(COMMANDS)
        found[int(cells[0])] = named
    assert list(found) == [0, 1, 2, 3, 130]
    for code in exit_codes.CODES:
        assert found[code.code] == set(code.returned_by), code.code


def test_each_meaning_names_only_commands_that_return_the_code():
    for code in exit_codes.CODES:
        named = set(re.findall(r"`([a-z-]+)`", code.meaning)) & set(EVERY)
        assert named <= set(code.returned_by), (code.code, named - set(code.returned_by))
        if set(code.returned_by) != set(EVERY):  # a list: each one is given its reason
            assert set(code.returned_by) <= named, (code.code, set(code.returned_by) - named)


def runner_exit_codes() -> set[int]:
    """What allocbench-run can end with, read from its source: main.cc's returns, and the
    std::exit() calls of the runner's own process (a forked instance's _exit() is not one)."""
    source = ROOT / "harness" / "src"
    codes = {int(n) for n in re.findall(r"\breturn (\d+);", (source / "main.cc").read_text())}
    for file in source.glob("*.cc"):
        codes |= {int(n) for n in re.findall(r"std::exit\((\d+)\)", file.read_text())}
    return codes


def test_allocbench_run_returns_what_the_table_says_it_does():
    assert runner_exit_codes() == {c.code for c in exit_codes.CODES if RUNNER in c.returned_by}
    # The allocbench-run section of docs/scenarios.md says so, 3 included.
    section = page("scenarios").split("\n## allocbench-run\n")[1].split("\n### ")[0]
    sentence = next(s for s in section.split(". ") if "(exit-codes.md)" in s)
    assert "3 for an internal error" in sentence
    for code in runner_exit_codes():
        assert re.search(rf"\b{code} (when|for)\b", sentence), (code, sentence)


def test_the_table_knows_every_command():
    assert tuple(cli.COMMANDS) == COMMANDS
    modules = {p.stem for p in (ROOT / "scripts" / "allocbench" / "commands").glob("*.py")}
    # arguments.py holds the options several commands share; it is not a command.
    assert modules - {"__init__", "arguments"} == {c.replace("-", "_") for c in COMMANDS}


def compared_codes(test: ast.FunctionDef) -> set[int]:
    """The integers a test compares something with (an exit code among them)."""
    return {node.value for compare in ast.walk(test) if isinstance(compare, ast.Compare)
            for node in ast.walk(compare)
            if isinstance(node, ast.Constant) and type(node.value) is int}


def test_every_documented_pair_has_a_test():
    documented = set(exit_codes.pairs())
    tested = set(COVERED) | set(EXISTING)
    assert sorted(documented - tested) == [], "documented, but no test pins it"
    assert sorted(tested - documented) == [], "pinned by a test, but not in the table"
    for (command, code), where in EXISTING.items():
        file, name = where.split("::")
        tree = ast.parse((TESTS / file).read_text())
        test = next((node for node in ast.walk(tree)
                     if isinstance(node, ast.FunctionDef) and node.name == name), None)
        assert test is not None, f"{where}, listed for ({command}, {code}), is gone"
        assert code in compared_codes(test), f"{where} checks no exit code {code}"


# --- the CLI's own mapping, for every command --------------------------------------------------

MINIMAL_ARGS = {
    "run": [], "test": [], "compare": ["base.json", "cand.json"],
    "ab": ["--base", "main~1", "--cand", "main"], "calibrate": [], "sweep": ["v1.0"],
    "sweep-table": [], "bisect": ["x/y", "--good", "v1.0", "--bad", "v2.0"], "merge": ["store"],
    "report": ["--out", "site"], "profile": ["x/y"],
}


def replace_run(monkeypatch, command: str, run: Callable) -> None:
    """`command`'s run() replaced; the CLI around it (parsing, dispatch, mapping) is real."""
    monkeypatch.setattr(importlib.import_module(cli._module(command)), "run", run)
    monkeypatch.setattr(packages, "ensure", lambda needed: None)


@covers(*[(command, NOT_MEASURED) for command in COMMANDS])
@pytest.mark.parametrize("command", COMMANDS)
def test_an_internal_error_in_any_command_is_one_line_and_3(command, monkeypatch, capsys):
    def bug(**kwargs):
        return {}["a key nobody wrote"]
    replace_run(monkeypatch, command, bug)
    monkeypatch.delenv("ALLOCBENCH_DEBUG", raising=False)
    assert cli.main([command, *MINIMAL_ARGS[command]]) == 3
    line = bug.__code__.co_firstlineno + 1
    assert capsys.readouterr().err == (
        f"allocbench: internal error: KeyError: 'a key nobody wrote' (at test_exit_codes.py:"
        f"{line}); please report it, with the traceback that ALLOCBENCH_DEBUG=1 prints\n")


def test_allocbench_debug_adds_the_traceback_of_an_internal_error(monkeypatch, capsys):
    def bug(**kwargs):
        raise ZeroDivisionError("a bug")
    replace_run(monkeypatch, "merge", bug)
    monkeypatch.setenv("ALLOCBENCH_DEBUG", "1")
    assert cli.main(["merge", "store"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n")
    assert err.splitlines()[-1].startswith("allocbench: internal error: ZeroDivisionError: a bug")


@pytest.fixture
def signals_restored():
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


@covers(*[(command, INTERRUPTED) for command in COMMANDS])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", COMMANDS)
def test_one_signal_ends_any_command_with_130(command, sig, monkeypatch, capsys,
                                              signals_restored):
    """The signal arrives while the command works. It is ignored beforehand, as a shell
    without job control starts a background command: only the handler that cli.main installs
    can turn it into 130 (SIGTERM's default would kill the process instead)."""
    signal.signal(sig, signal.SIG_IGN)

    def works(**kwargs):
        os.kill(os.getpid(), sig)
        time.sleep(5)   # the handler ends this at once
        return 0
    replace_run(monkeypatch, command, works)
    started = time.monotonic()
    assert cli.main([command, *MINIMAL_ARGS[command]]) == 130
    assert time.monotonic() - started < 4
    assert capsys.readouterr().err == "allocbench: interrupted\n"


# --- allocbench test ----------------------------------------------------------------------------

# A stand-in for this checkout, for `allocbench run` and `allocbench test`: the targets `run`
# builds (bin/allocbench-run is build/release's runner, linked in), and one ctest test that is
# labelled sanitizer-safe in the ASan build only, so that the TSan stage selects none.
STAND_IN_CMAKE = """cmake_minimum_required(VERSION 3.16)
project(allocbench_stand_in NONE)
add_custom_target(allocbench-run)
add_custom_target(allocbench_builtin)
enable_testing()
add_test(NAME stand_in_passes COMMAND ${CMAKE_COMMAND} -E true)
if(ALLOCBENCH_SANITIZE STREQUAL "address")
  set_tests_properties(stand_in_passes PROPERTIES LABELS sanitizer-safe)
endif()
"""
# Its Python suite: two tests that pass, one that fails.
STAND_IN_TESTS = """def test_passes():
    assert 1 + 1 == 2


def test_also_passes():
    assert "a" < "b"


def test_fails():
    assert 1 + 1 == 3, "the stand-in's failing test"
"""


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory, runner) -> Path:
    root = tmp_path_factory.mktemp("stand-in")
    (root / "CMakeLists.txt").write_text(STAND_IN_CMAKE)
    (root / "tests" / "python").mkdir(parents=True)
    (root / "tests" / "python" / "test_stand_in.py").write_text(STAND_IN_TESTS)
    release = root / "build" / "release"
    done = subprocess.run(["cmake", "-S", str(root), "-B", str(release)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    (release / "bin").mkdir()
    (release / "bin" / "allocbench-run").symlink_to(runner)
    return root


def as_checkout(monkeypatch, root: Path) -> None:
    """`allocbench test` sees `root` as the checkout, with its builds under root/build."""
    monkeypatch.setattr(project, "ROOT", root)
    monkeypatch.setattr(project, "BUILD_ROOT", root / "build")
    monkeypatch.setattr(packages, "ensure", lambda needed: None)


def summary(out: str) -> list[str]:
    """The summary's lines; each stage's line ends with the minutes and seconds it took (this
    stand-in's take seconds), checked and cut off."""
    lines = out[out.index("\n  C++ (release)") + 1:].splitlines()
    for line in lines[:-1]:
        assert re.search(r"  +0:[0-5]\d$", line), line
    return [re.sub(r"  +0:[0-5]\d$", "", line) for line in lines[:-1]] + lines[-1:]


@covers(("test", OK))
def test_allocbench_test_passes_when_every_stage_runs_tests_and_all_pass(stand_in, monkeypatch,
                                                                        capfd):
    as_checkout(monkeypatch, stand_in)
    assert cli.main(["test", "--no-sanitizers", "-k", "not fails"]) == 0
    out, err = capfd.readouterr()
    assert summary(out) == ["  C++ (release)       1 passed, 0 failed",
                            "  Python              2 passed, 0 failed",
                            "tests: 3 passed, 0 failed"]
    assert "allocbench: error" not in err


@covers(("test", FAILED))
def test_allocbench_test_fails_on_a_failed_test(stand_in, monkeypatch, capfd):
    as_checkout(monkeypatch, stand_in)
    assert cli.main(["test", "--no-sanitizers"]) == 1
    out, _ = capfd.readouterr()
    assert summary(out)[1:] == ["  Python              2 passed, 1 failed",
                                "tests: 3 passed, 1 failed"]


@covers(("test", FAILED))
def test_a_sanitizer_stage_whose_label_selects_no_test_fails(stand_in, monkeypatch, capfd):
    """ctest -L with a label nothing has runs nothing, exits 0 and writes a report of 0
    tests: before, the stage counted as 0 passed, 0 failed, and the whole run passed."""
    as_checkout(monkeypatch, stand_in)
    assert cli.main(["test", "-k", "not fails"]) == 1
    out, err = capfd.readouterr()
    assert summary(out) == ["  C++ (release)       1 passed, 0 failed",
                            "  Python              2 passed, 0 failed",
                            "  C++ (asan)          1 passed, 0 failed",
                            "  C++ (tsan)          0 passed, 1 failed",
                            "tests: 4 passed, 1 failed"]
    assert error_line(err) == (
        f"allocbench: error: C++ (tsan) ran no test: ctest -L sanitizer-safe in "
        f"{stand_in / 'build' / 'tsan'} selected none, or the suite wrote no report (its "
        "output above says why)")


@covers(("test", FAILED))
def test_a_python_stage_whose_k_selects_no_test_fails(stand_in, monkeypatch, capfd):
    as_checkout(monkeypatch, stand_in)
    assert cli.main(["test", "--no-sanitizers", "-k", "no_such_test"]) == 1
    out, err = capfd.readouterr()
    assert summary(out)[1:] == ["  Python              0 passed, 1 failed",
                                "tests: 1 passed, 1 failed"]
    assert error_line(err).startswith(
        "allocbench: error: Python ran no test: pytest -k 'no_such_test' selected none")


def test_junit_counts_of_ctest_and_pytest_reports(tmp_path):
    report = tmp_path / "r.xml"
    assert test_command._junit_counts(report) == (0, 0)   # no report: no test ran
    report.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="(empty)" '
                      'tests="0" failures="0" disabled="0" skipped="0" time="0"/>\n')
    assert test_command._junit_counts(report) == (0, 0)   # ctest -L matching nothing
    report.write_text('<testsuite tests="7" failures="2" disabled="0" skipped="1"/>')
    assert test_command._junit_counts(report) == (4, 2)
    report.write_text('<testsuites><testsuite name="pytest" errors="1" failures="2" '
                      'skipped="3" tests="10"/><testsuite tests="5" failures="0" errors="0" '
                      'skipped="0"/></testsuites>')
    assert test_command._junit_counts(report) == (9, 3)   # errors are failures
    report.write_text('<testsuite tests="6" failures="1" disabled="2"/>')
    assert test_command._junit_counts(report) == (3, 1)   # disabled, where skipped is absent


def test_a_damaged_junit_report_is_one_failure_said_on_one_line(tmp_path, capsys):
    report = tmp_path / "r.xml"
    report.write_text('<testsuites><testsuite name="pytest" errors="0" fail')  # cut off
    assert test_command._junit_counts(report) == (0, 1)
    assert error_line(capsys.readouterr().err).startswith(
        f"allocbench: error: {report}: not a JUnit XML report (")


def test_a_real_ctest_run_that_selects_nothing_reports_zero_tests(stand_in):
    """The premise of the check, on a real ctest: a label nothing has is a report of 0."""
    release = stand_in / "build" / "release"
    assert test_command._ctest(release, "no-such-label") == (0, 0)
    assert test_command._ctest(release, None) == (1, 0)


@covers(("test", NOT_MEASURED))
def test_allocbench_test_whose_release_build_fails_is_3(tmp_path, monkeypatch, capfd):
    (tmp_path / "CMakeLists.txt").write_text(
        'cmake_minimum_required(VERSION 3.16)\nproject(broken NONE)\n'
        'message(FATAL_ERROR "this checkout does not configure")\n')
    as_checkout(monkeypatch, tmp_path)
    assert cli.main(["test", "--no-sanitizers"]) == 3
    out, err = capfd.readouterr()
    assert error_line(err) == ("allocbench: error: configuring build/release failed (exit code "
                               "1); the output above says why")
    assert "tests:" not in out


# --- packages: what `allocbench run` and `test` do first -------------------------------------


def fake_dpkg(monkeypatch, missing: list[str]) -> None:
    monkeypatch.setattr(packages, "missing",
                        lambda wanted: [p for p in wanted if p in missing])
    monkeypatch.setattr(packages, "_PRESENT", set())   # nothing known from earlier tests


def recorded_runs(monkeypatch, codes: dict[str, int] | None = None) -> list[tuple]:
    """subprocess.run as packages.py calls it, recorded, never run; exit `codes` by program
    step ('update', 'install')."""
    calls: list[tuple] = []

    def run(command, **kwargs):
        calls.append((command, kwargs.get("env", {}).get("DEBIAN_FRONTEND")))
        return subprocess.CompletedProcess(command, (codes or {}).get(command[1], 0))
    monkeypatch.setattr(packages.subprocess, "run", run)
    return calls


def test_as_another_user_a_missing_package_is_the_exact_apt_get_line(monkeypatch):
    fake_dpkg(monkeypatch, ["cmark-gfm", "ccache"])
    monkeypatch.setattr(packages.os, "geteuid", lambda: 1000)
    calls = recorded_runs(monkeypatch)
    with pytest.raises(UserError) as refused:
        packages.ensure(["cmake", "ccache", "git", "cmark-gfm"])
    assert str(refused.value).splitlines() == [
        "missing Debian packages; run as root:",
        "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ccache "
        "cmark-gfm"]
    assert calls == []


@covers(("test", BAD_INPUT))
def test_allocbench_test_as_another_user_prints_the_apt_get_line_and_exits_2(monkeypatch,
                                                                           capsys):
    fake_dpkg(monkeypatch, ["cmark-gfm"])
    monkeypatch.setattr(packages.os, "geteuid", lambda: 1000)
    calls = recorded_runs(monkeypatch)
    monkeypatch.setattr(project, "configure_and_build", lambda *a, **k: pytest.fail("built"))
    assert cli.main(["test"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "allocbench: error: missing Debian packages; run as root:",
        "  sudo apt-get update && sudo apt-get install -y --no-install-recommends cmark-gfm"]
    assert calls == []


def test_as_root_missing_packages_are_installed_with_apt_get(monkeypatch, capsys):
    fake_dpkg(monkeypatch, ["cmark-gfm"])
    monkeypatch.setattr(packages.os, "geteuid", lambda: 0)
    calls = recorded_runs(monkeypatch)
    assert packages.ensure(["cmake", "cmark-gfm"]) is None
    assert calls == [(["apt-get", "update", "-qq"], "noninteractive"),
                     (["apt-get", "install", "-y", "--no-install-recommends", "cmark-gfm"],
                      "noninteractive")]
    assert capsys.readouterr().err == "allocbench: installing cmark-gfm\n"


def test_as_root_nothing_is_installed_when_nothing_is_missing(monkeypatch):
    fake_dpkg(monkeypatch, [])
    monkeypatch.setattr(packages.os, "geteuid", lambda: 0)
    calls = recorded_runs(monkeypatch)
    packages.ensure(["cmake", "cmark-gfm"])
    assert calls == []


def test_as_root_a_failed_apt_get_is_one_line_and_exit_2(monkeypatch, capsys):
    fake_dpkg(monkeypatch, ["cmark-gfm"])
    monkeypatch.setattr(packages.os, "geteuid", lambda: 0)
    recorded_runs(monkeypatch, {"install": 100})
    monkeypatch.setattr(project, "configure_and_build", lambda *a, **k: pytest.fail("built"))
    assert cli.main(["test"]) == 2
    assert error_line(capsys.readouterr().err) == (
        "allocbench: error: 'apt-get install -y --no-install-recommends cmark-gfm' failed with "
        "exit code 100")


def test_installed_means_what_dpkg_reports_installed(monkeypatch):
    def dpkg_query(command, **kwargs):
        assert command[:3] == ["dpkg-query", "-W", "-f=${Package} ${db:Status-Status}\n"]
        # A removed package keeps its configuration files; an unknown one is not listed.
        return subprocess.CompletedProcess(command, 1, "cmake installed\nccache config-files\n"
                                                       "git installed\n", "")
    monkeypatch.setattr(packages.subprocess, "run", dpkg_query)
    monkeypatch.setattr(packages.shutil, "which", lambda name: "/usr/bin/" + name)
    assert packages.missing(["cmake", "ccache", "git", "no-such-package"]) == [
        "ccache", "no-such-package"]


# --- allocbench run: the runner's 1 and 130 pass through ---------------------------------------


@pytest.fixture(scope="module")
def faults(build_dir) -> Path:
    return build_dir / "tests" / "plugins" / "faults.so"


@covers(("run", FAILED))
def test_run_passes_a_failed_instance_through_as_1(stand_in, faults, tmp_path):
    out = tmp_path / "r.json"
    done = entry("run", "--build-dir", str(stand_in / "build" / "release"), "--plugin",
                 str(faults), "--filter", "^(good/before|fault/abort)$", "--no-time",
                 "--out", str(out), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    by_name = {r["name"]: r for r in results.load(out)["results"]}
    assert by_name["fault/abort"]["error"] == "count pass: crashed with SIGABRT (Aborted)"
    assert not by_name["good/before"].get("error")
    assert by_name["good/before"]["alloc"]["bytes_per_op"] == 96   # 3 × new of 32 B
    assert "fault/abort" in out.with_suffix(".md").read_text()     # the report, written too


@covers(("run", INTERRUPTED))
def test_sigint_to_a_running_allocbench_run_is_130(stand_in, faults, tmp_path):
    """Ctrl-C in the middle of `allocbench run`, as a user types it, measuring good/before and
    then stuck in fault/hang: 130, nothing left running, good/before kept."""
    out = tmp_path / "r.json"
    partial = Path(str(out) + ".partial")
    command = [str(ENTRY), "run", "--build-dir", str(stand_in / "build" / "release"),
               "--plugin", str(faults), "--filter", "^(good/before|fault/hang)$", "--no-time",
               "--out", str(out)]
    allocbench = subprocess.Popen(command, cwd=tmp_path, env=user_env(), text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (partial.exists() and _children(allocbench.pid)
               and _children(_children(allocbench.pid)[0])):
        assert time.monotonic() < deadline and allocbench.poll() is None
        time.sleep(0.02)
    runner = _children(allocbench.pid)[0]
    instance = _children(runner)[0]
    allocbench.send_signal(signal.SIGINT)
    _, stderr = allocbench.communicate(timeout=60)
    assert allocbench.returncode == 130, stderr
    assert "Traceback" not in stderr
    deadline = time.monotonic() + 20
    while _alive(runner) or _alive(instance):
        assert time.monotonic() < deadline, "allocbench-run or its instance outlived allocbench"
        time.sleep(0.02)
    assert not out.exists()
    assert [r["name"] for r in results.load(partial)["results"]] == ["good/before"]


# --- allocbench-run: 3 ------------------------------------------------------------------------


@covers((RUNNER, NOT_MEASURED))
@pytest.mark.parametrize("isolation", [[], ["--no-isolation"]], ids=["isolated", "in-process"])
def test_allocbench_run_that_cannot_start_a_thread_is_an_internal_error_3(runner, ground_truth,
                                                                         tmp_path, isolation):
    """Nothing a user passes makes allocbench-run fail inside itself; the machine can. A
    thread's stack is RLIMIT_STACK (1 GiB here), more than RLIMIT_AS leaves (768 MiB), so the
    count pass cannot start the scenario's thread. In the runner's own process or in the
    instance's child alike, that is the harness's failure, not the scenario's: one line, exit 3,
    no results file."""
    def no_room_for_a_thread() -> None:
        resource.setrlimit(resource.RLIMIT_STACK, (1 << 30, 1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (768 << 20, 768 << 20))
    out = tmp_path / "r.json"
    done = subprocess.run([str(runner), "--plugin", str(ground_truth), "--filter", "mixed",
                           "--no-time", *isolation, "--quiet", "--out", str(out)],
                          capture_output=True, text=True, timeout=120,
                          preexec_fn=no_room_for_a_thread)
    assert done.returncode == 3, done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("allocbench-run: internal error: ")
    assert not out.exists()
    # The same run with room for a thread measures (the limit is what failed, not the run).
    assert run_runner(runner, "--plugin", str(ground_truth), "--filter", "mixed", "--no-time",
                      *isolation, "--quiet", "--out", str(out)).returncode == 0


# --- bisect: 1 ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("store")


@covers(("bisect", FAILED))
@pytest.mark.parametrize("every_step", [[], ["--all"]], ids=["first", "all"])
def test_bisect_between_equal_values_is_1(tracer, build_flags, store, capsys, every_step):
    """v1.2 and v1.3 (commits 6 and 9) have the same set_tag B/op; the broken commit 7
    between them is never built."""
    good, bad = tracer.by_tag("v1.2"), tracer.by_tag("v1.3")
    value = good.expected(False)[synth.SET_TAG]["bytes_per_op"]
    assert bad.expected(False)[synth.SET_TAG]["bytes_per_op"] == value
    code = run_cli(["bisect", synth.SET_TAG, "--good", "v1.2", "--bad", "v1.3", *every_step,
                    *build_flags, *store_flags(store)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert out.splitlines() == [
        f"{synth.SET_TAG} bytes_per_op is {value} at both v1.2 and v1.3: nothing to bisect (a "
        "change that was undone in between is not searched for)"]


HIDDEN_SUBJECT = "Fix the build and enlarge the tag buffer to 56 bytes"


@pytest.fixture(scope="module")
def hidden_change(tracer) -> synth.Commit:
    """A commit on a branch off the broken commit 7 that fixes the build and changes set_tag's
    B/op: from v1.2 (commit 6) to it, the only commit between is the broken one, which hides
    whether the change is its own or the next commit's. (The history on main has no such
    pair: commit 8 fixes the build without changing a number.)"""
    broken = tracer.commits[synth.BROKEN - 1]
    knobs = dict(broken.knobs, TT_TAG_BYTES=56)
    files = synth._files(synth.BROKEN + 1, knobs)
    synth.run_git(tracer.repo, "checkout", "-q", "-b", "hidden-change", broken.sha)
    try:
        for name, text in files.items():
            (tracer.repo / name).write_text(text)
        synth.run_git(tracer.repo, "add", "--", *files)
        synth.run_git(tracer.repo, "commit", "-q", "-m", HIDDEN_SUBJECT,
                      date="2024-02-01T12:00:00+00:00")
        sha = synth.run_git(tracer.repo, "rev-parse", "HEAD")
    finally:
        synth.run_git(tracer.repo, "checkout", "-q", "main")
    return synth.Commit(synth.BROKEN + 1, sha, HIDDEN_SUBJECT, None, True, knobs)


@covers(("bisect", FAILED))
def test_bisect_whose_change_skipped_commits_hide_is_1(tracer, build_flags, store,
                                                       hidden_change, capsys):
    broken = tracer.commits[synth.BROKEN - 1]
    code = run_cli(["bisect", synth.SET_TAG, "--good", "v1.2", "--bad", hidden_change.sha,
                    *build_flags, *store_flags(store)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "first change:" not in out
    lines = out.splitlines()
    start = lines.index("the first change is one of these 2 commits; the skipped ones hide "
                        "which:")
    assert lines[start + 1].startswith(f"    {broken.sha[:10]} (skipped, build failed: ")
    assert lines[start + 1].endswith(f") {broken.subject}")
    assert lines[start + 2] == f"    {hidden_change.sha[:10]} (changed) {HIDDEN_SUBJECT}"
    assert lines[start + 3].startswith(f"skipped {broken.sha[:10]}: build failed: ")


@covers(("bisect", FAILED))
def test_bisect_all_whose_change_skipped_commits_hide_is_1(tracer, build_flags, store,
                                                           hidden_change, capsys):
    good = tracer.by_tag("v1.2")
    before = good.expected(False)[synth.SET_TAG]["bytes_per_op"]
    after = hidden_change.expected(False)[synth.SET_TAG]["bytes_per_op"]
    assert (before, after) == (96 + 3 * 2 * 40, 96 + 3 * 2 * 56)   # the knobs, by hand
    code = run_cli(["bisect", synth.SET_TAG, "--good", "v1.2", "--bad", hidden_change.sha,
                    "--all", *build_flags, *store_flags(store)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert (f"change 1 is one of these 2 commits; the skipped ones hide which (bytes_per_op "
            f"{before} → {after} (+{after - before}, +{(after - before) / before:.1%}) from "
            f"{good.sha[:10]}):") in out
    assert "1 step, 1 hidden among skipped commits;" in out
    assert ("no allocation sites of change 1: skipped commits hide which commit it is; profile "
            "two of them: allocbench profile --rev A --rev B") in out


# --- calibrate, merge, sweep-table: 2 at the command line; calibrate, sweep, bisect: 3 ------


@covers(("calibrate", BAD_INPUT))
@pytest.mark.parametrize("args, message", [
    (["--runner", "{tmp}/no-runner"],
     "{tmp}/no-runner: no such runner; build allocbench-run or drop --runner"),
    (["--runner", "{runner}", "--config", "{tmp}/missing.toml"],
     "{tmp}/missing.toml: cannot read the configuration (No such file or directory)"),
    (["--runner", "{runner}", "--rounds", "0"],
     "argument --rounds: '0' is not a positive integer (see 'allocbench calibrate --help')"),
], ids=["runner", "config", "rounds"])
def test_calibrate_refuses_bad_input_with_one_line_and_2(runner, tmp_path, args, message):
    fill = {"tmp": tmp_path, "runner": runner}
    done = entry("calibrate", *[a.format(**fill) for a in args], cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert error_line(done.stderr) == "allocbench: error: " + message.format(**fill)
    assert list(tmp_path.iterdir()) == []   # no .allocbench/calibration.json, no runs


def test_calibrate_with_a_filter_allocbench_run_refuses_is_2(runner, ground_truth, tmp_path):
    done = entry("calibrate", "--runner", str(runner), "--plugin", str(ground_truth),
                 "--filter", "(", "--rounds", "1", "--forks", "1", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--filter '('" in error_line(done.stderr)


@covers(("calibrate", NOT_MEASURED))
def test_calibrate_whose_allocbench_run_fails_is_3(tmp_path):
    """A runner that is one (its --help says so) but fails every run."""
    failing = tmp_path / "allocbench-run"
    failing.write_text('#!/bin/sh\ncase " $* " in *" --help "*) echo "usage: allocbench-run '
                       '(a stand-in)"; exit 0;; esac\n'
                       'echo "allocbench-run: internal error: out of luck" >&2\nexit 3\n')
    failing.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    done = entry("calibrate", "--runner", str(failing), "--rounds", "2", "--forks", "1",
                 cwd=work)
    assert done.returncode == 3, done.stderr
    assert error_line(done.stderr) == (
        f"allocbench: error: {failing} failed on fork 1 of a (exit code 3): allocbench-run: "
        "internal error: out of luck")
    assert not (work / ".allocbench" / "calibration.json").exists()


@pytest.fixture(scope="module")
def small_repo(tmp_path_factory) -> Path:
    """A git repository of two empty commits."""
    repo = tmp_path_factory.mktemp("small") / "repo"
    repo.mkdir()
    synth.run_git(repo, "init", "-q", "-b", "main")
    for subject in ("one", "two"):
        synth.run_git(repo, "commit", "-q", "--allow-empty", "-m", subject)
    return repo


@covers(("merge", BAD_INPUT))
@pytest.mark.parametrize("args, message", [
    (["{tmp}/no-store", "--into", "{tmp}/into"],
     "{tmp}/no-store: no such store; give the folder a sweep wrote (its --store, default "
     "<repo>/.allocbench/results)"),
    (["--into", "{tmp}/into"],
     "the following arguments are required: STORE (see 'allocbench merge --help')"),
], ids=["no such store", "no store"])
def test_merge_refuses_bad_input_with_one_line_and_2(tmp_path, args, message):
    done = entry("merge", *[a.format(tmp=tmp_path) for a in args], cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert error_line(done.stderr) == "allocbench: error: " + message.format(tmp=tmp_path)
    assert not (tmp_path / "into").exists()


@covers(("sweep-table", BAD_INPUT))
@pytest.mark.parametrize("args, message", [
    (["--repo", "{tmp}"], "{tmp}: not inside a git repository; pass --repo PATH"),
    (["--repo", "{repo}", "HEAD;rm"],
     "'HEAD;rm' is not accepted as a revision: use a branch, tag or sha"),
    (["--repo", "{repo}", "no-such-tag"], "{repo}: no commit named 'no-such-tag'"),
    (["--repo", "{repo}", "--plot", "{tmp}/curve.txt", "HEAD"],
     "--plot {tmp}/curve.txt: name the picture .svg, .png or .pdf"),
    (["--repo", "{repo}", "--format", "xml", "HEAD"], "argument --format: invalid choice: 'xml'"),
    (["--repo", "{repo}", "--store", "{tmp}/nowhere", "HEAD"],
     "{tmp}/nowhere: no such store; give the folder a sweep wrote"),
], ids=["not a repository", "revision", "no such revision", "plot", "format", "no store"])
def test_sweep_table_refuses_bad_input_with_one_line_and_2(small_repo, tmp_path, args, message):
    fill = {"tmp": tmp_path, "repo": small_repo}
    done = entry("sweep-table", *[a.format(**fill) for a in args], cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert error_line(done.stderr).startswith("allocbench: error: " + message.format(**fill))
    assert done.stdout == "" and list(tmp_path.iterdir()) == []


@covers(("sweep", NOT_MEASURED), ("bisect", NOT_MEASURED), ("calibrate", NOT_MEASURED))
@pytest.mark.parametrize("argv", [
    ["sweep", "HEAD", "--repo", "{repo}", "--store", "{tmp}/store"],
    ["bisect", "x/y", "--good", "HEAD~1", "--bad", "HEAD", "--repo", "{repo}", "--store",
     "{tmp}/store"],
    ["calibrate", "--out", "{tmp}/store/calibration.json"],
], ids=["sweep", "bisect", "calibrate"])
def test_a_harness_that_does_not_build_is_3(small_repo, tmp_path, monkeypatch, capfd, argv):
    """Without --runner, sweep, bisect and calibrate build this checkout's allocbench-run;
    here the checkout is one whose CMake refuses to configure."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "CMakeLists.txt").write_text(
        'cmake_minimum_required(VERSION 3.16)\nproject(broken NONE)\n'
        'message(FATAL_ERROR "this checkout does not configure")\n')
    as_checkout(monkeypatch, checkout)
    code = cli.main([a.format(repo=small_repo, tmp=tmp_path) for a in argv])
    _, err = capfd.readouterr()
    assert code == 3, err
    assert error_line(err) == ("allocbench: error: configuring build/release failed (exit code "
                               "1); the output above says why")
    assert not (tmp_path / "store").exists()


def test_a_package_found_installed_is_not_asked_about_again(monkeypatch):
    asked: list[list[str]] = []
    monkeypatch.setattr(packages, "missing", lambda wanted: asked.append(wanted) or [])
    monkeypatch.setattr(packages, "_PRESENT", set())
    packages.ensure(["cmake", "git"])
    packages.ensure(["git", "cmark-gfm"])
    packages.ensure(["cmake"])
    assert asked == [["cmake", "git"], ["cmark-gfm"]]
