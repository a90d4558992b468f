"""The parts of sweep and bisect that need no build: the search, shards, the [build] table,
grafts, store records and the table's rendering (on hand-made records with known values; one
test holds their field list against the built runner's)."""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import subprocess
import types
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import pytest

from allocbench.base import packages
from allocbench.base.errors import UserError
from allocbench.harness import runners
from allocbench.history import bisection, buildconfig, buildspec, graft, revision, selection, store
from allocbench.history import sweep, sweep_table, worktrees
from allocbench.sites import per_op, profile
from allocbench.commands import bisect


def git(repo: Path, *args: str) -> str:
    """git in `repo` with an identity of its own; its output, stripped; a failure fails."""
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                           *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("count", range(1, 23))
def test_search_names_every_change_within_log2_probes(count):
    for first in range(count):
        probes = []

        def differs(i, first=first):
            probes.append(i)
            return i >= first
        found = bisection.search(count, differs)
        assert found.exact and found.high == first
        assert len(probes) <= math.ceil(math.log2(count)), (first, probes)


@pytest.mark.parametrize("count, first, broken", [(11, 5, {5}), (11, 6, {5}), (11, 2, {5}),
                                                  (12, 7, {5, 6}), (4, 3, {1, 2})])
def test_search_skips_what_cannot_be_measured(count, first, broken):
    probes = []

    def differs(i):
        probes.append(i)
        return None if i in broken else i >= first
    found = bisection.search(count, differs)
    assert len(probes) <= math.ceil(math.log2(count)) + len(broken)
    assert first in found.suspects()
    if found.exact:
        assert found.high == first
    else:  # only skipped commits stand between the last good and the first changed one
        assert set(range(found.low + 1, found.high)) <= broken


def test_shards_are_disjoint_and_cover_the_sweep():
    shas = [f"{i:040x}" for i in range(11)]
    parts = [sweep.shard(shas, (i, 3)) for i in (1, 2, 3)]
    assert sorted(sum(parts, [])) == shas
    assert parts[0] == [shas[0], shas[3], shas[6], shas[9]]
    for text in ("0/3", "4/3", "1-3", "a/b", "2"):
        with pytest.raises(UserError, match="write it as I/N"):
            sweep.parse_shard(text)


GOOD_BUILD = {"command": ["make", "-C", "{src}", "OUT={build}", "-j{jobs}"],
              "plugin": "{build}/libs.so"}


@pytest.mark.parametrize("table, message", [
    ({"command": ["make", "-C", "{src}"], "plugin": "{build}/s.so"},
     "'build.command' does not use {build}"),
    ({"command": ["make", "OUT={build}"], "plugin": "{build}/s.so"},
     "'build.command' does not use {src}"),
    ({"command": ["make", "{src}", "{build}", "{revision}"], "plugin": "{build}/s.so"},
     "'build.command[3]' uses unknown placeholder {revision}"),
    ({"command": ["make", "{src", "{build}"], "plugin": "{build}/s.so"},
     "'build.command[1]' is not a valid template"),
    ({"command": ["make", "{src}", "{build}"], "plugin": "out/s.so"},
     "'build.plugin' must start from {build} or {src}"),
    ({"command": ["make", "{src}", "{build}"]}, "[build] has no 'plugin'"),
    ({"command": [], "plugin": "{build}/s.so"}, "'build.command' must be an array of strings"),
    ({"command": "make '{src}", "plugin": "{build}/s.so"}, "cannot be split into arguments"),
    ({**GOOD_BUILD, "cwd": "."}, "unknown key 'build.cwd'"),
])
def test_build_table_errors_name_the_field_and_the_fix(table, message):
    with pytest.raises(UserError) as e:
        buildconfig.parse("allocbench.toml", table)
    assert str(e.value).startswith("allocbench.toml: ") and message in str(e.value)


