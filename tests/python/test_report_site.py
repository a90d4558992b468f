"""`allocbench report`: the site's pages show exactly the numbers they came from (the tests read
the HTML tables back), in sweep order; damaged and hostile input; the atomic write; pictures
reused by the data they show. The browser tests are test_report_browser.py.

Every expected number comes from report_data.py's Instances (the values written into the
store), never from the code under test.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

import report_data as rd
from allocbench import cli
from allocbench.base.errors import MeasurementFailed, UserError
from allocbench.reports import folder, inputs, markdown, pages, site


class Page(HTMLParser):
    """A page's tables (rows of cell texts, by class), links, images, scripts and text."""

    def __init__(self, path: Path):
        super().__init__(convert_charrefs=True)
        self.tables: list[tuple[str, list[list[str]]]] = []
        self.links: list[str] = []
        self.images: list[str] = []
        self.scripts: list[dict[str, str | None]] = []
        self.handlers: list[tuple[str, str]] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.handlers += [(tag, k) for k in attrs if k.startswith("on")]
        if tag == "table":
            self.tables.append((attrs.get("class") or "", []))
        elif tag == "tr" and self.tables:
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "a" and "href" in attrs:
            self.links.append(attrs["href"])
        elif tag == "img":
            self.images.append(attrs["src"])
        elif tag == "script":
            self.scripts.append(attrs)
        elif tag == "link":
            self.links.append(attrs["href"])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def table(self, cls: str) -> list[list[str]]:
        return next(rows for c, rows in self.tables if cls in c.split())


def build(tmp_path: Path, revisions=None, *args: str, allocators=("system",)) -> Path:
    store = rd.write_store(tmp_path / "store", revisions or rd.history(),
                           allocators=allocators)
    out = tmp_path / "site"
    assert cli.main(["report", "--store", str(store), *args, "--out", str(out)]) == 0
    return out


def scenario_page(out: Path, name: str) -> Page:
    return Page(out / f"scenario/{pages.slug(name)}.html")


# ---- numbers and order


def test_the_index_shows_the_newest_revisions_numbers(tmp_path):
    out = build(tmp_path)
    rows = Page(out / "index.html").table("latest")
    assert rows[0][:5] == ["scenario", "B/op", "allocs/op", "ns/op", "ops/s"]
    by_name = {row[0]: row[1:5] for row in rows[1:]}
    # v1.10 is the newest in version order (the failed commit after it measured nothing):
    # span 80 B / 2 allocs; fan-out 160 + 96·children B, 1 + children allocs.
    assert by_name["tracer/start_span"][:2] == ["80", "2"]
    for children in (1, 5, 20):
        assert by_name[f"tracer/fanout/children:{children}"][:2] == [
            str(160 + 96 * children), str(1 + children)]
    # ns/op is the median of the samples (50.0, 51.0, 49.5, 50.2, 50.9) → 50.2; ops/s 1e9/50.2.
    assert by_name["tracer/start_span"][2:] == ["50.2", f"{round(1e9 / 50.2):,}"]


def test_the_scenario_page_lists_every_revision_in_sweep_order(tmp_path):
    out = build(tmp_path)
    rows = scenario_page(out, "tracer/start_span").table("revisions")
    assert rows[0][:8] == ["revision", "commit", "status", "B/op", "allocs/op",
                           "first_op_bytes", "peak_live_bytes", "ns/op (median)"]
    # Tags in version order (v1.2 before v1.10), then the commit; its failure says why.
    assert [r[0] for r in rows[1:]] == ["v1.0", "v1.1", "v1.2", "v1.10", rd.sha(5)[:10]]
    assert [r[3:5] for r in rows[1:]] == [["64", "1"], ["96", "2"], ["80", "2"], ["80", "2"],
                                          ["–", "–"]]
    assert rows[-1][2] == "build failed: span.cc:3: error: expected ';'"
    # The interquartile range and min–max of the 5 samples, by numpy's linear percentiles:
    # sorted 49.5, 50.0, 50.2, 50.9, 51.0 → q1 50.0, q3 50.9.
    assert rows[1][8:] == ["50.0–50.9", "49.5–51.0"]


