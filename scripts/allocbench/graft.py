"""Grafting today's scenario sources onto an old revision's worktree.

`--graft PATH[:DEST]` makes DEST (a folder or file of the worktree, relative to its root) an
exact copy of PATH: files that differ are written, files PATH lacks are removed, identical files
keep their timestamps so an incremental build recompiles only what the graft changed. DEST
defaults to PATH's place in the subject repository, so `--graft bench` puts today's bench/ over
the old one.

A worktree remembers its graft in `<worktree>.graft.json`; allocbench restores a worktree to its
commit (`git reset --hard`, `git clean`) only when the grafted places change, and refuses one
with changes it did not make itself.
"""

from __future__ import annotations

import filecmp
import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from allocbench import revisions
from allocbench.errors import UserError
from allocbench.fileio import write_atomically
from allocbench.revision import git


@dataclass(frozen=True)
class Graft:
    source: Path   # absolute: a file or a folder
    dest: str      # relative to the worktree root, POSIX form

    def files(self) -> list[tuple[str, Path]]:
        """(path relative to the worktree root, source file), sorted."""
        if self.source.is_file():
            return [(self.dest, self.source)]
        return sorted((str(PurePosixPath(self.dest) / p.relative_to(self.source).as_posix()), p)
                      for p in self.source.rglob("*")
                      if p.is_file() and ".git" not in p.relative_to(self.source).parts)


def parse(text: str, repo: Path) -> Graft:
    """A `--graft PATH[:DEST]` argument; DEST defaults to PATH's place inside `repo`."""
    source_text, _, dest = text.partition(":")
    source = Path(source_text).resolve()
    if not source.exists():
        raise UserError(f"--graft {text}: {source} does not exist; give a file or folder of "
                        "scenario sources, e.g. --graft bench")
    if not dest:
        if not source.is_relative_to(repo):
            raise UserError(f"--graft {text}: {source} is outside {repo}, so its place in the "
                            "worktree is unknown; give it: --graft PATH:DEST (DEST relative to "
                            "the repository root)")
        dest = source.relative_to(repo).as_posix()
    parts = PurePosixPath(dest).parts
    if not parts or dest.startswith("/") or ".." in parts or parts[0] == ".git" or \
            dest in (".",):
        raise UserError(f"--graft {text}: the destination '{dest}' must be a path inside the "
                        "repository (relative, no '..', not .git, not the root)")
    return Graft(source, str(PurePosixPath(*parts)))


def fingerprint(grafts: list[Graft]) -> str:
    """Changes whenever a grafted file's place or content changes; '' without grafts."""
    if not grafts:
        return ""
    digest = hashlib.sha256()
    for graft in grafts:
        for dest, path in graft.files():
            digest.update(dest.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _stamp(worktree: Path) -> Path:
    return worktree.with_name(worktree.name + ".graft.json")


def _dirty_paths(worktree: Path) -> list[str]:
    status = git(worktree, "status", "--porcelain", "--untracked-files=all", "-z")
    entries = [e for e in status.stdout.split("\0") if e]
    return [entry[3:] for entry in entries if len(entry) > 3]


def checkout(repo: Path, sha: str, grafts: list[Graft]) -> Path:
    """The worktree of `sha` with exactly `grafts` applied (none: the commit as it is, even if a
    sweep grafted it before)."""
    worktree = revisions.worktree(repo, sha)
    apply(worktree, grafts)
    return worktree


def apply(worktree: Path, grafts: list[Graft]) -> None:
    """Makes `worktree` its commit plus `grafts`, touching only what has to change."""
    stamp = _stamp(worktree)
    before = json.loads(stamp.read_text()) if stamp.exists() else {"fingerprint": "",
                                                                    "dests": []}
    allowed = [PurePosixPath(d) for d in before["dests"]]
    foreign = [p for p in _dirty_paths(worktree)
               if not any(PurePosixPath(p) == d or d in PurePosixPath(p).parents
                          for d in allowed)]
    if foreign:
        raise UserError(f"{worktree} has changes allocbench did not make ({', '.join(foreign[:3])}"
                        f"{' …' if len(foreign) > 3 else ''}); it only measures commits plus "
                        f"--graft: move your work elsewhere, then 'git worktree remove --force "
                        f"{worktree}'")
    now = {"fingerprint": fingerprint(grafts), "dests": [g.dest for g in grafts]}
    if now == before:
        return
    if before["dests"] and before["dests"] != now["dests"]:  # else the copy below suffices
        for command in (("reset", "-q", "--hard"), ("clean", "-fdq")):
            git(worktree, *command)
    if grafts:
        revisions.announce(f"grafting {', '.join(g.dest for g in grafts)}")
    for graft in grafts:
        target = worktree / graft.dest
        files = graft.files()
        wanted = {dest for dest, _ in files}
        if target.is_dir():
            for present in target.rglob("*"):
                if present.is_file() and present.relative_to(worktree).as_posix() not in wanted:
                    present.unlink()
        for dest, source in files:
            path = worktree / dest
            if path.is_file() and filecmp.cmp(path, source, shallow=False):
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, path)
    write_atomically(stamp, json.dumps(now))
