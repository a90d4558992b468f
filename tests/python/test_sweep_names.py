"""One rule for what a revision name may be (revisions.accepted), whether typed (`sweep NAMES`,
`sweep-table`, `bisect --good/--bad`, `ab`) or selected by `sweep --tags`: a tag a later command
would refuse is skipped by `--tags`, and said, before anything is measured; a label the table
shows is a name bisect takes. On a small git repository of hand-made tags; nothing is built."""

from __future__ import annotations

import csv
import io
import os
import subprocess
from pathlib import Path

import pytest

from allocbench import cli
from allocbench.base.errors import UserError
from allocbench.history import selection, sweep, worktrees

RULE = "ASCII letters, digits and . _ / ~ ^ @ + -, starting with a letter, digit or _, no '..'"
# Tags git allows, in version order, and whether the rule accepts them.
TAGS = [("@scope/pkg@1.0", False), ("rel#3", False), ("v1.0", True), ("v1.1", True),
        ("v1,2", False), ("v2.0+build.1", True), ("v3\u202e0.4v", False), ("vé", False)]


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x",
           "GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@x"}
    return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True,
                          capture_output=True, text=True, timeout=60).stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """One commit per tag of TAGS, plus one tagged both 'v1,9' and 'v1.9': {tag: sha}."""
    path = tmp_path_factory.mktemp("names")
    git(path, "init", "-q", "-b", "main")
    shas = {}
    for name, _ in [*TAGS, ("v1,9", False)]:
        git(path, "commit", "-q", "--allow-empty", "-m", f"release {name}")
        git(path, "tag", name)
        shas[name] = git(path, "rev-parse", "HEAD")
    git(path, "tag", "-a", "-m", "the same commit", "v1.9")
    shas["v1.9"] = shas["v1,9"]
    return path, shas


def skip_line(name: str, sha: str) -> str:
    return (f"allocbench: skipping tag '{name}': not accepted as a revision name ({RULE}); to "
            f"measure its commit, name it by sha: {sha[:12]}")


@pytest.mark.parametrize("name, accepted", TAGS)
def test_a_tag_is_measured_by_sweep_tags_exactly_when_bisect_takes_its_name(repo, name,
                                                                            accepted):
    path, shas = repo
    measured = shas[name] in selection.tags(path, "*")
    try:
        named = worktrees.resolve(path, name) == shas[name]
    except UserError as e:
        assert str(e) == f"'{name}' is not accepted as a revision: use a branch, tag or sha ({RULE})"
        named = False
    assert measured == named == accepted


def test_sweep_tags_skips_each_refused_tag_and_says_so(repo, capsys):
    path, shas = repo
    assert selection.tags(path, "*") == [shas[n] for n in ("v1.0", "v1.1", "v1.9", "v2.0+build.1")]
    refused = ["@scope/pkg@1.0", "rel#3", "v1,2", "v1,9", "v3\u202e0.4v", "vé"]
    lines = capsys.readouterr().err.splitlines()
    assert lines == [skip_line(n, shas[n]).replace("\u202e", "\\u202e") for n in refused]


def test_sweep_tags_that_match_only_refused_tags_is_exit_2_before_anything(repo, tmp_path,
                                                                          capsys):
    path, shas = repo
    store = tmp_path / "store"
    assert cli.main(["sweep", "--repo", str(path), "--tags", "v1,*", "--store", str(store),
                     "--runner", str(tmp_path / "no-runner")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [skip_line("v1,2", shas["v1,2"]), skip_line("v1,9", shas["v1,9"]),
                   f"allocbench: error: --tags v1,*: no tag it matches is accepted as a "
                   f"revision name ({RULE}): v1,2, v1,9; name their commits by sha instead"]
    assert not store.exists()


def test_sweep_table_shows_the_tags_sweep_measures_under_names_bisect_takes(repo, tmp_path,
                                                                           capsys):
    path, shas = repo
    store = tmp_path / "store"
    store.mkdir()
    out = tmp_path / "table.csv"
    assert cli.main(["sweep-table", "--repo", str(path), "--tags", "v1*", "--store", str(store),
                     "--format", "csv", "--out", str(out)]) == 0
    header = next(csv.reader(io.StringIO(out.read_text())))
    assert header == ["metric", "scenario", "v1.0", "v1.1", "v1.9", "delta", "delta_percent"]
    assert capsys.readouterr().err.splitlines() == [skip_line("v1,2", shas["v1,2"]),
                                                    skip_line("v1,9", shas["v1,9"])]


def test_a_label_is_a_tag_the_rule_accepts_or_the_short_sha(repo):
    path, shas = repo
    assert sweep.label(path, shas["v1.1"]) == "v1.1"
    assert sweep.label(path, shas["v1,9"]) == "v1.9"    # its other tag
    assert sweep.label(path, shas["v1,2"]) == shas["v1,2"][:10]


@pytest.mark.parametrize("name", ["v1.0\n", "v1.0\nHEAD", " v1.0", "v1.0 ", "@v1", ".v1",
                                  "v1..v2", "v1.0\u202e", "ｖ1.0"])
def test_names_outside_the_rule_are_refused_by_every_command(repo, name, capsys):
    path, _ = repo
    for argv in (["sweep", name], ["sweep-table", name],
                 ["bisect", "s", "--good", name, "--bad", "v1.1"]):
        assert cli.main([*argv, "--repo", str(path), "--store", "/nonexistent"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("allocbench: error: '") and \
            err.endswith(f"' is not accepted as a revision: use a branch, tag or sha ({RULE})\n")


def test_the_readme_states_the_rule():
    from docs_pages import folded
    readme = folded("sweeps")
    assert f"selected by `--tags`: {worktrees.NAME_RULE}. A tag outside it" in readme
