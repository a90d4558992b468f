"""The SVG charts of scripts/allocbench/reports/charts.py, read back: every drawn point, band and bar maps back to
its data value through the axis the chart draws (its tick lines and labels), the ticks contain
the data, and a revision without a value is a gap, not a zero. Coordinates are written to
0.1 px, so a value read back is exact to the value of 0.05 px."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from allocbench.reports import charts

NS = {"s": "http://www.w3.org/2000/svg"}
LABELS = ["v1.0", "v1.1", "v1.2", "v1.3", "v1.4"]
# allocs/op of two allocators over five revisions: a gap at v1.1 (no result) and at v1.4 in
# the second; the first with its interquartile band, wider at v1.2. The largest drawn value is
# the band's 130: ticks of 130 / 4 = 32.5 rounded up to a step of 50, so 0, 50, 100, 150.
FIRST = charts.Series("glibc", (96, None, 120, 104, 0), low=(90, None, 110, 100, 0),
                      high=(100, None, 130, 108, 0))
SECOND = charts.Series("jemalloc", (64, 64, 72, 80, None))
TICKS = [0, 50, 100, 150]


def _parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def _points(text: str) -> list[tuple[float, float]]:
    return [tuple(map(float, p.split(","))) for p in text.split()]


class Axes:
    """The chart's own transform, read from what it draws: the y of each tick line and the x
    of each revision's label."""

    def __init__(self, root: ET.Element):
        self.ticks = {}
        for text in root.findall("s:text", NS):
            if text.get("text-anchor") == "end" and text.get("x") is not None:
                self.ticks[float(text.text.replace(",", ""))] = float(text.get("y")) - 4
        self.x = []
        for text in root.findall("s:text", NS):
            found = re.fullmatch(r"translate\(([\d.]+) [\d.]+\) rotate\(-45\)",
                                 text.get("transform", ""))
            if found:
                self.x.append((float(found[1]), text.text))
        low, high = min(self.ticks), max(self.ticks)
        self.low, self.y0 = low, self.ticks[low]
        self.scale = (self.ticks[low] - self.ticks[high]) / (high - low)

    def value(self, y: float) -> float:
        return self.low + (self.y0 - y) / self.scale

    def revision(self, x: float) -> str:
        (label,) = [label for at, label in self.x if abs(at - x) < 0.05]
        return label


def _tolerance(axes: Axes) -> float:
    return 0.05 / axes.scale + 1e-9


def test_the_ticks_start_at_zero_and_contain_every_drawn_value():
    axes = Axes(_parse(charts.line_chart("allocs/op", LABELS, [FIRST, SECOND],
                                         y_title="allocs/op")))
    assert sorted(axes.ticks) == TICKS
    assert [label for _, label in axes.x] == LABELS
    # Evenly spaced over the plot: 64 px left margin, 960 − 64 − 122 px wide for 5 revisions.
    assert [x for x, _ in axes.x] == pytest.approx([64 + 774 * i / 4 for i in range(5)],
                                                   abs=0.05)


def test_every_point_maps_back_to_its_value_and_a_missing_one_is_a_gap():
    root = _parse(charts.line_chart("allocs/op", LABELS, [FIRST, SECOND], y_title="allocs/op"))
    axes = Axes(root)
    drawn = {}
    for circle in root.findall("s:circle", NS):
        tip = circle.find("s:title", NS).text
        revision, name, shown = re.fullmatch(r"(\S+): (\S+) (\S+)", tip).groups()
        assert axes.revision(float(circle.get("cx"))) == revision
        drawn[(name, revision)] = axes.value(float(circle.get("cy")))
        assert float(shown) == pytest.approx(drawn[(name, revision)], abs=_tolerance(axes))
    expected = {(s.name, LABELS[i]): v for s in (FIRST, SECOND) for i, v in enumerate(s.values)
                if v is not None}
    assert drawn.keys() == expected.keys()   # no point where a revision has no value
    for key, value in expected.items():
        assert drawn[key] == pytest.approx(value, abs=_tolerance(axes)), key
    # The lines break at the gaps: glibc v1.0 alone (no line), then v1.2–v1.4; jemalloc
    # v1.0–v1.3.
    lines = [[(axes.revision(x), axes.value(y)) for x, y in _points(p.get("points"))]
             for p in root.findall("s:polyline", NS)]
    assert [[label for label, _ in line] for line in lines] == [
        ["v1.2", "v1.3", "v1.4"], ["v1.0", "v1.1", "v1.2", "v1.3"]]
    for line, series, start in zip(lines, (FIRST, SECOND), (2, 0)):
        assert [v for _, v in line] == pytest.approx(
            [float(v) for v in series.values[start:start + len(line)]], abs=_tolerance(axes))


