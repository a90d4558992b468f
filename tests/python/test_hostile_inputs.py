"""Damaged and hostile inputs: each is refused with one line that names the file, the field and
the fix, and exit code 2 — never a traceback, never a verdict (DESIGN.md: a value the gate
cannot judge is an error, never "same").

Every hostile file is a real document with one thing damaged: the compare fixtures, a store
record around tests/python/data/results_small.json, the calibration that compare reads, and
allocbench.toml. The CLI runs as a user runs it, in its own process. CASES and STORE_CASES
list the kinds of damage tried and how many of each (the README quotes the counts).
"""

from __future__ import annotations

import copy
import json
import math
import os
import random
import stat
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest

from allocbench.base import fileio
from allocbench.base.errors import UserError
from allocbench.gate import compare
from conftest import ROOT
from docs_pages import page

DATA = Path(__file__).parent / "data"
BASE = DATA / "compare" / "base.json"
FIELDS = [f["key"] for f in json.loads(BASE.read_text())["fields"]]   # the runner's, in order
CAND = json.loads((DATA / "compare" / "cand.json").read_text())
SIZED = "results[1] ('ground_truth/sized/bytes:24')"   # +96 B/op in the candidate
Damage = Callable[[dict[str, Any]], "dict[str, Any] | bytes"]