def test_the_sweep_page_is_the_sweep_table(tmp_path):
    out = build(tmp_path)
    (path,) = (out / "sweep").iterdir()
    page = Page(path)
    head, *body = page.tables[0][1]
    assert head == ["scenario", "v1.0", "v1.1", "v1.2", "v1.10", rd.sha(5)[:10],
                    f"Δ v1.0 → {rd.sha(5)[:10]}", "Δ %"]
    span = next(r for r in body if r[0] == "tracer/start_span")
    # ¹: the change is v1.0 → v1.10, the last revision that measured the scenario.
    assert span[1:] == ["64", "96", "80", "80", "✗", "+16 ¹", "+25.0%"]
    assert "build failed: span.cc:3: error: expected ';'" in "".join(page.text)


NEWER = rd.Revision(rd.sha(6), "v1.11", "grow it again",
                    (rd.span(112, 3, (60.0, 61.0, 59.5, 60.2, 60.9)),
                     rd.fanout(1), rd.fanout(5), rd.fanout(20)),
                    committed="2026-07-01T00:00:00+00:00")


def _not_bisected(old: str, new: str) -> str:
    return f"not bisected: allocbench bisect tracer/start_span --good {old} --bad {new} --all"


def test_the_index_leads_with_the_largest_allocation_changes_of_the_whole_history(tmp_path):
    """span: v1.0 → v1.1 64 → 96 B (+50 %), 1 → 2 allocs (+100 %); v1.1 → v1.2 96 → 80 B
    (−16.7 %); v1.10 → v1.11 80 → 112 B (+40 %), 2 → 3 allocs (+50 %); the fan-out never
    changes. Ranked by the larger relative change: +100 %, +50 %, −16.7 %."""
    out = build(tmp_path, rd.history() + [NEWER])
    rows = Page(out / "index.html").table("largest")
    assert rows == [
        ["scenario", "B/op", "allocs/op", "revisions", "commit"],
        ["tracer/start_span", "64 → 96 (+32)", "1 → 2 (+1)", "v1.0 → v1.1",
         _not_bisected("v1.0", "v1.1")],
        ["tracer/start_span", "80 → 112 (+32)", "2 → 3 (+1)", "v1.10 → v1.11",
         _not_bisected("v1.10", "v1.11")],
        ["tracer/start_span", "96 → 80 (-16)", "2 → 2", "v1.1 → v1.2",
         _not_bisected("v1.1", "v1.2")]]


def test_the_index_lists_ten_steps_and_counts_the_rest(tmp_path):
    """Twelve releases, each growing the span by 8 B over the one before: eleven steps, the
    first (+12.5 %) the largest, the last (+8 / 144 = 5.6 %) the smallest and not shown."""
    revisions = [rd.Revision(rd.sha(i + 1), f"v1.{i}", f"release {i}", (rd.span(64 + 8 * i, 1),),
                             committed=f"2026-01-{i + 1:02d}T00:00:00+00:00") for i in range(12)]
    out = build(tmp_path, revisions)
    page = Page(out / "index.html")
    rows = page.table("largest")[1:]
    assert [r[3] for r in rows] == [f"v1.{i} → v1.{i + 1}" for i in range(10)]
    assert "1 smaller step: see the scenario pages." in " ".join("".join(page.text).split())


def test_steps_of_one_relative_change_are_ranked_by_their_bytes(tmp_path):
    """Both steps double allocs/op (+100 %, more than either B/op change): the one that adds
    32 B (72 → 104) comes before the one that adds 8 B (64 → 72), although it is later."""
    revisions = [rd.Revision(rd.sha(i + 1), f"v1.{i}", f"release {i}", (rd.span(size, allocs),),
                             committed=f"2026-01-{i + 1:02d}T00:00:00+00:00")
                 for i, (size, allocs) in enumerate(((64, 1), (72, 2), (104, 4)))]
    rows = Page(build(tmp_path, revisions) / "index.html").table("largest")[1:]
    assert [r[1:4] for r in rows] == [["72 → 104 (+32)", "2 → 4 (+2)", "v1.1 → v1.2"],
                                      ["64 → 72 (+8)", "1 → 2 (+1)", "v1.0 → v1.1"]]


