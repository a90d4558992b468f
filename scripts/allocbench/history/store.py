"""The results store of sweeps and bisects: one record per (machine, allocator, commit, recipe).

    <store>/<machine>/<allocator>/<sha>/<recipe>.json.gz   (store version 2)
    <store>/<machine>/<allocator>/<sha>/<recipe>.json      (version 1)
    <store>/<machine>/<allocator>/<sha>.json               (version 1, before recipes had files)

A record is one JSON document. Version 2 writes it compact and gzip-compressed (deterministic:
the same record gives the same bytes), about 10 KB for the built-in plugin's 46 instances
where version 1's indented JSON took 80 KB: the field names, the per-window counters and the
time samples repeat from instance to instance and compress well, and a year of pushes stays
within tens of MB. Records of version 1 are read as they are, with every value equal; a record
written again (a sweep's new measurement, `allocbench merge`) is written as version 2 and its
older file removed. `zcat <record>.json.gz | jq .` shows one.

Reading is incremental: the store's index (store_index.py) remembers which files' bytes were
validated, so a record is checked once and read afterwards with a plain parse, and keeps each
record's slim and brief forms (slim.py: what a whole history's tables and pages read of it),
which summary() and scan() give without reading the file while its stat is unchanged.

Measurements of one commit with another build or graft (another recipe) are kept side by side;
the tables show the newest and say when their columns come from several recipes. A count-only
record is completed, not lost, by a later run with the time pass: the new record carries the
earlier one's date and build time under `earlier`.

A record says how the revision was measured (its recipe: build and graft), whether it worked
(status ok, build_failed, run_failed or timeout, with the tail of the log when not), and holds
allocbench-run's results document. Records are written atomically, one per revision as soon as
it is measured, so an interrupted sweep loses at most the revision it was measuring. Stores of
several machines (a sharded sweep in a CI matrix) are combined with `allocbench merge`.

Which optional passes a record's run had (passes()) is read from its results: `time_measured`
(context.time), the instructions pass (context.instructions, absent in results older than that
pass) and its cache simulation (context.instructions.estimated_cycles). A record without a pass
that a sweep or bisect asks for is measured again (sweep.Plan.stored), never shown as a gap.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from allocbench.base import fileio, results, validate
from allocbench.base.errors import UserError
from allocbench.base.fileio import decode_text, parse_json, read_bytes, write_atomically
from allocbench.base.validate import Checker
from allocbench.history import slim as slimming, store_index
from allocbench.history.log_summary import informative_line
from allocbench.history.store_index import Index

STORE_VERSION = 2          # what put() writes
READ_VERSIONS = (1, 2)     # what is read
GZ = ".json.gz"
MAX_RECORD_BYTES = 256 << 20   # decompressed: a record of 46 instances is ~60 KB
STATUSES = ("ok", "build_failed", "run_failed", "timeout")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_RECIPE = re.compile(r"^[0-9a-f]{16}$")
FIX = "delete the file; the next sweep measures that revision again"
_ASK_GIT = 64   # records a scan reads before it asks git which files a checkout left as they are


def machine_id(given: str | None = None) -> str:
    """--machine, else $ALLOCBENCH_MACHINE, else the host name: the store's first level."""
    name = given or os.environ.get("ALLOCBENCH_MACHINE") or socket.gethostname() or "local"
    if not _NAME.match(name):
        source = "--machine" if given else ("ALLOCBENCH_MACHINE" if os.environ.get(
            "ALLOCBENCH_MACHINE") else "the host name")
        raise UserError(f"machine id '{name}' (from {source}) is not usable as a folder name; "
                        "use letters, digits, '.', '_' and '-', e.g. --machine ci-runner-1")
    return name


def problem(record: dict[str, Any]) -> str:
    """Why a failed record has no results, in one line: its status, the most informative
    line of its log (log_summary.py: CMake's message, a compiler's error, else the last line)
    and what else was wrong with the revision (its note: a submodule left empty)."""
    error = informative_line(record.get("log_tail", ""))
    text = f"{record['status'].replace('_', ' ')}: {error}" if error else record["status"]
    return f"{text} ({record['note']})" if record.get("note") else text


