"""JMH JSON (`-rf json`), as JMH 1.37 writes it (JSONResultFormat.java): a list of entries
{"jmhVersion" (1.37 on), "benchmark", "mode": thrpt | avgt | sample | ss, "threads", "forks",
"params" (strings), "primaryMetric": {"score", "scoreError", "scoreConfidence", "scoreUnit",
"rawData": [[an iteration's score, per iteration] per fork] or, in sample mode,
"rawDataHistogram": [[[[value, count], …] per iteration] per fork]}, "secondaryMetrics":
{name: {"score", "scoreError", "scoreUnit", "rawData"}}}. NaN is written as the string "NaN".

B/op is -prof gc's gc.alloc.rate.norm (named ·gc.alloc.rate.norm, with a U+00B7 prefix, before
JMH 1.37: commit 7903508 removed it), gated as *sampled*: its scoreError is the half-width of
the 99.9% interval of the mean over iterations. JMH 1.37 leaves the norm out when an iteration
allocated nothing, so an entry that has gc.alloc.rate but no norm allocated 0 B/op.

Time is the primary score of each iteration, one document per fork: avgt, ss and sample
(<unit>/op) as ns_per_op, thrpt (ops/<unit>) as ops_per_s, a rate where higher is better. A
sample-mode iteration is the mean of its histogram. Each score is > 0 and each B/op >= 0
(common.py). B/op is one estimate over all the forks of an entry, so it is in the first fork's
document only: a side of several files averages files, not the forks of one (tolerance.py).

An entry is one instance: two entries of one benchmark, mode, threads and parameters (in any
order) are refused, as are two entries of one benchmark that name different parameters (JMH
writes every @Param of a benchmark in each of its entries: such a file mixes runs).
"""

from __future__ import annotations

import math
from typing import Any

from scipy import stats as sps

from allocbench.base.fileio import json_path
from allocbench.base.validate import MISSING, Checker, finite
from allocbench.imports import common

TOOL = "JMH"
FIX = "write it again with -rf json (and -prof gc for B/op)"
NORM = ("gc.alloc.rate.norm", "\u00b7gc.alloc.rate.norm")
RATE = ("gc.alloc.rate", "\u00b7gc.alloc.rate")
MODES = ("thrpt", "avgt", "sample", "ss")
CONFIDENCE = 0.999   # JMH's scoreError: the half-width of the 99.9% interval of the mean
NOTE_TIME_ONLY = "run without -prof gc: time only; B/op needs -prof gc"


def detect(doc: Any) -> bool:
    return isinstance(doc, list) and (doc == [] or isinstance(doc[0], dict) and (
        "benchmark" in doc[0] or "primaryMetric" in doc[0]))


def _unit(c: Checker, unit: str, where: str) -> tuple[str, float]:
    """(time metric, factor to it) of a scoreUnit: 'us/op' → ns_per_op ×1000, 'ops/ms' →
    ops_per_s ×1000."""
    if unit.startswith("ops/") and unit[4:] in common.NS_PER:
        return "ops_per_s", 1e9 / common.NS_PER[unit[4:]]
    if unit.endswith("/op") and unit[:-3] in common.NS_PER:
        return "ns_per_op", common.NS_PER[unit[:-3]]
    c.fail(where, f"is {unit!r}, not a time per op (us/op) or a throughput (ops/s)")