def test_a_step_a_bisect_named_shows_its_commit_and_a_damaged_result_is_left_out(tmp_path,
                                                                               capsys):
    """A bisect between v1.0 and v1.1 whose probe (a commit of January 15) is stored:
    v1.0 → probe 64 → 80 B, bisected exactly; probe → v1.1 80 → 96 B, 1 → 2 allocs: not."""
    from allocbench.history import bisected
    probe = rd.Revision(rd.sha(7), rd.sha(7)[:10], "add a field to the span",
                        (rd.span(80, 1), rd.fanout(1), rd.fanout(5), rd.fanout(20)),
                        committed="2026-01-15T00:00:00+00:00")
    store = rd.write_store(tmp_path / "store", rd.history()[:2] + [probe])
    found = {"machine": "ci-runner", "allocator": "system", "recipe": "0123456789abcdef",
             "scenario": "tracer/start_span", "metric": "bytes_per_op", "good": rd.sha(1),
             "bad": rd.sha(2), "search": "all",
             "steps": [{"before": rd.sha(1), "after": rd.sha(7), "exact": True, "from": 64,
                        "to": 80, "label": probe.label, "subject": probe.subject}]}
    bisected.write(store, found)
    # the same bisect for another allocator names nothing here
    bisected.write(store, {**found, "allocator": "jemalloc"})
    out = tmp_path / "site"
    assert cli.main(["report", "--store", str(store), "--out", str(out)]) == 0
    rows = Page(out / "index.html").table("largest")[1:]
    assert [r[3:] for r in rows] == [
        [f"{probe.label} → v1.1", _not_bisected(probe.label, "v1.1")],
        [f"v1.0 → {probe.label}", f"{rd.sha(7)[:10]} add a field to the span (bisected)"]]
    (store / bisected.FOLDER / "0000000000000000.json").write_text('{"bisect_version": 1}')
    out = tmp_path / "again"
    assert cli.main(["report", "--store", str(store), "--out", str(out)]) == 1
    assert "1 store file could not be read" in capsys.readouterr().err
    assert Page(out / "index.html").table("largest")[1:] == rows
    assert any("0000000000000000.json: 'machine' must be a non-empty string" in t
               for t in Page(out / "index.html").text)


def test_changes_between_the_last_two_revisions_follow_exact_before_time(tmp_path):
    out = build(tmp_path, rd.history() + [NEWER])
    page = Page(out / "index.html")
    classes = [c for c, _ in page.tables]
    assert classes[:4] == ["largest", "changes exact", "changes time", "latest filterable"]
    assert page.table("exact")[1:] == [
        ["tracer/start_span", "B/op", "80", "112", "+32", "+40.0%"],
        ["tracer/start_span", "allocs/op", "2", "3", "+1", "+50.0%"],
        ["tracer/start_span", "frees_per_op", "2", "3", "+1", "+50.0%"]]
    # Median 50.2 → 60.2 ns: +19.9%; the fan-out's unchanged samples are not listed.
    assert page.table("time")[1:] == [["tracer/start_span", "ns/op", "50.2", "60.2", "+19.9%"]]


def test_a_family_with_a_numeric_argument_shows_its_exact_fit(tmp_path):
    out = build(tmp_path)
    page = scenario_page(out, "tracer/fanout/children:5")
    text = " ".join("".join(page.text).split())
    assert ("Least squares over tracer/fanout: slope 96 B/op per children, intercept 160 B/op "
            "(exact: every point is on the line)") in text


def test_several_allocators_get_bars_and_the_same_bytes_per_op(tmp_path):
    jemalloc = [rd.Revision(r.sha, r.label, r.subject, tuple(
        rd.Instance(**{**i.__dict__, "usable": i.bytes + 16}) for i in r.instances), r.status,
        r.committed, r.error) for r in rd.history()]
    store = rd.write_store(tmp_path / "store", rd.history())
    rd.write_store(store, jemalloc, allocators=("jemalloc",))
    out = tmp_path / "site"
    assert cli.main(["report", "--store", str(store), "--out", str(out)]) == 0
    page = scenario_page(out, "tracer/fanout/children:5")
    text = " ".join("".join(page.text).split())
    assert "B/op is 640 on every allocator (system, jemalloc)" in text
    assert page.table("allocators") == [
        ["metric", "system", "jemalloc"], ["usable_bytes_per_op (B)", "640", "656"],
        ["peak_live_bytes (B)", "4,096", "4,096"], ["arena_bytes (B)", "327,680", "327,680"]]
    # Only one allocator's history: no allocator section.
    only = build(tmp_path / "one")
    assert not any(c == "allocators" for c, _ in scenario_page(only, "tracer/start_span").tables)


