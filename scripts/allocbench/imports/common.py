"""What every importer shares: the results document it builds, its field list, units.

An imported file becomes documents of the shape `results.load` returns (schema_version,
complete, context, fields, results), so that compare pairs, gates and prints them as it does
allocbench's own. The field list says how each metric gates: `exact` (counted: Google Benchmark
with allocbench::gbench), `sampled` (B/op read from a runtime's allocated-bytes counter: JMH,
BenchmarkDotNet; gated with a tolerance, see tolerance.py) and `time` (each iteration or
repetition a sample, converted to ns per op, or to ops/s for a throughput).

Every value read from a foreign file passes through one helper here per kind of value, so that
the three formats cannot judge differently what none of them may carry: a time sample is > 0
(`sample`, the rule allocbench's own results meet: results_check.time_sample), bytes and
counts are >= 0 (`amount`), a flag is true or false (`flag`: "true" as a string is refused, not
read as false), and every number is finite and a number (a number as a string is refused).
"""

from __future__ import annotations

from typing import Any

from allocbench.base.fileio import json_path
from allocbench.base.results_check import time_sample as sample   # a time sample: finite, > 0
from allocbench.base.validate import MISSING, Checker, finite

NS_PER = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9, "hr": 3600e9,
          "day": 86400e9}

BYTES = {"key": "bytes_per_op", "section": "alloc", "unit": "B", "column": "B/op"}
ALLOCS = {"key": "allocs_per_op", "section": "alloc", "unit": "allocs", "column": "allocs/op"}
NS = {"key": "ns_per_op", "section": "time", "unit": "ns", "gate": "time", "column": "ns/op"}
CPU_NS = {"key": "cpu_ns_per_op", "section": "time", "unit": "ns", "gate": "time",
          "column": None}
OPS = {"key": "ops_per_s", "section": "time", "unit": "ops/s", "gate": "time",
       "column": "ops/s"}


def field(base: dict[str, Any], help: str, **extra: Any) -> dict[str, Any]:
    return {**base, "help": help, **extra}


def sampled_field(help: str, sampled_by: str, spread: str) -> dict[str, Any]:
    """B/op read from a runtime's counter: `sampled_by` names the tool and counter, `spread`
    what the file says about its uncertainty ('' when nothing: the tolerance is configured
    or the tool's default, tolerance.py)."""
    return field(BYTES, help, gate="sampled", sampled_by=sampled_by, spread=spread)


def document(source: dict[str, Any], fields: list[dict[str, Any]],
             results: list[dict[str, Any]]) -> dict[str, Any]:
    """One allocbench-shaped results document (one fork) of an imported file."""
    sections = {f["section"] for f in fields}
    return {"schema_version": 1, "complete": True,
            "context": {"source": source, "count": {} if "alloc" in sections else None,
                        "time": {} if "time" in sections else None, "instructions": None},
            "fields": fields, "results": results}


def result(name: str, threads: int, alloc: dict[str, Any] | None, time: dict[str, Any] | None,
           error: str = "") -> dict[str, Any]:
    """One instance: its name is its scenario (the formats' parameters are text, allocbench's
    arguments integers, so they stay in the name) and it pairs by name and threads."""
    out = {"name": name, "scenario": name, "args": {}, "threads": threads, "allocator": "",
           "alloc": alloc, "time": time, "instructions": None}
    if error:
        out["error"] = error
    return out


def time_section(key: str, samples: list[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return {key: median, f"samples_{key}": list(samples)}


def positive_int(c: Checker, value: Any, where: str) -> int:
    return c.integer(value, where, low=1)


def samples(c: Checker, value: Any, where: str) -> list[float]:
    """A non-empty list of time samples."""
    return [sample(c, v, json_path(where, i)) for i, v in enumerate(_list(c, value, where))]


def amount(c: Checker, value: Any, where: str) -> float:
    """Bytes or allocations per op: finite and >= 0 (a negative one would pass as an
    improvement)."""
    c.want(finite(value) and value >= 0, where, value, "a finite number >= 0 (bytes or a count)")
    return value


def amounts(c: Checker, value: Any, where: str) -> list[float]:
    """A non-empty list of amounts."""
    return [amount(c, v, json_path(where, i)) for i, v in enumerate(_list(c, value, where))]


def flag(c: Checker, entry: dict[str, Any], key: str, where: str) -> bool:
    """An optional flag of `entry`: absent is false; else true or false, nothing else."""
    value = entry.get(key, MISSING)
    return value is not MISSING and c.flag(value, json_path(where, key))


def _list(c: Checker, value: Any, where: str) -> list[Any]:
    c.want(isinstance(value, list) and value != [], where, value, "a non-empty list")
    return value
