"""Submodules of swept revisions (submodules.py, graft.checkout): offline from the user's own
checkout, from their URL, or not at all; moved with the revision in a shared worktree; never
written into the user's .git/config."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from allocbench.history import graft, submodules, worktrees
from allocbench.history.revision import git

UNREACHABLE = "https://example.invalid/dep.git"


def run_git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@example", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example")
    done = subprocess.run(["git", "-c", "protocol.file.allow=always", "-C", str(repo), *args],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    run_git(repo, "add", "-A")
    run_git(repo, "commit", "-q", "-m", message)
    return run_git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """app/ with submodule dep/ (which has its own submodule inner/), both recorded with
    unreachable URLs; the user's checkout has them checked out. dep moves between app's two
    commits."""
    root = tmp_path_factory.mktemp("submodules")
    inner, dep, app = root / "inner.git", root / "dep-upstream", root / "app"
    for repo in (inner, dep, app):
        repo.mkdir()
        run_git(repo, "init", "-q", "-b", "main")
    commit(inner, {"inner.h": "#define INNER 1\n"}, "inner")
    commit(dep, {"dep.h": "#define DEP 1\n"}, "dep v1")
    run_git(dep, "submodule", "add", "-q", str(inner), "inner")
    run_git(dep, "config", "-f", ".gitmodules", "submodule.inner.url", "../inner.git")
    dep_v1 = commit(dep, {}, "dep v1 with inner")
    dep_v2 = commit(dep, {"dep.h": "#define DEP 2\n"}, "dep v2")
    run_git(app, "submodule", "add", "-q", str(dep), "third_party/dep")
    run_git(app, "-C", "third_party/dep", "checkout", "-q", dep_v1)
    run_git(app, "config", "-f", ".gitmodules", "submodule.third_party/dep.url", UNREACHABLE)
    old = commit(app, {"main.cc": "int main() {}\n"}, "app on dep v1")
    run_git(app, "-C", "third_party/dep", "checkout", "-q", dep_v2)
    new = commit(app, {}, "app on dep v2")
    run_git(app, "submodule", "update", "-q", "--init")   # dep is there: no clone needed
    run_git(app / "third_party" / "dep", "submodule", "update", "-q", "--init")  # ../inner.git
    return {"app": app, "old": old, "new": new, "dep_v1": dep_v1, "dep_v2": dep_v2}


def config_of(repo: Path) -> str:
    return (repo / ".git" / "config").read_text()


def test_auto_takes_them_from_the_users_checkout_offline(project, tmp_path):
    app = project["app"]
    before = config_of(app)
    tree = tmp_path / "tree"
    worktrees.state_dir(app)
    source = graft.checkout(app, project["old"], [], tree=tree)
    assert worktrees.head(source / "third_party" / "dep") == project["dep_v1"]
    assert (source / "third_party" / "dep" / "dep.h").read_text() == "#define DEP 1\n"
    assert (source / "third_party" / "dep" / "inner" / "inner.h").read_text() == \
        "#define INNER 1\n"
    # moved to the next revision in place: the submodule follows
    graft.checkout(app, project["new"], [], tree=tree)
    assert worktrees.head(tree / "third_party" / "dep") == project["dep_v2"]
    assert (tree / "third_party" / "dep" / "dep.h").read_text() == "#define DEP 2\n"
    assert git(tree, "status", "--porcelain").stdout == ""
    assert config_of(app) == before


def test_remote_fails_offline_naming_the_submodule_and_the_ways_out(project, tmp_path):
    with pytest.raises(worktrees.StepFailed) as e:
        graft.checkout(project["app"], project["old"], [], submodules="remote",
                       tree=tmp_path / "tree")
    assert e.value.what == "checking out submodule third_party/dep"
    assert f"needs commit {project['dep_v1']}, which neither source has" in e.value.output
    assert UNREACHABLE in e.value.output
    assert "--submodules none" in e.value.output


def test_a_failed_checkout_is_never_measured_without_its_submodules(project, tmp_path):
    tree = tmp_path / "tree"
    with pytest.raises(worktrees.StepFailed):
        graft.checkout(project["app"], project["old"], [], submodules="remote", tree=tree)
    with pytest.raises(worktrees.StepFailed):   # the same worktree again: checked again
        graft.checkout(project["app"], project["old"], [], submodules="remote", tree=tree)
    source = graft.checkout(project["app"], project["old"], [], tree=tree)   # auto: fixed
    assert worktrees.head(source / "third_party" / "dep") == project["dep_v1"]


def test_none_leaves_them_empty(project, tmp_path):
    source = graft.checkout(project["app"], project["new"], [], submodules="none",
                            tree=tmp_path / "tree")
    assert list((source / "third_party" / "dep").iterdir()) == []


def test_relative_urls_resolve_against_the_superprojects_remote():
    from allocbench.history.submodules import _join
    assert _join("https://host/org/app.git", "../inner.git") == "https://host/org/inner.git"
    assert _join("/srv/git/app", "./sub") == "/srv/git/app/sub"


def test_auto_leaves_a_submodule_neither_source_has_empty_and_says_so(project, tmp_path, capsys):
    """A checkout whose submodules were never initialised, offline: the project may build
    without them (dd-trace-cpp's benchmark submodules), so auto goes on and names them."""
    user = tmp_path / "user"
    run_git(tmp_path, "clone", "-q", str(project["app"]), str(user))   # no submodule update
    worktrees.state_dir(user)
    source = graft.checkout(user, project["old"], [], tree=tmp_path / "tree")
    assert list((source / "third_party" / "dep").iterdir()) == []
    assert submodules.left_empty(source) == [f"third_party/dep ({project['dep_v1'][:12]})"]
    said = capsys.readouterr().err
    assert (f"submodule third_party/dep left empty: error: submodule 'third_party/dep' needs "
            f"commit {project['dep_v1']}, which neither source has; fix: check it out in your "
            "own checkout (git submodule update --init)") in said
    with pytest.raises(worktrees.StepFailed):   # remote still wants every one of them
        graft.checkout(user, project["old"], [], submodules="remote", tree=tmp_path / "tree")
    # the user's own checkout, with them checked out: nothing is left empty
    assert submodules.left_empty(graft.checkout(project["app"], project["old"], [],
                                                tree=tmp_path / "full")) == []


def test_the_note_of_submodules_left_empty_says_the_fix():
    assert submodules.empty_note(["a (0123456789ab)"]) == (
        "submodule a (0123456789ab) left empty: neither your checkout nor the URL in .gitmodules "
        "has the commit; fix: check it out in your checkout (git submodule update --init), "
        "which auto uses offline, or set [build] submodules = \"none\" if the project builds "
        "without it")
    assert submodules.empty_note(["a (0)", "b/c (1)"]).startswith("submodules a (0), b/c (1) ")
