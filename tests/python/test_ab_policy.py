"""`ab` judges a pull request by its base revision's allocbench.toml: a candidate that adds an
allocation and loosens its own budget in the same diff still fails, and the comment says in its
first lines that the pull request changes the budgets, entry by entry; `compare` of ab's
folders judges the same way, whatever allocbench.toml the directory it runs in holds. Two abs
of one pair take turns on its folder."""

from __future__ import annotations

import fcntl
import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest

from allocbench import cli
from conftest import ROOT
import docs_pages
from test_ab import CMAKELISTS, EXTRA_TAGS, SPANS, commit, git

BASE_TOML = '[[budget]]\nmatch = "e2e/*"\nbytes_per_op = 0\n'
# The candidate's own budget would allow its extra 96-byte block.
LOOSE_TOML = ('[[budget]]\nmatch = "e2e/*"\nbytes_per_op = 96\nallocs_per_op = 1\n'
              'frees_per_op = 1\n')


@pytest.fixture(scope="module")
def loosened(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    repo = tmp_path_factory.mktemp("policy") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shas = {"base": commit(repo, "base", {"CMakeLists.txt": CMAKELISTS,
                                          "spans.cc": SPANS.replace("EXTRA", ""),
                                          "allocbench.toml": BASE_TOML}),
            "cand": commit(repo, "a tag block per span, and a budget that allows it", {
                "spans.cc": SPANS.replace("EXTRA", EXTRA_TAGS),
                "allocbench.toml": LOOSE_TOML})}
    return repo, shas


def ab(repo: Path, prefix: Path, runner: Path, *flags: str) -> list[str]:
    return ["ab", "--repo", str(repo), "--base", "main~1", "--cand", "main",
            f"--cmake-arg=-DCMAKE_PREFIX_PATH={prefix}", "--target", "e2e_scenarios",
            "--plugin-path", "e2e_scenarios.so", "--runner", str(runner), "--forks", "1",
            "--no-time", "--no-sites", *flags]


def test_a_pull_request_cannot_loosen_the_budget_it_is_judged_by(loosened, prefix, runner,
                                                                  capsys, monkeypatch):
    repo, shas = loosened
    code = cli.main(ab(repo, prefix, runner, "--format", "markdown"))
    comment = capsys.readouterr().out
    assert code == 1, comment
    lines = comment.splitlines()
    assert lines[2:10] == [
        "⚠️ **This pull request changes the gate's budgets and settings in `allocbench.toml`: "
        f"it was judged by `{shas['base'][:12]}:allocbench.toml`, and the change applies once "
        "it is merged:**", "",
        "```diff",
        '-[[budget]] match = "e2e/*", bytes_per_op = 0',
        '+[[budget]] match = "e2e/*", bytes_per_op = 96, allocs_per_op = 1, frees_per_op = 1',
        "```", "",
        # Of the 2 instances × 3 gated exact metrics, the span's three grew.
        "**Found 3 regressions and 0 improvements; 3 metrics unchanged, 0 unstable.**"]
    assert ("❌ Gate failed: 3 gated regressions (--fail-on any) in e2e/start_span "
            "(bytes_per_op, allocs_per_op, frees_per_op).") in lines
    # docs/gating.md shows these lines, the base's sha as <base>.
    readme = docs_pages.page("gating")
    shown = readme.split("<!-- policy-change:begin -->\n````markdown\n")[1].split("````")[0]
    assert shown == "\n".join(lines[2:10]).replace(shas["base"][:12], "<base>") + "\n"
    run_dir = repo / ".allocbench" / "ab" / f"{shas['base'][:12]}-{shas['cand'][:12]}"
    assert (run_dir / "comparison.md").read_text() == comment
    record = json.loads((run_dir / "policy.json").read_text())
    assert record["sources"][0] == {"file": "allocbench.toml",
                                    "origin": f"{shas['base'][:12]}:allocbench.toml",
                                    "text": BASE_TOML}

    # compare of ab's folders, run in the candidate's checkout (its allocbench.toml is the
    # loose one): judged by what ab recorded, and it says so.
    assert (repo / "allocbench.toml").read_text() == LOOSE_TOML
    monkeypatch.chdir(repo)
    code = cli.main(["compare", str(run_dir / "base"), str(run_dir / "cand"), "--fail-on",
                     "alloc"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    at = out.index("policy: This pull request changes the gate's budgets and settings in "
                   f"allocbench.toml: it was judged by {shas['base'][:12]}:allocbench.toml, and "
                   "the change applies once it is merged:")
    assert out[at + 1:at + 3] == ['  -[[budget]] match = "e2e/*", bytes_per_op = 0',
                                  '  +[[budget]] match = "e2e/*", bytes_per_op = 96, '
                                  'allocs_per_op = 1, frees_per_op = 1']
    # report of the ab folder: its page's comment opens with the same change.
    assert cli.main(["report", str(run_dir), "--out", str(repo.parent / "site")]) == 0
    capsys.readouterr()
    (page,) = (repo.parent / "site" / "compare").iterdir()
    html = page.read_text()
    assert "This pull request changes the gate's budgets and settings in" in html
    assert html.index("bytes_per_op = 96, allocs_per_op = 1, frees_per_op = 1") < \
        html.index("Found 3 regressions")
    # The candidate's file, given by the user as --config, judges: then the gate passes.
    code = cli.main(["compare", str(run_dir / "base"), str(run_dir / "cand"), "--config",
                     "allocbench.toml"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "policy:" not in out


def test_two_abs_of_one_pair_take_turns_on_its_folder(loosened, prefix, runner, tmp_path):
    """While another ab holds the pair's folder (its lock here), ab waits and touches nothing
    there; then it measures and compares."""
    repo, shas = loosened
    pair = f"{shas['base'][:12]}-{shas['cand'][:12]}"
    run_dir = repo / ".allocbench" / "ab" / pair
    other = run_dir / "cand" / "fork-1.json"
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_text("the other ab's fork, being compared\n")
    lock_path = repo / ".allocbench" / "worktrees" / f"ab-{pair}.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT / 'scripts'))
    ab_run = None
    try:
        with open(lock_path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            ab_run = subprocess.Popen([sys.executable, "-m", "allocbench",
                                       *ab(repo, prefix, runner)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=env)
            waiting = f"allocbench: waiting for another allocbench that is using the ab folder " \
                f"{run_dir}\n"
            deadline = time.monotonic() + 120
            seen = ""
            with selectors.DefaultSelector() as selector:   # no read that can block for ever
                selector.register(ab_run.stderr, selectors.EVENT_READ)
                while not seen.endswith(waiting):
                    assert time.monotonic() < deadline and ab_run.poll() is None, seen
                    if selector.select(timeout=1):
                        seen += ab_run.stderr.readline()
            time.sleep(1)   # it would have cleared the folder by now, were it not waiting
            assert other.read_text() == "the other ab's fork, being compared\n"
            assert ab_run.poll() is None
        out, err = ab_run.communicate(timeout=600)
    finally:   # a failed assertion leaves no ab running
        if ab_run is not None and ab_run.poll() is None:
            ab_run.kill()
            ab_run.communicate()
    assert ab_run.returncode == 1, err
    assert json.loads(other.read_text())["context"]["revision"]["sha"] == shas["cand"]
    assert "Gate failed: 3 gated regressions" in out
