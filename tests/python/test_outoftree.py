"""A plugin built out of tree with find_package(allocbench) against the installed package."""

from __future__ import annotations

import json
import subprocess

from conftest import ROOT, run_runner


def sh(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_installed_package_builds_and_runs_a_user_plugin(build_dir, tmp_path):
    prefix = tmp_path / "prefix"
    sh("cmake", "--install", str(build_dir), "--prefix", str(prefix))
    assert (prefix / "include" / "allocbench" / "scenario.h").exists()
    # The user's tree knows nothing of the source tree: only the installed prefix.
    user_build = tmp_path / "user-build"
    sh("cmake", "-S", str(ROOT / "tests" / "outoftree"), "-B", str(user_build),
       "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}")
    sh("cmake", "--build", str(user_build))
    plugin = user_build / "my_scenarios.so"
    assert plugin.exists()

    runner = prefix / "bin" / "allocbench-run"
    out = tmp_path / "r.json"
    done = run_runner(runner, "--plugin", str(plugin), "--no-time", "--out", str(out))
    assert done.returncode == 0, done.stderr
    alloc = {r["name"]: r["alloc"] for r in json.loads(out.read_text())["results"]}
    assert alloc["outoftree/format_tag"]["bytes_per_op"] == 16
    assert alloc["outoftree/format_tag"]["allocs_per_op"] == 1
    assert alloc["outoftree/tag_list"]["bytes_per_op"] == 70
    assert alloc["outoftree/tag_list"]["allocs_per_op"] == 4
    # The installed runner finds the installed built-in plugin by itself.
    done = run_runner(runner, "--list")
    assert done.returncode == 0 and "span_creation/bare_start_span" in done.stdout