def allocbench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ALLOCBENCH_DEBUG"}
    env["PYTHONPATH"] = str(ROOT / "scripts")
    return subprocess.run(["/usr/bin/python3", "-m", "allocbench", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def refused(done: subprocess.CompletedProcess, *names: str) -> str:
    """The one error line, after checking exit code 2 and that it names each of `names`."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("allocbench: error: "), done.stderr
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


def sized(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["results"][1]


def replaced(old: str, new: str, edit: Callable[[dict[str, Any]], Any] = lambda doc: None
             ) -> Damage:
    """Damage done to the JSON text: its first `old` becomes `new` (after `edit`)."""
    def damage(doc: dict[str, Any]) -> bytes:
        edit(doc)
        assert old in json.dumps(doc)
        return json.dumps(doc).replace(old, new, 1).encode()
    return damage


def text(raw: str) -> Damage:
    """The first `"bytes_per_op": 120` (of the sized instance) becomes `raw`."""
    return replaced('"bytes_per_op": 120', raw)


def changed(edit: Callable[[dict[str, Any]], Any]) -> Damage:
    def damage(doc: dict[str, Any]) -> dict[str, Any]:
        edit(doc)
        return doc
    return damage


def drop_field(doc: dict[str, Any], key: str) -> None:
    doc["fields"] = [f for f in doc["fields"] if f["key"] != key]


def twin(doc: dict[str, Any], **changes: Any) -> None:
    """Appends a copy of the sized instance with `changes`: one instance, two values."""
    doc["results"].append({**copy.deepcopy(sized(doc)), **changes})


def garbage(size: int, seed: int, nul: bool) -> bytes:
    data = random.Random(seed).randbytes(size)
    return data if nul else data.replace(b"\0", b"\1")


def plus_1000_bytes(doc: dict[str, Any]) -> None:
    """strings/interpolated_name: 31 B/op in the base, 1031 now."""
    doc["results"][2]["alloc"]["bytes_per_op"] = 1031


def nested(depth: int) -> Damage:
    def damage(doc: dict[str, Any]) -> dict[str, Any]:
        value: Any = 1
        for _ in range(depth):
            value = [value]
        doc["context"]["extra"] = value
        return doc
    return damage


# (kind, id, damage of the candidate, what the line must name besides the file)
CASES: list[tuple[str, str, Damage, tuple[str, ...]]] = [
    ("NaN or Infinity", "NaN", text('"bytes_per_op": NaN'),
     ("results[1].alloc.bytes_per_op", "NaN")),
    ("NaN or Infinity", "Infinity", text('"bytes_per_op": Infinity'),
     ("results[1].alloc.bytes_per_op", "Infinity")),
    ("NaN or Infinity", "-Infinity in a sample", replaced(
        '"samples_ns_per_op": [13.802', '"samples_ns_per_op": [-Infinity'),
     ("results[1].time.samples_ns_per_op[0]", "-Infinity")),
    ("NaN or Infinity", "NaN in an info field", replaced(
        '"first_op_bytes": 120', '"first_op_bytes": NaN'), ("results[1].alloc.first_op_bytes",)),
    ("number out of range", "1e999", text('"bytes_per_op": 1e999'),
     ("results[1].alloc.bytes_per_op", "1e999")),
    ("number out of range", "-1e400", text('"bytes_per_op": -1e400'),
     ("results[1].alloc.bytes_per_op",)),
    ("number out of range", "400-digit integer", text('"bytes_per_op": ' + "9" * 400),
     ("results[1].alloc.bytes_per_op", "400 digits")),
    ("number out of range", "2^63", text(f'"bytes_per_op": {2 ** 63}'),
     ("results[1].alloc.bytes_per_op", "64-bit")),
    ("number out of range", "5000-digit integer", text('"bytes_per_op": ' + "1" * 5000),
     ("results[1].alloc.bytes_per_op", "5000 digits")),
    ("null metric", "bytes_per_op null", changed(lambda d: sized(d)["alloc"].update(
        bytes_per_op=None)), (f"{SIZED}.alloc.bytes_per_op", "null")),
    ("null metric", "ns_per_op null", changed(lambda d: sized(d)["time"].update(
        ns_per_op=None)), (f"{SIZED}.time.ns_per_op", "null")),
    ("missing metric", "bytes_per_op missing", changed(lambda d: sized(d)["alloc"].pop(
        "bytes_per_op")), (f"{SIZED}.alloc.bytes_per_op", "missing")),
    ("missing metric", "allocs_per_op missing", changed(lambda d: sized(d)["alloc"].pop(
        "allocs_per_op")), (f"{SIZED}.alloc.allocs_per_op", "missing")),
    ("missing metric", "ns_per_op missing", changed(lambda d: sized(d)["time"].pop(
        "ns_per_op")), (f"{SIZED}.time.ns_per_op", "missing")),
    ("bool metric", "bytes_per_op true", changed(lambda d: sized(d)["alloc"].update(
        bytes_per_op=True)), (f"{SIZED}.alloc.bytes_per_op", "true")),
    ("string metric", "bytes_per_op \"120\"", changed(lambda d: sized(d)["alloc"].update(
        bytes_per_op="120")), (f"{SIZED}.alloc.bytes_per_op", "a string")),
    ("string metric", "a sample \"x\"", changed(lambda d: sized(d)["time"].update(
        samples_ns_per_op=["x"])), (f"{SIZED}.time.samples_ns_per_op[0]",)),
    ("section of the wrong type", "alloc is a list", changed(lambda d: sized(d).update(
        alloc=[1])), (f"{SIZED}.alloc", "a list")),
    ("section of the wrong type", "alloc is a string", changed(lambda d: sized(d).update(
        alloc="none")), (f"{SIZED}.alloc", "a string")),
    ("section of the wrong type", "alloc null on a measured instance", changed(
        lambda d: sized(d).update(alloc=None)), (f"{SIZED}.alloc", "null")),
    ("section of the wrong type", "time is a number", changed(lambda d: sized(d).update(
        time=5)), (f"{SIZED}.time", "5")),
    ("field list damaged", "no bytes_per_op", changed(lambda d: drop_field(d, "bytes_per_op")),
     ("fields", "bytes_per_op")),
    ("field list damaged", "bytes_per_op gate info", changed(
        lambda d: d["fields"][0].update(gate="info")), ("fields", "bytes_per_op")),
    ("field list damaged", "unknown gate", changed(lambda d: d["fields"][1].update(
        gate="exactish")), ("fields[1].gate", "exactish")),
    ("field list damaged", "unknown section", changed(lambda d: d["fields"][1].update(
        section="heap")), ("fields[1].section", "heap")),
    ("field list damaged", "a field twice", changed(lambda d: d["fields"].append(
        d["fields"][1])), (f"fields[{len(FIELDS)}]", "alloc.allocs_per_op")),
    ("field list damaged", "a field without a key", changed(lambda d: d["fields"][2].pop(
        "key")), ("fields[2].key", "missing")),
    ("gated fields differ between the sides", "ns_per_op not gated in the candidate", changed(
        lambda d: d["fields"][FIELDS.index("ns_per_op")].update(gate="info")),
     (str(BASE), "time.ns_per_op")),
    ("gated fields differ between the sides", "a gated field only the candidate has", changed(
        lambda d: d["fields"][4].update(gate="exact")), (str(BASE), "alloc.first_op_bytes")),
    ("duplicated instance", "name twice with two values", changed(lambda d: twin(
        d, alloc={**sized(d)["alloc"], "bytes_per_op": 24})),
     ("results[7].name", "results[1].name")),
    ("duplicated instance", "pairing key twice under two names", changed(lambda d: twin(
        d, name="ground_truth/sized/again")), ("results[7]", "results[1]", "pairs with")),
    ("duplicated instance", "a key twice in one object", text(
        '"bytes_per_op": 24, "bytes_per_op": 120'), ("results[1].alloc", "bytes_per_op")),
    ("instance damaged", "threads 0", changed(lambda d: sized(d).update(threads=0)),
     (f"{SIZED}.threads",)),
    ("instance damaged", "argument a string", changed(lambda d: sized(d).update(
        args={"bytes": "24"})), (f"{SIZED}.args.bytes",)),
    ("instance damaged", "empty name", changed(lambda d: sized(d).update(name="")),
     ("results[1].name",)),
    ("instance damaged", "counter not a number", changed(lambda d: sized(d).update(
        counters={"spans": {"value": "many", "unit": ""}})), (f"{SIZED}.counters.spans.value",)),
    ("instance damaged", "unpaired surrogate in a name", replaced(
        '"name": "ground_truth/sized/bytes:24"', '"name": "\\ud800"'),
     ("results[1].name", "surrogate")),
    ("context damaged", "no context.count", changed(lambda d: d["context"].pop("count")),
     ("context.count", "missing")),
    ("context damaged", "no context.time", changed(lambda d: d["context"].pop("time")),
     ("context.time", "missing")),
    ("context damaged", "context.count a list", changed(lambda d: d["context"].update(
        count=[])), ("context.count", "a list")),
    ("context damaged", "revision.sha a number", changed(
        lambda d: d["context"]["revision"].update(sha=7)), ("context.revision.sha",)),
    ("context damaged", "schema_version true", changed(lambda d: d.update(
        schema_version=True)), ("schema version true",)),
    ("binary garbage", "random bytes", lambda doc: garbage(4096, 1, nul=False),
     ("not UTF-8",)),
    ("binary garbage", "random bytes with NULs", lambda doc: garbage(4096, 2, nul=True),
     ("UTF-16 (or binary)",)),
    ("binary garbage", "an ELF header", lambda doc: b"\x7fELF\x02\x01\x01" + bytes(57),
     ("UTF-16 (or binary)",)),
    ("not UTF-8", "UTF-16 with a BOM", lambda doc: json.dumps(doc).encode("utf-16"),
     ("UTF-16 (or binary)",)),
    ("not UTF-8", "UTF-16-LE without a BOM", lambda doc: json.dumps(doc).encode("utf-16-le"),
     ("UTF-16 (or binary)",)),
    ("not UTF-8", "UTF-32", lambda doc: json.dumps(doc).encode("utf-32"),
     ("UTF-16 (or binary)",)),
    ("not UTF-8", "Latin-1", lambda doc: json.dumps(doc, ensure_ascii=False).replace(
        "glibc", "glibcé").encode("latin-1"), ("not UTF-8", "0xe9")),
    ("nested too deep", "arrays 100000 deep", lambda doc: b"[" * 100000 + b"]" * 100000,
     ("nests deeper",)),
    ("nested too deep", "objects 100000 deep",
     lambda doc: b'{"a":' * 100000 + b"1" + b"}" * 100000, ("nests deeper",)),
    ("nested too deep", "a context value 100 deep", nested(100),
     ("context.extra", "nests deeper")),
    ("empty file", "0 bytes", lambda doc: b"", ("is empty",)),
    ("empty file", "only white space", lambda doc: b" \n\t\n", ("is empty",)),
    ("truncated file", "cut in half", lambda doc: json.dumps(doc).encode()[:5000],
     ("not valid JSON", "line 1, column")),
    ("truncated file", "last brace missing", lambda doc: json.dumps(doc).encode()[:-1],
     ("not valid JSON",)),
    ("not a results document", "a JSON list", lambda doc: b"[1, 2]", ("schema_version",)),
    ("not a results document", "results an object", changed(lambda d: d.update(results={})),
     ("'results'", "not a list")),
    ("interrupted run", "complete: false", changed(lambda d: d.update(complete=False)),
     ("complete: false",)),
    ("passes differ between the sides", "candidate --no-time", changed(
        lambda d: [d["context"].update(time=None)] + [r.update(time=None)
                                                      for r in d["results"]]),
     ("--no-time", str(BASE))),
    ("passes differ between the sides", "candidate --no-count", changed(
        lambda d: [d["context"].update(count=None)] + [r.update(alloc=None)
                                                       for r in d["results"]]),
     ("--no-count", str(BASE))),
    ("passes differ between the sides", "a section the pass did not fill", changed(
        lambda d: d["context"].update(time=None)), ("results[0] ('ground_truth/mixed').time",
                                                    "context.time is null")),
    ("regression and a damaged field", "+1000 B/op and a NaN", replaced(
        '"bytes_per_op": 120', '"bytes_per_op": NaN', plus_1000_bytes),
     ("results[1].alloc.bytes_per_op", "NaN")),
    ("regression and a damaged field", "+1000 B/op and a null", changed(
        lambda d: [plus_1000_bytes(d), sized(d)["alloc"].update(allocs_per_op=None)]),
     (f"{SIZED}.alloc.allocs_per_op", "null")),
    ("regression and a damaged field", "+1000 B/op hidden by samples", changed(
        lambda d: [plus_1000_bytes(d), d["results"][2]["alloc"].update(
            samples_bytes_per_op=[31, 1031])]),
     ("alloc.samples_bytes_per_op", "an exact metric")),
]


@pytest.mark.parametrize("damage, names", [(d, n) for _, _, d, n in CASES],
                         ids=[f"{k}: {i}" for k, i, _, _ in CASES])
def test_compare_refuses_a_damaged_candidate(tmp_path, damage, names):
    damaged = damage(copy.deepcopy(CAND))
    cand = tmp_path / "cand.json"
    cand.write_bytes(damaged if isinstance(damaged, bytes) else json.dumps(damaged).encode())
    line = refused(allocbench("compare", str(BASE), str(cand), cwd=tmp_path), str(cand),
                   *names)
    fixes = ("re-run the measurement", "measure again", "measure both sides",
             "not an allocbench results file")
    assert any(fix in line for fix in fixes), line


def test_the_undamaged_candidate_still_regresses(tmp_path):
    """The control: the same candidate, undamaged, is compared (exit 1: +96 B/op)."""
    done = allocbench("compare", str(BASE), str(DATA / "compare" / "cand.json"), cwd=tmp_path)
    assert done.returncode == 1 and done.stderr == ""


@pytest.mark.parametrize("base, cand", [([24], [math.nan]), ([math.inf], [24]), ([24], [])])
def test_exact_change_never_judges_what_loading_should_have_refused(base, cand):
    with pytest.raises(ValueError, match="needs finite values on both sides"):
        compare.exact_change("bytes_per_op", "B", base, cand, 0.0, "0")


def test_a_damaged_fork_is_named_among_the_forks(tmp_path):
    forks = tmp_path / "cand"
    forks.mkdir()
    (forks / "1.json").write_text(json.dumps(CAND))
    (forks / "2.json").write_text(json.dumps(CAND).replace('"bytes_per_op": 120',
                                                           '"bytes_per_op": NaN', 1))
    refused(allocbench("compare", str(BASE), str(forks), cwd=tmp_path), str(forks / "2.json"),
            "results[1].alloc.bytes_per_op")


def test_forks_of_one_side_measured_with_different_passes(tmp_path):
    forks = tmp_path / "cand"
    forks.mkdir()
    (forks / "1.json").write_text(json.dumps(CAND))
    no_time = copy.deepcopy(CAND)
    no_time["context"]["time"] = None
    for r in no_time["results"]:
        r["time"] = None
    (forks / "2.json").write_text(json.dumps(no_time))
    refused(allocbench("compare", str(BASE), str(forks), cwd=tmp_path), str(forks / "2.json"),
            str(forks / "1.json"), "--no-time")


@pytest.mark.parametrize("threshold", ["nan", "inf", "-inf", "0", "-5", "0%", "five"])
def test_threshold_must_be_a_positive_finite_percentage(tmp_path, threshold):
    done = allocbench("compare", str(BASE), str(DATA / "compare" / "cand.json"),
                      f"--threshold={threshold}", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (f"allocbench: error: argument --threshold: '{threshold}' is not a "
                           "positive, finite percentage, e.g. 5 (see 'allocbench compare "
                           "--help')\n")


CALIBRATION_ENTRY = {"scenario": "ground_truth/sized", "args": {"bytes": 24}, "threads": 1,
                     "allocator": "glibc", "name": "ground_truth/sized/bytes:24",
                     "metric": "ns_per_op", "noisy": True, "mde_percent": 14.25,
                     "false_positive_rate": 0.1, "forks": 2, "repetitions": 5}


def calibration(**changes: Any) -> bytes:
    entry = {k: v for k, v in {**CALIBRATION_ENTRY, **changes}.items() if v is not ...}
    return json.dumps({"allocbench_calibration": 1, "scenarios": [entry]}).encode()


@pytest.mark.parametrize("content, names", [
    (calibration(mde_percent=float("nan")), ("scenarios[0].mde_percent", "NaN")),
    (calibration(mde_percent="14%"), ("scenarios[0].mde_percent", "a string")),
    (calibration(forks=...), ("scenarios[0].forks", "missing")),
    (calibration(threads=True), ("scenarios[0].threads", "true")),
    (calibration(args=[24]), ("scenarios[0].args", "a list")),
    (b"[]", ("not a calibration file",)),
    (garbage(512, 3, nul=True), ("UTF-16 (or binary)",)),
    (calibration()[:-3], ("not valid JSON",)),
], ids=["NaN", "string", "missing", "bool", "list", "not a calibration", "binary", "truncated"])
def test_a_damaged_calibration_is_refused(tmp_path, content, names):
    path = tmp_path / "calibration.json"
    path.write_bytes(content)
    line = refused(allocbench("compare", str(BASE), str(DATA / "compare" / "cand.json"),
                              "--calibration", str(path), cwd=tmp_path), str(path), *names)
    assert "allocbench calibrate" in line


def test_a_valid_calibration_is_read(tmp_path):
    path = tmp_path / "calibration.json"
    path.write_bytes(calibration())
    done = allocbench("compare", str(BASE), str(DATA / "compare" / "cand.json"),
                      "--calibration", str(path), cwd=tmp_path)
    assert done.returncode == 1 and "A/A calibration" in done.stdout


@pytest.mark.parametrize("content, names", [
    (b"\x00\x01\x02binary", ("UTF-16 (or binary)",)),
    ("[time]\nthreshold = 5\n".encode("utf-16"), ("UTF-16 (or binary)",)),
    (b"[time]\nthreshold = 0\n", ("'time.threshold' is 0", "above 0")),
    (b"[time]\nthreshold = nan\n", ("'time.threshold' is nan",)),
    (b"[time]\nthreshold = inf\n", ("'time.threshold' is inf",)),
    (b"[time]\nmax_cv = 0\n", ("'time.max_cv' is 0",)),
    (b"[[budget]]\nmatch = \"*\"\ntime_threshold = 0\n", ("'budget[1].time_threshold' is 0",)),
    (b"[[budget]]\nmatch = \"*\"\nbytes_per_op = inf\n", ("'budget[1].bytes_per_op'", "inf")),
    (b"[[budget]]\nmatch = \"*\"\nbytes_per_op = nan\n", ("'budget[1].bytes_per_op'", "nan")),
    (b"[[budget]]\nmatch = \"*\"\nbytes_per_op = \"" + b"9" * 400 + b"%\"\n",
     ("'budget[1].bytes_per_op'",)),
    (b"[time]\nx = " + b"[" * 100000 + b"]" * 100000 + b"\n", ("nests too deep",)),
], ids=["binary", "UTF-16", "threshold 0", "threshold nan", "threshold inf", "max_cv 0",
        "time_threshold 0", "budget inf", "budget nan", "budget 1e400 percent", "deep"])
def test_a_damaged_allocbench_toml_is_refused(tmp_path, content, names):
    path = tmp_path / "allocbench.toml"
    path.write_bytes(content)
    refused(allocbench("compare", str(BASE), str(DATA / "compare" / "cand.json"), cwd=tmp_path),
            "allocbench.toml", *names)


SHA = "ab" * 20


def record(**changes: Any) -> dict[str, Any]:
    """A store record as `allocbench sweep` writes it, around a real results document."""
    results = json.loads((DATA / "results_small.json").read_text())
    found = {"store_version": 1, "sha": SHA, "label": "v1.0", "subject": "a commit",
             "machine": "m1", "allocator": "system", "recipe": "0" * 16, "recipe_detail": {},
             "harness": "allocbench-run", "status": "ok", "time_measured": True,
             "seconds": {"build": 1.0, "run": 2.0}, "results": results,
             "recorded": "2026-01-01T00:00:00+00:00"}
    return {**found, **changes}


def with_results(edit: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    found = record()
    edit(found["results"])
    return found


STORE_CASES = [
    ("NaN", lambda: json.dumps(record()).replace('"bytes_per_op": 206', '"bytes_per_op": NaN',
                                                 1).encode(),
     ("results.results[0].alloc.bytes_per_op", "NaN")),
    ("1e999", lambda: json.dumps(record()).replace('"bytes_per_op": 206',
                                                   '"bytes_per_op": 1e999', 1).encode(),
     ("results.results[0].alloc.bytes_per_op",)),
    ("null metric", lambda: with_results(lambda r: r["results"][0]["alloc"].update(
        bytes_per_op=None)), ("results.results[0] ('ground_truth/mixed').alloc.bytes_per_op",)),
    ("duplicated instance", lambda: with_results(lambda r: r["results"].append(
        r["results"][0])), ("results.results[4].name",)),
    ("no context.count", lambda: with_results(lambda r: r["context"].pop("count")),
     ("results.context.count",)),
    ("no bytes_per_op field", lambda: with_results(lambda r: r.update(fields=r["fields"][1:])),
     ("results.fields", "bytes_per_op")),
    ("results null on an ok record", lambda: record(results=None), ("results",)),
    ("unknown status", lambda: record(status="fine"), ("'status'", "fine")),
    ("filed under another sha", lambda: record(sha="cd" * 20), ("'sha'", "cd" * 20)),
    ("a recipe that is a path", lambda: record(recipe="../../../etc/x"),
     ("'recipe'", "not 16 hexadecimal digits")),
    ("time_measured contradicts the results", lambda: record(time_measured=False),
     ("time_measured",)),
    ("failure without its log", lambda: record(status="build_failed", results=None),
     ("log", "missing")),
    ("binary", lambda: garbage(2048, 4, nul=True), ("UTF-16 (or binary)",)),
    ("UTF-16", lambda: json.dumps(record()).encode("utf-16"), ("UTF-16 (or binary)",)),
    ("empty", lambda: b"", ("is empty",)),
    ("truncated", lambda: json.dumps(record()).encode()[:3000], ("not valid JSON",)),
    ("nested 100000 deep", lambda: b"[" * 100000 + b"]" * 100000, ("nests deeper",)),
]


def write_record(store: Path, content: dict[str, Any] | bytes, sha: str = SHA) -> Path:
    path = store / "m1" / "system" / f"{sha}.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return path


@pytest.mark.parametrize("make, names", [(m, n) for _, m, n in STORE_CASES],
                         ids=[i for i, _, _ in STORE_CASES])
def test_merge_refuses_a_damaged_store_record(tmp_path, make, names):
    path = write_record(tmp_path / "shard", make())
    line = refused(allocbench("merge", str(tmp_path / "shard"), "--into",
                              str(tmp_path / "into"), cwd=tmp_path), str(path), *names)
    assert line.endswith("delete the file; the next sweep measures that revision again")
    assert not (tmp_path / "into" / "m1").exists()


def make_repo(path: Path, commits: int) -> list[str]:
    """A git repository of `commits` empty commits at `path`; their shas, oldest first."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(path), "-c", "user.name=t", "-c",
                               "user.email=t@t", *args], check=True, capture_output=True,
                              text=True).stdout.strip()
    path.mkdir(exist_ok=True)
    git("init", "-q")
    for i in range(commits):
        git("commit", "-q", "--allow-empty", "-m", f"commit {i}")
    return git("rev-list", "--reverse", "HEAD").split()


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> tuple[Path, str]:
    """A repository of one commit, and its sha: sweep-table reads the record of that sha."""
    path = tmp_path_factory.mktemp("repo")
    return path, make_repo(path, 1)[0]


