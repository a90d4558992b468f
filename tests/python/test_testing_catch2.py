"""allocbench::testing's Catch2 checks (tests/testing/catch2_checks_test.cc, Catch2 2.13): each
case tagged [!shouldfail] fails with the message that names where the allocation was made; read
from Catch2's XML reporter, whose messages are not wrapped. The expected lines come from
tests/testing/ground_truth.cc's `line:` markers."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import ROOT

SOURCE = ROOT / "tests" / "testing" / "ground_truth.cc"


def line_of(marker: str) -> int:
    for number, text in enumerate(SOURCE.read_text().splitlines(), start=1):
        if f"// line:{marker}" in text:
            return number
    raise AssertionError(f"no marker {marker} in {SOURCE}")


@pytest.fixture(scope="module")
def cases(build_dir: Path) -> dict[str, ET.Element]:
    exe = build_dir / "tests" / "testing" / "testing_catch2_checks_test"
    if not exe.exists():
        pytest.fail(f"no {exe}: Catch2 was not found when {build_dir} was configured "
                    "(apt-get install catch2, then reconfigure)")
    done = subprocess.run([str(exe), "-r", "xml"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return {case.get("name"): case for case in ET.fromstring(done.stdout).iter("TestCase")}


def failures(case: ET.Element) -> list[str]:
    return [f.text.strip() for f in case.iter("Failure")]


def test_every_case_behaves(cases):
    assert sorted(cases) == sorted([
        "passing checks", "no alloc fails on 48 B", "exact fails one byte off",
        "the budget fails one allocation over", "a leak fails", "require ends the test case"])
    assert failures(cases["passing checks"]) == []
    for name, case in cases.items():
        assert case.find("OverallResult").get("success") == "true", name


def test_no_alloc_names_the_function_and_line(cases):
    (message,) = failures(cases["no alloc fails on 48 B"])
    lines = message.splitlines()
    assert lines[:4] == [
        "ALLOCBENCH_CHECK_NO_ALLOC(gt::FortyEightFreed())",
        "  Expected: no allocation",
        "    Actual: 1 allocation, 48 B",
        "  1 unexpected allocation of 48 B in ground_truth::FortyEightFreed() "
        f"(ground_truth.cc:{line_of('forty-eight')})"]
    assert lines[4].startswith("      called from ") and lines[4].endswith(
        "(catch2_checks_test.cc:27)")


def test_exact_and_budget_list_each_allocation(cases):
    for name, expected in (("exact fails one byte off", "exactly 5 allocations, 205 B"),
                           ("the budget fails one allocation over",
                            "at most 4 allocations, 206 B")):
        (message,) = failures(cases[name])
        lines = message.splitlines()
        assert lines[1:4] == [f"  Expected: {expected}", "    Actual: 5 allocations, 206 B",
                              "  Where, from running it again:"], name
        sites = [line for line in lines if line.startswith("  1 allocation of ")]
        assert sites == [
            f"  1 allocation of {size} B in ground_truth::FiveAllocations() "
            f"(ground_truth.cc:{line_of(marker)})"
            for size, marker in ((32, "five-a"), (32, "five-b"), (32, "five-c"),
                                 (100, "five-malloc"), (10, "five-strdup"))], name


def test_a_leak_and_require(cases):
    (message,) = failures(cases["a leak fails"])
    assert ("  1 block of 24 B left allocated, made in ground_truth::LeakTwentyFour() "
            f"(ground_truth.cc:{line_of('leak')})") in message.splitlines()
    # REQUIRE_ ended the case: its FAIL after the check never ran.
    (message,) = failures(cases["require ends the test case"])
    assert message.startswith("ALLOCBENCH_REQUIRE_NO_ALLOC(gt::FortyEightFreed())\n")
