"""FILE.partial as allocbench-run writes it, a journal (its first line the results document
without results, then one result per line), read by every command as that document. The
journals here are made by hand from tests/python/data/results_small.json (4 results), so the
document each must read as is known without the reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allocbench import cli, imports
from allocbench.base import results
from allocbench.base.errors import UserError

SMALL = Path(__file__).resolve().parent / "data" / "results_small.json"
FIX = "the file is damaged, re-run the measurement"


def small() -> dict:
    return json.loads(SMALL.read_text())


def journal_lines(doc: dict) -> list[str]:
    header = {**doc, "complete": False, "journal": True, "results": []}
    return [json.dumps(header, separators=(",", ":")) + "\n"] + \
        [json.dumps(r, separators=(",", ":")) + "\n" for r in doc["results"]]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines))
    return path


def test_a_journal_reads_as_the_document_of_its_results(tmp_path):
    doc = small()
    path = write(tmp_path / "r.json.partial", journal_lines(doc))
    assert results.load(path) == {**doc, "complete": False}


def test_a_last_line_cut_off_by_a_kill_is_dropped(tmp_path):
    doc = small()
    lines = journal_lines(doc)
    path = write(tmp_path / "r.json.partial", lines[:3] + [lines[3][:40]])
    assert results.load(path) == {**doc, "complete": False, "results": doc["results"][:2]}


def test_a_journal_of_no_result_yet_is_an_empty_document(tmp_path):
    doc = small()
    path = write(tmp_path / "r.json.partial", journal_lines(doc)[:1])
    assert results.load(path) == {**doc, "complete": False, "results": []}


def test_a_damaged_line_is_named_by_its_number(tmp_path):
    lines = journal_lines(small())
    lines[2] = "{\n"
    path = write(tmp_path / "r.json.partial", lines)
    with pytest.raises(UserError) as raised:
        results.load(path)
    assert str(raised.value) == (f"{path}: not valid JSON (line 3, column 2: Expecting property "
                                 f"name enclosed in double quotes); {FIX}")


def test_a_value_no_gate_can_judge_is_named_by_its_place_in_the_document(tmp_path):
    lines = journal_lines(small())
    lines[2] = lines[2].replace('"bytes_per_op":', '"bytes_per_op":NaN,"was":', 1)
    path = write(tmp_path / "r.json.partial", lines)
    with pytest.raises(UserError) as raised:
        results.load(path)
    assert str(raised.value) == \
        f"{path}: results[1].alloc.bytes_per_op is NaN, not a finite number; {FIX}"


def test_compare_refuses_a_journal_as_the_partial_results_it_is(tmp_path, capsys):
    path = write(tmp_path / "cand.json.partial", journal_lines(small()))
    assert imports.load(path)[0] == imports.ALLOCBENCH
    assert cli.main(["compare", str(SMALL), str(path)]) == 2
    assert capsys.readouterr().err == (
        f"allocbench: error: {path}: the partial results of an interrupted run (complete: "
        "false); the instances it did not reach would go ungated: measure again and compare "
        "complete runs\n")


def test_a_one_line_document_is_no_journal(tmp_path):
    doc = small()
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc) + "\n")
    assert results.load(path) == doc
