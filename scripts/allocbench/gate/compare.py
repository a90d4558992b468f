"""Comparing two sets of results: exact gate for allocation metrics, interval gate for time.

Pure: loaded documents in, a Comparison out (compare_format.py prints it). Which metrics are
gated, and how, comes from each document's `fields` list (`gate: exact` / `time` / `info`).

Verdicts, per metric of a scenario instance present on both sides:
- exact metrics: *worse* (increase beyond the budget), *allowed* (increase within it),
  *better* (decrease), *same*, or *nondeterministic* (forks of one side disagree; never gates);
- sampled metrics (B/op of JMH and BenchmarkDotNet, imports/): the same verdicts beyond a
  tolerance (gate/tolerance.py), *unstable* when there is none to judge with or it is wider
  than its bound; an unstable allocation metric cannot be judged, so it gates (--fail-on
  alloc|any) unless allocbench.toml says `[sampled] unstable = "show"`;
- time: *worse* / *better* when the whole interval of the relative difference of means lies
  beyond ±threshold, *same* otherwise, *unstable* (too few samples, cv above the limit, or
  bimodal; never gates); every sample is > 0, refused at load otherwise (results_check);
- an instance that failed (its `error`) in the candidate is *failed*, and gates;
- when both sides ran the instructions pass (--instructions), instructions_per_op gates exactly
  and time is directional: *slower* / *faster* in place of worse / better, never gating, unless
  the gate is asked for time alone (--fail-on time).
"""

from __future__ import annotations

import zlib
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from allocbench import imports
from allocbench.base import results, results_check
from allocbench.gate import stats
from allocbench.gate.config import Config, TimeSettings
from allocbench.base.errors import UserError
from allocbench.base.fileio import json_path
from allocbench.base.results import Key, key_of   # compare.Key, compare.key_of for callers
from allocbench.gate import tolerance as sampled
from allocbench.base.validate import finite

WORSE, BETTER, SAME, ALLOWED = "worse", "better", "same", "allowed"
UNSTABLE, NONDETERMINISTIC, FAILED = "unstable", "nondeterministic", "failed"
SLOWER, FASTER = "slower", "faster"   # time beyond the threshold, directional: never gates
DIRECTIONAL = {WORSE: SLOWER, BETTER: FASTER}
FAIL_ON = ("alloc", "time", "any")
SITE = "allocation site"   # what a site beyond its [[sites]] budget fails the gate as
NOT_JUDGED = "allocation sites not judged"   # ... and a [[sites]] budget it could not judge
GATED = ("exact", "time", "sampled")
# context key → the flag that decides whether the pass runs (and whether it skips or adds it)
PASSES = {"count": ("--no-count", "skips"), "time": ("--no-time", "skips"),
          "instructions": ("--instructions", "adds")}


@dataclass(frozen=True)
class Side:
    path: Path
    label: str
    docs: tuple[dict[str, Any], ...]
    kind: str = imports.ALLOCBENCH   # or the format its files were imported from

    @property
    def fields(self) -> list[dict[str, Any]]:
        return self.docs[0]["fields"]

    def by_key(self) -> dict[Key, list[dict[str, Any]]]:
        """Every instance's results, one per fork, in first-seen order."""
        out: dict[Key, list[dict[str, Any]]] = {}
        for doc in self.docs:
            for r in doc["results"]:
                out.setdefault(key_of(r), []).append(r)
        return out


def _label(path: Path, docs: list[dict[str, Any]]) -> str:
    names = {(d["context"].get("revision") or {}).get("describe")
             or ((d["context"].get("revision") or {}).get("sha") or "")[:12] for d in docs}
    return names.pop() if len(names) == 1 and "" not in names else path.name


def load_side(path: Path) -> Side:
    """A results file, or a directory of them (the forks of one side), each complete and all
    measured alike; or files of Google Benchmark, JMH or BenchmarkDotNet (imports/), all of
    one kind."""
    path = Path(path)
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not files:
        raise UserError(f"{path}: no results files (*.json) in this directory")
    loaded = [(f, kind, doc) for f in files for kind, docs in [imports.load(f)] for doc in docs]
    for file, _, doc in loaded:
        if not doc["complete"]:
            raise UserError(f"{file}: the partial results of an interrupted run (complete: "
                            "false); the instances it did not reach would go ungated: measure "
                            "again and compare complete runs")
        same_measurement(loaded[0][0], loaded[0][2], file, doc)
    docs = [doc for _, _, doc in loaded]
    return Side(path, _label(path, docs), tuple(docs), loaded[0][1])


