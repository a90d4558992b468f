"""Checking revisions out in their own git worktrees, building steps quietly, and running one
fixed harness on several plugins with interleaved forks (shared by ab, calibrate and sweeps).

Everything lives under the subject repository's `.allocbench/`, which ignores itself for git:
    worktrees/<sha>/   ab's worktree of <sha> (`git worktree add --detach`), reused
    builds/<sha>/      its build (see buildspec.py), kept across runs
    trees/<key>/       sweeps' and bisects' one worktree (src/) and build folder (build/) per
                       build recipe, moved from revision to revision (incremental builds)
    results/           the sweep store (see store.py)
Revision names are checked by one rule (`accepted`), whether the user typed them or `--tags`
selected them, and resolved to a full sha; no command ever goes through a shell.
"""

from __future__ import annotations

import fcntl
import re
import shutil
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from allocbench.base import proc
from allocbench.base.errors import MeasurementFailed, UserError
from allocbench.base.escape import terminal
from allocbench.harness import runner_exit
from allocbench.history.revision import Revision, git as _git

STATE = ".allocbench"
_SAFE_REVISION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/~^@+-]*")
NAME_RULE = "ASCII letters, digits and . _ / ~ ^ @ + -, starting with a letter, digit or _, no '..'"


def _print(what: str) -> None:
    print(f"allocbench: {terminal(what)}", file=sys.stderr, flush=True)


_announcers: list[Callable[[str], None]] = [_print]


def announce(what: str) -> None:
    """Says on the terminal what is being done; sweeps add their progress to it."""
    _announcers[-1](what)


@contextmanager
def announcing(announcer: Callable[[str], None]) -> Iterator[None]:
    _announcers.append(announcer)
    try:
        yield
    finally:
        _announcers.pop()


class StepFailed(MeasurementFailed):
    """A build or checkout step exited non-zero; keeps its whole output for a log."""

    def __init__(self, what: str, code: int, output: str):
        self.what, self.code, self.output = what, code, output
        super().__init__(f"{what} failed (exit code {code}):\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.output.strip().splitlines()[-lines:])


def step(command: list[str], what: str, *, cwd: Path | None = None,
         env: dict[str, str] | None = None) -> str:
    """Runs a build step quietly (never through a shell): its output, or StepFailed with it."""
    announce(what)
    try:
        done = proc.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, text=True, errors="replace")
    except OSError as e:
        raise StepFailed(what, 127, f"cannot run {command[0]}: {e.strerror}") from None
    if done.returncode != 0:
        raise StepFailed(what, done.returncode, done.stdout)
    return done.stdout


_COMPILED = re.compile(r"\bBuilding (?:C|CXX|CUDA|ASM) object ")


def compiled(output: str) -> int:
    """How many files a build's output says it compiled (CMake's make and Ninja generators:
    `[ 40%] Building CXX object …`, `[3/9] Building CXX object …`)."""
    return sum(1 for line in output.splitlines() if _COMPILED.search(line))


def toplevel(path: Path) -> Path:
    """The root of the git checkout that contains `path`."""
    done = _git(path, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise UserError(f"{path}: not inside a git repository; pass --repo PATH")
    return Path(done.stdout.strip())


def accepted(name: str) -> bool:
    """Whether `name` may name a revision (NAME_RULE): the one rule of every command that takes
    revision names (ab, profile, sweep, sweep-table, bisect) and of the tags `--tags` selects, so
    that every tag a sweep measured can be given to the others. Nothing reaches a shell; the rule
    keeps out ranges (`..`), options (a leading `-`) and characters a reader cannot type back
    or see (non-ASCII: a bidi override, a look-alike letter)."""
    return ".." not in name and _SAFE_REVISION.fullmatch(name) is not None


def resolve(repo: Path, name: str) -> str:
    """The full sha of the commit `name` names (a branch, tag, sha, HEAD~2 …)."""
    if not accepted(name):
        raise UserError(f"'{name}' is not accepted as a revision: use a branch, tag or sha "
                        f"({NAME_RULE})")
    done = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}")
    if done.returncode != 0:
        raise UserError(f"{repo}: no commit named '{name}'; check the name with "
                        f"'git -C {repo} log --oneline'")
    return done.stdout.strip()


def revision(repo: Path, sha: str) -> Revision:
    describe = _git(repo, "describe", "--always", "--tags", sha).stdout.strip() or sha[:12]
    return Revision(sha, describe, False)


def state_dir(repo: Path) -> Path:
    """`.allocbench/` of the subject repository, ignored by git through its own .gitignore."""
    state = repo / STATE
    state.mkdir(exist_ok=True)
    ignore = state / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# allocbench's worktrees, builds and results: never committed\n*\n")
    return state


