"""How `run` and `ab` tell what happened when allocbench-run ends with none of its own exit codes
(scripts/allocbench/harness/runner_exit.py): the signal, and exactly which results it left — the
complete file, FILE.partial with the instances it measured, or nothing. And the fault that used
to end that way, a static destructor that crashes at exit, through `run`: it costs nothing."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from allocbench import cli
from allocbench.base import results
from allocbench.base.errors import MeasurementFailed
from allocbench.history import worktrees
from allocbench.commands import run as run_command
from conftest import ROOT

# An allocbench-run that dies by SIGSEGV after leaving what $LEAVE names: FILE.partial (a copy
# of a real one), FILE whole (a copy of a real one), or nothing.
FAKE = """#!/bin/sh
out=""
while [ $# -gt 0 ]; do [ "$1" = --out ] && out="$2"; shift; done
case "{leave}" in
  partial) cp "{partial}" "$out.partial" ;;
  whole) cp "{whole}" "$out" ;;
esac
{last_words}
kill -SEGV $$
"""


@pytest.fixture(scope="module")
def left(runner, build_dir, tmp_path_factory) -> dict[str, Path]:
    """A real FILE.partial of one measured instance (the run SIGKILLed in the next, which
    hangs) and a real complete FILE."""
    folder = tmp_path_factory.mktemp("left")
    faults = build_dir / "tests" / "plugins" / "faults.so"
    out = folder / "killed.json"
    partial = Path(f"{out}.partial")
    proc = subprocess.Popen([str(runner), "--plugin", str(faults), "--filter",
                             "good/before|fault/hang", "--no-time", "--quiet", "--out", str(out)])
    deadline = time.monotonic() + 60
    while not partial.exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    proc.kill()
    proc.wait(timeout=30)
    whole = folder / "whole.json"
    done = subprocess.run([str(runner), "--plugin", str(faults), "--filter", "good/before",
                           "--no-time", "--quiet", "--out", str(whole)], timeout=120)
    assert done.returncode == 0
    return {"partial": partial, "whole": whole}


def fake_runner(folder: Path, left: dict[str, Path], leave: str, last_words: str = "") -> Path:
    fake = folder / "bin" / "allocbench-run"
    fake.parent.mkdir(parents=True, exist_ok=True)
    fake.write_text(FAKE.format(leave=leave, partial=left["partial"], whole=left["whole"],
                                last_words=last_words))
    fake.chmod(0o755)
    return fake


def expected(fake: Path, out: Path, leave: str) -> str:
    return f"{fake} was killed by SIGSEGV; " + {
        "partial": f"the 1 instance(s) it measured before are in {out}.partial",
        "whole": f"it had written {out} whole before it ended (something in allocbench-run's "
                 "own process failed after the measurement: a thread a plugin started?)",
        "nothing": f"it saved nothing (no {out.name}.partial of this run): it died before it "
                   "measured an instance",
    }[leave]


@pytest.mark.parametrize("leave", ["partial", "whole", "nothing"])
def test_run_says_what_a_runner_killed_by_a_signal_left(left, tmp_path, monkeypatch, capsys,
                                                        leave):
    fake = fake_runner(tmp_path / "build", left, leave)
    monkeypatch.setattr(run_command.project, "configure_and_build", lambda *a, **k: None)
    monkeypatch.setattr(run_command.packages, "ensure", lambda packages: None)
    out = tmp_path / "r.json"
    assert cli.main(["run", "--out", str(out), "--build-dir", str(tmp_path / "build")]) == 3
    assert capsys.readouterr().err == f"allocbench: error: {expected(fake, out, leave)}\n"
    assert not out.with_suffix(".md").exists()


def test_a_partial_file_of_an_earlier_run_is_not_taken_for_this_runs(left, tmp_path,
                                                                    monkeypatch, capsys):
    fake = fake_runner(tmp_path / "build", left, "nothing")
    monkeypatch.setattr(run_command.project, "configure_and_build", lambda *a, **k: None)
    monkeypatch.setattr(run_command.packages, "ensure", lambda packages: None)
    out = tmp_path / "r.json"
    Path(f"{out}.partial").write_bytes(left["partial"].read_bytes())
    assert cli.main(["run", "--out", str(out), "--build-dir", str(tmp_path / "build")]) == 3
    assert capsys.readouterr().err == f"allocbench: error: {expected(fake, out, 'nothing')}\n"


@pytest.mark.parametrize("leave", ["partial", "whole", "nothing"])
def test_ab_says_what_a_runner_killed_by_a_signal_left_and_what_it_printed(left, tmp_path,
                                                                          leave):
    fake = fake_runner(tmp_path / "build", left, leave, "echo 'the last line' >&2")
    subject = worktrees.Subject("cand", (tmp_path / "cand.so",))
    with pytest.raises(MeasurementFailed) as raised:
        worktrees.run_interleaved(fake, [subject], 1, tmp_path / "ab", ["--no-time"])
    out = tmp_path / "ab" / "cand" / "fork-1.json"
    assert str(raised.value) == expected(fake, out, leave).replace(
        "; ", " on fork 1 of cand (its last output: the last line); ", 1)


def test_a_silent_runner_that_died_is_not_reported_as_no_output(left, tmp_path):
    fake = fake_runner(tmp_path / "build", left, "nothing")
    subject = worktrees.Subject("cand", (tmp_path / "cand.so",))
    with pytest.raises(MeasurementFailed) as raised:
        worktrees.run_interleaved(fake, [subject], 1, tmp_path / "ab", ["--no-time"])
    assert str(raised.value) == (f"{fake} was killed by SIGSEGV on fork 1 of cand; it saved "
                                 "nothing (no fork-1.json.partial of this run): it died before "
                                 "it measured an instance")


def test_ab_removes_the_partial_files_of_an_earlier_run(left, tmp_path):
    stale = tmp_path / "ab" / "cand" / "fork-1.json.partial"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(left["partial"].read_bytes())
    fake = fake_runner(tmp_path / "build", left, "nothing")
    with pytest.raises(MeasurementFailed, match=r"it saved nothing"):
        worktrees.run_interleaved(fake, [worktrees.Subject("cand", ())], 1, tmp_path / "ab", [])
    assert not stale.exists()


def test_run_over_a_plugin_whose_static_destructor_crashes_is_a_normal_run(build_dir, tmp_path):
    """Before, allocbench-run died by SIGSEGV after writing everything and `run` failed with 3,
    pointing at a .partial that did not exist."""
    plugin = build_dir / "tests" / "plugins" / "crash_at_exit.so"
    out = tmp_path / "r.json"
    done = subprocess.run([str(ROOT / "allocbench"), "run", "--build-dir", str(build_dir),
                           "--plugin", str(plugin), "--no-time", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert [(r["name"], r["alloc"]["bytes_per_op"]) for r in results.load(out)["results"]] == \
        [("process/three_blocks", 96)]
    assert "| `process/three_blocks` | 96 | 3 |" in out.with_suffix(".md").read_text()
    assert f"allocbench: results in {out}, report in {out.with_suffix('.md')}" in done.stderr
