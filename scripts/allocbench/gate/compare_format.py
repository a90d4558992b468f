"""Printing a Comparison: console table, pull-request comment (markdown), JSON.

The markdown follows the benchmarking bots that tracer teams read on every pull request: the
count of regressions and improvements first, then the regressions with their absolute and
relative intervals, then a collapsed table of every metric.

Names, units, labels and failure texts come from the results files: each output escapes them
with its own function (escape.py), the console for the terminal, the comment for markdown.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable

from allocbench import imports
from allocbench.base.escape import md_code, md_text, terminal
from allocbench.harness.run_report import format_value
from allocbench.sites.per_op import SiteChange
from allocbench.gate import compare as cmp, config
from allocbench.gate import paired_gate
from allocbench.gate.compare import Comparison, ExactChange, InstanceComparison, TimeChange
from allocbench.gate.tolerance import bound_rule

Escape = Callable[[str], str]

# Most urgent first: the order of the console rows and of the markdown sections.
ORDER = [cmp.FAILED, cmp.WORSE, cmp.NONDETERMINISTIC, cmp.UNSTABLE, cmp.SLOWER, cmp.ALLOWED,
         cmp.BETTER, cmp.FASTER, cmp.SAME]
MARK = {cmp.WORSE: "🟥", cmp.BETTER: "🟩", cmp.FAILED: "❌", cmp.UNSTABLE: "⚠️",
        cmp.NONDETERMINISTIC: "⚠️", cmp.ALLOWED: "🟨", cmp.SLOWER: "🔸", cmp.FASTER: "🔹",
        cmp.SAME: ""}


def number(value: float, signed: bool = False) -> str:
    """About four significant digits, without exponents: 0.123, 1.23, 12.3, 1234."""
    size = abs(value)
    digits = 0 if size >= 100 else 1 if size >= 10 else 2 if size >= 1 else 3
    if float(value).is_integer():
        digits = 0
    return f"{value:+,.{digits}f}" if signed else f"{value:,.{digits}f}"


def _values(values: tuple[float, ...], unit: str) -> str:
    if len(values) == 1:
        return format_value(values[0], unit)
    return f"{format_value(values[0], unit)}–{format_value(values[-1], unit)}"


# GitHub refuses a comment longer than 65,536 characters; this leaves room for what a CI
# template adds (its marker and footer).
COMMENT_CHARS = 60_000

def exact_delta(change: ExactChange, with_values: bool = False, text: Escape = terminal) -> str:
    """'+96 B (+400.0%)', or '+96 B (24 → 120, +400.0%)'; '—' when forks disagree. `text`
    escapes the unit for the output it goes to. A sampled metric adds its tolerance."""
    if change.delta is None:
        return "—"
    if change.delta == 0:
        return "0" + _tolerance(change, text)
    details = []
    if with_values:
        details.append(f"{_values(change.base, change.unit)} → "
                       f"{_values(change.cand, change.unit)}")
    if change.percent is not None:   # +32 B of 213 KB is +0.015%, not +0.0%
        digits = 1 if abs(change.percent) >= 0.1 else 3
        details.append(f"{change.percent:+.{digits}f}%")
    out = f"{number(change.delta, signed=True)} {text(change.unit)}"
    if details:
        out += f" ({', '.join(details)})"
    if change.verdict == cmp.ALLOWED:
        out += f", within budget {change.budget}"
    return out + _tolerance(change, text)


def _tolerance(change: ExactChange, text: Escape) -> str:
    """', sampled: tolerance ±1.41 B' for a sampled metric (and its bound when it is wider),
    '' for an exact one."""
    if change.gate != "sampled":
        return ""
    if change.tolerance is None:
        return f", sampled: no tolerance ({text(change.tolerance_from)})"
    unit = text(change.unit)
    out = f", sampled: tolerance ±{number(change.tolerance)} {unit}"
    if change.bound is not None and change.tolerance > change.bound:
        out += f", wider than its bound ±{number(change.bound)} {unit}"
    return out


def time_interval(change: TimeChange, text: Escape = terminal) -> str:
    """'[+1.43 ns; +2.07 ns] or [+12.1%; +17.4%]', as the bots print it."""
    i = change.interval
    if i is None:
        return "—"
    unit = text(change.unit)
    digits = 2 if change.pairs else 1   # paired intervals are a tenth of a percent wide
    return (f"[{number(i.absolute_low, True)} {unit}; {number(i.absolute_high, True)} "
            f"{unit}] or [{100 * i.relative_low:+.{digits}f}%; "
            f"{100 * i.relative_high:+.{digits}f}%]")


def _time_detail(change: TimeChange, text: Escape) -> str:
    out = time_interval(change, text)
    if change.p_value is not None:
        out += f", p = {change.p_value:.2g}"
    if change.pairs:
        out += f", {change.pairs:,} pairs"
    if change.reason:
        out += f"; {text(change.reason)}"
    if change.noise:
        out += f"; {text(change.noise)}"
    return out


def _rows(comparison: Comparison, show_all: bool, code: Escape, text: Escape,
          by_urgency: bool = True) -> list[tuple[str, str, str, str, str, str]]:
    """(verdict, instance, metric, base, candidate, change) rows, most urgent first or in the
    order of the instances and fields; names and metrics escaped by `code`, the rest by
    `text`."""
    rows = []
    for inst in comparison.instances:
        name = code(inst.name)
        if inst.failure:
            rows.append((cmp.FAILED, name, "", "", "", text(inst.failure)))
        for c in inst.exact:
            rows.append((c.verdict, name, code(c.metric), _values(c.base, c.unit),
                         _values(c.cand, c.unit), exact_delta(c, text=text)))
        for t in inst.time:
            unit = text(t.unit)
            rows.append((t.verdict, name, code(t.metric), f"{number(t.base_mean)} {unit}",
                         f"{number(t.cand_mean)} {unit}", _time_detail(t, text)))
    rows = [r for r in rows if show_all or r[0] != cmp.SAME]
    return sorted(rows, key=lambda r: ORDER.index(r[0])) if by_urgency else rows


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary(comparison: Comparison) -> str:
    """'Found 2 regressions and 1 improvement; 40 metrics unchanged, 1 unstable.', naming the
    unstable allocation metrics: '…, 2 unstable (bytes_per_op of 1 instance).'"""
    t = cmp.verdicts(comparison)
    unstable = f"{t[cmp.UNSTABLE]} unstable"
    alloc = Counter(metric for _, metric in cmp.unstable_alloc(comparison))
    if alloc:
        unstable += " (" + ", ".join(f"{metric} of {_plural(n, 'instance')}"
                                     for metric, n in alloc.items()) + ")"
    parts = [f"{_plural(t[cmp.SAME], 'metric')} unchanged", unstable]
    for verdict, text in ((cmp.ALLOWED, "within budget"),
                          (cmp.NONDETERMINISTIC, "nondeterministic"), (cmp.FAILED, "failed"),
                          (cmp.SLOWER, "slower (time, directional)"),
                          (cmp.FASTER, "faster (time, directional)")):
        if t[verdict]:
            parts.append(f"{t[verdict]} {text}")
    if comparison.site_excesses:
        parts.append(f"{_plural(len(comparison.site_excesses), 'allocation site')} beyond "
                     "its budget")
    if comparison.sites_not_judged:
        parts.append(f"{_plural(len(comparison.sites_not_judged), 'site budget')} not judged "
                     "in full")
    if comparison.added:
        parts.append(f"{_plural(len(comparison.added), 'scenario')} added")
    if comparison.removed:
        parts.append(f"{_plural(len(comparison.removed), 'scenario')} removed")
    return (f"Found {_plural(t[cmp.WORSE], 'regression')} and "
            f"{_plural(t[cmp.BETTER], 'improvement')}; {', '.join(parts)}.")


def gate_line(comparison: Comparison, fail_on: str, text: Escape = terminal) -> str:
    """'Gate passed: …' or 'Gate failed: …' naming each failing instance and metric (an
    unstable allocation metric as such), escaped by `text` for the output it goes to."""
    failing = cmp.gated(comparison, fail_on)
    unstable = set(cmp.unstable_alloc(comparison))
    if not failing:
        shown = "" if fail_on == "time" or not unstable else (
            f"; {_plural(len(unstable), 'unstable allocation metric')} shown, not gated "
            '([sampled] unstable = "show")')
        return f"Gate passed: no gated regression (--fail-on {fail_on}){shown}."
    by_instance: dict[str, list[str]] = {}
    for name, metric in failing:
        by_instance.setdefault(name, []).append(
            f"unstable {metric}" if (name, metric) in unstable else metric)
    where = "; ".join(f"{text(name)} ({', '.join(map(text, metrics))})"
                      for name, metrics in by_instance.items())
    judged = sum(pair not in unstable for pair in failing)
    counts = [_plural(n, what) for n, what in ((judged, "gated regression"),
                                               (len(failing) - judged,
                                                "unstable allocation metric")) if n]
    why = "" if judged == len(failing) else (
        " An unstable allocation metric cannot be judged, so it fails the gate ([sampled] "
        'unstable = "fail", the default).')
    return f"Gate failed: {' and '.join(counts)} (--fail-on {fail_on}) in {where}.{why}"


def _sampled_method(comparison: Comparison) -> str:
    """How the sampled metrics were judged, each tolerance's origin once."""
    origins = list(dict.fromkeys(c.tolerance_from for inst in comparison.instances
                                 for c in inst.exact if c.gate == "sampled"))
    if not origins:
        return ""
    unit = next(c.unit for inst in comparison.instances for c in inst.exact
                if c.gate == "sampled")
    unstable = ("fails the gate" if comparison.sampled_unstable == "fail" else
                'is shown, never gating ([sampled] unstable = "show")')
    return ("B/op is sampled (read from a runtime's allocated-bytes counter, not counted): a "
            "regression only beyond its tolerance plus the budget (default: none), an "
            "improvement beyond the tolerance; tolerance: " + "; ".join(origins) + "; "
            f"*unstable* without one or with one wider than its bound ({bound_rule(unit)}), "
            f"which {unstable}.")


