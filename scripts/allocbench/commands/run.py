"""allocbench run: build if needed, run the scenarios, write results and a markdown report.

Installs missing Debian packages when run as root, configures and builds build/release, runs
allocbench-run on the built-in plugin (or the given plugins) with this checkout's revision in
the context, and writes results/<revision>.json and results/<revision>.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from allocbench import packages, project, report, results, revision
from allocbench.errors import UserError
from allocbench.fileio import write_atomically

ALLOCATORS = ["system", "jemalloc", "mimalloc", "tcmalloc"]


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plugin", action="append", default=[], metavar="PATH",
                        help="run this scenario plugin instead of the built-in scenarios "
                             "(repeatable)")
    parser.add_argument("--filter", metavar="REGEX", help="only instances whose name matches")
    parser.add_argument("--out", type=Path, metavar="FILE",
                        help="results file [results/<revision>.json]; the report goes next to "
                             "it as .md")
    parser.add_argument("--allocator", choices=ALLOCATORS, default="system",
                        help="allocator backend of the run [system = glibc]")
    parser.add_argument("--repetitions", type=int, metavar="N", help="time-pass samples [5]")
    parser.add_argument("--min-time", metavar="SECONDS", help="minimum time per sample [0.05]")
    parser.add_argument("--count-warmup", type=int, metavar="N", help="warm-up ops [1000]")
    parser.add_argument("--count-ops", type=int, metavar="N", help="ops per count window [1000]")
    parser.add_argument("--no-time", action="store_true", help="skip the time pass")
    parser.add_argument("--build-dir", type=Path, default=project.build_dir(),
                        help="CMake build folder [build/release]")


def run(*, plugin: list[str], filter: str | None, out: Path | None, allocator: str,
        repetitions: int | None, min_time: str | None, count_warmup: int | None,
        count_ops: int | None, no_time: bool, build_dir: Path) -> int:
    packages.ensure(packages.BUILD_PACKAGES)
    runner = project.runner_path(build_dir, allocator)
    project.configure_and_build(build_dir, targets=[runner.name, "allocbench_builtin"])
    if not runner.exists():
        raise UserError(f"{runner} was not built: the {allocator} backend's library is missing; "
                        "see the configure output above")

    rev = revision.current(project.ROOT)
    if out is None:
        project.RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        out = project.RESULTS_DIR / f"{rev.label}.json"
    command = [str(runner), "--out", str(out), *rev.context_flags()]
    for path in plugin:
        command += ["--plugin", path]
    for flag, value in (("--filter", filter), ("--repetitions", repetitions),
                        ("--min-time", min_time), ("--count-warmup", count_warmup),
                        ("--count-ops", count_ops)):
        if value is not None:
            command += [flag, str(value)]
    if no_time:
        command.append("--no-time")
    code = subprocess.run(command, check=False).returncode
    if code not in (0, 1):  # 1: a scenario failed, but the others' results were written
        return code

    doc = results.load(out)
    report_path = out.with_suffix(".md")
    write_atomically(report_path, report.markdown(doc, f"allocbench results: {rev.label}"))
    print(f"allocbench: results in {out}, report in {report_path}", file=sys.stderr)
    return code