PASSES = ("time", "instructions", "estimated_cycles")   # the optional passes, as passes() names


def passes(record: dict[str, Any]) -> frozenset[str]:
    """The optional passes the record's run had: "time", "instructions" (allocbench-run
    --instructions) and "estimated_cycles" (--estimated-cycles); none for a failure."""
    if record["status"] != "ok":
        return frozenset()
    instructions = record["results"]["context"].get("instructions")
    return frozenset(name for name, ran in (
        ("time", record["time_measured"]), ("instructions", instructions is not None),
        ("estimated_cycles", bool(instructions and instructions.get("estimated_cycles"))))
        if ran)


def check(record: Any, origin: Path) -> dict[str, Any]:
    """`record` if it is a valid store record, filed where its machine, allocator and sha say
    (merge writes it there); UserError naming the file, the field and the fix."""
    _check_key(record, origin)
    _check_place(record, origin)
    c = Checker(str(origin), FIX)
    c.each(record, "", {"label": c.text, "subject": c.text, "recorded": c.text,
                        "committed": c.text, "note": c.text},
           optional=("recorded", "committed", "note"))
    if record["status"] == "ok":
        results.check(record.get("results"), str(origin), FIX, at="results")
        ran = record["results"]["context"]["time"] is not None
        c.want(ran == record["time_measured"], "time_measured", record["time_measured"],
               f"{str(ran).lower()} (results.context.time says whether the time pass ran)")
    else:   # what the tables and bisect say about a failure
        c.each(record, "", {"log": c.text, "log_tail": c.text})
        c.want(record.get("results") is None, "results", record.get("results"),
               f"null (the status is {record['status']})")
    return record


def _check_key(record: Any, origin: Path) -> None:
    """The fields that say what the record is: its version, revision, place and status."""
    if not isinstance(record, dict) or record.get("store_version") not in READ_VERSIONS or \
            isinstance(record["store_version"], bool):
        raise UserError(f"{origin}: not an allocbench store record (of version "
                        f"{' or '.join(map(str, READ_VERSIONS))}); {FIX}")
    for key, kind in (("sha", str), ("machine", str), ("allocator", str), ("recipe", str),
                      ("status", str), ("time_measured", bool)):
        if not isinstance(record.get(key), kind):
            raise UserError(f"{origin}: field '{key}' is missing or not a {kind.__name__}; {FIX}")
    if not _RECIPE.match(record["recipe"]) or not _SHA.match(record["sha"]):
        key = "recipe" if not _RECIPE.match(record["recipe"]) else "sha"
        raise UserError(f"{origin}: field '{key}' is {json.dumps(record[key])[:60]}, not "
                        f"{'16' if key == 'recipe' else '40'} hexadecimal digits; {FIX}")
    if record["status"] not in STATUSES:
        raise UserError(f"{origin}: field 'status' is {record['status']!r}, not one of "
                        f"{', '.join(STATUSES)}; {FIX}")


def _check_place(record: dict[str, Any], origin: Path) -> None:
    """The record's own key names its file: <machine>/<allocator>/<sha>/<recipe>.json (or the
    older <machine>/<allocator>/<sha>.json)."""
    if _SHA.match(_key(origin)):
        where = {"sha": _key(origin), "allocator": origin.parent.name,
                 "machine": origin.parent.parent.name}
    else:
        where = {"recipe": _key(origin), "sha": origin.parent.name,
                 "allocator": origin.parent.parent.name,
                 "machine": origin.parent.parent.parent.name}
    for key, expected in where.items():
        if record[key] != expected:
            raise UserError(f"{origin}: field '{key}' is {json.dumps(record[key])[:60]}, but the "
                            f"file's place in the store says {json.dumps(expected)}; {FIX}")