def test_build_command_runs_without_a_shell(tmp_path):
    spec = buildconfig.parse("cfg", {"command": "sh -c 'echo \"$1\" > \"$2\"/out.txt' x {rev} "
                                              "{build} {src}", "plugin": "{build}/out.txt"})
    assert spec.command == ("sh", "-c", 'echo "$1" > "$2"/out.txt', "x", "{rev}", "{build}",
                            "{src}")
    sha = "ab" * 20
    plugin = spec.build(tmp_path, tmp_path / "b", sha)
    assert plugin.read_text() == sha + "\n"
    failing = buildconfig.parse("cfg", {"command": ["false", "{src}", "{build}"],
                                      "plugin": "{build}/x.so"})
    with pytest.raises(buildspec.StepFailed, match="exit code 1"):
        failing.build(tmp_path, tmp_path / "b", sha)


@pytest.mark.parametrize("text, message", [
    ("bench:../outside", "must be a path inside the repository"),
    ("bench:/abs", "must be a path inside the repository"),
    ("bench:.git/hooks", "must be a path inside the repository"),
    ("missing", "does not exist"),
])
def test_graft_destinations_stay_inside_the_worktree(tmp_path, monkeypatch, text, message):
    (tmp_path / "bench").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match=message):
        graft.parse(text, tmp_path)


def test_graft_outside_the_repository_needs_a_destination(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "repo").mkdir()
    with pytest.raises(UserError, match="give it: --graft PATH:DEST"):
        graft.parse(str(tmp_path / "elsewhere"), tmp_path / "repo")
    assert graft.parse(f"{tmp_path / 'elsewhere'}:bench", tmp_path / "repo").dest == "bench"


def results_doc(values: dict[str, float], ns: float = 10.0) -> dict:
    fields = [{"section": "alloc", "key": "bytes_per_op", "column": "B/op", "unit": "B",
               "gate": "exact"},
              {"section": "time", "key": "ns_per_op", "column": "ns/op", "unit": "ns",
               "gate": "time"}]
    context = {"count": {"warmup_ops": 100, "window_ops": 100},
               "time": {"repetitions": 3, "min_time_s": 0.01}}
    return {"schema_version": 1, "context": context, "fields": fields, "complete": True,
            "results": [{"name": n, "scenario": n, "args": {}, "threads": 1,
                         "allocator": "glibc", "alloc": {"bytes_per_op": v},
                         "time": {"ns_per_op": ns}} for n, v in values.items()]}


def record(sha: str, values: dict[str, float] | None, status: str = "ok", **extra) -> dict:
    return {"store_version": 1, "sha": sha, "label": extra.pop("label", sha[:10]),
            "subject": extra.pop("subject", "s"), "machine": extra.pop("machine", "m1"), "allocator": "system",
            "recipe": "0" * 16, "status": status, "time_measured": True,
            "results": results_doc(values) if values is not None else None, **extra}


def test_table_marks_failures_absent_scenarios_and_partial_deltas():
    shas = [c * 40 for c in "abcd"]
    columns = [
        sweep_table.Column(shas[0], "v1", record(shas[0], {"s/a": 64}, label="v1")),
        sweep_table.Column(shas[1], "v2", record(shas[1], {"s/a": 96, "s/b": 48},
                                                 label="v2")),
        sweep_table.Column(shas[2], "cccccccccc", record(
            shas[2], None, "build_failed", log_tail="make: x\nspan.cc:3:1: error: oops\n"
            "make: *** Error 2", log="/l/c.log")),
        sweep_table.Column(shas[3], "v3", None),
    ]
    text = sweep_table.markdown(columns, ["bytes_per_op"])
    assert text.splitlines()[:6] == [
        "#### B/op — exact", "",
        "| scenario | v1 | v2 | cccccccccc | v3 | Δ v1 → v3 | Δ % |",
        "|---|---:|---:|---:|---:|---:|---:|",
        "| `s/a` | 64 | 96 | ✗ | · | +32 ¹ | +50.0% |",
        "| `s/b` | – | 48 | ✗ | · |  |  |"]
    assert "- ✗ `cccccccccc` build failed: `span.cc:3:1: error: oops` — log: /l/c.log" in text
    assert "- · `v3` (dddddddddd): not measured yet" in text
    assert "#### ns/op — directional only" in text
    changed = sweep_table.markdown(columns, ["bytes_per_op"], changed_only=True).splitlines()
    assert changed[0] == "_1 of 2 scenarios have the same bytes_per_op in every revision and " \
        "are not shown._"
    assert [line for line in changed if line.startswith("| `")][:1] == [
        "| `s/a` | 64 | 96 | ✗ | · | +32 ¹ | +50.0% |"]
    assert not any(line.startswith("| `s/b`") for line in changed)
    csv_lines = sweep_table.csv_text(columns, ["bytes_per_op"]).splitlines()
    assert csv_lines[2] == "status,,ok,ok,build_failed,not_measured,,"
    assert "bytes_per_op,s/a,64,96,,,32,50.00" in csv_lines


