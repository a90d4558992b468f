"""Which revisions a sweep or bisect covers: named ones, release tags, a range with a step, the
first-parent history between two commits. Names are checked and resolved to full shas by
worktrees.resolve; git is never run through a shell."""

from __future__ import annotations

from pathlib import Path

from allocbench.base.errors import UserError
from allocbench.history import worktrees
from allocbench.history.revision import git


def tags(repo: Path, pattern: str) -> list[str]:
    """The commits of the tags matching `pattern`, in version order (v1.9 before v1.10). A tag
    that is no revision name (revisions.accepted) is skipped, and said, before anything is
    measured: a sweep would store it under a label that sweep-table and bisect refuse, and one
    odd tag should not stop a sweep over every release (its commit can be named by sha)."""
    if pattern.startswith("-"):
        raise UserError(f"--tags {pattern}: a tag pattern cannot start with '-'")
    listed = git(repo, "tag", "--list", "--sort=version:refname", pattern)
    names = listed.stdout.split()
    if listed.returncode != 0 or not names:
        raise UserError(f"{repo}: no tag matches '{pattern}'; see the tags with "
                        f"'git -C {repo} tag --list'")
    shas, skipped = [], []
    for name in names:
        done = git(repo, "rev-parse", "--verify", "--quiet", f"refs/tags/{name}^{{commit}}")
        if done.returncode != 0:  # a tag of a tree or blob names no revision
            continue
        sha = done.stdout.strip()
        if worktrees.accepted(name):
            shas.append(sha)
        else:
            skipped.append(name)
            worktrees.announce(f"skipping tag '{name}': not accepted as a revision name "
                               f"({worktrees.NAME_RULE}); to measure its commit, name it by "
                               f"sha: {sha[:12]}")
    if skipped and not shas:
        raise UserError(f"--tags {pattern}: no tag it matches is accepted as a revision name "
                        f"({worktrees.NAME_RULE}): {', '.join(skipped)}; name their commits by "
                        "sha instead")
    return shas


def first_parent(repo: Path, good: str, bad: str) -> list[str]:
    """The commits after `good` up to and including `bad` on bad's first-parent line, oldest
    first; `good` must be on that line."""
    line = git(repo, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}")
    shas = line.stdout.split()
    if line.returncode != 0 or not shas or \
            git(repo, "rev-parse", f"{shas[0]}^").stdout.strip() != good:
        raise UserError(f"{good[:12]} is not on the first-parent history of {bad[:12]}; give "
                        "an older revision first, e.g. a release tag and a later commit of the "
                        "same branch")
    return shas


def parse_range(repo: Path, text: str) -> tuple[str, str]:
    first, sep, last = text.partition("..")
    if not sep or not first or not last or last.startswith("."):
        raise UserError(f"--range {text}: write it as OLD..NEW, e.g. --range v1.0..v2.0")
    return worktrees.resolve(repo, first), worktrees.resolve(repo, last)


def sweep_range(repo: Path, text: str, every: int) -> list[str]:
    """OLD, then every `every`-th first-parent commit after it, and always NEW."""
    old, new = parse_range(repo, text)
    if old == new:
        raise UserError(f"--range {text} has no commits: both ends are {old[:12]}")
    line = first_parent(repo, old, new)
    picked = [old] + line[every - 1::every]
    return picked if picked[-1] == new else picked + [new]


def select(repo: Path, names: list[str], tag_pattern: str | None, range_text: str | None,
           every: int) -> list[str]:
    """Tags (version order), then the range, then the named revisions; each commit once."""
    if every != 1 and range_text is None:
        raise UserError(f"--every {every} is the step of --range; give --range OLD..NEW too")
    shas: list[str] = []
    if tag_pattern is not None:
        shas += tags(repo, tag_pattern)
    if range_text is not None:
        shas += sweep_range(repo, range_text, every)
    shas += [worktrees.resolve(repo, name) for name in names]
    if not shas:
        raise UserError("no revisions to measure: name some (e.g. v1.0 v1.1 main), or give "
                        "--tags 'v1.*' or --range v1.0..main")
    return list(dict.fromkeys(shas))
