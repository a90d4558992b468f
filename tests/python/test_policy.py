"""The gate's policy is the base revision's (policy.py): what a candidate changes in
allocbench.toml or the calibration never judges it, and is named, entry by entry. Plain git
repositories, no build: the policy is read before anything is built."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest

from allocbench.base.errors import UserError
from allocbench.gate import compare as cmp, compare_format, compare_json, policy
from allocbench.commands import compare as compare_command

DATA = Path(__file__).parent / "data"
GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")

BASE_TOML = """# the team's budgets
[time]
threshold = 7

[[budget]]
match = "e2e/start_span"
bytes_per_op = 16

[[sites]]
match = "e2e/*"
bytes_per_op = 0
"""
# The pull request: a looser span budget, a new catch-all entry, no [[sites]], and the same
# [time] written differently (a comment, other spacing): only the entries that differ show.
RELAXED_TOML = """[time]
threshold   =   7   # unchanged

[[budget]]
match = "e2e/start_span"
bytes_per_op = 200
allocs_per_op = "100%"

[[budget]]
match = "*"
frees_per_op = 1
"""
RELAXED_DIFF = (
    '-[[budget]] match = "e2e/start_span", bytes_per_op = 16',
    '-[[sites]] match = "e2e/*", bytes_per_op = 0',
    '+[[budget]] match = "e2e/start_span", bytes_per_op = 200, allocs_per_op = "100%"',
    '+[[budget]] match = "*", frees_per_op = 1')


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=GIT_ENV, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def commit(repo: Path, files: dict[str, str | None], *, force: bool = False) -> str:
    """A commit with `files` written (None: removed)."""
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    git(repo, "add", "-A", *(["-f", *files] if force else []))
    git(repo, "commit", "-q", "--allow-empty", "-m", "c")
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    return repo


def at_base(repo: Path, base: str, cand: str, **given) -> policy.Policy:
    return policy.at_base(repo, base, cand, **given)


def test_the_base_revisions_budgets_judge_and_the_candidates_are_named_entry_by_entry(repo):
    base = commit(repo, {"allocbench.toml": BASE_TOML})
    cand = commit(repo, {"allocbench.toml": RELAXED_TOML})
    # The working tree is the candidate's checkout, as in CI: it does not judge either.
    rules = at_base(repo, base, cand)
    assert rules.config.limit("e2e/start_span", "bytes_per_op").allowed(48) == 16
    assert rules.config.limit("e2e/start_span", "frees_per_op").allowed(1) == 0
    assert rules.config.time.threshold == 7
    assert rules.config.site_limit("e2e/start_span", "bytes_per_op") is not None
    assert rules.judged_by(policy.CONFIG) == f"{base[:12]}:allocbench.toml"
    assert rules.changes == (cmp.PolicyChange("allocbench.toml", f"{base[:12]}:allocbench.toml",
                                              RELAXED_DIFF),)


def test_a_candidate_that_deletes_the_file_loosens_it_to_the_defaults_and_says_so(repo):
    base = commit(repo, {"allocbench.toml": BASE_TOML})
    cand = commit(repo, {"allocbench.toml": None})
    rules = at_base(repo, base, cand)
    assert rules.config.limit("e2e/start_span", "bytes_per_op").allowed(48) == 16
    (change,) = rules.changes
    assert change.diff == ("-[time] threshold = 7", "+[time] threshold = 5",
                           '-[[budget]] match = "e2e/start_span", bytes_per_op = 16',
                           '-[[sites]] match = "e2e/*", bytes_per_op = 0')


def test_a_candidate_that_adds_the_file_is_judged_by_the_defaults(repo):
    base = commit(repo, {"README": "x\n"})
    cand = commit(repo, {"allocbench.toml": RELAXED_TOML})
    rules = at_base(repo, base, cand)
    assert rules.config.budgets == () and rules.config.time.threshold == 5
    assert rules.judged_by(policy.CONFIG) == "the defaults (no allocbench.toml)"
    (change,) = rules.changes
    assert change.judged_by == "the defaults (no allocbench.toml)"
    assert change.diff == ("-[time] threshold = 5", "+[time] threshold = 7",
                           RELAXED_DIFF[2], RELAXED_DIFF[3])


def test_a_candidate_that_lets_unjudged_sampled_bytes_pass_is_named(repo):
    base = commit(repo, {"allocbench.toml": "[sampled]\ntolerance = 8\n"})
    cand = commit(repo, {"allocbench.toml": "[sampled]\ntolerance = \"50%\"\n"
                                            "unstable = \"show\"\n"})
    rules = at_base(repo, base, cand)
    assert rules.config.sampled.unstable == "fail"
    (change,) = rules.changes
    assert change.diff == ("-[sampled] tolerance = 8", "-[sampled] unstable = \"fail\"",
                           "+[sampled] tolerance = \"50%\"", "+[sampled] unstable = \"show\"")


def test_the_same_entries_written_differently_are_no_change(repo):
    base = commit(repo, {"allocbench.toml": BASE_TOML})
    cand = commit(repo, {"allocbench.toml": BASE_TOML.replace("# the team's budgets", "")
                         .replace("threshold = 7", "threshold = 7.0")
                         + "\n[build]\nbench = \"bench\"\n"})   # how sweeps build: not the gate
    assert at_base(repo, base, cand).changes == ()


def test_a_candidate_whose_file_is_broken_is_named_and_the_base_judges(repo):
    base = commit(repo, {"allocbench.toml": BASE_TOML})
    cand = commit(repo, {"allocbench.toml": "[[budget]\n"})
    rules = at_base(repo, base, cand)
    assert rules.config.limit("e2e/start_span", "bytes_per_op").allowed(48) == 16
    (change,) = rules.changes
    assert change.diff == ()
    assert change.problem == (f"{cand[:12]}:allocbench.toml: not valid TOML (Expected ']]' at "
                              "the end of an array declaration (at line 1, column 9))")


def test_a_broken_base_file_is_bad_input_naming_the_revision_and_file(repo):
    base = commit(repo, {"allocbench.toml": "[time]\nthreshold = 0\n"})
    cand = commit(repo, {"x": "y"})
    with pytest.raises(UserError) as e:
        at_base(repo, base, cand)
    assert str(e.value) == (f"{base[:12]}:allocbench.toml: 'time.threshold' is 0; it must be "
                            "above 0 and at most 1000 (percent, e.g. 5 for 5%)")
    os.symlink("elsewhere.toml", repo / "allocbench.toml.link")
    (repo / "allocbench.toml").unlink()
    (repo / "allocbench.toml.link").rename(repo / "allocbench.toml")
    linked = commit(repo, {})
    with pytest.raises(UserError) as e:
        at_base(repo, linked, cand)
    assert str(e.value) == (f"{linked[:12]}:allocbench.toml is a symbolic link, not a file; "
                            "allocbench reads its policy from a regular file: commit "
                            "allocbench.toml as one")


def test_a_file_in_neither_revision_does_not_judge_and_the_user_is_told(repo, capsys):
    base = commit(repo, {"README": "x\n"})
    cand = commit(repo, {"README": "y\n"})
    (repo / "allocbench.toml").write_text(RELAXED_TOML)   # untracked, or a build wrote it
    rules = at_base(repo, base, cand)
    assert rules.config.budgets == () and rules.changes == ()
    assert capsys.readouterr().err == (
        f"allocbench: {repo / 'allocbench.toml'} is in neither revision, so it does not judge "
        "them: the base's policy is the defaults; commit it, or pass --config "
        f"{repo / 'allocbench.toml'}\n")
    # Given explicitly, it judges (the user chose it), and the candidate's is not compared.
    rules = at_base(repo, base, cand, config=repo / "allocbench.toml")
    assert rules.config.limit("e2e/start_span", "bytes_per_op").allowed(48) == 200
    assert rules.judged_by(policy.CONFIG) == str(repo / "allocbench.toml")
    assert rules.changes == ()


def calibration_text(noisy: bool) -> str:
    return json.dumps({"allocbench_calibration": 1, "scenarios": [{
        "scenario": "e2e/start_span", "args": {}, "threads": 1, "allocator": "system",
        "metric": "ns_per_op", "noisy": noisy, "false_positive_rate": 0.5 if noisy else 0.0,
        "forks": 3, "repetitions": 5, "mde_percent": 40.0}]})


def test_the_calibration_is_this_machines_unless_a_revision_holds_it(repo):
    base = commit(repo, {"README": "x\n"})
    cand = commit(repo, {"README": "y\n"})
    local = repo / ".allocbench" / "calibration.json"
    local.parent.mkdir()
    local.write_text(calibration_text(True))   # calibrate's output: in no revision
    rules = at_base(repo, base, cand)
    assert rules.judged_by(policy.CALIBRATION) == str(local) and rules.changes == ()
    assert list(rules.calibration.values())[0]["noisy"] is True
    # A candidate that commits one (git add -f past .allocbench's ignore): the working tree's
    # is then the pull request's, and neither judges; it is named.
    forced = commit(repo, {".allocbench/calibration.json": calibration_text(False)}, force=True)
    rules = at_base(repo, base, forced)
    assert rules.calibration is None
    assert rules.changes == (cmp.PolicyChange(".allocbench/calibration.json",
                                              "the defaults (no .allocbench/calibration.json)"),)
    # The base's, committed, judges; a candidate with another is named.
    local.write_text(calibration_text(True))
    again = commit(repo, {".allocbench/calibration.json": calibration_text(True)}, force=True)
    rules = at_base(repo, again, forced)
    assert list(rules.calibration.values())[0]["noisy"] is True
    assert rules.changes == (cmp.PolicyChange(".allocbench/calibration.json",
                                              f"{again[:12]}:.allocbench/calibration.json"),)


# --- recorded beside an ab run; compare of its folders ---

def ab_folder(tmp_path: Path, rules: policy.Policy) -> Path:
    """An ab run's folder: base/ and cand/ (the compare fixtures: +1 allocation in spans) and
    the policy ab recorded."""
    run = tmp_path / "ab" / "run"
    for side, name in (("base", "base.json"), ("cand", "cand.json")):
        (run / side).mkdir(parents=True)
        (run / side / "fork-1.json").write_text((DATA / "compare" / name).read_text())
    policy.record(rules, run)
    return run


def test_compare_of_an_ab_folder_judges_by_the_policy_ab_recorded(repo, tmp_path,
                                                                  monkeypatch):
    base = commit(repo, {"allocbench.toml": "[[budget]]\nmatch = \"*\"\nbytes_per_op = 0\n"})
    cand = commit(repo, {"allocbench.toml": "[[budget]]\nmatch = \"*\"\nbytes_per_op = 1e9\n"
                                            "allocs_per_op = 1e9\nfrees_per_op = 1e9\n"})
    run = ab_folder(tmp_path, at_base(repo, base, cand))
    # The directory compare runs in holds the candidate's looser file (a CI checkout).
    monkeypatch.chdir(repo)
    rules = compare_command.rules_for(run / "base", run / "cand", None, None)
    assert rules.judged_by(policy.CONFIG) == f"{base[:12]}:allocbench.toml"
    assert rules.changes == at_base(repo, base, cand).changes
    comparison = compare_command.judge(run / "base", run / "cand", rules=rules)
    assert comparison.policy_changes == rules.changes
    # The fixtures' regressions (an exact metric of two instances grew; one failed): all gate.
    grown = [("ground_truth/sized/bytes:24", "bytes_per_op"),
             ("ground_truth/sized/bytes:24", "allocs_per_op"),
             ("ground_truth/sized/bytes:24", "frees_per_op"),
             ("trace_fanout/web_trace/children:5", "bytes_per_op")]
    failed = [("ground_truth/fails", "failed")]
    assert sorted(cmp.gated(comparison, "alloc")) == sorted(grown + failed)
    # Given explicitly, the file judges (each grew by less than 1e9), and no change to what
    # judged is claimed.
    explicit = compare_command.rules_for(run / "base", run / "cand", repo / "allocbench.toml",
                                         None)
    assert explicit.changes == ()
    assert cmp.gated(compare_command.judge(run / "base", run / "cand", rules=explicit),
                     "alloc") == failed
    # Folders that are not an ab run's: ./allocbench.toml, as before.
    plain = compare_command.rules_for(DATA / "compare" / "base.json",
                                      DATA / "compare" / "cand.json", None, None)
    assert plain.judged_by(policy.CONFIG) == "allocbench.toml"


def test_a_damaged_record_is_bad_input_naming_it(tmp_path, repo):
    base = commit(repo, {"README": "x\n"})
    run = ab_folder(tmp_path, at_base(repo, base, base))
    doc = json.loads((run / "policy.json").read_text())
    doc["sources"][0]["text"] = 5
    (run / "policy.json").write_text(json.dumps(doc))
    with pytest.raises(UserError) as e:
        policy.recorded(run / "base", run / "cand")
    assert str(e.value) == (f"{run / 'policy.json'}: not a policy record of allocbench ab; run "
                            "'allocbench ab' again to record it, or pass --config and "
                            "--calibration")


# --- the outputs say it first ---

def changed_comparison(diff: tuple[str, ...], problem: str = "") -> cmp.Comparison:
    comparison = compare_command.judge(DATA / "compare" / "base.json",
                                       DATA / "compare" / "cand.json")
    change = cmp.PolicyChange("allocbench.toml", "0123456789ab:allocbench.toml", diff, problem)
    return dataclasses.replace(comparison, policy_changes=(change,))


def test_the_comment_names_the_change_before_anything_else():
    comment = compare_format.markdown(changed_comparison(RELAXED_DIFF), "any").splitlines()
    assert comment[2:10] == [
        "⚠️ **This pull request changes the gate's budgets and settings in `allocbench.toml`: "
        "it was judged by `0123456789ab:allocbench.toml`, and the change applies once it is "
        "merged:**", "", "```diff", *RELAXED_DIFF, "```"]
    assert comment[11].startswith("**Found ")


def test_a_glob_with_backticks_cannot_close_the_diff_block():
    diff = ('+[[budget]] match = "```\\n# forged", bytes_per_op = 9',)
    comment = compare_format.markdown(changed_comparison(diff), "any").splitlines()
    assert comment[4:7] == ["````diff", diff[0], "````"]


def test_console_and_json_carry_the_change_and_json_reads_back():
    comparison = changed_comparison(RELAXED_DIFF[:1], problem="x: not valid TOML")
    lines = compare_format.console(comparison, "any").splitlines()
    at = lines.index("policy: This pull request changes the gate's budgets and settings in "
                     "allocbench.toml: it was judged by 0123456789ab:allocbench.toml, and the "
                     "change applies once it is merged; its own file cannot be read (x: not "
                     "valid TOML):")
    assert lines[at + 1] == f"  {RELAXED_DIFF[0]}" and lines[at - 1] == ""
    assert lines.index("candidate:" + lines[1][len("candidate:"):]) == 1 < at
    doc = json.loads(compare_json.to_json(comparison, "any"))
    assert doc["policy_changes"] == [{"file": "allocbench.toml",
                                      "judged_by": "0123456789ab:allocbench.toml",
                                      "diff": [RELAXED_DIFF[0]], "problem": "x: not valid TOML"}]
    back, _ = compare_json.from_json(doc, "c.json")
    assert back.policy_changes == comparison.policy_changes