def _method(comparison: Comparison) -> str:
    s = comparison.settings
    exact = "Allocation metrics are exact"
    if any(c.section == "instructions" for inst in comparison.instances for c in inst.exact):
        exact = ("Allocation metrics and instructions per op (callgrind, the count windows' own "
                 "ops) are exact")
    if comparison.paired:
        return f"{exact}: any increase beyond the budget (default: none) is a regression. " \
            + paired_gate.method(comparison)
    time = (f"Time: {s.confidence:.0%} interval of the relative difference of means "
            "(candidate vs. baseline) by a seeded two-level bootstrap (forks, then the "
            "repetitions within them); ")
    if comparison.time_gates:
        time += (f"worse or better only when the whole interval lies beyond ±{s.threshold:g}%; "
                 f"*unstable* (cv > {s.max_cv:g}, bimodal repetitions, or fewer than "
                 f"{s.min_samples} samples) never gates.")
    else:
        time += (f"still shown, but directional: *slower* or *faster* when the whole interval "
                 f"lies beyond ±{s.threshold:g}%, never gating (instructions gate CPU cost; "
                 "--fail-on time gates on time instead).")
    sampled = _sampled_method(comparison)
    if sampled and not any(c.gate == "exact" for i in comparison.instances for c in i.exact):
        return f"{sampled} {time}"
    exact = f"{exact}: any increase beyond the budget (default: none) is a regression."
    return " ".join(filter(None, (exact, sampled, time)))


