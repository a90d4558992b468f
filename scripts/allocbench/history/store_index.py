"""The store's index: for each record file, the stat and hash of the bytes that were read and
validated, and the record's slim and brief forms (slim.py), so that a store of thousands of
records is parsed and checked once, not on every command, and a table of its whole history
reads no record file.

    <store>/.allocbench-index.sqlite3      (and its -wal and -shm files while in use)

A row is keyed by the record file's place in the store. Its hash covers the file's bytes as
they are on disk (by their git blob id, the SHA-1 git names those bytes by) and the source of
the code that validates and slims them (store.py, slim.py, results.py, validate.py,
fileio.py): a newer allocbench reads and validates every record again. The file's stat (size,
mtime, ctime and inode, as git's index keeps them) says whether it changed since: a file whose
stat is the row's is not opened; one whose stat differs (an edit, or a fresh checkout) is read
and hashed, its forms served when its bytes are the row's, and it is validated again when they
are not. Writing a file sets its ctime, which no tool sets back, so a change is always seen. A
stat taken within RACY_NS of the file's last change is not kept (the change may not have
ended; git calls such entries racy): the next read hashes that file again.

A store kept on a git branch (ci/github/publish.yml) is checked out anew for every push, every
stat new. A scan of it asks git instead (git_blobs: `git ls-files --stage`, `git diff-files`):
a file git's index has as checked out or added, unchanged since by git's own stat check
(contents compared where that stat is racy), has the blob id git names, and its forms are
served when that id is the row's, the file not opened; a file git does not track, or finds
changed, is read and hashed. git's word is as good as a stat of our own: both trust a stat that
did not change, and the bytes behind a blob id are the bytes the row validated.

A row's forms are trusted for the bytes its hash names: the index must be this machine's, or
come from a cache only trusted jobs write (ci/github/publish.yml keeps it in the default
branch's actions cache, which a pull request's job cannot write). Rows of other bytes (another
store's index, a stale one) are never served.

The index is a cache of what this machine read: a damaged index file is set aside and rebuilt
from the records; one that cannot be written (a read-only store) is done without. SQLite (the
standard library's sqlite3, in WAL mode with a busy timeout) lets a sweep and a report update
it at once without either losing what the other added. The store's `.gitignore` keeps it out
of a store kept on a git branch (ci/github/publish.yml), and the index is never copied with
the records: `allocbench merge` copies record files, and notes in the target's index the bytes
it wrote of records it read checked (Store.put's `valid`), with their forms.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import weakref
from dataclasses import dataclass
from pathlib import Path

NAME = ".allocbench-index.sqlite3"
IGNORE = f"{NAME}*\n"
VERSION = 3   # of the schema: an index of another version is dropped and rebuilt
# The small columns first: SQLite reads a row's columns in order, the slim form's overflow
# pages too to reach a column after it (a scan of the briefs read the whole file).
_SCHEMA = "CREATE TABLE IF NOT EXISTS record (path TEXT PRIMARY KEY, stat TEXT, " \
          "digest BLOB NOT NULL, brief BLOB NOT NULL, steps BLOB, slim BLOB NOT NULL) " \
          "WITHOUT ROWID"
# The columns of a record's forms (slim.py): the slim one slim.encode'd, the brief one as
# slim.encode_brief's two parts.
_COLUMNS = ("slim", "brief", "steps")
_FORMS = {"slim": (0,), "brief": (1, 2)}   # form → its columns
_BUSY_S = 30.0
RACY_NS = 2_000_000_000
_BATCH = 512   # new stats written at once
_GIT_S = 60.0  # for each git command of git_blobs


def _code_digest(sources: tuple[str, ...]) -> bytes:
    return hashlib.blake2b(b"".join(Path(f).read_bytes() for f in sources),
                           digest_size=16).digest()


@dataclass(frozen=True)
class Row:
    stat: str | None
    digest: bytes


class Index:
    """Which record files were read and validated (row), their slim and brief forms (form),
    and noting a file read (put). Opened on first use; every failure of the database leaves
    it unused, with what this process read kept in memory."""

    def __init__(self, root: Path, sources: tuple[str, ...]):
        self.root = root
        self.sources = sources   # the files of the code that validates and slims a record
        self._db: sqlite3.Connection | None = None
        self._rows: dict[str, Row] | None = None
        self._forms: dict[str, tuple[bytes, bytes, bytes | None]] = {}   # put here, no db
        self._code: bytes | None = None
        self._prefix = os.fspath(root).rstrip("/") + "/"
        self._stats: list[tuple[str | None, str, bytes]] = []   # new stats, not written yet
        self._fetched: dict[str, dict[str, tuple]] = {}   # form → path → columns (prefetch)
        self._git: dict[str, bytes] | None = None   # ask_git's

    def digest(self, data: bytes) -> bytes:
        """The digest of a file's bytes `data` for the code that reads them."""
        return self.digest_of_blob(hashlib.sha1(b"blob %d\0" % len(data) + data).digest())

    def digest_of_blob(self, blob: bytes) -> bytes:
        """The same of a file whose git blob id (of its bytes) is `blob`."""
        return hashlib.blake2b(self._code_digest() + blob, digest_size=20).digest()

    def stat_key(self, st: os.stat_result) -> str:
        """A file's stat, as a row keeps it, with the code's digest: the rows another
        allocbench wrote are not fresh by their stat."""
        return f"{self._code_digest().hex()}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:" \
               f"{st.st_ino}"

    def trusted_stat(self, st: os.stat_result, before_ns: int) -> str | None:
        """The stat to keep of a file stat'ed at `before_ns`, then read: None when it changed
        too shortly before to tell a later change by its stat."""
        return None if st.st_ctime_ns > before_ns - RACY_NS else self.stat_key(st)

    def fresh(self, path: Path) -> bool:
        """Whether the row of `path` is of the file as it is: its stat, kept when it was read
        (and trusted), is the file's now."""
        row = self.row(path)
        if row is None or row.stat is None:
            return False
        try:
            return self.stat_key(os.stat(path)) == row.stat
        except OSError:
            return False

    def _code_digest(self) -> bytes:
        if self._code is None:
            self._code = _code_digest(self.sources)
        return self._code

    def row(self, path: Path) -> Row | None:
        return self._load().get(self._rel(path))

    def prefetch(self, form: str) -> None:
        """Reads the `form` of every row at once (a scan of the store asks for each)."""
        self._load()
        if self._db is None:
            return
        try:
            self._fetched[form] = {row[0]: row[1:] for row in self._db.execute(
                f"SELECT path, {_select(form)} FROM record")}
        except sqlite3.Error:
            self._db = None

    def form(self, path: Path, form: str) -> tuple[bytes | None, ...] | None:
        """The row's columns of the record's slim or brief form (_FORMS) at `path`."""
        rel = self._rel(path)
        if rel in self._forms or self._db is None:
            found = self._forms.get(rel)
            return tuple(found[k] for k in _FORMS[form]) if found else None
        if rel in self._fetched.get(form, {}):
            return self._fetched[form].pop(rel)   # read once: a later ask reads the row
        try:
            return self._db.execute(f"SELECT {_select(form)} FROM record WHERE path = ?",
                                    (rel,)).fetchone()
        except sqlite3.Error:
            self._db = None
            return None

    def vouched(self, path: Path) -> bytes | None:
        """The digest (as digest() gives it) of the file at `path` that git vouches for, when
        ask_git() was called and git's index says the file is as it checked it out."""
        blob = self._git.get(self._rel(path)) if self._git else None
        return self.digest_of_blob(blob) if blob is not None else None

    def ask_git(self) -> None:
        """What git knows of the store's files (git_blobs), for vouched(): a store kept on a
        git branch and checked out anew has every file's stat changed."""
        if self._git is None:
            self._git = git_blobs(self.root)

    def put(self, path: Path, stat: str | None, digest: bytes,
            forms: tuple[bytes, bytes, bytes | None] | None) -> None:
        """Notes that `path`, of stat `stat`, holds the valid bytes of `digest`; `forms`: its
        slim and brief forms (_COLUMNS' values), None when the row has them (only the stat
        changed)."""
        rel = self._rel(path)
        known = self._load()
        if known.get(rel) == Row(stat, digest) and forms is None:
            return
        known[rel] = Row(stat, digest)
        if forms is not None:
            self._forms[rel] = forms
            for fetched in self._fetched.values():
                fetched.pop(rel, None)
        if self._db is None:
            return
        if forms is None:   # a new stat only: written with the others (a checkout: every row)
            self._stats.append((stat, rel, digest))
            if len(self._stats) >= _BATCH:
                _flush(self._db, self._stats)
            return
        try:
            with self._db:
                self._db.execute("INSERT OR REPLACE INTO record (path, stat, digest, slim, "
                                 "brief, steps) VALUES (?, ?, ?, ?, ?, ?)",
                                 (rel, stat, digest, *forms))
            self._forms.pop(rel, None)   # in the database now: not kept twice
        except sqlite3.Error:
            self._db = None   # gone or damaged while in use: the rest of this run without it

    def _rel(self, path: Path | str) -> str:
        text = os.fspath(path)
        if text.startswith(self._prefix):   # what relative_to says, 20 times faster
            return text[len(self._prefix):]
        return Path(path).relative_to(self.root).as_posix()

    def _load(self) -> dict[str, Row]:
        if self._rows is None:
            self._rows = {}
            if self.root.is_dir():
                self._open()
        return self._rows

    def _open(self) -> None:
        path = self.root / NAME
        for attempt in (1, 2):
            try:
                db = sqlite3.connect(path, timeout=_BUSY_S, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                if db.execute("PRAGMA user_version").fetchone()[0] != VERSION:
                    db.execute("BEGIN IMMEDIATE")
                    if db.execute("PRAGMA user_version").fetchone()[0] != VERSION:
                        db.execute("DROP TABLE IF EXISTS valid")    # version 1's
                        db.execute("DROP TABLE IF EXISTS record")
                        db.execute(_SCHEMA)
                        db.execute(f"PRAGMA user_version = {VERSION}")
                    db.execute("COMMIT")
                self._rows = {rel: Row(stat, digest) for rel, stat, digest in
                              db.execute("SELECT path, stat, digest FROM record")}
                db.isolation_level = "DEFERRED"
                self._db = db
                weakref.finalize(self, _flush, db, self._stats)   # at the end, or at exit
                ignore(self.root)
                return
            except sqlite3.OperationalError:
                return   # cannot be opened or written here (a read-only store): no index
            except sqlite3.DatabaseError:
                # Not a database (damaged, or something else at its name): set aside, rebuilt.
                if attempt == 2 or not _set_aside(path):
                    return
            except (sqlite3.Error, OSError):
                return


def _select(form: str) -> str:
    return ", ".join(_COLUMNS[k] for k in _FORMS[form])


def git_blobs(root: Path) -> dict[str, bytes]:
    """Path (relative to `root`) → git blob id of each regular file under `root` that git
    tracks and finds unchanged since it checked the file out or added it (as `git status`
    does: by its index's stat of the file, its contents compared where that stat is racy); {}
    when `root` is not in a git work tree, or git cannot tell. Files git changes on checkout
    (end-of-line conversion, filters) have blob ids of other bytes than theirs: they match no
    row and are read."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"   # only reading: never rewrite the checkout's index
    git = ["git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-C",
           os.fspath(root)]
    try:
        # -v: the tag says which entries git checks; "H" only, not those marked
        # assume-unchanged ("h") or skip-worktree ("S"), whose files git never looks at.
        listed = subprocess.run([*git, "ls-files", "--stage", "-v", "-z"], capture_output=True,
                                env=env, timeout=_GIT_S, check=True).stdout
        changed = subprocess.run([*git, "diff-files", "--name-only", "--relative", "-z"],
                                 capture_output=True, env=env, timeout=_GIT_S,
                                 check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    skip = set(changed.split(b"\0"))
    found: dict[str, bytes] = {}
    for entry in listed.split(b"\0"):
        head, _, name = entry.partition(b"\t")
        parts = head.split(b" ")
        if len(parts) == 4 and parts[0] == b"H" and parts[1] in (b"100644", b"100755") \
                and parts[3] == b"0" and len(parts[2]) == 40 and name not in skip:
            try:
                found[os.fsdecode(name)] = bytes.fromhex(parts[2].decode("ascii"))
            except ValueError:
                continue
    return found


def _flush(db: sqlite3.Connection, stats: list[tuple[str | None, str, bytes]]) -> None:
    """Writes the new stats of rows in one transaction (a lost one costs a hash, not a value)."""
    try:
        with db:
            db.executemany("UPDATE record SET stat = ? WHERE path = ? AND digest = ?", stats)
    except sqlite3.Error:
        pass
    stats.clear()


def _set_aside(path: Path) -> bool:
    try:
        for suffix in ("", "-wal", "-shm"):
            part = path.with_name(path.name + suffix)
            if part.exists() and not part.is_symlink():
                part.replace(part.with_name(part.name + ".damaged"))
        return True
    except OSError:
        return False


def ignore(root: Path) -> None:
    """The store's .gitignore names the index (a store on a git branch commits the records
    only); a .gitignore the user wrote is left as it is if it names it already. Written when
    the index is opened and when a record is: publish.yml restores the index from a cache
    before its sweep, whose new records are then committed with `git add -A`."""
    path = root / ".gitignore"
    try:
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        if NAME not in text:
            with open(path, "a", encoding="utf-8") as f:
                f.write(("" if not text or text.endswith("\n") else "\n") + IGNORE)
    except OSError:
        pass