def test_the_band_is_drawn_from_low_to_high_and_broken_at_the_gap():
    root = _parse(charts.line_chart("allocs/op", LABELS, [FIRST, SECOND], y_title="allocs/op"))
    axes = Axes(root)
    # v1.0 alone: a bar from its low to its high; v1.2–v1.4: a polygon, highs then lows back.
    (bar,) = [line for line in root.findall("s:line", NS) if line.get("stroke-width") == "6"]
    assert axes.revision(float(bar.get("x1"))) == "v1.0"
    assert (axes.value(float(bar.get("y1"))), axes.value(float(bar.get("y2")))) == \
        pytest.approx((90, 100), abs=_tolerance(axes))
    (polygon,) = root.findall("s:polygon", NS)
    outline = [(axes.revision(x), axes.value(y)) for x, y in _points(polygon.get("points"))]
    assert [label for label, _ in outline] == ["v1.2", "v1.3", "v1.4", "v1.4", "v1.3", "v1.2"]
    assert [v for _, v in outline] == pytest.approx([130, 108, 0, 0, 100, 110],
                                                    abs=_tolerance(axes))


@pytest.mark.parametrize("low, high, ticks", [
    (2804, 3048, [2800, 2900, 3000, 3100]),   # 244 / 4 = 61 → steps of 100, from below 2,804
    (96, 120, [90, 100, 110, 120]),           # 24 / 4 = 6 → steps of 10, from 90
    (64, 96, [60, 70, 80, 90, 100]),          # 64 > 96 / 2: 32 / 4 = 8 → steps of 10
    (48, 96, [0, 50, 100]),                   # 48 ≤ 96 / 2: the data fills half an axis from 0
    (96, 96, [0, 50, 100]),                   # a flat history is drawn from 0
])
def test_a_history_axis_starts_at_zero_unless_the_data_would_fill_less_than_half(low, high,
                                                                                  ticks):
    assert charts.axis_ticks(low, high) == pytest.approx(ticks)


def test_an_axis_that_does_not_start_at_zero_says_so_and_maps_points_back():
    series = charts.Series("a", (2804.0, 3024.0, 3024.0, 3048.0))
    root = _parse(charts.line_chart("B/op", LABELS[:4], [series], y_title="B/op"))
    axes = Axes(root)
    assert sorted(axes.ticks) == [2800, 2900, 3000, 3100]
    assert [t.text for t in root.findall("s:text", NS)
            if t.get("text-anchor") == "end" and t.get("x") is not None] == [
        "2,800", "2,900", "3,000", "3,100"]
    for circle, value in zip(root.findall("s:circle", NS), series.values):
        assert axes.value(float(circle.get("cy"))) == pytest.approx(value, abs=_tolerance(axes))
    (said,) = [t for t in root.findall("s:text", NS) if t.get("class") == "axis-from"]
    assert said.text == "y axis from 2,800, not 0"
    assert len(root.findall("s:path[@class='axis-break']", NS)) == 1
    # From zero: no break, and the zero line is the dark one.
    root = _parse(charts.line_chart("B/op", LABELS[:2], [charts.Series("a", (40.0, 96.0))],
                                    y_title="B/op"))
    assert root.findall("s:path[@class='axis-break']", NS) == []
    axes = Axes(root)
    dark = [float(line.get("y1")) for line in root.findall("s:line", NS)
            if line.get("stroke") == "#888"]
    assert dark == pytest.approx([axes.ticks[0]], abs=0.05)


def test_a_failed_revision_is_a_mark_on_the_axis_with_its_reason():
    root = _parse(charts.line_chart("B/op", LABELS, [SECOND], y_title="B/op",
                                    marks={4: "the build failed"}))
    axes = Axes(root)
    (mark,) = [t for t in root.findall("s:text", NS) if t.get("fill") == "#c00"]
    assert axes.revision(float(mark.get("x"))) == "v1.4"
    assert mark.find("s:title", NS).text == "v1.4: the build failed"
    assert "".join(mark.itertext()).endswith("✗")


