"""$ALLOCBENCH_JOBS caps every build allocbench runs (the harness's, through
project.configure_and_build), as docs/gating.md says, and --jobs / [build] jobs win for the
subject's builds."""

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