def _ran(doc: dict[str, Any], section: str) -> bool:
    return doc["context"].get(results_check.SECTIONS[section]) is not None


def _gated(doc: dict[str, Any]) -> set[tuple[str, str, str]]:
    """The gated metrics of the passes that ran (a pass that did not run gates nothing)."""
    return {(f["section"], f["key"], f["gate"]) for f in doc["fields"]
            if f["gate"] in GATED and _ran(doc, f["section"])}


def same_measurement(a: Path, a_doc: dict[str, Any], b: Path, b_doc: dict[str, Any]) -> None:
    """UserError unless both documents gate the same metrics and ran the same passes: else a
    metric that one of them lacks would silently go ungated. Imported documents: the same
    format and allocation metrics (imports.same_kind)."""
    imports.same_kind(a, a_doc, b, b_doc)
    if imports.kind_of(a_doc) != imports.ALLOCBENCH:
        return
    for key, (flag, effect) in PASSES.items():
        ran_a, ran_b = (d["context"].get(key) is not None for d in (a_doc, b_doc))
        if ran_a != ran_b:
            without, other = (b, a) if ran_a else (a, b)
            how = (f"with {flag}, {other} was not" if effect == "skips"
                   else f"without {flag}, {other} with it")
            raise UserError(f"{without} was measured {how} (context.{key}); measure both "
                            "sides with the same passes")
    gated_a, gated_b = _gated(a_doc), _gated(b_doc)
    differ = sorted(gated_a ^ gated_b)
    if differ:
        section, key, gate = differ[0]
        has, lacks = (a, b) if differ[0] in gated_a else (b, a)
        raise UserError(f"{has} gates {json_path(section, key)} ({gate}) and {lacks} does "
                        "not, so it cannot be compared; measure both sides with the same "
                        "allocbench-run")


@dataclass(frozen=True)
class ExactChange:
    metric: str
    unit: str
    base: tuple[float, ...]    # distinct values over the forks, sorted
    cand: tuple[float, ...]
    budget: str                # allowed increase: "0", "64", "10%"
    verdict: str
    section: str = "alloc"     # the results section: "alloc" or "instructions"
    gate: str = "exact"        # or "sampled": B/op a runtime sampled (gate/tolerance.py)
    tolerance: float | None = None   # sampled: the difference that is still *same*
    tolerance_from: str = ""   # sampled: how the tolerance was found
    bound: float | None = None   # sampled: the widest tolerance that judges (tolerance.py)

    @property
    def delta(self) -> float | None:
        if len(self.base) != 1 or len(self.cand) != 1:
            return None
        return self.cand[0] - self.base[0]

    @property
    def percent(self) -> float | None:
        delta = self.delta
        if delta is None or self.base[0] == 0:
            return None
        return 100.0 * delta / self.base[0]


@dataclass(frozen=True)
class TimeChange:
    metric: str
    unit: str
    base_n: int
    cand_n: int
    base_mean: float
    cand_mean: float
    base_cv: float
    cand_cv: float
    interval: stats.Interval | None
    p_value: float | None
    threshold: float           # percent
    verdict: str
    reason: str = ""           # why unstable
    noise: str = ""            # calibration's warning, if its noise exceeds the threshold
    base_forks: tuple[tuple[float, ...], ...] = ()   # the samples judged, per fork, as measured
    cand_forks: tuple[tuple[float, ...], ...] = ()
    pairs: int = 0             # measured paired (gate/paired_gate.py): how many pairs judged


@dataclass(frozen=True)
class InstanceComparison:
    name: str
    key: Key
    exact: tuple[ExactChange, ...]
    time: tuple[TimeChange, ...]
    failure: str = ""          # "candidate: <error>" or "base: <error>"

    @property
    def failed_in_candidate(self) -> bool:
        return self.failure.startswith("candidate")


@dataclass(frozen=True)
class SiteExcess:
    """An allocation site that grew beyond its [[sites]] budget (site_budget.py)."""
    instance: str
    metrics: tuple[str, ...]   # bytes_per_op and/or allocs_per_op, each beyond its budget
    budget: str                # the budgets exceeded: "bytes_per_op +0, allocs_per_op +0"
    text: str                  # the site's change, as sites.SiteChange.text() writes it