def test_a_sparkline_spans_its_values_and_breaks_at_a_gap():
    """Between 4 px from the bottom (the lowest value) and 4 px from the top (the highest),
    of a 140 × 30 line whose points are 3 px in from each side."""
    root = _parse(charts.sparkline("t", [10, None, 30, 20]))
    lines = [_points(p.get("points")) for p in root.findall("s:polyline", NS)]
    assert lines == [[(3.0, 26.0)], [(round(3 + 134 * 2 / 3, 1), 4.0), (137.0, 15.0)]]
    (last,) = root.findall("s:circle", NS)
    assert (float(last.get("cx")), float(last.get("cy"))) == (137.0, 15.0)


def test_bars_are_as_long_as_their_values_and_labelled_with_them():
    """The longest bar is 760 − 150 − 110 = 500 px; the others in proportion."""
    root = _parse(charts.bars("footprint", [("RSS", "MiB", [("glibc", 40.0), ("jemalloc", 25.0),
                                                           ("mimalloc", 0.0)])]))
    widths = [float(r.get("width")) for r in root.findall("s:rect", NS)]
    assert widths == [500.0, 312.5, 0.0]
    texts = [t.text for t in root.findall("s:text", NS)]
    assert texts == ["RSS (MiB)", "glibc", "40", "jemalloc", "25", "mimalloc", "0"]


@pytest.mark.parametrize("largest, ticks", [
    (200, [0, 50, 100, 150, 200]),    # 200 / 4 = 50, a step exactly: the top tick is the value
    (201, [0, 100, 200, 300]),        # just past it: the next step, and a tick above the value
    (3, [0, 1, 2, 3]),
    (0.7, [0, 0.2, 0.4, 0.6, 0.8]),
    (0, [0, 1]),                      # nothing allocated: an axis still
])
def test_the_axis_reaches_the_largest_value_in_round_steps(largest, ticks):
    axes = Axes(_parse(charts.line_chart("B/op", LABELS[:2], [charts.Series("a", (largest, 0))],
                                         y_title="B/op")))
    assert sorted(axes.ticks) == pytest.approx(ticks)


# --- the sweep curve (matplotlib): its artists, read as savefig() gets them ----------------

def _sweep_columns():
    """v1.0 to v1.3 of two scenarios: `span` from 96 to 120 B/op, `trace` only from v1.1 on
    (absent before: a gap), v1.2 failed to build (a gap in both, and ✗ in its label)."""
    from allocbench.history import sweep_table
    fields = [{"section": "alloc", "key": k, "column": c, "unit": u, "gate": "exact"}
              for k, c, u in (("bytes_per_op", "B/op", "B"), ("allocs_per_op", "allocs/op", ""))]
    values = [{"span": (96, 3)}, {"span": (96, 3), "trace": (400, 9)}, None,
              {"span": (120, 4), "trace": (352, 8)}]
    columns = []
    for i, measured in enumerate(values):
        sha = f"{i:x}" * 40
        record = {"sha": sha, "label": LABELS[i], "subject": "s", "machine": "m", "recipe": "r",
                  "time_measured": False, "status": "ok" if measured else "build_failed"}
        record["results"] = measured and {
            "schema_version": 1, "context": {"harness": {"version": "1"}}, "fields": fields,
            "complete": True, "results": [
                {"name": name, "alloc": {"bytes_per_op": b, "allocs_per_op": a}}
                for name, (b, a) in measured.items()]}
        columns.append(sweep_table.Column(sha, LABELS[i], record))
    return columns


