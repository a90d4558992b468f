"""The site's folder (--out): what allocbench wrote there, what the user keeps there, and how a
new site takes its place.

A site lists every file allocbench wrote in its MARKER file, and the key of each page a
rebuild may copy instead of rendering it again (site.py: the pages of older revisions). Anything else in the folder is the
user's — a CNAME, a .nojekyll, a gh-pages clone's .git, notes — and a rebuild keeps it: each
such entry (a folder none of whose files allocbench wrote counts as one) is moved into the new
site before the new site is swapped into place in one step (renameat2 RENAME_EXCHANGE; two
renames where the file system lacks it). What is left of the previous site is then removed file
by file from its marker's list, never as a tree, so nothing allocbench did not write is ever
deleted. A kept entry where the new site writes a file of its own is refused (exit 2, naming
it) before anything moves. A folder of other files without a marker is refused, not filled.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

from allocbench.base.errors import UserError

MARKER = ".allocbench-report"
# What a site holds at its top level; a marker from before the file list names no files, and
# such a site holds these and nothing of the user's in them.
LAYOUT = ("index.html", "assets", "img", "scenario", "sweep", "run", "compare")
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


@dataclass(frozen=True)
class Previous:
    """A site allocbench wrote before, and the files it wrote (None: its marker predates the
    list; then every file under LAYOUT is its)."""
    root: Path
    files: frozenset[str] | None
    pages: dict[str, str] = field(default_factory=dict)   # page → its key (site.py)

    def wrote(self, rel: str) -> bool:
        if self.files is None:
            return rel.split("/")[0] in LAYOUT
        return rel in self.files

    def holds(self, rel: str) -> bool:
        """Whether the folder `rel` holds files the previous build wrote."""
        if self.files is None:
            return rel.split("/")[0] in LAYOUT
        return any(f.startswith(rel + "/") for f in self.files)


def check_out(out: Path) -> Previous | None:
    """The previous site at `out` (an empty folder is one of no files; None: nothing there);
    UserError when `out` is not a folder, or a folder of other files."""
    if not os.path.lexists(out):
        return None
    if out.is_symlink() or not out.is_dir():
        raise UserError(f"--out {out}: is not a folder; give a new folder or a report folder "
                        "that allocbench wrote")
    marker = out / MARKER
    if marker.is_file():
        return Previous(out, _listed(marker), _page_keys(marker))
    if any(out.iterdir()):
        raise UserError(f"--out {out}: a folder of other files, not a report allocbench wrote "
                        f"(no {MARKER}); give a new or empty folder (files you add to the "
                        "report's folder later, a CNAME or a .git, are kept by every rebuild)")
    return Previous(out, frozenset())


def _listed(marker: Path) -> frozenset[str] | None:
    try:
        doc = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UserError(f"{marker}: cannot be read ({e}); it says which files of the folder "
                        "allocbench wrote: restore it, or give a new --out folder") from None
    if not isinstance(doc, dict):
        raise UserError(f"{marker}: not a JSON object; restore it, or give a new --out folder")
    if "files" not in doc:
        return None
    files = doc["files"]
    if not isinstance(files, list):
        raise UserError(f"{marker}: 'files' is not an array of paths; restore it, or give a "
                        "new --out folder")
    for i, rel in enumerate(files):
        if not isinstance(rel, str):
            raise UserError(f"{marker}: 'files[{i}]' is not a path (a string) but {rel!r}; "
                            "restore it, or give a new --out folder")
    return frozenset(files)


def _page_keys(marker: Path) -> dict[str, str]:
    """The pages' keys the marker lists; none when they are not a map of text to text (every
    page is then rendered)."""
    pages = json.loads(marker.read_text(encoding="utf-8")).get("pages")
    if not isinstance(pages, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in pages.items()):
        return {}
    return pages


def write_marker(root: Path, pages: dict[str, str] | None = None) -> None:
    """The marker of the site in `root`, listing every file there (all of them allocbench's:
    nothing of the user's has been moved in yet) and the keys of its `pages`."""
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    doc = {"generator": "allocbench report", "files": files, "pages": dict(sorted(
        (pages or {}).items()))}
    (root / MARKER).write_text(json.dumps(doc, indent=0) + "\n", encoding="utf-8")


def _sort_out(previous: Previous) -> tuple[list[str], list[str]]:
    """(the files of the previous build that are there, the entries that are the user's):
    paths relative to its root. Links are never followed: a link is an entry of its own."""
    ours: list[str] = []
    kept: list[str] = []

    def walk(folder: Path, prefix: str) -> None:
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            rel = prefix + entry.name
            if rel == MARKER:
                continue
            if entry.is_dir(follow_symlinks=False) and previous.holds(rel):
                walk(Path(entry.path), rel + "/")
            elif entry.is_file(follow_symlinks=False) and previous.wrote(rel):
                ours.append(rel)
            else:
                kept.append(rel)
    walk(previous.root, "")
    return ours, kept


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the new site is in place with the user's entries and the
    previous one is removed (milliseconds): an interrupt in between would leave the user's
    entries, or the previous build's files, in a temporary folder."""
    held = (signal.SIGINT, signal.SIGTERM)
    # Blocked in this thread; and caught while held, for the kernel may give a process's
    # signal to another thread (a library's) that does not block it, and Python then runs the
    # handler here all the same.
    caught: list[int] = []
    deferred: dict[int, Any] = {}   # signal → the handler it had
    if threading.current_thread() is threading.main_thread():
        for number in held:
            if signal.getsignal(number) is not None:   # None: not Python's to set back
                deferred[number] = signal.signal(number, lambda n, _: caught.append(n))
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)   # runs the handlers of held ones
        for number, handler in deferred.items():
            signal.signal(number, handler)
        for number in dict.fromkeys(caught):
            signal.raise_signal(number)