def _forks(c: Checker, metric: dict[str, Any], mode: str, where: str) -> list[list[float]]:
    """Each fork's iteration scores; a sample-mode iteration's is its histogram's mean."""
    key = "rawDataHistogram" if mode == "sample" else "rawData"
    at = json_path(where, key)
    forks = c.array(metric.get(key, MISSING), at)
    c.want(forks != [], at, forks, "a non-empty list (run without -Djmh.json.rawData=false)")
    if mode != "sample":
        return [common.samples(c, fork, json_path(at, i)) for i, fork in enumerate(forks)]
    out = []
    for i, fork in enumerate(forks):
        means = []
        for j, iteration in enumerate(c.array(fork, json_path(at, i))):
            here = json_path(json_path(at, i), j)
            pairs = [_bucket(c, pair, json_path(here, k))
                     for k, pair in enumerate(c.array(iteration, here))]
            count = sum(n for _, n in pairs)
            c.want(count > 0, here, iteration, "a histogram of [value, count] pairs, with counts")
            means.append(sum(v * n for v, n in pairs) / count)
        c.want(means != [], json_path(at, i), fork, "a non-empty list")
        out.append(means)
    return out


def _bucket(c: Checker, pair: Any, where: str) -> tuple[float, int]:
    """A histogram's [value, count]: a time sample and how often it was seen."""
    c.want(isinstance(pair, list) and len(pair) == 2, where, pair, "a [value, count] pair")
    return (common.sample(c, pair[0], json_path(where, 0)),
            c.integer(pair[1], json_path(where, 1), low=0))


def half_width(values: list[float]) -> float | None:
    """JMH's scoreError from the iterations: t(99.9%, n-1) · sd / √n; None under 3 values
    (JMH writes NaN then)."""
    n = len(values)
    if n < 3:
        return None
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return float(sps.t.ppf(1 - (1 - CONFIDENCE) / 2, n - 1)) * sd / math.sqrt(n)


def _bytes(c: Checker, secondary: dict[str, Any], where: str) -> dict[str, Any]:
    """{"bytes_per_op": the norm's score, "error_bytes_per_op": its 99.9% half-width or
    None}."""
    name = next((n for n in NORM if n in secondary), None)
    if name is None:   # profiled (gc.alloc.rate), nothing allocated in any iteration
        return {"bytes_per_op": 0.0, "error_bytes_per_op": 0.0}
    at = json_path(where, name)
    norm = c.obj(secondary[name], at)
    c.want(norm.get("scoreUnit") == "B/op", json_path(at, "scoreUnit"),
           norm.get("scoreUnit", MISSING), '"B/op"')
    score = common.amount(c, norm.get("score", MISSING), json_path(at, "score"))
    error = norm.get("scoreError", MISSING)
    if error == "NaN":   # fewer than 3 iterations in all: from rawData if it has more
        raw = c.array(norm.get("rawData", []), json_path(at, "rawData"))
        error = half_width([v for i, fork in enumerate(raw) for v in common.amounts(
            c, fork, json_path(json_path(at, "rawData"), i))] if raw else [])
    else:
        c.want(finite(error) and error >= 0, json_path(at, "scoreError"), error,
               'a finite number >= 0 or "NaN"')
    return {"bytes_per_op": score, "error_bytes_per_op": error}


def _entry(c: Checker, entry: Any, at: str, profiled: bool
           ) -> tuple[str, int, str, list[list[float]], dict[str, Any] | None]:
    c.obj(entry, at)
    benchmark = c.text(entry.get("benchmark", MISSING), json_path(at, "benchmark"), empty=False)
    mode = c.member(entry.get("mode", MISSING), json_path(at, "mode"), MODES)
    threads = common.positive_int(c, entry.get("threads", MISSING), json_path(at, "threads"))
    params = c.obj(entry.get("params", {}), json_path(at, "params"))
    for key, value in params.items():
        c.text(value, json_path(json_path(at, "params"), key))
    name = benchmark + "".join(f"/{k}:{v}" for k, v in params.items())
    name += (f"/threads:{threads}" if threads != 1 else "") + f" ({mode})"
    where = json_path(at, "primaryMetric")
    primary = c.obj(entry.get("primaryMetric", MISSING), where)
    key, factor = _unit(c, c.text(primary.get("scoreUnit", MISSING),
                                  json_path(where, "scoreUnit")), json_path(where, "scoreUnit"))
    forks = [[v * factor for v in fork] for fork in _forks(c, primary, mode, where)]
    secondary = c.obj(entry.get("secondaryMetrics", {}), json_path(at, "secondaryMetrics"))
    alloc = None
    if profiled:
        if not any(n in secondary for n in NORM + RATE):
            c.fail(json_path(at, "secondaryMetrics"), "lacks gc.alloc.rate.norm, which other "
                   "entries have: run every benchmark with -prof gc")
        alloc = _bytes(c, secondary, json_path(at, "secondaryMetrics"))
    return name, threads, key, forks, alloc


