"""docs/testing.md's examples, as printed: the files are taken from the page (each fenced block
after a `<!-- file: NAME -->` comment), built out of tree against allocbench::testing from the
build tree's package and from an installed one, and run; the failure the page shows is what the
regression it shows really prints, and a sanitizer build of the same suite skips."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from docs_pages import page

BLOCK = re.compile(r"<!-- (file|output|regression): ([^>]+?) -->\n```[a-z]*\n(.*?)```", re.S)


def blocks(kind: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for what, name, text in BLOCK.findall(page("testing")):
        if what == kind:
            found[name] = text
    return found


def write_project(directory: Path) -> None:
    directory.mkdir()
    for name, text in blocks("file").items():
        if name.endswith(", appended"):
            target = directory / name.removesuffix(", appended")
            target.write_text(target.read_text() + text)
        else:
            (directory / name).write_text(text)


def build(source: Path, build: Path, *args: str, targets: tuple[str, ...] = ()) -> None:
    """Configures as the page says and builds `targets` (all when empty: the Catch2 main alone
    takes half a minute, so tests that do not run it do not build it)."""
    target_args = [a for t in targets for a in ("--target", t)]
    for command in (["cmake", "-S", str(source), "-B", str(build),
                     "-DCMAKE_BUILD_TYPE=RelWithDebInfo", *args],
                    ["cmake", "--build", str(build), "-j2", *target_args]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr


def run(exe: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)


def package_args(build_dir: Path, request, package: str) -> list[str]:
    if package == "build-tree":
        return [f"-Dallocbench_DIR={build_dir / 'lib' / 'cmake' / 'allocbench'}"]
    return [f"-DCMAKE_PREFIX_PATH={request.getfixturevalue('prefix')}"]


def test_the_page_has_every_file_it_builds():
    assert sorted(blocks("file")) == ["CMakeLists.txt", "CMakeLists.txt, appended",
                                      "core_test.cc", "naming.cc", "naming.h",
                                      "naming_catch2_test.cc", "naming_test.cc"]
    assert sorted(blocks("output")) == ["core_test", "naming_test"]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("package", ["build-tree", "install"])
def test_the_examples_build_and_pass(build_dir, tmp_path, request, package):
    source = tmp_path / "naming"
    write_project(source)
    # The installed package: the GoogleTest example. The build tree's: all three.
    build(source, tmp_path / "build", *package_args(build_dir, request, package),
          targets=("naming_test",) if package == "install" else ())
    done = run(tmp_path / "build" / "naming_test")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[  PASSED  ] 2 tests." in done.stdout
    if package == "install":
        return
    done = run(tmp_path / "build" / "naming_catch2_test")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "All tests passed (2 assertions in 1 test case)" in done.stdout
    done = run(tmp_path / "build" / "core_test")
    assert done.returncode == 0, done.stderr
    assert done.stdout == blocks("output")["core_test"]


def regressed(source: Path) -> None:
    """The change the page describes: its diff on naming.cc, and the member beside names_."""
    diff = blocks("regression")["naming.cc"].splitlines()
    (removed,), (added,) = ([l[1:] for l in diff if l.startswith(sign)] for sign in "-+")
    naming = source / "naming.cc"
    assert removed in naming.read_text()
    naming.write_text(naming.read_text().replace(removed, added))
    header = source / "naming.h"
    member = "  std::string names_[2];\n"
    assert member in header.read_text()
    header.write_text(header.read_text().replace(member,
                                                 member + "  mutable std::string scratch_;\n"))


@pytest.mark.timeout(900)
def test_the_regression_fails_as_the_page_shows(build_dir, tmp_path):
    source = tmp_path / "naming"
    write_project(source)
    regressed(source)
    build(source, tmp_path / "build", *package_args(build_dir, None, "build-tree"),
          targets=("naming_test",))
    done = run(tmp_path / "build" / "naming_test")
    assert done.returncode == 1, done.stdout + done.stderr
    # GoogleTest's failure, from its "file:line: Failure" to the test's end, the path relative.
    printed = done.stdout.replace(f"{source}/", "")
    start = printed.index("naming_test.cc:7: Failure")
    end = printed.index("[  FAILED  ] Naming.OperationNamesArePrecomputed")
    assert printed[start:end] == blocks("output")["naming_test"]
    assert "[  FAILED  ] 1 test, listed below:" in done.stdout   # the other one still passes


@pytest.mark.timeout(900)
def test_under_a_sanitizer_every_check_skips_and_asan_still_works(build_dir, tmp_path):
    source = tmp_path / "naming"
    write_project(source)
    asan = "-fsanitize=address"
    # Unoptimised (Debug, the later -D wins): the skip does not depend on it, and the Catch2 main
    # under ASan compiles twice as fast.
    build(source, tmp_path / "build", *package_args(build_dir, None, "build-tree"),
          f"-DCMAKE_CXX_FLAGS={asan}", f"-DCMAKE_EXE_LINKER_FLAGS={asan}",
          "-DCMAKE_BUILD_TYPE=Debug")
    reason = ("skipped: AddressSanitizer owns malloc and operator new in this process, so "
              "allocbench cannot count allocations; run the allocation checks in a build "
              "without sanitizers")
    done = run(tmp_path / "build" / "naming_test")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[  SKIPPED ] 2 tests, listed below:" in done.stdout
    assert f"ALLOCBENCH_EXPECT_NO_ALLOC {reason}" in done.stdout
    assert f"ALLOCBENCH_EXPECT_ALLOCS {reason}" in done.stdout
    # Catch2 2.13 has no skip: a warning with the reason, and no assertion counted for it.
    done = run(tmp_path / "build" / "naming_catch2_test")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("warning:") == 2, done.stdout
    assert "ALLOCBENCH_CHECK_NO_ALLOC skipped: AddressSanitizer owns malloc" in " ".join(
        done.stdout.split())
    assert "All tests passed (2 assertions in 1 test case)" not in done.stdout
    # Count() throws rather than return zeros.
    done = run(tmp_path / "build" / "core_test")
    assert done.returncode != 0
    assert "allocbench::testing::Unavailable" in done.stderr
    assert "AddressSanitizer owns malloc" in done.stderr
    # ASan kept its own malloc: the hooks were not linked, and it still finds an overflow.
    symbols = subprocess.run(["nm", str(tmp_path / "build" / "naming_test")],
                             capture_output=True, text=True, check=True).stdout
    assert not re.search(r" T malloc$", symbols, re.M)


def test_the_front_door_shows_the_check_the_example_runs():
    check = "ALLOCBENCH_EXPECT_NO_ALLOC(schema.GetOperationName(Protocol::kHttp));"
    assert f"`{check}`" in " ".join(page("README").split())
    assert check in blocks("file")["naming_test.cc"]
