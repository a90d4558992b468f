"""The instructions pass (allocbench-run --instructions): instructions per op under callgrind,
from the count windows' own ops, exact where the code is deterministic.

Absolute Ir/op include the harness's constant per-op calls, so the ground truth is in
differences: instructions_truth.cc spins an x86-64 loop of exactly 3 instructions (add, sub,
jnz) per iteration.
"""

from __future__ import annotations

import json
import os
import platform
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from allocbench import cli
from allocbench.base import packages
from allocbench.base.errors import UserError
from allocbench.harness import instructions_pass
from allocbench.gate import compare, config
import process_leaks
from conftest import run_runner

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64",
                                reason="the ground truth is an x86-64 loop")

LOOP = 3   # instructions per iteration of Spin() in instructions_truth.cc
WORK = "instructions_truth/work/loops:{}/paused:{}/setup:{}"
# The built-ins that run on one thread and start none: exactly repeatable across processes.
# Not: a thread spawned per op (fresh_thread_span: whether join() waits depends on scheduling)
# and several threads inserting under locks (dictionary threads:2, 4, 16: lock hand-offs).
DETERMINISTIC = r"^(?!.*(fresh_thread_span|threads:(2|4|16)$))"


@pytest.fixture(scope="module")
def truth(build_dir: Path) -> Path:
    return build_dir / "tests" / "plugins" / "instructions_truth.so"


def measure(runner: Path, out: Path, *args: str, code: int = 0) -> dict[str, dict]:
    done = run_runner(runner, "--instructions", "--no-time", "--quiet", "--out", str(out),
                      *args, timeout=600)
    assert done.returncode == code, done.stderr
    return {r["name"]: r for r in json.loads(out.read_text())["results"]}


@pytest.fixture(scope="module")
def truth_results(runner, truth, tmp_path_factory) -> tuple[dict[str, dict], str]:
    out = tmp_path_factory.mktemp("truth") / "truth.json"
    done = run_runner(runner, "--plugin", str(truth), "--instructions", "--no-time",
                      "--instance-timeout", "20", "--out", str(out), timeout=600)
    assert done.returncode == 1, done.stderr   # the two fault scenarios fail, and only they
    doc = json.loads(out.read_text())
    return {r["name"]: r for r in doc["results"]}, done.stdout


def ir(result: dict) -> float:
    return result["instructions"]["instructions_per_op"]


def test_each_loop_iteration_is_exactly_three_instructions_per_op(truth_results):
    results, _ = truth_results
    assert ir(results[WORK.format(1000, 0, 0)]) - ir(results[WORK.format(10, 0, 0)]) == \
        LOOP * (1000 - 10)
    for name in (WORK.format(10, 0, 0), WORK.format(1000, 0, 0)):
        section = results[name]["instructions"]
        assert section["steady"] is True
        assert section["windows"][0] == section["windows"][1]   # {"Ir": n}, both windows
        assert section["window_ops"] == 1000
        # Ir/op is both windows' instructions over their ops (2 × 1000), nothing else.
        assert section["instructions_per_op"] == section["windows"][0]["Ir"] / 1000


def test_setup_paused_regions_and_uncounted_threads_do_not_count(truth_results):
    results, _ = truth_results
    plain = ir(results[WORK.format(1000, 0, 0)])
    assert ir(results[WORK.format(1000, 5000, 0)]) == plain      # 15,000 Ir paused per op
    assert ir(results[WORK.format(1000, 0, 1000000)]) == plain   # 3,000,000 Ir in setup
    # Two threads at once: per op per thread, the same instructions, in both windows.
    threads = results["instructions_truth/work_threads/loops:1000/paused:0/setup:0/threads:2"]
    assert ir(threads) == plain and threads["instructions"]["steady"] is True
    # A helper thread spins 30,000 Ir per op uncounted; the op itself (create and join a
    # thread) is far less. How much it is depends on scheduling: steady or not, by its windows.
    helper = results["instructions_truth/uncounted_helper"]["instructions"]
    assert 0 < helper["instructions_per_op"] < 10000 / 3
    w1, w2 = (w["Ir"] for w in helper["windows"])
    assert helper["steady"] is (w1 == w2)


def test_windows_that_differ_are_not_steady_and_say_so(truth_results):
    """instructions_truth/growing spins one iteration more in each op than in the last: the
    second window executes more than the first, always."""
    results, _ = truth_results
    growing = results["instructions_truth/growing"]["instructions"]
    w1, w2 = (w["Ir"] for w in growing["windows"])
    assert w2 > w1 and growing["steady"] is False
    assert f"window 1: {w1} Ir, window 2: {w2} Ir" in growing["steady_reason"]
    assert growing["instructions_per_op"] == (w1 + w2) / (2 * growing["window_ops"])


