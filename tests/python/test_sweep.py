"""`allocbench sweep`, `sweep-table`, `merge` and `bisect` end to end on a synthetic history
(synthetic_history.py: twelve commits of a tiny tracer with known B/op per commit, one that
does not build, one that only changes a comment), built against the installed allocbench."""

from __future__ import annotations

import csv
import io
import gzip
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import synthetic_history as synth
from allocbench import cli
from allocbench.history import selection
from allocbench.history.store import Store
from conftest import ROOT

def stored(path: Path) -> dict:
    """A store record as the file holds it (version 2: gzip-compressed JSON)."""
    return json.loads(gzip.decompress(path.read_bytes()))



def store_flags(store: Path) -> list[str]:
    return ["--store", str(store), "--machine", "test-machine"]


def table(tracer: synth.History, store: Path, *revisions: str) -> dict:
    """{(metric, scenario): [value or None per revision]} and the status row, from the CSV."""
    out = io.StringIO()
    code = run_cli(["sweep-table", "--repo", str(tracer.repo), *store_flags(store),
                    "--metric", "bytes_per_op", "--metric", "allocs_per_op", "--format", "csv",
                    *revisions], stdout=out)
    assert code == 0
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    found = {"status": rows[2][2:-2]}
    for row in rows[3:]:
        found[(row[0], row[1])] = [float(v) if v else None for v in row[2:-2]]
    return found


def run_cli(argv: list[str], stdout=None) -> int:
    if stdout is None:
        return cli.main(argv)
    saved, sys.stdout = sys.stdout, stdout
    try:
        return cli.main(argv)
    finally:
        sys.stdout = saved


def expected_rows(commits, graft: bool) -> dict:
    rows: dict = {}
    for i, commit in enumerate(commits):
        for name, metrics in (commit.expected(graft) or {}).items():
            for metric, value in metrics.items():
                rows.setdefault((metric, name), [None] * len(commits))[i] = float(value)
    return rows


@pytest.fixture(scope="module")
def full_sweep(tracer, build_flags, tmp_path_factory) -> tuple[Path, int, str]:
    """Every commit, today's bench/ grafted, time measured briefly: (store, exit code, stdout)."""
    store = tmp_path_factory.mktemp("store") / "full"
    out = io.StringIO()
    code = run_cli(["sweep", "--range", "v1.0..v2.0", "--graft", str(tracer.bench()),
                    *build_flags, *store_flags(store), "--repetitions", "2",
                    "--min-time", "0.001", "--plot", str(store.parent / "curve.svg")],
                   stdout=out)
    return store, code, out.getvalue()


