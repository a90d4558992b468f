"""Which allocbench-run a command runs, and with which options: the one --runner names or this
checkout's Release build of it for an allocator (built when missing), checked before anything is
built, run or stored; and the allocbench-run-profile beside it for heaptrack.

Shared by run-driving commands (ab, calibrate, sweep, bisect, profile) and bench scripts.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from allocbench.base import packages, proc
from allocbench.base.errors import UserError
from allocbench.harness import instructions_pass, project

ALLOCATORS = ["system", "jemalloc", "mimalloc", "tcmalloc"]
PROFILE_RUNNER = "allocbench-run-profile"


def options(*, repetitions: int | None, min_time: str | None, filter: str | None,
            no_time: bool, instance_timeout: str | None = None,
            instructions: bool = False, estimated_cycles: bool = False) -> list[str]:
    options = []
    for flag, value in (("--filter", filter), ("--repetitions", repetitions),
                        ("--min-time", min_time), ("--instance-timeout", instance_timeout)):
        if value is not None:
            options += [flag, str(value)]
    return options + (["--no-time"] if no_time else []) + \
        instructions_pass.flags(instructions, estimated_cycles)


PAIRED_TIME_S = 1.0   # allocbench-run's --paired-time default


def paired_options(*, filter: str | None, instance_timeout: str | None,
                   paired_time: float | None) -> list[str]:
    """allocbench-run's options of a paired time pass (--against)."""
    options = []
    for flag, value in (("--filter", filter), ("--instance-timeout", instance_timeout),
                        ("--paired-time", paired_time)):
        if value is not None:
            options += [flag, str(value)]
    return options


def check(runner: Path, options: list[str]) -> None:
    """Refuses, before anything is built, run or stored, a runner that is not an allocbench-run
    and options it would refuse: a bad --min-time must not become a revision's failure."""
    try:
        done = proc.run([str(runner), *options, "--help"], capture_output=True, text=True,
                        errors="replace", timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UserError(f"--runner {runner}: cannot run it ({getattr(e, 'strerror', None) or e})"
                        "; pass an allocbench-run or drop --runner") from None
    prefix = "allocbench-run: error: "
    if done.returncode == 2 and done.stderr.startswith(prefix):
        raise UserError(f"{done.stderr.splitlines()[0][len(prefix):]} (an option for "
                        f"{runner.name})")
    if done.returncode != 0 or not done.stdout.startswith("usage: allocbench-run"):
        raise UserError(f"--runner {runner}: not an allocbench-run (its --help shows no "
                        "allocbench-run usage); pass one, e.g. build/release/bin/allocbench-run, "
                        "or drop --runner")


def find(runner: Path | None, allocator: str = "system", instructions: bool = False,
         jobs: int | None = None) -> Path:
    """The given runner, or this checkout's Release allocbench-run for `allocator` (built when
    missing; with `instructions`, built with valgrind's client requests)."""
    if runner is not None:
        if not runner.is_file():
            raise UserError(f"{runner}: no such runner; build allocbench-run or drop --runner")
        return runner
    packages.ensure(packages.BUILD_PACKAGES)
    build = project.build_dir()
    runner = project.runner_path(build, allocator)
    if instructions:
        packages.ensure(packages.INSTRUCTIONS_PACKAGES)
        project.configure_and_build(build, targets=[runner.name, project.DEFAULT_TARGET],
                                    instructions=True, jobs=jobs)
    elif not runner.exists():
        project.configure_and_build(build, targets=[runner.name, project.DEFAULT_TARGET],
                                    jobs=jobs)
    if not runner.exists():
        raise UserError(f"{runner} was not built: the {allocator} backend's library is missing; "
                        "see the configure output above")
    return runner


def profile_runner_path(jobs: int | None = None) -> Path:
    """This checkout's allocbench-run-profile, built when missing (`jobs` at once)."""
    packages.ensure(packages.BUILD_PACKAGES)
    build = project.build_dir()
    runner = build / "bin" / PROFILE_RUNNER
    if not runner.exists():
        project.configure_and_build(build, targets=[PROFILE_RUNNER, project.DEFAULT_TARGET],
                                    jobs=jobs)
    return runner


def profile_runner(near: Path | None) -> Path:
    """The allocbench-run-profile beside the runner `near` (the same build), else this
    checkout's."""
    sibling = near.parent / PROFILE_RUNNER if near is not None else None
    return sibling if sibling is not None and sibling.is_file() else profile_runner_path()