def test_the_table_shows_ir_per_op_and_faults_under_valgrind_fail_only_their_instance(
        truth_results):
    results, table = truth_results
    assert "Ir/op" in table.splitlines()[0]
    assert results["instructions_truth/fault/crashes_under_valgrind"]["error"] == \
        "instructions pass: crashed with SIGABRT (Aborted) (under callgrind)"
    assert results["instructions_truth/fault/hangs_under_valgrind"]["error"] == \
        ("instructions pass: did not finish within 20 s (--instance-timeout) and was killed "
         "(under callgrind)")
    # Their native passes measured them; the others were all measured under callgrind.
    assert results["instructions_truth/fault/crashes_under_valgrind"]["alloc"]["bytes_per_op"] \
        == 0
    failed = [name for name, r in results.items() if "error" in r]
    assert sorted(failed) == sorted([*VALGRIND_FAULTS,
                                     "instructions_truth/fault/hangs_under_valgrind"])


def test_one_process_for_every_instance_reads_each_instances_own_windows(runner, truth,
                                                                         truth_results, tmp_path):
    """--no-isolation: every instance dumps its windows from the same process."""
    results, _ = truth_results
    found = measure(runner, tmp_path / "r.json", "--plugin", str(truth), "--no-isolation",
                    "--filter", "^instructions_truth/work/")
    assert len(found) == 4
    for name, result in found.items():
        assert ir(result) == ir(results[name]), name


def test_context_records_the_pass_and_address_randomization_off(runner, truth, tmp_path):
    out = tmp_path / "r.json"
    measure(runner, out, "--plugin", str(truth), "--filter", "loops:10/")
    context = json.loads(out.read_text())["context"]["instructions"]
    assert context["tool"] == "callgrind"
    assert context["valgrind"].startswith("valgrind-3.")
    assert context["aslr"] == "disabled"
    assert (context["warmup_ops"], context["window_ops"], context["estimated_cycles"]) == \
        (1000, 1000, False)


def test_estimated_cycles_come_with_the_cache_simulation(runner, truth, tmp_path):
    out = tmp_path / "r.json"
    result = measure(runner, out, "--plugin", str(truth), "--filter", "loops:1000/paused:0/s",
                     "--estimated-cycles")
    section = next(iter(result.values()))["instructions"]
    w = section["windows"][0]
    assert set(w) == {"Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"}
    # L1 hits + 5 × LL hits + 35 × RAM accesses, per op, from both windows.
    def cycles(w):
        l1_misses, ram = w["I1mr"] + w["D1mr"] + w["D1mw"], w["ILmr"] + w["DLmr"] + w["DLmw"]
        return (w["Ir"] + w["Dr"] + w["Dw"] - l1_misses) + 5 * (l1_misses - ram) + 35 * ram
    expected = sum(cycles(w) for w in section["windows"]) / 2000
    assert section["estimated_cycles_per_op"] == pytest.approx(expected, abs=1e-9)
    assert section["estimated_cycles_per_op"] > section["instructions_per_op"]


def test_deterministic_builtins_repeat_exactly_across_three_processes(runner, tmp_path):
    outs = [tmp_path / f"p{i}.json" for i in range(3)]
    with ThreadPoolExecutor(3) as pool:   # under valgrind, load changes no count
        runs = list(pool.map(lambda out: measure(runner, out, "--filter", DETERMINISTIC), outs))
    assert len(runs[0]) == 38
    for name, result in runs[0].items():
        values = [ir(run[name]) for run in runs]
        assert values[0] == values[1] == values[2], name
        assert result["alloc"]["steady"], name


def test_without_valgrind_instructions_are_refused_and_other_runs_unaffected(runner, truth,
                                                                             tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))   # no valgrind (and nothing else) on PATH
    out = tmp_path / "r.json"
    done = run_runner(runner, "--plugin", str(truth), "--instructions", "--no-time", "--out",
                      str(out), env=env)
    assert done.returncode == 2
    assert done.stderr == (
        "allocbench-run: error: --instructions needs valgrind (its callgrind tool), which "
        "cannot be run here; install Debian's valgrind (apt-get install valgrind) or drop "
        "--instructions\n")
    assert not out.exists() and not Path(f"{out}.partial").exists()
    done = run_runner(runner, "--plugin", str(truth), "--filter", "loops:10/", "--no-time",
                      "--quiet", "--out", str(out), env=env)
    assert done.returncode == 0, done.stderr