def _one_per_instance(c: Checker, doc: list[dict[str, Any]]) -> None:
    """UserError naming both entries unless each instance (benchmark, mode, threads and
    parameters, in any order) has one entry, and the entries of a benchmark name the same
    parameters. `doc`: entries _entry checked."""
    instances: dict[tuple[Any, ...], str] = {}
    params: dict[str, tuple[str, list[str]]] = {}
    for i, entry in enumerate(doc):
        at, given = json_path("", i), entry.get("params", {})
        first = params.setdefault(entry["benchmark"], (at, sorted(given)))
        if first[1] != sorted(given):
            c.fail(json_path(at, "params"), f"names {', '.join(sorted(given)) or 'none'}, but "
                   f"{json_path(first[0], 'params')} of the same benchmark names "
                   f"{', '.join(first[1]) or 'none'}: the entries of one benchmark must agree "
                   "on its parameters")
        key = (entry["benchmark"], entry["mode"], entry["threads"], tuple(sorted(given.items())))
        if key in instances:
            c.fail(json_path(at, "benchmark"), f"repeats {instances[key]} "
                   f"({entry['benchmark'][:60]}, {entry['mode']}); keep one entry per "
                   "benchmark, mode, parameters and threads")
        instances[key] = at


def load(doc: list[Any], origin: str) -> list[dict[str, Any]]:
    c = Checker(origin, FIX)
    if not doc:
        c.fail("the document", "is an empty list: JMH ran no benchmark (check the include "
               "pattern)")
    profiled = any(isinstance(e, dict) and isinstance(e.get("secondaryMetrics"), dict) and
                   any(n in e["secondaryMetrics"] for n in NORM + RATE) for e in doc)
    entries = [_entry(c, entry, json_path("", i), profiled) for i, entry in enumerate(doc)]
    _one_per_instance(c, doc)
    versions = {e.get("jmhVersion") for e in doc if isinstance(e.get("jmhVersion"), str)}
    version = versions.pop() if len(versions) == 1 else None
    dotted = any(NORM[1] in (e.get("secondaryMetrics") or {}) for e in doc)
    metrics = dict.fromkeys(key for _, _, key, _, _ in entries)
    fields = []
    if profiled:
        by = f"{TOOL} {version or '< 1.37' if dotted else version or ''}".strip()
        fields.append(common.sampled_field(
            "bytes allocated per op: gc.alloc.rate.norm of -prof gc, from the JVM's "
            "per-thread allocated-bytes counters", f"{by} -prof gc (gc.alloc.rate.norm)",
            "scoreError"))
    for key in metrics:
        base = common.NS if key == "ns_per_op" else common.OPS
        fields.append(common.field(base, "primary score per iteration, converted; each "
                                         "iteration a sample, per fork"))
    note = NOTE_TIME_ONLY if not profiled else (
        "B/op is gc.alloc.rate.norm (-prof gc): sampled from the JVM's "
        "allocated-bytes counters, not counted, so it gates with a tolerance")
    source = {"format": "jmh", "tool": TOOL, "version": version, "note": note}
    docs = []
    for k in range(max(len(forks) for _, _, _, forks, _ in entries)):
        results = [common.result(name, threads, alloc if k == 0 else None,
                                 common.time_section(key, forks[k]))
                   for name, threads, key, forks, alloc in entries if k < len(forks)]
        docs.append(common.document(source, fields, results))
    return docs
