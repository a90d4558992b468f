"""Reading results files written by allocbench-run, validated on load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from allocbench.errors import UserError

SCHEMA_VERSION = 1
REQUIRED = {"context": dict, "fields": list, "results": list, "complete": bool}


def load(path: Path) -> dict[str, Any]:
    """The results document at `path`; UserError naming the file, the field and the fix."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise UserError(f"{path}: cannot read ({e.strerror})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{path}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})"
                        ) from None
    return check(doc, str(path))


def check(doc: Any, origin: str) -> dict[str, Any]:
    """`doc` if it is a results document this allocbench reads; UserError naming `origin`."""
    if not isinstance(doc, dict) or "schema_version" not in doc:
        raise UserError(f"{origin}: not an allocbench results file (no 'schema_version')")
    version = doc["schema_version"]
    if version != SCHEMA_VERSION:
        raise UserError(f"{origin}: results schema version {version}, but this allocbench reads "
                        f"version {SCHEMA_VERSION}; re-run the measurement with this allocbench "
                        "to regenerate it")
    for key, kind in REQUIRED.items():
        if not isinstance(doc.get(key), kind):
            raise UserError(f"{origin}: field '{key}' is missing or not a {kind.__name__}; the "
                            "file is damaged, re-run the measurement")
    return doc


def metric(result: dict[str, Any], field: dict[str, Any]) -> float | None:
    """The value of `field` (an entry of the document's 'fields') in one result, if measured."""
    section = result.get(field["section"])
    if not isinstance(section, dict):
        return None
    return section.get(field["key"])
