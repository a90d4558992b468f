"""history/bisected.py: what a bisect keeps in the store is read whole or not at all. A damaged
file is a problem naming the file, the field and the fix, never a step the report would trust;
a file of today's format, written by hand here, is read as it is."""

from __future__ import annotations

import json
import re

import pytest

from allocbench.base.errors import UserError
from allocbench.history import bisected

STEP = {"before": "a" * 40, "after": "b" * 40, "exact": True, "from": 0, "to": 96,
        "label": "v1.1", "subject": "grow the span"}
FOUND = {"machine": "ci", "allocator": "system", "recipe": "0123456789abcdef",
         "scenario": "tracer/start_span", "metric": "bytes_per_op", "good": "a" * 40,
         "bad": "c" * 40, "search": "all", "steps": [STEP]}


def test_a_file_of_todays_format_is_read_as_written(tmp_path):
    """Written by hand, not by bisected.write: the format is what older stores hold. A step
    from 0 B/op is a step like any other."""
    folder = tmp_path / ".bisects"
    folder.mkdir()
    (folder / "0123456789abcdef.json").write_text(json.dumps({"bisect_version": 1, **FOUND}))
    assert bisected.read(tmp_path) == ([{"bisect_version": 1, **FOUND}], [])


def test_one_file_per_bisect_the_same_one_replaced(tmp_path):
    first = bisected.write(tmp_path, FOUND)
    assert re.fullmatch(r"[0-9a-f]{16}\.json", first.name) and first.parent.name == ".bisects"
    assert bisected.write(tmp_path, {**FOUND, "steps": []}) == first   # the same bisect again
    other = bisected.write(tmp_path, {**FOUND, "search": "first"})
    assert other != first
    by_search = {doc["search"]: doc for doc in bisected.read(tmp_path)[0]}
    assert by_search.keys() == {"all", "first"} and by_search["all"]["steps"] == []


@pytest.mark.parametrize("change, message", [
    ({"bisect_version": 2}, "not a bisect result of version 1 (bisect_version)"),
    ({"machine": ""}, "'machine' must be a non-empty string"),
    ({"search": None}, "'search' must be a non-empty string"),
    ({"steps": {}}, "'steps' must be a list"),
    ({"steps": ["x"]}, "steps[0] must be an object"),
    ({"steps": [{**STEP, "subject": 3}]}, "steps[0].subject must be a string"),
    ({"steps": [{**STEP, "exact": 1}]}, "steps[0].exact must be true or false"),
    ({"steps": [STEP, {**STEP, "to": True}]}, "steps[1].to must be a finite number"),
    ({"steps": [{**STEP, "from": "96"}]}, "steps[0].from must be a finite number"),
    ({"steps": [{**STEP, "from": 1e400}]}, "steps[0].from is 1e400, beyond the range of a "
                                           "double"),
])
def test_a_damaged_file_is_a_problem_naming_the_field_and_the_fix(tmp_path, change, message):
    folder = tmp_path / ".bisects"
    folder.mkdir()
    path = folder / "0000000000000000.json"
    path.write_text(json.dumps({"bisect_version": 1, **FOUND, **change})
                    .replace("Infinity", "1e400"))
    assert bisected.read(tmp_path) == ([], [f"{path}: {message}; {bisected.FIX}"])


@pytest.mark.parametrize("step", [{**STEP, "to": float("nan")}, {**STEP, "exact": "yes"}])
def test_what_a_report_could_not_read_back_is_never_written(tmp_path, step):
    with pytest.raises(UserError, match=r"^the bisect's result: steps\[0\]\."):
        bisected.write(tmp_path, {**FOUND, "steps": [step]})
    assert not (tmp_path / ".bisects").exists() or not any((tmp_path / ".bisects").iterdir())
