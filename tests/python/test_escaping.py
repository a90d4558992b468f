"""Escaping: every writer passes outside text (names, labels, errors, units, subjects) through
the function of its output (escape.py), and hostile text comes out as text.

The unit tests pin each function on hand-derived strings. The end-to-end tests render the
pull-request comment, the run report and the sweep table of documents whose names, labels and
errors are hostile, turn the markdown into HTML with cmark-gfm as GitHub does (raw HTML let
through: the test proves our escaping, not cmark's), and check the HTML's structure and that
every hostile text reads exactly as it was (control characters as visible escapes).
"""

from __future__ import annotations

import copy
import csv
import io
import json
import subprocess
import sys
import unicodedata
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable

import pytest

from allocbench.base.errors import UserError
from allocbench.base.escape import csv_cell, md_code, md_text, plot_label, terminal
from allocbench.harness import run_report
from allocbench.history import bisection, sweep_progress, sweep_table
from allocbench.gate import compare, compare_format, config
from allocbench.commands import bisect, calibrate

DATA = Path(__file__).parent / "data"
CMARK = Path("/usr/bin/cmark-gfm")

HOSTILE = ["</details>", "<script>alert(1)</script>", "a|b", "x`y", "line1\nline2",
           "\x1b[31mred", "[link](javascript:alert(1))", "=1+1", "# heading", "**bold**",
           "a\\|b", "_under_ $x$ ~~s~~ &amp; <!-- c -->", "- 1. > quote", "``` fence",
           "tag/\u202egpj.exe\u202c", "iso\u2067late\u2069 z\u200bw"]
ERROR = "boom </details>\n<script>alert(2)</script> | `tick` <details>"


# --- the functions -------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("span_creation/web_span", "span_creation/web_span"),
    ("a\nb\tc\rd", "a\\nb\\tc\\rd"),
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("\x00\x07\x7f\x9b\x85", "\\x00\\x07\\x7f\\x9b\\x85"),
    ("é → 🟥 ⚠️ ✗", "é → 🟥 ⚠️ ✗"),
])
def test_terminal_makes_control_characters_visible(text, expected):
    assert terminal(text) == expected


