"""What a report is built from, read into one model: histories (a sweep store's records, or
results files, per machine and allocator, in sweep order) and comparisons (compare JSON, or an
`ab` folder compared here).

Inputs are told apart by what they are: a folder with base/ and cand/ is an `ab` folder; a
folder of *.sites.json is `allocbench profile`'s (site tables per instance); another folder is
read for results files; a .json file is a compare JSON when it has `instances` and
`gate`, else a results file. A store record that cannot be read is kept as an *unreadable*
revision with the reason (Site.problems lists it too), so one damaged file costs its revision,
not the site.

Sweep order: tags in version order (v1.9 before v1.10), and every other revision by commit date
(the record's `committed`; records written before it existed fall back to when they were
measured) among them, after the tags committed before it (sweep_order). Results files are
ordered by the date they were measured.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

from allocbench.base import results
from allocbench.base.errors import UserError
from allocbench.base.fileio import read_json
from allocbench.history import bisected, slim
from allocbench.history.store import Store, preference, problem
from allocbench.history.sweep_table import Column
from allocbench.sites import profile

UNREADABLE = "unreadable"
_CHUNK = re.compile(r"(\d+)")


@dataclass(frozen=True, eq=False)
class Point:
    """One revision of a history: measured (doc), failed, or unreadable (problem says why).

    What reads every revision of a history, however long (its order, names and steps), reads
    `brief`, the record's brief form (history/slim.py) that the store's index keeps; a sweep
    table reads `summary`, its slim form, and a page of this revision or of a window's the
    whole record (`record`, `doc`, `result`); each is read on first use."""
    sha: str
    label: str
    subject: str
    status: str              # one of store.STATUSES (ok, build_failed, …) or UNREADABLE
    problem: str
    brief: dict[str, Any] | None   # slim.brief's of the record; None when unreadable
    source: str              # the file it came from
    read: Callable[[str], dict[str, Any]] | None = field(default=None, repr=False)
    # the record in a form of slim.FORMS; None: a results file's, whole in `given`
    given: dict[str, Any] | None = field(default=None, repr=False)
    version: str = ""   # Store.version of the record file read ("": unknown, a results file)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @cached_property
    def record(self) -> dict[str, Any] | None:
        """The store record (results files: an equivalent one)."""
        if self.brief is None or self.read is None:
            return self.given
        return self.read("whole")

    @cached_property
    def summary(self) -> dict[str, Any] | None:
        """The slim record (the whole one when it was read already)."""
        if self.brief is None or self.read is None or "record" in self.__dict__:
            return self.record
        return self.read("slim")

    @property
    def doc(self) -> dict[str, Any] | None:
        return self.record["results"] if self.ok else None

    @property
    def timed(self) -> bool:
        return self.ok and self.brief["time_measured"]

    @cached_property
    def _by_name(self) -> dict[str, dict[str, Any]]:
        # A page asks each revision for each instance: 2,000 revisions × 46 instances made the
        # linear search a second of a rebuild. The first of a name wins, as it did.
        return {r["name"]: r for r in reversed(self.doc["results"])} if self.ok else {}

    @cached_property
    def _summary_by_name(self) -> dict[str, dict[str, Any]]:
        return {r["name"]: r for r in reversed(self.summary["results"]["results"])} \
            if self.ok else {}

    @property
    def steps(self) -> dict[str, list[float] | None]:
        """Instance name → [B/op, allocs/op], None where it failed or measured neither
        (slim.stepped's, shared by the revisions of equal briefs: read only)."""
        return slim.stepped(self.brief) if self.ok else {}

    def result(self, name: str) -> dict[str, Any] | None:
        """The instance's whole result."""
        return self._by_name.get(name)

    def summary_result(self, name: str) -> dict[str, Any] | None:
        """The instance's result in the slim record (history/slim.py: its name, error, alloc and
        instructions sections, its time's median and samples)."""
        return self._summary_by_name.get(name)

    def has(self, name: str) -> bool:
        return name in self.steps

    def column(self) -> Column:
        """The sweep table's column (sweep_table.py), of the slim record."""
        if self.status == UNREADABLE:
            return Column(self.sha, self.label, None, unreadable=self.problem)
        return Column(self.sha, self.label, self.summary)


@dataclass(frozen=True)
class History:
    machine: str
    allocator: str
    origin: str              # "store <dir>" or "results files"
    points: tuple[Point, ...]

    @property
    def title(self) -> str:
        return f"{self.machine} / {self.allocator}"

    def names(self) -> list[str]:
        """Every instance, the newest revision's order first (as the sweep table lists them)."""
        return list(self._names)

    @cached_property
    def _names(self) -> tuple[str, ...]:
        names: dict[str, None] = {}
        seen: set[str] = set()   # briefs' texts: revisions of equal ones add nothing
        for point in reversed(self.points):
            if point.ok and point.brief["results"] not in seen:
                seen.add(point.brief["results"])
                names.update(dict.fromkeys(point.steps))
        return tuple(names)

    def measured(self) -> list[Point]:
        return list(self._measured)

    @cached_property
    def _measured(self) -> tuple[Point, ...]:   # every scenario page asks
        return tuple(p for p in self.points if p.ok)

    def at(self, sha: str, name: str) -> Point | None:
        """The first revision `sha` of this history that has the instance `name` (results
        files: several may be of one sha)."""
        return next((p for p in self._by_sha.get(sha, ()) if p.has(name)), None)

    @cached_property
    def _by_sha(self) -> dict[str, list[Point]]:
        found: dict[str, list[Point]] = {}
        for point in self.points:
            found.setdefault(point.sha, []).append(point)
        return found

    def columns(self) -> list[Column]:
        return [p.column() for p in self.points]


@dataclass
class Site:
    histories: list[History] = field(default_factory=list)
    comparisons: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (origin, doc)
    problems: list[str] = field(default_factory=list)   # unreadable records, for the exit code
    sites: dict[str, list[Any]] = field(default_factory=dict)   # instance → sites.SiteCost
    bisects: list[dict[str, Any]] = field(default_factory=list)   # history/bisected.py's


def version_key(label: str) -> tuple:
    """v1.9 < v1.10 < v2.0: numbers compare as numbers, text as text."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in _CHUNK.split(label) if part)


def is_tag(sha: str, label: str) -> bool:
    return bool(label) and not sha.startswith(label)


def _when(point: Point) -> tuple[str, str]:
    record = point.brief or {}
    # Commits of one date (a rebase, a merge train) in the order they were measured.
    return (record.get("committed") or record.get("recorded") or "",
            record.get("recorded") or "")


def sweep_order(points: list[Point]) -> list[Point]:
    """Tags in version order; every other revision (a commit a sweep, a bisect probe or a push
    measured) by commit date, after the last tag (in version order) committed before it, so
    that a bisect's probes sit between the releases they lie between and neighbours are steps
    of the history; a backport tag dated after newer versions holds no commit back. A revision
    without a date (an unreadable record) comes after every tag."""
    tags = sorted((p for p in points if is_tag(p.sha, p.label)),
                  key=lambda p: version_key(p.label))
    # The earliest date of each tag and the tags after it, non-decreasing: the tags a commit
    # follows are a prefix of these, up to the last tag committed before it.
    reached = list(itertools.accumulate((_when(t)[0] for t in reversed(tags)), min))[::-1]
    slots: list[list[Point]] = [[] for _ in range(len(tags) + 1)]
    for point in sorted((p for p in points if not is_tag(p.sha, p.label)), key=_when):
        when = _when(point)[0]   # none (an unreadable record): after every tag
        slots[bisect.bisect_right(reached, when) if when else len(tags)].append(point)
    return [*slots[0], *(p for tag, after in zip(tags, slots[1:]) for p in (tag, *after))]


# ---- a sweep store


def from_store(root: Path, machines: list[str], allocators: list[str], site: Site) -> None:
    """The store's histories (of the given machines and allocators; all when none are given)."""
    store = Store(root)
    if not root.is_dir():
        raise UserError(f"--store {root}: no such folder; give the folder a sweep wrote (its "
                        "--store, default <repo>/.allocbench/results)")
    found: dict[tuple[str, str], dict[str, list[tuple[str, dict | None, str]]]] = {}
    for path, record, error in store.scan("brief"):
        machine, allocator, sha = Store.place(path)
        if (machines and machine not in machines) or (allocators and allocator not in allocators):
            continue
        found.setdefault((machine, allocator), {}).setdefault(sha, []).append(
            (path, record, error))
        if error:
            site.problems.append(error)
    if not found:
        wanted = "".join(f" --machine {m}" for m in machines) + \
            "".join(f" --allocator {a}" for a in allocators)
        raise UserError(f"--store {root}: no records{' for' + wanted if wanted else ''}; run "
                        "allocbench sweep --store with it first, or give the store a sweep wrote")
    kept, problems = bisected.read(root)
    site.bisects += kept
    site.problems += problems
    for (machine, allocator), shas in sorted(found.items(), key=_system_first):
        points = [_point(store, sha, entries) for sha, entries in shas.items()]
        site.histories.append(History(machine, allocator, f"store {root}",
                                      tuple(sweep_order(points))))


def _system_first(item: tuple[tuple[str, str], Any]) -> tuple:
    machine, allocator = item[0]
    return machine, allocator != "system", allocator


def _point(store: Store, sha: str, entries: list[tuple[str, dict[str, Any] | None, str]]
           ) -> Point:
    readable = [(path, record) for path, record, _ in entries if record is not None]
    if not readable:
        path, _, error = entries[0]
        return Point(sha, sha[:10], "", UNREADABLE, error, None, path)
    path, record = max(readable, key=lambda pr: preference(pr[1]))
    why = "" if record["status"] == "ok" else problem(record)
    return Point(sha, record["label"], record["subject"], record["status"], why, record,
                 path, functools.partial(_form, store, path), version=store.version(path))


def _form(store: Store, path: str, form: str) -> dict[str, Any]:
    record = store.summary(path, form)
    if record is None:
        raise UserError(f"{path}: was removed while the report was built; build it again")
    return record


# ---- results files


def _results_point(path: Path, doc: dict[str, Any]) -> tuple[tuple[str, str], Point]:
    context = doc["context"]
    revision = context.get("revision") or {}
    sha = revision.get("sha") or ""
    label = revision.get("describe") or sha[:10] or path.stem
    machine = str((context.get("host") or {}).get("name") or "unknown host")
    allocator = str((context.get("allocator") or {}).get("name") or "unknown allocator")
    record = {"status": "ok", "results": doc, "time_measured": context.get("time") is not None,
              "machine": machine, "recipe": "", "recorded": str(context.get("date") or "")}
    return (machine, allocator), Point(sha, label, "", "ok", "", slim.brief(record), str(path),
                                       given=record)


def from_results(paths: list[Path], site: Site) -> None:
    """Results files, as histories per machine and allocator ordered by measurement date."""
    _add_results([(path, results.load(path)) for path in paths], site)


def _add_results(loaded: list[tuple[Path, dict[str, Any]]], site: Site) -> None:
    grouped: dict[tuple[str, str], list[Point]] = {}
    for path, doc in loaded:
        key, point = _results_point(path, doc)
        grouped.setdefault(key, []).append(point)
    for (machine, allocator), points in sorted(grouped.items()):
        points.sort(key=lambda p: (p.brief["recorded"], p.source))
        site.histories.append(History(machine, allocator, "results files", tuple(points)))


# ---- comparisons


def from_ab(folder: Path, config_path: Path | None) -> dict[str, Any]:
    """An `ab` folder (base/ and cand/ of fork files) compared as ab compared it: by the policy
    it recorded (its base revision's), or by `config_path`."""
    base, cand = folder / "base", folder / "cand"
    from allocbench.gate import compare as cmp, compare_json, policy   # scipy: only here
    rules = policy.recorded(base, cand)
    rules = policy.overridden(rules, config_path, None) if rules else \
        policy.from_files(config_path, None)
    comparison = policy.compare(rules, cmp.load_side(base), cmp.load_side(cand))
    return json.loads(compare_json.to_json(comparison, "any"))


def read(inputs: list[Path], store: Path | None, machines: list[str], allocators: list[str],
         config_path: Path | None = None) -> Site:
    """The site's model from every input; UserError (exit 2) when there is nothing to show."""
    site = Site()
    result_files: list[Path] = []
    loaded: list[tuple[Path, dict[str, Any]]] = []   # files read once, to tell what they are
    for path in inputs:
        if path.is_dir() and (path / "base").is_dir() and (path / "cand").is_dir():
            site.comparisons.append((str(path), from_ab(path, config_path)))
        elif path.is_dir() and any(path.glob("*.sites.json")):   # allocbench profile's --out
            site.sites.update(profile.load_tables(path))
        elif path.is_dir():
            files = sorted(path.glob("*.json"))
            if not files:
                raise UserError(f"{path}: no results files (*.json) here; give results files, "
                                "an ab folder (with base/ and cand/), a compare JSON or --store")
            result_files += files
        elif not path.exists():
            raise UserError(f"{path}: no such file or folder; give results files, an ab folder, "
                            "a compare JSON or --store DIR")
        else:
            doc = read_json(path, "", results.FIX)
            if isinstance(doc, dict) and "instances" in doc and "gate" in doc:
                from allocbench.gate import compare_json
                compare_json.from_json(doc, str(path))   # checked whole: no half-rendered page
                site.comparisons.append((str(path), doc))
            else:
                loaded.append((path, results.check(doc, str(path))))
    if result_files or loaded:
        _add_results([*((p, results.load(p)) for p in result_files), *loaded], site)
    if store is not None:
        from_store(store, machines, allocators, site)
    if not site.histories and not site.comparisons and not site.sites:
        raise UserError("nothing to report: give results files (e.g. results/*.json), an ab "
                        "folder, a compare JSON, a folder of profiles, or --store DIR")
    return site
