"""Foreign benchmark results in the gate: Google Benchmark, JMH and BenchmarkDotNet JSON.

`load(path)` reads a file compare was given and tells by its content (never its name) what it
is: allocbench results (a 'schema_version': read and checked by results.load exactly as
before), Google Benchmark JSON ('context' and 'benchmarks'), BenchmarkDotNet full JSON
('Benchmarks') or JMH JSON (a list of entries with 'benchmark' and 'primaryMetric'). A foreign
file becomes allocbench-shaped results documents (one per fork where the format has forks)
whose context.source says where they came from; anything else is one UserError naming the file,
the JSON path and the fix. (How much noise an imported side's time gate tolerates is the
gate's: gate/tolerance.py.)

May import: allocbench.base.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from allocbench.base import results
from allocbench.base.errors import UserError
from allocbench.imports import bdn, gbench, jmh

ALLOCBENCH = "allocbench"
FORMATS = {"gbench": gbench, "jmh": jmh, "bdn": bdn}
NAMES = {ALLOCBENCH: "allocbench results", "gbench": "Google Benchmark JSON",
         "jmh": "JMH JSON", "bdn": "BenchmarkDotNet JSON"}
ACCEPTED = ("allocbench results, Google Benchmark JSON (--benchmark_format=json), JMH JSON "
            "(-rf json) or BenchmarkDotNet full JSON (JsonExporter.Full, *-report-full.json)")
# How to measure both sides alike, per format: B/op gated on one side only cannot be compared.
SAME_FIX = {"gbench": f"build both sides' benchmarks with {gbench.DROP_IN}",
            "jmh": "run both sides with -prof gc", "bdn": "run both sides with [MemoryDiagnoser]"}


def detect(doc: Any) -> str | None:
    """The kind of a parsed document: 'allocbench', 'gbench', 'jmh', 'bdn', or None."""
    if isinstance(doc, dict) and "schema_version" in doc:
        return ALLOCBENCH
    return next((kind for kind, module in FORMATS.items() if module.detect(doc)), None)


def load(path: Path) -> tuple[str, list[dict[str, Any]]]:
    """(kind, the results documents) of the file at `path`."""
    # NaN and Infinity read as numbers: Google Benchmark writes them, and each importer
    # refuses them where it reads a value. allocbench's own files are read again as ever.
    doc = results.read(path, special_numbers=True)
    kind = detect(doc)
    if kind == ALLOCBENCH:
        return kind, [results.load(path)]
    if kind is None:
        raise UserError(f"{path}: not an allocbench results file (no 'schema_version') nor a "
                        f"benchmark result compare can import; give {ACCEPTED}")
    return kind, FORMATS[kind].load(doc, str(path))


def kind_of(doc: dict[str, Any]) -> str:
    source = doc["context"].get("source")
    return source["format"] if isinstance(source, dict) else ALLOCBENCH


def same_kind(a: Path, a_doc: dict[str, Any], b: Path, b_doc: dict[str, Any]) -> None:
    """UserError unless both documents are of one kind and, if imported, gate the same
    allocation metrics."""
    kinds = kind_of(a_doc), kind_of(b_doc)
    if kinds[0] != kinds[1]:
        raise UserError(f"{a} is {NAMES[kinds[0]]} and {b} is {NAMES[kinds[1]]}; compare "
                        "results of one kind on both sides")
    if kinds[0] == ALLOCBENCH:
        return

    def gated(doc: dict[str, Any]) -> set[tuple[str, str]]:
        return {(f["key"], f["gate"]) for f in doc["fields"] if f["section"] == "alloc"}

    differ = sorted(gated(a_doc) ^ gated(b_doc))
    if differ:
        has, lacks = (a, b) if differ[0] in gated(a_doc) else (b, a)
        raise UserError(f"{has} has {differ[0][0]} ({differ[0][1]}) and {lacks} does not, so "
                        f"they cannot be compared; {SAME_FIX[kinds[0]]}")


def note(doc: dict[str, Any]) -> str:
    """What an imported document says of itself, for the outputs; '' for allocbench's own."""
    source = doc["context"].get("source")
    if not isinstance(source, dict):
        return ""
    tool = " ".join(filter(None, (source["tool"], source.get("version"))))
    return f"{tool}: {source['note']}"