@pytest.fixture
def figures(monkeypatch) -> list[dict]:
    """What each axis of each figure holds when it is saved: labels, limits, ticks, lines."""
    import math
    from matplotlib.figure import Figure
    drawn: list[dict] = []
    save = Figure.savefig

    def record(figure, *args, **kwargs):
        for axis in figure.axes:
            drawn.append({
                "title": axis.get_title(loc="left"), "xlabel": axis.get_xlabel(),
                "ylabel": axis.get_ylabel(), "ylim": axis.get_ylim(),
                "xticks": [t.get_text() for t in axis.get_xticklabels()],
                "lines": {line.get_label(): [None if math.isnan(v) else v
                                             for v in line.get_ydata()]
                          for line in axis.get_lines()},
                "x": [list(line.get_xdata()) for line in axis.get_lines()],
                "markers": [(line.get_marker(), line.get_markersize())
                            for line in axis.get_lines()],
                "inches": tuple(figure.get_size_inches())})
        return save(figure, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", record)
    return drawn


def test_the_sweep_curve_draws_each_value_and_a_gap_for_every_missing_one(tmp_path, figures):
    from allocbench.history import sweep_plot
    path = tmp_path / "curve.svg"
    sweep_plot.plot(_sweep_columns(), ["bytes_per_op", "allocs_per_op"], path)
    ET.fromstring(path.read_text())   # a whole SVG document
    bytes_panel, allocs_panel = figures
    # Today's order: the newest revision's scenarios first.
    assert bytes_panel["lines"] == {"span": [96, 96, None, 120], "trace": [None, 400, None, 352]}
    assert allocs_panel["lines"] == {"span": [3, 3, None, 4], "trace": [None, 9, None, 8]}
    assert bytes_panel["x"] == allocs_panel["x"] == [[0, 1, 2, 3]] * 2
    assert (bytes_panel["ylabel"], allocs_panel["ylabel"]) == ("B/op (exact)",
                                                              "allocs/op (exact)")
    # From zero; the top is matplotlib's margin, 5 % of the data's range above its largest.
    assert bytes_panel["ylim"] == pytest.approx((0, 400 + 0.05 * (400 - 96)))
    assert allocs_panel["ylim"] == pytest.approx((0, 9 + 0.05 * (9 - 3)))
    assert allocs_panel["xticks"] == ["v1.0", "v1.1", "v1.2 ✗", "v1.3"]


@pytest.mark.parametrize("revisions, width", [(4, 6.0), (10, 10.0)])
def test_the_sweep_curve_widens_with_its_revisions(tmp_path, figures, revisions, width):
    """0.7 in per revision and 3 in for the axis and the legend, at least 6 in; 3.2 in of
    height per metric (two here) while the legend's names fit in that."""
    from allocbench.history import sweep_plot
    four = _sweep_columns()
    sweep_plot.plot([four[k % 4] for k in range(revisions)], ["bytes_per_op", "allocs_per_op"],
                    tmp_path / "curve.svg")
    assert [f["inches"] for f in figures] == [pytest.approx((width, 6.4))] * 2


def test_a_fit_draws_its_points_and_its_line_through_both_ends(figures):
    """16 B per child plus 40: the line's ends are at the smallest and the largest argument."""
    from fractions import Fraction
    from allocbench.harness import scaling
    from allocbench.reports import plots
    points = ((1, Fraction(56)), (5, Fraction(120)), (9, Fraction(190)))
    fit = scaling.Fit("trace_fanout/web_trace", (("share", 1),), 1, "children", "bytes_per_op",
                      points, Fraction(67, 4), Fraction(157, 4))
    ET.fromstring(plots.fit(fit, "B"))
    (axis,) = figures
    assert axis["lines"] == {"measured": [56.0, 120.0, 190.0],
                             "16.75 B per children + 39.25": [56.0, 190.0]}
    assert axis["x"] == [[1, 5, 9], [1, 9]]
    assert (axis["title"], axis["xlabel"], axis["ylabel"]) == (
        "trace_fanout/web_trace/share:1", "children", "bytes_per_op (B)")
    assert axis["ylim"][0] == 0


def test_the_samples_are_drawn_in_the_order_measured_with_a_break_between_forks(figures):
    from allocbench.reports import plots
    ET.fromstring(plots.samples("span: ns/op", "ns/op", [("base", [[10.0, 11.0], [12.0]]),
                                                          ("candidate", [[20.0], [21.0, 22.0]])]))
    sequence, histogram = figures
    # One line per fork, x running on across forks; a side's name once, on its first fork.
    assert sequence["x"] == [[0, 1], [2], [0], [1, 2]]
    assert list(sequence["lines"].values()) == [[10.0, 11.0], [12.0], [20.0], [21.0, 22.0]]
    assert [k for k in sequence["lines"] if not k.startswith("_")] == ["base", "candidate"]
    # Every sample a 3-point dot: a fork of one sample is a line of one point, seen only so.
    assert sequence["markers"] == [("o", 3)] * 4
    assert (sequence["title"], sequence["ylabel"]) == ("span: ns/op", "ns/op")
    assert histogram["xlabel"] == "samples"


def test_an_axis_label_is_cut_to_sixteen_characters_with_an_ellipsis():
    assert charts.short("x" * 16) == "x" * 16
    assert charts.short("x" * 17) == "x" * 15 + "…"
