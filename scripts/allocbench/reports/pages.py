"""What each page of a report shows, as plain data for the templates (site.py renders them).

Numbers are formatted here with the console's and the markdown's own forms (harness/run_report.py), so a
page shows what the other outputs show. Texts stay raw: the templates escape them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from allocbench.base import packages
from allocbench.harness import run_report, scaling
from allocbench.history import sweep_table
from allocbench.sites import per_op as sites_of
from allocbench.base.names import slug   # site.py names each page by pages.slug
from allocbench.harness.run_report import format_value

from allocbench.reports import charts, plots, steps as steps_of, window as window_of
from allocbench.reports.inputs import UNREADABLE, History, Point, Site
from allocbench.reports.markdown import to_html
from allocbench.reports.pictures import Pictures

EXACT_SHOWN = ("bytes_per_op", "allocs_per_op")
LATEST = (("alloc", "bytes_per_op"), ("alloc", "allocs_per_op"),
          ("instructions", "instructions_per_op"), ("time", "ns_per_op"), ("time", "ops_per_s"))
OPTIONAL = ("instructions",)   # passes whose columns and charts show only where they ran
TIME_NOTE = 5.0   # percent: time changes listed on the index (directional)


@dataclass(frozen=True)
class Links:
    scenarios: dict[str, str]      # instance name → page
    sweeps: list[tuple[History, str]]
    runs: dict[tuple[int, int], str]   # (history index, point index) → page
    comparisons: list[tuple[str, str, str]]   # (title, origin, page)
    older: dict[int, list[str]]    # history index → its pages of older revisions, oldest first

    def older_of(self, history: History) -> list[str]:
        return next((self.older.get(i, []) for i, (h, _) in enumerate(self.sweeps)
                     if h is history), [])


def _window(history: History, links: Links) -> dict[str, Any]:
    """What a page says of the revisions it does not show, with the pages that list them."""
    found = window_of.of(history)
    points = history.points
    return {"shown": found.shown, "older": found.older, "hidden": found.hidden,
            "tags": len(found.shown) - min(window_of.WINDOW, len(points)),
            "newest": min(window_of.WINDOW, len(points)),
            "pages": [{"href": href, "first": points[chunk[0]].label,
                       "last": points[chunk[-1]].label, "count": len(chunk)}
                      for chunk, href in zip(found.older, links.older_of(history))]}


def _fields(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(f["section"], f["key"]): f for f in doc["fields"]}


def _title(field: dict[str, Any] | None, key: str) -> str:
    return (field or {}).get("column") or key


def _value(result: dict[str, Any] | None, section: str, key: str) -> float | None:
    if result is None or result.get("error"):
        return None
    found = (result.get(section) or {}).get(key)
    return None if found is None else float(found)


def _shown(value: float | None, unit: str) -> str:
    return "–" if value is None else format_value(value, unit)


def percentile(ordered: list[float], q: float) -> float:
    """numpy's default (linear) percentile of sorted values: a site computes thousands of
    these on a handful of samples each, where numpy's overhead would dominate."""
    at = (len(ordered) - 1) * q / 100
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def spread(result: dict[str, Any] | None) -> dict[str, float] | None:
    """Median, interquartile range and min–max of an instance's ns/op samples."""
    samples = ((result or {}).get("time") or {}).get("samples_ns_per_op")
    if not samples or (result or {}).get("error"):
        return None
    ordered = sorted(map(float, samples))
    return {"median": percentile(ordered, 50), "q1": percentile(ordered, 25),
            "q3": percentile(ordered, 75), "min": ordered[0], "max": ordered[-1]}


# ---- index


def _changes(history: History) -> dict[str, Any] | None:
    """The exact metrics that changed between the last two measured revisions, then the time
    changes of TIME_NOTE % or more (directional)."""
    measured = history.measured()
    if len(measured) < 2:
        return None
    old, new = measured[-2], measured[-1]
    exact, time = [], []
    for name in history.names():
        a, b = old.result(name), new.result(name)
        if a is None or b is None:
            continue
        for f in new.doc["fields"]:
            before, after = _value(a, f["section"], f["key"]), _value(b, f["section"], f["key"])
            if before is None or after is None or before == after:
                continue
            row = {"name": name, "metric": _title(f, f["key"]), "delta": after - before,
                   "old": format_value(before, f["unit"]), "new": format_value(after, f["unit"]),
                   "percent": (after - before) / before * 100 if before else None}
            if f["gate"] == "exact":
                exact.append(row)
            elif (f["section"], f["key"]) == ("time", "ns_per_op") and row["percent"] is not None \
                    and abs(row["percent"]) >= TIME_NOTE and old.timed and new.timed:
                time.append(row)
    time.sort(key=lambda r: -abs(r["percent"]))
    return {"history": history.title, "old": old.label, "new": new.label, "exact": exact,
            "time": time}