def _policy_heads(comparison: Comparison, code: Escape, text: Escape) -> list[str]:
    """One sentence per policy file the candidate changes: what judged it instead."""
    out = []
    for change in comparison.policy_changes:
        what = ("the gate's budgets and settings in " if change.file == config.DEFAULT_NAME
                else "the gate's A/A calibration, ")
        head = (f"This pull request changes {what}{code(change.file)}: it was judged by "
                f"{code(change.judged_by)}, and the change applies once it is merged")
        if change.problem:
            head += f"; its own file cannot be read ({text(change.problem)})"
        out.append(head + (":" if change.diff else "."))
    return out


def _policy_console(comparison: Comparison) -> list[str]:
    out = []
    for head, change in zip(_policy_heads(comparison, terminal, terminal),
                            comparison.policy_changes):
        out += ["", f"policy: {head}"] + [f"  {terminal(line)}" for line in change.diff]
    return out


def _policy_markdown(comparison: Comparison) -> list[str]:
    """The policy changes, first in the comment: a diff block of the entries, fenced by more
    backticks than any run in them (a glob is the pull request's text)."""
    out = []
    for head, change in zip(_policy_heads(comparison, md_code, md_text),
                            comparison.policy_changes):
        out += [f"⚠️ **{head}**", ""]
        if change.diff:
            runs = [len(run) for line in change.diff for run in re.findall("`+", line)]
            fence = "`" * max(3, max(runs, default=0) + 1)
            out += [f"{fence}diff", *change.diff, fence, ""]
    return out


