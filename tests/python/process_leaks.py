"""No test leaves a process behind: the suite's process is a child subreaper, so whatever a test
starts — the CLI, allocbench-run, an instance, a daemon the instance forked and orphaned — is
either gone when the test ends or is one of this process's children. conftest.py checks that
after every test, names what is left by its command line, and kills it."""

from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    """Orphans of every descendant are reparented to this process instead of to init."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:   # the process is gone
        return ""


def _state(pid: int) -> str:
    stat = _read(Path(f"/proc/{pid}/stat"))
    return stat[stat.rfind(")") + 2:][:1] if stat else ""


def command_line(pid: int) -> str:
    raw = _read(Path(f"/proc/{pid}/cmdline"))
    return " ".join(raw.rstrip("\0").split("\0")) or f"[{_read(Path(f'/proc/{pid}/comm')).strip()}]"


def children(pid: int | None = None) -> set[int]:
    """The live (not zombie) children of `pid` (default: this process), of all its threads."""
    pid = os.getpid() if pid is None else pid
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        found.update(int(p) for p in _read(task / "children").split())
    return {p for p in found if _state(p) not in ("", "Z")}


def left_behind(before: set[int], grace: float = 2.0) -> dict[int, str]:
    """The children that were not there `before` and are still running after `grace` seconds
    (a process in the middle of exiting gets that long), with their command lines."""
    deadline = time.monotonic() + grace
    while True:
        new = children() - before
        if not new or time.monotonic() >= deadline:
            return {pid: command_line(pid) for pid in sorted(new)}
        time.sleep(0.05)


def kill_tree(pid: int) -> None:
    """SIGKILL to `pid` and its descendants (children first found, then killed top-down), and
    reaps `pid`, which is this process's child."""
    tree = [pid]
    for p in tree:
        tree.extend(children(p))
    for p in tree:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