def _largest(site: Site, links: Links) -> dict[str, Any]:
    """steps.py's largest allocation changes, as rows: each metric before → after (Δ), and
    the commit a bisect named, else the command that would name it."""
    found = steps_of.steps(site.histories, site.bisects)
    several = len(site.histories) > 1
    rows = []
    for step in found[:steps_of.SHOWN]:
        fields = _fields(step.new.summary["results"])
        cells = []
        for metric in steps_of.METRICS:
            before, after = step.values[metric]
            unit = fields[("alloc", metric)]["unit"]
            cells.append({"text": f"{format_value(before, unit)} → {format_value(after, unit)}",
                          "delta": after - before})
        rows.append({"name": step.name, "href": links.scenarios.get(step.name), "cells": cells,
                     "old": step.old.label, "new": step.new.label,
                     "history": step.history.title if several else "",
                     "commit": step.commit, "sha": step.new.sha[:10],
                     "bisect": f"allocbench bisect {step.name} --good {step.old.label} --bad "
                               f"{step.new.label} --all"})
    return {"rows": rows, "more": len(found) - len(rows),
            "columns": [_title(_fields(found[0].new.summary["results"]).get(("alloc", m)), m)
                        for m in steps_of.METRICS] if found else []}


def index(site: Site, links: Links, pics: Pictures) -> dict[str, Any]:
    latest = []
    for h, history in enumerate(site.histories):
        measured = [i for i, p in enumerate(history.points) if p.ok]
        if not measured:
            latest.append({"history": history, "point": None, "rows": [], "columns": [],
                           "run": None, "window": None})
            continue
        point = history.points[measured[-1]]
        fields = _fields(point.doc)
        columns = [(section, key, fields.get((section, key))) for section, key in LATEST
                   if (section, key) in fields and (section not in OPTIONAL or any(
                       _value(r, section, key) is not None for r in point.doc["results"]))]
        rows = []
        window = _window(history, links)
        for result in point.doc["results"]:
            name = result["name"]
            history_values = [_value(history.points[i].summary_result(name), "alloc",
                                     "bytes_per_op") for i in window["shown"]]
            rows.append({
                "name": name, "href": links.scenarios.get(name),
                "error": result.get("error"),
                "cells": [_shown(_value(result, s, k), f["unit"]) for s, k, f in columns],
                "spark": pics.get("spark", charts.sparkline, f"B/op of {name}",
                                  history_values)})
        latest.append({"history": history, "point": point, "rows": rows,
                       "columns": [_title(f, k) for _, k, f in columns],
                       "run": links.runs.get((h, measured[-1])), "window": window})
    return {"largest": _largest(site, links),
            "changes": [c for h in site.histories if (c := _changes(h))], "latest": latest,
            "links": links, "problems": site.problems}


# ---- scenario


def _marks(points: list[Point], name: str) -> dict[int, str]:
    """The revisions drawn as ✗: failed, unreadable, or the instance failed there."""
    return {i: status for i, p in enumerate(points)
            if (status := _status(p, p.summary_result(name))) != "ok"
            and not (p.ok and not p.has(name))}


def _fit_of(history: History, name: str) -> list[scaling.Fit]:
    """The fits (scaling.py) of the newest revision that measured `name`, that include it."""
    point = next((p for p in reversed(history.points) if p.has(name)), None)
    if point is None:
        return []
    result = point.result(name)
    args = result.get("args") or {}
    out = []
    for f in scaling.fits(point.doc["results"]):
        fixed = {k: v for k, v in args.items() if k != f.argument}
        if (f.scenario == result["scenario"] and f.threads == result["threads"]
                and f.argument in args and dict(f.fixed) == fixed):
            out.append(f)
    return out


