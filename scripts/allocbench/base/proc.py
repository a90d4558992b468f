"""Child processes (allocbench-run, builds) that never outlive allocbench.

A child is told to receive SIGTERM when allocbench dies, however it dies (PR_SET_PDEATHSIG),
and when allocbench is interrupted or a time limit passes it gets SIGTERM first — so that
allocbench-run saves what it measured — and SIGKILL only if it does not end soon after.
"""

from __future__ import annotations

import ctypes
import signal
import subprocess
from typing import Any

PR_SET_PDEATHSIG = 1
GRACE_SECONDS = 10.0
_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _stop(child: subprocess.Popen) -> None:
    child.terminate()
    try:
        child.wait(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def run(command: list[str], *, timeout: float | None = None, **popen: Any
        ) -> subprocess.CompletedProcess:
    """subprocess.run(command, check=False, **popen), with the child stopped as above on a
    time-out (TimeoutExpired, with the output so far) or an interrupt (re-raised)."""
    if popen.pop("capture_output", False):
        popen.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with subprocess.Popen(command, preexec_fn=_die_with_parent, **popen) as child:
        try:
            stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(child)
            stdout, stderr = child.communicate()
            raise subprocess.TimeoutExpired(command, timeout, stdout, stderr) from None
        except BaseException:
            _stop(child)
            raise
    return subprocess.CompletedProcess(command, child.returncode, stdout, stderr)
