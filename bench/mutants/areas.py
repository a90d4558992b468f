"""The area of every file that mutants are made of: one table, each file in exactly one area
(tests/python/test_mutate_tool.py checks the whole tree against it)."""

from __future__ import annotations

import fnmatch

PY = "scripts/allocbench/"
AREAS: dict[str, tuple[str, ...]] = {
    "counting layer": ("allocators/*", "gbench/*"),
    "runner": ("harness/src/*", PY + "harness/__init__.py", PY + "harness/project.py",
               PY + "harness/runners.py", PY + "harness/runner_exit.py",
               PY + "harness/instructions_pass.py", PY + "base/proc.py", PY + "base/results.py",
               PY + "base/results_check.py", PY + "commands/run.py"),
    "gate": (PY + "gate/*", PY + "harness/scaling.py", *(PY + "base/" + n for n in (
        "__init__.py", "validate.py", "fileio.py", "errors.py", "exit_codes.py", "packages.py",
        "paired_results.py")),
        *(PY + n for n in (
            "cli.py", "__main__.py", "__init__.py", "commands/__init__.py", "commands/arguments.py",
            "commands/compare.py", "commands/ab.py", "commands/calibrate.py", "commands/merge.py",
            "commands/test.py"))),
    "imports": (PY + "imports/*",),
    "sites": (PY + "sites/*", PY + "base/names.py", PY + "commands/profile.py"),
    "sweep/store": (PY + "history/*", PY + "commands/bisect.py", PY + "commands/sweep.py",
                    PY + "commands/sweep_table.py"),
    "report": (PY + "harness/run_report.py", PY + "base/escape.py", PY + "commands/report.py",
               PY + "reports/*.py"),
    "CI shell": ("ci/github/*.yml", "ci/gitlab/*.yml"),
}
# The files mutants are made of (a file of these folders with another suffix is not code).
SOURCES = (("allocators/", (".cc", ".h")), ("gbench/", (".cc", ".h")),
           ("harness/src/", (".cc", ".h")), (PY, (".py",)),
           ("ci/github/", (".yml",)), ("ci/gitlab/", (".yml",)))


def is_source(name: str) -> bool:
    return any(name.startswith(folder) and name.endswith(suffixes)
               for folder, suffixes in SOURCES)


def areas_of(name: str) -> list[str]:
    return [area for area, patterns in AREAS.items()
            if any(fnmatch.fnmatchcase(name, p) for p in patterns)]


def area_of(name: str) -> str:
    """The one area of a source file; a ValueError when it has none or several."""
    found = areas_of(name)
    if len(found) != 1:
        raise ValueError(f"{name} is in {len(found)} areas of bench/mutants/areas.py "
                         f"({', '.join(found) or 'none'}), not one")
    return found[0]


def language(name: str) -> str:
    return "python" if name.endswith(".py") else "shell" if name.endswith(".yml") else "cpp"