def _fit_pictures(fits: list[scaling.Fit], pics: Pictures) -> list[dict[str, Any]]:
    return [{"fit": f, "src": pics.get("fit", plots.fit, f, "B")} for f in fits]


def _allocators(site: Site, primary: History, name: str) -> dict[str, Any] | None:
    """The newest revision that every allocator of the primary's machine measured: usable
    bytes, peak live bytes and the byte counters (footprints), per allocator."""
    same = [h for h in site.histories if h.machine == primary.machine
            and h.origin == primary.origin and any(p.has(name) for p in h.points)]
    if len(same) < 2:
        return None
    shared = None
    for point in reversed(primary.points):
        found = [h.at(point.sha, name) for h in same]
        if point.sha and all(found):
            shared = found
            break
    if shared is None:
        return None
    results = [p.result(name) for p in shared]
    groups = []
    for key in ("usable_bytes_per_op", "peak_live_bytes"):
        groups.append((key, "B", [(h.allocator, _value(r, "alloc", key) or 0.0)
                                  for h, r in zip(same, results)]))
    counters = sorted({c for r in results for c, v in (r.get("counters") or {}).items()
                       if v.get("unit") == "B"})
    for counter in counters:
        groups.append((counter, "B", [(h.allocator, float(((r.get("counters") or {}).get(
            counter) or {}).get("value", 0.0))) for h, r in zip(same, results)]))
    requested = {_value(r, "alloc", "bytes_per_op") for r in results}
    return {"label": shared[0].label, "groups": groups, "allocators": [h.allocator for h in same],
            "bytes_per_op": results[0]["alloc"]["bytes_per_op"] if len(requested) == 1 else None,
            "requested": sorted(v for v in requested if v is not None)}


def _status(point: Point, result: dict[str, Any] | None) -> str:
    """'ok', or what kept the revision from measuring the instance, and why."""
    if result is not None:
        return f"failed: {result['error']}" if result.get("error") else "ok"
    if point.ok:
        return "not in this revision's plugin"
    return f"unreadable: {point.problem}" if point.status == UNREADABLE else point.problem


def _sites(costs: list[Any] | None, name: str, pics: Pictures) -> dict[str, Any] | None:
    """The instance's per-op site table (allocbench profile) and its flame graph."""
    if costs is None:
        return None
    rows = [{"frames": [sites_of.where(f) for f in c.site.frames], "via": c.site.via,
             "other_thread": c.site.background, "allocs": sites_of.count_text(c.allocs),
             "bytes": sites_of.count_text(c.bytes), "sizes": sites_of.sizes_text(c.sizes)}
            for c in costs]
    stacks = [([*(sites_of.short_function(f) for f, _, _ in reversed(c.site.frames)),
                *([c.site.via] if c.site.via else [])]
               if not c.site.background else
               ["another thread", *(sites_of.short_function(f)
                                    for f, _, _ in reversed(c.site.frames))],
               float(c.bytes), f"{sites_of.where(c.site.frames[0])}: {rows[i]['sizes']}")
              for i, c in enumerate(costs) if c.bytes > 0]
    flame = pics.get("flame", charts.flame, f"B/op of {name} by call stack", stacks) \
        if stacks else None
    total = sum(c.bytes for c in costs), sum(c.allocs for c in costs)
    return {"rows": rows, "flame": flame, "bytes": sites_of.count_text(total[0]),
            "allocs": sites_of.count_text(total[1])}


