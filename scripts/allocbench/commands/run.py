"""allocbench run: build if needed, run the scenarios, write results and a markdown report.

Installs missing Debian packages when run as root, configures and builds build/release, runs
allocbench-run on the built-in plugin (or the given plugins) with this checkout's revision in
the context, and writes results/<revision>.json, results/<revision>.md and, with its pictures
embedded, results/<revision>.html.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from allocbench.base import packages, proc, results
from allocbench.base.errors import MeasurementFailed, UserError
from allocbench.base.fileio import write_atomically
from allocbench.harness import instructions_pass, project, run_report, runner_exit
from allocbench.harness.runners import ALLOCATORS
from allocbench.history import revision


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plugin", action="append", default=[], metavar="PATH",
                        help="run this scenario plugin instead of the built-in scenarios "
                             "(repeatable)")
    parser.add_argument("--filter", metavar="REGEX", help="only instances whose name matches")
    parser.add_argument("--out", type=Path, metavar="FILE.json",
                        help="results file [results/<revision>.json]; the reports go next to "
                             "it as .md and .html")
    parser.add_argument("--allocator", choices=ALLOCATORS, default="system",
                        help="allocator backend of the run [system = glibc]")
    parser.add_argument("--repetitions", type=int, metavar="N", help="time-pass samples [5]")
    parser.add_argument("--min-time", metavar="SECONDS", help="minimum time per sample [0.05]")
    parser.add_argument("--count-warmup", type=int, metavar="N", help="warm-up ops [1000]")
    parser.add_argument("--count-ops", type=int, metavar="N", help="ops per count window [1000]")
    parser.add_argument("--no-time", action="store_true", help="skip the time pass")
    instructions_pass.add_arguments(parser)
    parser.add_argument("--instance-timeout", metavar="SECONDS",
                        help="an instance still running after this long is killed and recorded "
                             "as failed [600]")
    parser.add_argument("--build-dir", type=Path, default=project.build_dir(),
                        help="CMake build folder [build/release]")


def run(*, plugin: list[str], filter: str | None, out: Path | None, allocator: str,
        repetitions: int | None, min_time: str | None, count_warmup: int | None,
        count_ops: int | None, no_time: bool, build_dir: Path,
        instance_timeout: str | None = None, instructions: bool = False,
        estimated_cycles: bool = False) -> int:
    if out is not None:
        report_path_for(out)   # a bad --out is refused before anything is built or run
    packages.ensure(packages.BUILD_PACKAGES)
    pass_flags = instructions_pass.flags(instructions, estimated_cycles)
    runner = project.runner_path(build_dir, allocator)
    project.configure_and_build(build_dir, targets=[runner.name, "allocbench_builtin"],
                                instructions=instructions)
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
                        ("--count-ops", count_ops), ("--instance-timeout", instance_timeout)):
        if value is not None:
            command += [flag, str(value)]
    if no_time:
        command.append("--no-time")
    command += pass_flags
    before = runner_exit.snapshot(out)
    code = proc.run(command).returncode
    if code in (2, 3, 130):   # bad input, internal error, interrupted: it printed why
        return code
    if code not in runner_exit.OWN_CODES:
        raise MeasurementFailed(f"{runner} {runner_exit.ending(code)}; "
                                f"{runner_exit.left_behind(out, before)}")
    # 0, or 1: a scenario failed, and the others' results were written
    if runner_exit.identity(out) in (None, before[0]):
        raise MeasurementFailed(f"{runner} exited with code {code} but did not write {out}; "
                                "its output above says why")
    doc = results.load(out)
    report_path = report_path_for(out)
    write_atomically(report_path, run_report.markdown(doc, f"allocbench results: {rev.label}"))
    html = out.with_suffix(".html")
    write_atomically(html, html_page(out, doc))
    print(f"allocbench: results in {out}, report in {report_path} and {html}", file=sys.stderr)
    return code


def html_page(path: Path, doc: dict) -> str:
    """The run's page (reports/): one file, its stylesheet inline, its pictures embedded."""
    packages.ensure(packages.REPORT_PACKAGES)
    from allocbench.reports import inputs, site
    found = inputs.Site()
    inputs.from_results([path], found)
    history = found.histories[0]
    return site.single_page(history.points[-1], history)


def report_path_for(out: Path) -> Path:
    """The markdown report next to the results: results.json → results.md."""
    if out.suffix != ".json":
        raise UserError(f"--out {out}: the results file must end in .json (the report is "
                        "written next to it as .md); e.g. --out results/main.json")
    return out.with_suffix(".md")