def test_results_files_make_a_history_by_date(tmp_path):
    a = rd.write(tmp_path / "a.json", rd.document([rd.span(64, 1)], label="old",
                                                  date="2026-01-01T00:00:00Z"))
    b = rd.write(tmp_path / "b.json", rd.document([rd.span(96, 2)], label="new",
                                                  date="2026-02-01T00:00:00Z"))
    out = tmp_path / "site"
    assert cli.main(["report", str(b), str(a), "--out", str(out)]) == 0
    rows = scenario_page(out, "tracer/start_span").table("revisions")
    assert [(r[0], r[3]) for r in rows[1:]] == [("old", "64"), ("new", "96")]
    run_pages = sorted((out / "run").iterdir())
    assert len(run_pages) == 2   # every results file has its page


# ---- comparisons


def test_the_comparison_page_says_what_the_comment_says_with_each_sides_statistics(tmp_path):
    base = [rd.span(64, 1, (50.0, 51.0, 49.0, 50.0, 52.0))]
    cand = [rd.span(96, 2, (60.0, 61.0, 59.0, 60.0, 62.0))]
    folder = rd.ab_folder(tmp_path / "ab", base, cand)
    out = tmp_path / "site"
    assert cli.main(["report", str(folder), "--out", str(out)]) == 0
    (path,) = (out / "compare").iterdir()
    page = Page(path)
    text = " ".join("".join(page.text).split())
    assert "bytes_per_op +32 B (64 → 96, +50.0%)" in text
    assert "Gate failed" in text
    head, *rows = page.table("side-stats")
    assert head == ["statistic", "base base", "candidate cand"]
    stats_of = {row[0]: row[1] for row in rows}
    assert [row[0] for row in rows[:3]] == ["min", "mean ± sd", "median ± MAD"]
    # Forks 0, 1, 2 are the samples + 0.0, 0.1, 0.2: 15 samples, min 49.0, max 52.2.
    samples = [s + i / 10 for i in range(3) for s in (50.0, 51.0, 49.0, 50.0, 52.0)]
    assert stats_of["samples"] == "15 (3 forks)"
    assert (min(samples), max(samples)) == (49.0, 52.2)   # shown as the comment shows numbers:
    assert (stats_of["min"], stats_of["max"]) == ("49", "52.2")   # 4 digits, no ".0"
    assert {row[0]: row[2] for row in rows}["min"] == "59"


def test_a_compare_json_makes_the_same_page_as_its_ab_folder(tmp_path):
    folder = rd.ab_folder(tmp_path / "ab", [rd.span(64, 1)], [rd.span(96, 2)])
    json_path = tmp_path / "c.json"
    code = cli.main(["compare", str(folder / "base"), str(folder / "cand"), "--format", "json"])
    assert code == 1
    from allocbench.gate import compare as cmp, compare_json, config
    comparison = cmp.compare(cmp.load_side(folder / "base"), cmp.load_side(folder / "cand"),
                             config.Config())
    json_path.write_text(compare_json.to_json(comparison, "any"))
    for source, name in ((folder, "a"), (json_path, "b")):
        assert cli.main(["report", str(source), "--out", str(tmp_path / name)]) == 0
    (a,) = (tmp_path / "a" / "compare").iterdir()
    (b,) = (tmp_path / "b" / "compare").iterdir()
    strip = re.compile(r"Comparison from [^:]*:")
    assert strip.sub("", a.read_text()) == strip.sub("", b.read_text())


