"""allocbench-run's results file: schema, context, samples, failures, crashes and Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

from conftest import count_only, run_runner

from allocbench.base import results


def test_ground_truth_through_the_cli(runner, ground_truth, tmp_path):
    alloc = count_only(runner, ground_truth, tmp_path / "r.json", "--filter",
                       "mixed|setup_and_pause|threaded|sized")
    for name in ("ground_truth/mixed", "ground_truth/setup_and_pause"):
        assert alloc[name]["bytes_per_op"] == 206
        assert alloc[name]["allocs_per_op"] == 5
        assert alloc[name]["frees_per_op"] == 5
        assert alloc[name]["steady"] is True
    assert alloc["ground_truth/threaded/threads:16"]["bytes_per_op"] == 96
    assert alloc["ground_truth/sized/bytes:24"]["bytes_per_op"] == 24
    assert alloc["ground_truth/sized/bytes:96"]["bytes_per_op"] == 96


def test_document_schema_and_context(runner, ground_truth, tmp_path):
    out = tmp_path / "r.json"
    started = datetime.now(timezone.utc).replace(microsecond=0)
    done = run_runner(runner, "--plugin", str(ground_truth), "--filter", "mixed|sized",
                      "--repetitions", "3", "--min-time", "0.01", "--out", str(out),
                      "--context", "revision.sha=0123abcd", "--context", "revision.dirty=true")
    assert done.returncode == 0, done.stderr
    doc = results.load(out)  # validates the schema
    assert doc["complete"] is True
    ctx = doc["context"]
    assert ctx["revision"] == {"sha": "0123abcd", "dirty": True}
    # When it ran, in UTC to the second: between the start of the run and now.
    date = datetime.strptime(ctx["date"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    assert started <= date <= datetime.now(timezone.utc), ctx["date"]
    assert ctx["allocator"]["name"] == "glibc"
    assert ctx["harness"]["scenario_api"] == 1
    assert ctx["cpu"]["logical_cpus"] >= 1
    assert ctx["command"][0] == str(runner)
    assert ctx["plugins"][0]["path"] == str(ground_truth.resolve())
    assert ctx["time"] == {"repetitions": 3, "min_time_s": 0.01}
    keys = {f["key"] for f in doc["fields"]}
    assert {"bytes_per_op", "allocs_per_op", "ns_per_op", "ops_per_s"} <= keys
    names = [r["name"] for r in doc["results"]]
    assert names == ["ground_truth/mixed", "ground_truth/sized/bytes:24",
                     "ground_truth/sized/bytes:96"]
    for r in doc["results"]:
        assert r["allocator"] == "glibc"
        assert len(r["time"]["samples_ns_per_op"]) == 3  # every repetition is a sample
        assert all(s > 0 for s in r["time"]["samples_ns_per_op"])
        assert r["instructions"] is None and ctx["instructions"] is None   # not asked for
        for f in doc["fields"]:
            if f["section"] != "instructions":
                assert f["key"] in r[f["section"]]
    assert doc["results"][1]["args"] == {"bytes": 24}
    assert not Path(str(out) + ".partial").exists()


def test_a_failing_scenario_is_recorded_and_exits_1(runner, ground_truth, tmp_path):
    out = tmp_path / "r.json"
    done = run_runner(runner, "--plugin", str(ground_truth), "--filter", "mixed|fails",
                      "--no-time", "--out", str(out))
    assert done.returncode == 1
    by_name = {r["name"]: r for r in json.loads(out.read_text())["results"]}
    assert by_name["ground_truth/fails"]["error"] == "count pass: the subject is not configured"
    assert by_name["ground_truth/fails"]["alloc"] is None
    assert by_name["ground_truth/mixed"]["alloc"]["bytes_per_op"] == 206


def test_a_crash_is_a_failed_instance_and_the_run_goes_on(runner, ground_truth, tmp_path):
    out = tmp_path / "r.json"
    env = dict(os.environ, ALLOCBENCH_TEST_CRASH="1")
    done = run_runner(runner, "--plugin", str(ground_truth), "--filter",
                      "mixed|crash_on_request|sized", "--no-time", "--out", str(out), env=env)
    assert done.returncode == 1, done.stderr
    by_name = {r["name"]: r for r in results.load(out)["results"]}
    assert by_name["ground_truth/crash_on_request"]["error"] == \
        "count pass: crashed with SIGABRT (Aborted)"
    assert by_name["ground_truth/mixed"]["alloc"]["bytes_per_op"] == 206
    assert by_name["ground_truth/sized/bytes:96"]["alloc"]["bytes_per_op"] == 96


def test_without_isolation_a_crash_still_keeps_what_was_measured(runner, ground_truth,
                                                                 tmp_path):
    out = tmp_path / "r.json"
    env = dict(os.environ, ALLOCBENCH_TEST_CRASH="1")
    done = run_runner(runner, "--plugin", str(ground_truth), "--filter",
                      "mixed|crash_on_request", "--no-time", "--no-isolation", "--out", str(out),
                      env=env)
    assert done.returncode == -signal.SIGABRT
    assert not out.exists()
    partial = results.load(Path(str(out) + ".partial"))
    assert partial["complete"] is False
    assert partial["context"]["isolation"] == {"mode": "none"}
    assert [r["name"] for r in partial["results"]] == ["ground_truth/mixed"]
    assert partial["results"][0]["alloc"]["bytes_per_op"] == 206


def test_ctrl_c_keeps_what_was_measured(runner, ground_truth, tmp_path):
    out = tmp_path / "r.json"
    partial = Path(str(out) + ".partial")
    proc = subprocess.Popen([str(runner), "--plugin", str(ground_truth), "--filter",
                             "mixed|sized", "--min-time", "0.3", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not partial.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted after" in stderr
    assert not out.exists()
    doc = results.load(partial)
    assert doc["complete"] is False
    assert doc["results"][0]["name"] == "ground_truth/mixed"
    assert doc["results"][0]["alloc"]["bytes_per_op"] == 206


def test_list_and_help(runner, ground_truth):
    done = run_runner(runner, "--plugin", str(ground_truth), "--list")
    assert done.returncode == 0
    assert "ground_truth/threaded/threads:16" in done.stdout.splitlines()
    done = run_runner(runner, "--help")
    assert done.returncode == 0 and "--count-ops N" in done.stdout


def test_builtin_plugin_is_the_default(runner):
    done = run_runner(runner, "--list")
    assert done.returncode == 0, done.stderr
    assert "span_creation/bare_start_span" in done.stdout.splitlines()
