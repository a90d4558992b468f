"""A rebuild renders what changed (scripts/allocbench/reports/site.py): the pages of older
revisions that one more revision leaves as they were are copied from the previous site, and
the rebuilt site is the site a build into a new folder makes, file for file; a re-measured old
revision, a newer allocbench or a marker whose keys are not a map renders them again. A window
shows at most window.TAGS release tags.

The store: COUNT commits j = 0 … 329 (no tags), a day apart; tracer/start_span grows from 64 to
96 B/op at j = 150. Expected: the window is j = 230 … 329; the older pages hold j = 0 … 99,
100 … 199 and 200 … 229; one more commit (j = 330) moves j = 230 onto the third.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import report_data as rd
from test_report_site import Page
from allocbench.reports import folder, inputs, site, window

COUNT, GROWS = 330, 150
START = datetime(2025, 1, 1, tzinfo=timezone.utc)
SWEEP = "sweep/ci-runner_system-351d50959e-0"


def revision(j: int, grows: int = GROWS) -> rd.Revision:
    return rd.Revision(rd.sha(j + 1), rd.sha(j + 1)[:10], f"commit {j}",
                       (rd.span(96 if j >= grows else 64, 1), rd.Instance("other", 8, 1)),
                       committed=(START + timedelta(days=j)).isoformat())


def build(tmp_path: Path, count: int, out: str = "site") -> site.Built:
    store = rd.write_store(tmp_path / "store", [revision(j) for j in range(count)])
    return site.build(inputs.read([], store, [], []), tmp_path / out)


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file()}


def older(n: int) -> str:
    return f"{SWEEP}-older-{n}.html"


def test_one_more_revision_copies_the_older_pages_it_leaves_as_they_were(tmp_path):
    first = build(tmp_path, COUNT)
    assert first.copied == 0
    pages = sorted(p for p in files(tmp_path / "site") if "-older-" in p)
    assert pages == [older(1), older(2), older(3)]
    again = build(tmp_path, COUNT + 1)
    assert again.copied == 2   # pages 1 and 2; page 3 gains j = 230
    third = Page(tmp_path / "site" / older(3))
    assert third.tables[0][1][0][1:32] == [rd.sha(j + 1)[:10] for j in range(200, 231)]
    fresh = build(tmp_path, COUNT + 1, "fresh")
    assert fresh.copied == 0
    assert files(tmp_path / "site") == files(tmp_path / "fresh")


def test_what_a_rebuild_reuses_it_links_and_copies_where_links_fail(tmp_path, monkeypatch):
    # Unchanged pages and pictures are hard links to the previous build's files (their bytes
    # not copied); a file system that links nothing gets copies, the same site.
    build(tmp_path, COUNT)
    before = {name: (tmp_path / "site" / name).stat().st_ino for name in files(tmp_path / "site")}
    build(tmp_path, COUNT + 1)
    after = {name: (tmp_path / "site" / name).stat().st_ino for name in files(tmp_path / "site")}
    same = {name for name in after if before.get(name) == after[name]}
    assert {older(1), older(2)} <= same and older(3) not in same and "index.html" not in same
    assert any(name.endswith(".svg") for name in same)
    build(tmp_path, COUNT, "unlinked")

    def refused(src, dst, **_):
        raise PermissionError(1, "Operation not permitted", str(dst))
    monkeypatch.setattr(folder.os, "link", refused)
    build(tmp_path, COUNT + 1, "unlinked")
    assert files(tmp_path / "unlinked") == files(tmp_path / "site")


def test_a_revision_that_starts_an_older_page_renders_only_the_page_before_it(tmp_path):
    # 300 commits: older pages j = 0 … 99 and 100 … 199; the 301st moves j = 200 onto a third,
    # which the second links to. The first is as it was.
    build(tmp_path, 300)
    again = build(tmp_path, 301)
    assert sorted(p for p in files(tmp_path / "site") if "-older-" in p) == [
        older(1), older(2), older(3)]
    assert again.copied == 1
    build(tmp_path, 301, "fresh")
    assert files(tmp_path / "site") == files(tmp_path / "fresh")


def test_a_tag_that_leaves_the_window_changes_only_the_page_of_its_place(tmp_path):
    # Tags at j = 10, 20, …: 22 before the window of j = 230 … 329 (TAGS lowered to 20: the
    # two oldest, j = 10 and 20, are on page 1). A newer tag pushes j = 30 out, onto page 1.
    def tagged(j: int) -> rd.Revision:
        rev = revision(j)
        return rd.Revision(rev.sha, f"v1.{j // 10}" if j % 10 == 0 and j else rev.label,
                           rev.subject, rev.instances, committed=rev.committed)
    store = rd.write_store(tmp_path / "store", [tagged(j) for j in range(COUNT)])
    window.TAGS, tags = 20, window.TAGS
    try:
        site.build(inputs.read([], store, [], []), tmp_path / "site")
        rd.write_store(store, [tagged(j) for j in range(COUNT, COUNT + 10)])   # j = 330: a tag
        again = site.build(inputs.read([], store, [], []), tmp_path / "site")
        site.build(inputs.read([], store, [], []), tmp_path / "fresh")
    finally:
        window.TAGS = tags
    # Pages 1 (j = 30 joins it) and 3 (j = 230 … 239 join it) change; page 2 is copied.
    assert again.copied == 1
    assert files(tmp_path / "site") == files(tmp_path / "fresh")


def test_a_page_whose_revision_was_measured_again_is_rendered_again(tmp_path):
    build(tmp_path, COUNT)
    # j = 50 measured again (a new record in its place) with 80 B/op: page 1 shows it.
    record = rd.record(revision(50), "ci-runner", "system")
    record["results"]["results"][0]["alloc"]["bytes_per_op"] = 80
    rd.write(tmp_path / "store" / "ci-runner" / "system" / rd.sha(51) / "0123456789abcdef.json",
             record)
    again = site.build(inputs.read([], tmp_path / "store", [], []), tmp_path / "site")
    assert again.copied == 2   # pages 2 and 3
    span = next(r for r in Page(tmp_path / "site" / older(1)).tables[0][1]
                if r[0] == "tracer/start_span")
    assert span[1:101] == ["80" if j == 50 else "64" for j in range(100)]
    site.build(inputs.read([], tmp_path / "store", [], []), tmp_path / "fresh")
    assert files(tmp_path / "site") == files(tmp_path / "fresh")


def test_a_newer_allocbench_or_a_marker_without_keys_renders_every_page(tmp_path, monkeypatch):
    build(tmp_path, COUNT)
    monkeypatch.setattr(site, "_code", "another allocbench")
    assert build(tmp_path, COUNT).copied == 0
    assert build(tmp_path, COUNT).copied == 3
    marker = tmp_path / "site" / folder.MARKER
    marker.write_text(marker.read_text().replace('"pages": {', '"pages": [{').replace(
        '}\n}', '}]\n}'))
    assert folder.check_out(tmp_path / "site").pages == {}
    assert build(tmp_path, COUNT).copied == 0


def test_a_window_shows_the_newest_tags_before_it_and_no_more(tmp_path):
    # 400 revisions, a tag v1.<j> at every other one: 150 tags before the newest 100.
    points = tuple(inputs.Point(rd.sha(j + 1), f"v1.{j}" if j % 2 else rd.sha(j + 1)[:10], "",
                                "ok", "", {}, "") for j in range(400))
    found = window._of(inputs.History("m", "system", "store", points))
    tags = [j for j in range(300) if j % 2][-window.TAGS:]
    assert window.TAGS == 100 and tags[0] == 101
    assert found.shown == [*tags, *range(300, 400)]
    # Older pages: a page per 100 places, the tags shown left out.
    assert found.older == [[j for j in range(k, k + 100) if j not in tags]
                           for k in (0, 100, 200)]
    assert [len(page) for page in found.older] == [100, 50, 50]
    assert sorted(found.shown + [j for page in found.older for j in page]) == list(range(400))
