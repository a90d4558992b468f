"""Sweeping a project as users have them (realistic_subject.py: a library whose CMake knows
nothing of allocbench and needs a configure option, a git submodule whose URL does not resolve,
a bench project beside it in today's checkout only): no wrapper project, no install step,
offline — and every allocation step found."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import sys
from pathlib import Path

import pytest

import realistic_subject as real
from allocbench import cli

def stored(path: Path) -> dict:
    """A store record as the file holds it (version 2: gzip-compressed JSON)."""
    return json.loads(gzip.decompress(path.read_bytes()))



def run_cli(argv: list[str]) -> tuple[int, str]:
    out, saved = io.StringIO(), sys.stdout
    sys.stdout = out
    try:
        return cli.main(argv), out.getvalue()
    finally:
        sys.stdout = saved


@pytest.fixture(scope="module")
def subject(tmp_path_factory) -> real.Subject:
    return real.make_subject(tmp_path_factory.mktemp("real"))


@pytest.fixture(scope="module")
def flags(subject, runner) -> list[str]:
    """What a user passes: the bench project, its target and plugin, the harness. No
    CMAKE_PREFIX_PATH, no allocbench install, nothing about the submodule."""
    return ["--repo", str(subject.repo), "--bench", str(subject.bench), "--target", real.TARGET,
            "--plugin-path", real.PLUGIN, "--runner", str(runner), "--machine", "m"]


@pytest.fixture(scope="module")
def swept(subject, flags, tmp_path_factory) -> tuple[Path, int, str]:
    store = tmp_path_factory.mktemp("store")
    code, out = run_cli(["sweep", "--tags", "v*", "--store", str(store), *flags, "--no-time"])
    return store, code, out


def values(store: Path, subject: real.Subject, revs: list[str]) -> dict:
    code, out = run_cli(["sweep-table", *revs, "--repo", str(subject.repo), "--store",
                         str(store), "--machine", "m", "--metric", "allocs_per_op",
                         "--format", "csv"])
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    return {(row[0], row[1]): [float(v) if v else None for v in row[2:-2]] for row in rows[3:]}


def test_tags_are_measured_offline_through_the_bench_project(subject, swept):
    store, code, out = swept
    assert code == 0, out
    tagged = [c for c in subject.commits if c.tag]
    assert len(tagged) >= 4
    found = values(store, subject, [c.tag for c in tagged])
    for instance in real.INSTANCES:
        for metric in ("bytes_per_op", "allocs_per_op"):
            assert found[(metric, instance)] == \
                [c.expected()[instance][metric] for c in tagged], (metric, instance)
    assert out.startswith("#### B/op — exact\n") and "#### allocs/op" not in out


def test_a_second_sweep_builds_nothing(subject, flags, swept, capfd):
    store, _, _ = swept
    capfd.readouterr()
    code, _ = run_cli(["sweep", "--tags", "v*", "--store", str(store), *flags, "--no-time"])
    err = capfd.readouterr().err
    assert code == 0
    progress = [line for line in err.splitlines() if line.startswith("allocbench: [")]
    assert progress and all(": stored" in line for line in progress), progress


def test_without_submodules_the_failure_says_what_is_missing(subject, flags, tmp_path):
    code, out = run_cli(["sweep", "v1.0", "--store", str(tmp_path), *flags, "--no-time",
                         "--submodules", "none"])
    assert code == 1
    note = next(line for line in out.splitlines() if line.startswith("- ✗"))
    assert "build failed: `CMake Error: " in note and real.SUBMODULE in note, note


def test_a_failed_configure_quotes_cmakes_message(subject, flags, tmp_path):
    code, out = run_cli(["sweep", "v1.0", "--store", str(tmp_path), *flags, "--no-time",
                         f"--cmake-arg=-D{real.BACKEND_OPTION}="])
    assert code == 1
    note = next(line for line in out.splitlines() if line.startswith("- ✗"))
    assert "build failed: `CMake Error: " in note and real.BACKEND_MESSAGE in note, note


def test_bisect_all_names_both_steps_of_the_two_step_change(subject, flags, swept, capsys):
    store, _, _ = swept
    first, second = subject.two_step
    points = subject.change_points(real.LOG_LINE, "allocs_per_op")
    good, bad = "v1.1", "v1.2"
    assert [c.index for c in points if subject.by_tag(good).index < c.index
            <= subject.by_tag(bad).index] == [first.index, second.index]
    code = cli.main(["bisect", real.LOG_LINE, "--good", good, "--bad", bad, "--metric",
                     "allocs_per_op", "--all", "--no-sites", "--store", str(store), *flags])
    out = capsys.readouterr().out
    assert code == 0, out
    named = re.findall(r"\b([0-9a-f]{40})\b", out)
    assert [sha for sha in dict.fromkeys(named) if sha in (first.sha, second.sha)] == \
        [first.sha, second.sha]
    before = subject.commits[first.index - 2].expected()[real.LOG_LINE]["allocs_per_op"]
    middle = first.expected()[real.LOG_LINE]["allocs_per_op"]
    after = second.expected()[real.LOG_LINE]["allocs_per_op"]
    assert f"allocs_per_op {before:g} → {middle:g}" in out
    assert f"allocs_per_op {middle:g} → {after:g}" in out


def test_records_name_the_bench_project_in_their_recipe(subject, swept):
    store, _, _ = swept
    record = stored(next(store.rglob("*.json.gz")))
    cmake = record["recipe_detail"]["build"]["cmake"]
    assert cmake["bench"]["path"] == str(subject.bench)
    assert re.fullmatch(r"[0-9a-f]{16}", cmake["bench"]["fingerprint"])


def test_the_readme_shows_this_bench_project():
    from docs_pages import page
    readme = page("sweeps")
    block = readme.split("<!-- bench-project:begin -->\n```cmake\n")[1].split("```\n")[0]
    assert block == real.BENCH_CMAKE