def worktree(repo: Path, sha: str) -> Path:
    """A worktree of `repo` checked out at `sha`, created once and reused (ab's sides)."""
    path = state_dir(repo) / "worktrees" / sha
    if path.exists():
        if head(path) == sha:
            return path
        _git(repo, "worktree", "remove", "--force", str(path))
        shutil.rmtree(path, ignore_errors=True)
    path.with_name(path.name + ".graft.json").unlink(missing_ok=True)
    return add_worktree(repo, path, sha)


def add_worktree(repo: Path, path: Path, sha: str) -> Path:
    """`git worktree add --detach` at `path` (which must not exist)."""
    _git(repo, "worktree", "prune")
    path.parent.mkdir(parents=True, exist_ok=True)
    step(["git", "-C", str(repo), "worktree", "add", "--detach", str(path), sha],
          f"checking out {sha[:12]} in {path}")
    return path


def head(path: Path) -> str | None:
    """The commit checked out at `path`, None when it is no checkout."""
    done = _git(path, "rev-parse", "--verify", "--quiet", "HEAD")
    return done.stdout.strip() if done.returncode == 0 else None


@contextmanager
def locked(repo: Path, name: str, what: str | None = None) -> Iterator[None]:
    """Holds a worktree and its build folder (`name`: ab's sha, or a shared tree's name)
    against other allocbench processes (two abs of one revision, two sweeps of one recipe)
    while it is checked out, built and run."""
    folder = state_dir(repo) / "worktrees"
    folder.mkdir(exist_ok=True)
    with open(folder / f"{name}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            announce(f"waiting for another allocbench that is using {what or name[:12]}")
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def build_folder(repo: Path, sha: str) -> Path:
    """The build folder of `sha`, one per revision, kept across runs (ab's sides)."""
    return state_dir(repo) / "builds" / sha


def shared_tree(repo: Path, key: str) -> tuple[Path, Path]:
    """(worktree, build folder) that sweeps and bisects with one build recipe share: each
    revision is checked out over the previous one, so git rewrites only the files that differ
    and the build recompiles only what they touch."""
    root = state_dir(repo) / "trees" / key
    return root / "src", root / "build"


@dataclass(frozen=True)
class Subject:
    """One side of an interleaved run: its name (a folder name), plugins and context."""
    name: str
    plugins: tuple[Path, ...]
    context: tuple[str, ...] = ()   # allocbench-run --context flags, e.g. the revision


def run_interleaved(runner: Path, subjects: list[Subject], forks: int, out: Path,
                    options: list[str]) -> dict[str, Path]:
    """Runs `runner` forks × len(subjects) times, alternating subjects inside each fork round
    (A, B, A, B …) so that machine drift hits every side alike. Writes
    out/<subject>/fork-<i>.json (stale forks of an earlier run are removed first) and returns
    each subject's folder. `options` go to every run (--filter, --repetitions …)."""
    folders = {}
    for subject in subjects:
        folder = out / subject.name
        folder.mkdir(parents=True, exist_ok=True)
        for stale in (*folder.glob("*.json"), *folder.glob("*.json.partial")):
            stale.unlink()
        folders[subject.name] = folder
    for fork in range(1, forks + 1):
        for subject in subjects:
            result = folders[subject.name] / f"fork-{fork}.json"
            command = [str(runner), "--quiet", "--out", str(result), *subject.context, *options]
            before = runner_exit.snapshot(result)
            for plugin in subject.plugins:
                command += ["--plugin", str(plugin)]
            announce(f"fork {fork}/{forks} of {subject.name}")
            done = proc.run(command, capture_output=True, text=True, errors="replace")
            runner_exit.check(done, runner, f"fork {fork} of {subject.name}", result, before)
    return folders


def run_paired(runner: Path, base: Path, cand: Path, out: Path, options: list[str]) -> Path:
    """The paired time pass of plugin `cand` against `base` (allocbench-run --against) into
    `out`, which it returns; an instance that failed is recorded there. KeyboardInterrupt,
    UserError or MeasurementFailed as runner_exit.check says."""
    out.unlink(missing_ok=True)
    before = runner_exit.snapshot(out)
    announce("paired time pass: base and candidate together")
    done = proc.run([str(runner), "--quiet", "--out", str(out), "--plugin", str(base),
                     "--against", str(cand), *options],
                    capture_output=True, text=True, errors="replace")
    runner_exit.check(done, runner, "the paired time pass", out, before)
    return out
