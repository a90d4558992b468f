"""realistic_subject.py on its own: the history it writes has the tags, the submodule, the
required option and the bench project it promises, and the plugin built from bench/ (or from
the project, plugin_in_project) measures exactly the numbers its knobs say. Nothing here uses
sweep or bisect: these guard the generator that their tests rely on."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import realistic_subject as rs
from conftest import count_only


@pytest.fixture(scope="module")
def subject(tmp_path_factory) -> rs.Subject:
    return rs.make_subject(tmp_path_factory.mktemp("realistic"))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def cmake(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["cmake", *args], capture_output=True, text=True)


def build_and_count(source: Path, build: Path, runner: Path, *flags: str) -> dict:
    """Configures `source` (Release), builds the plugin and returns what the count pass
    measures, in the shape of Commit.expected()."""
    done = cmake("-S", str(source), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", *flags)
    assert done.returncode == 0, done.stderr
    done = cmake("--build", str(build), "--target", rs.TARGET, "-j", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    found = count_only(runner, build / rs.PLUGIN, build / "counts.json")
    return {name: {"bytes_per_op": alloc["bytes_per_op"], "allocs_per_op": alloc["allocs_per_op"]}
            for name, alloc in found.items()}


def one_line(text: str) -> str:
    """CMake wraps messages at its own width."""
    return " ".join(text.split())


def test_the_releases_are_tagged_in_version_order(subject):
    assert git(subject.repo, "tag", "--list", "--sort=version:refname").split() == \
        ["v1.0", "v1.1", "v1.2", "v1.3"]
    for commit in subject.commits:
        if commit.tag:
            assert git(subject.repo, "rev-parse", f"{commit.tag}^{{commit}}") == commit.sha
    assert git(subject.repo, "rev-parse", "HEAD") == subject.commits[-1].sha
    assert git(subject.repo, "status", "--porcelain") == ""


def test_the_two_step_change_lies_between_consecutive_tags_with_a_quiet_commit(subject):
    first, second = subject.two_step
    steps = subject.commits[first.index - 2:second.index]  # the commit before first … second
    assert [c.expected()[rs.LOG_LINE]["allocs_per_op"] for c in steps] == [3, 4, 4, 6]
    assert subject.commits[rs.QUIET - 1].expected() == first.expected()
    assert subject.by_tag("v1.1").index < first.index and second is subject.by_tag("v1.2")
    assert subject.change_points(rs.LOG_LINE, "allocs_per_op") == [first, second]
    assert [c.index for c in subject.change_points(rs.BATCH, "bytes_per_op")] == [2, 8]
    assert subject.change_points(rs.BATCH, "allocs_per_op") == []


def test_later_commits_touch_one_or_two_paths_and_bench_comes_last(tmp_path):
    subject = rs.make_subject(tmp_path, units=3, extra_commits=3)
    assert len(subject.commits) == 12
    for commit in subject.commits[1:-1]:
        paths = git(subject.repo, "diff-tree", "--no-commit-id", "--name-only", "-r", commit.sha)
        assert 1 <= len(paths.split()) <= 2, (commit.subject, paths)
    added = git(subject.repo, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").split()
    assert added == ["allocbench.toml", "bench/CMakeLists.txt", "bench/logging.cc"]
    assert git(subject.repo, "ls-tree", "HEAD~1", "bench") == ""


def test_the_submodule_url_does_not_resolve_but_the_checkout_has_it(subject):
    url = git(subject.repo, "config", "-f", ".gitmodules", f"submodule.{rs.SUBMODULE}.url")
    assert url == rs.UNREACHABLE_URL
    assert (subject.repo / rs.SUBMODULE / "include" / "tinyfmt" / "format.h").is_file()
    assert git(subject.repo / rs.SUBMODULE, "rev-parse", "HEAD") == subject.upstream_commits["1.2"]
    for commit in subject.commits:  # old revisions record older tinyfmt commits
        link = git(subject.repo, "ls-tree", commit.sha, rs.SUBMODULE).split()
        assert link[:3] == ["160000", "commit", subject.upstream_commits[commit.tinyfmt]]
    assert [c.tinyfmt for c in subject.commits[:8]] == ["1.0"] * 2 + ["1.1"] * 4 + ["1.2"] * 2


def test_configuring_without_the_backend_names_the_option(subject, tmp_path):
    done = cmake("-S", str(subject.repo), "-B", str(tmp_path))
    assert done.returncode != 0
    assert rs.BACKEND_MESSAGE in one_line(done.stderr)


def test_the_bench_project_without_a_subject_dir_says_what_to_set(subject, tmp_path):
    done = cmake("-S", str(subject.bench), "-B", str(tmp_path))
    assert done.returncode != 0
    assert rs.SUBJECT_DIR_MESSAGE in one_line(done.stderr)


def test_an_empty_backend_given_to_the_bench_project_shows_libtraces_error(subject, prefix,
                                                                          tmp_path):
    done = cmake("-S", str(subject.bench), "-B", str(tmp_path),
                 f"-DALLOCBENCH_SUBJECT_DIR={subject.repo}", f"-DCMAKE_PREFIX_PATH={prefix}",
                 f"-D{rs.BACKEND_OPTION}=")
    assert done.returncode != 0
    assert rs.BACKEND_MESSAGE in one_line(done.stderr)


def test_the_bench_project_measures_head_exactly(subject, prefix, runner, tmp_path):
    found = build_and_count(subject.bench, tmp_path, runner,
                            f"-DALLOCBENCH_SUBJECT_DIR={subject.repo}",
                            f"-DCMAKE_PREFIX_PATH={prefix}")
    assert found == subject.commits[-1].expected()


def test_the_in_project_plugin_measures_an_old_release_only_with_its_own_submodule(
        prefix, runner, tmp_path):
    subject = rs.make_subject(tmp_path / "history", units=1, plugin_in_project=True)
    tree = subject.checkout("v1.0", tmp_path / "v1.0")
    found = build_and_count(tree, tmp_path / "build", runner, f"-D{rs.BACKEND_OPTION}=null",
                            f"-DCMAKE_PREFIX_PATH={prefix}")
    assert found == subject.by_tag("v1.0").expected()

    git(tree / rs.SUBMODULE, "checkout", "-q", subject.upstream_commits["1.2"])  # HEAD's
    done = cmake("--build", str(tmp_path / "build"), "--target", rs.TARGET)
    assert done.returncode != 0 and "FormatDecimal" in done.stdout + done.stderr
