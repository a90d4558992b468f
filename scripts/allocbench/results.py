"""Reading results files written by allocbench-run, validated on load (see results_check.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from allocbench.fileio import read_json
from allocbench.results_check import FIX, SCHEMA_VERSION, Key, check, key_of

__all__ = ["FIX", "SCHEMA_VERSION", "Key", "check", "key_of", "load", "metric"]


def load(path: Path) -> dict[str, Any]:
    """The results document at `path`; UserError naming the file, the field and the fix."""
    return check(read_json(path, "", FIX), str(path))


def metric(result: dict[str, Any], field: dict[str, Any]) -> float | None:
    """The value of `field` (an entry of the document's 'fields') in one result, if measured."""
    section = result.get(field["section"])
    if not isinstance(section, dict):
        return None
    return section.get(field["key"])