def scenario(site: Site, name: str, links: Links, pics: Pictures) -> dict[str, Any]:
    found_sites = _sites(site.sites.get(name), name, pics)
    histories = [h for h in site.histories if any(p.has(name) for p in h.points)]
    if not histories:   # profiled only
        return {"name": name, "primary": None, "histories": [], "charts": [],
                "time_charts": [], "rows": [], "fits": [], "allocators": None,
                "links": links, "sites": found_sites, "window": None}
    # The longest history draws the allocations (a single results file beside a store must
    # not hide the sweep); the others have the same B/op by construction.
    histories.sort(key=lambda h: -len(h.measured()))
    primary = histories[0]
    window = _window(primary, links)
    shown = [primary.points[i] for i in window["shown"]]
    labels = [p.label for p in shown]
    marks = _marks(shown, name)
    charts_out = []
    for section, key, unit in (("alloc", "bytes_per_op", "B"),
                               ("alloc", "allocs_per_op", "allocs"),
                               ("instructions", "instructions_per_op", "Ir")):
        values = tuple(_value(p.summary_result(name), section, key) for p in shown)
        if section in OPTIONAL and all(v is None for v in values):
            continue
        charts_out.append({"title": f"{key} — exact", "src": pics.get(
            "history", charts.line_chart, f"{key} of {name}", labels,
            [charts.Series(key, values)], y_title=f"{key} ({unit})", marks=marks)})
    time_charts = []
    for history in histories:
        own = [history.points[i] for i in window_of.of(history).shown]
        spreads = [spread(p.summary_result(name)) if p.timed else None for p in own]
        if not any(spreads):
            continue
        hl = [p.label for p in own]
        series = charts.Series("median ns/op", tuple(s and s["median"] for s in spreads),
                               tuple(s and s["q1"] for s in spreads),
                               tuple(s and s["q3"] for s in spreads))
        time_charts.append({"title": f"ns/op on {history.title} — directional", "src": pics.get(
            "time", charts.line_chart, f"ns/op of {name} on {history.title}", hl, [series],
            y_title="ns/op (median, band: IQR)")})
    rows = []
    for point in shown:
        result = point.summary_result(name)
        s = spread(result) if point.timed else None
        rows.append({
            "label": point.label, "sha": point.sha[:10], "subject": point.subject,
            "status": _status(point, result),
            "cells": [_shown(_value(result, "alloc", k), u) for k, u in (
                ("bytes_per_op", "B"), ("allocs_per_op", "allocs"), ("first_op_bytes", "B"),
                ("peak_live_bytes", "B"))],
            "time": None if s is None else {k: format_value(v, "ns") for k, v in s.items()}})
    fits = _fit_pictures(_fit_of(primary, name), pics)
    allocators = _allocators(site, primary, name)
    if allocators:
        allocators["src"] = pics.get("bars", charts.bars, f"allocators of {name}",
                                     allocators["groups"])
    return {"name": name, "primary": primary, "histories": histories, "charts": charts_out,
            "time_charts": time_charts, "rows": rows, "fits": fits, "allocators": allocators,
            "links": links, "sites": found_sites, "window": window}


# ---- sweep, run, comparison


def _curve(columns: list[sweep_table.Column], metrics: list[str], pics: Pictures) -> str:
    """sweep --plot's curve (one panel per metric, one line per scenario), as charts.py's SVG."""
    known, names = sweep_table.fields(columns), sweep_table.instances(columns)
    panels = []
    for metric in metrics:
        section = sweep_table.section_of(known, metric)
        title = (known.get((section, metric)) or {}).get("column") or metric
        lines = []
        for n, row in zip(names, sweep_table.rows(columns, names, section, metric)):
            lines.append((n, [None if isinstance(v, str) else v for v in row]))
        panels.append((f"{title} (exact)", lines))
    return pics.get("sweep", charts.sweep_curve, "B/op and allocs/op of every scenario",
                    [c.label for c in columns], [not c.ok and c.record is not None
                                                 for c in columns], panels)


def sweep(history: History, links: Links, pics: Pictures) -> dict[str, Any]:
    """The sweep table and curve of the window's revisions (window.py)."""
    window = _window(history, links)
    columns = [history.points[i].column() for i in window["shown"]]
    metrics = list(EXACT_SHOWN)
    table = to_html(sweep_table.markdown(columns, metrics))
    curve = _curve(columns, metrics, pics) if any(c.ok for c in columns) else None
    return {"history": history, "table": table, "curve": curve, "links": links,
            "window": window, "older": None}


def _older_page(history: History, page: int, links: Links) -> dict[str, Any]:
    """Everything the `page`-th page of older revisions shows but its table: what the page's
    key (older_key) covers. Not the history's length, the number of older pages nor the
    other pages' ranges: one more revision changes them, and then every older page would
    change with it (a new page changes the one before it: its link to the next)."""
    window = window_of.of(history)
    chunk, hrefs = window.older[page], links.older_of(history)
    points = history.points
    return {"title": history.title, "origin": history.origin, "page": page + 1,
            "count": len(chunk), "first": points[chunk[0]].label,
            "last": points[chunk[-1]].label,
            "sweep": next(path for h, path in links.sweeps if h is history),
            "previous": hrefs[page - 1] if page else None,
            "next": hrefs[page + 1] if page + 1 < len(hrefs) else None}