def _entries(folder: str | os.PathLike) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as found:
            return list(found)
    except OSError:
        return []


def _names(folder: str) -> list[str]:
    try:
        return os.listdir(folder)   # names only: cheaper than scandir's entries
    except OSError:
        return []


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()   # a link to a folder too, as glob follows it
    except OSError:
        return False


def _folders(folder: str | os.PathLike) -> list[str]:
    return [e.path for e in _entries(folder) if _is_dir(e)]


def _key(path: Path | os.DirEntry) -> str:
    """The file's name without .json or .json.gz: its sha or its recipe."""
    return _name_key(path.name)


def _name_key(name: str) -> str:
    return name[:-len(GZ)] if name.endswith(GZ) else os.path.splitext(name)[0]


def encode(record: dict[str, Any]) -> bytes:
    """A record's file of version 2: compact JSON, gzip-compressed, with no date in the header
    (the same record, the same bytes: a store on a git branch changes only where it changed)."""
    text = json.dumps({**record, "store_version": STORE_VERSION}, sort_keys=True,
                      separators=(",", ":"))
    return gzip.compress(text.encode(), compresslevel=9, mtime=0)


def _decompressed(data: bytes, path: Path) -> bytes:
    try:
        inflate = zlib.decompressobj(wbits=31)   # gzip
        text = inflate.decompress(data, MAX_RECORD_BYTES)
        if inflate.unconsumed_tail:
            raise UserError(f"{path}: decompresses to more than {MAX_RECORD_BYTES >> 20} MB, "
                            f"not a store record; {FIX}")
        if not inflate.eof or inflate.unused_data:
            raise zlib.error("truncated, or data after its end")
        return text
    except zlib.error as e:
        raise UserError(f"{path}: not a gzip-compressed record ({e}); {FIX}") from None


# What validating and slimming a record depend on: a change of any of them reads every record
# again.
_VALIDATORS = tuple(m.__file__ for m in (fileio, results, validate, slimming)) + (__file__,)