# Every character a reader cannot see that reorders, hides or breaks text, and its escape.
INVISIBLE = [("\u202a", "\\u202a"), ("\u202b", "\\u202b"), ("\u202c", "\\u202c"),
             ("\u202d", "\\u202d"), ("\u202e", "\\u202e"), ("\u2066", "\\u2066"),
             ("\u2067", "\\u2067"), ("\u2068", "\\u2068"), ("\u2069", "\\u2069"),
             ("\u200e", "\\u200e"), ("\u200f", "\\u200f"), ("\u061c", "\\u061c"),
             ("\u200b", "\\u200b"), ("\u2060", "\\u2060"), ("\ufeff", "\\ufeff"),
             ("\u00ad", "\\xad"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"),
             ("\U000e0041", "\\U000e0041")]
# What stays: the joiners that spelling and emoji need, a visible format character, a
# variation selector.
KEPT = ["\u200c", "\u200d", "\u0600", "\u26a0\ufe0f"]


@pytest.mark.parametrize("char, escaped", INVISIBLE)
def test_every_escaping_function_shows_bidi_and_invisible_characters(char, escaped):
    text = f"v1.0{char}gpj.exe"
    shown = f"v1.0{escaped}gpj.exe"
    assert terminal(text) == terminal(text, multiline=True) == shown
    assert md_code(text) == f"`{shown}`"
    assert md_text(text) == f"v1.0\\{escaped}gpj.exe"   # the backslash is markdown's, doubled
    assert csv_cell(text) == shown
    assert csv_cell(f"={char}1") == f"'={escaped}1"
    assert plot_label(text) == shown


@pytest.mark.parametrize("text", KEPT)
def test_joiners_visible_format_characters_and_variation_selectors_are_kept(text):
    assert terminal(text) == md_code(text)[1:-1] == csv_cell(text) == plot_label(text) == text


def test_the_invisible_characters_are_unicodes_format_and_separator_characters():
    """Every format (Cf), line (Zl) and paragraph (Zp) separator character Unicode knows is
    shown as its escape, but the joiners and the visible prepended concatenation marks (from
    PropList.txt); every other printable character is kept."""
    kept = {0x200c, 0x200d, *range(0x600, 0x606), 0x6dd, 0x70f, 0x890, 0x891, 0x8e2, 0x110bd,
            0x110cd}
    chars = [chr(c) for c in range(0xa0, sys.maxunicode + 1) if not 0xd800 <= c <= 0xdfff]

    def escaped(char: str) -> str:
        code = ord(char)
        if unicodedata.category(char) not in ("Cf", "Zl", "Zp") or code in kept:
            return char
        if code <= 0xff:   # as Python writes it: the soft hyphen
            return f"\\x{code:02x}"
        return f"\\u{code:04x}" if code <= 0xffff else f"\\U{code:08x}"
    assert terminal("".join(chars)) == "".join(map(escaped, chars))


def test_csv_keeps_c0_controls_and_newlines():
    assert csv_cell("a\nb\x1bc") == "a\nb\x1bc"


def test_terminal_multiline_keeps_only_newlines():
    assert terminal("make: x\r\nerror\x1b[2J\tok\n", multiline=True) == (
        "make: x\\r\nerror\\x1b[2J\\tok\n")


@pytest.mark.parametrize("text, expected", [
    ("span_creation/web_span", "`span_creation/web_span`"),
    ("ground_truth/sized/bytes:24", "`ground_truth/sized/bytes:24`"),
    ("</details>", "`</details>`"),
    ("**bold**", "`**bold**`"),
    ("x`y", "``x`y``"),
    ("a``b`c", "```a``b`c```"),
    ("`x", "`` `x ``"),
    ("x`", "`` x` ``"),
    (" a ", "`  a  `"),
    (" ", "` `"),
    ("a|b", "`a`\\|`b`"),
    ("|a||", "\\|`a`\\|\\|"),
    ("a\\|b", "`a\\`\\|`b`"),
    ("line1\nline2", "`line1\\nline2`"),
    ("\x1b[31mred", "`\\x1b[31mred`"),
    ("", ""),
])
def test_md_code(text, expected):
    assert md_code(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("candidate: SkipWithError: the tag table is full",
     "candidate: SkipWithError: the tag table is full"),
    ("bytes_per_op, g++ 12.2.0 @ 2.50GHz (x) 2026-11-30T01:00:00Z /l/c.log 0.1.0",
     "bytes_per_op, g++ 12.2.0 @ 2.50GHz (x) 2026-11-30T01:00:00Z /l/c.log 0.1.0"),
    ("</details><script>", "\\</details\\>\\<script\\>"),
    ("[x](javascript:alert(1))", "\\[x\\](javascript:alert(1))"),
    ("![i](y)", "!\\[i\\](y)"),
    ("a|b\\c", "a\\|b\\\\c"),
    ("`code` **b** *i* _i_ __b__ ~~s~~",
     "\\`code\\` \\*\\*b\\*\\* \\*i\\* \\_i\\_ \\_\\_b\\_\\_ \\~\\~s\\~\\~"),
    ("{a} &amp; $x$", "\\{a\\} \\&amp; \\$x\\$"),
    ("snake_case é_x _x x_", "snake_case é_x \\_x x\\_"),
    ("# heading", "\\# heading"),
    ("- item", "\\- item"),
    ("+ item", "\\+ item"),
    ("=1+1", "\\=1+1"),
    ("---", "\\---"),
    ("  - x", "  \\- x"),
    ("1. x", "1\\. x"),
    ("12) x", "12\\) x"),
    ("1.", "1\\."),
    ("1.5 B", "1.5 B"),
    ("> quote", "\\> quote"),
    ("a\nb\x1b", "a\\\\nb\\\\x1b"),
])
def test_md_text(text, expected):
    assert md_text(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-x", "'-x"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("v1.2", "v1.2"), ("a=b", "a=b"), ("", ""),
])
def test_csv_cell(text, expected):
    assert csv_cell(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("v1.2", "v1.2"), ("$x$", "\\$x\\$"), ("cost $5", "cost \\$5"),
    ("a\nb", "a\\nb"), ("_hidden", " _hidden"),
])
def test_plot_label(text, expected):
    assert plot_label(text) == expected


# --- rendering markdown as GitHub does -----------------------------------------------------

