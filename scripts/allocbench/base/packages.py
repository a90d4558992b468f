"""The Debian packages allocbench needs, and installing the missing ones."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from allocbench.base.errors import UserError

# Building allocbench-run, its backends and its tests; ccache only speeds rebuilds up. catch2
# (one header) is here, not among the test packages: the tree's Catch2 test is built only when
# it is found at configure time, and `run` configures the tree that `test` builds later.
BUILD_PACKAGES = [
    "cmake", "g++", "make", "pkg-config", "git", "ccache",
    "libbenchmark-dev", "libgtest-dev", "nlohmann-json3-dev",
    "libjemalloc-dev", "libmimalloc-dev", "libgoogle-perftools-dev", "catch2",
]
# yaml: the CI workflow test; matplotlib: sweep plots (installed on first use otherwise);
# cmark-gfm: the escaping test renders our markdown as GitHub does; the report's own packages,
# the browser its tests open it in, and a font for the comment's marks (🟥 ✅) in screenshots;
# heaptrack (and zstd, to read its files) for the profile tests; valgrind for the instructions
# pass's; pytest-timeout makes a hanging test a failure; coverage for bench/mutate.py's run on a
# tiny tree (test_mutate_tool.py).
TEST_PACKAGES = ["python3-pytest", "python3-pytest-timeout", "python3-yaml", "python3-matplotlib",
                 "cmark-gfm", "python3-jinja2", "python3-statsmodels", "chromium", "chromium-driver",
                 "python3-selenium", "fonts-noto-color-emoji", "heaptrack", "zstd",
                 "valgrind", "python3-coverage"]
# The HTML report (reports/): its templates, pictures and the markdown it shows; a comparison
# page's distribution tests need statsmodels too (installed when a report has one).
REPORT_PACKAGES = ["python3-jinja2", "python3-matplotlib", "cmark-gfm"]
# The instructions pass (--instructions): callgrind, and the client-request headers
# allocbench-run is built with (installed on first use; every other run works without).
INSTRUCTIONS_PACKAGES = ["valgrind"]
# Imported by the compare/ab/calibrate commands, so needed before any command can be parsed.
PYTHON_PACKAGES = ["python3-numpy", "python3-scipy"]


def missing(packages: list[str]) -> list[str]:
    """The packages of `packages` that dpkg does not report as installed."""
    if shutil.which("dpkg-query") is None:
        raise UserError("dpkg-query not found: allocbench installs its dependencies on Debian "
                        "or Ubuntu only; install the equivalents of " + " ".join(packages))
    result = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package} ${db:Status-Status}\n", *packages],
        capture_output=True, text=True, check=False)
    installed = {line.split()[0] for line in result.stdout.splitlines()
                 if line.endswith(" installed")}
    return [p for p in packages if p not in installed]


_PRESENT: set[str] = set()   # found installed by this process: not asked about again


def ensure(packages: list[str]) -> None:
    """Installs what is missing when root; otherwise says the exact command and stops."""
    unknown = [p for p in packages if p not in _PRESENT]
    needed = missing(unknown) if unknown else []
    _PRESENT.update(p for p in unknown if p not in needed)
    if not needed:
        return
    command = ["apt-get", "install", "-y", "--no-install-recommends", *needed]
    if os.geteuid() != 0:
        raise UserError("missing Debian packages; run as root:\n  sudo apt-get update && "
                        "sudo " + " ".join(command))
    print(f"allocbench: installing {' '.join(needed)}", file=sys.stderr, flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for step in (["apt-get", "update", "-qq"], command):
        done = subprocess.run(step, env=env, stdout=subprocess.DEVNULL, check=False)
        if done.returncode != 0:
            raise UserError(f"'{' '.join(step)}' failed with exit code {done.returncode}")
