"""The README's examples run as printed on real results: its allocbench.toml budgets, its plugin
project and runner line, and its sweep and bisect commands (on the generated libtrace).

Only the entry point's own path and the install prefix are put in for `./allocbench` and
`/opt/allocbench`; everything else is the README's text."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

import realistic_subject as real
from conftest import ROOT, count_only
from docs_pages import page

def blocks(name: str, language: str) -> list[str]:
    """The code blocks of a language on page `name` (docs_pages.py)."""
    return re.findall(rf"```{language}\n(.*?)```", page(name), re.S)


def marked(name: str, block: str) -> str:
    """The code block between <!-- block:begin --> and <!-- block:end --> on page `name`."""
    section = page(name).split(f"<!-- {block}:begin -->\n")[1].split(f"<!-- {block}:end -->")[0]
    return re.fullmatch(r"```\w*\n(.*?)```\n", section, re.S).group(1)


def commands(block: str) -> list[list[str]]:
    """Each line of a sh block as an argument list, comments dropped."""
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def entry(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    assert argv[0] == "./allocbench", argv
    return subprocess.run([str(ROOT / "allocbench"), *argv[1:]], cwd=cwd, capture_output=True,
                          text=True, timeout=900)


def test_the_budget_example_gates_real_results(runner, build_dir, tmp_path):
    (budgets,) = [b for b in blocks("gating", "toml") if "[[budget]]" in b]
    (tmp_path / "allocbench.toml").write_text(budgets)
    builtin = build_dir / "lib" / "allocbench" / "allocbench_builtin.so"
    fanout = "^trace_fanout/web_trace/children:1/share:0$"  # what the example's glob matches
    sides = []
    for side in ("base", "cand"):
        count_only(runner, builtin, tmp_path / f"{side}.json", "--filter", fanout)
        sides.append(f"{side}.json")
    done = subprocess.run([str(ROOT / "allocbench"), "compare", *sides], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Found 0 regressions" in done.stdout
    # The budget is applied: 64 B/op more than the base's fan-out is allowed, 65 is not.
    base = json.loads((tmp_path / "base.json").read_text())["results"][0]["alloc"]
    for extra, code in ((64, 0), (65, 1)):
        cand = json.loads((tmp_path / "cand.json").read_text())
        cand["results"][0]["alloc"]["bytes_per_op"] = base["bytes_per_op"] + extra
        (tmp_path / "grown.json").write_text(json.dumps(cand))
        done = subprocess.run([str(ROOT / "allocbench"), "compare", "base.json", "grown.json"],
                              cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == code, (extra, done.stdout, done.stderr)


def test_the_plugin_example_is_the_out_of_tree_project(prefix, tmp_path):
    (cmake,) = [b for b in blocks("scenarios", "cmake")
                if "allocbench_add_plugin(my_scenarios" in b]
    project = (ROOT / "tests" / "outoftree" / "CMakeLists.txt").read_text().splitlines()
    for line in cmake.splitlines():
        assert line.split("#")[0].rstrip() in project, line
    (run_line,) = [c for c in commands("\n".join(blocks("scenarios", "sh")))
                   if c[0].endswith("/bin/allocbench-run")]
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(ROOT / "tests" / "outoftree"), "-B", str(build),
                    "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}"],
                   check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    assert run_line[0] == "/opt/allocbench/bin/allocbench-run"
    done = subprocess.run([str(prefix / "bin" / "allocbench-run"), *run_line[1:], "--quiet"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "results.json").read_text())["results"]
    # format_tag.cc builds "http.method:GET": with its NUL, past the 15-character SSO buffer.
    by_name = {r["name"]: r["alloc"]["bytes_per_op"] for r in results}
    assert by_name["outoftree/format_tag"] == len("http.method:GET") + 1


@pytest.fixture(scope="module")
def libtrace(tmp_path_factory) -> real.Subject:
    return real.make_subject(tmp_path_factory.mktemp("readme"))


def test_libtraces_build_table_is_the_readmes(libtrace):
    assert marked("sweeps", "libtrace-toml") == real.BENCH_TOML
    assert (libtrace.repo / "allocbench.toml").read_text() == real.BENCH_TOML


def test_the_sweep_and_bisect_commands_run_as_printed(libtrace, runner, build_dir):
    if build_dir != ROOT / "build" / "release":
        pytest.skip("as printed, the commands use this checkout's build/release harness")
    sweep, bisect = commands(marked("sweeps", "sweep-commands"))
    cwd = libtrace.repo.parent / "allocbench"  # beside ../libtrace, as the README has it
    cwd.mkdir()

    done = entry(sweep, cwd)
    assert done.returncode == 0, done.stderr
    tagged = [c for c in libtrace.commits if c.tag]
    table = done.stdout.split("#### B/op")[1].split("####")[0]
    row = next(line for line in table.splitlines() if line.startswith(f"| `{real.LOG_LINE}`"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    expected = [c.expected()[real.LOG_LINE]["bytes_per_op"] for c in tagged]
    last = libtrace.commits[-1].expected()[real.LOG_LINE]["bytes_per_op"]
    assert [float(c) for c in cells[1:len(tagged) + 2]] == [*expected, last]

    done = entry(bisect, cwd)
    assert done.returncode == 0, done.stderr
    first, second = libtrace.two_step
    named = list(dict.fromkeys(re.findall(r"\b([0-9a-f]{40})\b", done.stdout)))
    assert [sha for sha in named if sha in (first.sha, second.sha)] == [first.sha, second.sha]
    assert "stored: " in done.stderr  # the ends came from the sweep's store