@dataclass(frozen=True)
class PolicyChange:
    """A file of the gate's policy that the candidate changes; the gate was judged by the
    base's (policy.py), and the outputs say so first."""
    file: str                    # "allocbench.toml", ".allocbench/calibration.json"
    judged_by: str               # what the gate used: "<sha>:allocbench.toml", "the defaults"
    diff: tuple[str, ...] = ()   # the entries that differ: "- " the base's, "+ " the candidate's
    problem: str = ""            # the candidate's file cannot be read, and why


@dataclass(frozen=True)
class SitesNotJudged:
    """A [[sites]] budget not judged, or judged on some of the instance's sites only
    (site_budget.py); `gates` when none of its sites could be judged and the gate was asked to
    judge them: a budget that cannot be judged never passes."""
    instance: str
    reason: str
    gates: bool


@dataclass(frozen=True)
class Comparison:
    base: Side
    cand: Side
    instances: tuple[InstanceComparison, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    settings: TimeSettings
    config_path: Path | None
    time_gates: bool = True    # False: time is directional (the instructions pass gates CPU)
    notes: tuple[str, ...] = ()   # what imported files say of themselves (imports.note)
    site_excesses: tuple[SiteExcess, ...] = ()   # judged by site_budget.judge, when profiled
    sites_not_judged: tuple[SitesNotJudged, ...] = ()   # ... and what it could not judge
    sampled_unstable: str = "fail"   # [sampled] unstable: "fail" or "show" (config.Sampled)
    policy_changes: tuple[PolicyChange, ...] = ()   # the candidate's changes to the policy
    paired: str = ""   # time measured paired: the file of the pairs (gate/paired_gate.py)


def exact_change(metric: str, unit: str, base: list[float], cand: list[float],
                 limit_allowed: float, budget: str, section: str = "alloc") -> ExactChange:
    """The verdict of an exact metric. Loading validated every value: anything else here is a
    bug, never *same*."""
    if not base or not cand or not all(finite(v) for v in (*base, *cand)):
        raise ValueError(f"{metric}: exact_change needs finite values on both sides, not "
                         f"{base} and {cand}")
    b, c = tuple(sorted(set(base))), tuple(sorted(set(cand)))
    if len(b) > 1 or len(c) > 1:
        verdict = NONDETERMINISTIC
    elif c[0] > b[0] + limit_allowed:
        verdict = WORSE
    elif c[0] > b[0]:
        verdict = ALLOWED
    elif c[0] < b[0]:
        verdict = BETTER
    else:
        verdict = SAME
    return ExactChange(metric, unit, b, c, budget, verdict, section)


def sampled_change(metric: str, unit: str, base: tuple[float, float | None],
                   cand: tuple[float, float | None], found: sampled.Tolerance,
                   limit_allowed: float, budget: str) -> ExactChange:
    """The verdict of a sampled metric from each side's (value, half-width): beyond the
    tolerance as an exact metric is beyond zero; *unstable* without a tolerance or with one
    wider than its bound."""
    b, c, tol = base[0], cand[0], found.amount
    if tol is None or tol > found.bound:
        verdict = UNSTABLE
    elif c > b + tol + limit_allowed:
        verdict = WORSE
    elif c > b + tol:
        verdict = ALLOWED
    elif c < b - tol:
        verdict = BETTER
    else:
        verdict = SAME
    return ExactChange(metric, unit, (b,), (c,), budget, verdict, "alloc", "sampled", tol,
                       found.source, found.bound)


def time_change(metric: str, unit: str, base_forks: list[np.ndarray],
                cand_forks: list[np.ndarray], *, threshold: float, settings: TimeSettings,
                seed: int) -> TimeChange:
    """The time verdict for one metric from each side's samples, one array per fork;
    `threshold` in percent. Lower is better, except for rates (unit ending in '/s'). Loading
    refused every sample <= 0 (results_check.time_sample): one here is a bug, never judged."""
    base_forks = [np.asarray(f, dtype=float) for f in base_forks]
    cand_forks = [np.asarray(f, dtype=float) for f in cand_forks]
    base, cand = np.concatenate(base_forks), np.concatenate(cand_forks)
    if not (base.min() > 0 and cand.min() > 0):   # NaN too
        raise ValueError(f"{metric}: time_change needs samples > 0 on both sides, not "
                         f"{base.tolist()} and {cand.tolist()}")
    common = dict(metric=metric, unit=unit, base_n=len(base), cand_n=len(cand),
                  base_mean=stats.center(base_forks), cand_mean=stats.center(cand_forks),
                  base_cv=stats.cv(base), cand_cv=stats.cv(cand), threshold=threshold,
                  base_forks=tuple(tuple(map(float, f)) for f in base_forks),
                  cand_forks=tuple(tuple(map(float, f)) for f in cand_forks))
    reasons = []
    if min(len(base), len(cand)) < settings.min_samples:
        reasons.append(f"{min(len(base), len(cand))} samples, fewer than "
                       f"{settings.min_samples}")
    relevant = threshold / 200.0   # differences under half the threshold cannot fool the gate
    for side, forks, samples in (("base", base_forks, base), ("candidate", cand_forks, cand)):
        if stats.cv(samples) > settings.max_cv:
            reasons.append(f"{side} cv {stats.cv(samples):.3f} > {settings.max_cv:g}")
        modes = stats.bimodal(stats.within_forks(forks), min_separation=relevant)
        if modes:
            reasons.append(f"{side} bimodal ({modes.low_count} samples near "
                           f"{modes.low_mean:.4g}, {modes.high_count} near {modes.high_mean:.4g})")
    interval = stats.bootstrap_interval(base_forks, cand_forks, confidence=settings.confidence,
                                        seed=seed)
    p_value = stats.mann_whitney_p(base, cand)
    limit = threshold / 100.0
    sign = -1.0 if unit.endswith("/s") else 1.0   # a higher rate is better
    low, high = sorted((sign * interval.relative_low, sign * interval.relative_high))
    if reasons:
        verdict = UNSTABLE
    elif low > limit:
        verdict = WORSE
    elif high < -limit:
        verdict = BETTER
    else:
        verdict = SAME
    return TimeChange(**common, interval=interval, p_value=p_value, verdict=verdict,
                      reason="; ".join(reasons))


def seed_of(name: str, metric: str) -> int:
    """A fixed seed per instance and metric: output does not depend on order or on other runs."""
    return zlib.crc32(f"{name}/{metric}".encode())


def _failure(rows: list[dict[str, Any]]) -> str:
    return next((r["error"] for r in rows if r.get("error")), "")


def _compare_instance(name: str, key: Key, base: list[dict[str, Any]],
                      cand: list[dict[str, Any]], fields: list[dict[str, Any]],
                      config: Config, calibration: dict[tuple[Key, str], dict[str, Any]],
                      time_gates: bool) -> InstanceComparison:
    for side, rows in (("candidate", cand), ("base", base)):
        if _failure(rows):
            return InstanceComparison(name, key, (), (), f"{side}: {_failure(rows)}")
    exact, time = [], []
    for f in fields:   # none: its pass did not run on either side (validated: not on one only)
        if f["gate"] == "exact":
            b, c = exact_values(base, f), exact_values(cand, f)
            if b or c:
                limit = config.limit(name, f["key"])
                exact.append(exact_change(f["key"], f["unit"], b, c,
                                          limit.allowed(float(min(b, default=0))), str(limit),
                                          f["section"]))
        elif f["gate"] == "sampled":
            b, c = sampled.estimate(base, f), sampled.estimate(cand, f)
            if b and c:
                limit = config.limit(name, f["key"])
                exact.append(sampled_change(f["key"], f["unit"], b, c,
                                            sampled.tolerance(f, b, c, config.sampled.tolerance),
                                            limit.allowed(b[0]), str(limit)))
        elif f["gate"] == "time":
            b, c = fork_samples(base, f), fork_samples(cand, f)
            if b or c:
                change = time_change(f["key"], f["unit"], b, c, threshold=config.threshold(name),
                                     settings=config.time, seed=seed_of(name, f["key"]))
                if not time_gates:
                    change = replace(change, verdict=DIRECTIONAL.get(change.verdict,
                                                                     change.verdict))
                time.append(_with_noise(change, calibration.get((key, f["key"]))))
    return InstanceComparison(name, key, tuple(exact), tuple(time))


def exact_values(rows: list[dict[str, Any]], field: dict[str, Any]) -> list[float]:
    """Each fork's value of an exact metric, or each repetition's where a fork lists them
    (`samples_<key>`: Google Benchmark's repetitions with allocbench::gbench)."""
    out = []
    for r in rows:
        value = results.metric(r, field)
        samples = (r.get(field["section"]) or {}).get(f"samples_{field['key']}")
        out += samples if isinstance(samples, list) and samples else \
            [] if value is None else [value]
    return out


def fork_samples(rows: list[dict[str, Any]], field: dict[str, Any]) -> list[np.ndarray]:
    """Each fork's samples of a time metric (`samples_<key>`, or its one value)."""
    out = []
    for r in rows:
        section = r.get(field["section"]) or {}
        samples = section.get(f"samples_{field['key']}")
        if not samples and section.get(field["key"]) is not None:
            samples = [section[field["key"]]]
        if samples:
            out.append(np.asarray(samples, dtype=float))
    return out


def _with_noise(change: TimeChange, calibrated: dict[str, Any] | None) -> TimeChange:
    if not calibrated or not calibrated.get("noisy"):
        return change
    mde = calibrated.get("mde_percent")
    what = f"minimum detectable effect {mde:.1f}%" if mde is not None else "unstable"
    note = (f"A/A calibration: {what}, false positives {calibrated['false_positive_rate']:.0%} "
            f"at {calibrated['forks']} forks × {calibrated['repetitions']} repetitions")
    return replace(change, noise=note)


def compare(base: Side, cand: Side, config: Config,
            calibration: dict[tuple[Key, str], dict[str, Any]] | None = None,
            fail_on: str = "any") -> Comparison:
    """Pairs the instances of both sides and compares every gated metric of each pair. Time
    gates unless both sides measured instructions (then it is directional), or `fail_on` is
    "time"."""
    same_measurement(base.path, base.docs[0], cand.path, cand.docs[0])
    time_gates = fail_on == "time" or not _ran(base.docs[0], "instructions")
    base_rows, cand_rows = base.by_key(), cand.by_key()
    common = [k for k in base_rows if k in cand_rows]
    if not common:
        raise UserError(
            f"{base.path} ({len(base_rows)} instances) and {cand.path} ({len(cand_rows)}) have "
            "no scenario instance in common (paired by scenario, arguments, threads and "
            "allocator): compare results of the same scenarios")
    fields = [f for f in base.fields if f["gate"] in GATED]   # the same on both sides
    config.check_metrics([f["key"] for f in fields if f["gate"] in ("exact", "sampled")])
    allocators = {k[3] for k in list(base_rows) + list(cand_rows)}

    def name(rows: list[dict[str, Any]]) -> str:
        return rows[0]["name"] + (f" [{rows[0].get('allocator')}]" if len(allocators) > 1 else "")

    instances = tuple(_compare_instance(name(base_rows[k]), k, base_rows[k], cand_rows[k],
                                        fields, config, calibration or {}, time_gates)
                      for k in common)
    added = tuple(name(rows) for k, rows in cand_rows.items() if k not in base_rows)
    removed = tuple(name(rows) for k, rows in base_rows.items() if k not in cand_rows)
    notes = tuple(dict.fromkeys(n for side in (base, cand) for d in side.docs
                                if (n := imports.note(d))))
    return Comparison(base, cand, instances, added, removed, config.time, config.path,
                      time_gates, notes, sampled_unstable=config.sampled.unstable)


def verdicts(comparison: Comparison) -> Counter[str]:
    """How many metrics got each verdict; a failed instance counts once."""
    tally: Counter[str] = Counter()
    for inst in comparison.instances:
        if inst.failure:
            tally[FAILED] += 1
        for change in (*inst.exact, *inst.time):
            tally[change.verdict] += 1
    return tally


def unstable_alloc(comparison: Comparison) -> list[tuple[str, str]]:
    """The (instance, metric) pairs of the allocation metrics the gate could not judge."""
    return [(inst.name, c.metric) for inst in comparison.instances for c in inst.exact
            if c.section == "alloc" and c.verdict == UNSTABLE]


def gated(comparison: Comparison, fail_on: str) -> list[tuple[str, str]]:
    """The (instance, metric) pairs that fail the gate; a failed candidate always does, and an
    unstable allocation metric unless [sampled] unstable = "show"."""
    unstable_fails = comparison.sampled_unstable == "fail"
    out = []
    for inst in comparison.instances:
        if inst.failed_in_candidate:
            out.append((inst.name, FAILED))
        if fail_on in ("alloc", "any"):
            out += [(inst.name, c.metric) for c in inst.exact if c.verdict == WORSE or (
                unstable_fails and c.verdict == UNSTABLE and c.section == "alloc")]
        if fail_on in ("time", "any"):
            out += [(inst.name, c.metric) for c in inst.time if c.verdict == WORSE]
    if fail_on in ("alloc", "any"):
        out += [(e.instance, SITE) for e in comparison.site_excesses]
        out += [(n.instance, NOT_JUDGED) for n in comparison.sites_not_judged if n.gates]
    return out