def test_sweep_measures_the_known_bytes_of_every_commit(tracer, full_sweep):
    store, code, text = full_sweep
    assert code == 1  # the broken commit is a gap, and says so
    found = table(tracer, store, "--range", "v1.0..v2.0")
    broken = synth.BROKEN - 1
    assert found["status"] == ["build_failed" if i == broken else "ok" for i in range(12)]
    expected = expected_rows(tracer.commits, graft=True)
    assert {key: found[key] for key in expected} == expected
    # The pull-request table: the release tags as column names, the failure marked and noted.
    lines = text.splitlines()
    assert lines[0] == "#### B/op — exact"
    assert lines[2].startswith("| scenario | v1.0 | ") and lines[2].endswith(
        " | v2.0 | Δ v1.0 → v2.0 | Δ % |")
    start = next(line for line in lines if line.startswith("| `tinytracer/start_span`"))
    assert start.split(" | ")[broken + 1] == "✗"
    assert start.endswith(" | +16 | +25.0% |")  # 64 → 80 B
    assert "#### ns/op — directional only" in text
    note = next(line for line in lines if line.startswith("- ✗"))
    assert tracer.commits[broken].sha[:10] in note and "error:" in note
    # the log is the recipe's own: another recipe's failure of this commit has another
    sha = tracer.commits[broken].sha
    (failed,) = [stored(p) for p in store.rglob(f"{sha}/*.json.gz")]
    assert note.endswith(f"{sha}-{failed['recipe']}-build.log")
    assert " failed (exit code " in Path(failed["log"]).read_text().splitlines()[0]
    # the table is written beside the records it shows, not into the repository
    assert (store / "sweep.md").read_text() == text
    assert (store / "sweep.csv").read_text().startswith("metric,scenario,")
    assert not (tracer.repo / ".allocbench" / "sweep.md").exists()
    # a measured revision's build output is kept too, under the same name
    first = tracer.commits[0].sha
    kept = tracer.repo / ".allocbench" / "logs" / f"{first}-{failed['recipe']}-build.log"
    assert "Building CXX object" in kept.read_text()
    # each record names its own copy of the plugin it was measured with, which no later build
    # replaces (the shared tree's plugin is the last revision's)
    ok = [stored(p) for c in tracer.commits if c.index != synth.BROKEN
          for p in store.rglob(f"{c.sha}/*.json.gz")]
    paths = [Path(r["results"]["context"]["plugins"][0]["path"]) for r in ok]
    assert len(set(paths)) == len(ok) == 11 and all(p.is_file() for p in paths)
    assert all(p.parent.name == r["sha"] and p.parent.parent.name == r["recipe"]
               for p, r in zip(paths, ok))
    curve = (store.parent / "curve.svg").read_text()
    assert f">{synth.TRACE}<" in curve and f">{tracer.commits[broken].sha[:10]} ✗<" in curve


def test_second_sweep_builds_and_runs_nothing(tracer, build_flags, full_sweep, capfd):
    store, _, _ = full_sweep
    before = {p: p.stat().st_mtime_ns for p in store.rglob("*.json.gz")}
    assert len(before) == 12
    code = run_cli(["sweep", "--range", "v1.0..v2.0", "--graft", str(tracer.bench()),
                    *build_flags, *store_flags(store), "--repetitions", "2",
                    "--min-time", "0.001"])
    err = capfd.readouterr().err
    assert code == 1
    progress = [line for line in err.splitlines() if line.startswith("allocbench: [")]
    assert len(progress) == 12 and all(": stored" in line for line in progress), progress
    assert "building" not in err and "running" not in err
    assert {p: p.stat().st_mtime_ns for p in store.rglob("*.json.gz")} == before


def test_profile_of_swept_revisions_runs_the_plugins_they_were_measured_with(
        tracer, build_flags, full_sweep, tmp_path, capfd, monkeypatch):
    """profile --rev with the sweep's recipe options profiles the kept copy each record names
    (no build); with another recipe (no --graft) it builds that recipe's plugin, keeps it,
    and a second profile reuses it. Each site table sums to the commit's known B/op."""
    from allocbench.harness import runners
    store, _, _ = full_sweep
    *flags, option, runner = build_flags   # profile takes no --runner: the profile runner's
    assert option == "--runner"
    monkeypatch.setattr(runners, "profile_runner_path",
                        lambda jobs=None: Path(runner).parent / "allocbench-run-profile")
    old, new = tracer.commits[0], tracer.commits[-1]
    records = {c.sha: stored(next(store.rglob(f"{c.sha}/*.json.gz")))
               for c in (old, new)}

    def profile(*extra: str) -> tuple[str, str]:
        code = run_cli(["profile", synth.START_SPAN, "--rev", "v1.0", "--rev", "v2.0", *flags,
                        "--out", str(tmp_path / "out"), *extra])
        out, err = capfd.readouterr()
        assert code == 0, err
        totals = re.findall(r"^\| \*\*total\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|", out,
                            re.M)
        assert totals == [("1", str(c.expected(graft=True)[synth.START_SPAN]["bytes_per_op"]))
                          for c in (old, new)]
        return out, err

    _, err = profile("--graft", str(tracer.bench()))
    for c in (old, new):
        kept = records[c.sha]["results"]["context"]["plugins"][0]["path"]
        assert f"allocbench: {c.sha[:12]}: its plugin as this recipe built it, {kept}\n" in err
    assert "built:" not in err
    _, err = profile()   # today's bench/ is not grafted: another recipe, built and kept
    assert err.count("built:") == 2 and "as this recipe built it" not in err
    _, err = profile()
    assert "built:" not in err and err.count("as this recipe built it") == 2