@dataclass(frozen=True)
class Store:
    root: Path
    index: Index = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", Index(self.root, _VALIDATORS))

    def path(self, machine: str, allocator: str, sha: str, recipe: str) -> Path:
        return self.root / machine / allocator / sha / f"{recipe}{GZ}"

    def get(self, machine: str, allocator: str, sha: str, recipe: str | None = None, *,
            form: str = "whole") -> dict[str, Any] | None:
        """The record of `sha` measured with `recipe`; without one, the newest of any recipe.
        `form`: the whole record, or its slim or brief form (summary())."""
        found = [r for r in self._of(self.root / machine / allocator, sha, form)
                 if recipe is None or r["recipe"] == recipe]
        return max(found, key=preference, default=None)

    def put(self, record: dict[str, Any], valid: bool = False) -> Path:
        """Writes `record` at its place. `valid`: it was read from a store (merge), checked
        there, so the index notes the bytes written as validated, with their forms: the first
        report after a merge parses none of them."""
        path = self.path(record["machine"], record["allocator"], record["sha"], record["recipe"])
        path.parent.mkdir(parents=True, exist_ok=True)
        data = encode(record)
        write_atomically(path, data)
        store_index.ignore(self.root)
        if valid:
            self.index.put(path, None, self.index.digest(data),
                           _forms(json.loads(gzip.decompress(data))))
        version1 = path.with_name(f"{record['recipe']}.json")   # the same key, version 1
        if os.path.lexists(version1):
            version1.unlink()
        old = path.parent.with_suffix(".json")   # the same key in the older layout
        if os.path.lexists(old) and self._read(old)["recipe"] == record["recipe"]:
            old.unlink()
        return path

    def find(self, allocator: str, sha: str, machine: str, *, form: str = "whole"
             ) -> dict[str, Any] | None:
        """The record of `sha`: this machine's, else another machine's (the allocation
        metrics do not depend on the machine), preferring one that measured something."""
        found = [self.get(machine, allocator, sha, form=form)]
        if self.root.is_dir():
            found += [self.get(p.name, allocator, sha, form=form)
                      for p in sorted(self.root.iterdir()) if p.name != machine and p.is_dir()]
        found = [r for r in found if r is not None]
        return next((r for r in found if r["status"] == "ok"), found[0] if found else None)

    def records(self) -> Iterator[tuple[Path, dict[str, Any]]]:
        """Every record, in a stable order; files that are not records are left alone."""
        for path in self.paths():
            yield path, self._read(path)

    def paths(self) -> list[Path]:
        """The files where records are kept, in a stable order."""
        return [Path(p) for p in self._paths()]

    def _paths(self) -> list[str]:
        if not self.root.is_dir():
            return []
        # What */*/<sha>.json and */*/<sha>/<recipe>.json[.gz] match, by os.scandir: pathlib's
        # glob of a store of 4,000 records took 0.4 s of a report.
        paths: list[str] = []
        for allocator in (a for m in _folders(self.root) for a in _folders(m)):
            for entry in _entries(allocator):
                name = entry.name
                if name.endswith(".json") and _SHA.match(name[:-5]):
                    paths.append(entry.path)
                elif _SHA.match(name) and _is_dir(entry):
                    folder = entry.path + os.sep
                    paths += [folder + n for n in _names(folder)
                              if n.endswith((".json", GZ)) and _RECIPE.match(_name_key(n))]
        return sorted(paths, key=lambda p: p.split(os.sep))   # Path's order

    def scan(self, form: str = "whole") -> Iterator[tuple[str, dict[str, Any] | None, str]]:
        """Every record as records() gives it (or its slim or brief `form`), but a damaged
        one as (path, None, why) instead of an error: a report shows it as unreadable and goes
        on. The paths are strings (place() and summary() take them): a scan of thousands of
        records reads them from the index, and making a Path of each cost more."""
        paths = self._paths()
        if form != "whole" and len(paths) > 1:
            self.index.prefetch(form)
        asked = len(paths) < _ASK_GIT
        for path in paths:
            if not asked and not self.index.fresh(path):
                self.index.ask_git()   # a checkout of the store: every stat changed
                asked = True
            try:
                yield path, self.summary(path, form), ""
            except UserError as e:
                yield path, None, str(e)

    @staticmethod
    def place(path: Path | str) -> tuple[str, str, str]:
        """(machine, allocator, sha) of a record's file, from its place in the store."""
        parts = ["", "", ""] + os.fspath(path).split(os.sep)   # as Path's names of a short one
        key = _name_key(parts[-1])
        if _SHA.match(key):   # <machine>/<allocator>/<sha>.json
            return parts[-3], parts[-2], key
        return parts[-4], parts[-3], parts[-2]   # <machine>/<allocator>/<sha>/<recipe>.json…

    def _of(self, folder: Path, sha: str, form: str) -> list[dict[str, Any]]:
        paths = [folder / f"{sha}.json"]
        if (folder / sha).is_dir():
            paths += sorted(p for p in (folder / sha).iterdir()
                            if p.name.endswith((".json", GZ)) and _RECIPE.match(_key(p)))
        return [r for r in (self.summary(p, form) for p in paths) if r is not None]

    def version(self, path: Path) -> str:
        """What the index says of the bytes of `path` that were read last (a hash of them and
        of the code that reads them): equal versions, equal records. "" when none was read."""
        row = self.index.row(path)
        return row.digest.hex() if row is not None else ""

    def summary(self, path: Path | str, form: str = "slim") -> dict[str, Any] | None:
        """The record at `path` in `form` (slim.FORMS). A slim or brief one comes from the
        index while the file's stat is the row's, or git vouches for its bytes being the row's
        (scan() asked it: store_index.git_blobs), the file not opened; or when its bytes are
        the row's (read and hashed, not parsed); else from the file, read and validated as
        _read does."""
        if form == "whole":
            return self._read(Path(path))
        row = self.index.row(path)
        if (row is not None and row.digest == self.index.vouched(path)) or \
                self.index.fresh(path):
            found = self._form(path, form)   # else _bytes says what is wrong, if anything
            if found is not None:
                return found
        path = Path(path)
        if not os.path.lexists(path):
            return None
        data, digest, stat, row = self._bytes(path)
        if row is not None and row.digest == digest:
            found = self._form(path, form)
            if found is not None:
                self.index.put(path, stat, digest, None)
                return found
            record = json.loads(self._text(data, path))   # a row without its forms
            self.index.put(path, stat, digest, _forms(record))
        else:
            record = self._check(path, data, digest, stat)
        return slimming.of(record) if form == "slim" else slimming.brief(record)

    def _form(self, path: Path | str, form: str) -> dict[str, Any] | None:
        parts = self.index.form(path, form)
        try:
            if parts is None:
                return None
            return slimming.decode(*parts) if form == "slim" else slimming.decode_brief(*parts)
        except (zlib.error, ValueError, TypeError, UnicodeDecodeError):
            return None   # a damaged row: the file has it

    def _read(self, path: Path) -> dict[str, Any] | None:
        """The record at `path`, validated once: bytes the index knows are parsed only."""
        if not os.path.lexists(path):
            return None
        data, digest, stat, row = self._bytes(path)
        if row is not None and row.digest == digest:
            self.index.put(path, stat, digest, None)
            return json.loads(self._text(data, path))
        return self._check(path, data, digest, stat)

    def _bytes(self, path: Path) -> tuple[bytes, bytes, str | None, Any]:
        """The file's bytes as they are on disk, their digest (of the code that reads them
        too: store_index.py), the stat to keep of the file, and its row in the index."""
        before = time.time_ns()
        try:
            st = os.stat(path)   # before reading: a change after it shows in the next stat
        except OSError:
            st = None            # read_bytes says why
        data = read_bytes(path, "the store record")
        stat = self.index.trusted_stat(st, before) if st is not None else None
        return data, self.index.digest(data), stat, self.index.row(path)

    @staticmethod
    def _text(data: bytes, path: Path) -> str:
        if path.name.endswith(GZ):
            data = _decompressed(data, path)
        return decode_text(data, path, FIX)

    def _check(self, path: Path, data: bytes, digest: bytes, stat: str | None
               ) -> dict[str, Any]:
        """The record of bytes the index does not know, validated; the index then knows them."""
        text = self._text(data, path)
        if not text.strip():
            raise UserError(f"{path}: is empty; {FIX}")
        record = check(parse_json(text, str(path), FIX), path)
        self.index.put(path, stat, digest, _forms(record))
        return record


