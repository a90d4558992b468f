"""allocbench.toml: the time gate's settings and per-scenario and per-site budgets, validated on
load.

    [time]
    threshold = 5        # percent: worse/better only when the whole interval lies beyond ±5%
    max_cv = 0.10        # a side whose coefficient of variation exceeds this is unstable
    confidence = 0.95    # of the bootstrap interval
    min_samples = 5      # fewer samples (forks × repetitions) on a side: unstable
    paired_threshold = 1 # percent, for time measured paired (ab's default; docs/paired.md)

    [[budget]]
    match = "trace_fanout/*"   # glob over instance names; the last matching entry wins, per key
    bytes_per_op = 64          # allowed increase, in the metric's unit, or "10%" of the base
    allocs_per_op = "10%"      # or a percent of the base
    time_threshold = 10        # percent, replaces [time] threshold for these instances

    [[sites]]                  # per allocation site (profile's tables; ab profiles these)
    match = "trace_fanout/*"   # glob over instance names; the last matching entry wins, per key
    bytes_per_op = 0           # the allowed increase of any one site's B/op (a new site's is
    allocs_per_op = 0          # all of it), or "10%" of the site's base; the same for allocs

    [sampled]                  # B/op that JMH and BenchmarkDotNet sample (gate/tolerance.py)
    tolerance = "1%"           # bytes, or a percent of the base: the least tolerance
    unstable = "fail"          # the default; "show": a sampled B/op the gate cannot judge (no
                               # tolerance, or one wider than its bound) is shown, not failed

    [build]                    # how sweep and bisect build a revision (see buildconfig.py)
    bench = "bench"            # a bench project beside the subject, or a build command

The metrics a budget may name are the results' own `gate: exact` fields, so they are checked
against the results (`check_metrics`), not against a list kept here.
"""

from __future__ import annotations

import fnmatch
import math
import re
import sys
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from allocbench.base.errors import UserError
from allocbench.base.fileio import read_text
from allocbench.history import buildconfig

DEFAULT_NAME = "allocbench.toml"
FIX = "save it as UTF-8 TOML"
_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


@dataclass(frozen=True)
class TimeSettings:
    threshold: float = 5.0     # percent
    max_cv: float = 0.10
    confidence: float = 0.95
    min_samples: int = 5
    # Paired time compares two binaries in one run: its noise floor is code layout, measured
    # by bench/paired_gate.py's A/A′ builds (docs/paired.md), not the machine.
    paired_threshold: float = 1.0   # percent


@dataclass(frozen=True)
class Limit:
    """An allowed increase of an exact metric: absolute (metric unit) or percent of the base."""
    amount: float = 0.0
    percent: bool = False

    def allowed(self, base: float) -> float:
        return base * self.amount / 100.0 if self.percent else self.amount

    def __str__(self) -> str:
        if self.percent:
            return f"{self.amount:g}%"
        return f"{self.amount:g}"


UNSTABLE = ("fail", "show")


@dataclass(frozen=True)
class Sampled:
    """[sampled]: how B/op that a runtime sampled is judged (gate/tolerance.py)."""
    tolerance: Limit | None = None   # the least tolerance; None: the tools' defaults
    unstable: str = "fail"           # an *unstable* sampled metric fails the gate, or "show"


@dataclass(frozen=True)
class Budget:
    match: str
    limits: dict[str, Limit] = field(default_factory=dict)
    time_threshold: float | None = None