def test_valgrind_not_installable_is_one_line(monkeypatch):
    monkeypatch.setattr(packages, "_PRESENT", set())
    monkeypatch.setattr(packages, "missing", lambda wanted: list(wanted))
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(UserError) as e:
        instructions_pass.flags(True, False)
    assert str(e.value) == (
        "--instructions needs valgrind: missing Debian packages; run as root: sudo apt-get "
        "update && sudo apt-get install -y --no-install-recommends valgrind; or drop "
        "--instructions (every other measurement works without it)")
    assert instructions_pass.flags(False, False) == []   # nothing asked, nothing installed
    with pytest.raises(UserError, match="--estimated-cycles needs --instructions"):
        instructions_pass.flags(False, True)


# --- the gate ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def aa_runs(runner, truth, tmp_path_factory) -> tuple[Path, Path]:
    """Two processes of the same build, time and instructions measured: an A/A pair."""
    folder = tmp_path_factory.mktemp("aa")
    outs = folder / "a.json", folder / "b.json"
    for out in outs:
        done = run_runner(runner, "--plugin", str(truth), "--filter", "^instructions_truth/work/",
                          "--instructions", "--repetitions", "3", "--min-time", "0.01", "--quiet",
                          "--out", str(out), timeout=600)
        assert done.returncode == 0, done.stderr
    return outs


def with_instructions(path: Path, out: Path, name: str, delta: float) -> Path:
    """`path` with `delta` Ir/op more for instance `name`: a candidate that adds work."""
    doc = json.loads(path.read_text())
    for r in doc["results"]:
        if r["name"] == name:
            r["instructions"]["instructions_per_op"] += delta
    out.write_text(json.dumps(doc))
    return out