def test_graft_measures_old_commits_with_todays_scenarios(tracer, build_flags, full_sweep,
                                                          tmp_path):
    grafted, _, _ = full_sweep
    plain = tmp_path / "plain"
    code = run_cli(["sweep", "--tags", "v1.*", *build_flags, *store_flags(plain), "--no-time",
                    "--report", str(tmp_path / "site")])
    assert code == 0
    tagged = [tracer.by_tag(t) for t in ("v1.0", "v1.1", "v1.2", "v1.3")]
    without = table(tracer, plain, "--tags", "v1.*")
    trace = ("bytes_per_op", synth.TRACE)
    assert without[trace] == [None, None] + expected_rows(tagged, graft=False)[trace][2:]
    assert expected_rows(tagged, graft=False)[trace][:2] == [None, None]
    # Each record says when its commit was made (what orders untagged revisions in a report).
    for commit in tagged:
        (record,) = [r for _, r in Store(plain).records() if r["sha"] == commit.sha]
        assert record["committed"] == f"2024-01-{commit.index:02d}T12:00:00+00:00"
    # --report: the store's site; its sweep page shows the same row, "–" where trace is absent.
    (page,) = (tmp_path / "site" / "sweep").iterdir()
    row = re.search(rf"<td><code>{re.escape(synth.TRACE)}</code></td>(.*?)</tr>",
                    page.read_text(), re.S).group(1)
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)[:4]
    measured = expected_rows(tagged, graft=False)[trace][2:]
    assert cells == ["–", "–", *(f"{v:.0f}" for v in measured)]
    with_graft = table(tracer, grafted, "--tags", "v1.*")
    assert with_graft[trace] == expected_rows(tagged, graft=True)[trace]
    assert None not in with_graft[trace]


def test_range_step_keeps_both_ends(tracer):
    shas = selection.sweep_range(tracer.repo, "v1.0..v2.0", 4)
    assert shas == [tracer.commits[i].sha for i in (0, 4, 8, 11)]


def test_interrupted_sweep_resumes_with_every_result_intact(tracer, build_flags, full_sweep,
                                                            tmp_path):
    store = tmp_path / "store"
    command = [sys.executable, "-m", "allocbench", "sweep", "--range", "v1.0..v2.0",
               "--graft", str(tracer.bench()), *build_flags, *store_flags(store), "--no-time"]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "scripts"))

    def start_and_stop_after(records: int, sig: int) -> subprocess.CompletedProcess:
        sweep = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline = time.monotonic() + 300
        while len(list(store.rglob("*.json.gz"))) < records and sweep.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        os.killpg(sweep.pid, sig)
        out, err = sweep.communicate(timeout=60)
        return subprocess.CompletedProcess(command, sweep.returncode, out, err)

    # Ctrl-C: the sweep stops at once, keeps what it measured and says how to go on.
    stopped = start_and_stop_after(3, signal.SIGINT)
    assert stopped.returncode == 130, stopped.stderr
    assert "run the same command again to go on" in stopped.stderr
    # A kill leaves no chance to clean up; whatever was stored is whole.
    killed = start_and_stop_after(7, signal.SIGKILL)
    assert killed.returncode == -signal.SIGKILL
    kept = {p: p.read_bytes() for p in store.rglob("*.json.gz")}
    assert len(kept) >= 7

    assert run_cli(["sweep", "--range", "v1.0..v2.0", "--graft", str(tracer.bench()),
                    *build_flags, *store_flags(store), "--no-time"]) == 1
    assert len(list(store.rglob("*.json.gz"))) == 12
    assert all(p.read_bytes() == text for p, text in kept.items())  # not measured twice
    expected = expected_rows(tracer.commits, graft=True)
    found = table(tracer, store, "--range", "v1.0..v2.0")
    assert {key: found[key] for key in expected} == expected


