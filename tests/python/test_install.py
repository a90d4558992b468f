"""`cmake --install` after `./allocbench run`, which builds allocbench-run and the built-in
plugin only: the install works, and what it installs is a package a project finds."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT


def cmake(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["cmake", *args], capture_output=True, text=True, timeout=1200)


# A cold build of the whole project in a copy of it.
@pytest.mark.timeout(900)
def test_install_after_the_run_commands_build(tmp_path):
    build, prefix = tmp_path / "build", tmp_path / "prefix"
    launcher = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []
    done = cmake("-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                 "-DALLOCBENCH_BUILD_TESTS=OFF", *launcher)
    assert done.returncode == 0, done.stdout + done.stderr
    # the targets `allocbench run` builds (commands/run.py)
    done = cmake("--build", str(build), "-j", "2", "--target", "allocbench-run",
                 "allocbench_builtin")
    assert done.returncode == 0, done.stdout + done.stderr
    done = cmake("--install", str(build), "--prefix", str(prefix))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (prefix / "bin" / "allocbench-run").is_file()
    assert not list((prefix / "bin").glob("allocbench-run-*"))   # not built, not installed
    assert (prefix / "lib" / "allocbench" / "allocbench_builtin.so").is_file()
    # The build tree is a prefix too (sweeps point plugin builds at it): both hold a package
    # whose ALLOCBENCH_RUN is that tree's runner.
    for root in (prefix, build):
        project = tmp_path / f"uses-{root.name}"
        project.mkdir()
        (project / "CMakeLists.txt").write_text(
            "cmake_minimum_required(VERSION 3.20)\nproject(uses CXX)\n"
            "find_package(allocbench REQUIRED)\nmessage(STATUS \"run=${ALLOCBENCH_RUN}\")\n")
        done = cmake("-S", str(project), "-B", str(project / "b"),
                     f"-DCMAKE_PREFIX_PATH={root}")
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"-- run={root / 'bin' / 'allocbench-run'}\n" in done.stdout


def test_the_build_root_holds_no_package_that_would_shadow_the_trees(build_dir: Path):
    """CMake searches a prefix's root first: a config there would be the install-time one."""
    assert not (build_dir / "allocbenchConfig.cmake").exists()
    assert (build_dir / "lib" / "cmake" / "allocbench" / "allocbenchConfig.cmake").is_file()
