"""The git submodules of a revision's worktree, put at the commits that revision records.

allocbench clones each submodule itself, as a plain repository at its path inside the worktree,
instead of `git submodule update`: that command writes the submodule URLs into the user's own
.git/config (a linked worktree shares it) and only knows the URL in .gitmodules, so an offline
machine could measure nothing. Modes (`--submodules`):

    auto     from the user's checkout when it has that submodule checked out (offline, hard
             links, no network), else from the URL in .gitmodules; nested submodules alike.
             One that neither has is left empty, and said so (left_empty): many projects
             build without their benchmark or test submodules, and a build that needs it
             fails with that reason and its fix in the note
    remote   always from the URL in .gitmodules (what `git submodule update --init
             --recursive` would fetch)
    none     left empty: for projects that build without them (recorded in the recipe, since
             the build may differ)

Every checkout verifies each submodule's HEAD against the commit the revision records, so a
worktree whose submodules failed once is tried again, and under remote never measured without
them.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from allocbench.history.revision import git
from allocbench.history.worktrees import StepFailed, announce

MODES = ("auto", "remote", "none")
DEFAULT = "auto"
_LOCAL = ("-c", "protocol.file.allow=always")   # cloning a local path is what auto is for


def sync(worktree: Path, source: Path, mode: str, origin: Path | None = None) -> None:
    """Puts every submodule of `worktree` (recursively) at its recorded commit. `source` is the
    same place in the user's checkout (where auto looks first); `origin` the repository whose
    remote resolves relative URLs (../dep.git)."""
    if mode == "none" or not (worktree / ".gitmodules").is_file():
        return
    for name, path, commit in _recorded(worktree):
        url = _url(worktree, name, origin or source)
        where = worktree / path
        if _head(where) != commit:
            try:
                _place(where, commit, url, source / path if mode == "auto" else None, name)
            except StepFailed as e:
                if mode != "auto":
                    raise
                _run(["git", "-C", str(where.parent), "clean", "-ffdq", "--", where.name])
                announce(f"submodule {name} left empty: {e.output.splitlines()[0]}")
                continue
        sync(where, source / path, mode, (origin or source) / path)


def left_empty(worktree: Path) -> list[str]:
    """The submodules of `worktree` (recursively) that are not at the commit it records, as
    `path (commit)`: what auto left empty."""
    if not (worktree / ".gitmodules").is_file():
        return []
    found = []
    for _, path, commit in _recorded(worktree):
        where = worktree / path
        if _head(where) != commit:
            found.append(f"{path} ({commit[:12]})")
        else:
            found += [f"{path}/{inner}" for inner in left_empty(where)]
    return found


def empty_note(paths: list[str]) -> str:
    """The one-line note of a revision measured, or failed, with submodules left empty."""
    return (f"submodule{'s' if len(paths) > 1 else ''} {', '.join(paths)} left empty: neither "
            "your checkout nor the URL in .gitmodules has the commit; fix: check it out in "
            "your checkout (git submodule update --init), which auto uses offline, or set "
            "[build] submodules = \"none\" if the project builds without it")


def _recorded(worktree: Path) -> list[tuple[str, str, str]]:
    """(name, path, commit) of each submodule the checked-out commit records."""
    listed = git(worktree, "config", "-f", ".gitmodules", "--get-regexp", r"^submodule\..*\.path$")
    paths = {}
    for line in listed.stdout.splitlines():
        key, _, path = line.partition(" ")
        paths[path] = key[len("submodule."):-len(".path")]
    found = []
    tree = git(worktree, "ls-tree", "-r", "-z", "HEAD", "--", *paths) if paths else None
    for entry in (tree.stdout.split("\0") if tree else []):
        meta, _, path = entry.partition("\t")
        if meta.split(" ")[:2] == ["160000", "commit"]:
            found.append((paths[path], path, meta.split(" ")[2]))
    return found


def _url(worktree: Path, name: str, origin: Path) -> str:
    url = git(worktree, "config", "-f", ".gitmodules", f"submodule.{name}.url").stdout.strip()
    if url.startswith(("./", "../")):   # relative to the superproject's own remote
        remote = git(origin, "remote", "get-url", "origin")
        base = remote.stdout.strip() if remote.returncode == 0 else str(origin)
        url = _join(base, url)
    return url


def _join(base: str, relative: str) -> str:
    parts = base.rstrip("/").split("/")
    for part in relative.split("/"):
        if part == "..":
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts)


def _head(where: Path) -> str | None:
    if not (where / ".git").exists():
        return None
    done = git(where, "rev-parse", "--verify", "--quiet", "HEAD")
    return done.stdout.strip() if done.returncode == 0 else None


def _is_checkout(path: Path) -> bool:
    if not (path / ".git").exists():
        return False
    top = git(path, "rev-parse", "--show-toplevel")
    return top.returncode == 0 and Path(top.stdout.strip()).resolve() == path.resolve()


def _place(where: Path, commit: str, url: str, local: Path | None, name: str) -> None:
    """Clones (once) and checks out `commit` at `where`: from `local` when it has the commit,
    else from `url`; StepFailed naming the submodule and the ways out."""
    tried = []
    sources = ([str(local)] if local is not None and _is_checkout(local) else []) + [url]
    for source in sources:
        announce(f"submodule {name} at {commit[:12]} from {source}")
        if not (where / ".git").exists():
            where.mkdir(parents=True, exist_ok=True)
            if any(where.iterdir()):   # left by a failed attempt: start clean
                _run(["git", "-C", str(where.parent), "clean", "-ffdq", "--", where.name])
            done = _run(["git", *_LOCAL, "clone", "-q", "--no-checkout", source, str(where)])
        elif not _has(where, commit):
            done = _run(["git", *_LOCAL, "-C", str(where), "fetch", "-q", source])
        else:
            done = None
        if _has(where, commit):
            checked = _run(["git", "-C", str(where), "checkout", "-q", "--force", "--detach",
                            commit])
            if checked.returncode == 0:
                return
            done = checked
        tried.append(f"{source}: {(done.stdout if done else '').strip() or 'no such commit'}")
    raise StepFailed(
        f"checking out submodule {name}", 1,
        f"error: submodule '{name}' needs commit {commit}, which neither source has; fix: "
        "check it out in your own checkout (git submodule update --init), which --submodules "
        "auto uses offline, or --submodules none if the project builds without it\n  "
        + "\n  ".join(tried))


def _has(where: Path, commit: str) -> bool:
    return git(where, "cat-file", "-e", f"{commit}^{{commit}}").returncode == 0


def _run(command: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0")   # never wait for a password
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", env=env, check=False)