def _forms(record: dict[str, Any]) -> tuple[bytes, bytes, bytes | None]:
    """The slim and brief forms of a record, as the index keeps them (its _COLUMNS)."""
    slim = slimming.of(record)
    return slimming.encode(slim), *slimming.encode_brief(slimming.brief(slim))


def preference(record: dict[str, Any]) -> tuple[bool, str]:
    """Which of two records of one revision to show: one that measured something, else the
    newer."""
    return record["status"] == "ok", record.get("recorded", "")


def merge(into: Store, sources: list[Store]) -> tuple[int, int]:
    """Copies the records of `sources` into `into`: (copied, kept). For the same key, a record
    that measured something beats a failure, else the newer one wins."""
    copied = kept = 0
    for source in sources:
        if not source.root.is_dir():
            raise UserError(f"{source.root}: no such store; give the folder a sweep wrote "
                            "(its --store, default <repo>/.allocbench/results)")
        for _, record in source.records():
            present = into.get(record["machine"], record["allocator"], record["sha"],
                               record["recipe"])
            if present is None or _better(record, present):
                into.put(record, valid=True)   # records() checked it
                copied += 1
            else:
                kept += 1
    return copied, kept


def _better(new: dict[str, Any], old: dict[str, Any]) -> bool:
    return preference(new) > preference(old)