def test_store_prefers_measurements_and_names_broken_records(tmp_path):
    a, b = store.Store(tmp_path / "a"), store.Store(tmp_path / "b")
    sha = "e" * 40
    a.put(record(sha, None, "build_failed", log_tail="", log="/l/e.log",
                 recorded="2026-01-02"))
    b.put(record(sha, {"s/a": 1}, recorded="2026-01-01"))
    assert store.merge(a, [b]) == (1, 0)
    assert a.get("m1", "system", sha)["status"] == "ok"
    assert store.merge(a, [b]) == (0, 1)
    path = a.path("m1", "system", sha, "0" * 16)
    assert path.name.endswith(".json.gz")   # version 2: gzip-compressed JSON
    stored = json.loads(gzip.decompress(path.read_bytes()))
    path.write_bytes(gzip.compress(json.dumps({**stored, "status": "fine"}).encode()))
    with pytest.raises(UserError, match=f"{path}: field 'status' is 'fine'.*delete the file"):
        a.get("m1", "system", sha)
    path.write_bytes(gzip.compress(b"{"))
    with pytest.raises(UserError, match=f"{path}: not valid JSON"):
        list(a.records())
    path.write_text(json.dumps(stored))   # plain JSON under the name of a compressed record
    with pytest.raises(UserError, match=f"{path}: not a gzip-compressed record"):
        list(a.records())
    with pytest.raises(UserError, match="no such store"):
        store.merge(a, [store.Store(tmp_path / "nope")])


def test_the_newer_of_two_records_within_one_second_is_shown(tmp_path):
    """Records of one revision by two recipes, measured in the same second: the later one,
    to the microsecond, is shown; a whole-second record of an older allocbench sorts first."""
    found = store.Store(tmp_path)
    sha = "d" * 40
    for recipe, recorded in (("1" * 16, "2026-12-01T10:00:00.900000+00:00"),
                             ("2" * 16, "2026-12-01T10:00:00.000001+00:00"),
                             ("3" * 16, "2026-12-01T10:00:00+00:00")):
        found.put({**record(sha, {"s/a": 1}), "recipe": recipe, "recorded": recorded})
    assert found.get("m1", "system", sha)["recipe"] == "1" * 16


def test_a_record_from_another_machine_serves_the_table(tmp_path):
    found = store.Store(tmp_path)
    sha = "f" * 40
    found.put(record(sha, {"s/a": 7}, machine="ci-2"))
    assert found.find("system", sha, "laptop")["machine"] == "ci-2"
    with pytest.raises(UserError, match="not usable as a folder name"):
        store.machine_id("../x")


