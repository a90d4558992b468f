"""The git revision of a checkout: sha, `git describe`, dirty or not."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Revision:
    sha: str | None
    describe: str | None
    dirty: bool

    @property
    def label(self) -> str:
        """A file-name-safe name: the short sha, '-dirty' if the tree has changes."""
        if self.sha is None:
            return "norev"
        return self.sha[:12] + ("-dirty" if self.dirty else "")

    def context_flags(self) -> list[str]:
        """--context flags that put this revision in allocbench-run's results."""
        if self.sha is None:
            return []
        return ["--context", f"revision.sha={self.sha}",
                "--context", f"revision.describe={self.describe}",
                "--context", f"revision.dirty={'true' if self.dirty else 'false'}"]


def git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """git in `repo`, never through a shell; output captured."""
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=False)


def _git(repo: Path, *args: str) -> str | None:
    done = git(repo, *args)
    return done.stdout.strip() if done.returncode == 0 else None


def current(repo: Path) -> Revision:
    sha = _git(repo, "rev-parse", "--verify", "HEAD")
    if sha is None:
        return Revision(None, None, False)
    describe = _git(repo, "describe", "--always", "--dirty", "--tags")
    status = _git(repo, "status", "--porcelain", "--untracked-files=no")
    return Revision(sha, describe, bool(status))
