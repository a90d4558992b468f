"""Loading results files (validated) and the markdown report (golden file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allocbench.base import results
from allocbench.base.errors import UserError
from allocbench.harness import run_report

DATA = Path(__file__).parent / "data"


def test_report_matches_golden():
    doc = results.load(DATA / "results_small.json")
    expected = (DATA / "results_small.md").read_text()
    assert run_report.markdown(doc, "allocbench results: 0123abcd4567") == expected


@pytest.mark.parametrize("value, unit, text", [
    (206, "B", "206"), (4.5, "B", "4.500"), (12.345, "ns", "12.3"),
    (1234567.4, "ops/s", "1,234,567"), (0.0912, "", "0.091")])
def test_values_are_formatted_like_the_console_table(value, unit, text):
    assert run_report.format_value(value, unit) == text


def load_error(path: Path) -> str:
    with pytest.raises(UserError) as e:
        results.load(path)
    return str(e.value)


def test_missing_file(tmp_path):
    assert load_error(tmp_path / "gone.json") == (
        f"{tmp_path}/gone.json: cannot read (No such file or directory)")


def test_malformed_json(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1,\n  "context": }')
    assert load_error(bad) == (f"{bad}: not valid JSON (line 2, column 14: Expecting value); "
                               "the file is damaged, re-run the measurement")


def test_other_schema_version_says_what_to_do(tmp_path):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"schema_version": 0}))
    assert load_error(old) == (
        f"{old}: results schema version 0, but this allocbench reads version 1; re-run the "
        "measurement with this allocbench to regenerate it")


def test_not_a_results_file(tmp_path):
    other = tmp_path / "package.json"
    other.write_text(json.dumps({"name": "x"}))
    assert load_error(other) == f"{other}: not an allocbench results file (no 'schema_version')"


def test_damaged_field(tmp_path):
    damaged = tmp_path / "d.json"
    doc = json.loads((DATA / "results_small.json").read_text())
    doc["results"] = {}
    damaged.write_text(json.dumps(doc))
    assert load_error(damaged) == (f"{damaged}: field 'results' is missing or not a list; the "
                                   "file is damaged, re-run the measurement")


def test_a_scenario_over_three_values_of_an_argument_gets_its_exact_slope():
    doc = results.load(DATA / "results_small.json")
    template = doc["results"][0]
    doc["results"] = []
    for n in (1, 2, 3):   # B/op = 5 + 10 n: slope 10 B/op per unit, intercept 5 B/op
        r = json.loads(json.dumps(template))
        r.update(name=f"fan/n:{n}", scenario="fan", args={"n": n}, threads=1)
        r["alloc"]["bytes_per_op"] = 5 + 10 * n
        doc["results"].append(r)
    lines = run_report.markdown(doc).splitlines()
    start = lines.index("## How B/op grows with an argument")
    assert lines[start + 4:start + 7] == [
        "| scenario | argument | slope (B/op per unit) | intercept (B/op) | points |",
        "|---|---|---:|---:|---|",
        "| `fan` | n | 10 (exact) | 5 | 1: 15, 2: 25, 3: 35 |"]
