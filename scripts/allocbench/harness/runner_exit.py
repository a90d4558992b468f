"""What an allocbench-run that did not end with one of its own exit codes (0, 1, 2, 3, 130) left
behind, said in one line: what ended it, and which of its results are there to read — the
complete results file, FILE.partial with the instances measured before it died, or nothing."""

from __future__ import annotations

import signal
from pathlib import Path

import subprocess

from allocbench.base import results
from allocbench.base.errors import MeasurementFailed, UserError

OWN_CODES = (0, 1, 2, 3, 130)
Identity = tuple[int, int] | None
Snapshot = tuple[Identity, Identity]


def identity(path: Path) -> Identity:
    """Which file is at `path` (inode, modification time), so that a file left by an earlier
    run is never taken for this run's."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns


def partial_of(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def snapshot(out: Path) -> Snapshot:
    """The files a run that writes `out` may leave, as they are before it starts."""
    return identity(out), identity(partial_of(out))


def ending(code: int) -> str:
    """'was killed by SIGSEGV', or 'ended with the unexpected exit code 7'."""
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"ended with the unexpected exit code {code}"


def check(done: subprocess.CompletedProcess[str], runner: Path, what: str, out: Path,
          before: Snapshot) -> None:
    """Raises what a run of `runner` (`what` it measured, into `out`) that ended `done` means
    for its caller: KeyboardInterrupt (130), UserError (2: it refused its input),
    MeasurementFailed (3, or an ending not its own); 0 and 1 (an instance failed, recorded in
    its results) return."""
    if done.returncode == 130:
        raise KeyboardInterrupt
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    if done.returncode == 2:  # allocbench-run refused its input: a --filter, a plugin
        raise UserError(f"{runner} refused {what}: "
                        f"{last.removeprefix('allocbench-run: error: ')}")
    if done.returncode == 3:  # its own failure, which it printed
        raise MeasurementFailed(f"{runner} failed on {what} (exit code 3): {last}")
    if done.returncode not in OWN_CODES:
        said = f" (its last output: {last})" if done.stderr.strip() else ""
        raise MeasurementFailed(f"{runner} {ending(done.returncode)} on {what}{said}; "
                                f"{left_behind(out, before)}")


def left_behind(out: Path, before: Snapshot) -> str:
    """Which results the run that was to write `out` left (`before`: snapshot() at its start)."""
    partial = partial_of(out)
    if identity(out) not in (None, before[0]):
        return (f"it had written {out} whole before it ended (something in allocbench-run's own "
                "process failed after the measurement: a thread a plugin started?)")
    if identity(partial) not in (None, before[1]):
        try:
            found = len(results.load(partial)["results"])
        except UserError as e:
            return f"{partial} is left, but cannot be read: {e}"
        return f"the {found} instance(s) it measured before are in {partial}"
    return (f"it saved nothing (no {partial.name} of this run): it died before it measured an "
            "instance")