def test_graft_touches_only_what_differs_and_restores_the_commit(tmp_path):
    repo = tmp_path / "repo"
    (repo / "bench").mkdir(parents=True)
    for name, text in (("same.cc", "same\n"), ("old.cc", "old\n"), ("gone.cc", "gone\n")):
        (repo / "bench" / name).write_text(text)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "old")
    today = tmp_path / "today"
    today.mkdir()
    (today / "same.cc").write_text("same\n")
    (today / "old.cc").write_text("new\n")
    (today / "added.cc").write_text("added\n")
    bench = repo / "bench"
    untouched = (bench / "same.cc").stat().st_mtime_ns

    grafts = [graft.parse(f"{today}:bench", repo)]
    graft.apply(repo, grafts)
    assert sorted(p.name for p in bench.iterdir()) == ["added.cc", "old.cc", "same.cc"]
    assert (bench / "old.cc").read_text() == "new\n"
    assert (bench / "same.cc").stat().st_mtime_ns == untouched  # no needless rebuild
    changed = (bench / "old.cc").stat().st_mtime_ns
    graft.apply(repo, grafts)  # the same graft again: nothing is written
    assert (bench / "old.cc").stat().st_mtime_ns == changed

    graft.apply(repo, [])  # back to the commit as it is
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert (bench / "old.cc").read_text() == "old\n"

    (bench / "same.cc").write_text("my experiment\n")
    with pytest.raises(UserError, match=r"has changes allocbench did not make \(bench/same.cc\)"):
        graft.apply(repo, grafts)


def test_bisect_names_the_suspects_when_skips_hide_the_change(capsys):
    from allocbench.commands import bisect
    shas = [c * 40 for c in "abc"]
    probed = [record(shas[0], {"s/a": 64}, subject="tidy"),
              record(shas[1], None, "build_failed", subject="refactor",
                     log_tail="span.cc:9:1: error: expected ';'"),
              record(shas[2], {"s/a": 96}, subject="fix the build")]
    found = bisection.Search(low=0, high=2, skipped=[1])
    bisect._report(found, probed, "s/a", "bytes_per_op", "9" * 40, 64)
    assert capsys.readouterr().out.splitlines() == [
        "the first change is one of these 2 commits; the skipped ones hide which:",
        "    bbbbbbbbbb (skipped, build failed: span.cc:9:1: error: expected ';') refactor",
        "    cccccccccc (changed) fix the build",
        "skipped bbbbbbbbbb: build failed: span.cc:9:1: error: expected ';'"]
    bisect._report(bisection.Search(low=-1, high=0), probed[2:], "s/a", "bytes_per_op",
                   "9" * 40, 64)
    assert capsys.readouterr().out.splitlines() == [
        f"first change: {shas[2]}", "    fix the build",
        "    bytes_per_op 64 → 96 (+32, +50.0%); its parent 9999999999 has 64"]


def test_plot_draws_a_line_per_scenario_with_failed_revisions_marked(tmp_path):
    import xml.etree.ElementTree as ElementTree
    from allocbench.history import sweep_plot
    shas = [c * 40 for c in "abc"]
    columns = [sweep_table.Column(shas[0], "v1", record(shas[0], {"s/a": 64, "s/b": 8})),
               sweep_table.Column(shas[1], "cccccccccc", record(shas[1], None, "timeout",
                                                                log_tail="")),
               sweep_table.Column(shas[2], "v2", record(shas[2], {"s/a": 96, "s/b": 8}))]
    path = tmp_path / "curve.svg"
    sweep_plot.plot(columns, ["bytes_per_op"], path)
    texts = {t.text for t in ElementTree.parse(path).iter() if t.text and t.text.strip()}
    assert {"s/a", "s/b", "v1", "cccccccccc ✗", "v2", "B/op (exact)"} <= texts
    sweep_plot.plot(columns, ["bytes_per_op"], path, changed_only=True)
    texts = {t.text for t in ElementTree.parse(path).iter() if t.text}
    assert "s/a" in texts and "s/b" not in texts
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curve.svg"]  # no temporary left
    with pytest.raises(UserError, match="name the picture .svg, .png or .pdf"):
        sweep_plot.plot(columns, ["bytes_per_op"], tmp_path / "curve.jpg")


# --- the sweep table: headings, marks, Δ columns, --metric ------------------------------------

