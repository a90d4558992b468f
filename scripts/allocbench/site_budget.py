"""Per-site budgets ([[sites]] in allocbench.toml): an allocation site that grew beyond its
budget fails the gate even when the instance's totals did not change (a moved allocation).

A site's growth is its change between the two sides' site tables (sites.diff): a new site grew
by all of its B/op and allocs/op, a site whose sizes changed by the difference, a site gone by
nothing. The budget is the allowed increase per site, in the metric's unit or a percent of
that site's base (a new site's base is 0, so a percent allows it nothing).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from allocbench.compare import Comparison, SiteExcess
from allocbench.config import SITE_METRICS, Config
from allocbench.sites import SiteChange


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


def judge(comparison: Comparison, config: Config, sites: dict[str, list[SiteChange]]
          ) -> Comparison:
    """`comparison` with the site excesses of the budgeted instances among `sites` (the site
    changes of instances profiled on both sides, each exact: their sites sum to the count)."""
    found = tuple(e for name, changes in sites.items() if budgeted(config, name)
                  for e in excesses(config, name, changes))
    return replace(comparison, site_excesses=found)
