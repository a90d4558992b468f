"""The paired time pass from the Python side: allocbench-run --against, base build against
candidate build in one run (docs/paired.md), its pairs written to one file that
gate/paired_gate.py judges. Shared by ab and bench/paired_gate.py."""

from __future__ import annotations

from pathlib import Path

from allocbench.base import proc
from allocbench.harness import runner_exit
from allocbench.history.worktrees import announce

BUDGET_S = 1.0   # allocbench-run's --paired-time default


def options(*, filter: str | None, instance_timeout: str | None,
            paired_time: float | None) -> list[str]:
    out = []
    for flag, value in (("--filter", filter), ("--instance-timeout", instance_timeout),
                        ("--paired-time", paired_time)):
        if value is not None:
            out += [flag, str(value)]
    return out


def run(runner: Path, base: Path, cand: Path, out: Path, options: list[str]) -> Path:
    """Runs the pass into `out` and returns it; an instance that failed is recorded there.
    KeyboardInterrupt, UserError or MeasurementFailed as runner_exit.check says."""
    out.unlink(missing_ok=True)
    before = runner_exit.snapshot(out)
    announce("paired time pass: base and candidate together")
    done = proc.run([str(runner), "--quiet", "--out", str(out), "--plugin", str(base),
                     "--against", str(cand), *options],
                    capture_output=True, text=True, errors="replace")
    runner_exit.check(done, runner, "the paired time pass", out, before)
    return out