def test_shards_merged_equal_the_unsharded_sweep(tracer, build_flags, full_sweep, tmp_path):
    whole, _, _ = full_sweep
    shards = [tmp_path / f"shard-{i}" for i in (1, 2, 3)]
    for i, shard in enumerate(shards, 1):
        run_cli(["sweep", "--range", "v1.0..v2.0", "--shard", f"{i}/3", "--graft",
                 str(tracer.bench()), *build_flags, "--store", str(shard), "--machine",
                 f"ci-{i}", "--no-time"])
    counts = [len(list(s.rglob("*.json.gz"))) for s in shards]
    assert counts == [4, 4, 4]
    merged = tmp_path / "merged"
    assert run_cli(["merge", *map(str, shards), "--into", str(merged)]) == 0
    exact = {key: value for key, value in table(tracer, whole, "--range", "v1.0..v2.0").items()
             if key[0] != "ns_per_op"}  # the shards ran without the time pass
    assert table(tracer, merged, "--range", "v1.0..v2.0") == exact


def changes(commits, scenario: str) -> list[tuple[int, int, int]]:
    """(good, first changed, bad) positions around each change of the scenario's B/op: good
    opens the run of equal values before the change, bad closes the run after it."""
    runs: list[list[int]] = []
    for i, commit in enumerate(commits):
        values = commit.expected(graft=True)
        if values is None:
            continue
        value = values[scenario]["bytes_per_op"]
        if runs and commits[runs[-1][0]].expected(True)[scenario]["bytes_per_op"] == value:
            runs[-1].append(i)
        else:
            runs.append([i])
    return [(a[0], b[0], b[-1]) for a, b in zip(runs, runs[1:])]


# Builds up to a dozen revisions of the synthetic history, each from a cold tree.
@pytest.mark.timeout(900)
@pytest.mark.parametrize("scenario", [synth.START_SPAN, synth.SET_TAG, synth.TRACE])
def test_bisect_names_each_known_change(tracer, build_flags, full_sweep, tmp_path, capsys,
                                        scenario):
    cases = changes(tracer.commits, scenario)
    assert len(cases) >= 2
    for good, first, bad in cases:
        store = tmp_path / f"store-{good}-{bad}"
        sha = [tracer.commits[i].sha for i in (good, first, bad)]
        # The two ends are known (a sweep measured them), as when a sweep table shows a step.
        run_cli(["sweep", sha[0], sha[2], "--graft", str(tracer.bench()), *build_flags,
                 *store_flags(store), "--no-time"])
        capsys.readouterr()
        code = run_cli(["bisect", scenario, "--good", sha[0], "--bad", sha[2], "--graft",
                        str(tracer.bench()), *build_flags, *store_flags(store)])
        out = capsys.readouterr().out
        assert code == 0, out
        assert f"first change: {sha[1]}" in out
        commit = tracer.commits[first]
        before = tracer.commits[good].expected(True)[scenario]["bytes_per_op"]
        after = commit.expected(True)[scenario]["bytes_per_op"]
        assert f"    {commit.subject}\n    bytes_per_op {before} → {after} " in out
        # It ends with the sites that changed between the two commits (heaptrack): their
        # changes add up to the step.
        shown = out.split(f"sites of {scenario}, {tracer.commits[first - 1].sha[:10]} → "
                          f"{sha[1][:10]}")[1].splitlines()[1:]
        assert shown and sum(int(line.split(" B/op")[0].replace("−", "-"))
                             for line in shown) == after - before, out
        span = bad - good
        measured = int(re.search(r"commits after good; \d+ revisions looked at, the ends "
                                 r"included: (\d+) measured", out)[1])
        # The README's bound: ⌈log2 N⌉ probes of the N commits, plus up to two per skip.
        assert measured <= math.ceil(math.log2(span)) + 2 * out.count("skipped"), out
        skipped = f"skipped {tracer.commits[synth.BROKEN - 1].sha[:10]}: build failed"
        if "skipped" in out:  # only ever the broken commit, and only when it is in the range
            assert skipped in out and good < synth.BROKEN - 1 < bad and out.count("skipped") == 1
        if scenario == synth.START_SPAN and first == 10:
            # Its step at commit 11 is searched from commit 2: the first probe, the middle of
            # 3 … 12, is the broken commit 7; the search goes on around it.
            assert skipped in out