# As harness/src/fields.h has them: test_fallback_and_test_fields_are_the_runners checks each
# against the field list allocbench-run writes, so these hand-made records cannot drift from it.
FIELDS = [
    {"section": "alloc", "key": "bytes_per_op", "column": "B/op", "unit": "B", "gate": "exact"},
    {"section": "alloc", "key": "allocs_per_op", "column": "allocs/op", "unit": "allocs",
     "gate": "exact"},
    {"section": "alloc", "key": "usable_bytes_per_op", "column": None, "unit": "B",
     "gate": "info"},
    {"section": "alloc", "key": "peak_live_bytes", "column": None, "unit": "B", "gate": "info"},
    {"section": "time", "key": "ns_per_op", "column": "ns/op", "unit": "ns", "gate": "time"}]
RECIPE = "0123456789abcdef"
A, B, C, D = (c * 40 for c in "abcd")


def alloc(bytes_per_op: float, allocs_per_op: float, usable: float, peak: float) -> dict:
    return {"bytes_per_op": bytes_per_op, "allocs_per_op": allocs_per_op,
            "usable_bytes_per_op": usable, "peak_live_bytes": peak}


def measured(sha: str, label: str, instances: dict[str, dict], ns: float | None = 10.0
             ) -> sweep_table.Column:
    """A revision that measured `instances` ({name: alloc section}); ns None: with --no-time."""
    context = {"count": {"warmup_ops": 100, "window_ops": 100},
               "time": None if ns is None else {"repetitions": 3, "min_time_s": 0.01}}
    doc = {"schema_version": 1, "context": context, "fields": FIELDS, "complete": True,
           "results": [{"name": n, "scenario": n, "args": {}, "threads": 1,
                        "allocator": "glibc", "alloc": a,
                        "time": None if ns is None else {"ns_per_op": ns}}
                       for n, a in instances.items()]}
    return sweep_table.Column(sha, label, {
        "store_version": 1, "sha": sha, "label": label, "subject": "s", "machine": "m1",
        "allocator": "system", "recipe": RECIPE, "status": "ok",
        "time_measured": ns is not None, "results": doc})


def build_failed(sha: str) -> sweep_table.Column:
    return sweep_table.Column(sha, sha[:10], {
        "store_version": 1, "sha": sha, "label": sha[:10], "subject": "s", "machine": "m1",
        "allocator": "system", "recipe": RECIPE, "status": "build_failed",
        "time_measured": False, "results": None, "log": "/l/c.log",
        "log_tail": "span.cc:3:1: error: oops"})


def test_metric_adds_a_table_after_bytes_per_op(tmp_path):
    from allocbench.commands import sweep_table as command
    assert sweep_table.metrics_of(None) == ["bytes_per_op"]
    assert sweep_table.metrics_of(["allocs_per_op"]) == ["bytes_per_op", "allocs_per_op"]
    assert sweep_table.metrics_of(["allocs_per_op", "bytes_per_op", "allocs_per_op"]) == [
        "bytes_per_op", "allocs_per_op"]
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "one"], ["tag", "v1"]):
        git(repo, *args)
    sha = git(repo, "rev-parse", "HEAD")
    store.Store(tmp_path / "store").put(measured(sha, "v1", {"s/a": alloc(64, 2, 80, 256)})
                                        .record)
    out = tmp_path / "table.md"
    assert command.run(names=["v1"], repo=repo, store=tmp_path / "store", machine="m1",
                       metric=["allocs_per_op"], out=out) == 0
    assert out.read_text().splitlines()[:11] == [
        "#### B/op — exact", "", "| scenario | v1 |", "|---|---:|", "| `s/a` | 64 |", "",
        "#### allocs/op — exact", "", "| scenario | v1 |", "|---|---:|", "| `s/a` | 2 |"]