class Html(HTMLParser):
    """What the assertions look at in cmark-gfm's HTML: how often each tag opens and closes,
    the text of each block (p, li, headings, summary, cells) and the cells of each table row,
    with whether the row lies inside a <details>."""

    BLOCKS = {"p", "li", "h1", "h2", "h3", "h4", "summary", "th", "td", "sub"}

    def __init__(self, markup: str):
        super().__init__()
        self.starts: Counter[str] = Counter()
        self.ends: Counter[str] = Counter()
        self.stack: list[str] = []
        self.blocks: list[tuple[str, str]] = []
        self.rows: list[tuple[list[str], bool]] = []
        self._text: list[list[str]] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.starts[tag] += 1
        self.stack.append(tag)
        if tag == "tr":
            self.rows.append(([], "details" in self.stack))
        if tag in self.BLOCKS:
            self._text.append([])

    def handle_endtag(self, tag: str) -> None:
        self.ends[tag] += 1
        if tag in self.stack:
            while self.stack.pop() != tag:
                pass
        if tag in self.BLOCKS and self._text:
            text = "".join(self._text.pop())
            self.blocks.append((tag, text))
            if tag in ("th", "td"):
                self.rows[-1][0].append(text)

    def handle_data(self, data: str) -> None:
        if self._text:
            self._text[-1].append(data)

    def texts(self, tag: str) -> list[str]:
        return [text for t, text in self.blocks if t == tag]


def github(markdown: str) -> Html:
    if not CMARK.exists():
        pytest.fail(f"{CMARK} not found: install it with `apt-get install -y cmark-gfm` "
                    "(./allocbench test installs it with the other test packages)")
    done = subprocess.run([str(CMARK), "--extension", "table", "--extension", "strikethrough",
                           "--extension", "autolink", "--unsafe"], input=markdown,
                          capture_output=True, text=True, check=True)
    return Html(done.stdout)


def assert_one_even_table(html: Html, body_rows: int) -> list[list[str]]:
    """The body rows' cells, after checking that there is one table, of a header and
    `body_rows` rows, all with the same number of cells."""
    assert html.starts["table"] == 1
    assert len({len(cells) for cells, _ in html.rows}) == 1, html.rows
    assert len(html.rows) == 1 + body_rows
    return [cells for cells, _ in html.rows[1:]]


def assert_terminal_safe(text: str) -> None:
    bad = [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f
           or c in "".join(char for char, _ in INVISIBLE)]
    assert not bad, (bad, text)


# --- the pull-request comment and the console ----------------------------------------------

BASE_LABEL, CAND_LABEL = "</details> `v1`", "=1+1 <b>x</b> | y\n"


def hostile_comparison(tmp_path: Path) -> compare.Comparison:
    """The golden comparison (tests/python/data/compare) with every instance renamed to a
    hostile name on both sides, more instances for the rest of the names, hostile labels, a
    hostile unit and a hostile failure."""
    docs = {side: json.loads((DATA / "compare" / f"{side}.json").read_text())
            for side in ("base", "cand")}
    originals = list(dict.fromkeys(r["name"] for d in docs.values() for r in d["results"]))
    names = dict(zip(originals, HOSTILE))
    for extra in HOSTILE[len(originals):]:
        for doc in docs.values():
            copied = copy.deepcopy(doc["results"][0])
            copied["name"] = copied["scenario"] = extra
            doc["results"].append(copied)
    for side, doc in docs.items():
        doc["context"]["revision"]["describe"] = BASE_LABEL if side == "base" else CAND_LABEL
        for field in doc["fields"]:
            if field["key"] == "bytes_per_op":
                field["unit"] = "B|<i>"
        for r in doc["results"]:
            if r["name"] in names:
                r["name"] = r["scenario"] = names[r["name"]]
            if r.get("error"):
                r["error"] = ERROR
        (tmp_path / f"{side}.json").write_text(json.dumps(doc))
    return compare.compare(compare.load_side(tmp_path / "base.json"),
                           compare.load_side(tmp_path / "cand.json"),
                           config.load(DATA / "compare" / "allocbench.toml"))


