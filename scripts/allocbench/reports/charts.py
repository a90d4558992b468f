"""The charts of every history (B/op and allocs/op over revisions, time with its spread, the
index's sparklines, per-allocator bars) and the sweep curve, written as SVG text directly.

A site of 500 revisions × 46 instances × 2 allocators has several hundred of these, and adding
one revision changes all of them; matplotlib takes ~150 ms a chart on the development VM (the
sweep curve of 500 revisions 3.5 s), this about 1 ms, so a rebuild after one more revision stays
within seconds (docs/reports.md). The pictures that are few or rarely change (both sides'
samples of a comparison, scaling fits) are matplotlib's (plots.py).

Every text (labels, names, reasons) is XML-escaped, its control and invisible characters shown
as escapes (escape.terminal); the output is deterministic, so a picture is reused when its data
is unchanged (pictures.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from allocbench.base.escape import terminal

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b")
FONT = 'font-family="sans-serif" font-size="11"'
# Closer than this (px between revisions), a dot per revision is a thick line of overlapping
# dots: a line of hundreds of revisions is drawn without them (its table has the values), and
# its picture is a fifth of the size.
DOT_SPACING = 6.0


@dataclass(frozen=True)
class Series:
    name: str
    values: tuple[float | None, ...]
    low: tuple[float | None, ...] = ()    # a band around the line (e.g. interquartile range)
    high: tuple[float | None, ...] = ()


def _text(value: object) -> str:
    # XML allows no C0 control, and a bidi override would reorder the label: both as escapes.
    return escape(terminal(str(value), multiline=True), quote=True)


def _num(value: float) -> str:
    """A tick or tooltip number: 1,234 or 12.5 or 0.125."""
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def short(label: str, limit: int = 16) -> str:
    """An axis label that fits under the chart; the tooltips have the whole text."""
    return label if len(label) <= limit else label[:limit - 1] + "…"


def _step(raw: float) -> float:
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def nice_ticks(top: float, count: int = 4) -> list[float]:
    """0 and round steps (1, 2, 5 × 10^k) up to at least `top`."""
    if top <= 0:
        return [0.0, 1.0]
    step = _step(top / count)
    return [i * step for i in range(int(math.ceil(top / step - 1e-9)) + 1)]


def axis_ticks(low: float, high: float, count: int = 4) -> list[float]:
    """The y axis of a history: from 0 (nice_ticks) while the data fills at least half of
    such an axis; else from a round step below the data, so that a change of a few percent
    (2,804 → 3,048 B/op) is not a flat line on top of an empty chart."""
    if low <= high / 2 or low >= high:
        return nice_ticks(high, count)
    step = _step((high - low) / count)
    first = math.floor(low / step + 1e-9)
    return [i * step for i in range(first, int(math.ceil(high / step - 1e-9)) + 1)]


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" {FONT}>'
            f"<title>{_text(title)}</title>" + "".join(body) + "</svg>\n")


def line_chart(title: str, labels: list[str], series: list[Series], *, y_title: str,
               marks: dict[int, str] | None = None, width: int = 960, height: int = 360) -> str:
    """One line per series over the revisions `labels`; None is a gap. `marks`: revisions drawn
    as ✗ on the axis, with their reason as the tooltip (a failed build, a crash). The y axis
    is axis_ticks': an axis from 0 has its zero line drawn darker, one that is not says where
    it starts, with a break mark at its foot."""
    left, right, top, bottom = 64, 12 + (110 if len(series) > 1 else 0), 12, 84
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for s in series for v in (*s.values, *s.low, *s.high) if v is not None]
    ticks = axis_ticks(min(values, default=0.0), max(values, default=0.0))
    y_min, y_max = ticks[0], ticks[-1]
    n = len(labels)

    def x(i: int) -> float:
        return left + (plot_w / 2 if n == 1 else plot_w * i / (n - 1))

    def y(v: float) -> float:
        return top + plot_h * (1 - (v - y_min) / (y_max - y_min))

    body = [f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fafafa" '
            'stroke="#ccc"/>']
    for t in ticks:
        body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(t):.1f}" y2="{y(t):.1f}" '
                    f'stroke="{"#888" if t == 0 else "#e4e4e4"}"/><text x="{left - 6}" '
                    f'y="{y(t) + 4:.1f}" text-anchor="end">{_num(t)}</text>')
    if y_min > 0:   # the axis is broken below its first tick: said, and drawn
        foot = top + plot_h
        body.append(f'<path class="axis-break" d="M{left - 5} {foot - 3} l10 -4 M{left - 5} '
                    f'{foot + 1} l10 -4" stroke="#555" fill="none"/><text class="axis-from" '
                    f'x="4" y="{height - 6}">y axis from {_num(y_min)}, not 0</text>')
    body.append(f'<text transform="translate(14 {top + plot_h / 2:.0f}) rotate(-90)" '
                f'text-anchor="middle">{_text(y_title)}</text>')
    every = max(1, math.ceil(n / 40))
    for i, label in enumerate(labels):
        if i % every == 0 or i == n - 1:
            body.append(f'<text transform="translate({x(i):.1f} {top + plot_h + 12}) '
                        f'rotate(-45)" text-anchor="end">{_text(short(label))}</text>')
    for i, reason in sorted((marks or {}).items()):
        body.append(f'<text x="{x(i):.1f}" y="{top + plot_h - 4}" text-anchor="middle" '
                    f'fill="#c00" font-size="14"><title>{_text(labels[i])}: '
                    f'{_text(reason)}</title>✗</text>')
    for k, s in enumerate(series):
        color = PALETTE[k % len(PALETTE)]
        dots = n < 2 or plot_w / (n - 1) >= DOT_SPACING
        body += _band(s, x, y, color) + _line(s, labels, x, y, color, dots)
        if len(series) > 1:
            ly = top + 14 * k + 8
            body.append(f'<rect x="{width - right + 8}" y="{ly - 7}" width="10" height="3" '
                        f'fill="{color}"/><text x="{width - right + 22}" y="{ly}">'
                        f'{_text(s.name)}</text>')
    return _svg(width, height, title, body)


def _segments(values: tuple[float | None, ...]) -> list[list[int]]:
    runs: list[list[int]] = [[]]
    for i, v in enumerate(values):
        if v is None:
            runs.append([])
        else:
            runs[-1].append(i)
    return [r for r in runs if r]


def _line(s: Series, labels: list[str], x, y, color: str, dots: bool) -> list[str]:
    """The series' line; a dot with its value at every revision (`dots`), else at a revision
    between gaps only (it has no line to show it)."""
    out = []
    for run in _segments(s.values):
        if len(run) > 1:
            points = " ".join(f"{x(i):.1f},{y(s.values[i]):.1f}" for i in run)
            out.append(f'<polyline points="{points}" fill="none" stroke="{color}" '
                       'stroke-width="1.6"/>')
        for i in run if dots or len(run) == 1 else ():
            out.append(f'<circle cx="{x(i):.1f}" cy="{y(s.values[i]):.1f}" r="2.6" '
                       f'fill="{color}"><title>{_text(labels[i])}: {_text(s.name)} '
                       f'{_num(s.values[i])}</title></circle>')
    return out


def _band(s: Series, x, y, color: str) -> list[str]:
    if not s.low:
        return []
    out = []
    both = tuple(None if lo is None or hi is None else 0.0 for lo, hi in zip(s.low, s.high))
    for run in _segments(both):
        upper = [f"{x(i):.1f},{y(s.high[i]):.1f}" for i in run]
        lower = [f"{x(i):.1f},{y(s.low[i]):.1f}" for i in reversed(run)]
        if len(run) == 1:   # one revision: a vertical bar of its spread
            out.append(f'<line x1="{x(run[0]):.1f}" x2="{x(run[0]):.1f}" '
                       f'y1="{y(s.low[run[0]]):.1f}" y2="{y(s.high[run[0]]):.1f}" '
                       f'stroke="{color}" stroke-opacity="0.35" stroke-width="6"/>')
        else:
            out.append(f'<polygon points="{" ".join(upper + lower)}" fill="{color}" '
                       'fill-opacity="0.18" stroke="none"/>')
    return out


def sparkline(title: str, values: list[float | None], width: int = 140, height: int = 30) -> str:
    """A small line of a history; gaps where a revision has no value; the last point dotted."""
    measured = [v for v in values if v is not None]
    low, high = min(measured, default=0.0), max(measured, default=0.0)
    span = (high - low) or 1.0
    n = len(values)

    def x(i: int) -> float:
        return 3 + (width - 6) * (i / (n - 1) if n > 1 else 0.5)

    def y(v: float) -> float:
        return height - 4 - (height - 8) * ((v - low) / span if high > low else 0.5)

    body = []
    for run in _segments(tuple(values)):
        points = " ".join(f"{x(i):.1f},{y(values[i]):.1f}" for i in run)
        body.append(f'<polyline points="{points}" fill="none" stroke="{PALETTE[0]}" '
                    'stroke-width="1.4"/>')
    last = next((i for i in range(n - 1, -1, -1) if values[i] is not None), None)
    if last is not None:
        body.append(f'<circle cx="{x(last):.1f}" cy="{y(values[last]):.1f}" r="2.2" '
                    f'fill="{PALETTE[1]}"/>')
    return _svg(width, height, title, body)


def sweep_curve(title: str, labels: list[str], failed: list[bool],
                panels: list[tuple[str, list[tuple[str, list[float | None]]]]],
                width: int = 960) -> str:
    """The curve of a sweep (what `sweep --plot` draws, as sweep_plot.py does): one panel per
    exact metric (y_title, [(scenario, value per revision)]) on an axis from 0, one line per
    scenario with a vertex at every revision that measured it; None is a gap. A dot, with its
    value as the tooltip, where a scenario's value is first measured or changes. A `failed`
    revision's label reads "✗"."""
    names = list(dict.fromkeys(name for _, lines in panels for name, _ in lines))
    left, right, top, bottom, gap = 64, 20 + 6 * max(map(len, names), default=0), 12, 84, 24
    panel_h = max(220, (14 * len(names) + 8 - gap * (len(panels) - 1)) // max(len(panels), 1))
    height = top + len(panels) * (panel_h + gap) - gap + bottom
    plot_w = width - left - 12
    width = left + plot_w + right   # the legend beside the plot, as wide as its names
    n = len(labels)

    def x(i: int) -> float:
        return left + (plot_w / 2 if n == 1 else plot_w * i / (n - 1))

    body = []
    for k, (y_title, lines) in enumerate(panels):
        y0 = top + k * (panel_h + gap)
        ticks = nice_ticks(max((v for _, vs in lines for v in vs if v is not None), default=0.0))

        def y(v: float) -> float:
            return y0 + panel_h * (1 - v / ticks[-1])

        body.append(f'<rect x="{left}" y="{y0}" width="{plot_w}" height="{panel_h}" '
                    'fill="#fafafa" stroke="#ccc"/>')
        for t in ticks:
            body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(t):.1f}" '
                        f'y2="{y(t):.1f}" stroke="{"#888" if t == 0 else "#e4e4e4"}"/><text '
                        f'x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{_num(t)}</text>')
        body.append(f'<text transform="translate(14 {y0 + panel_h / 2:.0f}) rotate(-90)" '
                    f'text-anchor="middle">{_text(y_title)}</text>')
        for name, values in lines:
            color = PALETTE[names.index(name) % len(PALETTE)]
            body.append(f'<g class="scenario"><title>{_text(name)}</title>')
            for run in _segments(tuple(values)):
                points = " ".join(f"{x(i):.1f},{y(values[i]):.1f}" for i in run)
                body.append(f'<polyline points="{points}" fill="none" stroke="{color}" '
                            'stroke-width="1.4"/>')
            last = None
            for i, v in enumerate(values):
                if v is not None and v != last:
                    body.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="2.4" '
                                f'fill="{color}"><title>{_text(labels[i])}: {_text(name)} '
                                f'{_num(v)}</title></circle>')
                last = v if v is not None else last
            body.append("</g>")
    foot = top + len(panels) * (panel_h + gap) - gap
    every = max(1, math.ceil(n / 40))
    for i, label in enumerate(labels):
        if i % every == 0 or i == n - 1:
            text = short(label) + (" ✗" if failed[i] else "")
            body.append(f'<text transform="translate({x(i):.1f} {foot + 12}) rotate(-45)" '
                        f'text-anchor="end">{_text(text)}</text>')
    for j, name in enumerate(names):
        ly = top + 14 * j + 8
        body.append(f'<rect x="{width - right + 8}" y="{ly - 7}" width="10" height="3" '
                    f'fill="{PALETTE[j % len(PALETTE)]}"/><text x="{width - right + 22}" '
                    f'y="{ly}">{_text(name)}</text>')
    return _svg(width, height, title, body)


