"""Where things are in an allocbench checkout, and building it with CMake."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from allocbench.base import proc
from allocbench.base.errors import MeasurementFailed, UserError

ROOT = Path(__file__).resolve().parents[3]
BUILD_ROOT = ROOT / "build"
RESULTS_DIR = ROOT / "results"
DEFAULT_TARGET = "allocbench_builtin"            # this repository's built-in plugin
DEFAULT_PLUGIN = "lib/allocbench/allocbench_builtin.so"


def build_jobs() -> str:
    """How many build jobs run at once: $ALLOCBENCH_JOBS, else one per CPU. A shared CI runner
    sets it (or --jobs, [build] jobs for the subject's builds) to leave room for other jobs."""
    text = os.environ.get("ALLOCBENCH_JOBS", "").strip()
    if not text:
        return str(os.cpu_count() or 2)
    if not text.isdigit() or int(text) < 1:
        raise UserError(f"ALLOCBENCH_JOBS={text!r}: give a whole number of build jobs above 0, "
                        "e.g. ALLOCBENCH_JOBS=2, or unset it for one per CPU")
    return str(int(text))


def build_dir(variant: str = "release") -> Path:
    return BUILD_ROOT / variant


def runner_path(build: Path, allocator: str = "system") -> Path:
    """allocbench-run for the default backend, allocbench-run-<name> for the others."""
    default = build / "bin" / "allocbench-run"
    if allocator == "system":
        return default
    return build / "bin" / f"allocbench-run-{allocator}"


def _run(step: list[str], what: str) -> None:
    print(f"allocbench: {what}", file=sys.stderr, flush=True)
    # The build's chatter goes to stderr: stdout is for results (e.g. `ab --format json`).
    # ccache keys on paths relative to the checkout, so a fresh clone (CI's) hits the entries of
    # every earlier one on this machine.
    env = dict(os.environ)
    env.setdefault("CCACHE_BASEDIR", str(ROOT))
    env.setdefault("CCACHE_NOHASHDIR", "true")
    done = proc.run(step, stdout=sys.stderr, env=env)
    if done.returncode != 0:
        raise MeasurementFailed(f"{what} failed (exit code {done.returncode}); the output above "
                                "says why")


def configure_and_build(build: Path, *, sanitize: str = "", targets: list[str] | None = None,
                        instructions: bool = False, jobs: int | None = None) -> None:
    """Configures `build` once (Release, tests on, ccache if present) and builds `targets`;
    `instructions`: again if it was configured before valgrind's headers were installed."""
    cache = build / "CMakeCache.txt"
    if instructions and cache.exists() and \
            "ALLOCBENCH_HAVE_CALLGRIND_H:INTERNAL=1" not in cache.read_text(errors="replace"):
        _run(["cmake", str(build)], f"configuring {build.name} again, with valgrind's headers")
    if not cache.exists():
        command = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                   "-DALLOCBENCH_BUILD_TESTS=ON", f"-DALLOCBENCH_SANITIZE={sanitize}"]
        if shutil.which("ccache"):
            command.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        _run(command, f"configuring {build.relative_to(ROOT) if build.is_relative_to(ROOT) else build}")
    command = ["cmake", "--build", str(build), "-j", str(jobs) if jobs else build_jobs()]
    for target in targets or []:
        command += ["--target", target]
    _run(command, f"building {', '.join(targets) if targets else 'everything'} in {build.name}")
