"""What a bisect found, kept in the store beside the records it measured
(<store>/.bisects/<id>.json, one file per machine, allocator, recipe, scenario, metric, pair
of ends and search, `all` or `first`; a later bisect of the same replaces it), so that a
report names the commit that made a step of the history. A dot folder: no machine's folder
can be named so, and the records' globs (store.Store.paths) never reach it.

A file is read whole or not at all: one that is damaged is a problem with its path and its fix
(the report shows it and goes on), never a wrong commit.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from allocbench.base.errors import UserError
from allocbench.base.fileio import read_json, write_atomically

FOLDER = ".bisects"
VERSION = 1
FIX = "delete it, or run that bisect again to write it anew"
_TEXT_KEYS = ("machine", "allocator", "recipe", "scenario", "metric", "good", "bad", "search")
_STEP_TEXT = ("before", "after", "label", "subject")


def write(store: Path, found: dict[str, Any]) -> Path:
    """Keeps `found` ({machine, allocator, recipe, scenario, metric, good, bad, search, steps:
    [{before, after, exact, from, to, label, subject}]}), checked as read() checks it."""
    doc = {"bisect_version": VERSION, **found}
    _check(doc, "the bisect's result")
    key = json.dumps([found[k] for k in _TEXT_KEYS])
    path = store / FOLDER / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return path


def read(store: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every bisect kept in `store`, and the problem of each file that could not be read."""
    found, problems = [], []
    for path in sorted((store / FOLDER).glob("*.json")):
        try:
            doc = read_json(path, "", FIX)
            _check(doc, str(path))
        except UserError as e:
            problems.append(str(e))
            continue
        found.append(doc)
    return found, problems


def _check(doc: Any, origin: str) -> None:
    def refuse(what: str) -> None:
        raise UserError(f"{origin}: {what}; {FIX}")

    if not isinstance(doc, dict) or doc.get("bisect_version") != VERSION:
        refuse(f"not a bisect result of version {VERSION} (bisect_version)")
    for key in _TEXT_KEYS:
        if not isinstance(doc.get(key), str) or not doc[key]:
            refuse(f"'{key}' must be a non-empty string")
    if not isinstance(doc.get("steps"), list):
        refuse("'steps' must be a list")
    for i, step in enumerate(doc["steps"]):
        where = f"steps[{i}]"
        if not isinstance(step, dict):
            refuse(f"{where} must be an object")
        for key in _STEP_TEXT:
            if not isinstance(step.get(key), str):
                refuse(f"{where}.{key} must be a string")
        if not isinstance(step.get("exact"), bool):
            refuse(f"{where}.exact must be true or false")
        for key in ("from", "to"):
            value = step.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                refuse(f"{where}.{key} must be a finite number")