@dataclass(frozen=True)
class Config:
    path: Path | None = None
    time: TimeSettings = TimeSettings()
    budgets: tuple[Budget, ...] = ()
    build: buildconfig.CommandBuild | buildconfig.CMakeSettings | None = None
    sampled: Sampled = Sampled()
    sites: tuple[Budget, ...] = ()   # [[sites]]: budgets per allocation site

    def with_threshold(self, threshold: float) -> Config:
        """This configuration with another [time] threshold (percent), paired or not; budgets
        still apply."""
        return replace(self, time=replace(self.time, threshold=threshold,
                                          paired_threshold=threshold))

    def limit(self, instance: str, metric: str) -> Limit:
        """The budget of `metric` for `instance`: the last matching entry naming it, or none."""
        found = Limit()
        for budget in self.budgets:
            if metric in budget.limits and fnmatch.fnmatchcase(instance, budget.match):
                found = budget.limits[metric]
        return found

    def site_limit(self, instance: str, metric: str) -> Limit | None:
        """The per-site budget of `metric` for `instance`: the last [[sites]] entry matching it
        that names the metric; None when none does (the instance's sites are not gated)."""
        found = None
        for budget in self.sites:
            if metric in budget.limits and fnmatch.fnmatchcase(instance, budget.match):
                found = budget.limits[metric]
        return found

    def threshold(self, instance: str, paired: bool = False) -> float:
        """The time threshold for `instance`, in percent, of time measured paired or not; a
        budget's time_threshold is the instance's own, for both."""
        found = self.time.paired_threshold if paired else self.time.threshold
        for budget in self.budgets:
            if budget.time_threshold is not None and fnmatch.fnmatchcase(instance, budget.match):
                found = budget.time_threshold
        return found

    def check_metrics(self, exact_metrics: list[str]) -> None:
        """UserError if a budget names a metric that the results do not gate exactly."""
        for i, budget in enumerate(self.budgets, 1):
            for key in budget.limits:
                if key not in exact_metrics:
                    raise UserError(
                        f"{self.path}: unknown key 'budget[{i}].{key}'; a budget takes 'match', "
                        f"'time_threshold' and the exact metrics {', '.join(exact_metrics)} — "
                        "fix the spelling or remove it")


