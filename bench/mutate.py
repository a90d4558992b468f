#!/usr/bin/python3
"""Mutation testing of the whole tree: how do the tests do against bugs nobody chose?

usage: bench/mutate.py [--module PATH|GLOB]... [--area NAME]... [--per-module N] [--seed S]
                       [--list] [--out FILE.json] [--resume] [--jobs N] [--build-jobs N]
                       [--timeout S] [--build-dir DIR] [--tests PATH]... [--coverage-map FILE]
                       [--equivalent FILE] [--keep]
       bench/mutate.py --table FILE.json...

Generates the mutants of every module (bench/mutants/: Python from the AST, C++ from tokens,
the CI templates' shell), draws a seeded sample of --per-module of each, and runs each on a
copy of the checkout (bench/workspace.py): a Python mutant against the tests that execute its
line (one coverage run of the suite with a context per test, cached by the tree's hash), a C++
one after a rebuild against all of ctest and then the Python tests that need the build, a CI
one against tests/python/test_ci_*.py; fastest first, stopping at the first failure, within
1.5 × those tests' time in the coverage run + --timeout (a hang is "timed out"). Writes
FILE.json (every mutant, after each one) and FILE.md (the table per area, the survivors).
--list prints the sample as one-line diffs and builds nothing. --build-dir uses an existing
build (never written into) instead of one of the copy's own: only without C++ mutants.
Exit code 0 when every judged mutant was killed, 1 when one survived, 2 for bad usage or a
damaged --resume file, 3 when the copy does not build or the tests cannot run, 130 on Ctrl-C
(what was measured stays in FILE.json).
--table prints the table per area of the results files of one or more runs together (e.g. of
areas measured on their own), the reviewed equivalents applied; a mutant in two files is an
error (exit 2).
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutants import coverage_map, results  # noqa: E402
from mutants.areas import AREAS, area_of, language  # noqa: E402
from mutants.runner import run_mutant  # noqa: E402
from mutants.sample import DEFAULT_SEED, modules, sample  # noqa: E402
from workspace import ROOT, Workspace, first_error, kill_running, tree_files  # noqa: E402

EQUIVALENT = Path(__file__).resolve().parent / "mutants" / "equivalent.txt"


def log(message: str) -> None:
    print(f"mutate: {message}", file=sys.stderr, flush=True)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--module", action="append", default=[], metavar="PATH",
                        help="a source file or a glob (repeatable) [all]")
    parser.add_argument("--area", action="append", default=[], choices=list(AREAS))
    parser.add_argument("--per-module", type=int, default=8, metavar="N")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--list", action="store_true", help="print the sample; build nothing")
    parser.add_argument("--out", type=Path, default=Path("mutate.json"))
    parser.add_argument("--resume", action="store_true", help="keep the results in --out")
    parser.add_argument("--timeout", type=float, default=120, metavar="S",
                        help="seconds a mutant may take beyond 1.5 × its tests' time in the "
                             "coverage run; for C++ mutants make it cover a rebuild and all "
                             "of ctest [120]")
    parser.add_argument("--jobs", type=int, default=2,
                        help="mutants run at once, each on a copy of its own [2]")
    parser.add_argument("--build-jobs", type=int, default=os.cpu_count() or 2,
                        help="jobs of each build and ctest [the CPUs]")
    parser.add_argument("--build-dir", type=Path, help="an existing build, for Python mutants")
    parser.add_argument("--tests", action="append", default=[], metavar="PATH",
                        help="the tests of the coverage run [tests/python]")
    parser.add_argument("--coverage-map", type=Path, metavar="FILE",
                        help="the map of an earlier coverage run (its cache file) to reuse")
    parser.add_argument("--equivalent", type=Path, default=EQUIVALENT)
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--table", type=Path, nargs="+", metavar="FILE",
                        help="print the table of these results files together; run nothing")
    return parser.parse_args()


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt   # `timeout`'s SIGTERM ends a run as Ctrl-C does


def table(files: list[Path], equivalent: Path) -> int:
    """--table: the results of several runs as one table."""
    records: dict[str, dict] = {}
    try:
        for path in files:
            for r in results.read_json(path):
                if r["id"] in records:
                    raise ValueError(f"{path}: {r['id']} is in an earlier file too; give each "
                                     "mutant's result once")
                records[r["id"]] = r
    except ValueError as e:
        log(str(e))
        return 2
    mine = list(records.values())
    results.apply_equivalents(mine, results.read_equivalents(equivalent))
    print(results.table(mine))
    return 0


def main() -> int:
    signal.signal(signal.SIGTERM, _interrupted)
    args = arguments()
    if args.table:
        return table(args.table, args.equivalent)
    root = args.root.resolve()
    names = tree_files(root)
    try:
        chosen = modules(root, names, args.module, args.area)
        for name in chosen:
            area_of(name)   # every module in one area, before anything runs
    except ValueError as e:
        log(str(e))
        return 2
    if not chosen:
        log("no module matches --module/--area")
        return 2
    mutants = [m for name in chosen for m in sample(root, name, args.per_module, args.seed)]
    if args.list:
        for m in mutants:
            print(f"{m.id}  {m.diff}")
        print(f"{len(mutants)} mutants of {len(chosen)} modules (seed {args.seed})")
        return 0
    if args.build_dir and any(language(m.file) == "cpp" for m in mutants):
        log("--build-dir is for Python and CI mutants only: a C++ mutant would rebuild it")
        return 2
    equivalents = results.read_equivalents(args.equivalent) if args.equivalent.is_file() else {}
    try:
        done = {r["id"]: r for r in results.read_json(args.out)} if args.resume and \
            args.out.is_file() else {}
    except ValueError as e:
        log(str(e))
        return 2
    sys.path.insert(0, str(ROOT / "scripts"))
    from allocbench.base.errors import UserError
    from allocbench.base.packages import ensure
    try:
        ensure(["python3-coverage"])
    except UserError as e:
        log(str(e))
        return 2
    temp = Path(tempfile.mkdtemp(prefix="allocbench-mutate-"))
    started = time.monotonic()
    try:
        workspaces = [Workspace(temp / str(n), args.build_jobs, args.build_dir.resolve()
                                if args.build_dir else None, root)
                      for n in range(max(1, min(args.jobs, len(mutants))))]
        for ws in workspaces:
            log(f"copying {root} to {ws.src}: {ws.copy()} files")
            if ws.own_build:
                for step, action in (("configuring", ws.configure),
                                     ("building", lambda: ws.compile(ws.logs / "build.log"))):
                    log(f"{step} {ws.build}")
                    code, output = action()
                    if code != 0:
                        log(f"{step} failed: {first_error(output)} ({ws.logs / 'build.log'})")
                        return 3
        first = workspaces[0]
        cmap = (coverage_map.load(args.coverage_map) if args.coverage_map else
                coverage_map.load_or_measure(first, names, tuple(args.tests) or
                                             ("tests/python",), timeout=4 * 3600, log=log))
        if cmap.failing():
            log(f"tests failing on the unmutated copy, not used: {', '.join(cmap.failing())}")
        meta = {"seed": args.seed, "coverage_seconds": round(cmap.seconds)}
        # --resume keeps the records of modules outside this sample (a re-run of one module
        # leaves the rest of the file as it was) and drops this sample's modules' stale ones.
        sampled = {m.id for m in mutants}
        found: dict[str, dict] = {i: r for i, r in done.items()
                                  if i in sampled or r["file"] not in chosen}
        idle: queue.Queue[Workspace] = queue.Queue()
        for ws in workspaces:
            idle.put(ws)
        order = {i: n for n, i in enumerate([*(i for i in done if i not in sampled),
                                             *(m.id for m in mutants)])}

        def one(n: int, m) -> None:
            ws = idle.get()
            try:
                log(f"[{n}/{len(mutants)}] {m.id}: {m.diff}")
                outcome = run_mutant(ws, m, cmap, args.timeout)
            finally:
                idle.put(ws)
            log(f"[{n}/{len(mutants)}] {outcome.result} {outcome.by} ({outcome.seconds:.1f} s)")
            with lock:   # one writer at a time; the JSON is whole after every mutant
                found[m.id] = results.record(
                    id=m.id, area=area_of(m.file), file=m.file, line=m.line,
                    operator=m.operator, diff=m.diff, result=outcome.result, by=outcome.by,
                    seconds=round(outcome.seconds, 1))
                results.write_json(args.out, sorted(found.values(), key=lambda r: order[r["id"]]),
                                   meta)

        lock = threading.Lock()
        with ThreadPoolExecutor(len(workspaces)) as pool:
            try:
                for future in [pool.submit(one, n, m) for n, m in enumerate(mutants, start=1)
                               if m.id not in found]:
                    future.result()
            except (RuntimeError, KeyboardInterrupt) as e:   # the tool's trouble, or Ctrl-C
                pool.shutdown(wait=False, cancel_futures=True)
                kill_running()
                log(f"{str(e) or 'interrupted'}; the mutants measured so far are in {args.out} "
                    "(--resume goes on from there)")
                return 130 if isinstance(e, KeyboardInterrupt) else 3
        records = sorted(found.values(), key=lambda r: order[r["id"]])
        results.write_json(args.out, records, meta)
        stale = results.apply_equivalents(records, equivalents)
        text = results.markdown(records, stale)
        args.out.with_suffix(".md").write_text(text)
        print(text, end="")
        log(f"{len(records)} mutants in {time.monotonic() - started:.0f} s")
        judged = [r for r in records if r["result"] not in ("equivalent", "not-compiled")]
        return 0 if all(r["result"] in ("killed", "timed-out") for r in judged) else 1
    except KeyboardInterrupt:   # before the mutants (copying, building, the coverage run)
        kill_running()
        log("interrupted")
        return 130
    finally:
        if args.keep:
            log(f"kept {temp}")
        else:
            shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
