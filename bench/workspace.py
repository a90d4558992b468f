"""A copy of this checkout to break on purpose, shared by bench/mutation.py and bench/mutate.py:
the copy (the files `git ls-files -co --exclude-standard` lists, as they are on disk, in a git
repository of its own), its one Release build (tests on, ccache with CCACHE_BASEDIR at the
copy, so a second copy finds the first one's objects), and how to run ctest and pytest on it
with a timeout that ends the whole process group (a hung test leaves nothing running)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = "/usr/bin/python3"
CPP_SUFFIXES = (".cc", ".h", ".cpp", ".hpp", ".txt", ".cmake", ".dynlist")


RUNNING: set[subprocess.Popen] = set()   # what kill_running() ends on Ctrl-C


def kill_running() -> None:
    """Ends the process group of every command run() is waiting for (each runs in a session
    of its own, so Ctrl-C does not reach it)."""
    for process in list(RUNNING):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def run(command: list[str], log_file: Path, *, cwd: Path | None = None,
        env: dict[str, str] | None = None, timeout: float = 1800
        ) -> tuple[int | None, str]:
    """Runs `command` in a process group of its own, appending its output to `log_file`;
    (exit code, or None on a timeout — then the whole group is killed —, the output)."""
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace",
                          start_new_session=True) as process:
        RUNNING.add(process)
        try:
            output, _ = process.communicate(timeout=timeout)
            code: int | None = process.returncode
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            output += f"\n(timed out after {timeout:g} s)\n"
            code = None
        finally:
            RUNNING.discard(process)
    with log_file.open("a") as f:
        f.write(f"$ {' '.join(command)}\n{output}\n(exit code {code})\n\n")
    return code, output


def tree_files(root: Path = ROOT) -> list[str]:
    """The checkout's files as `git ls-files -co --exclude-standard` names them, those on disk."""
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-co", "--exclude-standard",
                             "-z"], check=True, capture_output=True).stdout
    return [name for name in listed.decode().split("\0")
            if name and ((root / name).is_file() or (root / name).is_symlink())]


class Workspace:
    """The temporary copy, its build, and how to run tests on it. `build` may name an existing
    build to use instead of one of its own (never written into: only for Python mutants)."""

    def __init__(self, temp: Path, jobs: int, build: Path | None = None, root: Path = ROOT):
        self.root = root
        self.temp = temp
        self.src = temp / "src"
        self.build = build or temp / "build"
        self.own_build = build is None
        self.dirty = False   # the build holds objects of a mutated source
        self.logs = temp / "logs"
        self.jobs = jobs
        # Not the caller's PYTHONPATH: the ./allocbench launcher's names the checkout's own
        # scripts/, and the copy's tests would import that code instead of the mutated copy's.
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        self.env.update(CCACHE_BASEDIR=str(temp), PYTHONDONTWRITEBYTECODE="1",
                        ALLOCBENCH_BUILD_DIR=str(self.build))

    def copy(self) -> int:
        names = tree_files(self.root)
        for name in names:
            target = self.src / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.root / name, target, follow_symlinks=False)
        # A repository of its own (one commit), for anything that asks git about the checkout.
        git = ["git", "-C", str(self.src), "-c", "user.name=mutation", "-c",
               "user.email=mutation@localhost"]
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"]):
            subprocess.run(git + args, check=True, capture_output=True)
        self.logs.mkdir()
        return len(names)

    def configure(self) -> tuple[int | None, str]:
        return run(["cmake", "-S", str(self.src), "-B", str(self.build),
                    "-DCMAKE_BUILD_TYPE=Release", "-DALLOCBENCH_BUILD_TESTS=ON",
                    "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"], self.logs / "build.log",
                   env=self.env)

    def compile(self, log_file: Path, timeout: float = 1800) -> tuple[int | None, str]:
        return run(["cmake", "--build", str(self.build), "-j", str(self.jobs)], log_file,
                   env=self.env, timeout=timeout)

    def ctest(self, regex: str | None, log_file: Path, timeout: float = 1800
              ) -> tuple[int | None, str]:
        select = ["-R", regex] if regex is not None else []
        return run(["ctest", "--test-dir", str(self.build), *select, "-j", str(self.jobs),
                    "--output-on-failure", "--no-tests=error", "--stop-on-failure",
                    "--timeout", "300"], log_file, env=self.env, timeout=timeout)

    def pytest(self, args: tuple[str, ...], log_file: Path, timeout: float = 1800,
               env: dict[str, str] | None = None) -> tuple[int | None, str]:
        return run([PYTHON, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                    f"--basetemp={self.temp / 'pytest'}", *args],
                   log_file, cwd=self.src, env=env or self.env, timeout=timeout)


def failed_tests(output: str) -> list[str]:
    """The failing tests named in ctest's or pytest's output."""
    names = re.findall(r"^\s*\d+ - (\S+) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|"
                       r"Exception|Child aborted|Not Run)[^)]*\)", output, re.M)
    names += re.findall(r"^(?:FAILED|ERROR) (\S+)", output, re.M)
    return names


def first_error(output: str) -> str:
    for line in output.splitlines():
        if "error:" in line or "Error" in line:
            return line.strip()[:120]
    return "the build failed"
