"""A Comparison as JSON (`compare --format json`) and back (`allocbench report` reads it).

The document holds everything the comment and the report say, the samples each time verdict
was judged on included (per fork, as measured), so a report drawn from it shows both sides'
distributions without the results files. Reading one back checks it whole: a report never
renders half of a damaged comparison.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from allocbench.sites import per_op as sites_of
from allocbench.gate import compare as cmp, stats
from allocbench.gate.compare import (Comparison, ExactChange, InstanceComparison, PolicyChange, Side,
                                SiteExcess, SitesNotJudged, TimeChange)
from allocbench.base.fileio import json_path
from allocbench.base.validate import MISSING, Checker
from allocbench.sites.per_op import SiteChange
from allocbench.gate.config import SITE_METRICS, UNSTABLE, TimeSettings

FIX = "write it again with 'allocbench compare --format json'"
VERDICTS = (cmp.WORSE, cmp.BETTER, cmp.SAME, cmp.ALLOWED, cmp.UNSTABLE, cmp.NONDETERMINISTIC,
            cmp.SLOWER, cmp.FASTER)


def _time_json(t: TimeChange) -> dict[str, Any]:
    out = {k: v for k, v in t.__dict__.items() if k != "interval"}
    out["interval"] = None if t.interval is None else dict(t.interval.__dict__)
    out["base_forks"] = [list(f) for f in t.base_forks]
    out["cand_forks"] = [list(f) for f in t.cand_forks]
    return out


def to_json(comparison: Comparison, fail_on: str,
            sites: dict[str, list[SiteChange]] | None = None) -> str:
    doc = {
        "base": {"label": comparison.base.label, "path": str(comparison.base.path),
                 "files": len(comparison.base.docs)},
        "candidate": {"label": comparison.cand.label, "path": str(comparison.cand.path),
                      "files": len(comparison.cand.docs)},
        "settings": dict(comparison.settings.__dict__),
        "config": str(comparison.config_path) if comparison.config_path else None,
        "summary": dict(cmp.verdicts(comparison)),
        "time_gates": comparison.time_gates,
        "paired": comparison.paired,
        "gate": {"fail_on": fail_on, "sampled_unstable": comparison.sampled_unstable,
                 "failed": [{"instance": n, "metric": m}
                            for n, m in cmp.gated(comparison, fail_on)]},
        "notes": list(comparison.notes),
        "site_excesses": [dict(e.__dict__, metrics=list(e.metrics))
                          for e in comparison.site_excesses],
        "sites_not_judged": [dict(n.__dict__) for n in comparison.sites_not_judged],
        "added": list(comparison.added),
        "removed": list(comparison.removed),
        "policy_changes": [dict(c.__dict__, diff=list(c.diff))
                           for c in comparison.policy_changes],
        "instances": [{
            "name": inst.name, "scenario": inst.key[0], "args": dict(inst.key[1]),
            "threads": inst.key[2], "allocator": inst.key[3], "failure": inst.failure or None,
            "exact": [{**c.__dict__, "base": list(c.base), "cand": list(c.cand),
                       "delta": c.delta, "percent": c.percent} for c in inst.exact],
            "time": [_time_json(t) for t in inst.time]} for inst in comparison.instances],
    }
    if sites is not None:   # the site changes of the instances profiled on both sides
        doc["sites"] = {name: [{"kind": c.kind, "allocs_per_op": sites_of.number(c.allocs),
                                "bytes_per_op": sites_of.number(c.bytes), "text": c.text()}
                               for c in changes] for name, changes in sites.items()}
    return json.dumps(doc, indent=2, sort_keys=True, allow_nan=False) + "\n"


def _numbers(c: Checker, value: Any, where: str) -> tuple[float, ...]:
    return tuple(c.number(v, json_path(where, i)) for i, v in enumerate(c.array(value, where)))


def _exact(c: Checker, e: Any, at: str) -> ExactChange:
    c.obj(e, at)
    c.each(e, at, {"metric": c.text, "unit": c.text, "budget": c.text,
                   "verdict": lambda v, w: c.member(v, w, VERDICTS)})
    c.each(e, at, {"section": lambda v, w: c.member(v, w, ("alloc", "instructions"))},
           optional=("section",))   # absent from comparisons older than the instructions pass
    c.each(e, at, {"gate": lambda v, w: c.member(v, w, ("exact", "sampled")),
                   "tolerance": lambda v, w: v is None or c.number(v, w),
                   "tolerance_from": c.text, "bound": lambda v, w: v is None or c.number(v, w)},
           optional=("gate", "tolerance", "tolerance_from", "bound"))   # absent before imports/
    base, cand = (_numbers(c, e.get(side, MISSING), json_path(at, side))
                  for side in ("base", "cand"))
    return ExactChange(e["metric"], e["unit"], base, cand, e["budget"], e["verdict"],
                       e.get("section", "alloc"), e.get("gate", "exact"), e.get("tolerance"),
                       e.get("tolerance_from", ""), e.get("bound"))


def _time(c: Checker, t: Any, at: str) -> TimeChange:
    c.obj(t, at)
    c.each(t, at, {"metric": c.text, "unit": c.text, "reason": c.text, "noise": c.text,
                   "verdict": lambda v, w: c.member(v, w, VERDICTS),
                   **{k: c.number for k in ("base_mean", "cand_mean", "base_cv", "cand_cv",
                                            "threshold")},
                   **{k: lambda v, w: c.integer(v, w, 0) for k in ("base_n", "cand_n")},
                   "p_value": lambda v, w: v is None or c.number(v, w)})
    # Samples: absent from comparisons written before they were kept (a page then shows none).
    forks = {side: tuple(_numbers(c, f, json_path(json_path(at, side), i))
                         for i, f in enumerate(c.array(t.get(side, []), json_path(at, side))))
             for side in ("base_forks", "cand_forks")}
    interval = t.get("interval", MISSING)
    if interval is not None:
        where = json_path(at, "interval")
        c.each(c.obj(interval, where), where,
               {k: c.number for k in stats.Interval.__dataclass_fields__})
        interval = stats.Interval(**{k: interval[k] for k in stats.Interval.__dataclass_fields__})
    # Absent from comparisons written before time was measured paired: it was not.
    pairs = c.integer(t.get("pairs", 0), json_path(at, "pairs"), 0)
    return TimeChange(t["metric"], t["unit"], t["base_n"], t["cand_n"], t["base_mean"],
                      t["cand_mean"], t["base_cv"], t["cand_cv"], interval, t["p_value"],
                      t["threshold"], t["verdict"], t["reason"], t["noise"], **forks,
                      pairs=pairs)


def _instance(c: Checker, i: Any, at: str) -> InstanceComparison:
    c.obj(i, at)
    c.each(i, at, {"name": c.text, "scenario": c.text, "allocator": c.text,
                   "threads": lambda v, w: c.integer(v, w, 1), "args": c.integers,
                   "failure": lambda v, w: v is None or c.text(v, w)})
    key = (i["scenario"], tuple(sorted(i["args"].items())), i["threads"], i["allocator"])
    exact, time = (tuple(read(c, x, json_path(json_path(at, key), j)) for j, x in enumerate(
        c.array(i.get(key, MISSING), json_path(at, key)))) for key, read in (("exact", _exact),
                                                                            ("time", _time)))
    return InstanceComparison(i["name"], key, exact, time, i["failure"] or "")


def _site_excess(c: Checker, e: Any, at: str) -> SiteExcess:
    c.each(c.obj(e, at), at, {"instance": c.text, "budget": c.text, "text": c.text,
                              "metrics": lambda v, w: [
                                  c.member(m, json_path(w, i), SITE_METRICS)
                                  for i, m in enumerate(c.array(v, w))]})
    return SiteExcess(e["instance"], tuple(e["metrics"]), e["budget"], e["text"])


def _policy_change(c: Checker, p: Any, at: str) -> PolicyChange:
    c.each(c.obj(p, at), at, {"file": c.text, "judged_by": c.text, "problem": c.text,
                              "diff": lambda v, w: [c.text(line, json_path(w, i))
                                                    for i, line in enumerate(c.array(v, w))]})
    return PolicyChange(p["file"], p["judged_by"], tuple(p["diff"]), p["problem"])


def _not_judged(c: Checker, n: Any, at: str) -> SitesNotJudged:
    c.each(c.obj(n, at), at, {"instance": c.text, "reason": c.text, "gates": c.flag})
    return SitesNotJudged(n["instance"], n["reason"], n["gates"])


def _side(c: Checker, value: Any, at: str) -> Side:
    c.each(c.obj(value, at), at, {"label": c.text, "path": c.text})
    return Side(Path(value["path"]), value["label"], ())


def from_json(doc: Any, origin: str) -> tuple[Comparison, str]:
    """The Comparison and its --fail-on, from to_json's document; UserError naming the file,
    the field and the fix."""
    c = Checker(origin, FIX)
    c.obj(doc, "the document")
    c.each(doc, "", {"added": lambda v, w: [c.text(x, json_path(w, i))
                                             for i, x in enumerate(c.array(v, w))],
                     "removed": lambda v, w: [c.text(x, json_path(w, i))
                                              for i, x in enumerate(c.array(v, w))],
                     "config": lambda v, w: v is None or c.text(v, w)})
    settings = c.obj(doc.get("settings", MISSING), "settings")
    # paired_threshold: absent from comparisons written before time was measured paired.
    settings = {"paired_threshold": TimeSettings.paired_threshold, **settings}
    c.each(settings, "settings", {k: c.number for k in TimeSettings.__dataclass_fields__})
    gate = c.obj(doc.get("gate", MISSING), "gate")
    fail_on = c.member(gate.get("fail_on", MISSING), "gate.fail_on", cmp.FAIL_ON)
    # Absent from comparisons written before unstable allocation metrics gated: they did not.
    unstable = c.member(gate.get("sampled_unstable", "show"), "gate.sampled_unstable",
                        UNSTABLE)
    notes = tuple(c.text(n, json_path("notes", i))
                  for i, n in enumerate(c.array(doc.get("notes", []), "notes")))
    instances = tuple(_instance(c, i, json_path("instances", j))
                      for j, i in enumerate(c.array(doc.get("instances", MISSING), "instances")))
    excesses = tuple(_site_excess(c, e, json_path("site_excesses", i)) for i, e in
                     enumerate(c.array(doc.get("site_excesses", []), "site_excesses")))
    policy = tuple(_policy_change(c, p, json_path("policy_changes", i)) for i, p in
                   enumerate(c.array(doc.get("policy_changes", []), "policy_changes")))
    not_judged = tuple(_not_judged(c, n, json_path("sites_not_judged", i)) for i, n in
                       enumerate(c.array(doc.get("sites_not_judged", []), "sites_not_judged")))
    comparison = Comparison(
        _side(c, doc.get("base", MISSING), "base"),
        _side(c, doc.get("candidate", MISSING), "candidate"),
        instances, tuple(doc["added"]), tuple(doc["removed"]),
        TimeSettings(**{k: settings[k] for k in TimeSettings.__dataclass_fields__}),
        Path(doc["config"]) if doc["config"] else None,
        c.flag(doc.get("time_gates", True), "time_gates"), notes, excesses,
        sites_not_judged=not_judged, sampled_unstable=unstable, policy_changes=policy,
        paired=c.text(doc.get("paired", ""), "paired"))
    return comparison, fail_on
