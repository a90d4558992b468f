"""The `allocbench` entry point: interpreter choice, `run` end to end, errors."""

from __future__ import annotations

import json
import os
import subprocess

from conftest import ROOT

ENTRY = ROOT / "allocbench"


def entry(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(ENTRY), *args], capture_output=True, text=True, env=env,
                          timeout=600)


def test_picks_debians_python_whatever_is_first_on_path(tmp_path):
    # A python3 first on PATH that would fail if used.
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho wrong interpreter >&2\nexit 99\n")
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}")
    done = entry("--help", env=env)
    assert done.returncode == 0, done.stderr
    assert "run" in done.stdout and "test" in done.stdout


def test_missing_interpreter_is_a_clear_error():
    env = dict(os.environ, ALLOCBENCH_PYTHON="/nonexistent/python3")
    done = entry("--help", env=env)
    assert done.returncode == 2
    assert done.stderr.strip() == ("allocbench: error: /nonexistent/python3 not found; on "
                                   "Debian/Ubuntu: apt-get install python3")


def test_run_writes_results_and_report(build_dir, tmp_path):
    out = tmp_path / "r.json"
    done = entry("run", "--build-dir", str(build_dir), "--filter", "^naming_schema/protocol",
                 "--no-time", "--out", str(out))
    assert done.returncode == 0, done.stderr
    # What it builds (if needed), said by name before the build's own output.
    assert done.stderr.startswith(
        f"allocbench: building allocbench-run, allocbench_builtin in {build_dir.name}\n")
    doc = json.loads(out.read_text())
    by_name = {r["name"]: r["alloc"] for r in doc["results"]}
    assert by_name["naming_schema/protocol_names/schema:0/precomputed:1"]["bytes_per_op"] == 0
    assert by_name["naming_schema/protocol_names/schema:0/precomputed:0"]["bytes_per_op"] > 0
    assert doc["context"]["revision"]["sha"]  # this checkout's revision
    report = out.with_suffix(".md").read_text()
    assert "| `naming_schema/protocol_names/schema:1/precomputed:1` | 0 | 0 | - |" in report
    assert "B/op" in done.stdout  # allocbench-run's table
    # The page next to them, one file: the same table, and its pictures inside it.
    html = out.with_suffix(".html")
    assert f"report in {out.with_suffix('.md')} and {html}" in done.stderr
    page = html.read_text()
    assert ("<td><code>naming_schema/protocol_names/schema:1/precomputed:1</code></td>\n"
            '<td align="right">0</td>\n<td align="right">0</td>') in page
    assert page.count('<img src="data:image/svg+xml;base64,') >= 1
    assert 'href="' not in page and '<script src' not in page


def test_run_rejects_an_unknown_allocator():
    done = entry("run", "--allocator", "hoard")
    assert done.returncode == 2
    assert "invalid choice: 'hoard'" in done.stderr