def test_comment_keeps_hostile_names_and_errors_as_text(tmp_path):
    comparison = hostile_comparison(tmp_path)
    assert {i.name for i in comparison.instances} | set(comparison.added) | set(
        comparison.removed) == set(HOSTILE)
    html = github(compare_format.markdown(comparison, "any"))

    assert (html.starts["details"], html.ends["details"]) == (1, 1)
    assert html.starts["script"] == 0
    allowed = {"h2", "h3", "p", "strong", "em", "ul", "li", "code", "details", "summary",
               "table", "thead", "tbody", "tr", "th", "td", "sub"}
    assert set(html.starts) <= allowed, set(html.starts) - allowed
    assert html.rows and all(inside for _, inside in html.rows)   # the table stays in <details>

    expected = [(terminal(i.name), bool(i.failure)) for i in comparison.instances
                for _ in range(bool(i.failure) + len(i.exact) + len(i.time))]
    cells = assert_one_even_table(html, len(expected))
    assert [(row[0], row[-1] == "❌ failed") for row in cells] == expected
    failed = [row for row in cells if row[-1] == "❌ failed"]
    assert [row[4] for row in failed] == [f"candidate: {terminal(ERROR)}"]
    assert "+96 B|<i> (+400.0%)" in [row[4] for row in cells]

    assert html.texts("h2") == [f"allocbench: {terminal(BASE_LABEL)} → {terminal(CAND_LABEL)}"]
    scenarios = [t.removeprefix("scenario:") for t in html.texts("p") if t.startswith("scenario:")]
    assert set(scenarios) <= {terminal(n) for n in HOSTILE} and len(scenarios) >= 4
    assert f"❌ failed in the candidate: {terminal(ERROR)}" in html.texts("li")
    added = [t for t in html.texts("li") if t in {terminal(n) for n in HOSTILE}]
    assert added == [terminal(n) for n in (*comparison.added, *comparison.removed)]
    gate = next(t for t in html.texts("p") if t.startswith("❌ Gate failed"))
    for name, _ in compare.gated(comparison, "any"):
        assert terminal(name) in gate


def test_console_prints_no_control_characters(tmp_path):
    comparison = hostile_comparison(tmp_path)
    text = compare_format.console(comparison, "any", show_all=True)
    assert_terminal_safe(text)
    lines = text.splitlines()
    assert lines[0].startswith(f"base:      {terminal(BASE_LABEL)} (")
    for inst in comparison.instances:
        assert any(terminal(inst.name) in line for line in lines[4:]), inst.name
    assert f"candidate: {terminal(ERROR)}" in text


# --- the run report ------------------------------------------------------------------------

def test_report_keeps_hostile_names_context_and_errors_as_text():
    doc = json.loads((DATA / "results_small.json").read_text())
    template = doc["results"][0]
    doc["results"] = []
    for i, name in enumerate(HOSTILE):
        r = copy.deepcopy(template)
        r["name"] = r["scenario"] = name
        if i % 3 == 1:
            r["alloc"]["steady"], r["alloc"]["steady_reason"] = False, f"{ERROR} ({i})"
        if i % 3 == 2:
            r["error"] = f"{ERROR} ({i})"
        r["counters"] = {name: {"value": 3, "unit": "<b>u</b>|"}}
        doc["results"].append(r)
    context = doc["context"]
    context["revision"]["describe"] = BASE_LABEL
    context["host"]["name"] = "<script>alert(3)</script>"
    context["cpu"]["model"] = "**fast** | cpu\x1b[2J"
    context["harness"]["compiler"] = "g++ `x` <img src=x>"
    context["date"] = "</details>\n# 2026"
    doc["fields"][0]["column"] = "B/op|<i>x</i>"
    html = github(run_report.markdown(doc, "results: # [x](y)"))

    assert html.starts["script"] == 0 and html.starts["details"] == 0
    allowed = {"h1", "h2", "p", "ul", "li", "code", "table", "thead", "tbody", "tr", "th", "td",
               "em"}
    assert set(html.starts) <= allowed, set(html.starts) - allowed
    assert html.texts("h1") == ["results: # [x](y)"]
    items = html.texts("li")
    assert f"revision: {terminal(BASE_LABEL)}" in items
    assert ("host: <script>alert(3)</script>, **fast** | cpu\\x1b[2J × 2") in items
    assert "harness: allocbench 0.1.0, g++ `x` <img src=x>" in items
    assert "date: </details>\\n# 2026" in items

    main, counters = html.rows[:1 + len(HOSTILE)], html.rows[1 + len(HOSTILE):]
    assert {len(cells) for cells, _ in main} == {1 + len([  # Ir/op: only where it ran
        f for f in doc["fields"] if f.get("column") and f["section"] != "instructions"])}
    assert main[0][0][1] == "B/op|<i>x</i>"
    marks = {1: " *", 2: " !"}
    assert [cells[0] for cells, _ in main[1:]] == [
        terminal(n) + marks.get(i % 3, "") for i, n in enumerate(HOSTILE)]
    assert {len(cells) for cells, _ in counters} == {3}
    assert [cells[:2] for cells, _ in counters[1:]] == [[terminal(n)] * 2 for n in HOSTILE]
    assert {cells[2] for cells, _ in counters[1:]} == {"3 <b>u</b>|"}
    for i, name in enumerate(HOSTILE):
        if i % 3 == 1:
            assert f"* {terminal(name)} is not steady: {terminal(ERROR)} ({i})" in items
        if i % 3 == 2:
            assert f"! {terminal(name)} failed: {terminal(ERROR)} ({i})" in items


