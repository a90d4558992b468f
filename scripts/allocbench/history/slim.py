"""A record without what only one revision's own page needs: what every command and page that
reads a whole history (the sweep table, the report's history of each scenario and its largest
changes, the order of the revisions) reads of each record, in the record's own shape.

Left out: each result's per-window counters (alloc.windows, instructions.windows), its time
section but the median and the samples (time.ns_per_op, time.samples_ns_per_op), its byte
counters, plugin path, arguments and scenario; the results' context is kept whole (it says which
passes ran and by which harness). A slim record of the built-in plugin's 46 instances is 26 KB
of JSON where the whole is 58 KB, and parses in 0.20 ms instead of 0.50 (bench/data's record,
best of 5 × 200 parses on the 2-core VM); the store's index keeps one per record file
(store_index.py), so a table of thousands of revisions parses no record file.

A brief record is less again: what a report reads of every revision of a history, however
long (its order, its instances and their steps: reports/steps.py), that is the record's
fields that say what it is and, per instance, its name, B/op and allocs/op (None when the
instance failed or did not measure them). The instances are kept as one JSON text (3.5 KB for
that record), parsed by `stepped` once per distinct text: the revisions of a history allocate
what their neighbours did, except where a step is, so 2,000 briefs hold a few distinct texts
and a report parses those (parsing every brief's 46 instances was 0.1 ms a record, 0.4 s of a
rebuild at 2,000 revisions), and two revisions of one text are seen equal without parsing.

What reads a slim or brief record must read only what it keeps: test_slim.py checks that the
sweep table, the report's steps and a history's names are the same of them and whole records.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

FORMS = ("whole", "slim", "brief")
_DROPPED = "windows"           # of the alloc and instructions sections
_TIME_KEPT = ("ns_per_op", "samples_ns_per_op")    # of the time section: its median, and
# the samples a report's time charts show (median, quartiles: reports/pages.py's spread)


def _result(result: dict[str, Any]) -> dict[str, Any]:
    out = {k: result[k] for k in ("name", "error") if k in result}
    for section in ("alloc", "instructions"):
        if isinstance(result.get(section), dict):
            out[section] = {k: v for k, v in result[section].items() if k != _DROPPED}
        elif section in result:
            out[section] = result[section]
    if isinstance(result.get("time"), dict):
        out["time"] = {k: result["time"][k] for k in _TIME_KEPT if k in result["time"]}
    elif "time" in result:
        out["time"] = result["time"]
    return out


def of(record: dict[str, Any]) -> dict[str, Any]:
    """The slim record of a valid store record (a failure's is the record itself: it has no
    results)."""
    doc = record.get("results")
    if not isinstance(doc, dict):
        return record
    slim = {k: doc[k] for k in doc if k != "results"}
    slim["results"] = [_result(r) for r in doc["results"]]
    return {**record, "results": slim}


BRIEF = ("sha", "machine", "allocator", "recipe", "status", "label", "subject", "committed",
         "recorded", "time_measured", "note")
STEPPED = ("bytes_per_op", "allocs_per_op")   # what a brief keeps of each result


def _stepped(result: dict[str, Any]) -> list[Any]:
    alloc = result.get("alloc") or {}
    if result.get("error") or any(alloc.get(m) is None for m in STEPPED):
        return [result["name"], None]
    return [result["name"], [float(alloc[m]) for m in STEPPED]]


def brief(record: dict[str, Any]) -> dict[str, Any]:
    """The brief record of a whole or slim one: `results` is the JSON text of a list of
    [name, [B/op, allocs/op] or None] (stepped() reads it); a failure's is the record itself (it
    has no results)."""
    doc = record.get("results")
    if not isinstance(doc, dict):
        return record
    return {**{k: record[k] for k in BRIEF if k in record},
            "results": json.dumps([_stepped(r) for r in doc["results"]], separators=(",", ":"))}


_STEPPED: dict[str, dict[str, list[float] | None]] = {}


def stepped(brief_record: dict[str, Any]) -> dict[str, list[float] | None]:
    """Instance name → [B/op, allocs/op] (None: failed, or measured neither) of an ok brief
    record, in its order, the first of a name kept. Shared by every brief of the same text:
    read it, never change it."""
    text = brief_record["results"]
    found = _STEPPED.get(text)
    if found is None:
        if len(_STEPPED) > 100_000:   # a long process reading many stores
            _STEPPED.clear()
        found = _STEPPED[text] = {}
        for name, values in json.loads(text):
            found.setdefault(name, values)
    return found


def encode(slim: dict[str, Any]) -> bytes:
    return zlib.compress(json.dumps(slim, separators=(",", ":")).encode(), 1)


def decode(data: bytes) -> dict[str, Any]:
    return json.loads(zlib.decompress(data))


def encode_brief(brief_record: dict[str, Any]) -> tuple[bytes, bytes | None]:
    """A brief record as the index keeps it: the JSON of its fields but the instances (a few
    hundred bytes), and the instances' text compressed (None for a failure's: it has none).
    Equal texts compress to equal bytes: decode_brief reads each once."""
    text = brief_record.get("results")
    if not isinstance(text, str):
        return json.dumps(brief_record, separators=(",", ":")).encode(), None
    fields = {k: v for k, v in brief_record.items() if k != "results"}
    return json.dumps(fields, separators=(",", ":")).encode(), zlib.compress(text.encode(), 1)


_TEXTS: dict[bytes, str] = {}


def decode_brief(fields: bytes, instances: bytes | None) -> dict[str, Any]:
    record = json.loads(fields)
    if instances is not None:
        text = _TEXTS.get(instances)
        if text is None:
            if len(_TEXTS) > 100_000:
                _TEXTS.clear()
            text = _TEXTS[instances] = zlib.decompress(instances).decode()
        record["results"] = text
    return record
