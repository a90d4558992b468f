"""The sweep table release engineers paste into a pull request: one row per scenario, one column
per revision, the exact metric, then the change first → last. Time gets its own table marked
directional and no Δ (one process per revision: read trends, not points).

Cells: a number; ✗ the revision failed (build, run or timeout — see the notes); – the scenario is
not in that revision's plugin (graft today's scenarios with --graft to measure it there); · not
measured yet. Metrics and their units come from the results' own field list.

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

FAILED, ABSENT, UNMEASURED = "✗", "–", "·"
TIME = ("time", "ns_per_op")


@dataclass(frozen=True)
class Column:
    sha: str
    label: str
    record: dict[str, Any] | None

    @property
    def ok(self) -> bool:
        return self.record is not None and self.record["status"] == "ok"


def fields(columns: list[Column]) -> dict[tuple[str, str], dict[str, Any]]:
    fields: dict[tuple[str, str], dict[str, Any]] = {}
    for column in columns:
        if column.ok:
            for f in column.record["results"]["fields"]:
                fields.setdefault((f["section"], f["key"]), f)
    return fields


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
    if column.record is None:
        return UNMEASURED
    if not column.ok:
        return FAILED
    for result in column.record["results"]["results"]:
        if result["name"] == name:
            value = results.metric(result, {"section": section, "key": key})
            return FAILED if result.get("error") or value is None else value
    return ABSENT


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
           ) -> tuple[list[str], bool]:
    first, last = md_text(columns[0].label), md_text(columns[-1].label)
    head = ["scenario", *(md_text(c.label) for c in columns)]
    if with_delta:
        head += [f"Δ {first} → {last}", "Δ %"]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    partial = False
    for name in names:
        values = [value(c, name, section, key) for c in columns]
        cells = [v if isinstance(v, str) else _number(v) for v in values]
        if with_delta:
            delta = _delta(values)
            if delta is None:
                cells += ["", ""]
            else:
                change, percent, i, j = delta
                mark = ""
                if (i, j) != (0, len(columns) - 1):
                    mark, partial = " ¹", True
                if change == 0:
                    cells += [f"0{mark}", "0.0%"]
                else:
                    cells += [f"{change:+g}{mark}",
                              "" if percent is None else f"{percent:+.1f}%"]
        lines.append(f"| {md_code(name)} | " + " | ".join(cells) + " |")
    return lines, partial


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
            return "\n".join(out + _notes(columns)).rstrip() + "\n"
    for metric in metrics:
        field = known.get(("alloc", metric), {"column": metric, "unit": ""})
        title = field.get("column") or metric
        out += [f"#### {md_text(title)} — exact", ""]
        lines, partial = _table(columns, names, "alloc", metric, with_delta=True)
        out += lines
        if partial:
            out.append("\n¹ from the first to the last revision that measured the scenario")
        out.append("")
    if any(c.ok and c.record["time_measured"] for c in columns):
        out += ["#### ns/op — directional only", "",
                "_One process per revision, on the machine that measured it: read trends, not "
                "points. Time has no Δ here; gate it with `allocbench ab`._", ""]
        out += _table(columns, names, *TIME, with_delta=False)[0]
        machines = sorted({c.record["machine"] for c in columns if c.ok})
        if len(machines) > 1:
            out.append(f"\nMeasured on {', '.join(map(md_text, machines))}: times of different "
                       "machines do not compare.")
        out.append("")
    out += _notes(columns)
    return "\n".join(out).rstrip() + "\n"


def name(column: Column) -> str:
    """`v1.2` (1a2b3c4d5e), or the short sha alone when that is the label (markdown)."""
    if column.label == column.sha[:len(column.label)]:
        return md_code(column.label)
    return f"{md_code(column.label)} ({md_text(column.sha[:10])})"


def _notes(columns: list[Column]) -> list[str]:
    notes = []
    for c in columns:
        if c.record is None:
            notes.append(f"- {UNMEASURED} {name(c)}: not measured yet")
        elif not c.ok:
            status, _, error = problem(c.record).partition(": ")
            error = f": {md_code(error)}" if error else ""
            notes.append(f"- {FAILED} {name(c)} {md_text(status)}{error} — log: "
                         f"{md_text(c.record.get('log', 'n/a'))}")
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
    """metric, scenario, one column per revision, delta, delta_percent; gaps are empty. Text
    cells cannot be taken for formulas (csv_cell); numbers are written as they are."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["metric", "scenario", *(csv_cell(c.label) for c in columns), "delta",
                     "delta_percent"])
    writer.writerow(["sha", "", *(csv_cell(c.sha) for c in columns), "", ""])
    writer.writerow(["status", "", *(csv_cell(c.record["status"]) if c.record else "not_measured"
                                     for c in columns), "", ""])
    rows = [("alloc", m) for m in metrics]
    if any(c.ok and c.record["time_measured"] for c in columns):
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