def older_key(history: History, page: int, links: Links) -> list[Any] | None:
    """What the page of older revisions is made of: its line and each revision's record (its
    version: store.Store.version) and the words the table shows of it; None when a record's
    version is unknown (the page is then always rendered)."""
    chunk = window_of.of(history).older[page]
    points = [history.points[i] for i in chunk]
    if not all(p.version for p in points):
        return None
    return [_older_page(history, page, links),
            [[p.sha, p.label, p.subject, p.status, p.problem, p.version] for p in points]]


def older(history: History, page: int, links: Links) -> dict[str, Any]:
    """The sweep table of the history's `page`-th page of older revisions (0: the oldest)."""
    chunk = window_of.of(history).older[page]
    table = to_html(sweep_table.markdown([history.points[i].column() for i in chunk],
                                         list(EXACT_SHOWN)))
    return {"history": history, "table": table, "curve": None, "links": links,
            "window": None, "older": _older_page(history, page, links)}


def run(point: Point, history: History, pics: Pictures, links: Links | None = None
        ) -> dict[str, Any]:
    doc = point.doc
    body = to_html(run_report.markdown(doc, f"allocbench results: {point.label}"))
    groups = []
    for key, unit in (("bytes_per_op", "B"), ("allocs_per_op", "allocs")):
        groups.append((key, unit, [(r["name"], _value(r, "alloc", key) or 0.0)
                                   for r in doc["results"] if not r.get("error")]))
    bars = pics.get("bars", charts.bars, f"{point.label}: B/op and allocs/op", groups,
                    label_width=430)
    fits = _fit_pictures(scaling.fits(doc["results"]), pics)
    return {"point": point, "history": history, "body": body, "bars": bars, "fits": fits,
            "links": links}


def _side_rows(summary: Any, unit: str) -> dict[str, str]:
    from allocbench.gate import compare_format
    def n(v: float | None) -> str:
        return "–" if v is None else compare_format.number(v)

    def p(v: float | None) -> str:
        return "–" if v is None else f"{v:.3g}"
    return {"min": n(summary.min), "mean ± sd": f"{n(summary.mean)} ± {n(summary.sd)}",
            "median ± MAD": f"{n(summary.median)} ± {n(summary.mad)}", "p75": n(summary.p75),
            "p95": n(summary.p95), "p99": n(summary.p99), "max": n(summary.max),
            "cv": f"{summary.cv:.2%}", "sem": n(summary.sem),
            "samples": f"{summary.n} ({summary.forks} fork{'s' if summary.forks != 1 else ''})",
            "95% interval of the mean": f"[{n(summary.ci_low)}; {n(summary.ci_high)}] {unit}",
            "Shapiro-Wilk p": p(summary.shapiro_p), "Ljung-Box p (lag 1)": p(summary.ljung_box_p),
            "dip test p": p(summary.dip_p)}


def comparison(origin: str, doc: dict[str, Any], links: Links, pics: Pictures
               ) -> dict[str, Any]:
    packages.ensure(["python3-statsmodels"])
    from allocbench.reports import stats  # scipy and statsmodels: only comparisons need them
    from allocbench.gate import compare_format, compare_json
    parsed, fail_on = compare_json.from_json(doc, origin)
    metrics = []
    for inst in parsed.instances:
        for t in inst.time:
            if not t.base_forks or not t.cand_forks:
                continue
            sides = [(f"base {parsed.base.label}", [list(f) for f in t.base_forks]),
                     (f"candidate {parsed.cand.label}", [list(f) for f in t.cand_forks])]
            summaries = [stats.summarize(forks) for _, forks in sides]
            metrics.append({
                "instance": inst.name, "metric": t.metric, "unit": t.unit, "verdict": t.verdict,
                "interval": compare_format.time_interval(t, str),
                "sides": [(label, _side_rows(s, t.unit))
                          for (label, _), s in zip(sides, summaries)],
                "src": pics.get("samples", plots.samples, f"{inst.name}: {t.metric}", t.unit,
                                sides)})
    return {"title": f"{parsed.base.label} → {parsed.cand.label}", "origin": origin,
            "comment": to_html(compare_format.markdown(parsed, fail_on, max_chars=None)),
            "metrics": metrics,
            "tests": stats.TESTS, "links": links,
            "gated": bool(doc["gate"]["failed"])}