def test_a_damaged_compare_json_names_the_field(tmp_path, capsys):
    folder = rd.ab_folder(tmp_path / "ab", [rd.span(64, 1)], [rd.span(96, 2)])
    from allocbench.gate import compare as cmp, compare_json, config
    doc = json.loads(compare_json.to_json(cmp.compare(
        cmp.load_side(folder / "base"), cmp.load_side(folder / "cand"), config.Config()), "any"))
    doc["instances"][0]["exact"][0]["verdict"] = "great"
    path = rd.write(tmp_path / "c.json", doc)
    assert cli.main(["report", str(path), "--out", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err
    assert f"{path}: instances[0].exact[0].verdict is a string (\"great\"), not one of" in err
    assert not (tmp_path / "site").exists()


# ---- damaged and bad input


def test_an_unreadable_record_is_a_revision_shown_with_its_reason_and_exit_1(tmp_path, capsys):
    store = rd.write_store(tmp_path / "store", rd.history())
    damaged = store / "ci-runner" / "system" / rd.sha(2) / "0123456789abcdef.json"
    damaged.write_text('{"store_version": 1,')
    out = tmp_path / "site"
    assert cli.main(["report", "--store", str(store), "--out", str(out)]) == 1
    assert "1 store file could not be read: a record's revision is shown as unreadable" in \
        capsys.readouterr().err
    rows = scenario_page(out, "tracer/start_span").table("revisions")
    # Without its record, the revision has no label or date: it is listed with the commits.
    assert [r[0] for r in rows[1:]] == ["v1.0", "v1.2", "v1.10", rd.sha(2)[:10], rd.sha(5)[:10]]
    assert rows[4][2].startswith(f"unreadable: {damaged}: not valid JSON")
    index = Page(out / "index.html")
    assert any(str(damaged) in t for t in index.text)
    # The others are built: v1.0's 64 B is there, and the sweep table marks the revision "?".
    assert rows[1][3] == "64"
    (sweep,) = (out / "sweep").iterdir()
    span = next(r for r in Page(sweep).tables[0][1] if r[0] == "tracer/start_span")
    assert span[4] == "?"


@pytest.mark.parametrize("case", ["nothing", "missing", "empty_store", "empty_folder",
                                  "out_is_a_file", "out_has_other_files", "filtered_out"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, case):
    store = rd.write_store(tmp_path / "store", rd.history())
    out = tmp_path / "site"
    (tmp_path / "empty").mkdir()
    args = {"nothing": [],
            "missing": [str(tmp_path / "nope.json")],
            "empty_store": ["--store", str(tmp_path / "empty")],
            "empty_folder": [str(tmp_path / "empty")],
            "out_is_a_file": ["--store", str(store)],
            "out_has_other_files": ["--store", str(store)],
            "filtered_out": ["--store", str(store), "--machine", "other"]}[case]
    if case == "out_is_a_file":
        out.write_text("mine")
    if case == "out_has_other_files":
        out.mkdir()
        (out / "notes.txt").write_text("mine")
    assert cli.main(["report", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("allocbench: error: ")
    expected = {"nothing": "nothing to report", "missing": "nope.json: no such file",
                "empty_store": "no records", "empty_folder": "no results files",
                "out_is_a_file": "is not a folder", "out_has_other_files": "not a report",
                "filtered_out": "no records for --machine other"}[case]
    assert expected in err
    if case in ("out_is_a_file", "out_has_other_files"):   # what the user had is untouched
        assert (out.read_text() if out.is_file() else (out / "notes.txt").read_text()) == "mine"
    else:
        assert not out.exists()
    assert not list(tmp_path.glob(".site.tmp-*"))


def test_an_interrupted_build_leaves_the_previous_site_as_it_was(tmp_path, monkeypatch):
    out = build(tmp_path)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(pages, "sweep", interrupted)
    found = inputs.read([], tmp_path / "store", [], [])
    with pytest.raises(KeyboardInterrupt):
        site.build(found, out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["store", "site"] or \
        sorted(p.name for p in tmp_path.iterdir()) == ["site", "store"]


def test_a_rebuild_draws_only_the_pictures_whose_data_changed(tmp_path):
    store = rd.write_store(tmp_path / "store", rd.history())
    out = tmp_path / "site"
    first = site.build(inputs.read([], store, [], []), out)
    assert first.pages == len(list(out.rglob("*.html")))
    assert (first.drawn, first.reused) == (len(list((out / "img").iterdir())), 0)
    again = site.build(inputs.read([], store, [], []), out)
    assert (again.drawn, again.reused) == (0, first.drawn)
    pictures = {p.name: p.read_bytes() for p in (out / "img").iterdir()}

    # One more revision with the same numbers: every history gains a point (redrawn); the
    # fit and the run's bars show the same data (reused).
    rd.write_store(store, [rd.Revision(rd.sha(6), "v1.11", "same again",
                                       rd.history()[3].instances,
                                       committed="2026-07-01T00:00:00+00:00")])
    third = site.build(inputs.read([], store, [], []), out)
    now = {p.name for p in (out / "img").iterdir()}
    fits = {n for n in pictures if n.startswith("fit-")}
    assert fits and fits <= now
    histories = {n for n in now if n.startswith(("history-", "time-", "spark-", "sweep-"))}
    assert histories.isdisjoint(pictures)
    assert third.drawn == len(now - set(pictures)) and third.reused == len(now & set(pictures))
    # A site holds only the pictures its pages show.
    shown = {src.split("/")[-1] for p in out.rglob("*.html") for src in Page(p).images}
    assert shown == now


# ---- hostile names, local assets


def test_hostile_names_labels_and_errors_are_text_on_every_page(tmp_path):
    out = build(tmp_path, rd.history(hostile=True))
    htmls = sorted(out.rglob("*.html"))
    assert len(htmls) == 1 + 4 + len(rd.HOSTILE) + 1 + 1   # index, scenarios, sweep, run
    for path in htmls:
        page = Page(path)
        assert page.handlers == [], path
        assert page.scripts == [{"defer": None, "src": "../" * (len(path.relative_to(
            out).parts) - 1) + "assets/sort.js"}], path
    index = "".join(Page(out / "index.html").text)
    for name in rd.HOSTILE:
        assert name.replace("\n", " ") in index.replace("\n", " ")
    for svg in (out / "img").iterdir():
        tree = ET.parse(svg)   # well-formed: every text was escaped
        assert not [e for e in tree.iter() if e.tag.endswith("script")
                    or any(k.startswith("on") for k in e.attrib)], svg


def test_bidi_and_invisible_characters_are_shown_as_escapes_on_every_page(tmp_path):
    """A name that reorders itself (U+202E), a label with an isolate, a subject with a
    zero-width space, an error with an escape sequence: every page and picture shows them as
    the escapes every other output shows, and holds none of them raw."""
    name = "tracer/\u202egpj.exe"
    revisions = [rd.Revision(rd.sha(1), "v1.0\u2067x\u2069", "tidy\u200bup",
                             (rd.span(64, 1), rd.Instance(name, 8, 1))),
                 rd.Revision(rd.sha(2), "v1.1", "grow", (rd.span(96, 2), rd.Instance(name, 16, 1)),
                             committed="2026-02-01T00:00:00+00:00"),
                 rd.Revision(rd.sha(3), rd.sha(3)[:10], "break", (), status="build_failed",
                             committed="2026-03-01T00:00:00+00:00",
                             error="x.cc:1: \x1b[31merror\u200f: x")]
    out = build(tmp_path, revisions)
    raw = set("\u202e\u2067\u2069\u200b\u200f\x1b")
    htmls = sorted(out.rglob("*.html"))
    assert len(htmls) == 1 + 2 + 1 + 1   # index, 2 scenarios, sweep, run
    for path in [*htmls, *(out / "img").iterdir()]:
        assert not raw & set(path.read_text(encoding="utf-8")), path
    page = scenario_page(out, name)
    assert "tracer/\\u202egpj.exe" in page.text
    rows = page.table("revisions")
    assert [row[:3] for row in rows[1:]] == [
        ["v1.0\\u2067x\\u2069", f"{rd.sha(1)[:10]} tidy\\u200bup", "ok"],
        ["v1.1", f"{rd.sha(2)[:10]} grow", "ok"],
        [rd.sha(3)[:10], f"{rd.sha(3)[:10]} break",
         "build failed: x.cc:1: \\x1b[31merror\\u200f: x"]]


def test_every_link_and_picture_is_a_file_of_the_site(tmp_path):
    store = rd.write_store(tmp_path / "store", rd.history(hostile=True),
                           allocators=("system", "jemalloc"))
    folder = rd.ab_folder(tmp_path / "ab", [rd.span(64, 1)], [rd.span(96, 2)])
    out = tmp_path / "site"
    assert cli.main(["report", "--store", str(store), str(folder), "--out", str(out)]) == 0
    kinds = {p.parent.name for p in out.rglob("*.html")}
    assert kinds == {"site", "scenario", "sweep", "run", "compare"}
    for path in out.rglob("*.html"):
        page = Page(path)
        for ref in page.links + page.images:
            assert not re.match(r"^[a-z]+:|^/", ref), (path, ref)
            target = (path.parent / ref.split("#")[0]).resolve()
            assert target.is_file() and target.is_relative_to(out.resolve()), (path, ref)


def test_the_single_page_of_a_run_has_everything_inside(tmp_path):
    path = rd.write(tmp_path / "r.json", rd.document([rd.span(64, 1), rd.fanout(1),
                                                      rd.fanout(5), rd.fanout(20)]))
    found = inputs.Site()
    inputs.from_results([path], found)
    history = found.histories[0]
    html = site.single_page(history.points[-1], history)
    page_path = tmp_path / "r.html"
    page_path.write_text(html)
    page = Page(page_path)
    assert page.links == [] and page.images and all(
        src.startswith("data:image/svg+xml;base64,") for src in page.images)
    rows = page.tables[0][1]
    assert ["tracer/start_span", "64", "1"] == rows[1][:3]


def test_the_version_order_of_labels():
    labels = ["v1.10", "v1.2", "v1.9", "v2.0", "v1.10.1", "v1.0-rc1", "v1.0"]
    assert sorted(labels, key=inputs.version_key) == [
        "v1.0", "v1.0-rc1", "v1.2", "v1.9", "v1.10", "v1.10.1", "v2.0"]


def test_slugs_keep_names_apart_and_are_safe():
    names = ["a/b", "a_b", "a:b", "<script>", "../../etc", "x" * 300]
    slugs = [pages.slug(n) for n in names]
    assert len(set(slugs)) == len(names)
    assert all(re.fullmatch(r"[A-Za-z0-9._-]{1,75}", s) and not s.startswith(".")
               for s in slugs)


def test_reading_a_missing_store_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="no such folder"):
        inputs.read([], tmp_path / "none", [], [])


def test_the_readme_says_what_the_report_does():
    from docs_pages import page
    from allocbench.reports import stats
    readme = page("reports")
    for name, meaning in stats.TESTS:
        assert f"| {name} | {meaning} |" in readme
    assert f"its p-value from {stats.NULL_DRAWS:,} uniform samples" in readme
    assert f"(time changes of {pages.TIME_NOTE:g}% or more, marked directional)" in readme
    assert f"`{folder.MARKER}` file lists every file allocbench wrote there" in " ".join(
        readme.split())
    layout = ", ".join(f"`{name}/`" if "." not in name else f"`{name}`" for name in folder.LAYOUT)
    assert f"outside its pages and folders ({layout})" in " ".join(readme.split())


def test_a_rebuild_is_byte_for_byte_a_cold_build(tmp_path):
    # Pictures reused from a site of other data must be the ones a cold build draws: a key
    # that missed something a picture shows (a title, a metric, a label) would keep the old one.
    cold = build(tmp_path / "cold", rd.history(), allocators=("system", "jemalloc"))
    other = rd.history() + [rd.Revision(rd.sha(6), "v1.11", "more", (rd.span(80, 2),),
                                        committed="2026-07-01T00:00:00+00:00")]
    rebuilt = build(tmp_path / "re", other, allocators=("system", "jemalloc"))
    shutil.rmtree(tmp_path / "re" / "store")   # the same store as the cold build's, again
    store = rd.write_store(tmp_path / "re" / "store", rd.history(),
                           allocators=("system", "jemalloc"))
    assert cli.main(["report", "--store", str(store), "--out", str(rebuilt)]) == 0

    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes().replace(str(root.parent).encode(), b"")
                for p in root.rglob("*") if p.is_file()}
    assert files(cold) == files(rebuilt)


def test_pictures_of_equal_values_keep_their_own_titles(tmp_path):
    same = [rd.Instance("a/zero", 0, 0), rd.Instance("b/zero", 0, 0)]
    out = build(tmp_path, [rd.Revision(rd.sha(1), "v1", "one", tuple(same)),
                           rd.Revision(rd.sha(2), "v2", "two", tuple(same))])
    sources = [src for name in ("a/zero", "b/zero") for src in scenario_page(out, name).images]
    assert len(sources) == len(set(sources)) == 6   # B/op, allocs/op, ns/op of each
    for src in sources:
        title = ET.parse(out / "scenario" / src).getroot().find(
            "{http://www.w3.org/2000/svg}title").text
        assert title.split(" of ")[1].split(" on ")[0] in ("a/zero", "b/zero")


@pytest.mark.parametrize("samples", [[5.0], [3.0, 1.0], [1.0, 2.0, 3.0, 4.0, 10.0],
                                     [2.5, 1.5, 9.0, 4.0, 4.0, 7.25]])
def test_the_spread_is_numpys_linear_percentiles(samples):
    import numpy as np
    result = {"time": {"samples_ns_per_op": samples}}
    q1, median, q3 = np.percentile(samples, [25, 50, 75])
    assert pages.spread(result) == pytest.approx(
        {"median": median, "q1": q1, "q3": q3, "min": min(samples), "max": max(samples)},
        abs=1e-12)


def test_a_folder_of_profiles_adds_each_instances_sites_and_flame_graph(tmp_path):
    from fractions import Fraction

    from allocbench.sites import per_op
    costs = [per_op.SiteCost(per_op.Site((("Span::SetTag", "span.cc", 88), ("Start", "app.cc", 3)),
                                       False, "std::basic_string::_M_create"),
                            ((32, Fraction(3)),)),
             per_op.SiteCost(per_op.Site((("Flush", "writer.cc", 9),), True), ((100, Fraction(1)),))]
    rd.write(tmp_path / "profiles" / "span.sites.json",
             {"instance": "tracer/start_span", "sites": per_op.to_json(costs)})
    out = build(tmp_path, rd.history(), str(tmp_path / "profiles"))
    page = scenario_page(out, "tracer/start_span")
    assert page.table("sites") == [
        ["site", "allocs/op", "B/op", "sizes"],
        ["Span::SetTag (span.cc:88) ← Start (app.cc:3) via std::basic_string::_M_create", "3",
         "96", "3 × 32 B"],
        ["another thread: Flush (writer.cc:9)", "1", "100", "1 × 100 B"]]
    text = " ".join("".join(page.text).split())
    assert "Total 196 B/op in 4 allocs/op." in text
    flame = next(src for src in page.images if "flame-" in src)
    tree = ET.parse(out / "scenario" / flame)
    labels = [t.text for t in tree.iter("{http://www.w3.org/2000/svg}text")]
    # Outermost frame on top, the widest (most bytes) first: the other thread's 100 B, then
    # the op's 96 B from Start inwards, ending in the library function it allocated through.
    assert labels == ["another thread", "Flush", "Start", "Span::SetTag",
                      "std::basic_string::_M_create"]


def test_an_instance_that_failed_does_not_hide_the_instructions_column_of_the_others(tmp_path):
    """--instructions ran, and one instance failed: the column is there, with each count and a
    dash for the failed one; no instance measured: no column (above)."""
    store = rd.write_store(tmp_path / "store", rd.history())
    path = store / "ci-runner/system" / rd.sha(4) / "0123456789abcdef.json"   # v1.10, newest
    record = json.loads(path.read_text())
    record["results"]["context"]["instructions"] = {
        "tool": "callgrind", "estimated_cycles": False, "warmup_ops": 100, "window_ops": 1000}
    for k, result in enumerate(record["results"]["results"]):
        result["instructions"] = {"instructions_per_op": 1000.0 + k}
        if result["name"] == "tracer/fanout/children:5":
            result.update(error="SIGSEGV", alloc=None, time=None, instructions=None)
    path.write_text(json.dumps(record))
    out = tmp_path / "site"
    assert cli.main(["report", "--store", str(store), "--out", str(out)]) == 0
    rows = Page(out / "index.html").table("latest")
    assert rows[0][:6] == ["scenario", "B/op", "allocs/op", "Ir/op", "ns/op", "ops/s"]
    by_name = {row[0]: row[1:4] for row in rows[1:]}
    names = [r["name"] for r in record["results"]["results"]]
    ir = {name: str(1000 + k) for k, name in enumerate(names)}   # exact counts: no separator
    assert by_name["tracer/start_span"] == ["80", "2", ir["tracer/start_span"]]
    assert by_name["tracer/fanout/children:20"] == [
        str(160 + 96 * 20), "21", ir["tracer/fanout/children:20"]]
    assert by_name["tracer/fanout/children:5 failed"] == ["–", "–", "–"]


def test_a_failing_cmark_is_named_with_its_exit_code_and_the_start_of_its_error(
        tmp_path, monkeypatch):
    fake = tmp_path / "cmark-gfm"
    fake.write_text("#!/bin/sh\ncat >/dev/null\nprintf '  %s\\n' \"$MESSAGE\" >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setattr(markdown, "CMARK", str(fake))
    monkeypatch.setenv("MESSAGE", "x" * 199 + "YZ")
    with pytest.raises(MeasurementFailed) as failed:
        markdown.to_html("| a |\n|---|\n| 1 |\n")
    # Its first 200 characters, stripped: the 199 x's and the Y, not the Z.
    assert str(failed.value) == f"{fake} failed (exit code 3): " + "x" * 199 + "Y"
