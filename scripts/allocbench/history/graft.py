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
import os
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from allocbench.base.errors import UserError
from allocbench.base.fileio import json_path, read_json, write_atomically
from allocbench.base.validate import MISSING, Checker
from allocbench.history import submodules as submodules_of, worktrees
from allocbench.history.revision import git


@dataclass(frozen=True)
class Graft:
    source: Path   # absolute: a file or a folder
    dest: str      # relative to the worktree root, POSIX form

    def files(self) -> list[tuple[str, Path]]:
        """(path relative to the worktree root, source file), sorted. In a git checkout, the
        files git would commit (tracked, or new and not ignored): a build folder or editor
        files inside the scenario folder are not grafted."""
        if self.source.is_file():
            return [(self.dest, self.source)]
        listed = git(self.source, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        paths = ([self.source / p for p in listed.stdout.split("\0") if p]
                 if listed.returncode == 0 else self.source.rglob("*"))
        return sorted((str(PurePosixPath(self.dest) / p.relative_to(self.source).as_posix()), p)
                      for p in paths
                      if p.is_file() and ".git" not in p.relative_to(self.source).parts)


def parse(text: str, repo: Path, base: Path | None = None, where: str = "") -> Graft:
    """A `--graft PATH[:DEST]` argument; DEST defaults to PATH's place inside `repo`. From a
    toml's `graft` list: PATH relative to its folder `base`, and `where` names the file."""
    source_text, _, dest = text.partition(":")
    source = ((base or Path.cwd()) / source_text).resolve()
    said = f"{where}: 'build.graft' entry '{text}'" if where else f"--graft {text}"
    if not source.exists():
        raise UserError(f"{said}: {source} does not exist; give a file or folder of "
                        "scenario sources, e.g. --graft bench")
    if not dest:
        if not source.is_relative_to(repo):
            raise UserError(f"{said}: {source} is outside {repo}, so its place in the "
                            f"worktree is unknown; give it: {'' if where else '--graft '}"
                            "PATH:DEST (DEST relative to the repository root)")
        dest = source.relative_to(repo).as_posix()
    parts = PurePosixPath(dest).parts
    if not parts or dest.startswith("/") or ".." in parts or parts[0] == ".git" or \
            dest in (".",):
        raise UserError(f"{said}: the destination '{dest}' must be a path inside the "
                        "repository (relative, no '..', not .git, not the root)")
    return Graft(source, str(PurePosixPath(*parts)))


def fingerprint(grafts: list[Graft]) -> str:
    """Changes whenever a grafted file's place, content or executable bit changes; '' without
    grafts."""
    if not grafts:
        return ""
    digest = hashlib.sha256()
    for graft in grafts:
        for dest, path in graft.files():
            digest.update(dest.encode() + b"\0" + path.read_bytes() + b"\0")
            if _mode(path) & 0o111:   # only then, so that earlier recipes keep their ids
                digest.update(b"x\0")
    return digest.hexdigest()[:16]


def _mode(path: Path) -> int:
    """The permission bits git keeps: executable (0o755) or not (0o644)."""
    return 0o755 if path.stat().st_mode & 0o100 else 0o644


def _stamp(worktree: Path) -> Path:
    return worktree.with_name(worktree.name + ".graft.json")


def _recorded(stamp: Path, worktree: Path) -> dict[str, Any]:
    """The graft `worktree` carries, as its stamp records it; no stamp: none."""
    if not stamp.exists():
        return {"fingerprint": "", "dests": []}
    fix = (f"remove the worktree ('git worktree remove --force {worktree}') and this file; the "
           "next sweep recreates both")
    before = read_json(stamp, "the graft stamp", fix)
    c = Checker(str(stamp), fix)
    c.obj(before, "the stamp")
    c.text(before.get("fingerprint", MISSING), "fingerprint")
    for i, dest in enumerate(c.array(before.get("dests", MISSING), "dests")):
        c.text(dest, json_path("dests", i))
    return before


def _dirty_paths(worktree: Path) -> list[str]:
    status = git(worktree, "status", "--porcelain", "--untracked-files=all", "-z")
    entries = [e for e in status.stdout.split("\0") if e]
    return [entry[3:] for entry in entries if len(entry) > 3]


def checkout(repo: Path, sha: str, grafts: list[Graft], *, submodules: str = "auto",
             tree: Path | None = None) -> Path:
    """The worktree of `sha` with its submodules and exactly `grafts` applied (none: the commit
    as it is, even if a sweep grafted it before). `tree`: a shared worktree to move to `sha`
    (sweeps, bisects) instead of `sha`'s own (ab)."""
    if tree is None:
        worktree = worktrees.worktree(repo, sha)
    elif not tree.exists():
        worktree = worktrees.add_worktree(repo, tree, sha)
    else:
        worktree = tree
        if worktrees.head(tree) != sha:
            _restore(tree)
            worktrees.step(["git", "-C", str(tree), "checkout", "-q", "--detach", sha],
                           f"checking out {sha[:12]} in {tree}")
            git(tree, "clean", "-ffdq")   # e.g. a submodule the new revision does not have
    submodules_of.sync(worktree, repo, submodules)
    apply(worktree, grafts)
    return worktree


def _restore(worktree: Path) -> None:
    """Puts a grafted worktree back to its commit, so that git can move it to another one;
    refuses changes allocbench did not make."""
    stamp = _stamp(worktree)
    _refuse_foreign(worktree, _recorded(stamp, worktree))
    for command in (("reset", "-q", "--hard"), ("clean", "-fdq")):
        git(worktree, *command)
    stamp.unlink(missing_ok=True)


def _refuse_foreign(worktree: Path, before: dict[str, Any]) -> None:
    allowed = [PurePosixPath(d) for d in before["dests"]]
    foreign = [p for p in _dirty_paths(worktree)
               if not any(PurePosixPath(p) == d or d in PurePosixPath(p).parents
                          for d in allowed)]
    if foreign:
        raise UserError(f"{worktree} has changes allocbench did not make ({', '.join(foreign[:3])}"
                        f"{' …' if len(foreign) > 3 else ''}); it only measures commits plus "
                        f"--graft: move your work elsewhere, then 'git worktree remove --force "
                        f"{worktree}'")


def apply(worktree: Path, grafts: list[Graft]) -> None:
    """Makes `worktree` its commit plus `grafts`, touching only what has to change."""
    stamp = _stamp(worktree)
    before = _recorded(stamp, worktree)
    _refuse_foreign(worktree, before)
    now = {"fingerprint": fingerprint(grafts), "dests": [g.dest for g in grafts]}
    if now == before:
        return
    if before["dests"] and before["dests"] != now["dests"]:  # else the copy below suffices
        for command in (("reset", "-q", "--hard"), ("clean", "-fdq")):
            git(worktree, *command)
    if grafts:
        worktrees.announce(f"grafting {', '.join(g.dest for g in grafts)}")
    for graft in grafts:
        _refuse_links_above(worktree, graft.dest)
        files = graft.files()
        _remove_unwanted(worktree, graft.dest, {dest for dest, _ in files})
        for dest, source in files:
            path = _real_parents(worktree, dest)
            if not path.is_symlink() and path.is_file() and \
                    filecmp.cmp(path, source, shallow=False):
                if _mode(path) != _mode(source):
                    path.chmod(_mode(source))
                continue
            if path.is_symlink():
                path.unlink()   # the link itself, never what it points to
            elif path.is_dir():
                shutil.rmtree(path)   # emptied above: the graft has a file here
            shutil.copyfile(source, path)
            path.chmod(_mode(source))   # a grafted build.sh stays executable
    write_atomically(stamp, json.dumps(now))


# A revision may commit a symbolic link where the graft goes, pointing anywhere (outside the
# repository, at the user's home). Nothing is ever written or removed through one.

def _refuse_links_above(worktree: Path, dest: str) -> None:
    """StepFailed (the revision fails with the reason) if DEST or a folder above it is a
    symbolic link in this revision."""
    path = worktree
    for part in PurePosixPath(dest).parts:
        path = path / part
        if path.is_symlink():
            where = path.relative_to(worktree).as_posix()
            raise worktrees.StepFailed(
                f"grafting {dest}", 1,
                f"error: '{where}' is a symbolic link in this revision (to {os.readlink(path)}); "
                "allocbench never writes through one: graft to another --graft PATH:DEST")


def _remove_unwanted(worktree: Path, dest: str, wanted: set[str]) -> None:
    """Removes what DEST has and the graft does not: files and links (a link to a folder is
    removed as a link, never entered)."""
    target = worktree / dest
    if target.is_symlink() or not target.is_dir():
        return
    for folder, dirs, names in os.walk(target, followlinks=False):
        for name in [*names, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))]:
            path = Path(folder, name)
            if path.relative_to(worktree).as_posix() not in wanted:
                path.unlink()


def _real_parents(worktree: Path, dest: str) -> Path:
    """worktree/dest with every folder inside the graft made a real folder (a link there is
    replaced by a folder, its target untouched)."""
    path = worktree
    for part in PurePosixPath(dest).parent.parts:
        path = path / part
        if path.is_symlink():
            path.unlink()
        path.mkdir(exist_ok=True)
    return path / PurePosixPath(dest).name
