"""allocbench.toml: budgets per scenario glob, time settings, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allocbench import cli
from allocbench.gate import config
from allocbench.gate.config import Limit

DATA = Path(__file__).parent / "data" / "compare"


@pytest.fixture(autouse=True)
def elsewhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "allocbench.toml"
    path.write_text(text)
    return path


def test_defaults_without_a_file():
    cfg = config.load(None)
    assert cfg.path is None
    assert (cfg.time.threshold, cfg.time.max_cv, cfg.time.confidence) == (5.0, 0.10, 0.95)
    assert cfg.limit("anything", "bytes_per_op") == Limit(0.0)
    assert cfg.sampled == config.Sampled(tolerance=None, unstable="fail")


def test_allocbench_toml_in_the_current_directory_is_read(tmp_path):
    write(tmp_path, "[time]\nthreshold = 3\n")
    assert config.load(None).time.threshold == 3.0


def test_last_matching_budget_wins_per_key(tmp_path):
    cfg = config.load(write(tmp_path, """
[[budget]]
match = "trace_fanout/*"
bytes_per_op = 64
time_threshold = 10

[[budget]]
match = "trace_fanout/web_trace/children:20"
bytes_per_op = "5%"
"""))
    assert cfg.limit("trace_fanout/web_trace/children:5", "bytes_per_op") == Limit(64.0)
    children20 = cfg.limit("trace_fanout/web_trace/children:20", "bytes_per_op")
    assert children20 == Limit(5.0, percent=True) and children20.allowed(2000) == 100.0
    assert cfg.limit("strings/copy/length:15", "bytes_per_op") == Limit(0.0)
    assert cfg.threshold("trace_fanout/web_trace/children:20") == 10.0
    assert cfg.threshold("strings/copy/length:15") == 5.0


def one_line_error(tmp_path: Path, capsys, text: str) -> str:
    path = write(tmp_path, text)
    code = cli.main(["compare", str(DATA / "base.json"), str(DATA / "cand.json"),
                     "--config", str(path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    return err[0].replace(str(path), "allocbench.toml")


@pytest.mark.parametrize("text, message", [
    ("[time]\ntreshold = 5\n",
     "unknown key 'time.treshold'; the known keys here are threshold, max_cv, confidence, "
     "min_samples, paired_threshold — fix the spelling or remove it"),
    ("[time]\npaired_threshold = 0\n",
     "'time.paired_threshold' is 0; it must be above 0 and at most 1000 (percent, e.g. 1 for "
     "1%)"),
    ("[gate]\nthreshold = 5\n",
     "unknown key 'gate'; the known keys here are time, budget, sites, build, sampled — fix the "
     "spelling or remove it"),
    ("[[budget]]\nmatch = \"strings/*\"\nbyte_per_op = 8\n",
     "unknown key 'budget[1].byte_per_op'; a budget takes 'match', 'time_threshold' and the "
     "exact metrics bytes_per_op, allocs_per_op, frees_per_op, instructions_per_op — fix the "
     "spelling or remove it"),
    ("[time]\nthreshold = \"5%\"\n",
     "'time.threshold' must be a number (percent, e.g. 5 for 5%), not a string ('5%')"),
    ("[time]\nmax_cv = true\n",
     "'time.max_cv' must be a number (a fraction, e.g. 0.10), not a boolean (True)"),
    ("[time]\nconfidence = 95\n",
     "'time.confidence' is 95; it must be between 0.5 and 0.999 (a fraction, e.g. 0.95)"),
    ("[time]\nmin_samples = 1\n", "'time.min_samples' is 1; it must be at least 2"),
    ("[[budget]]\nmatch = \"strings/*\"\nbytes_per_op = -8\n",
     "'budget[1].bytes_per_op' must be an allowed increase: a number >= 0 in the metric's "
     "unit, or a percent string like \"10%\", not an integer (-8)"),
    ("[[budget]]\nbytes_per_op = 8\n",
     "budget[1] has no 'match'; add a glob over instance names, e.g. match = \"strings/*\""),
    ("[[budget]]\nmatch = 7\n",
     "'budget[1].match' must be a glob over instance names (e.g. \"strings/*\"), not an "
     "integer (7)"),
    ("[budget]\nmatch = \"x\"\n",
     "'budget' must be an array of tables ([[budget]] entries), not a table ({'match': 'x'})"),
    ("[time\n", "not valid TOML (Expected ']' at the end of a table declaration (at line 1, "
     "column 6))"),
    ("[sampled]\n", "[sampled] names neither 'tolerance' nor 'unstable'; add one, e.g. "
     "tolerance = \"1%\" or tolerance = 8 (bytes), or remove the table"),
    ("[sampled]\nunstable = \"ignore\"\n",
     "'sampled.unstable' must be \"fail\" (a sampled B/op the gate cannot judge fails it) or "
     "\"show\" (it is shown, not failed), not a string ('ignore')"),
    ("[sampled]\nunstable = true\n",
     "'sampled.unstable' must be \"fail\" (a sampled B/op the gate cannot judge fails it) or "
     "\"show\" (it is shown, not failed), not a boolean (True)"),
    ("[sampled]\nunstabel = \"show\"\n",
     "unknown key 'sampled.unstabel'; the known keys here are tolerance, unstable — fix the "
     "spelling or remove it"),
])
def test_bad_config_is_a_one_line_error_naming_file_key_and_fix(tmp_path, capsys, text,
                                                                 message):
    expected = f"allocbench: error: allocbench.toml: {message}"
    assert one_line_error(tmp_path, capsys, text) == expected


UNCLOSED = ("opens a set of characters that is never closed (fnmatch would match a '[' itself "
            "there); close the set with ']', or write '[[]' to match a '['")
EMPTY = "matches no character, so the glob matches nothing (a range is written low to high, " \
    "e.g. '[a-z]')"
GLOB_ERRORS = [  # (the second entry's match, the error after "'<table>[2].match' = ")
    ("[", f"'[': the '[' at character 1 {UNCLOSED}"),
    ("strings/[ab", f"'strings/[ab': the '[' at character 9 {UNCLOSED}"),
    ("a[]", f"'a[]': the '[' at character 2 {UNCLOSED}"),         # ']' first is in the set
    ("a[!]", f"'a[!]': the '[' at character 2 {UNCLOSED}"),
    ("x/[z-a]", f"'x/[z-a]': '[z-a]' {EMPTY}"),
    ("[9-0][a]", f"'[9-0][a]': '[9-0]' {EMPTY}"),
    ("*[!\x00-\U0010ffff]", f"'*[!\\x00-\\U0010ffff]': '[!\\x00-\\U0010ffff]' {EMPTY}"),
    ("len:[^0-9]", "'len:[^0-9]': '[^0-9]' matches '^' or one of '0-9': a set is negated with "
                   "'!', not '^'; write '[!0-9]' for any character but those"),
    ("a\\*", "'a\\\\*': the '\\' at character 2 escapes nothing (fnmatch has no escape "
              "character): write '[*]', '[?]' or '[[]' to match those characters, '[\\]' to "
              "match a '\\'"),
]


def budget_toml(table: str, *globs: str) -> str:
    """[[table]] entries of these globs (as TOML strings: json's escapes are TOML's)."""
    return "".join(f"[[{table}]]\nmatch = {json.dumps(g, ensure_ascii=False)}\n"
                   "bytes_per_op = 8\n" for g in globs)


@pytest.mark.parametrize("table", ["budget", "sites"])
@pytest.mark.parametrize("glob, message", GLOB_ERRORS, ids=[g for g, _ in GLOB_ERRORS])
def test_a_glob_that_cannot_match_as_meant_names_its_entry_and_the_fix(tmp_path, capsys, table,
                                                                       glob, message):
    assert one_line_error(tmp_path, capsys, budget_toml(table, "*", glob)) == (
        f"allocbench: error: allocbench.toml: '{table}[2].match' = {message}")


@pytest.mark.parametrize("glob, matching, other", [
    ("[[]x", "[x", "x"), ("[]]", "]", "["), ("[!]]", "a", "]"), ("[a-]", "-", "b"),
    ("[!a-z]*", "A1", "a1"), ("[^]", "^", "a"), ("[\\]", "\\", "/"), ("[z-a0]", "0", "z"),
    ("x[?]", "x?", "xa"), ("span/*[0-9]", "span/children:5", "span/x"),
    ("[!\x00-ac-\U0010ffff]", "b", "a"),   # all but one character
])
def test_globs_that_can_match_are_taken_as_fnmatch_reads_them(tmp_path, glob, matching, other):
    cfg = config.load(write(tmp_path, budget_toml("budget", glob)))
    assert cfg.limit(matching, "bytes_per_op") == Limit(8.0)
    assert cfg.limit(other, "bytes_per_op") == Limit(0.0)


def test_the_readme_names_the_refused_globs_and_they_are_refused(tmp_path, capsys):
    from docs_pages import folded
    readme = folded("gating")
    claim = ("one that cannot match as written is refused, exit 2, naming the entry "
             "(`budget[2].match`, `sites[1].match`) and the fix: an unclosed `[`, a set of no "
             "character (`[z-a]`), `[^0-9]` (fnmatch negates a set with `!`, so that is a `^` "
             "or a digit), a `\\` (it escapes nothing; `[*]` matches a `*`)")
    assert claim in readme
    for glob in ("[", "[z-a]", "[^0-9]", "\\"):
        assert one_line_error(tmp_path, capsys, budget_toml("sites", glob)).startswith(
            f"allocbench: error: allocbench.toml: 'sites[1].match' = {glob!r}: ")
    cfg = config.load(write(tmp_path, budget_toml("budget", "a[*]")))
    assert cfg.limit("a*", "bytes_per_op") == Limit(8.0) and \
        cfg.limit("ab", "bytes_per_op") == Limit(0.0)


def test_missing_config_file(tmp_path, capsys):
    code = cli.main(["compare", str(DATA / "base.json"), str(DATA / "cand.json"),
                     "--config", str(tmp_path / "nope.toml")])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        f"allocbench: error: {tmp_path}/nope.toml: cannot read the configuration (No such file "
        "or directory)")


def test_threshold_flag_replaces_the_configured_one(tmp_path):
    cfg = config.load(write(tmp_path, "[time]\nthreshold = 3\nmax_cv = 0.2\n"))
    changed = cfg.with_threshold(20.0)
    assert (changed.time.threshold, changed.time.max_cv) == (20.0, 0.2)
    # --threshold sets the gate that judges: paired time's too.
    assert (cfg.time.paired_threshold, changed.time.paired_threshold) == (1.0, 20.0)


def test_paired_time_has_its_own_threshold_and_a_budget_overrides_both(tmp_path):
    cfg = config.load(write(tmp_path, "[time]\nthreshold = 3\npaired_threshold = 0.5\n"
                                      "[[budget]]\nmatch = \"slow/*\"\ntime_threshold = 8\n"))
    assert (cfg.threshold("fast/a"), cfg.threshold("fast/a", paired=True)) == (3.0, 0.5)
    assert (cfg.threshold("slow/a"), cfg.threshold("slow/a", paired=True)) == (8.0, 8.0)