def test_a_to_a_passes_and_one_more_loop_iteration_fails_the_gate(aa_runs, tmp_path, capsys):
    a, b = aa_runs
    assert cli.main(["compare", str(a), str(b), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "worse" not in out and "instructions_per_op" in out
    assert "Allocation metrics and instructions per op (callgrind" in out
    assert "still shown, but directional" in out

    name = WORK.format(1000, 0, 0)
    cand = with_instructions(b, tmp_path / "cand.json", name, LOOP)
    assert cli.main(["compare", str(a), str(cand), "--format", "markdown"]) == 1
    out = capsys.readouterr().out
    base = ir(json.loads(a.read_text())["results"][1])
    percent = 100 * LOOP / base
    assert f"- 🟥 `instructions_per_op` +3 Ir ({base:.3f} → {base + LOOP:.3f}, " \
           f"+{percent:.3f}%)" in out
    assert f"❌ Gate failed: 1 gated regression (--fail-on any) in {name} " \
           "(instructions_per_op)." in out
    # --fail-on time judges time alone, as before: the exact Ir change no longer fails it.
    assert cli.main(["compare", str(a), str(cand), "--fail-on", "time"]) == 0


def test_a_budget_allows_instructions_and_time_is_directional(aa_runs, tmp_path):
    a, b = aa_runs
    name = WORK.format(1000, 0, 0)
    cand = with_instructions(b, tmp_path / "cand.json", name, 30)
    toml = tmp_path / "allocbench.toml"
    toml.write_text('[[budget]]\nmatch = "instructions_truth/work/*"\n'
                      'instructions_per_op = "1%"\n')
    comparison = compare.compare(compare.load_side(a), compare.load_side(cand),
                                 config.load(toml))
    change = next(c for inst in comparison.instances if inst.name == name
                  for c in inst.exact if c.metric == "instructions_per_op")
    assert (change.verdict, change.budget, change.section) == ("allowed", "1%", "instructions")
    assert not comparison.time_gates
    assert {t.verdict for inst in comparison.instances for t in inst.time} <= {
        "same", "unstable", "slower", "faster"}


@pytest.fixture(scope="module")
def plain_run(runner, truth, tmp_path_factory) -> Path:
    """The same instances measured without --instructions."""
    plain = tmp_path_factory.mktemp("plain") / "plain.json"
    done = run_runner(runner, "--plugin", str(truth), "--filter", "^instructions_truth/work/",
                      "--repetitions", "3", "--min-time", "0.01", "--quiet", "--out", str(plain))
    assert done.returncode == 0, done.stderr
    return plain


def test_both_sides_must_measure_instructions(aa_runs, plain_run, capsys):
    a, _ = aa_runs
    assert cli.main(["compare", str(a), str(plain_run)]) == 2
    err = capsys.readouterr().err
    assert f"{plain_run} was measured without --instructions, {a} with it (context." \
           "instructions); measure both sides with the same passes" in err


def test_results_from_before_the_pass_compare_with_todays(plain_run, tmp_path):
    """A results file written before the pass existed has no context.instructions and no
    instructions fields: it still compares with today's runs made without the pass."""
    doc = json.loads(plain_run.read_text())
    del doc["context"]["instructions"]
    doc["fields"] = [f for f in doc["fields"] if f["section"] != "instructions"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    assert cli.main(["compare", str(old), str(plain_run)]) == 0
    assert cli.main(["compare", str(plain_run), str(old)]) == 0


def test_calibrate_says_which_instances_repeat_their_instructions(runner, truth, tmp_path,
                                                                  capsys):
    out = tmp_path / "calibration.json"
    from allocbench.commands import calibrate
    code = calibrate.run(plugin=[truth], rounds=2, runner=runner, forks=1, repetitions=3,
                         min_time="0.001", filter="loops:10/|per_process", out=out,
                         instructions=True)
    assert code == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    by_name = {r["name"]: r for r in doc["instructions"]}
    loop = by_name[WORK.format(10, 0, 0)]
    assert loop["processes"] == 4 and loop["repeatable"] and len(loop["values"]) == 1
    # 3 × (1 + pid % 1000) instructions per op: each process its own value.
    varies = by_name["instructions_truth/per_process"]
    assert varies["processes"] == 4 and not varies["repeatable"]
    assert len(varies["values"]) == 4
    assert varies["spread_percent"] == pytest.approx(
        100 * (max(varies["values"]) - min(varies["values"])) / min(varies["values"]))
    assert "Instructions per op, 4 processes each: 1 of 2 instances identical in every " \
           "process." in printed
    assert "  instructions_truth/per_process: 4 values" in printed


def test_the_readmes_ground_truth_sentence_is_this_tests_arithmetic():
    from docs_pages import folded
    text = folded("instructions")
    assert (f"990 more iterations per op are exactly +{LOOP * (1000 - 10):,} Ir/op, and "
            f"{LOOP * 5000:,} paused instructions per op, {LOOP * 1000000:,} in setup, a helper "
            f"thread's {LOOP * 10000:,} per op and a second scenario thread add exactly 0") in text


# --- faults of the instructions pass, and instances that failed before it -----------------

REGEX_NAME = "instructions_truth/regex (a+b)*[c]{2}|d$^.?\\"
VALGRIND_FAULTS = {
    "instructions_truth/fault/exits_under_valgrind":
        "instructions pass: ended the process with exit status 0 (a call to exit() or _exit() in "
        "the scenario?) (under callgrind)",
    "instructions_truth/fault/_exits_under_valgrind":
        "instructions pass: ended the process with exit status 3 (a call to exit() or _exit() in "
        "the scenario?) (under callgrind)",
    "instructions_truth/fault/raises_sigterm_under_valgrind":
        "instructions pass: crashed with SIGTERM (Terminated) (under callgrind)",
    "instructions_truth/fault/crashes_under_valgrind":
        "instructions pass: crashed with SIGABRT (Aborted) (under callgrind)",
}


def test_a_fault_in_the_instructions_pass_keeps_what_the_native_passes_measured(runner, truth,
                                                                                 tmp_path):
    """Each fault ends its process under valgrind only, after the count and time passes
    measured it natively (new char[40] per op): both sections are kept whole, and the error
    names the pass and the fault. The instance next to them is measured under callgrind."""
    out = tmp_path / "r.json"
    before = process_leaks.children()
    done = run_runner(runner, "--plugin", str(truth), "--instructions", "--repetitions", "2",
                      "--min-time", "0.01", "--instance-timeout", "60", "--filter",
                      "fault/(exits|_exits|raises_sigterm|crashes)_under|work/loops:10/",
                      "--quiet", "--out", str(out), env=dict(os.environ, TMPDIR=str(tmp_path)),
                      timeout=600)
    assert done.returncode == 1, done.stderr
    found = {r["name"]: r for r in json.loads(out.read_text())["results"]}
    assert {name: r.get("error") for name, r in found.items()} == \
        {**VALGRIND_FAULTS, WORK.format(10, 0, 0): None}
    for name in VALGRIND_FAULTS:
        alloc = found[name]["alloc"]
        expected = (0, 0) if name.endswith("crashes_under_valgrind") else (40, 1)
        assert (alloc["bytes_per_op"], alloc["allocs_per_op"]) == expected, name
        assert len(found[name]["time"]["samples_ns_per_op"]) == 2, name
        assert found[name]["instructions"] is None, name
    assert found[WORK.format(10, 0, 0)]["instructions"]["window_ops"] == 1000
    assert process_leaks.left_behind(before) == {}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]   # callgrind's folder gone


# The error each instance got natively (tests/plugins/faults.cc), which the instructions pass
# must not replace with its own.
NATIVE_FAULTS = {
    "fault/segfault": "count pass: crashed with SIGSEGV (Segmentation fault)",
    "fault/hang": "count pass: did not finish within 20 s (--instance-timeout) and was killed",
    "fault/throw": "count pass: threw std::runtime_error: the span pool is empty (uncaught)",
    "misuse/skip_with_null": "count pass: SkipWithError() with no message",
    "fault/segfault_in_time_pass": "time pass: crashed with SIGSEGV (Segmentation fault)",
}


def test_the_instructions_pass_keeps_the_native_error_and_leaves_nothing_running(
        runner, build_dir, tmp_path):
    """Instances that failed in their native passes keep their native error and what their
    native passes measured: they are not run again under valgrind (where the hang would cost
    another 20 s), the two others are. No process of theirs, nor an agent fault/daemon started
    in either pass, is left."""
    out, daemons = tmp_path / "r.json", tmp_path / "daemons"
    before = process_leaks.children()
    done = run_runner(runner, "--plugin", str(build_dir / "tests" / "plugins" / "faults.so"),
                      "--instructions", "--repetitions", "2", "--min-time", "0.01",
                      "--instance-timeout", "20", "--filter",
                      "good/before|fault/(segfault|hang|throw|daemon)$|misuse/skip_with_null|"
                      "fault/segfault_in_time_pass", "--out", str(out),
                      env=dict(os.environ, TMPDIR=str(tmp_path),
                               ALLOCBENCH_TEST_DAEMON_PIDS=str(daemons)), timeout=600)
    assert done.returncode == 1, done.stderr
    assert "\ninstructions pass: 2 instance(s) under callgrind (valgrind-3." in done.stderr
    found = {r["name"]: r for r in json.loads(out.read_text())["results"]}
    assert {name: r.get("error") for name, r in found.items()} == \
        {**NATIVE_FAULTS, "good/before": None, "fault/daemon": None}
    for name in NATIVE_FAULTS:
        assert found[name]["instructions"] is None, name
    alloc = found["fault/segfault_in_time_pass"]["alloc"]
    assert (alloc["bytes_per_op"], alloc["allocs_per_op"]) == (96, 3)
    for name in ("good/before", "fault/daemon"):
        assert found[name]["instructions"]["window_ops"] == 1000, name
        assert (found[name]["alloc"]["bytes_per_op"], found[name]["alloc"]["allocs_per_op"]) \
            == (96, 3), name
    agents = [int(pid) for pid in daemons.read_text().split()]
    assert len(agents) == 2   # one natively, one under valgrind
    assert [pid for pid in agents if Path(f"/proc/{pid}").exists()] == []
    assert process_leaks.left_behind(before) == {}


def test_the_pass_runs_exactly_the_instances_still_to_measure(runner, truth, build_dir,
                                                              tmp_path):
    """By a filter of their names, escaped: every character a regex gives a meaning to, in
    REGEX_NAME, matches only itself. When every instance failed natively, valgrind is not
    started at all."""
    done = run_runner(runner, "--plugin", str(truth), "--instructions", "--no-time", "--filter",
                      "regex", "--out", str(tmp_path / "r.json"), timeout=600)
    assert done.returncode == 0, done.stderr
    assert "\ninstructions pass: 1 instance(s) under callgrind (valgrind-3." in done.stderr
    (result,) = json.loads((tmp_path / "r.json").read_text())["results"]
    assert result["name"] == REGEX_NAME
    assert (result["alloc"]["bytes_per_op"], result["instructions"]["window_ops"]) == (40, 1000)
    done = run_runner(runner, "--plugin", str(build_dir / "tests" / "plugins" / "faults.so"),
                      "--instructions", "--no-time", "--filter", "fault/segfault$", "--out",
                      str(tmp_path / "f.json"), env=dict(os.environ, TMPDIR=str(tmp_path)))
    assert done.returncode == 1, done.stderr
    assert "\ninstructions pass: 0 instance(s) under callgrind (valgrind-3." in done.stderr
    (result,) = json.loads((tmp_path / "f.json").read_text())["results"]
    assert result["error"] == NATIVE_FAULTS["fault/segfault"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json", "r.json"]