def _number(path: Path, key: str, value: Any, what: str, low: float, high: float,
            above: bool = False) -> float:
    """`value` within [low, high], or (low, high] when `above`: a threshold of 0 would call
    every difference significant, a max_cv of 0 every side unstable. NaN is in no range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(f"{path}: '{key}' must be a number ({what}), not {_describe(value)}")
    if not (low < value <= high if above else low <= value <= high):
        bounds = f"above {low:g} and at most {high:g}" if above else \
            f"between {low:g} and {high:g}"
        raise UserError(f"{path}: '{key}' is {value}; it must be {bounds} ({what})")
    return float(value)


def _describe(value: Any) -> str:
    kind = {bool: "a boolean", str: "a string", list: "an array", dict: "a table",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)
    return f"{kind} ({value!r})"


def _unknown(path: Path, key: str, known: list[str]) -> UserError:
    return UserError(f"{path}: unknown key '{key}'; the known keys here are "
                     f"{', '.join(known)} — fix the spelling or remove it")


def _time(path: Path, table: Any) -> TimeSettings:
    if not isinstance(table, dict):
        raise UserError(f"{path}: 'time' must be a table ([time]), not {_describe(table)}")
    known = ["threshold", "max_cv", "confidence", "min_samples", "paired_threshold"]
    for key in table:
        if key not in known:
            raise _unknown(path, f"time.{key}", known)
    settings = TimeSettings()
    threshold = _number(path, "time.threshold", table.get("threshold", settings.threshold),
                        "percent, e.g. 5 for 5%", 0, 1000, above=True)
    max_cv = _number(path, "time.max_cv", table.get("max_cv", settings.max_cv),
                     "a fraction, e.g. 0.10", 0, 100, above=True)
    confidence = _number(path, "time.confidence", table.get("confidence", settings.confidence),
                         "a fraction, e.g. 0.95", 0.5, 0.999)
    min_samples = table.get("min_samples", settings.min_samples)
    if isinstance(min_samples, bool) or not isinstance(min_samples, int):
        raise UserError(f"{path}: 'time.min_samples' must be an integer >= 2, not "
                        f"{_describe(min_samples)}")
    if min_samples < 2:
        raise UserError(f"{path}: 'time.min_samples' is {min_samples}; it must be at least 2")
    paired = _number(path, "time.paired_threshold",
                     table.get("paired_threshold", settings.paired_threshold),
                     "percent, e.g. 1 for 1%", 0, 1000, above=True)
    return TimeSettings(threshold, max_cv, confidence, min_samples, paired)


def _finite(value: Any) -> float | None:
    """`value` as a finite float, else None (TOML spells inf and nan; 10**400 overflows)."""
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _limit(path: Path, key: str, value: Any) -> Limit:
    if isinstance(value, str):
        percent = _PERCENT.match(value)
        if percent and _finite(percent.group(1)) is not None:
            return Limit(float(percent.group(1)), percent=True)
    elif not isinstance(value, bool) and isinstance(value, (int, float)) and value >= 0 and \
            _finite(value) is not None:
        return Limit(float(value))
    raise UserError(f"{path}: '{key}' must be an allowed increase: a number >= 0 in the "
                    f"metric's unit, or a percent string like \"10%\", not {_describe(value)}")


def _glob_problem(glob: str) -> str | None:
    """Why the fnmatch glob `glob` cannot do what its writer meant (None: it can). What fnmatch
    treats specially is * ? and sets [...] with [!...] their negation; a set scanned as
    fnmatch scans it that is never closed becomes a literal '[', a set of reversed ranges
    matches no character (so the glob matches nothing), a set opening with '^' is no negation
    but a '^' among its characters, and a backslash escapes nothing: each of those is an error."""
    i = 0
    while i < len(glob):
        char = glob[i]
        i += 1
        if char == "\\":
            return (f"the '\\' at character {i} escapes nothing (fnmatch has no escape "
                    "character): write '[*]', '[?]' or '[[]' to match those characters, '[\\]' "
                    "to match a '\\'")
        if char != "[":
            continue
        end = i + (glob[i:i + 1] == "!")
        end += glob[end:end + 1] == "]"
        end = glob.find("]", end)
        if end < 0:
            return (f"the '[' at character {i} opens a set of characters that is never closed "
                    "(fnmatch would match a '[' itself there); close the set with ']', or write "
                    "'[[]' to match a '['")
        body, i = glob[i:end], end + 1
        if body.startswith("^") and body != "^":
            return (f"{'[' + body + ']'!r} matches '^' or one of {body[1:]!r}: a set is negated "
                    f"with '!', not '^'; write {'[!' + body[1:] + ']'!r} for any character but "
                    "those")
        if not _set_matches(f"[{body}]"):
            return (f"{'[' + body + ']'!r} matches no character, so the glob matches nothing (a "
                    "range is written low to high, e.g. '[a-z]')")
    return None


def _set_matches(glob_set: str) -> bool:
    """Whether fnmatch's set `glob_set` matches some character: a run of characters it matches
    begins at a character it names (a range's low end), just after one (in a complement), or
    at the first code point, so those are the only ones to try."""
    pattern = re.compile(fnmatch.translate(glob_set))
    codes = {0, *(c + d for c in map(ord, glob_set) for d in (0, 1))}
    return any(pattern.match(chr(c)) for c in codes if 0 <= c <= sys.maxunicode)


def _entries(path: Path, entries: Any, table: str) -> list[tuple[int, dict[str, Any], str]]:
    """The [[table]] entries, numbered from 1, each with its 'match' glob, checked."""
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise UserError(f"{path}: '{table}' must be an array of tables ([[{table}]] entries), "
                        f"not {_describe(entries)}")
    found = []
    for i, entry in enumerate(entries, 1):
        match = entry.get("match")
        if match is None:
            raise UserError(f"{path}: {table}[{i}] has no 'match'; add a glob over instance "
                            "names, e.g. match = \"strings/*\"")
        if not isinstance(match, str) or not match:
            raise UserError(f"{path}: '{table}[{i}].match' must be a glob over instance names "
                            f"(e.g. \"strings/*\"), not {_describe(match)}")
        problem = _glob_problem(match)
        if problem is not None:
            raise UserError(f"{path}: '{table}[{i}].match' = {match!r}: {problem}")
        found.append((i, entry, match))
    return found


def _budgets(path: Path, entries: Any) -> tuple[Budget, ...]:
    budgets = []
    for i, entry, match in _entries(path, entries, "budget"):
        time_threshold = None
        if "time_threshold" in entry:
            time_threshold = _number(path, f"budget[{i}].time_threshold",
                                     entry["time_threshold"], "percent, e.g. 10 for 10%", 0,
                                     1000, above=True)
        limits = {key: _limit(path, f"budget[{i}].{key}", value)
                  for key, value in entry.items() if key not in ("match", "time_threshold")}
        budgets.append(Budget(match, limits, time_threshold))
    return tuple(budgets)


SITE_METRICS = ("bytes_per_op", "allocs_per_op")


def _sites(path: Path, entries: Any) -> tuple[Budget, ...]:
    budgets = []
    for i, entry, match in _entries(path, entries, "sites"):
        for key in entry:
            if key not in ("match", *SITE_METRICS):
                raise _unknown(path, f"sites[{i}].{key}", ["match", *SITE_METRICS])
        if not any(key in entry for key in SITE_METRICS):
            raise UserError(f"{path}: sites[{i}] names no metric; add bytes_per_op = 0 (no "
                            "site may allocate more bytes per op) or allocs_per_op")
        budgets.append(Budget(match, {key: _limit(path, f"sites[{i}].{key}", entry[key])
                                      for key in SITE_METRICS if key in entry}))
    return tuple(budgets)


def _sampled(path: Path, table: Any) -> Sampled:
    if not isinstance(table, dict):
        raise UserError(f"{path}: 'sampled' must be a table ([sampled]), not {_describe(table)}")
    known = ["tolerance", "unstable"]
    for key in table:
        if key not in known:
            raise _unknown(path, f"sampled.{key}", known)
    if not table:
        raise UserError(f"{path}: [sampled] names neither 'tolerance' nor 'unstable'; add one, "
                        "e.g. tolerance = \"1%\" or tolerance = 8 (bytes), or remove the table")
    unstable = table.get("unstable", Sampled.unstable)
    if not isinstance(unstable, str) or unstable not in UNSTABLE:
        raise UserError(f"{path}: 'sampled.unstable' must be \"fail\" (a sampled B/op the gate "
                        "cannot judge fails it) or \"show\" (it is shown, not failed), not "
                        f"{_describe(unstable)}")
    tolerance = _limit(path, "sampled.tolerance", table["tolerance"]) \
        if "tolerance" in table else None
    return Sampled(tolerance, unstable)


def load(path: Path | None) -> Config:
    """The configuration at `path`; None: ./allocbench.toml if it exists, else the defaults."""
    if path is None:
        default = Path(DEFAULT_NAME)
        if not default.is_file():
            return Config()
        path = default
    return parse(read_text(Path(path), "the configuration", FIX), Path(path))


def parse(text: str, path: Path) -> Config:
    """The configuration in `text`, read from `path` (a file, or `<sha>:allocbench.toml`: the
    file as a revision holds it), which every error names."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: not valid TOML ({e})") from None
    except RecursionError:
        raise UserError(f"{path}: nests too deep to be read; allocbench.toml needs no nesting "
                        "beyond [[budget]] tables") from None
    tables = ["time", "budget", "sites", "build", "sampled"]
    for key in doc:
        if key not in tables:
            raise _unknown(path, key, tables)
    build = buildconfig.parse(str(path), doc["build"]) if "build" in doc else None
    sampled = _sampled(path, doc["sampled"]) if "sampled" in doc else Sampled()
    return Config(Path(path), _time(path, doc.get("time", {})),
                  _budgets(path, doc.get("budget", [])), build, sampled,
                  _sites(path, doc.get("sites", [])))