def _files(side: cmp.Side) -> str:
    """'3 files' of allocbench results; 'JMH JSON, 2 forks' of an imported side."""
    if side.kind == imports.ALLOCBENCH:
        return _plural(len(side.docs), "file")
    return f"{imports.NAMES[side.kind]}, {_plural(len(side.docs), 'fork')}"


def console(comparison: Comparison, fail_on: str, show_all: bool = False,
            sites: dict[str, list[SiteChange]] | None = None, sites_note: str = "") -> str:
    out = [f"{title} {terminal(side.label)} ({terminal(str(side.path))}, {_files(side)})"
           for title, side in (("base:     ", comparison.base), ("candidate:", comparison.cand))]
    out += _policy_console(comparison)
    out += ["", summary(comparison)]
    rows = _rows(comparison, show_all, code=terminal, text=terminal)
    if rows:
        table = [("verdict", "scenario", "metric", "base", "candidate", "change")] + rows
        widths = [max(len(r[i]) for r in table) for i in range(5)]
        out.append("")
        for r in table:
            cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1]), r[2].ljust(widths[2]),
                     r[3].rjust(widths[3]), r[4].rjust(widths[4]), r[5]]
            out.append("  ".join(cells).rstrip())
    for what, names in (("added", comparison.added), ("removed", comparison.removed)):
        if names:
            out.append(f"{what}: {', '.join(map(terminal, names))}")
    for e in comparison.site_excesses:
        out.append(f"site beyond budget  {terminal(e.instance)}  {terminal(e.text)} "
                   f"(budget per site: {e.budget})")
    for n in comparison.sites_not_judged:
        out.append(f"site budget not judged  {terminal(n.instance)}  {terminal(n.reason)}"
                   + (" (fails the gate)" if n.gates else ""))
    for name, changes in (sites or {}).items():
        out += ["", f"sites of {terminal(name)} (heaptrack, per op):"]
        out += [f"  {c.text(terminal, terminal)}" for c in changes] or ["  none changed"]
    if sites_note:
        out += ["", f"allocation sites: {terminal(sites_note)}"]
    if comparison.notes:
        out += [""] + [f"note: {terminal(n)}" for n in comparison.notes]
    out += ["", gate_line(comparison, fail_on)]
    return "\n".join(out) + "\n"