def test_headings_claim_exact_only_for_exact_gates():
    columns = [measured(A, "v1", {"s/a": alloc(64, 2, 80, 256)}),
               measured(B, "v2", {"s/a": alloc(96, 3, 112, 384), "s/b": alloc(48, 1, 48, 48)})]
    lines = sweep_table.markdown(columns, ["bytes_per_op", "usable_bytes_per_op",
                                           "peak_live_bytes"]).splitlines()
    assert [line for line in lines if line.startswith("####")] == [
        "#### B/op — exact", "#### usable_bytes_per_op — shown, never gated",
        "#### peak_live_bytes — shown, never gated", "#### ns/op — directional only"]
    usable = lines.index("#### usable_bytes_per_op — shown, never gated")
    assert lines[usable + 2:usable + 6] == [
        "| scenario | v1 | v2 | Δ v1 → v2 | Δ % |", "|---|---:|---:|---:|---:|",
        "| `s/a` | 80 | 112 | +32 | +40.0% |", "| `s/b` | – | 48 |  |  |"]
    assert lines[-3:] == [
        "Notes:", "", "- – the revision's plugin does not have the scenario: graft today's "
        "scenarios (--graft) to measure it there"]


def test_time_table_marks_a_revision_measured_without_time_apart_from_failures():
    same = {"s/a": alloc(64, 2, 80, 256)}
    columns = [measured(A, "v1", same, ns=12.5), measured(B, "v2", same, ns=None),
               build_failed(C)]
    text = sweep_table.markdown(columns, ["bytes_per_op"])
    lines = text.splitlines()
    assert lines[4] == "| `s/a` | 64 | 64 | ✗ | 0 ¹ | 0.0% |"
    time = lines.index("#### ns/op — directional only")
    assert lines[time + 4:time + 7] == [
        "| scenario | v1 | v2 | cccccccccc |", "|---|---:|---:|---:|", "| `s/a` | 12.5 | ∅ | ✗ |"]
    assert text.split("Notes:\n\n")[1].splitlines() == [
        "- ∅ `v2` (bbbbbbbbbb): measured without the time pass (--no-time); run the sweep "
        "again without --no-time to time it",
        "- ✗ `cccccccccc` build failed: `span.cc:3:1: error: oops` — log: /l/c.log"]
    untimed = sweep_table.markdown(columns[1:2], ["bytes_per_op"])
    assert "ns/op" not in untimed and "∅" not in untimed   # no time table, no mark to explain


def test_one_measured_revision_has_no_delta_columns():
    columns = [measured(A, "v1", {"s/a": alloc(64, 2, 80, 256)}),
               sweep_table.Column(B, "v2", None)]
    assert sweep_table.markdown(columns, ["bytes_per_op"]).splitlines()[:5] == [
        "#### B/op — exact", "", "| scenario | v1 | v2 |", "|---|---:|---:|",
        "| `s/a` | 64 | · |"]
    assert sweep_table.markdown(columns[:1], ["bytes_per_op"]).splitlines()[2:5] == [
        "| scenario | v1 |", "|---|---:|", "| `s/a` | 64 |"]
    # CSV keeps one shape for scripts: the delta columns are there, and empty.
    assert sweep_table.csv_text(columns, ["bytes_per_op"]).splitlines() == [
        "metric,scenario,v1,v2,delta,delta_percent", f"sha,,{A},{B},,",
        "status,,ok,not_measured,,", "bytes_per_op,s/a,64,,,", "ns_per_op,s/a,10,,,"]


def test_an_empty_table_is_headed_by_the_metrics_column_name():
    columns = [build_failed(C), sweep_table.Column(D, "v3", None)]
    assert sweep_table.markdown(columns, ["bytes_per_op", "allocs_per_op", "frees_per_op"]) == (
        "#### B/op — exact\n\n"
        "| scenario | cccccccccc | v3 |\n|---|---:|---:|\n\n"
        "#### allocs/op — exact\n\n"
        "| scenario | cccccccccc | v3 |\n|---|---:|---:|\n\n"
        "#### frees_per_op\n\n"
        "| scenario | cccccccccc | v3 |\n|---|---:|---:|\n\n"
        "Notes:\n\n"
        "- ✗ `cccccccccc` build failed: `span.cc:3:1: error: oops` — log: /l/c.log\n"
        "- · `v3` (dddddddddd): not measured yet\n")


