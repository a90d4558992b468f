"""allocbench-run --against: the paired time pass (harness/src/paired_pass.h) on builds of one
source with planted work (tests/plugins/paired/paired_truth.cc): base, +10% work (checked in
Ir/op here), the base's loop at other addresses (A/A′), and faults in the loop.

Ground truth for time exists only as a planted effect, and the machine is shared: the tests
check directions and generous ranges around the planted ratio; how precise the pass is, is
bench/paired_gate.py's to measure."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from allocbench.base import paired_results
from allocbench.base.errors import UserError
from allocbench.gate import paired
from conftest import run_runner

WORK = "paired/(work|alloc|paused|subject|work_threads/threads:2)$"


@pytest.fixture(scope="module")
def builds(build_dir: Path) -> dict[str, Path]:
    folder = build_dir / "tests" / "plugins" / "paired"
    return {v: folder / v / "paired_truth.so" for v in ("base", "slower", "layout", "faulty")}


def paired_run(runner: Path, base: Path, cand: Path, out: Path, *args: str,
               code: int = 0, seconds: str = "0.3") -> paired_results.Paired:
    done = run_runner(runner, "--plugin", str(base), "--against", str(cand), "--quiet",
                      "--out", str(out), "--paired-time", seconds, *args)
    assert done.returncode == code, done.stderr
    return paired_results.load(out)


def entries(run: paired_results.Paired) -> dict[str, paired_results.Entry]:
    return {e.name: e for e in run.entries.values()}


def ratio(entry: paired_results.Entry, metric: str = "ns_per_op", threads: int = 1) -> float:
    """cand/base - 1 by the median pair: what the pass measured, robust to the preempted
    batches and odd sessions of a machine that runs other work meanwhile (the estimator and its
    interval are test_paired_stats.py's and test_paired_gate.py's)."""
    base, cand = entry.per_op(metric, threads)
    return float(np.expm1(np.median(np.log(cand / base))))


@pytest.fixture(scope="module")
def slower(runner, builds, tmp_path_factory) -> paired_results.Paired:
    out = tmp_path_factory.mktemp("paired") / "slower.json"
    # paired/paused spends 9/10 of its op paused: a second, in 4 sessions, gives it ~100 pairs
    return paired_run(runner, builds["base"], builds["slower"], out, "--filter", WORK,
                      "--paired-sessions", "4", seconds="1")


def test_the_planted_effect_is_ten_percent_more_instructions(runner, builds, tmp_path):
    """The ground truth the timing tests lean on: 2,200 iterations of the chain against 2,000,
    exactly, in callgrind's count of the same ops."""
    ir = {}
    for variant in ("base", "slower", "layout"):
        out = tmp_path / f"{variant}.json"
        done = run_runner(runner, "--plugin", str(builds[variant]), "--filter", "paired/work$",
                          "--no-time", "--instructions", "--quiet", "--out", str(out),
                          timeout=240)
        assert done.returncode == 0, done.stderr
        ir[variant] = json.loads(out.read_text())["results"][0]["instructions"][
            "instructions_per_op"]
    loop = (ir["slower"] - ir["base"]) / 200   # instructions per iteration of the chain
    assert loop == round(loop) and loop >= 3
    assert 2000 * loop / ir["base"] > 0.99   # the chain is the op: +10% of it is +10% of all
    assert ir["layout"] - ir["base"] == 1    # A/A′: one jump more, the loop elsewhere


def test_every_pair_has_both_sides_wall_and_cpu_in_a_seeded_order(slower):
    work = entries(slower)["paired/work"]
    assert work.error == "" and work.pairs >= paired.MIN_PAIRS
    assert {len(v) for v in work.series.values()} == {work.pairs}
    doc = json.loads(slower.path.read_text())
    section = next(r for r in doc["results"] if r["name"] == "paired/work")["paired"]
    assert len(section["cand_first"]) == work.pairs and set(section["cand_first"]) == {0, 1}
    assert 0.35 < np.mean(section["cand_first"]) < 0.65   # a coin per pair
    assert section["warmup_pairs"] > 0 and section["batch_ops"] == work.batch_ops
    # Batches last at least the target (0.1 ms) on the slower side: the median one does.
    longest = np.maximum(work.series["base_wall_ns"], work.series["cand_wall_ns"])
    assert np.median(longest) >= 0.5 * 100_000
    context = doc["context"]["paired"]
    assert (context["budget_s"], context["sessions"], context["batch_target_s"]) == (1, 4, 0.0001)
    assert len(section["session_pairs"]) == 4 and sum(section["session_pairs"]) == work.pairs
    assert doc["context"]["count"] is None and doc["context"]["time"] is None