def test_a_configured_build_command_builds_each_revision(tracer, prefix, runner, tmp_path):
    config = tmp_path / "allocbench.toml"
    # Arguments reach the script as "$1" "$2": nothing is pasted into the shell's text.
    config.write_text(
        '[build]\n'
        'command = ["sh", "-c", "cmake -S \\"$1\\" -B \\"$2\\" -DCMAKE_BUILD_TYPE=Release '
        f'-DCMAKE_PREFIX_PATH={prefix} >/dev/null && cmake --build \\"$2\\"", "build", '
        '"{src}", "{build}"]\n'
        'plugin = "{build}/tinytracer_scenarios.so"\n')
    store = tmp_path / "store"
    assert run_cli(["sweep", "v1.1", "v2.0", "--repo", str(tracer.repo), "--config",
                    str(config), "--runner", str(runner), *store_flags(store),
                    "--no-time"]) == 0
    tagged = [tracer.by_tag("v1.1"), tracer.by_tag("v2.0")]
    expected = expected_rows(tagged, graft=False)
    found = table(tracer, store, "v1.1", "v2.0")
    assert {key: found[key] for key in expected} == expected
    trees = sorted(p.name for p in (tracer.repo / ".allocbench" / "trees").iterdir())
    # both revisions in one tree, apart from any CMake build of the same revisions
    assert len([t for t in trees if t.startswith("command-")]) == 1


@pytest.mark.parametrize("argv, message", [
    (["sweep", "nope"], "no commit named 'nope'"),
    (["sweep", "v1.0;touch x"], "'v1.0;touch x' is not accepted as a revision"),
    (["sweep", "$(id)"], "'$(id)' is not accepted as a revision"),
    (["sweep", "v1.0/../../x"], "is not accepted as a revision"),
    (["sweep", "--range", "v1.2..v1.2"], "--range v1.2..v1.2 has no commits"),
    (["sweep", "--range", "v2.0..v1.0"], "is not on the first-parent history of"),
    (["sweep", "--range", "v1.0...v2.0"], "write it as OLD..NEW"),
    (["sweep", "--tags", "v9.*"], "no tag matches 'v9.*'"),
    (["sweep", "v1.0", "--shard", "4/3"], "--shard 4/3: write it as I/N"),
    (["sweep", "v1.0", "--graft", "bench:../../x"], "must be a path inside the repository"),
    (["sweep", "v1.0", "--timeout", "0"], "--timeout 0: give a number of seconds above 0"),
    (["sweep", "v1.0", "--every", "2"], "--every 2 is the step of --range"),
    (["sweep", "v1.0", "v1.1", "--metric", "byte_per_op", "--no-time"],
     "--metric byte_per_op: not an allocation metric of these results; choose from "
     "bytes_per_op, allocs_per_op"),
    (["sweep", "v1.0", "--allocator", "jemalloc", "--no-time"],
     "measures with glibc, not jemalloc: pass the allocbench-run of that allocator"),
    (["bisect", "tinytracer/start_spam", "--good", "v1.0", "--bad", "v1.1"],
     "has no scenario instance 'tinytracer/start_spam'; did you mean tinytracer/start_span"),
    (["bisect", "tinytracer/start_span", "--good", "v1.1", "--bad", "v1.1"],
     "are the same commit"),
    (["bisect", "tinytracer/start_span", "--good", "v1.1", "--bad", "v1.0"],
     "is not on the first-parent history of"),
    (["bisect", "tinytracer/start_span", "--good", "v1.0", "--bad", "v1.1", "--metric",
      "first_op_bytes"], "--metric first_op_bytes: bisect needs an exact metric"),
    (["bisect", "tinytracer/trace/children:5", "--good", "v1.0", "--bad", "v1.2"],
     "graft today's scenarios with --graft"),
])
def test_bad_input_is_one_clear_line_and_exit_2(tracer, build_flags, tmp_path, capsys, argv,
                                                message, monkeypatch):
    monkeypatch.chdir(tracer.repo)
    store = tmp_path / "store"
    code = run_cli([*argv, *build_flags, *store_flags(store)])
    err = capsys.readouterr().err
    assert code == 2
    error = [line for line in err.splitlines() if line.startswith("allocbench: error: ")]
    assert len(error) == 1 and message in error[0], err
    if argv[0] == "sweep" and "--metric" not in argv:  # nothing half-written
        assert not store.exists()
    if "--metric" in argv and argv[0] == "sweep":  # stopped after the first revision, kept
        assert len(list(store.rglob("*.json.gz"))) == 1


