"""The rules a results document must meet before anything reads its numbers.

The gate must never judge what it cannot judge (DESIGN.md: a missing, null, NaN or duplicated
value is an error, never "same"), so a document is checked whole on load: its field list, which
passes ran (context.count, context.time, context.instructions), and every instance. An instance
that did not fail carries every gated metric of each pass that ran, as a finite number.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from allocbench.base.errors import UserError
from allocbench.base.fileio import json_path
from allocbench.base.validate import MISSING, Checker, describe, finite

SCHEMA_VERSION = 1
FIX = "the file is damaged, re-run the measurement"
# section → the pass (context key) that fills it
SECTIONS = {"alloc": "count", "time": "time", "instructions": "instructions"}
OPTIONAL_PASSES = ("instructions",)   # absent from the context of files older than the pass
GATES = ("exact", "time", "info")
PASS_SETTINGS = {"count": ("warmup_ops", "window_ops"), "time": ("repetitions", "min_time_s"),
                 "instructions": ("warmup_ops", "window_ops")}
TOP = {"complete": bool, "context": dict, "fields": list, "results": list}

Key = tuple[str, tuple[tuple[str, Any], ...], int, str]


def key_of(result: dict[str, Any]) -> Key:
    """Results pair by scenario, arguments, threads and allocator."""
    return (result["scenario"], tuple(sorted((result.get("args") or {}).items())),
            result["threads"], result.get("allocator", ""))


def time_sample(c: Checker, value: Any, where: str) -> float:
    """A time sample (ns per op, or a rate such as ops/s): finite and > 0. A sample <= 0 is no
    measurement of anything, and would pass the time gate as an improvement (the interval is of
    ratios of means), so it is refused where it is read, never judged (DESIGN.md)."""
    c.want(finite(value) and value > 0, where, value, "a finite number > 0 (a time or a rate)")
    return value


def check(doc: Any, origin: str, fix: str = FIX, at: str = "") -> dict[str, Any]:
    """`doc` if it is a results document this allocbench reads; UserError naming `origin`, the
    JSON path (under `at`, where the document sits in its file) and `fix`."""
    _top(doc, origin, fix, at)
    c = Checker(origin, fix)
    fields = _fields(c, doc["fields"], json_path(at, "fields"))
    ran = _passes(c, doc["context"], json_path(at, "context"))
    where = json_path(at, "results")
    for i, result in enumerate(doc["results"]):
        _result(c, result, json_path(where, i), fields, ran)
    _unique(c, doc["results"], where)
    return doc


def _top(doc: Any, origin: str, fix: str, at: str) -> None:
    if not isinstance(doc, dict) or "schema_version" not in doc:
        raise UserError(f"{origin}: {at + ' is ' if at else ''}not an allocbench results file "
                        "(no 'schema_version')" + (f"; {fix}" if at else ""))
    version = doc["schema_version"]
    if not finite(version) or isinstance(version, float) or version != SCHEMA_VERSION:
        shown = version if finite(version) and isinstance(version, int) else describe(version)
        raise UserError(f"{origin}: results schema version {shown}, but this allocbench reads "
                        f"version {SCHEMA_VERSION}; re-run the measurement with this allocbench "
                        "to regenerate it")
    for key, kind in TOP.items():
        if not isinstance(doc.get(key), kind):
            raise UserError(f"{origin}: field '{json_path(at, key)}' is missing or not a "
                            f"{kind.__name__}; {fix}")


def _fields(c: Checker, fields: list[Any], where: str) -> dict[str, list[dict[str, Any]]]:
    """The fields of each section. bytes_per_op is gated exactly by every allocbench-run: a
    list without it is damaged, and would drop the metric the gate exists for."""
    by_section: dict[str, list[dict[str, Any]]] = {section: [] for section in SECTIONS}
    seen: set[tuple[str, str]] = set()
    for j, field in enumerate(fields):
        at = json_path(where, j)
        c.obj(field, at)
        c.each(field, at, {"key": lambda v, w: c.text(v, w, empty=False),
                           "section": lambda v, w: c.member(v, w, tuple(SECTIONS)),
                           "unit": c.text, "gate": lambda v, w: c.member(v, w, GATES)})
        c.each(field, at, {"column": _text_or_null(c), "help": c.text},
               optional=("column", "help"))
        if (field["section"], field["key"]) in seen:
            c.fail(at, f"repeats the field {json_path(field['section'], field['key'])}")
        seen.add((field["section"], field["key"]))
        by_section[field["section"]].append(field)
    if not any(f["key"] == "bytes_per_op" and f["gate"] == "exact" for f in by_section["alloc"]):
        c.fail(where, "lacks alloc.bytes_per_op with gate 'exact'")
    return by_section


def _passes(c: Checker, context: dict[str, Any], where: str) -> dict[str, bool]:
    """Which sections were measured: context.count, context.time and context.instructions are
    objects when their pass ran, null when it did not (allocbench-run writes all three; files
    older than the instructions pass lack it). Also the parts of the context that reports and
    labels read."""
    ran = {}
    for section, key in SECTIONS.items():
        value, at = context.get(key, None if key in OPTIONAL_PASSES else MISSING), \
            json_path(where, key)
        c.want(value is None or isinstance(value, dict), at, value,
               "an object (the pass ran) or null (it did not)")
        if value is not None:
            c.each(value, at, {name: c.number for name in PASS_SETTINGS[key]})
        ran[section] = value is not None
    c.each(context, where, {key: c.obj for key in ("allocator", "host", "cpu", "harness")},
           optional=("allocator", "host", "cpu", "harness"))
    revision = context.get("revision")
    if revision is not None:
        at = json_path(where, "revision")
        c.each(c.obj(revision, at), at, {key: _text_or_null(c) for key in ("describe", "sha")},
               optional=("describe", "sha"))
    return ran


def _text_or_null(c: Checker) -> Callable[[Any, str], Any]:
    return lambda value, where: value is None or c.text(value, where)


def _result(c: Checker, result: Any, where: str, fields: dict[str, list[dict[str, Any]]],
            ran: dict[str, bool]) -> None:
    c.obj(result, where)
    c.text(result.get("name", MISSING), json_path(where, "name"), empty=False)
    where = f"{where} ('{json.dumps(result['name'])[1:-1][:60]}')"   # names the instance too
    c.each(result, where, {"scenario": c.text, "args": c.integers,
                           "threads": lambda v, w: c.integer(v, w, low=1), "allocator": c.text})
    c.each(result, where, {"plugin": c.text, "error": lambda v, w: c.text(v, w, empty=False),
                           "note": lambda v, w: c.text(v, w, empty=False),
                           "counters": lambda v, w: _counters(c, v, w)},
           optional=("plugin", "error", "note", "counters"))
    for section, key in SECTIONS.items():
        value, at = result.get(section), json_path(where, section)
        if not ran[section]:
            c.want(value is None, at, value, f"null (context.{key} is null: the pass did not run)")
        elif value is not None or "error" not in result:
            c.want(isinstance(value, dict), at, value, "an object (the pass ran and the "
                   "instance did not fail)")
            _section(c, value, at, fields[section])


def _counters(c: Checker, counters: Any, where: str) -> None:
    """What the scenario reported with State::SetCounter: {name: {"value": …, "unit": …}}."""
    for name, counter in c.obj(counters, where).items():
        at = json_path(where, name)
        c.each(c.obj(counter, at), at, {"value": c.number, "unit": c.text})


def _section(c: Checker, section: dict[str, Any], where: str, fields: list[dict[str, Any]]
             ) -> None:
    """Gated metrics present and finite, times > 0; others finite or null; samples finite (of
    a time, > 0), and none of an exact metric."""
    for field in fields:
        key = field["key"]
        value, at = section.get(key, MISSING), json_path(where, key)
        read = time_sample if field["gate"] == "time" else Checker.number
        if field["gate"] != "info" or (value is not MISSING and value is not None):
            read(c, value, at)
        samples = section.get(f"samples_{key}", MISSING)
        if samples is not MISSING:
            at = json_path(where, f"samples_{key}")
            # allocbench-run writes samples of time only; the gate would read an exact
            # metric's samples as its values (forks that disagree).
            c.want(field["gate"] != "exact", at, samples, f"absent ({key} is an exact metric)")
            c.want(isinstance(samples, list) and samples != [], at, samples, "a non-empty list")
            for i, sample in enumerate(samples):
                read(c, sample, json_path(at, i))
    c.each(section, where, {"steady": c.flag, "steady_reason": c.text},
           optional=("steady", "steady_reason"))


def _unique(c: Checker, found: list[dict[str, Any]], where: str) -> None:
    """One result per instance name and per pairing key: two values of one instance cannot be
    told apart, so the gate could not judge either (forks are separate files)."""
    names: dict[str, int] = {}
    keys: dict[Key, int] = {}
    for i, result in enumerate(found):
        at = json_path(where, i)
        first = names.setdefault(result["name"], i)
        if first != i:
            c.fail(json_path(at, "name"), f"repeats {json_path(where, first)}.name "
                   f"({json.dumps(result['name'])[:60]}); a results file holds each instance "
                   "once")
        first = keys.setdefault(key_of(result), i)
        if first != i:
            c.fail(at, f"pairs with {json_path(where, first)} (the same scenario, arguments, "
                   "threads and allocator); a results file holds each instance once")
