"""Per-site budgets ([[sites]] in allocbench.toml): an allocation site that grew beyond its
budget fails the gate even when the instance's totals did not change (a moved allocation).

A site's growth is its change between the two sides' site tables (sites.diff): a new site grew
by all of its B/op and allocs/op, a site whose sizes changed by the difference, a site gone by
nothing. The budget is the allowed increase per site, in the metric's unit or a percent of
that site's base (a new site's base is 0, so a percent allows it nothing).

A budget that cannot be judged never passes. Of an instance whose sites do not sum to its
count pass on a side, only the sites that allocated alike over two stretches of ops on both
sides are judged (sites.Unsteady, profile.py); the others are named, not judged. When none
can be judged, or profiling the instance failed, or it was not profiled, its budget fails the
gate with the reason (compare.SitesNotJudged). A budget of an instance that failed in the
base is named as not judged without gating: the failure is the base's, not the candidate's.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from allocbench.sites.per_op import SiteChange, Unsteady, place_text
from allocbench.gate.compare import Comparison, SiteExcess, SitesNotJudged
from allocbench.gate.config import SITE_METRICS, Config


def budgeted(config: Config, instance: str) -> bool:
    return any(config.site_limit(instance, metric) is not None for metric in SITE_METRICS)


def _growth(change: SiteChange, metric: str) -> tuple[Fraction, Fraction]:
    """(increase, the site's base value) of `metric`, per op."""
    if metric == "bytes_per_op":
        return change.bytes, change.base.bytes if change.base else Fraction(0)
    return change.allocs, change.base.allocs if change.base else Fraction(0)


def excesses(config: Config, instance: str, changes: list[SiteChange]
             ) -> tuple[SiteExcess, ...]:
    """The site changes of `instance` beyond their budgets, in the order of `changes`."""
    found = []
    for change in changes:
        beyond = []
        for metric in SITE_METRICS:
            limit = config.site_limit(instance, metric)
            if limit is None:
                continue
            increase, base = _growth(change, metric)
            if increase > 0 and increase > Fraction(limit.allowed(float(base))):
                beyond.append((metric, limit))
        if beyond:
            found.append(SiteExcess(instance, tuple(m for m, _ in beyond),
                                    ", ".join(f"{m} +{limit}" for m, limit in beyond),
                                    change.text()))
    return tuple(found)


def judge(comparison: Comparison, config: Config, sites: dict[str, list[SiteChange]],
          unsteady: dict[str, Unsteady] | None = None, failed: dict[str, str] | None = None
          ) -> Comparison:
    """`comparison` with the site excesses and the budgets not judged of its budgeted instances:
    `sites` holds the site changes of the instances profiled on both sides, `unsteady` those of
    them whose sites do not sum to the count pass on a side, `failed` why profiling one failed."""
    unsteady, failed = unsteady or {}, failed or {}
    found: list[SiteExcess] = []
    not_judged: list[SitesNotJudged] = []
    for inst in comparison.instances:
        name = inst.name
        if not budgeted(config, name) or inst.failed_in_candidate:   # that fails already
            continue
        reason = _unprofiled(inst.failure, failed.get(name), name in sites)
        shaky = unsteady.get(name)
        if reason is None and shaky is not None and shaky.steady == 0:
            seen = (f"each of them ({_places(shaky)}) allocated differently over two "
                    "stretches of ops" if shaky.sites else "heaptrack saw no site allocate per op")
            reason = ("none of its sites can be judged: its sites do not sum to its count pass "
                      f"on a side, and {seen}; make the instance deterministic, or leave it out "
                      "of the [[sites]] match")
        if reason is not None:
            not_judged.append(SitesNotJudged(name, reason, gates=not inst.failure))
            continue
        found += excesses(config, name, [c for c in sites[name]
                                         if shaky is None or shaky.judged(c)])
        if shaky is not None and shaky.sites:
            not_judged.append(SitesNotJudged(name, (
                f"judged on {shaky.steady} of its {shaky.steady + len(shaky.sites)} sites; not "
                f"on {_places(shaky)}, which allocated differently over two stretches of ops "
                "(its sites do not sum to its count pass on a side)"), gates=False))
    return replace(comparison, site_excesses=tuple(found), sites_not_judged=tuple(not_judged))


def unjudged(comparison: Comparison, config: Config, reason: str) -> Comparison:
    """`comparison` with each budget of its instances named as not judged, for `reason`,
    without gating: what the user asked for (ab --no-sites)."""
    return replace(comparison, sites_not_judged=tuple(
        SitesNotJudged(inst.name, reason, gates=False) for inst in comparison.instances
        if budgeted(config, inst.name) and not inst.failed_in_candidate))


def _unprofiled(failure: str, profiling: str | None, profiled: bool) -> str | None:
    """Why an instance's sites are not there to judge, or None."""
    if failure:
        return f"it failed in the {failure}"
    if profiling is not None:
        return f"profiling it under heaptrack failed: {profiling}"
    return None if profiled else "its sites were not profiled on both sides"


def _places(shaky: Unsteady) -> str:
    return ", ".join(place_text(site) for site in shaky.sites)