def test_build_command_without_its_placeholders_is_refused(tracer, build_flags, tmp_path,
                                                           capsys):
    config = tmp_path / "allocbench.toml"
    config.write_text('[build]\ncommand = ["make", "-j4"]\nplugin = "{build}/p.so"\n')
    code = run_cli(["sweep", "v1.0", "--repo", str(tracer.repo), "--config", str(config)])
    assert code == 2
    assert f"allocbench: error: {config}: 'build.command' does not use {{src}}" in \
        capsys.readouterr().err


def test_a_worktree_with_foreign_changes_is_refused(tracer, build_flags, full_sweep, tmp_path,
                                                   capsys):
    [worktree] = (tracer.repo / ".allocbench" / "trees").glob("cmake-*/src")  # the shared one
    span_cc = worktree / "src" / "span.cc"
    original = span_cc.read_text()
    span_cc.write_text(original + "// debugging\n")
    try:
        code = run_cli(["sweep", "v1.1", "--graft", str(tracer.bench()), *build_flags,
                        *store_flags(tmp_path / "store"), "--no-time"])
        err = capsys.readouterr().err
        assert code == 2
        assert f"allocbench: error: {worktree} has changes allocbench did not make " \
               "(src/span.cc)" in err
    finally:
        span_cc.write_text(original)


def test_a_crash_or_a_timeout_is_recorded_and_the_sweep_goes_on(tracer, build_flags, runner,
                                                               full_sweep, tmp_path, capsys):
    crash, slow, fine = (tracer.by_tag(t).sha for t in ("v1.0", "v1.1", "v1.2"))
    wrapper = tmp_path / "runner.sh"  # the real harness, except on two revisions' plugins
    wrapper.write_text(f'#!/bin/sh\ncase "$*" in\n  *{crash}*) kill -SEGV $$ ;;\n'
                       f'  *{slow}*) exec sleep 60 ;;\nesac\nexec {runner} "$@"\n')
    wrapper.chmod(0o755)
    flags = [f if f != str(runner) else str(wrapper) for f in build_flags]
    store = tmp_path / "store"
    started = time.monotonic()
    code = run_cli(["sweep", "v1.0", "v1.1", "v1.2", *flags, *store_flags(store),
                    "--no-time", "--timeout", "2"])
    out = capsys.readouterr().out
    assert code == 1 and time.monotonic() - started < 50
    assert table(tracer, store, "v1.0", "v1.1", "v1.2")["status"] == \
        ["run_failed", "timeout", "ok"]
    assert f"- ✗ `v1.0` ({crash[:10]}) run failed: `exit code -11` — log: " in out
    assert f"- ✗ `v1.1` ({slow[:10]}) timeout: `no result after 2 s (--timeout)` — log: " in out


