"""Fault isolation in allocbench-run: one plugin with a scenario per kind of fault between
well-behaved ones (tests/plugins/faults.cc). Every good instance is measured exactly (3 × new of
32 B: 96 B/op in 3 allocations), every bad one is recorded with its reason, and a run is stopped
by one signal without leaving a process behind."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from allocbench.base import results
from conftest import run_runner
from docs_pages import folded, page

# The reason allocbench-run records for each bad instance, as the README lists them.
FAULTS = {
    "fault/segfault": "count pass: crashed with SIGSEGV (Segmentation fault)",
    "fault/abort": "count pass: crashed with SIGABRT (Aborted)",
    "fault/throw": "count pass: threw std::runtime_error: the span pool is empty (uncaught)",
    "fault/throw_int": "count pass: threw int (uncaught)",
    "fault/throw_on_thread":
        "count pass: threw std::logic_error: flush thread failed (uncaught)",
    "fault/exit": "count pass: ended the process with exit status 0 (a call to exit() or _exit() "
                  "in the scenario?)",
    "fault/sigkill": "count pass: crashed with SIGKILL (Killed) (also what the kernel's OOM "
                     "killer sends)",
    "fault/hang": "count pass: did not finish within 3 s (--instance-timeout) and was killed",
    "fault/sigterm_to_runner": "count pass: sent SIGTERM (Terminated) to allocbench-run (a kill() "
                               "of its parent, by the scenario or a process it started?) and was "
                               "stopped",
    "fault/sigint_to_runner": "count pass: sent SIGINT (Interrupt) to allocbench-run (a kill() of "
                              "its parent, by the scenario or a process it started?) and was "
                              "stopped",
    "fault/sighup_to_runner_from_daemon": "count pass: sent SIGHUP (Hangup) to allocbench-run (a "
                                          "kill() of its parent, by the scenario or a process it "
                                          "started?) and was stopped",
    "fault/sigterm_from_child": "count pass: crashed with SIGTERM (Terminated)",
    "fault/closes_the_report_pipe_for_good":
        "count pass: closed allocbench-run's report pipe (a close() of file descriptors it did "
        "not open, as a daemonizing agent does?), which could not be opened again (Too many open "
        "files): what it measured after that is lost",
    "fault/segfault_in_time_pass": "time pass: crashed with SIGSEGV (Segmentation fault)",
    "fault/throw_in_time_pass":
        "time pass: threw std::runtime_error: the flush queue is full (uncaught)",
    "fault/sigterm_in_time_pass": "time pass: crashed with SIGTERM (Terminated)",
    "fault/exit_in_time_pass": "time pass: ended the process with exit status 0 (a call to exit() "
                               "or _exit() in the scenario?)",
    "fault/_exit_in_time_pass": "time pass: ended the process with exit status 0 (a call to "
                                "exit() or _exit() in the scenario?)",
    "misuse/two_loops": "count pass: the scenario body runs `for (auto _ : state)` more than "
                        "once; give it exactly one measured loop (split the work into two "
                        "scenarios)",
    "misuse/skip_with_null": "count pass: SkipWithError() with no message",
    "misuse/counter_null_name": "count pass: SetCounter() with a NULL name",
    "misuse/nan_counter": "count pass: SetCounter(\"hit_ratio\", nan): the value is not a "
                          "finite number",
    "misuse/pause_outside_loop": "count pass: PauseTiming() outside the measured loop",
    "misuse/invalid_utf8_error": "count pass: caf\ufffd au lait: not UTF-8",
    "misuse/invalid_utf8_name/\\xff\\xfe": "not run: its name (shown escaped) is not valid "
                                           "UTF-8; give the scenario a printable Name() and "
                                           "ArgNames()",
    "misuse/control_name/\\x0a\\x1b[31mred": "not run: its name (shown escaped) has a control "
                                             "character; give the scenario a printable Name() "
                                             "and ArgNames()",
}
GOOD = ["good/before", "good/after"]
# Faults that cost nothing: measured exactly (96 B/op in 3 allocations), as the good ones.
HARMLESS = ["fault/closes_every_descriptor", "fault/daemon"]
DAEMON_NOTE = ("left 1 process running when it ended (a daemon or an agent it started?), killed "
               "then; allocations in other processes are not counted")


@pytest.fixture(scope="module")
def faults(build_dir: Path) -> Path:
    return build_dir / "tests" / "plugins" / "faults.so"


@pytest.fixture(scope="module")
def fault_run(runner, faults, tmp_path_factory):
    """The whole plugin in one run; fault/daemon writes its agent's pid to `daemons`."""
    out = tmp_path_factory.mktemp("faults") / "r.json"
    daemons = out.with_name("daemons")
    done = run_runner(runner, "--plugin", str(faults), "--instance-timeout", "3",
                      "--repetitions", "2", "--min-time", "0.01", "--out", str(out),
                      env=dict(os.environ, ALLOCBENCH_TEST_DAEMON_PIDS=str(daemons)))
    return done, out


