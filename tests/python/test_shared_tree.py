"""The one worktree that a sweep or bisect moves from revision to revision
(graft.checkout(tree=…)): git rewrites only the files that differ, so an incremental build
recompiles only those; grafts are taken off and put back around each move, modes included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from allocbench.base.errors import UserError
from allocbench.history import graft, worktrees
from test_submodules import commit, run_git


@pytest.fixture
def repo(tmp_path) -> dict:
    repo = tmp_path / "repo"
    repo.mkdir()
    run_git(repo, "init", "-q", "-b", "main")
    first = commit(repo, {"a.cc": "int a = 1;\n", "b.cc": "int b = 1;\n",
                          "bench/s.cc": "// old scenario\n"}, "first")
    second = commit(repo, {"a.cc": "int a = 2;\n"}, "second: a.cc only")
    today = tmp_path / "today"
    (today / "bench").mkdir(parents=True)
    (today / "bench" / "s.cc").write_text("// today's scenario\n")
    (today / "bench" / "build.sh").write_text("#!/bin/sh\necho built\n")
    (today / "bench" / "build.sh").chmod(0o755)
    return {"repo": repo, "first": first, "second": second, "tree": tmp_path / "tree",
            "graft": graft.Graft(today / "bench", "bench")}


def stamp(path: Path) -> int:
    return path.stat().st_mtime_ns


def test_moving_rewrites_only_the_files_that_differ(repo):
    tree = graft.checkout(repo["repo"], repo["first"], [], tree=repo["tree"])
    past = 1_000_000_000 * 10**9   # 2001: any rewrite gives a newer time
    for name in ("a.cc", "b.cc"):
        os.utime(tree / name, ns=(past, past))
    graft.checkout(repo["repo"], repo["second"], [], tree=repo["tree"])
    assert (tree / "a.cc").read_text() == "int a = 2;\n" and stamp(tree / "a.cc") > past
    assert stamp(tree / "b.cc") == past          # unchanged between the revisions: untouched
    assert worktrees.head(tree) == repo["second"]


def test_grafts_go_on_with_their_modes_and_come_off_when_moving(repo):
    tree = graft.checkout(repo["repo"], repo["first"], [repo["graft"]], tree=repo["tree"])
    assert (tree / "bench" / "s.cc").read_text() == "// today's scenario\n"
    assert (tree / "bench" / "build.sh").stat().st_mode & 0o777 == 0o755
    graft.checkout(repo["repo"], repo["second"], [], tree=repo["tree"])   # no graft now
    assert (tree / "bench" / "s.cc").read_text() == "// old scenario\n"
    assert not (tree / "bench" / "build.sh").exists()
    assert run_git(tree, "status", "--porcelain") == ""


def test_a_mode_change_alone_changes_the_graft(repo):
    before = graft.fingerprint([repo["graft"]])
    script = repo["graft"].source / "build.sh"
    script.chmod(0o644)
    assert graft.fingerprint([repo["graft"]]) != before
    tree = graft.checkout(repo["repo"], repo["first"], [repo["graft"]], tree=repo["tree"])
    assert (tree / "bench" / "build.sh").stat().st_mode & 0o777 == 0o644
    script.chmod(0o755)
    graft.checkout(repo["repo"], repo["first"], [repo["graft"]], tree=repo["tree"])
    assert (tree / "bench" / "build.sh").stat().st_mode & 0o777 == 0o755


def test_changes_allocbench_did_not_make_stop_the_move(repo):
    tree = graft.checkout(repo["repo"], repo["first"], [repo["graft"]], tree=repo["tree"])
    (tree / "b.cc").write_text("int b = 42;  // debugging\n")
    with pytest.raises(UserError, match=r"has changes allocbench did not make \(b.cc\)"):
        graft.checkout(repo["repo"], repo["second"], [repo["graft"]], tree=repo["tree"])
    assert (tree / "b.cc").read_text() == "int b = 42;  // debugging\n"   # kept


def test_what_git_ignores_in_the_scenario_folder_is_not_grafted(repo):
    today = repo["graft"].source.parent
    run_git(today, "init", "-q")
    (today / ".gitignore").write_text("build/\n")
    (today / "bench" / "build").mkdir()
    (today / "bench" / "build" / "CMakeCache.txt").write_text("# a local build\n")
    before = graft.fingerprint([repo["graft"]])
    assert [dest for dest, _ in repo["graft"].files()] == ["bench/build.sh", "bench/s.cc"]
    (today / "bench" / "build" / "CMakeCache.txt").write_text("# rebuilt\n")
    assert graft.fingerprint([repo["graft"]]) == before    # the recipe does not follow it
    (today / "bench" / "new.cc").write_text("// a new scenario, not yet added\n")
    assert "bench/new.cc" in [dest for dest, _ in repo["graft"].files()]
