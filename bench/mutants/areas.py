"""The area of every file that mutants are made of: one table, each file in exactly one area
(tests/python/test_mutate_tool.py checks the whole tree against it)."""

from __future__ import annotations

import fnmatch

PY = "scripts/allocbench/"
AREAS: dict[str, tuple[str, ...]] = {
    "counting layer": ("allocators/*", "gbench/*"),
    "runner": ("harness/src/*", PY + "proc.py", PY + "runner_exit.py", PY + "results.py",
               PY + "results_check.py", PY + "instructions_pass.py", PY + "log_summary.py",
               PY + "project.py", PY + "commands/run.py"),
    "gate": tuple(PY + n for n in (
        "compare.py", "compare_format.py", "compare_json.py", "policy.py", "site_budget.py",
        "stats.py", "exit_codes.py", "config.py", "scaling.py", "validate.py", "fileio.py",
        "errors.py", "cli.py", "__main__.py", "__init__.py", "packages.py",
        "commands/__init__.py", "commands/compare.py", "commands/ab.py",
        "commands/calibrate.py", "commands/merge.py", "commands/test.py")),
    "imports": (PY + "imports/*",),
    "sites": tuple(PY + n for n in ("sites.py", "heaptrack_data.py", "profile.py", "names.py",
                                    "commands/profile.py")),
    "sweep/store": tuple(PY + n for n in (
        "sweep*.py", "store.py", "bisection.py", "revision.py", "revisions.py", "history.py",
        "graft.py", "submodules.py", "build*.py", "commands/bisect.py", "commands/sweep.py",
        "commands/sweep_table.py")),
    "report": (PY + "report.py", PY + "escape.py", PY + "commands/report.py", "reports/*.py"),
    "CI shell": ("ci/github/*.yml", "ci/gitlab/*.yml"),
}
# The files mutants are made of (a file of these folders with another suffix is not code).
SOURCES = (("allocators/", (".cc", ".h")), ("gbench/", (".cc", ".h")),
           ("harness/src/", (".cc", ".h")), (PY, (".py",)), ("reports/", (".py",)),
           ("ci/github/", (".yml",)), ("ci/gitlab/", (".yml",)))


def is_source(name: str) -> bool:
    if name.startswith("reports/") and name.count("/") > 1:
        return False   # reports/static, reports/templates: not Python
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