def test_every_fault_is_recorded_with_its_reason(fault_run):
    done, out = fault_run
    assert done.returncode == 1, done.stderr
    doc = results.load(out)
    assert doc["complete"] is True
    errors = {r["name"]: r.get("error") for r in doc["results"]}
    assert {name: error for name, error in errors.items() if error} == FAULTS
    assert sorted(name for name, error in errors.items() if not error) == \
        sorted(GOOD + HARMLESS + ["fault/leak"])
    assert f"allocbench-run: {len(FAULTS)} scenario instance(s) failed" in done.stderr


def test_a_daemon_the_scenario_started_is_killed_and_noted(fault_run):
    done, out = fault_run
    notes = {r["name"]: r["note"] for r in results.load(out)["results"] if "note" in r}
    assert notes == {"fault/daemon": DAEMON_NOTE}
    assert f"    fault/daemon: {DAEMON_NOTE}\n" in done.stdout
    (daemon,) = [int(pid) for pid in out.with_name("daemons").read_text().split()]
    assert not Path(f"/proc/{daemon}").exists()
    assert f"gets a `note`: `{DAEMON_NOTE}`" in folded("scenarios")   # as docs/scenarios.md says


def test_every_good_instance_is_measured_exactly_around_the_faults(fault_run):
    _, out = fault_run
    by_name = {r["name"]: r for r in results.load(out)["results"]}
    for name in GOOD + HARMLESS:
        alloc = by_name[name]["alloc"]
        assert (alloc["bytes_per_op"], alloc["allocs_per_op"], alloc["frees_per_op"]) == \
            (96, 3, 3)
        # The leaking scenario's thread allocated for ever; it died with its instance.
        assert alloc["background_allocs_per_op"] == 0
        assert len(by_name[name]["time"]["samples_ns_per_op"]) == 2
    leak = by_name["fault/leak"]["alloc"]
    assert (leak["bytes_per_op"], leak["allocs_per_op"], leak["frees_per_op"]) == (64, 1, 0)


@pytest.mark.parametrize("name", [name for name in FAULTS if name.endswith("_in_time_pass")])
def test_what_the_count_pass_reported_survives_every_fault_of_the_time_pass(fault_run, name):
    """The count pass reported its result before the time pass began: a crash, a signal, an
    exception, exit() or _exit() after that keeps it whole (3 × new of 32 B, 3 deletes)."""
    _, out = fault_run
    failed = next(r for r in results.load(out)["results"] if r["name"] == name)
    alloc = failed["alloc"]
    assert (alloc["bytes_per_op"], alloc["allocs_per_op"], alloc["frees_per_op"],
            alloc["steady"]) == (96, 3, 3, True)
    assert failed["time"] is None
    assert failed["error"] == FAULTS[name]


