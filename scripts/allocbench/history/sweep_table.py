"""The sweep table release engineers paste into a pull request: one row per scenario, one column
per revision, the allocation metric, then the change first → last (Δ columns only when two
revisions or more were measured). B/op always comes first; --metric adds tables (metrics_of): an
allocation metric, or one of the instructions pass (instructions_per_op, Ir/op: exact, from
--instructions). Time gets its own table marked directional and no Δ (one process per revision:
read trends, not points).

Cells: a number; ✗ the revision failed (build, run or timeout — see the notes); ? its record
cannot be read (a report shows the reason and builds the rest); – the scenario is
not in that revision's plugin (graft today's scenarios with --graft to measure it there); · not
measured yet; ∅ the revision was measured without the pass that table needs: the time pass
(--no-time), the instructions pass (no --instructions) or its --estimated-cycles.
¹ after a Δ: from the first to the last revision that measured the scenario. The notes under the
tables explain every mark the tables use.

Metrics, their sections, column names and what a heading says of them come from the results'
own field list: its `gate` (fields.h) makes a table "exact", "shown, never gated" or
"directional only". A table that no revision measured has no field list to read; FALLBACK heads
it, and says which pass a metric needs before anything is measured (passes_for).

Labels (git tags), names, error lines and log paths come from git and from stores that may have
been merged from other machines: every one is escaped for markdown or CSV (escape.py).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

from allocbench.base.errors import UserError
from allocbench.base.escape import csv_cell, md_code, md_text
from allocbench.history.store import passes, problem

FAILED, ABSENT, UNMEASURED, NO_TIME, PARTIAL, UNREADABLE = "✗", "–", "·", "∅", "¹", "?"
NO_PASS = NO_TIME   # ∅: measured without the pass the table needs (time or instructions)
TIME = ("time", "ns_per_op")
# The sections whose exact and shown metrics --metric tabulates, each with a Δ
SECTIONS = ("alloc", "instructions")
TABULATED = ("exact", "info")
GATES = {"exact": "exact", "info": "shown, never gated", "time": "directional only"}
# The field list comes with the results (every document carries the one fields.h writes), and a
# table that no revision measured has none. These stand in for it there: the metrics that have
# a column name, and the instructions pass's (what passes_for reads before anything is
# measured), as fields.h has them (test_fallback_and_test_fields_are_the_runners pins them).
# Another metric is then headed by its key alone, claiming no gate.
FALLBACK = {("alloc", "bytes_per_op"): {"column": "B/op", "gate": "exact"},
            ("alloc", "allocs_per_op"): {"column": "allocs/op", "gate": "exact"},
            ("instructions", "instructions_per_op"): {"column": "Ir/op", "gate": "exact"},
            ("instructions", "estimated_cycles_per_op"): {"column": None, "gate": "info"}}
# The instructions pass's metric that only its cache simulation (--estimated-cycles) measures
ESTIMATED_CYCLES = "estimated_cycles_per_op"


@dataclass(frozen=True)
class Column:
    sha: str
    label: str
    record: dict[str, Any] | None
    unreadable: str = ""   # why the revision's record could not be read (a report shows it)

    @property
    def ok(self) -> bool:
        return self.record is not None and self.record["status"] == "ok"

    @cached_property
    def passes(self) -> frozenset[str]:
        return passes(self.record)

    @cached_property
    def by_name(self) -> dict[str, dict[str, Any]]:
        """The revision's results by instance name (the first of a name, as a scan finds it):
        a table of 2,000 revisions × 46 instances asks for each cell."""
        return {r["name"]: r for r in reversed(self.record["results"]["results"])} \
            if self.ok else {}


def metrics_of(given: list[str] | None) -> list[str]:
    """The tables to show: B/op first, always (--metric adds a table, it does not replace
    B/op's), then each given metric once, in the order given."""
    return list(dict.fromkeys(["bytes_per_op", *(given or [])]))


def section_of(known: dict[tuple[str, str], dict[str, Any]], key: str) -> str:
    """The results section of a table's metric (alloc or instructions): from the results' field
    list, else FALLBACK's; alloc for a key neither has (check_metrics refuses it where there
    are results)."""
    for table in (known, FALLBACK):
        for section in SECTIONS:
            if (section, key) in table:
                return section
    return "alloc"


def passes_for(metrics: list[str]) -> tuple[bool, bool]:
    """(instructions, estimated_cycles): the passes of allocbench-run that tables of `metrics`
    need, known before anything is measured (from FALLBACK: as fields.h has them)."""
    needs = [key for key in metrics if section_of({}, key) == "instructions"]
    return bool(needs), ESTIMATED_CYCLES in needs


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


def tabulated(columns: list[Column]) -> list[str]:
    """The metrics --metric can show: the exact and shown ones of the sections alloc and
    instructions of these results (those of the instructions pass even where no revision has
    its fields); none when no revision was measured."""
    found = fields(columns)
    if not found:
        return []
    keys = [key for (section, key), f in found.items()
            if section in SECTIONS and f["gate"] in TABULATED]
    return list(dict.fromkeys([*keys, *(key for section, key in FALLBACK
                                        if section == "instructions")]))


def check_metrics(columns: list[Column], metrics: list[str]) -> None:
    known = tabulated(columns)
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
    known = fields(columns)

    moving: set[str] = set()
    for metric in metrics:
        section = section_of(known, metric)
        moving.update(name for name, row in zip(names, rows(columns, names, section, metric))
                      if len({v for v in row if not isinstance(v, str)}) > 1)
    return [name for name in names if name in moving]


def value(column: Column, name: str, section: str, key: str) -> float | str:
    return values(column, [name], section, key)[0]


def values(column: Column, names: list[str], section: str, key: str) -> list[float | str]:
    """The column's cells of `names`: a number, or the mark that says why there is none."""
    if column.unreadable:
        return [UNREADABLE] * len(names)
    if column.record is None:
        return [UNMEASURED] * len(names)
    if not column.ok:
        return [FAILED] * len(names)
    no_pass = missing(column, section, key) is not None
    by_name = column.by_name
    return [_cell(by_name.get(name), section, key, no_pass) for name in names]


def rows(columns: list[Column], names: list[str], section: str, key: str
         ) -> list[list[float | str]]:
    """The cells of `names` (a row each) in `columns` (a cell each)."""
    by_column = [values(c, names, section, key) for c in columns]
    return [list(row) for row in zip(*by_column)] if columns else [[] for _ in names]


def _cell(result: dict[str, Any] | None, section: str, key: str, no_pass: bool
          ) -> float | str:
    """A measured revision's value: – when the instance is not in it, ✗ when the instance
    failed, ∅ when the revision was measured without the pass that measures the metric
    (nothing failed there)."""
    if result is None:
        return ABSENT
    if result.get("error"):
        return FAILED
    if no_pass:
        return NO_PASS
    found = result.get(section)   # results.metric's, without a field per cell
    found = found.get(key) if isinstance(found, dict) else None
    return FAILED if found is None else found


def missing(column: Column, section: str, key: str) -> str | None:
    """The pass (store.passes' name) that a measured revision ran without and that the metric
    needs: "time", "instructions" or "estimated_cycles"; None when it ran."""
    need = {TIME[0]: "time", "instructions": "instructions"}.get(section)
    if need is None:
        return None
    ran = column.passes
    if need not in ran:
        return need
    if section == "instructions" and key == ESTIMATED_CYCLES and "estimated_cycles" not in ran:
        return "estimated_cycles"
    return None


def _timed(columns: list[Column]) -> bool:
    """Whether some revision has time, so the time table is shown."""
    return any(c.ok and c.record["time_measured"] for c in columns)


def _number(value: float) -> str:
    if value == int(value):
        return f"{int(value)}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def exact_number(value: float, sign: str = "") -> str:
    """Every digit of an exact value that is not an integer, as Ir/op (the window's instructions
    over its ops) is, without the float noise of a difference: 305.068, +75; `sign` "+" shows
    it."""
    text = f"{value:{sign}.6f}".rstrip("0").rstrip(".")
    return text if text.lstrip("+-") != "0" else "0"


def _formats(section: str) -> tuple[Callable[[float], str], Callable[[float], str]]:
    """How the section's cells and changes are written: the instructions pass's with every
    digit (exact_number), the others rounded for reading (_number, %g)."""
    if section == "instructions":
        return exact_number, lambda v: exact_number(v, "+")
    return _number, lambda v: f"{v:+g}"


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
    number, change = _formats(section)
    head = ["scenario", *(md_text(c.label) for c in columns)]
    if with_delta:
        head += [f"Δ {md_text(columns[0].label)} → {md_text(columns[-1].label)}", "Δ %"]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    marks: set[str] = set()
    for name, row in zip(names, rows(columns, names, section, key)):
        marks.update(v for v in row if isinstance(v, str))
        cells = [v if isinstance(v, str) else number(v) for v in row]
        if with_delta:
            delta = _delta(row)
            partial = delta is not None and delta[2:] != (0, len(columns) - 1)
            cells += _delta_cells(delta, partial, change)
            if partial:
                marks.add(PARTIAL)
        lines.append(f"| {md_code(name)} | " + " | ".join(cells) + " |")
    return lines, marks


def _delta_cells(delta: tuple[float, float | None, int, int] | None, partial: bool,
                 signed: Callable[[float], str] = lambda v: f"{v:+g}") -> list[str]:
    if delta is None:
        return ["", ""]
    change, percent = delta[:2]
    mark = f" {PARTIAL}" if partial else ""
    if change == 0:
        return [f"0{mark}", "0.0%"]
    return [f"{signed(change)}{mark}", "" if percent is None else f"{percent:+.1f}%"]


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
    shown = [(section_of(known, metric), metric) for metric in metrics]
    for section, metric in shown:
        out += [heading(field_of(known, section, metric), metric), ""]
        lines, used = _table(columns, names, section, metric, with_delta)
        out += lines
        if PARTIAL in used:
            out.append(f"\n{PARTIAL} from the first to the last revision that measured the "
                       "scenario")
        if section == "instructions":
            out += _machines(columns, "instructions", "instruction counts can differ between "
                             "CPUs (libc picks its code paths by the CPU)")
        out.append("")
        marks |= used
    if _timed(columns):
        lines, used = _time_table(columns, names, known)
        out += lines
        marks |= used
        shown.append(TIME)
    out += _notes(columns, marks, shown)
    return "\n".join(out).rstrip() + "\n"


def _machines(columns: list[Column], need: str, why: str) -> list[str]:
    """A line under a table whose values come from several machines: why they may not
    compare."""
    machines = sorted({c.record["machine"] for c in columns
                       if c.ok and need in passes(c.record)})
    if len(machines) < 2:
        return []
    return [f"\nMeasured on {', '.join(map(md_text, machines))}: {why}."]


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


# ∅'s note for each pass a revision was measured without
WITHOUT = {
    "time": "measured without the time pass (--no-time); run the sweep again without --no-time "
            "to time it",
    "instructions": "measured without the instructions pass; run the sweep again with "
                    "--instructions to count them",
    "estimated_cycles": "measured without the cache simulation; run the sweep again with "
                        "--instructions --estimated-cycles to estimate them"}


def _revision_notes(c: Column, marks: set[str], shown: list[tuple[str, str]]) -> list[str]:
    """What the column's marks mean for that revision, and what to do about them."""
    if c.unreadable:
        return [f"- {UNREADABLE} {name(c)}: unreadable: {md_text(c.unreadable)}"]
    if c.record is None:
        return [f"- {UNMEASURED} {name(c)}: not measured yet"]
    if not c.ok:
        status, _, error = problem(c.record).partition(": ")
        error = f": {md_code(error)}" if error else ""
        return [f"- {FAILED} {name(c)} {md_text(status)}{error} — log: "
                f"{md_text(c.record.get('log', 'n/a'))}"]
    # measured, but not as the revision records it (e.g. a submodule left empty)
    noted = [f"- {name(c)}: measured with {md_text(c.record['note'])}"] \
        if c.record.get("note") else []
    if NO_PASS not in marks:
        return noted
    lacking = dict.fromkeys(need for section, key in shown
                            if (need := missing(c, section, key)) is not None)
    return noted + [f"- {NO_PASS} {name(c)}: {WITHOUT[need]}" for need in sorted(
        lacking, key=list(WITHOUT).index)]


def _notes(columns: list[Column], marks: set[str],
           shown: list[tuple[str, str]] | None = None) -> list[str]:
    """A line per revision whose column has a mark, one for the marks of scenarios, then what
    keeps the columns from comparing like with like; `shown`: the tables' (section, key)."""
    notes = [note for c in columns for note in _revision_notes(c, marks, shown or [])]
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
    known = fields(columns)
    tables = [(section_of(known, m), m) for m in metrics]
    if _timed(columns):
        tables.append(TIME)
    names = instances(columns)
    if changed_only:
        names = changed(columns, names, metrics)
    for section, key in tables:
        number = exact_number if section == "instructions" else (lambda v: f"{v:g}")
        for name, row in zip(names, rows(columns, names, section, key)):
            delta = _delta(row) if section != TIME[0] else None
            writer.writerow([csv_cell(key), csv_cell(name),
                             *("" if isinstance(v, str) else number(v) for v in row),
                             "" if delta is None else number(delta[0]),
                             "" if delta is None or delta[1] is None else f"{delta[1]:.2f}"])
    return buffer.getvalue()
