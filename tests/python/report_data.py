"""Data for the report tests, made here with known values: results documents, a sweep store of
several revisions and allocators, compare JSON and ab folders, hostile names included.

Documents take their shape (field list, context, result sections) from the compare fixture
tests/python/data/compare/base.json, which test_fixtures.py keeps equal to a fresh run's; only
names and values are set here, so every number a page shows is known to the test.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
TEMPLATE = json.loads((DATA / "compare" / "base.json").read_text())

HOSTILE = ['<script>window.__pwned=1</script>', '</td></tr></table><b>x', 'q"uo\'te',
           'back`tick', 'pi|pe', 'new\nline', '<img src=x onerror="window.__pwned=2">']


@dataclass(frozen=True)
class Instance:
    name: str
    bytes: int                     # B/op (exact)
    allocs: int                    # allocs/op (exact)
    samples: tuple[float, ...] = (100.0, 101.0, 99.0, 100.5, 100.2)   # ns/op
    args: dict[str, int] = field(default_factory=dict)
    scenario: str = ""
    error: str = ""
    counters: dict[str, float] = field(default_factory=dict)   # byte counters
    usable: int | None = None      # usable_bytes_per_op (allocator-dependent), default: bytes
    peak: int = 4096


def result(inst: Instance, allocator: str = "glibc", timed: bool = True) -> dict[str, Any]:
    base = copy.deepcopy(TEMPLATE["results"][0])
    base.update(name=inst.name, scenario=inst.scenario or inst.name, args=dict(inst.args),
                allocator=allocator)
    alloc = base["alloc"]
    usable = inst.bytes if inst.usable is None else inst.usable
    alloc.update(bytes_per_op=inst.bytes, allocs_per_op=inst.allocs, frees_per_op=inst.allocs,
                 usable_bytes_per_op=usable, first_op_bytes=inst.bytes,
                 first_op_allocs=inst.allocs, peak_live_bytes=inst.peak)
    alloc["windows"] = [{"allocs": inst.allocs * 1000, "frees": inst.allocs * 1000,
                         "requested_bytes": inst.bytes * 1000, "usable_bytes": usable * 1000}] * 2
    samples = sorted(inst.samples)
    median = samples[len(samples) // 2] if len(samples) % 2 else \
        (samples[len(samples) // 2 - 1] + samples[len(samples) // 2]) / 2
    mean = sum(samples) / len(samples)
    base["time"].update(samples_ns_per_op=list(inst.samples), ns_per_op=median,
                        mean_ns_per_op=mean, min_ns_per_op=samples[0], max_ns_per_op=samples[-1],
                        repetitions=len(samples), iterations=[1000] * len(samples),
                        ops_per_s=1e9 / median)
    if not timed:
        base["time"] = None
    base["counters"] = {k: {"value": v, "unit": "B"} for k, v in inst.counters.items()}
    if inst.error:
        base["error"] = inst.error
        base["alloc"] = base["time"] = None
    return base


def document(instances: list[Instance], *, label: str = "v1.0", sha: str = "a" * 40,
             allocator: str = "glibc", host: str = "ci-runner",
             date: str = "2026-11-30T01:00:00Z", timed: bool = True) -> dict[str, Any]:
    doc = copy.deepcopy(TEMPLATE)
    doc["results"] = [result(i, allocator, timed) for i in instances]
    doc["context"].update(date=date, revision={"describe": label, "sha": sha, "dirty": False})
    doc["context"]["allocator"] = {"name": allocator, "version": "1"}
    doc["context"]["host"]["name"] = host
    if not timed:
        doc["context"]["time"] = None
    return doc


@dataclass(frozen=True)
class Revision:
    sha: str
    label: str
    subject: str
    instances: tuple[Instance, ...]
    status: str = "ok"             # or build_failed, run_failed, timeout
    committed: str = "2026-01-01T00:00:00+00:00"
    error: str = ""                # the log's informative line when not ok


def sha(n: int) -> str:
    return f"{n:040x}"


def record(rev: Revision, machine: str, allocator: str, timed: bool = True) -> dict[str, Any]:
    doc = document(list(rev.instances), label=rev.label, sha=rev.sha,
                   allocator="glibc" if allocator == "system" else allocator, host=machine,
                   timed=timed) if rev.status == "ok" else None
    out = {"store_version": 1, "sha": rev.sha, "label": rev.label, "subject": rev.subject,
           "committed": rev.committed, "machine": machine, "allocator": allocator,
           "recipe": "0123456789abcdef", "recipe_detail": {}, "harness": "allocbench-run",
           "status": rev.status, "time_measured": timed and rev.status == "ok",
           "seconds": {}, "results": doc, "recorded": "2026-11-30T01:00:00+00:00"}
    if rev.status != "ok":
        out.update(log="/tmp/build.log", log_tail=f"step 1\n{rev.error or 'error: it broke'}",
                   step="build")
    return out


def write_store(root: Path, revisions: list[Revision], machine: str = "ci-runner",
                allocators: tuple[str, ...] = ("system",), timed: bool = True) -> Path:
    for allocator in allocators:
        for rev in revisions:
            path = root / machine / allocator / rev.sha / "0123456789abcdef.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(record(rev, machine, allocator, timed), indent=1))
    return root


def write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1))
    return path


# ---- a small realistic history: span B/op grows at v1.1, a failed build, a scaling family


def span(bytes_: int, allocs: int, samples: tuple[float, ...] = (50.0, 51.0, 49.5, 50.2, 50.9)
         ) -> Instance:
    return Instance("tracer/start_span", bytes_, allocs, samples)


def fanout(children: int, per_child: int = 96, root: int = 160) -> Instance:
    return Instance(f"tracer/fanout/children:{children}", root + per_child * children,
                    1 + children, args={"children": children}, scenario="tracer/fanout",
                    counters={"arena_bytes": 65536.0 * children})


def history(hostile: bool = False) -> list[Revision]:
    """v1.0, v1.1 (span +32 B, +1 alloc), a commit that failed to build, v1.10 (the newest, in
    version order after v1.2), v1.2; with `hostile`, an instance and labels named HOSTILE."""
    family = [fanout(1), fanout(5), fanout(20)]
    extra = tuple(Instance(name, 8 * (i + 1), 1) for i, name in enumerate(HOSTILE)) \
        if hostile else ()
    tag = (lambda s: s + HOSTILE[0]) if hostile else (lambda s: s)
    return [
        Revision(sha(1), "v1.0", "first release", (span(64, 1), *family, *extra),
                 committed="2026-01-01T00:00:00+00:00"),
        Revision(sha(2), "v1.1", "grow the span" + (HOSTILE[1] if hostile else ""),
                 (span(96, 2), *family, *extra), committed="2026-02-01T00:00:00+00:00"),
        Revision(sha(4), tag("v1.10"), "newest", (span(80, 2), *family, *extra),
                 committed="2026-05-01T00:00:00+00:00"),
        Revision(sha(3), "v1.2", "shrink the span", (span(80, 2), *family, *extra),
                 committed="2026-03-01T00:00:00+00:00"),
        Revision(sha(5), sha(5)[:10], "break the build", (), status="build_failed",
                 committed="2026-06-01T00:00:00+00:00",
                 error="span.cc:3: error: expected ';'" + (HOSTILE[0] if hostile else "")),
    ]


def ab_folder(root: Path, base: list[Instance], cand: list[Instance], forks: int = 3) -> Path:
    """base/fork-<i>.json and cand/fork-<i>.json as `allocbench ab` writes them; fork i's
    samples are the instance's shifted by i/10 (a small fork-to-fork offset)."""
    for side, instances in (("base", base), ("cand", cand)):
        for i in range(forks):
            shifted = [Instance(**{**inst.__dict__, "samples": tuple(s + i / 10 for s in
                                                                      inst.samples)})
                       for inst in instances]
            write(root / side / f"fork-{i}.json",
                  document(shifted, label=side, sha=sha(1 if side == "base" else 2)))
    return root