def test_the_terminal_gets_no_control_characters(fault_run):
    done, _ = fault_run
    for stream in (done.stdout, done.stderr):
        assert not [c for c in stream if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0]
    assert "misuse/control_name/\\x0a\\x1b[31mred !" in done.stdout


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie nobody reaped yet."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def _start_hanging_run(runner, faults, out: Path) -> tuple[subprocess.Popen, int]:
    """allocbench-run measuring good/before, then stuck in fault/hang: (process, hang's pid)."""
    proc = subprocess.Popen([str(runner), "--plugin", str(faults), "--filter",
                             "good/before|fault/hang|good/after", "--no-time", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    partial = Path(str(out) + ".partial")
    deadline = time.monotonic() + 60
    while not (partial.exists() and _children(proc.pid)):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    return proc, _children(proc.pid)[0]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_one_signal_stops_a_hanging_run_and_keeps_what_was_measured(runner, faults, tmp_path,
                                                                    sig):
    out = tmp_path / "r.json"
    proc, child = _start_hanging_run(runner, faults, out)
    started = time.monotonic()
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert time.monotonic() - started < 5   # a poll slice, not the 600 s instance timeout
    assert "interrupted after 1 of 3 instances" in stderr
    assert not _alive(child)
    doc = results.load(Path(str(out) + ".partial"))
    assert [(r["name"], r["alloc"]["bytes_per_op"]) for r in doc["results"]] == \
        [("good/before", 96)]


def test_a_sighup_ignored_where_the_run_was_started_stays_ignored(runner, faults, tmp_path):
    """Under nohup the daemon's SIGHUP neither stops the run nor blames the instance: the
    instance runs on to its time limit, and the next one is measured."""
    out = tmp_path / "r.json"
    done = run_runner(runner, "--plugin", str(faults), "--filter",
                      "fault/sighup_to_runner_from_daemon|good/after", "--no-time",
                      "--instance-timeout", "1", "--out", str(out), sighup=signal.SIG_IGN)
    assert done.returncode == 1, done.stderr
    assert [(r["name"], r.get("error"), (r["alloc"] or {}).get("bytes_per_op"))
            for r in results.load(out)["results"]] == [
        ("fault/sighup_to_runner_from_daemon",
         "count pass: did not finish within 1 s (--instance-timeout) and was killed", None),
        ("good/after", None, 96)]


def test_without_isolation_a_signal_from_a_process_the_scenario_started_stops_the_run(
        runner, faults, tmp_path):
    """fault/sigterm_from_child's child sends SIGTERM to its parent: without isolation that is
    allocbench-run itself, and there is no instance's process to stop instead. The instance
    ends its pass, and the run stops after it."""
    out = tmp_path / "r.json"
    done = run_runner(runner, "--plugin", str(faults), "--filter",
                      "good/before|fault/sigterm_from_child|good/after", "--no-time",
                      "--no-isolation", "--out", str(out))
    assert done.returncode == 130, done.stderr
    assert done.stderr.endswith(f"allocbench-run: interrupted after 2 of 3 instances; results so "
                                f"far are in {out}.partial\n")
    assert [(r["name"], r["alloc"]["bytes_per_op"])
            for r in results.load(Path(f"{out}.partial"))["results"]] == \
        [("good/before", 96), ("fault/sigterm_from_child", 96)]


def test_a_killed_run_takes_its_instance_with_it_and_keeps_what_it_measured(runner, faults,
                                                                            tmp_path):
    out = tmp_path / "r.json"
    proc, child = _start_hanging_run(runner, faults, out)
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 10
    while _alive(child):
        assert time.monotonic() < deadline, "the instance's process outlived allocbench-run"
        time.sleep(0.02)
    doc = results.load(Path(str(out) + ".partial"))
    assert doc["complete"] is False
    assert [(r["name"], r["alloc"]["bytes_per_op"]) for r in doc["results"]] == \
        [("good/before", 96)]


def test_the_partial_file_grows_by_one_line_per_instance(runner, faults, tmp_path):
    """A journal, not a document rewritten after each instance: its first line is the
    document without results, then each instance's entry on a line of its own."""
    out = tmp_path / "r.json"
    partial = Path(str(out) + ".partial")
    proc = subprocess.Popen([str(runner), "--plugin", str(faults), "--filter",
                             "good/before|fault/segfault$|fault/hang", "--no-time", "--out",
                             str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (partial.exists() and partial.read_text().count("\n") == 3):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    proc.kill()
    proc.communicate(timeout=30)
    head, *lines = partial.read_text().splitlines(keepends=True)
    header = json.loads(head)
    assert (header["journal"], header["complete"], header["results"]) == (True, False, [])
    entries = [json.loads(line) for line in lines]
    assert [(e["name"], e.get("error")) for e in entries] == [
        ("good/before", None),
        ("fault/segfault", "count pass: crashed with SIGSEGV (Segmentation fault)")]
    assert all(line.endswith("}\n") for line in lines)
    doc = results.load(partial)
    del header["journal"]
    assert doc == {**header, "results": entries}


@pytest.mark.parametrize("plugin, message", [
    ("null_describe.so", "allocbench_plugin_describe() returned NULL"),
    ("broken_describe.so", "its description is broken (scenario 0: name is NULL)"),
    ("crash_at_load.so", "crashed while loading with SIGSEGV (Segmentation fault); is the file "
                         "complete? rebuild the plugin"),
    ("truncated.so", "crashed while loading with SIGBUS (Bus error); is the file complete? "
                     "rebuild the plugin"),
    ("throw_at_load.so", "a static constructor threw std::runtime_error: the agent's socket is "
                         "missing (uncaught) while the plugin loaded; catch it in the plugin, or "
                         "give it what it needs"),
])
def test_a_plugin_broken_before_any_scenario_is_refused(runner, build_dir, ground_truth,
                                                         tmp_path, plugin, message):
    path = build_dir / "tests" / "plugins" / plugin
    if plugin == "truncated.so":   # a copy cut off mid-file, as an interrupted copy leaves it
        path = tmp_path / plugin
        path.write_bytes(ground_truth.read_bytes()[:20000])
    out = tmp_path / "r.json"
    done = run_runner(runner, "--plugin", str(ground_truth), "--plugin", str(path),
                      "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"allocbench-run: error: --plugin '{path}': {message}" + \
        ("; build the plugin from sources that include <allocbench/scenario.h> instead of "
         "defining it yourself\n" if plugin == "null_describe.so" else
         "; rebuild it against this allocbench's <allocbench/scenario.h>\n"
         if plugin == "broken_describe.so" else "\n")
    assert list(tmp_path.glob("r.json*")) == []


def _make(kind: str, path: Path, target: Path) -> None:
    if kind == "symlink":
        path.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        try:   # a node like /dev/null, made here so that a failure cannot harm the real one
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("mknod needs CAP_MKNOD")


@pytest.mark.parametrize("kind, described", [("symlink", "a symbolic link"), ("fifo", "a FIFO"),
                                             ("device", "a character device")])
def test_out_is_never_replaced_unless_a_regular_file(runner, ground_truth, tmp_path, kind,
                                                     described):
    target = tmp_path / "target.json"
    target.write_text("precious\n")
    out = tmp_path / "out.json"
    _make(kind, out, target)
    before = os.lstat(out)
    done = run_runner(runner, "--plugin", str(ground_truth), "--filter", "mixed", "--no-time",
                      "--out", str(out))
    assert done.returncode == 2
    assert done.stderr == (f"allocbench-run: error: cannot write '{out}': it is {described}, and "
                           "allocbench-run writes only regular files; choose another --out "
                           "path\n")
    after = os.lstat(out)
    assert (after.st_mode, after.st_ino, after.st_rdev) == \
        (before.st_mode, before.st_ino, before.st_rdev)
    assert target.read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "target.json"]


def test_isolation_is_recorded_in_the_context(fault_run):
    _, out = fault_run
    assert results.load(out)["context"]["isolation"] == \
        {"mode": "process per instance", "instance_timeout_s": 3.0}


def test_the_readme_table_of_faults_is_what_the_runner_records():
    readme = page("scenarios")
    table = readme.split("<!-- faults:begin -->")[1].split("<!-- faults:end -->")[0]
    rows = [line for line in table.strip().splitlines()[2:]]
    recorded = []
    for row in rows:
        cell = row.split(" | ", 1)[1]
        fence = re.match(r"`+", cell).group()
        recorded.append(cell[len(fence):].split(fence)[0].strip())
    assert sorted(recorded) == sorted(FAULTS.values())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_stopping_allocbench_stops_its_runner_and_the_instance(build_dir, faults, tmp_path, sig):
    """`allocbench run` (as `ab` and `sweep` do) starts allocbench-run, which starts the
    instance: a SIGTERM, or even a SIGKILL that leaves allocbench no chance to clean up,
    leaves neither behind."""
    out = tmp_path / "r.json"
    command = ["/usr/bin/python3", "-m", "allocbench", "run", "--plugin", str(faults),
               "--filter", "good/before|fault/hang", "--no-time", "--out", str(out),
               "--build-dir", str(build_dir)]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "scripts"))
    cli = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    deadline = time.monotonic() + 120
    while not (Path(str(out) + ".partial").exists() and _children(cli.pid)
               and _children(_children(cli.pid)[0])):
        assert time.monotonic() < deadline and cli.poll() is None
        time.sleep(0.02)
    runner = _children(cli.pid)[0]
    instance = _children(runner)[0]
    cli.send_signal(sig)
    _, stderr = cli.communicate(timeout=60)
    assert cli.returncode == (130 if sig == signal.SIGTERM else -signal.SIGKILL), stderr
    deadline = time.monotonic() + 20
    while _alive(runner) or _alive(instance):
        assert time.monotonic() < deadline, "allocbench-run or its instance outlived allocbench"
        time.sleep(0.02)
    doc = results.load(Path(str(out) + ".partial"))
    assert [r["name"] for r in doc["results"]] == ["good/before"]


# --- faults in allocbench-run's own process, around the scenarios (tests/plugins/process_faults.cc)


def _process_fault(build_dir: Path, kind: str) -> Path:
    return build_dir / "tests" / "plugins" / f"{kind}.so"


@pytest.mark.parametrize("isolation", [[], ["--no-isolation"]], ids=["isolated", "in-process"])
def test_a_static_destructor_that_crashes_at_exit_costs_nothing(runner, build_dir, tmp_path,
                                                                isolation):
    """allocbench-run leaves without running exit handlers once its results are written."""
    out = tmp_path / "r.json"
    done = run_runner(runner, "--plugin", str(_process_fault(build_dir, "crash_at_exit")),
                      "--no-time", *isolation, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "process/three_blocks  " in done.stdout   # the table, flushed before the exit
    doc = results.load(out)
    assert doc["complete"] is True
    assert [(r["name"], r["alloc"]["bytes_per_op"], r["alloc"]["allocs_per_op"])
            for r in doc["results"]] == [("process/three_blocks", 96, 3)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_without_isolation_a_static_constructor_that_throws_is_refused_as_well(runner,
                                                                               build_dir,
                                                                               tmp_path):
    """The exception reaches std::terminate() inside dlopen(), in allocbench-run's own process
    (isolated, the plugin is refused earlier, in a child: see above)."""
    plugin = _process_fault(build_dir, "throw_at_load")
    out = tmp_path / "r.json"
    done = run_runner(runner, "--plugin", str(plugin), "--no-time", "--no-isolation", "--out",
                      str(out))
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"allocbench-run: error: --plugin '{plugin}': a static constructor "
                           "threw std::runtime_error: the agent's socket is missing (uncaught) "
                           "while the plugin loaded; catch it in the plugin, or give it what it "
                           "needs\n")
    assert list(tmp_path.iterdir()) == []


def test_a_chdir_in_a_static_constructor_moves_no_relative_path(runner, build_dir, ground_truth,
                                                                 tmp_path):
    """chdir_at_load.so moves to / as it loads: the relative --plugin after it and the
    relative --out are still where they were when allocbench-run started."""
    for plugin in (_process_fault(build_dir, "chdir_at_load"), ground_truth):
        (tmp_path / plugin.name).write_bytes(plugin.read_bytes())
    done = subprocess.run([str(runner), "--plugin", "chdir_at_load.so", "--plugin",
                           "ground_truth.so", "--filter", "three_blocks|ground_truth/mixed$",
                           "--no-time", "--quiet", "--out", "r.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = results.load(tmp_path / "r.json")
    assert [(r["name"], r["alloc"]["bytes_per_op"]) for r in doc["results"]] == \
        [("process/three_blocks", 96), ("ground_truth/mixed", 206)]
    assert not Path("/r.json").exists()
