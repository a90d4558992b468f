"""A long history's pages show a window (scripts/allocbench/reports/window.py): the newest
WINDOW revisions and every release tag before them, a line that counts the others, and pages of
older revisions that hold exactly those; the sweep curve is charts.py's SVG, one vertex per
measured revision; one more revision redraws the history pictures only.

The store: 130 revisions, j = 0 … 129 in commit order; a tag v1.<j // 10> at every tenth (13
tags), a commit elsewhere; tracer/start_span grows from 64 to 96 B/op at j = 70; the build of
j = 55 failed. Expected: the window is j = 30 … 129 and the tags j = 0, 10, 20 (103
revisions); the 27 commits among j = 1 … 29 are older, on one page.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import report_data as rd
from test_report_site import Page, scenario_page
from allocbench.reports import inputs, site

COUNT, GROWS, FAILS = 130, 70, 55
SVG = "{http://www.w3.org/2000/svg}"


def revision(j: int) -> rd.Revision:
    label = f"v1.{j // 10}" if j % 10 == 0 else rd.sha(j + 1)[:10]
    day = f"2026-{1 + j // 28:02}-{1 + j % 28:02}T00:00:00+00:00"
    if j == FAILS:
        return rd.Revision(rd.sha(j + 1), label, f"commit {j}", (), status="build_failed",
                           committed=day)
    return rd.Revision(rd.sha(j + 1), label, f"commit {j}",
                       (rd.span(96 if j >= GROWS else 64, 1), rd.Instance("other", 8, 1)),
                       committed=day)


def label(j: int) -> str:
    return revision(j).label


SHOWN = [0, 10, 20, *range(30, COUNT)]
OLDER = [j for j in range(1, 30) if j % 10]


def build(tmp_path: Path, count: int = COUNT) -> tuple[Path, site.Built]:
    store = rd.write_store(tmp_path / "store", [revision(j) for j in range(count)])
    out = tmp_path / "site"
    return out, site.build(inputs.read([], store, [], []), out)


def window_line(page: Page) -> str:
    text = " ".join(" ".join(page.text).split())
    found = re.search(r"Shown: the newest .*?not shown", text)
    return found.group(0) if found else ""


def test_the_scenario_page_shows_the_newest_revisions_and_the_tags_before_them(tmp_path):
    out, _ = build(tmp_path)
    page = scenario_page(out, "tracer/start_span")
    rows = next(t for c, t in page.tables if c == "revisions")
    assert [r[0] for r in rows[1:]] == [label(j) for j in SHOWN]
    assert [r[3] for r in rows[1:]] == ["–" if j == FAILS else "96" if j >= GROWS else "64"
                                        for j in SHOWN]
    assert window_line(page) == ("Shown: the newest 100 revisions and the 3 release tags "
                                 "before them. 27 older revisions are not shown")
    older = [link for link in page.links if "-older-" in link]
    assert older == ["../sweep/ci-runner_system-351d50959e-0-older-1.html"]


def test_the_older_page_holds_exactly_the_revisions_not_shown(tmp_path):
    out, _ = build(tmp_path)
    page = Page(out / "sweep" / "ci-runner_system-351d50959e-0-older-1.html")
    head, *body = page.tables[0][1]
    assert head[1:1 + len(OLDER)] == [label(j) for j in OLDER]
    assert head[1 + len(OLDER):] == [f"Δ {label(OLDER[0])} → {label(OLDER[-1])}", "Δ %"]
    span = next(r for r in body if r[0] == "tracer/start_span")
    assert span[1:1 + len(OLDER)] == ["64"] * len(OLDER)
    assert not page.images   # a table, no picture
    sweep = Page(out / "sweep" / "ci-runner_system-351d50959e-0.html")
    assert sweep.tables[0][1][0][1:1 + len(SHOWN)] == [label(j) for j in SHOWN]


def test_the_sweep_curve_has_a_vertex_per_measured_revision_and_its_values(tmp_path):
    out, _ = build(tmp_path)
    (src,) = Page(out / "sweep" / "ci-runner_system-351d50959e-0.html").images
    tree = ET.parse(out / src.removeprefix("../"))
    lines = [g for g in tree.iter(f"{SVG}g") if g.findtext(f"{SVG}title") == "tracer/start_span"]
    assert len(lines) == 2   # B/op and allocs/op
    runs = [len(p.get("points").split()) for p in lines[0].iter(f"{SVG}polyline")]
    # The failed build is a gap: the shown revisions before it, and those after.
    assert runs == [SHOWN.index(FAILS), len(SHOWN) - SHOWN.index(FAILS) - 1]
    dots = [c.findtext(f"{SVG}title") for c in lines[0].iter(f"{SVG}circle")]
    assert dots == ["v1.0: tracer/start_span 64", f"{label(GROWS)}: tracer/start_span 96"]


def test_one_more_revision_redraws_the_history_pictures_and_reuses_the_rest(tmp_path):
    out, _ = build(tmp_path)
    before = {p.name for p in (out / "img").iterdir()}
    _, again = build(tmp_path, COUNT + 1)   # j = 130, a commit; j = 30 (a tag) stays shown
    now = {p.name for p in (out / "img").iterdir()}
    # Two scenarios: per scenario B/op and allocs/op, ns/op and the index's sparkline; the
    # sweep curve; the bars of the newest run (titled by its label). Nothing else is drawn.
    assert (again.drawn, again.reused) == (2 * 4 + 1 + 1, 0)
    assert sorted(n.split("-")[0] for n in now - before) == [
        "bars", "history", "history", "history", "history", "spark", "spark", "sweep", "time",
        "time"]
    assert now.isdisjoint(before)
    _, same = build(tmp_path, COUNT + 1)
    assert (same.drawn, same.reused) == (0, len(now))
    assert window_line(scenario_page(out, "tracer/start_span")) == (
        "Shown: the newest 100 revisions and the 4 release tags before them. 27 older "
        "revisions are not shown")


def test_a_history_of_a_window_shows_everything(tmp_path):
    out, _ = build(tmp_path, 100)
    page = scenario_page(out, "tracer/start_span")
    assert len(next(t for c, t in page.tables if c == "revisions")) == 1 + 100
    assert window_line(page) == "" and not list((out / "sweep").glob("*-older-*"))