def _bullets(inst: InstanceComparison, verdicts: tuple[str, ...]) -> list[str]:
    lines = []
    if inst.failure and cmp.FAILED in verdicts:
        lines.append(f"- {MARK[cmp.FAILED]} failed in the {md_text(inst.failure)}")
    for c in inst.exact:
        if c.verdict in verdicts:
            if c.delta is None:
                detail = (f"base {_values(c.base, c.unit)}, candidate {_values(c.cand, c.unit)} "
                          f"{md_text(c.unit)} (forks disagree)")
            else:
                detail = exact_delta(c, with_values=True, text=md_text)
            lines.append(f"- {MARK[c.verdict]} {md_code(c.metric)} {detail}")
    for t in inst.time:
        if t.verdict in verdicts:
            lines.append(f"- {MARK[t.verdict]} {md_code(t.metric)} {_time_detail(t, md_text)}")
    return lines


SITE_LINES = 5   # site changes shown under an instance; the rest are in the collapsed list
EXACT_SECTIONS = (cmp.WORSE, cmp.BETTER, cmp.ALLOWED)


def _site_lines(changes: list[SiteChange] | None) -> list[str]:
    if changes is None:
        return []
    lines = [f"- ↳ {c.text(md_code, md_text)}" for c in changes[:SITE_LINES]]
    if len(changes) > SITE_LINES:
        lines.append(f"- ↳ … and {len(changes) - SITE_LINES} more site changes (below)")
    return lines or ["- ↳ no allocation site changed (heaptrack)"]


def _section(comparison: Comparison, title: str, verdicts: tuple[str, ...],
             sites: dict[str, list[SiteChange]]) -> list[str]:
    out = []
    for inst in comparison.instances:
        bullets = _bullets(inst, verdicts)
        if bullets:
            if any(c.verdict in verdicts and c.verdict in EXACT_SECTIONS and
                   c.section == "alloc" for c in inst.exact):
                bullets += _site_lines(sites.get(inst.name))
            out += ["", f"scenario:{md_code(inst.name)}", ""] + bullets
    return [f"### {title}"] + out + [""] if out else []


def _site_budget_section(comparison: Comparison) -> list[str]:
    """The sites beyond their [[sites]] budgets, per instance: what fails the gate although
    the instance's totals may not have changed."""
    out: list[str] = []
    for name in dict.fromkeys(e.instance for e in comparison.site_excesses):
        out += ["", f"scenario:{md_code(name)}", ""]
        out += [f"- {MARK[cmp.WORSE]} {md_text(f'beyond its budget ({e.budget}): {e.text}')}"
                for e in comparison.site_excesses if e.instance == name]
    return ["### Allocation sites beyond their budget (`[[sites]]` in allocbench.toml)"] + out + \
        [""] if out else []


def _not_judged_section(comparison: Comparison) -> list[str]:
    """The [[sites]] budgets not judged, or judged in part, per instance: 🟥 where that fails
    the gate."""
    out: list[str] = []
    for name in dict.fromkeys(n.instance for n in comparison.sites_not_judged):
        out += ["", f"scenario:{md_code(name)}", ""]
        out += [f"- {MARK[cmp.WORSE] if n.gates else MARK[cmp.UNSTABLE]} "
                f"{md_text(('not judged, fails the gate: ' if n.gates else '') + n.reason)}"
                for n in comparison.sites_not_judged if n.instance == name]
    return ["### Site budgets not judged (`[[sites]]` in allocbench.toml)"] + out + [""] \
        if out else []


def _sites_details(sites: dict[str, list[SiteChange]], note: str) -> list[str]:
    """Every site change, per instance, collapsed; or why sites were not profiled."""
    out = [f"<sub>Allocation sites: {md_text(note)}</sub>", ""] if note else []
    if not sites:
        return out
    out += ["<details>", f"<summary>Allocation sites that changed, per op "
            f"(heaptrack, {len(sites)} instance{'s' if len(sites) != 1 else ''})</summary>",
            ""]
    for name, changes in sites.items():
        out += [f"scenario:{md_code(name)}", ""]
        out += [f"- {c.text(md_code, md_text)}" for c in changes] or ["- none"]
        out.append("")
    return out + ["</details>", ""]


