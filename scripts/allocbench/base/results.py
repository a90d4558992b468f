"""Reading results files written by allocbench-run, validated on load (see results_check.py).

A results file is one JSON document, or the journal allocbench-run keeps while it runs
(FILE.partial): its first line is the document without results, marked "journal": true, and each
line after it is one result. A journal reads as the document of its results so far; a last line
without its newline (the run was killed while writing it) is dropped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from allocbench.base.fileio import parse_json, read_json_text
from allocbench.base.results_check import FIX, SCHEMA_VERSION, Key, check, key_of

__all__ = ["FIX", "SCHEMA_VERSION", "Key", "check", "key_of", "load", "metric", "read"]


def load(path: Path) -> dict[str, Any]:
    """The results document at `path`; UserError naming the file, the field and the fix."""
    return check(read(path), str(path))


def read(path: Path, *, special_numbers: bool = False) -> Any:
    """The JSON document of the file at `path`, a journal made into one; parsed as
    fileio.parse_json parses, not yet checked."""
    text = read_json_text(path, "", FIX)
    first, newline, rest = text.partition("\n")
    if not (newline and _is_journal(first)):
        return parse_json(text, str(path), FIX, special_numbers=special_numbers)
    doc = parse_json(first, str(path), FIX, special_numbers=special_numbers)
    del doc["journal"]
    found = doc.get("results")
    if not isinstance(found, list):
        return doc   # check() says what is wrong with it
    for number, line in enumerate(rest.split("\n")[:-1], start=2):   # the last: cut off, or ""
        found.append(parse_json(line, str(path), FIX, special_numbers=special_numbers,
                                line=number, root=((None, "results"), len(found))))
    return doc


def _is_journal(first_line: str) -> bool:
    if not first_line.startswith("{"):
        return False
    try:
        head = json.loads(first_line)
    except (ValueError, RecursionError):
        return False   # the first line of a document written whole, indented
    return isinstance(head, dict) and head.get("journal") is True


def metric(result: dict[str, Any], field: dict[str, Any]) -> float | None:
    """The value of `field` (an entry of the document's 'fields') in one result, if measured."""
    section = result.get(field["section"])
    if not isinstance(section, dict):
        return None
    return section.get(field["key"])
