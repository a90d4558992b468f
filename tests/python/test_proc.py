"""proc.run: a child is stopped with SIGTERM and, after the grace period the README gives,
SIGKILL; and it dies with allocbench."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import pytest

from allocbench.base import proc
from conftest import ROOT
from docs_pages import folded


def test_the_readmes_grace_period_is_the_one_used():
    text = folded("reliability")   # line breaks folded
    found = re.search(r"and `SIGKILL` (\d+) s later if it has not ended", text)
    assert found and float(found[1]) == proc.GRACE_SECONDS


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace_period(monkeypatch):
    monkeypatch.setattr(proc, "GRACE_SECONDS", 0.5)
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as stopped:
        proc.run(["sh", "-c", "trap '' TERM; echo ready; exec sleep 30"], timeout=0.2,
                 capture_output=True)
    # Its output so far is kept; it lived on through the grace period, then SIGKILL.
    assert stopped.value.output == b"ready\n"
    assert time.monotonic() - started >= 0.2 + 0.5


def test_an_interrupt_stops_the_child_and_is_raised_again(monkeypatch):
    """Ctrl-C during the child: SIGTERM to it, and the KeyboardInterrupt goes on up."""
    children = []
    real = subprocess.Popen

    def popen(*args, **kwargs):
        children.append(real(*args, **kwargs))
        signal.setitimer(signal.ITIMER_REAL, 0.2)   # "Ctrl-C" while communicate() waits
        return children[-1]

    def interrupt(*_):
        raise KeyboardInterrupt
    monkeypatch.setattr(subprocess, "Popen", popen)
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            proc.run(["sleep", "30"])
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert children[0].returncode == -signal.SIGTERM


def test_a_child_dies_with_its_parent(tmp_path):
    """A parent killed with SIGKILL cannot stop its child itself; the kernel sends SIGTERM."""
    pid_file = tmp_path / "pid"
    parent = subprocess.Popen([sys.executable, "-c", (
        "import sys; sys.path.insert(0, sys.argv[1]); from allocbench.base import proc; "
        "proc.run(['sh', '-c', 'echo $$ > ' + sys.argv[2] + '; exec sleep 30'])"),
        str(ROOT / "scripts"), str(pid_file)])
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().endswith("\n")):
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.05)
    child = int(pid_file.read_text())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 30
    while _alive(child):
        assert time.monotonic() < deadline, f"process {child} outlived its parent"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