def markdown(comparison: Comparison, fail_on: str,
             sites: dict[str, list[SiteChange]] | None = None, sites_note: str = "",
             max_chars: int | None = COMMENT_CHARS) -> str:
    """The pull-request comment; `sites`: the site changes (sites.diff) of the instances
    profiled on both sides, shown under their exact changes; `sites_note`: why they were not.
    Longer than `max_chars`: without the table of every metric, then with its lists cut
    (_fit); None: whole."""
    sites = sites or {}
    b, c = comparison.base, comparison.cand
    mark = "❌ " if cmp.gated(comparison, fail_on) else "✅ "
    out = [f"## allocbench: {md_code(b.label)} → {md_code(c.label)}", "",
           *_policy_markdown(comparison),
           f"**{summary(comparison)}**", "", mark + gate_line(comparison, fail_on, md_text), ""]
    out += _section(comparison, "Regressions", (cmp.FAILED, cmp.WORSE), sites)
    out += _site_budget_section(comparison)
    out += _not_judged_section(comparison)
    out += _section(comparison, "Improvements", (cmp.BETTER,), sites)
    gating = set(cmp.unstable_alloc(comparison)) & set(cmp.gated(comparison, fail_on))
    out += _section(comparison, "Unstable or nondeterministic " + (
        "(unstable allocation metrics fail the gate, the rest never gate)" if gating else
        "(never gate)"), (cmp.NONDETERMINISTIC, cmp.UNSTABLE), sites)
    out += _section(comparison, "Time, directional (never gates)", (cmp.SLOWER, cmp.FASTER),
                    sites)
    out += _section(comparison, "Within budget", (cmp.ALLOWED,), sites)
    for what, names in (("Added", comparison.added), ("Removed", comparison.removed)):
        if names:
            out += [f"### {what} scenarios", "", *(f"- {md_code(n)}" for n in names), ""]
    rows = _rows(comparison, show_all=True, code=md_code, text=md_text, by_urgency=False)
    table = ["<details>",
             f"<summary>All {_plural(len(rows), 'metric')} of "
             f"{_plural(len(comparison.instances), 'scenario instance')}</summary>", "",
             "| scenario | metric | base | candidate | change | verdict |",
             "|---|---|---:|---:|---|---|"]
    for verdict, name, metric, base, cand, change in rows:
        verdict_cell = f"{MARK[verdict]} {verdict}".strip()
        table.append(f"| {name} | {metric} | {base} | {cand} | {change} | {verdict_cell} |")
    table += ["", "</details>", ""]
    tail = _sites_details(sites, sites_note)
    tail += [f"<sub>Note: {md_text(n)}</sub>\n" for n in comparison.notes]
    tail += [f"<sub>{_method(comparison)}</sub>"]
    return _fit(out, table, tail, len(rows), max_chars)


def _fit(head: list[str], table: list[str], tail: list[str], metrics: int,
         max_chars: int | None) -> str:
    """The comment within `max_chars`: whole; else without the table of every metric; else
    with the head's lists cut where they pass the limit, saying how much is left out."""
    def text(lines: list[str]) -> str:
        return "\n".join(lines) + "\n"

    whole = text(head + table + tail)
    if max_chars is None or len(whole) <= max_chars:
        return whole
    left_out = [f"<sub>The table of all {_plural(metrics, 'metric')} is left out: this comment "
                f"may not pass {max_chars:,} characters. `--format json`, and `ab`'s "
                "comparison.md beside its results, have it whole.</sub>", ""]
    shorter = text(head + left_out + tail)
    if len(shorter) <= max_chars:
        return shorter

    def cut(lines: int) -> list[str]:
        return ["", f"… {lines:,} more lines of changes cut", ""]

    room = max_chars - len(text(cut(len(head)) + left_out + tail))
    kept, used = [], 0
    for line in head:
        used += len(line) + 1
        if used > room:
            break
        kept.append(line)
    return text(kept + cut(sum(line.count("\n") + 1 for line in head[len(kept):])) +
                left_out + tail)