def bars(title: str, groups: list[tuple[str, str, list[tuple[str, float]]]],
         width: int = 760, label_width: int = 150) -> str:
    """Horizontal bars, one panel per (metric, unit, [(name, value)])."""
    row, label_w = 18, label_width
    width += label_width - 150
    height = sum(26 + row * len(items) for _, _, items in groups) + 8
    body, top = [], 8
    for metric, unit, items in groups:
        body.append(f'<text x="4" y="{top + 12}" font-weight="bold">{_text(metric)}'
                    f'{" (" + _text(unit) + ")" if unit else ""}</text>')
        top += 20
        largest = max((v for _, v in items), default=0.0) or 1.0
        for k, (name, value) in enumerate(items):
            w = (width - label_w - 110) * value / largest
            body.append(f'<text x="{label_w - 6}" y="{top + 12}" text-anchor="end">'
                        f'{_text(name)}</text><rect x="{label_w}" y="{top + 2}" width="{w:.1f}" '
                        f'height="{row - 6}" fill="{PALETTE[k % len(PALETTE)]}"/>'
                        f'<text x="{label_w + w + 6:.1f}" y="{top + 12}">{_num(value)}</text>')
            top += row
        top += 6
    return _svg(width, height, title, body)


def flame(title: str, stacks: list[tuple[list[str], float, str]], width: int = 960) -> str:
    """An icicle graph of per-op allocations: one box per frame, the outermost on top, as wide
    as the bytes allocated below it; `stacks`: (frames outermost first, B/op, tooltip)."""
    root: dict = {"children": {}, "bytes": 0.0, "tips": []}
    for frames, size, tip in stacks:
        node = root
        node["bytes"] += size
        for frame in frames:
            node = node["children"].setdefault(frame, {"children": {}, "bytes": 0.0,
                                                       "tips": []})
            node["bytes"] += size
        node["tips"].append(tip)
    row = 18
    total = root["bytes"] or 1.0
    body: list[str] = []

    def draw(node: dict, x: float, depth: int) -> int:
        deepest = depth
        for k, (name, child) in enumerate(sorted(node["children"].items(),
                                                 key=lambda item: -item[1]["bytes"])):
            w = (width - 2) * child["bytes"] / total
            y = 1 + depth * row
            tip = f"{name}: {_num(child['bytes'])} B/op" + "".join(
                f"\n{t}" for t in child["tips"])
            body.append(f'<g><title>{_text(tip)}</title><rect x="{x + 1:.1f}" y="{y}" '
                        f'width="{max(w - 1, 0.5):.1f}" height="{row - 2}" '
                        f'fill="{PALETTE[(depth + k) % len(PALETTE)]}" fill-opacity="0.75"/>')
            if w > 40:
                label = name if len(name) * 6.2 < w - 6 else name[:max(int((w - 6) / 6.2) - 1,
                                                                       1)] + "…"
                body.append(f'<text x="{x + 4:.1f}" y="{y + 12}" fill="#000">'
                            f'{_text(label)}</text>')
            body.append("</g>")
            deepest = max(deepest, draw(child, x, depth + 1))
            x += w
        return deepest

    depth = draw(root, 0.0, 0)
    return _svg(width, depth * row + 4, title, body)
