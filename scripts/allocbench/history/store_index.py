"""The store's index: which record files were read and validated already, so that a store
of thousands of records is parsed and checked once, not on every command.

    <store>/.allocbench-index.sqlite3      (and its -wal and -shm files while in use)

It is keyed by a record file's place in the store and a hash of its bytes together with the
source of the code that validates them (store.py, results.py, validate.py, fileio.py): a file
that changed, or a newer allocbench, is read and validated again. The index holds no numbers:
every value shown comes from the record file itself, so a damaged or stale index can cost
time, never a wrong number. A damaged index file is set aside and rebuilt from the records;
one that cannot be written (a read-only store) is done without. SQLite (the standard library's
sqlite3, in WAL mode with a busy timeout) lets a sweep and a report update it at once without
either losing what the other added. The store's `.gitignore` keeps it out of a store kept on
a git branch (ci/github/publish.yml): it is a cache of the machine that built it.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

NAME = ".allocbench-index.sqlite3"
IGNORE = f"{NAME}*\n"
_SCHEMA = "CREATE TABLE IF NOT EXISTS valid (path TEXT NOT NULL, digest BLOB NOT NULL, " \
          "PRIMARY KEY (path, digest)) WITHOUT ROWID"
_BUSY_S = 30.0


def _code_digest(sources: tuple[str, ...]) -> bytes:
    return hashlib.blake2b(b"".join(Path(f).read_bytes() for f in sources),
                           digest_size=16).digest()


class Index:
    """Whether the bytes of a record file were validated already (known), and noting that
    they were (add). Opened on first use; every failure of the database leaves it unused."""

    def __init__(self, root: Path, sources: tuple[str, ...]):
        self.root = root
        self.sources = sources   # the files of the code that validates a record
        self._db: sqlite3.Connection | None = None
        self._known: set[tuple[str, bytes]] | None = None
        self._code: bytes | None = None

    def digest(self, data: bytes) -> bytes:
        if self._code is None:
            self._code = _code_digest(self.sources)
        return hashlib.blake2b(self._code + data, digest_size=20).digest()

    def known(self, path: Path, digest: bytes) -> bool:
        return (self._rel(path), digest) in self._load()

    def add(self, path: Path, digest: bytes) -> None:
        key = (self._rel(path), digest)
        known = self._load()
        if key in known:
            return
        known.add(key)
        if self._db is None:
            return
        try:
            with self._db:
                self._db.execute("INSERT OR IGNORE INTO valid VALUES (?, ?)", key)
        except sqlite3.Error:
            self._db = None   # gone or damaged while in use: the rest of this run without it

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _load(self) -> set[tuple[str, bytes]]:
        if self._known is None:
            self._known = set()
            if self.root.is_dir():
                self._open()
        return self._known

    def _open(self) -> None:
        path = self.root / NAME
        for attempt in (1, 2):
            try:
                db = sqlite3.connect(path, timeout=_BUSY_S, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute(_SCHEMA)
                self._known = set(db.execute("SELECT path, digest FROM valid"))
                db.isolation_level = "DEFERRED"
                self._db = db
                _ignore(self.root)
                return
            except sqlite3.OperationalError:
                return   # cannot be opened or written here (a read-only store): no index
            except sqlite3.DatabaseError:
                # Not a database (damaged, or something else at its name): set aside, rebuilt.
                if attempt == 2 or not _set_aside(path):
                    return
            except (sqlite3.Error, OSError):
                return


def _set_aside(path: Path) -> bool:
    try:
        for suffix in ("", "-wal", "-shm"):
            part = path.with_name(path.name + suffix)
            if part.exists() and not part.is_symlink():
                part.replace(part.with_name(part.name + ".damaged"))
        return True
    except OSError:
        return False


def _ignore(root: Path) -> None:
    """The store's .gitignore names the index (a store on a git branch commits the records
    only); a .gitignore the user wrote is left as it is if it names it already."""
    ignore = root / ".gitignore"
    try:
        text = ignore.read_text(encoding="utf-8") if ignore.is_file() else ""
        if NAME not in text:
            with open(ignore, "a", encoding="utf-8") as f:
                f.write(("" if not text or text.endswith("\n") else "\n") + IGNORE)
    except OSError:
        pass