def test_the_order_within_pairs_is_the_same_in_every_run(runner, builds, tmp_path):
    """Seeded by the instance's name: a run can be repeated, pair for pair."""
    orders = []
    for i in range(2):
        out = tmp_path / f"{i}.json"
        paired_run(runner, builds["base"], builds["base"], out, "--filter", "paired/alloc$")
        orders.append(json.loads(out.read_text())["results"][0]["paired"]["cand_first"])
    n = min(map(len, orders))
    assert n > 50 and orders[0][:n] == orders[1][:n]


def test_ten_percent_more_work_is_seen_as_ten_percent_slower(slower):
    found = entries(slower)
    assert 0.07 < ratio(found["paired/work"]) < 0.13
    assert 0.07 < ratio(found["paired/work"], "cpu_ns_per_op") < 0.13
    # Two threads a side: CPU of both timed threads, per op per thread.
    assert 0.07 < ratio(found["paired/work_threads/threads:2"], "cpu_ns_per_op", 2) < 0.13
    # Wall time of two threads includes their meeting at every batch's end: less than 10%,
    # and on a busy machine much less (a thread waiting for a core holds the other up).
    assert ratio(found["paired/work_threads/threads:2"], "ns_per_op", 2) > 0


def test_each_thread_of_both_sides_runs_on_one_cpu(runner, builds, tmp_path):
    """paired/pinned skips with an error on a thread that may run on more than one CPU, or
    when its two threads share one."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("this test runs on one CPU: two threads must share it")
    run = paired_run(runner, builds["base"], builds["slower"], tmp_path / "p.json", "--filter",
                     "paired/pinned")
    assert [(e.name, e.error) for e in run.entries.values()] == [
        ("paired/pinned/threads:1", ""), ("paired/pinned/threads:2", "")]


def test_cpu_per_op_is_per_thread(slower):
    """Two threads a side, each doing the ops of a batch: the CPU clocks of both add up to
    twice one thread's, and per op per thread it is paired/work's (2× if not divided)."""
    found = entries(slower)
    one = np.median(found["paired/work"].per_op("cpu_ns_per_op", 1)[0])
    two = np.median(found["paired/work_threads/threads:2"].per_op("cpu_ns_per_op", 2)[0])
    assert 0.7 < two / one < 1.4


def test_paused_work_is_not_timed(slower):
    """paired/paused pauses 9 of its 10 chains: timed, it costs one chain, as paired/work."""
    found = entries(slower)
    paused, work = (np.median(found[n].per_op("ns_per_op", 1)[0])
                    for n in ("paired/paused", "paired/work"))
    assert paused < 2 * work   # 10× if the paused chains were timed
    assert found["paired/paused"].pairs >= 20
    assert 0.05 < ratio(found["paired/paused"]) < 0.15


def test_each_side_has_its_own_shared_libraries(slower):
    """Both builds link libpaired_subject.so (one soname, 2,000 vs 4,000 iterations): in one
    process the candidate would run the base's library and the ratio would be 0."""
    assert 0.8 < ratio(entries(slower)["paired/subject"]) < 1.2


def test_the_same_build_on_both_sides_differs_by_nothing(runner, builds, tmp_path):
    run = paired_run(runner, builds["base"], builds["base"], tmp_path / "aa.json", "--filter",
                     "paired/(work|alloc)$")
    for entry in run.entries.values():
        assert abs(ratio(entry)) < 0.02, entry.name


def test_another_layout_of_the_same_work_differs_by_little(runner, builds, tmp_path):
    run = paired_run(runner, builds["base"], builds["layout"], tmp_path / "aa2.json", "--filter",
                     "paired/work$")
    assert abs(ratio(entries(run)["paired/work"])) < 0.02