@pytest.mark.parametrize("make, names", [(m, n) for i, m, n in STORE_CASES
                                         if i != "filed under another sha"],
                         ids=[i for i, _, _ in STORE_CASES if i != "filed under another sha"])
def test_sweep_table_refuses_a_damaged_store_record(tmp_path, repo, make, names):
    path, sha = repo
    content = make()
    if isinstance(content, dict):
        content["sha"] = sha
    found = write_record(tmp_path / "store", content, sha)
    refused(allocbench("sweep-table", "--repo", str(path), "--store", str(tmp_path / "store"),
                       "--machine", "m1", sha, cwd=tmp_path), str(found), *names)


def test_a_valid_store_record_is_merged_and_tabled(tmp_path, repo):
    path, sha = repo
    write_record(tmp_path / "shard", record())
    done = allocbench("merge", str(tmp_path / "shard"), "--into", str(tmp_path / "into"),
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    write_record(tmp_path / "store", record(sha=sha), sha)
    done = allocbench("sweep-table", "--repo", str(path), "--store", str(tmp_path / "store"),
                      "--machine", "m1", sha, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "| `ground_truth/mixed` | 206 |" in done.stdout


def test_a_damaged_store_record_stops_bisect_before_anything_is_built(tmp_path):
    good, bad = make_repo(tmp_path / "repo", 2)
    runner = tmp_path / "allocbench-run"   # bisect checks its --help, and runs nothing else
    runner.write_text("#!/bin/sh\necho 'usage: allocbench-run'\n")
    runner.chmod(0o755)
    damaged = json.dumps(record(sha=good)).replace('"bytes_per_op": 206', '"bytes_per_op": NaN',
                                                   1).encode()
    found = write_record(tmp_path / "store", damaged, good)
    refused(allocbench("bisect", "ground_truth/mixed", "--good", good, "--bad", bad, "--repo",
                       str(tmp_path / "repo"), "--store", str(tmp_path / "store"), "--machine",
                       "m1", "--runner", str(runner), cwd=tmp_path),
            str(found), "results.results[0].alloc.bytes_per_op", "NaN")


# write_atomically: it writes only regular files.

@pytest.mark.parametrize("make, kind", [
    (lambda p: p.symlink_to(p.with_name("target")), "a symbolic link"),
    (lambda p: os.mkfifo(p), "a FIFO"),
    (lambda p: p.mkdir(), "a directory"),
], ids=["symlink", "fifo", "directory"])
def test_write_atomically_refuses_what_is_not_a_regular_file(tmp_path, make, kind):
    path = tmp_path / "out.md"
    make(path)
    with pytest.raises(UserError, match=f"{path} is {kind}; allocbench writes only regular "
                                        "files: give another path"):
        fileio.write_atomically(path, "text")
    assert not path.with_name("target").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.md"]


def test_write_atomically_never_follows_a_link_planted_at_its_temporary_name(tmp_path):
    path, victim = tmp_path / "out.md", tmp_path / "victim"
    victim.write_text("precious")
    path.with_name(f"out.md.tmp.{os.getpid()}").symlink_to(victim)
    with pytest.raises(UserError, match="cannot write out.md.tmp"):
        fileio.write_atomically(path, "text")
    assert victim.read_text() == "precious" and not path.exists()


def test_write_atomically_removes_its_temporary_file_when_the_rename_fails(tmp_path,
                                                                          monkeypatch):
    def fail(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(UserError, match=r"out.md: cannot write \(No space left on device\)"):
        fileio.write_atomically(tmp_path / "out.md", "text")
    assert list(tmp_path.iterdir()) == []


def test_write_atomically_writes_a_regular_file_readable_by_all(tmp_path):
    path = tmp_path / "out.md"
    path.write_text("old")
    fileio.write_atomically(path, "new é\n")
    assert path.read_text(encoding="utf-8") == "new é\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644 & ~current_umask()


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_read_json_refuses_a_fifo_without_blocking(tmp_path):
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match=f"{fifo}: is a FIFO, not a file"):
        fileio.read_json(fifo, "", "fix")


def test_the_readme_counts_these_cases():
    """The README's Reliability section quotes the number of cases, by kind."""
    readme = page("reliability")
    store_cases = 2 * len(STORE_CASES) - 1 + 1   # merge, sweep-table (one case n/a), bisect
    assert f"); {store_cases}\n  damaged store records" in readme
    # The total and each kind's count: test_readme_claims.py, from the cases pytest collects.
