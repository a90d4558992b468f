"""Which revisions of a history a page shows in full: the newest WINDOW and the newest TAGS
release tags before them (inputs.is_tag). The others ("older") are listed on pages of their
own, a page per WINDOW places of the sweep order (the window's tags left out), oldest first:
one more revision at the end changes only the last of them, and a tag that leaves the window
only the page of its place.

Pages of every revision (one row each per scenario, one point each per chart) made a site of
31 MB at 500 revisions, growing with the history; the window keeps a page the size it has at a
few hundred revisions, with a line that says how many are not shown and links to the rest. The
tags shown are bounded too: a project that tags every fifth commit has 400 tags in 2,000
revisions, and a page of them all costs what a page of every revision did.
"""

from __future__ import annotations

from dataclasses import dataclass

from allocbench.reports.inputs import History, is_tag

WINDOW = 100   # the newest revisions every page shows; also the revisions of an older page
TAGS = 100     # the release tags before them that every page shows, the newest


@dataclass(frozen=True)
class Window:
    shown: list[int]           # indices into history.points, in sweep order
    older: list[list[int]]     # the others, WINDOW a page, oldest first

    @property
    def hidden(self) -> int:
        return sum(map(len, self.older))


_made: dict[int, tuple[History, Window]] = {}   # a site asks once per page, of one history


def of(history: History) -> Window:
    made = _made.get(id(history))
    if made is None or made[0] is not history:
        if len(_made) > 16:   # the histories of one site; a long process builds many
            _made.clear()
        made = _made[id(history)] = (history, _of(history))
    return made[1]


def _of(history: History) -> Window:
    points = history.points
    start = max(0, len(points) - WINDOW)
    tags = [i for i, p in enumerate(points[:start]) if is_tag(p.sha, p.label)][-TAGS:]
    shown = set(tags)
    # Pages of WINDOW places in the sweep order each, not of WINDOW revisions: a tag that
    # leaves the window's TAGS (a newer tag came) joins the page of its place, and no other
    # page changes with it.
    older = [[i for i in range(k, min(k + WINDOW, start)) if i not in shown]
             for k in range(0, start, WINDOW)]
    return Window([*tags, *range(start, len(points))], [page for page in older if page])
