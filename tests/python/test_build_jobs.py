"""$ALLOCBENCH_JOBS caps every build allocbench runs (the harness's, through
project.configure_and_build), as docs/gating.md says, and --jobs (ab, profile, sweep, bisect)
and [build] jobs win over it."""

from __future__ import annotations

import os

import pytest

from allocbench.base.errors import UserError
from allocbench.harness import project
from docs_pages import folded


@pytest.fixture
def steps(monkeypatch, tmp_path):
    """The commands configure_and_build would run, recorded, never run."""
    seen: list[list[str]] = []
    monkeypatch.setattr(project, "_run", lambda command, what: seen.append(command))
    (tmp_path / "CMakeCache.txt").write_text("")   # configured: only the build step runs
    return seen


def test_the_harness_build_takes_allocbench_jobs_else_one_per_cpu(steps, tmp_path, monkeypatch):
    monkeypatch.delenv("ALLOCBENCH_JOBS", raising=False)
    project.configure_and_build(tmp_path, targets=["t"])
    monkeypatch.setenv("ALLOCBENCH_JOBS", " 3 ")
    project.configure_and_build(tmp_path, targets=["t"])
    project.configure_and_build(tmp_path, targets=["t"], jobs=1)   # --jobs / [build] jobs
    assert [s[s.index("-j") + 1] for s in steps] == [str(os.cpu_count()), "3", "1"]


@pytest.mark.parametrize("text", ["0", "-2", "two", "1.5"])
def test_a_bad_allocbench_jobs_is_refused_naming_it(steps, tmp_path, monkeypatch, text):
    monkeypatch.setenv("ALLOCBENCH_JOBS", text)
    with pytest.raises(UserError, match=rf"^ALLOCBENCH_JOBS='{text}': give a whole number"):
        project.configure_and_build(tmp_path, targets=["t"])
    assert steps == []


def test_the_guide_says_where_allocbench_jobs_applies():
    assert "`ALLOCBENCH_JOBS=N` caps every build allocbench runs" in folded("gating")


@pytest.mark.parametrize("argv", [["ab", "--base", "HEAD", "--cand", "HEAD"],
                                  ["profile", "a/b", "--rev", "HEAD"],
                                  ["profile", "a/b"]])
def test_ab_and_profile_build_the_harness_with_the_jobs_given(argv, tmp_path, monkeypatch,
                                                               capsys):
    import subprocess
    from allocbench import cli
    from allocbench.base import packages
    from allocbench.harness import runners
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "c"], check=True)
    seen = []

    def build(*args, jobs=None, **kwargs):
        seen.append(jobs)
        raise UserError("stopped where the harness is built")
    monkeypatch.setattr(runners, "find", build)
    monkeypatch.setattr(runners, "profile_runner_path", build)
    monkeypatch.setattr(packages, "ensure", lambda needed: None)
    monkeypatch.chdir(repo)
    assert cli.main([*argv, "--jobs", "2"]) == 2
    assert capsys.readouterr().err == "allocbench: error: stopped where the harness is built\n"
    assert seen == [2]


def test_abs_revision_builds_take_the_jobs_given(tmp_path, monkeypatch, capsys):
    import subprocess
    from allocbench import cli
    from allocbench.harness import runners
    from allocbench.history import buildspec
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "c"], check=True)
    seen = []
    monkeypatch.setattr(runners, "find", lambda *args, **kwargs: tmp_path / "allocbench-run")
    monkeypatch.setattr(runners, "check", lambda runner, options: None)

    def build(self, source, build, sha, package):
        seen.append(self.common.jobs_text())
        raise UserError("stopped at the revision's build")
    monkeypatch.setattr(buildspec.CMakeBuild, "build", build)
    code = cli.main(["ab", "--repo", str(repo), "--base", "HEAD", "--cand", "HEAD", "--jobs", "3"])
    assert (code, capsys.readouterr().err.splitlines()[-1]) == (
        2, "allocbench: error: stopped at the revision's build")
    assert seen == ["3"]