# --- the sweep table, its CSV and its plot ------------------------------------------------

SWEEP_LABELS = ["=1+1", "</details>", "v1|v2", "x`y", "v2\u202e0.1v", "\x1b[31mred"]
LOG_ERROR = "x.cc:1:1: error: </details> <script>alert(1)</script> | `q` **b**"
LOG = "/tmp/<b>logs</b>|x.log"


def results_doc(values: dict[str, float]) -> dict[str, Any]:
    fields = [{"section": "alloc", "key": "bytes_per_op", "column": "B/op", "unit": "B",
               "gate": "exact"}]
    return {"schema_version": 1, "context": {"harness": {"version": "1"}}, "fields": fields,
            "complete": True, "results": [{"name": n, "alloc": {"bytes_per_op": v}}
                                          for n, v in values.items()]}


def sweep_columns() -> list[sweep_table.Column]:
    """One column per hostile label: measured ones where every name goes from 100 to 88 B/op,
    then one that failed to build."""
    columns = []
    for i, label in enumerate(SWEEP_LABELS):
        sha = f"{i:x}" * 40
        record: dict[str, Any] = {"sha": sha, "label": label, "subject": "s", "machine": "m",
                                  "recipe": "r", "time_measured": False}
        if i < len(SWEEP_LABELS) - 1:
            value = 100 - 4 * i
            record.update(status="ok", results=results_doc({n: value for n in HOSTILE}))
        else:
            record.update(status="build_failed", results=None, log=LOG,
                          log_tail=f"make: x\n{LOG_ERROR}\nmake: *** Error 2")
        columns.append(sweep_table.Column(sha, label, record))
    return columns


def test_sweep_table_keeps_hostile_labels_names_and_logs_as_text():
    columns = sweep_columns()
    html = github(sweep_table.markdown(columns, ["bytes_per_op"]))
    assert html.starts["script"] == 0 and html.starts["details"] == 0
    allowed = {"h4", "p", "ul", "li", "code", "table", "thead", "tbody", "tr", "th", "td", "sup"}
    assert set(html.starts) <= allowed, set(html.starts) - allowed
    cells = assert_one_even_table(html, len(HOSTILE))
    header = html.rows[0][0]
    labels = [terminal(label) for label in SWEEP_LABELS]
    assert labels[4] == "v2\\u202e0.1v"
    assert header == ["scenario", *labels, f"Δ {labels[0]} → {labels[-1]}", "Δ %"]
    assert [row[0] for row in cells] == [terminal(n) for n in HOSTILE]
    assert {tuple(row[1:]) for row in cells} == {("100", "96", "92", "88", "84", "✗", "-16 ¹",
                                                  "-16.0%")}
    assert (f"✗ {labels[-1]} (5555555555) build failed: {LOG_ERROR} — log: {LOG}"
            in html.texts("li"))


