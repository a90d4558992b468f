"""reports/inputs.sweep_order: the order a report draws a store's revisions in. Tags in version
order; the other revisions by commit date, each after the tags committed before it, so a
bisect's probes between two releases are drawn between them."""

from __future__ import annotations

from allocbench.reports.inputs import Point, sweep_order


def point(sha: str, label: str, committed: str | None, recorded: str = "") -> Point:
    record = {"recorded": recorded, **({"committed": committed} if committed else {})}
    return Point(sha * 40, label, "", "ok", "", record, "")


def labels(points: list[Point]) -> list[str]:
    return [p.label for p in sweep_order(points)]


def test_probes_between_two_releases_are_drawn_between_them():
    points = [point("1", "v1.0", "2026-01-01"), point("2", "v2.0", "2026-04-01"),
              point("3", "v2.1", "2026-06-01"),
              point("a", "a" * 10, "2026-03-01"), point("b", "b" * 10, "2026-02-01"),
              point("c", "c" * 10, "2026-07-01"), point("d", "d" * 10, "2025-12-01")]
    assert labels(points) == ["d" * 10, "v1.0", "b" * 10, "a" * 10, "v2.0", "v2.1", "c" * 10]


def test_tags_keep_version_order_and_a_backport_moves_no_commit_back():
    # v1.10 is newer than v1.9 by version; v1.9.1, a backport, is dated after v2.0.
    points = [point("1", "v1.9", "2026-01-01"), point("2", "v1.10", "2026-02-01"),
              point("3", "v1.9.1", "2026-05-01"), point("4", "v2.0", "2026-03-01"),
              point("a", "a" * 10, "2026-04-01")]
    # Version order: v1.9, v1.9.1, v1.10, v2.0. The commit of April is after v2.0 (March),
    # the last tag committed before it, although v1.9.1 (May) is not.
    assert labels(points) == ["v1.9", "v1.9.1", "v1.10", "v2.0", "a" * 10]
    # One of February, after v1.10 (February) and before v2.0, past the backport too.
    points.append(point("b", "b" * 10, "2026-02-15"))
    assert labels(points) == ["v1.9", "v1.9.1", "v1.10", "b" * 10, "v2.0", "a" * 10]


def test_commits_of_one_date_in_the_order_measured_and_undated_ones_last():
    points = [point("1", "v1.0", "2026-01-01"),
              point("b", "b" * 10, "2026-02-01", recorded="2026-02-03"),
              point("a", "a" * 10, "2026-02-01", recorded="2026-02-02"),
              point("u", "u" * 10, None), point("2", "v2.0", "2026-03-01")]
    assert labels(points) == ["v1.0", "a" * 10, "b" * 10, "v2.0", "u" * 10]