def test_fallback_and_test_fields_are_the_runners(runner, ground_truth, tmp_path):
    out = tmp_path / "r.json"
    done = subprocess.run([str(runner), "--plugin", str(ground_truth), "--no-time", "--quiet",
                           "--filter", "sized/bytes:24$", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    written = {(f["section"], f["key"]): f for f in json.loads(out.read_text())["fields"]}
    for key, field in sweep_table.FALLBACK.items():
        assert {k: written[key][k] for k in field} == field, key
    for field in FIELDS:
        assert {k: written[field["section"], field["key"]][k] for k in field} == field


def test_sweep_table_help_says_show_not_measure():
    import argparse
    import re
    from allocbench.commands import sweep_table as command
    parser = argparse.ArgumentParser()
    command.setup_arguments(parser)
    helps = {a.dest: a.help or "" for a in parser._actions}
    assert helps["names"] == "revisions to show, in this order (after --tags and --range)"
    assert [dest for dest, text in helps.items() if re.search(r"\bmeasure\b", text)] == []


def test_bisect_says_so_when_no_allocation_site_changed(tmp_path, monkeypatch, capsys):
    """A step that heaptrack's sites do not show (both sides' sites the same): one line says
    so, rather than an empty list under the heading."""
    site = per_op.Site((("Span::Start", "span.cc", 10),), background=False)
    same = [per_op.SiteCost(site, ((32, Fraction(3)),))]
    built = []
    monkeypatch.setattr(packages, "ensure", lambda needed: None)
    monkeypatch.setattr(runners, "profile_runner", lambda near: near)
    monkeypatch.setattr(sweep, "plugin_of",
                        lambda plan, sha: built.append(sha) or tmp_path / sha / "p.so")
    monkeypatch.setattr(profile, "profile", lambda runner, plugins, name, folder, ops:
                        SimpleNamespace(costs=same))
    plan = SimpleNamespace(repo=tmp_path, runner=tmp_path / "allocbench-run")
    before, after = "a" * 40, "b" * 40
    bisect._sites(plan, "tracer/span", before, after)
    assert built == [before, after]
    state = bisect.worktrees.state_dir(tmp_path)
    assert capsys.readouterr().out == (
        f"sites of tracer/span, {'a' * 10} → {'b' * 10} (heaptrack, per op; profiles in "
        f"{state / 'sites' / ('a' * 12 + '-' + 'b' * 12)}):\n  no allocation site changed\n")


def test_a_graft_fingerprint_is_the_recorded_format_so_old_records_keep_their_recipe(tmp_path):
    """A store written by an earlier allocbench is matched on recipe ids, and a graft's
    fingerprint is part of the recipe: its format cannot change. It is the first 16 hex
    digits of SHA-256 over each file's destination, NUL, content, NUL (then "x", NUL when
    the file is executable), files in path order."""
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "CMakeLists.txt").write_text("add_library(s MODULE s.cc)\n")
    (bench / "run.sh").write_text("#!/bin/sh\n")
    (bench / "run.sh").chmod(0o755)
    expected = hashlib.sha256(b"bench/CMakeLists.txt\0add_library(s MODULE s.cc)\n\0"
                              b"bench/run.sh\0#!/bin/sh\n\0x\0").hexdigest()[:16]
    assert graft.fingerprint([graft.Graft(bench, "bench")]) == expected
    assert graft.fingerprint([]) == ""


@pytest.mark.parametrize("name", ["a", "notes.txt"])
def test_a_change_allocbench_did_not_make_is_refused_whatever_its_name(tmp_path, name):
    """A worktree with the user's own file in it is not measured (nor cleaned away): a name of
    one character is a name too (git status says '?? a')."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "c"]):
        git(tree, *args)
    (tree / name).write_text("mine\n")
    with pytest.raises(UserError) as refused:
        graft.apply(tree, [])
    assert str(refused.value).startswith(f"{tree} has changes allocbench did not make ({name});")
    assert (tree / name).read_text() == "mine\n"


def test_a_good_revision_off_the_bad_ones_first_parent_line_is_refused_by_name(tmp_path):
    """main: c1 → c2; a side branch from c1: c3. c3 comes before no commit of main's line."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for n in (1, 2):
        git(repo, "commit", "-q", "--allow-empty", "-m", f"c{n}")
    c1, c2 = git(repo, "rev-parse", "main~1"), git(repo, "rev-parse", "main")
    git(repo, "checkout", "-q", "-b", "side", c1)
    git(repo, "commit", "-q", "--allow-empty", "-m", "c3")
    c3 = git(repo, "rev-parse", "side")
    assert selection.first_parent(repo, c1, c2) == [c2]
    with pytest.raises(UserError) as refused:
        selection.first_parent(repo, c3, c2)
    assert str(refused.value) == (
        f"{c3[:12]} is not on the first-parent history of {c2[:12]}; give an older revision "
        "first, e.g. a release tag and a later commit of the same branch")


def test_a_worktree_is_announced_by_its_short_sha_and_a_folder_without_commits_has_none(
        tmp_path):
    assert revision.current(tmp_path) == revision.Revision(None, None, False)   # no git here
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    assert revision.current(repo) == revision.Revision(None, None, False)      # no commit yet
    git(repo, "commit", "-q", "--allow-empty", "-m", "c")
    sha = git(repo, "rev-parse", "HEAD")
    said = []
    path = tmp_path / "trees" / sha
    with worktrees.announcing(said.append):
        assert worktrees.add_worktree(repo, path, sha) == path
    assert said == [f"checking out {sha[:12]} in {path}"]
    assert worktrees.head(path) == sha


def test_a_records_place_in_the_store_in_either_layout():
    """<machine>/<allocator>/<sha>/<recipe>.json, and the older <machine>/<allocator>/<sha>.json
    of stores written before recipes sat side by side: both are read."""
    sha = "ab" * 20
    assert store.Store.place(Path(f"s/m1/jemalloc/{sha}/0123456789abcdef.json")) == (
        "m1", "jemalloc", sha)
    assert store.Store.place(Path(f"s/m1/jemalloc/{sha}.json")) == ("m1", "jemalloc", sha)


def test_a_revision_measured_with_a_note_says_so_under_the_table():
    sha = "a" * 40
    noted = sweep_table.Column(sha, "v1", record(sha, {"s/a": 64}, label="v1",
                                                 note="submodule x (0123) left empty: …"))
    plain = sweep_table.Column("b" * 40, "v2", record("b" * 40, {"s/a": 64}, label="v2"))
    notes = [line for line in sweep_table.markdown([noted, plain], ["bytes_per_op"]).splitlines()
             if line.startswith("- ")]
    assert notes == ["- `v1` (aaaaaaaaaa): measured with submodule x (0123) left empty: …"]


def test_the_kept_plugins_are_each_revisions_own_and_the_oldest_go(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    plan = types.SimpleNamespace(repo=repo, recipe_id="r" * 16)
    built = tmp_path / "tree" / "p.so"
    built.parent.mkdir()
    monkeypatch.setattr(sweep, "PLUGINS_KEPT", 2)
    kept = []
    for i, sha in enumerate(("a" * 40, "b" * 40, "c" * 40)):
        built.write_text(f"plugin {i}")
        kept.append(sweep.keep_plugin(plan, sha, built))
        os.utime(kept[-1].parent, ns=(i * 10**9, i * 10**9))   # the order they were kept in
    assert [p.read_text() if p.exists() else None for p in kept] == [None, "plugin 1", "plugin 2"]
    assert kept[2] == repo / ".allocbench" / "plugins" / plan.recipe_id / ("c" * 40) / "p.so"