def test_sweep_csv_cells_cannot_be_formulas():
    rows = list(csv.reader(io.StringIO(sweep_table.csv_text(sweep_columns(),
                                                            ["bytes_per_op"]))))
    assert rows[0] == ["metric", "scenario", "'=1+1", "</details>", "v1|v2", "x`y",
                       "v2\\u202e0.1v", "\x1b[31mred", "delta", "delta_percent"]
    assert rows[2] == ["status", "", "ok", "ok", "ok", "ok", "ok", "build_failed", "", ""]
    by_name = {row[1]: row for row in rows[3:]}
    assert by_name["'=1+1"] == ["bytes_per_op", "'=1+1", "100", "96", "92", "88", "84", "",
                                "-16", "-16.00"]
    assert by_name["tag/\\u202egpj.exe\\u202c"][2] == "100"
    assert set(by_name) == {csv_cell(n) for n in HOSTILE}


def test_sweep_plot_draws_dollars_and_control_characters(tmp_path):
    from allocbench.history import sweep_plot
    columns = sweep_columns()
    columns[0] = sweep_table.Column(columns[0].sha, "$\\frac{$", columns[0].record)
    for column in columns[:-1]:
        for r in column.record["results"]["results"]:
            r["name"] = "cost $\\frac{x$ " + r["name"]   # malformed mathtext if parsed
    path = tmp_path / "curve.png"
    sweep_plot.plot(columns, ["bytes_per_op"], path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- progress and bisect lines ------------------------------------------------------------

def test_progress_lines_print_no_control_characters(capsys):
    progress = sweep_progress.Progress(total=3, to_measure=1)
    progress.index, progress.name = 1, "\x1b[31mv1\nforged"
    progress.say("build failed: x.cc:1: error: \x1b[2J\r100%")
    err = capsys.readouterr().err
    assert_terminal_safe(err)
    assert err.startswith("allocbench: [1/3] \\x1b[31mv1\\nforged: build failed: x.cc:1: "
                          "error: \\x1b[2J\\r100% (")


def bisect_record(sha: str, value: float | None, subject: str, **extra: Any) -> dict[str, Any]:
    record = {"sha": sha, "label": "\x1b]0;title\x07v2", "subject": subject, **extra}
    if value is None:
        return {**record, "status": "build_failed", "results": None, "log": "/l/\x1b.log",
                "log_tail": "x.cc:1: error: \x1b[2J gone\r"}
    return {**record, "status": "ok",
            "results": {"fields": [{"section": "alloc", "key": "bytes_per_op",
                                    "gate": "exact"}],
                        "results": [{"name": "s\x1b[1m", "alloc": {"bytes_per_op": value}}]}}


def test_bisect_prints_no_control_characters(capsys):
    shas = [c * 40 for c in "abc"]
    probed = [bisect_record(shas[0], 64, "tidy\x1b[8m"),
              bisect_record(shas[1], None, "refactor\nforged line"),
              bisect_record(shas[2], 96, "fix\r\x9b2J")]
    bisect._report(bisection.Search(low=0, high=2, skipped=[1]), probed, "s\x1b[1m",
                   "bytes_per_op", "9" * 40, 64)
    bisect._report(bisection.Search(low=-1, high=0), probed[2:], "s\x1b[1m", "bytes_per_op",
                   "9" * 40, 64)
    out = capsys.readouterr().out
    assert_terminal_safe(out)
    assert out.splitlines()[1] == ("    bbbbbbbbbb (skipped, build failed: x.cc:1: error: "
                                   "\\x1b[2J gone) refactor\\nforged line")
    assert f"first change: {shas[2]} (\\x1b]0;title\\x07v2)\n    fix\\r\\x9b2J\n" in out
    with pytest.raises(UserError) as e:
        bisect._endpoint(probed[1], "good", "s\x1b[1m", "bytes_per_op")
    assert_terminal_safe(str(e.value))
    assert "(log: /l/\\x1b.log)" in str(e.value)


def test_calibrate_table_escapes_names():
    found = [calibrate.Calibration(
        scenario="s", args={}, threads=1, allocator="glibc", name=name, metric="ns_per_op",
        rounds=10, samples_per_side=9, median_cv=0.01, unstable_rounds=0, false_positives=0,
        false_positive_rate=0.0, mde_percent=3.0, half_width_percent=1.0, threshold=5.0,
        noisy=False, interval_false_positives=0, interval_mde_percent=3.0) for name in HOSTILE]
    assert_terminal_safe(calibrate.table(found, markdown=False))
    html = github(calibrate.table(found, markdown=True))
    assert html.starts["script"] == 0
    cells = assert_one_even_table(html, len(HOSTILE))
    assert [row[0] for row in cells] == [terminal(n) for n in HOSTILE]


# --- the SVG charts of the report (scripts/allocbench/reports/charts.py) ---------------------------------------

Drawing = tuple[Callable[[], str], list[str]]


def _charts(text: str) -> dict[str, Drawing]:
    """Each chart writer with `text` in every heading and label it draws: what draws the SVG,
    and the texts it must show, each as the chart shows it (the x-axis labels cut to 16
    characters, the tooltips whole)."""
    from allocbench.reports import charts
    shown = terminal(text, multiline=True)
    return {
        "line chart": (lambda: charts.line_chart(
            text, [text, "v2"], [charts.Series(text, (1.0, None)), charts.Series("b", (2.0, 3.0))],
            y_title=text, marks={1: text}),
            [shown, terminal(charts.short(text), multiline=True), f"{shown}: {shown} 1",
             f"v2: {shown}"]),
        "sparkline": (lambda: charts.sparkline(text, [1.0, None, 2.0]), [shown]),
        "bars": (lambda: charts.bars(text, [(text, text, [(text, 4.0)])]),
                 [shown, f"{shown} ({shown})"]),
        "flame graph": (lambda: charts.flame(text, [([text, "inner"], 96.0, text)]),
                        [shown, f"{shown}: 96 B/op", f"inner: 96 B/op\n{shown}"]),
        "sweep curve": (lambda: charts.sweep_curve(
            text, [text, "v2"], [False, True], [(text, [(text, [8.0, None])])]),
            [shown, terminal(charts.short(text), multiline=True), "v2 ✗", f"{shown}: {shown} 8"]),
    }


def _pictures(text: str) -> dict[str, Drawing]:
    """The same for matplotlib's pictures (plots.py): a `$` drawn as a `$`, control characters
    as escapes, and a label that starts with `_` after a space (or the legend would drop it)."""
    from fractions import Fraction
    from allocbench.harness import scaling
    from allocbench.reports import plots
    drawn = terminal(text)
    drawn = " " + drawn if drawn.startswith("_") else drawn
    fit = scaling.Fit(text, (), 1, text, text, ((1, Fraction(1)), (2, Fraction(2))),
                      Fraction(1), Fraction(0))
    return {
        "samples": (lambda: plots.samples(text, text, [(text, [[1.0, 2.0]])]), [drawn]),
        "fit": (lambda: plots.fit(fit, text),
                [drawn, f"{drawn} ({drawn})", f"1 {drawn} per {drawn} + 0"]),
    }


SVG_ELEMENTS = {"svg", "title", "rect", "line", "text", "polyline", "circle", "polygon", "g"}


@pytest.mark.parametrize("kind", ["line chart", "sparkline", "bars", "flame graph", "samples",
                                  "fit", "sweep curve"])
@pytest.mark.parametrize("text", HOSTILE)
def test_every_chart_draws_hostile_headings_and_labels_as_text(kind, text):
    """Parsed as XML (a `<` or `&` not escaped would not parse, or add an element): no script,
    link or handler (charts.py: only its own elements), no raw control or bidi character, and
    each heading, label, legend and tooltip reads back as the escaped text."""
    import xml.etree.ElementTree as ET
    ours = kind in ("line chart", "sparkline", "bars", "flame graph", "sweep curve")
    draw, expected = (_charts if ours else _pictures)(text)[kind]
    svg = draw()
    root = ET.fromstring(svg)
    tags = {e.tag.rsplit("}", 1)[-1] for e in root.iter()}
    assert not tags & {"script", "a", "foreignObject", "iframe"}
    assert tags <= SVG_ELEMENTS or not ours, tags - SVG_ELEMENTS
    assert not [k for e in root.iter() for k in e.attrib if k.startswith("on")]
    assert not [c for c in svg if unicodedata.category(c) in ("Cc", "Cf") and c != "\n"]
    texts = [e.text for e in root.iter() if e.text]
    if ours:
        assert root.find("{http://www.w3.org/2000/svg}title").text == \
            terminal(text, multiline=True)
    for want in expected:
        assert want in texts, (want, texts)