def reuse(old: Path, target: Path) -> None:
    """Puts the previous build's file `old` (a page or picture that did not change) at
    `target` of the new one: a hard link, the bytes not copied (the previous build's name is
    removed when the new build takes its place, and no build writes into a file it made), or
    a copy where the file system links nothing."""
    try:
        os.link(old, target)
    except OSError:
        shutil.copyfile(old, target)


def replace(new: Path, out: Path, previous: Previous | None) -> Path | None:
    """Puts the site built in `new` at `out`, with the user's entries of the previous site in
    it; removes the previous build's files. The folder left because something in it is not
    allocbench's (written during the build), else None."""
    if previous is None:
        os.rename(new, out)
        return None
    with _signals_held():
        ours, kept = _sort_out(previous)
        taken = [rel for rel in kept if os.path.lexists(new / rel)]
        if taken:
            shutil.rmtree(new)
            one = len(taken) == 1
            raise UserError(f"--out {out}: {', '.join(taken)} {'is' if one else 'are'} not "
                            f"allocbench's (not in its {MARKER}) and the new report writes "
                            f"there; move or rename {'it' if one else 'them'} and build again "
                            "(the previous report is as it was)")
        moved: list[str] = []
        try:
            for rel in kept:
                (new / rel).parent.mkdir(parents=True, exist_ok=True)
                os.rename(out / rel, new / rel)
                moved.append(rel)
            shutil.copymode(out, new)   # the folder's permissions are the user's too
            _swap(new, out)
        except OSError as e:
            for rel in reversed(moved):
                os.rename(new / rel, out / rel)
            shutil.rmtree(new)
            raise UserError(f"--out {out}: the new report cannot take its place ({e.filename}: "
                            f"{e.strerror}); the previous report is as it was") from None
        return _remove(new, ours)


def _swap(new: Path, out: Path) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(_AT_FDCWD, os.fsencode(new), _AT_FDCWD, os.fsencode(out),
                      _RENAME_EXCHANGE) == 0:
        return
    # e.g. a file system without RENAME_EXCHANGE: two renames, undone if the second fails
    aside = out.parent / f".{out.name}.old-{os.getpid()}"
    os.rename(out, aside)
    try:
        os.rename(new, out)
    except OSError:
        os.rename(aside, out)
        raise
    os.rename(aside, new)


def _remove(old: Path, ours: list[str]) -> Path | None:
    """Removes the previous build's files `ours` (and the marker) from `old`, then its folders
    that are left empty; `old` when something else is still in it."""
    for rel in [*ours, MARKER]:
        try:
            (old / rel).unlink()
        except OSError:   # gone, or no longer a file: left, and said
            pass
    folders = {str(p) for rel in ours for p in PurePosixPath(rel).parents if str(p) != "."}
    for rel in sorted(folders, key=lambda f: f.count("/"), reverse=True):
        try:
            (old / rel).rmdir()
        except OSError:   # not empty: something that is not allocbench's
            pass
    try:
        old.rmdir()
    except OSError:
        return old
    return None
