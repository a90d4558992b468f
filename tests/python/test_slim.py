"""The slim and brief forms of a record (scripts/allocbench/history/slim.py) hold what their
readers read: the sweep table (markdown and CSV, every metric it can tabulate, marks included)
of slim records is the table of whole ones, character for character; a brief's steps and names
are those read from the whole results here; a report's site built from the store is the site
built when the forms are the whole records, file for file. So a reader that starts to read
something the forms leave out fails here, not in a user's table."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

import report_data as rd
from allocbench.history import slim, sweep_table
from allocbench.history.store import Store
from allocbench.reports import inputs, site

ROOT = Path(__file__).resolve().parents[2]
BUILTIN = json.loads((ROOT / "bench" / "data" / "builtin-results.json").read_text())


def record(n: int, **change) -> dict:
    doc = copy.deepcopy(BUILTIN)
    for i, result in enumerate(doc["results"]):
        result["alloc"]["bytes_per_op"] += 8 * n * (i % 3 == 0)   # some move, some do not
    rec = {"store_version": 2, "sha": f"{n:040x}", "label": f"v1.{n}", "subject": "s",
           "machine": "m1", "allocator": "system", "recipe": "0" * 16, "status": "ok",
           "time_measured": doc["context"]["time"] is not None, "results": doc,
           "committed": f"2026-01-{n + 1:02}T00:00:00+00:00", "recorded": "2026-12-01T00:00:00Z"}
    rec.update(change)
    return rec


def histories() -> list[dict]:
    """Revisions with every mark a table shows: a failed build, an instance gone from one
    revision, one that failed, one without the time pass, and the instructions' ∅."""
    out = [record(n) for n in range(5)]
    out[1]["results"]["results"].pop(3)                                   # –
    out[2]["results"]["results"][5].update(error="boom", alloc=None, time=None)   # ✗
    out[3]["results"]["context"]["time"] = None                           # ∅ of time
    out[3]["time_measured"] = False
    for r in out[3]["results"]["results"]:
        r["time"] = None
    out.insert(2, {**record(9), "status": "build_failed", "results": None, "log": "b.log",
                   "log_tail": "x.cc:1: error: no", "time_measured": False})
    return out


def columns(records: list[dict], form) -> list[sweep_table.Column]:
    return [sweep_table.Column(r["sha"], r["label"], form(r)) for r in records]


@pytest.mark.parametrize("changed_only", [False, True])
def test_the_sweep_table_of_slim_records_is_the_table_of_whole_ones(changed_only):
    records = histories()
    whole, slimmed = columns(records, lambda r: r), columns(records, slim.of)
    metrics = sweep_table.metrics_of(sweep_table.tabulated(whole))
    assert len(metrics) > 4 and "instructions_per_op" in metrics   # every table it can show
    for render in (sweep_table.markdown, sweep_table.csv_text):
        expected = render(whole, metrics, changed_only)
        assert render(slimmed, metrics, changed_only) == expected
    text = sweep_table.markdown(whole, metrics)
    for mark in ("✗", "–", "∅"):
        assert mark in text


def test_a_slim_record_keeps_what_it_says_and_leaves_the_rest():
    rec = record(1)
    small = slim.of(rec)
    kept = {"name", "alloc", "time"}   # builtin-results has no instructions pass nor errors
    assert {k for r in small["results"]["results"] for k in r} == kept
    assert small["results"].keys() == rec["results"].keys()
    assert small["results"]["fields"] == rec["results"]["fields"]
    assert small["results"]["context"] == rec["results"]["context"]
    assert slim.decode(slim.encode(small)) == small
    assert {k: v for k, v in small.items() if k != "results"} == \
        {k: v for k, v in rec.items() if k != "results"}
    first, whole = small["results"]["results"][0], rec["results"]["results"][0]
    assert first["time"] == {"ns_per_op": whole["time"]["ns_per_op"],
                             "samples_ns_per_op": whole["time"]["samples_ns_per_op"]}
    assert first["alloc"] == {k: v for k, v in whole["alloc"].items() if k != "windows"}
    failed = histories()[2]
    assert slim.of(failed) == failed and slim.brief(failed) == failed


def test_a_brief_holds_each_instance_with_its_b_and_allocs_per_op():
    for rec in histories():
        brief = slim.brief(slim.of(rec))
        assert brief == slim.brief(rec)
        if rec["status"] != "ok":
            continue
        expected = []
        for r in rec["results"]["results"]:   # read here from the whole results
            ok = not r.get("error") and r["alloc"] is not None
            expected.append([r["name"], [float(r["alloc"]["bytes_per_op"]),
                                         float(r["alloc"]["allocs_per_op"])] if ok else None])
        assert json.loads(brief["results"]) == expected
        assert list(slim.stepped(brief).items()) == [tuple(e) for e in expected]
        assert {k: brief[k] for k in ("sha", "label", "status", "committed", "time_measured")} \
            == {k: rec[k] for k in ("sha", "label", "status", "committed", "time_measured")}


def test_a_site_from_the_forms_is_the_site_from_whole_records(tmp_path, monkeypatch):
    # rd.history(): tags, a B/op step, a failed build, a scaling family, byte counters, two
    # allocators (the allocators' footprint table reads whole records).
    store = rd.write_store(tmp_path / "store", rd.history(), allocators=("system", "jemalloc"))
    shutil.copytree(store, tmp_path / "store-whole")
    site.build(inputs.read([], store, [], []), tmp_path / "slim")
    # The forms replaced by the whole record: each reader then reads what the file has.
    monkeypatch.setattr(slim, "of", lambda record: record)
    site.build(inputs.read([], tmp_path / "store-whole", [], []), tmp_path / "whole")

    def files(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes().replace(
                    b"store-whole", b"store") for p in root.rglob("*")
                if p.is_file() and p.name != ".allocbench-report"}
    slim_site, whole_site = files(tmp_path / "slim"), files(tmp_path / "whole")
    assert len(slim_site) > 20 and slim_site.keys() == whole_site.keys()
    assert [name for name in slim_site if slim_site[name] != whole_site[name]] == []


def test_the_store_serves_forms_of_what_its_files_hold(tmp_path):
    records = histories()
    store = Store(tmp_path)
    paths = [store.put(r) for r in records]
    for _ in range(2):   # read, then from the index
        again = Store(tmp_path)
        assert [again.summary(p, "slim") for p in paths] == [slim.of(r) for r in records]
        assert [again.summary(p, "brief") for p in paths] == [slim.brief(r) for r in records]
        assert [again.summary(p, "whole") for p in paths] == [
            {**r, "store_version": 2} for r in records]
