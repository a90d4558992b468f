"""Shared fixtures: the build under test (ALLOCBENCH_BUILD_DIR, default build/release)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import process_leaks

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))


def pytest_configure(config) -> None:
    if not config.pluginmanager.hasplugin("timeout"):
        raise pytest.UsageError(
            "the pytest-timeout plugin is missing, and without it a hang is a stuck run instead "
            "of a failure: apt-get install python3-pytest-timeout (./allocbench test installs it)")
    process_leaks.become_subreaper()


@pytest.fixture(autouse=True)
def no_process_left_behind():
    """Fails the test that leaves a process running (after the fixtures it uses are torn down;
    module- and session-scoped ones are started before this looks), and kills what it left."""
    before = process_leaks.children()
    yield
    left = process_leaks.left_behind(before)
    for pid in left:
        process_leaks.kill_tree(pid)
    assert not left, "the test left processes running (killed now): " + "; ".join(
        f"pid {pid}: {command}" for pid, command in left.items())


@pytest.fixture(scope="session")
def build_dir() -> Path:
    build = Path(os.environ.get("ALLOCBENCH_BUILD_DIR", ROOT / "build" / "release"))
    if not (build / "bin" / "allocbench-run").exists():
        pytest.fail(f"no allocbench-run in {build}: run ./allocbench test (it builds first)")
    return build


@pytest.fixture(scope="session")
def runner(build_dir: Path) -> Path:
    return build_dir / "bin" / "allocbench-run"


@pytest.fixture(scope="session")
def ground_truth(build_dir: Path) -> Path:
    return build_dir / "tests" / "plugins" / "ground_truth.so"


@pytest.fixture(scope="session")
def prefix(build_dir, tmp_path_factory) -> Path:
    """allocbench installed (cmake --install) as a user's project finds it."""
    prefix = tmp_path_factory.mktemp("prefix")
    done = subprocess.run(["cmake", "--install", str(build_dir), "--prefix", str(prefix)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return prefix


def run_runner(runner: Path, *args: str, env: dict | None = None, timeout: float = 120,
               sighup: signal.Handlers = signal.SIG_DFL) -> subprocess.CompletedProcess:
    """The runner as a terminal starts it: SIGHUP by default, even when these tests run under
    nohup (the runner keeps an ignored SIGHUP ignored; `sighup=signal.SIG_IGN` tests that)."""
    return subprocess.run([str(runner), *args], capture_output=True, text=True, timeout=timeout,
                          env=env, preexec_fn=lambda: signal.signal(signal.SIGHUP, sighup))


def count_only(runner: Path, plugin: Path, out: Path, *args: str) -> dict:
    """Runs the count pass only and returns {instance name: alloc section}."""
    done = run_runner(runner, "--plugin", str(plugin), "--no-time", "--quiet", "--out", str(out),
                      *args)
    assert done.returncode == 0, done.stderr
    return {r["name"]: r["alloc"] for r in json.loads(out.read_text())["results"]}


# The synthetic history (synthetic_history.py) and how sweeps build it: one per test module.
@pytest.fixture(scope="module")
def tracer(tmp_path_factory):
    import synthetic_history
    return synthetic_history.make_history(tmp_path_factory.mktemp("history"))


@pytest.fixture(scope="module")
def build_flags(tracer, prefix, runner) -> list[str]:
    import synthetic_history
    return ["--repo", str(tracer.repo), f"--cmake-arg=-DCMAKE_PREFIX_PATH={prefix}",
            "--target", synthetic_history.TARGET, "--plugin-path", synthetic_history.PLUGIN,
            "--runner", str(runner)]
