"""The sweep table release engineers paste into a pull request: one row per scenario, one column
per revision, the allocation metric, then the change first → last (Δ columns only when two
revisions or more were measured). B/op always comes first; --metric adds tables (metrics_of).
Time gets its own table marked directional and no Δ (one process per revision: read trends, not
points).

Cells: a number; ✗ the revision failed (build, run or timeout — see the notes); ? its record
cannot be read (a report shows the reason and builds the rest); – the scenario is
not in that revision's plugin (graft today's scenarios with --graft to measure it there); · not
measured yet; ∅ in the time table: the revision was measured without the time pass (--no-time).
¹ after a Δ: from the first to the last revision that measured the scenario. The notes under the
tables explain every mark the tables use.

Metrics, their column names and what a heading says of them come from the results' own field
list: its `gate` (fields.h) makes a table "exact", "shown, never gated" or "directional only".
A table that no revision measured has no field list to read; FALLBACK heads it.

Labels (git tags), names, error lines and log paths come from git and from stores that may have
been merged from other machines: every one is escaped for markdown or CSV (escape.py).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from allocbench import results
from allocbench.errors import UserError
from allocbench.escape import csv_cell, md_code, md_text
from allocbench.store import problem

FAILED, ABSENT, UNMEASURED, NO_TIME, PARTIAL, UNREADABLE = "✗", "–", "·", "∅", "¹", "?"
TIME = ("time", "ns_per_op")
GATES = {"exact": "exact", "info": "shown, never gated", "time": "directional only"}
# The field list comes with the results (every document carries the one fields.h writes), and a
# table that no revision measured has none. These stand in for it there: the two metrics that
# have a column name, as fields.h has them (test_fallback_headings_are_the_runners pins them).
# Another metric is then headed by its key alone, claiming no gate.
FALLBACK = {("alloc", "bytes_per_op"): {"column": "B/op", "gate": "exact"},
            ("alloc", "allocs_per_op"): {"column": "allocs/op", "gate": "exact"}}


@dataclass(frozen=True)
class Column:
    sha: str
    label: str
    record: dict[str, Any] | None
    unreadable: str = ""   # why the revision's record could not be read (a report shows it)

    @property
    def ok(self) -> bool:
        return self.record is not None and self.record["status"] == "ok"


def metrics_of(given: list[str] | None) -> list[str]:
    """The allocation tables to show: B/op first, always (--metric adds a table, it does not
    replace B/op's), then each given metric once, in the order given."""
    return list(dict.fromkeys(["bytes_per_op", *(given or [])]))


def fields(columns: list[Column]) -> dict[tuple[str, str], dict[str, Any]]:
    fields: dict[tuple[str, str], dict[str, Any]] = {}
    for column in columns:
        if column.ok:
            for f in column.record["results"]["fields"]:
                fields.setdefault((f["section"], f["key"]), f)
    return fields


def field_of(known: dict[tuple[str, str], dict[str, Any]], section: str, key: str
             ) -> dict[str, Any]:
    """The metric's entry in the results' field list; FALLBACK's when the table has no list."""
    return known.get((section, key), {}) if known else FALLBACK.get((section, key), {})


def heading(field: dict[str, Any], key: str) -> str:
    """'#### B/op — exact': the metric's column name (its key when it has none) and what its gate
    makes of a change; no claim when the gate is unknown."""
    title, gate = md_text(field.get("column") or key), GATES.get(field.get("gate", ""))
    return f"#### {title} — {gate}" if gate else f"#### {title}"


def check_metrics(columns: list[Column], metrics: list[str]) -> None:
    known = [key for section, key in fields(columns) if section == "alloc"]
    for metric in metrics:
        if known and metric not in known:
            raise UserError(f"--metric {metric}: not an allocation metric of these results; "
                            f"choose from {', '.join(known)}")


def instances(columns: list[Column]) -> list[str]:
    """Today's order first (the newest revision's), then scenarios only older ones have."""
    names: dict[str, None] = {}
    for column in reversed(columns):
        if column.ok:
            names.update((r["name"], None) for r in column.record["results"]["results"])
    return list(names)


def changed(columns: list[Column], names: list[str], metrics: list[str]) -> list[str]:
    """The instances whose measured value of some metric differs between revisions."""
    def moves(name: str, metric: str) -> bool:
        values = {value(c, name, "alloc", metric) for c in columns}
        return len({v for v in values if not isinstance(v, str)}) > 1
    return [name for name in names if any(moves(name, metric) for metric in metrics)]


def value(column: Column, name: str, section: str, key: str) -> float | str:
    if column.unreadable:
        return UNREADABLE
    if column.record is None:
        return UNMEASURED
    if not column.ok:
        return FAILED
    for result in column.record["results"]["results"]:
        if result["name"] == name:
            return _cell(column, result, section, key)
    return ABSENT


def _cell(column: Column, result: dict[str, Any], section: str, key: str) -> float | str:
    """A measured instance's value: ✗ when the instance failed, ∅ for time when the revision was
    measured without the time pass (nothing failed there)."""
    if result.get("error"):
        return FAILED
    if section == TIME[0] and not column.record["time_measured"]:
        return NO_TIME
    found = results.metric(result, {"section": section, "key": key})
    return FAILED if found is None else found


def _timed(columns: list[Column]) -> bool:
    """Whether some revision has time, so the time table is shown."""
    return any(c.ok and c.record["time_measured"] for c in columns)


def _number(value: float) -> str:
    if value == int(value):
        return f"{int(value)}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def _delta(values: list[float | str]) -> tuple[float, float | None, int, int] | None:
    """(change, percent or None, first index, last index) over the measured values."""
    measured = [(i, v) for i, v in enumerate(values) if not isinstance(v, str)]
    if len(measured) < 2:
        return None
    (first, a), (last, b) = measured[0], measured[-1]
    return b - a, (b - a) / a * 100 if a else None, first, last


def _table(columns: list[Column], names: list[str], section: str, key: str, with_delta: bool
           ) -> tuple[list[str], set[str]]:
    """The table's lines and the marks its cells use (the notes explain each)."""
    head = ["scenario", *(md_text(c.label) for c in columns)]
    if with_delta:
        head += [f"Δ {md_text(columns[0].label)} → {md_text(columns[-1].label)}", "Δ %"]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    marks: set[str] = set()
    for name in names:
        values = [value(c, name, section, key) for c in columns]
        marks.update(v for v in values if isinstance(v, str))
        cells = [v if isinstance(v, str) else _number(v) for v in values]
        if with_delta:
            delta = _delta(values)
            partial = delta is not None and delta[2:] != (0, len(columns) - 1)
            cells += _delta_cells(delta, partial)
            if partial:
                marks.add(PARTIAL)
        lines.append(f"| {md_code(name)} | " + " | ".join(cells) + " |")
    return lines, marks


def _delta_cells(delta: tuple[float, float | None, int, int] | None, partial: bool
                 ) -> list[str]:
    if delta is None:
        return ["", ""]
    change, percent = delta[:2]
    mark = f" {PARTIAL}" if partial else ""
    if change == 0:
        return [f"0{mark}", "0.0%"]
    return [f"{change:+g}{mark}", "" if percent is None else f"{percent:+.1f}%"]


def markdown(columns: list[Column], metrics: list[str], changed_only: bool = False) -> str:
    """The tables; `changed_only`: only the scenarios whose allocation metrics move."""
    names = instances(columns)
    known = fields(columns)
    out: list[str] = []
    if changed_only:
        shown = changed(columns, names, metrics)
        if len(shown) < len(names):
            out += [f"_{len(names) - len(shown)} of {len(names)} scenarios have the same "
                    f"{', '.join(map(md_text, metrics))} in every revision and are not "
                    "shown._", ""]
        names = shown
        if not names:
            return "\n".join(out + _notes(columns, set())).rstrip() + "\n"
    marks: set[str] = set()
    with_delta = sum(c.ok for c in columns) > 1   # one measured revision has nothing to compare
    for metric in metrics:
        out += [heading(field_of(known, "alloc", metric), metric), ""]
        lines, used = _table(columns, names, "alloc", metric, with_delta)
        out += lines
        if PARTIAL in used:
            out.append(f"\n{PARTIAL} from the first to the last revision that measured the "
                       "scenario")
        out.append("")
        marks |= used
    if _timed(columns):
        lines, used = _time_table(columns, names, known)
        out += lines
        marks |= used
    out += _notes(columns, marks)
    return "\n".join(out).rstrip() + "\n"


def _time_table(columns: list[Column], names: list[str],
                known: dict[tuple[str, str], dict[str, Any]]) -> tuple[list[str], set[str]]:
    out = [heading(field_of(known, *TIME), TIME[1]), "",
           "_One process per revision, on the machine that measured it: read trends, not "
           "points. Time has no Δ here; gate it with `allocbench ab`._", ""]
    lines, marks = _table(columns, names, *TIME, with_delta=False)
    out += lines
    machines = sorted({c.record["machine"] for c in columns if c.ok})
    if len(machines) > 1:
        out.append(f"\nMeasured on {', '.join(map(md_text, machines))}: times of different "
                   "machines do not compare.")
    return out + [""], marks


def name(column: Column) -> str:
    """`v1.2` (1a2b3c4d5e), or the short sha alone when that is the label (markdown)."""
    if column.label == column.sha[:len(column.label)]:
        return md_code(column.label)
    return f"{md_code(column.label)} ({md_text(column.sha[:10])})"


def _revision_note(c: Column, marks: set[str]) -> str | None:
    """What the column's mark means for that revision, and what to do about it."""
    if c.unreadable:
        return f"- {UNREADABLE} {name(c)}: unreadable: {md_text(c.unreadable)}"
    if c.record is None:
        return f"- {UNMEASURED} {name(c)}: not measured yet"
    if not c.ok:
        status, _, error = problem(c.record).partition(": ")
        error = f": {md_code(error)}" if error else ""
        return (f"- {FAILED} {name(c)} {md_text(status)}{error} — log: "
                f"{md_text(c.record.get('log', 'n/a'))}")
    if NO_TIME in marks and not c.record["time_measured"]:
        return (f"- {NO_TIME} {name(c)}: measured without the time pass (--no-time); run the "
                "sweep again without --no-time to time it")
    return None


def _notes(columns: list[Column], marks: set[str]) -> list[str]:
    """A line per revision whose column has a mark, one for the marks of scenarios, then what
    keeps the columns from comparing like with like."""
    notes = [note for c in columns if (note := _revision_note(c, marks))]
    if ABSENT in marks:
        notes.append(f"- {ABSENT} the revision's plugin does not have the scenario: graft today's "
                     "scenarios (--graft) to measure it there")
    harnesses = {c.record["results"]["context"].get("harness", {}).get("version")
                 for c in columns if c.ok}
    if len(harnesses) > 1:
        versions = ", ".join(md_text(v) for v in sorted(map(str, harnesses)))
        notes.append(f"- measured by allocbench-run versions {versions}: rerun with --force to "
                     "measure everything with one")
    recipes = {c.record["recipe"] for c in columns if c.record is not None}
    if len(recipes) > 1:
        notes.append(f"- the revisions were measured with {len(recipes)} different builds or "
                     "grafts: rerun the sweep with one set of options to compare like with like")
    return (["Notes:", "", *notes] if notes else [])


def csv_text(columns: list[Column], metrics: list[str], changed_only: bool = False) -> str:
    """metric, scenario, one column per revision, delta, delta_percent; gaps are empty. The
    delta columns are always there, one shape for scripts, and empty where fewer than two
    revisions measured the scenario, and for time. Text cells cannot be taken for formulas
    (csv_cell); numbers are written as they are."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["metric", "scenario", *(csv_cell(c.label) for c in columns), "delta",
                     "delta_percent"])
    writer.writerow(["sha", "", *(csv_cell(c.sha) for c in columns), "", ""])
    writer.writerow(["status", "", *(csv_cell(c.record["status"]) if c.record else "not_measured"
                                     for c in columns), "", ""])
    rows = [("alloc", m) for m in metrics]
    if _timed(columns):
        rows.append(TIME)
    names = instances(columns)
    if changed_only:
        names = changed(columns, names, metrics)
    for section, key in rows:
        for name in names:
            values = [value(c, name, section, key) for c in columns]
            delta = _delta(values) if section == "alloc" else None
            writer.writerow([csv_cell(key), csv_cell(name),
                             *("" if isinstance(v, str) else f"{v:g}" for v in values),
                             "" if delta is None else f"{delta[0]:g}",
                             "" if delta is None or delta[1] is None else f"{delta[1]:.2f}"])
    return buffer.getvalue()
