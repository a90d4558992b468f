"""Paths are allocbench's own: a graft never writes or removes through a symbolic link that a
revision commits, and `run --out` never shares a name with its report."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from allocbench import cli
from allocbench.base.errors import UserError
from allocbench.history import graft, worktrees
from allocbench.commands import run as run_command


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                           *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside every repository, with files that must survive every test here."""
    folder = tmp_path / "outside"
    (folder / "deep").mkdir(parents=True)
    (folder / "keep.cc").write_text("the user's file\n")
    (folder / "deep" / "also.cc").write_text("another\n")
    return folder


@pytest.fixture
def today(tmp_path: Path) -> Path:
    """Today's scenario sources, the graft's source."""
    folder = tmp_path / "today"
    (folder / "deep").mkdir(parents=True)
    (folder / "keep.cc").write_text("grafted\n")
    (folder / "deep" / "new.cc").write_text("grafted too\n")
    return folder


def repo_with(tmp_path: Path, links: dict[str, Path]) -> Path:
    """A repository whose one commit has bench/ with a file and the given symbolic links."""
    repo = tmp_path / "repo"
    (repo / "bench").mkdir(parents=True)
    (repo / "bench" / "mine.cc").write_text("committed\n")
    for name, target in links.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).symlink_to(target)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "with links")
    return repo


@pytest.mark.parametrize("dest, link", [("bench", "bench"), ("src/bench", "src")])
def test_a_graft_destination_through_a_link_fails_the_revision(tmp_path, outside, today, dest,
                                                               link):
    repo = repo_with(tmp_path, {})
    git(repo, "rm", "-rq", "bench")
    (repo / link).symlink_to(outside)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a link where the graft goes")
    before = snapshot(outside)
    with pytest.raises(worktrees.StepFailed) as failed:
        graft.apply(repo, [graft.parse(f"{today}:{dest}", repo)])
    assert f"error: '{link}' is a symbolic link in this revision (to {outside}); allocbench " \
        "never writes through one" in failed.value.output
    assert snapshot(outside) == before


def test_links_inside_the_graft_are_replaced_not_followed(tmp_path, outside, today):
    repo = repo_with(tmp_path, {"bench/deep": outside / "deep", "bench/keep.cc":
                                outside / "keep.cc", "bench/stale": outside})
    before = snapshot(outside)
    graft.apply(repo, [graft.parse(f"{today}:bench", repo)])
    assert snapshot(outside) == before
    assert snapshot(repo / "bench") == snapshot(today)
    assert not any(p.is_symlink() for p in (repo / "bench").rglob("*"))


def test_run_out_must_be_json_so_the_report_cannot_overwrite_it(tmp_path):
    results = tmp_path / "results.md"
    results.write_text("the user's results\n")
    assert cli.main(["run", "--out", str(results)]) == 2
    assert results.read_text() == "the user's results\n"
    assert run_command.report_path_for(tmp_path / "r.json") == tmp_path / "r.md"
    with pytest.raises(UserError, match=r"must end in \.json"):
        run_command.report_path_for(tmp_path / "r")


@pytest.mark.parametrize("runner_code, expected", [(0, 3), (1, 3), (2, 2), (130, 130)])
def test_run_never_reports_a_results_file_it_did_not_write(tmp_path, monkeypatch, capsys,
                                                           runner_code, expected):
    """A runner that ends without writing (a scenario called exit() before isolation existed,
    a wrong --runner) must not make an older file of the same name pass for this run's."""
    build = tmp_path / "build"
    (build / "bin").mkdir(parents=True)
    fake = build / "bin" / "allocbench-run"
    fake.write_text(f"#!/bin/sh\nexit {runner_code}\n")
    fake.chmod(0o755)
    monkeypatch.setattr(run_command.project, "configure_and_build", lambda *a, **k: None)
    monkeypatch.setattr(run_command.packages, "ensure", lambda packages: None)
    old = tmp_path / "r.json"
    old.write_text("{}\n")
    assert cli.main(["run", "--out", str(old), "--build-dir", str(build)]) == expected
    assert not (tmp_path / "r.md").exists()
    if expected == 3:
        assert f"{fake} exited with code {runner_code} but did not write {old}" in \
            capsys.readouterr().err