def test_instances_of_one_build_only_are_named_and_not_run(slower):
    doc = json.loads(slower.path.read_text())
    assert doc["context"]["paired"]["only_in_base"] == []
    assert doc["context"]["paired"]["only_in_candidate"] == ["paired/only_in_this_build"]
    assert "paired/only_in_this_build" not in entries(slower)


FAULTS = {
    "paired/fault/segfault": "crashed with SIGSEGV (Segmentation fault)",
    "paired/fault/throw": "threw std::runtime_error: the span pool is empty (uncaught)",
    "paired/fault/exit": "ended the process with exit status 0 (a call to exit() or _exit() in "
                         "the scenario?)",
    "paired/fault/skip": "the exporter is gone",
    "paired/fault/hang": "went silent for 2.7 s (its setup or a batch hangs?) and was killed",
}


@pytest.mark.parametrize("isolation", [[], ["--no-isolation"]])
@pytest.mark.parametrize("faulty", ["candidate", "base"])
def test_a_fault_of_one_side_fails_its_instance_naming_the_side(runner, builds, tmp_path,
                                                                 faulty, isolation):
    sides = (builds["base"], builds["faulty"])
    base, cand = sides if faulty == "candidate" else sides[::-1]
    names = [n for n in FAULTS if isolation == [] or n != "paired/fault/hang"]
    run = paired_run(runner, base, cand, tmp_path / "f.json", "--filter",
                     "|".join(f"^{n}$" for n in names) + "|^paired/work$",
                     "--instance-timeout", "3", *isolation, code=1)
    found = entries(run)
    for name in names:
        assert found[name].error == f"paired time pass: {faulty}: {FAULTS[name]}"
    assert found["paired/work"].error == "" and found["paired/work"].pairs > 0


@pytest.mark.parametrize("args, message", [
    (["--against", "{slower}"], "--against compares two builds: give the base build as exactly "
                                "one --plugin PATH (0 given)"),
    (["--plugin", "{base}", "--plugin", "{base}", "--against", "{slower}"],
     "--against compares two builds: give the base build as exactly one --plugin PATH (2 given)"),
    (["--plugin", "{base}", "--against", "{slower}", "--no-time"],
     "--against runs only the paired time pass: drop --instructions, --no-count and --no-time "
     "(measure counts in a run of their own)"),
    (["--plugin", "{base}", "--against", "{slower}", "--paired-time", "0"],
     "--paired-time expects a finite number of seconds > 0, not '0'"),
    (["--plugin", "{base}", "--against", "{ground_truth}"],
     "--plugin '{base}' and --against '{ground_truth}' register no scenario instance of the "
     "same name; pair two builds of the same scenarios"),
])
def test_what_cannot_be_paired_is_refused(runner, builds, ground_truth, args, message):
    paths = {"base": builds["base"], "slower": builds["slower"], "ground_truth": ground_truth}
    done = run_runner(runner, *(a.format(**paths) for a in args))
    assert (done.returncode, done.stderr) == (
        2, f"allocbench-run: error: {message.format(**paths)}\n")


def test_an_interrupted_run_keeps_its_pairs_and_the_gate_refuses_them(runner, builds, tmp_path):
    out = tmp_path / "p.json"
    proc = subprocess.Popen([str(runner), "--plugin", str(builds["base"]), "--against",
                             str(builds["slower"]), "--filter", "paired/(work|alloc)$",
                             "--paired-time", "3", "--quiet", "--out", str(out)],
                            stderr=subprocess.PIPE, text=True)
    partial = Path(f"{out}.partial")
    deadline = time.monotonic() + 60
    while not partial.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "interrupted after 1 of 2 instances" in stderr and not out.exists()
    run = paired_results.load(partial)
    assert not run.complete and [e.name for e in run.entries.values()] == ["paired/work"]
    from allocbench.gate import paired_gate
    with pytest.raises(UserError, match="the pairs of an interrupted run"):
        paired_gate.apply(None, run, None)   # refused before anything is read