def test_two_allocbench_processes_take_turns_on_one_revision(tracer, build_flags, full_sweep,
                                                            tmp_path):
    import fcntl
    [path] = (tracer.repo / ".allocbench" / "worktrees").glob("tree-cmake-*.lock")
    lock = open(path, "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # as another sweep or bisect with this build would
    sweep = subprocess.Popen(
        [sys.executable, "-m", "allocbench", "sweep", "v1.2", *build_flags,
         *store_flags(tmp_path / "store"), "--no-time"],
        env=dict(os.environ, PYTHONPATH=str(ROOT / "scripts")), stderr=subprocess.PIPE,
        text=True)
    waiting = sweep.stderr.readline()
    key = path.stem[len("tree-"):]
    assert f"waiting for another allocbench that is using the build tree {key}" in waiting
    assert sweep.poll() is None
    lock.close()
    _, err = sweep.communicate(timeout=120)
    assert sweep.returncode == 0, err
    assert "1 of 1 revisions measured" in err


def test_a_time_run_completes_a_count_only_record(tracer, build_flags, full_sweep, tmp_path):
    store = tmp_path / "store"
    sha = tracer.by_tag("v1.2").sha
    assert run_cli(["sweep", "v1.2", *build_flags, *store_flags(store), "--no-time"]) == 0
    [path] = store.rglob(f"{sha}/*.json.gz")
    counted = stored(path)
    assert counted["time_measured"] is False
    assert run_cli(["sweep", "v1.2", *build_flags, *store_flags(store), "--repetitions", "2",
                    "--min-time", "0.001"]) == 0
    assert list(store.rglob("*.json.gz")) == [path]
    timed = stored(path)
    assert timed["time_measured"] is True
    assert timed["earlier"] == [{key: counted[key] for key in (
        "recorded", "status", "time_measured", "seconds", "harness")}]
    assert [r["alloc"] for r in timed["results"]["results"]] == \
        [r["alloc"] for r in counted["results"]["results"]]


def test_another_recipe_is_kept_beside_the_first(tracer, build_flags, full_sweep, tmp_path):
    store = tmp_path / "store"
    sha = tracer.by_tag("v1.1").sha
    assert run_cli(["sweep", "v1.1", *build_flags, *store_flags(store), "--no-time"]) == 0
    assert run_cli(["sweep", "v1.1", "--graft", str(tracer.bench()), *build_flags,
                    *store_flags(store), "--no-time"]) == 0
    records = [stored(p) for p in store.rglob(f"{sha}/*.json.gz")]
    assert len({r["recipe"] for r in records}) == 2
    grafted = next(r for r in records if r["recipe_detail"]["graft"])
    plain = next(r for r in records if not r["recipe_detail"]["graft"])
    assert synth.TRACE in [r["name"] for r in grafted["results"]["results"]]
    assert synth.TRACE not in [r["name"] for r in plain["results"]["results"]]
    # the table shows the newer, the grafted one, to the microsecond (both may be recorded
    # within one second)
    assert all(re.fullmatch(r"[-\dT:]+\.\d{6}\+00:00", r["recorded"]) for r in records)
    assert table(tracer, store, "v1.1")[("bytes_per_op", synth.TRACE)] == \
        [float(tracer.by_tag("v1.1").expected(graft=True)[synth.TRACE]["bytes_per_op"])]
    # a side sweep into another store leaves the main sweep's table as it was
    assert (full_sweep[0] / "sweep.md").read_text() == full_sweep[2]
    assert (store / "sweep.md").read_text().splitlines()[2].startswith("| scenario | v1.1 |")
