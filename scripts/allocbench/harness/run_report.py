"""The markdown report of one results file: context, then one row per scenario instance.

Columns come from the document's own 'fields' list (written by allocbench-run from the same
list that drives its JSON and console table), so the report cannot disagree with either.
Every text of the document (names, errors, units, the context) is escaped for markdown
(escape.py): a results file may come from anywhere.
"""

from __future__ import annotations

from typing import Any

from allocbench.base.escape import md_code, md_text
from allocbench.base.results import metric
from allocbench.harness import scaling


def format_value(value: float, unit: str) -> str:
    """The same forms as allocbench-run's console table."""
    if unit == "ops/s":
        return f"{round(value):,}"
    if unit == "ns":
        return f"{value:.1f}"
    if unit == "":
        return f"{value:.3f}"
    if float(value).is_integer():
        return f"{value:.0f}"
    return f"{value:.3f}"


def _text(value: Any) -> str:
    return md_text(str(value))


def _context_lines(context: dict[str, Any]) -> list[str]:
    revision = context.get("revision") or {}
    allocator = context.get("allocator", {})
    host, cpu = context.get("host", {}), context.get("cpu", {})
    harness = context.get("harness", {})
    lines = []
    if revision:
        dirty = " (uncommitted changes)" if revision.get("dirty") else ""
        described = str(revision.get("describe") or revision.get("sha"))
        lines.append(f"- revision: {md_code(described)}{dirty}")
    lines += [
        f"- allocator: {_text(allocator.get('name'))} {_text(allocator.get('version'))}",
        f"- host: {_text(host.get('name'))}, {_text(cpu.get('model'))} × "
        f"{_text(cpu.get('logical_cpus'))}",
        f"- harness: allocbench {_text(harness.get('version'))}, "
        f"{_text(harness.get('compiler'))}",
        f"- date: {_text(context.get('date'))}",
    ]
    count = context.get("count")
    if count:
        lines.append(f"- count pass: {count['warmup_ops']} warm-up ops, then 2 windows of "
                     f"{count['window_ops']} ops per thread")
    time = context.get("time")
    if time:
        lines.append(f"- time pass: {time['repetitions']} repetitions of ≥ {time['min_time_s']} s")
    instructions = context.get("instructions")
    if instructions:
        lines.append(f"- instructions pass: the count windows under callgrind "
                     f"({_text(instructions.get('valgrind'))}), address randomization "
                     f"{_text(instructions.get('aslr'))}")
    return lines


def _number(value) -> str:
    return format_value(float(value), "B")


def _scaling_lines(results: list[dict[str, Any]]) -> list[str]:
    found = scaling.fits(results)
    if not found:
        return []
    lines = ["", "## How B/op grows with an argument", "",
             "Least squares over the instances (exact arithmetic); *exact* when every point is "
             "on the line.", "",
             "| scenario | argument | slope (B/op per unit) | intercept (B/op) | points |",
             "|---|---|---:|---:|---|"]
    for f in found:
        points = ", ".join(f"{x}: {_number(y)}" for x, y in f.points)
        exact = " (exact)" if f.exact else ""
        lines.append(f"| {md_code(f.label)} | {md_text(f.argument)} | "
                     f"{_number(f.slope)}{exact} | {_number(f.intercept)} | {points} |")
    return lines


def _counter_lines(results: list[dict[str, Any]]) -> list[str]:
    rows = [(r["name"], name, c) for r in results for name, c in (r.get("counters") or {}).items()]
    if not rows:
        return []
    lines = ["", "## Counters reported by scenarios", "", "| scenario | counter | value |",
             "|---|---|---:|"]
    for instance, name, c in rows:
        unit = f" {md_text(c['unit'])}" if c.get("unit") else ""
        lines.append(f"| {md_code(instance)} | {md_text(name)} | {_number(c['value'])}{unit} |")
    return lines


def markdown(doc: dict[str, Any], title: str = "allocbench results") -> str:
    ran = doc["context"].get("instructions") is not None   # its columns only when it ran
    columns = [f for f in doc["fields"] if f.get("column")
               and (ran or f["section"] != "instructions")]
    header = ["scenario"] + [md_text(f["column"]) for f in columns]
    rows = []
    notes = []
    for r in doc["results"]:
        cell = code = md_code(r["name"])
        for section, what in (("alloc", "is not steady"), ("instructions", "Ir/op is not steady")):
            measured = r.get(section) or {}
            if measured and not measured.get("steady", True):
                cell += "" if cell.endswith("\\*") else " \\*"
                notes.append(f"- \\* {code} {what}: {_text(measured.get('steady_reason'))}")
        if r.get("error"):
            cell += " !"
            notes.append(f"- ! {code} failed: {md_text(r['error'])}")
        cells = []
        for f in columns:
            value = metric(r, f)
            cells.append("-" if value is None else format_value(value, f["unit"]))
        rows.append([cell] + cells)
    out = [f"# {md_text(title)}", ""] + _context_lines(doc["context"]) + [""]
    out.append("| " + " | ".join(header) + " |")
    out.append("|---|" + "---:|" * len(columns))
    out += ["| " + " | ".join(row) + " |" for row in rows]
    if notes:
        out += [""] + notes
    out += _scaling_lines(doc["results"]) + _counter_lines(doc["results"])
    out += ["", "B/op and allocs/op are exact (requested bytes, per op per thread)"
            + ("; so is Ir/op (instructions under callgrind, per op per thread)" if ran else "")
            + "; ns/op is the median over repetitions and is directional."]
    return "\n".join(out) + "\n"
