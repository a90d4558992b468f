"""`allocbench ab` end to end: a user's repository with two revisions of a scenario plugin,
built in worktrees against the *installed* allocbench package, run by one harness."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from allocbench import cli
from allocbench.base.errors import UserError
from allocbench.harness import runners
from allocbench.history import worktrees
from docs_pages import page

CMAKELISTS = """cmake_minimum_required(VERSION 3.20)
project(e2e_scenarios CXX)
find_package(allocbench REQUIRED)
allocbench_add_plugin(e2e_scenarios SOURCES spans.cc)
target_compile_options(e2e_scenarios PRIVATE -g)  # file:line in allocation sites
"""

SPANS = """#include <allocbench/scenario.h>

#include <array>

struct Span { char name[48]; };
using Tags = std::array<char, 96>;

ALLOCBENCH_SCENARIO(StartSpan, state) {
  for (auto _ : state) {
    Span* span = new Span;
    allocbench::DoNotOptimize(span);
    EXTRA
    delete span;
  }
}
ALLOCBENCH_REGISTER(StartSpan)->Name("e2e/start_span");

ALLOCBENCH_SCENARIO(Tag, state) {
  for (auto _ : state) {
    char* tag = new char[24];
    allocbench::DoNotOptimize(tag);
    delete[] tag;
  }
}
ALLOCBENCH_REGISTER(Tag)->Name("e2e/tag");
"""
# The candidate's one change: a 96-byte tag block per span, on this line of spans.cc.
EXTRA_TAGS = "Tags* tags = new Tags; allocbench::DoNotOptimize(tags); delete tags;"
EXTRA_LINE = next(i for i, text in enumerate(SPANS.splitlines(), 1) if "EXTRA" in text)

# A null-pointer store on the fifth op (laundered: a plain one may become a trap).
CRASH = ("static int ops = 0; if (++ops == 5) { volatile int* p = nullptr; "
         "allocbench::DoNotOptimize(p); *p = 1; }")
# A static object whose destructor crashes, as a singleton torn down at exit may: in every
# process that loads the plugin, allocbench-run's own included.
CRASH_AT_EXIT = """
struct Registry {
  ~Registry() { volatile int* p = nullptr; allocbench::DoNotOptimize(p); *p = 1; }
} registry;
"""

GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=GIT_ENV)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def user_repo(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A repository with three commits: base, +96 B per span, and a comment-only change."""
    repo = tmp_path_factory.mktemp("user") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shas = {
        "base": commit(repo, "base", {"CMakeLists.txt": CMAKELISTS,
                                      "spans.cc": SPANS.replace("EXTRA", "")}),
        "tags": commit(repo, "tag block", {"spans.cc": SPANS.replace("EXTRA", EXTRA_TAGS)}),
    }
    shas["docs"] = commit(repo, "docs only", {"spans.cc": SPANS.replace("EXTRA", ""),
                                              "README.md": "Spans.\n"})
    # Off main: a candidate whose span scenario crashes, one that does not compile, and one
    # that crashes at exit.
    for branch, spans in (("crash", SPANS.replace("EXTRA", CRASH)),
                          ("broken", SPANS.replace("EXTRA", "this does not compile;")),
                          ("exit_crash", SPANS.replace("EXTRA", "") + CRASH_AT_EXIT)):
        git(repo, "checkout", "-q", "-b", branch, shas["base"])
        shas[branch] = commit(repo, branch, {"spans.cc": spans})
    git(repo, "checkout", "-q", "main")
    return repo, shas


def ab(repo: Path, prefix: Path, runner: Path, base: str, cand: str, *flags: str) -> list[str]:
    return ["ab", "--repo", str(repo), "--base", base, "--cand", cand,
            f"--cmake-arg=-DCMAKE_PREFIX_PATH={prefix}", "--target", "e2e_scenarios",
            "--plugin-path", "e2e_scenarios.so", "--runner", str(runner), "--forks", "2",
            *flags]


def test_one_more_allocation_fails_the_gate_naming_scenario_and_delta(user_repo, prefix,
                                                                      runner, capsys):
    repo, shas = user_repo
    code = cli.main(ab(repo, prefix, runner, "main~2", "main~1", "--no-time"))
    out = capsys.readouterr().out
    assert code == 1, out
    # B, allocs and frees gate; usable and peak-live bytes depend on the allocator: shown only.
    assert "Found 3 regressions and 0 improvements" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("worse")]
    assert ["worse", "e2e/start_span", "bytes_per_op", "48", "144", "+96", "B",
            "(+200.0%)"] in rows
    assert ["worse", "e2e/start_span", "allocs_per_op", "1", "2", "+1", "allocs",
            "(+100.0%)"] in rows
    assert not any("e2e/tag" in row for row in rows)
    assert "Gate failed" in out

    # Two interleaved forks per side, and the pull-request comment next to them.
    run_dir = repo / ".allocbench" / "ab" / f"{shas['base'][:12]}-{shas['tags'][:12]}"
    assert sorted(p.name for p in (run_dir / "base").iterdir()) == ["fork-1.json", "fork-2.json"]
    fork = json.loads((run_dir / "cand" / "fork-2.json").read_text())
    assert fork["context"]["revision"]["sha"] == shas["tags"]
    comment = (run_dir / "comparison.md").read_text()
    assert "- 🟥 `bytes_per_op` +96 B (48 → 144, +200.0%)" in comment
    # Under it, where (heaptrack, both sides): a new site at the line of the candidate's one
    # change, the 96-byte tag block.
    line = (f"↳ +96 B/op, +1 allocs/op: new site `StartSpan` (spans.cc:{EXTRA_LINE}) "
            "1 × 96 B")
    assert f"- {line}" in comment
    assert f"``{line}``" in page("sites")   # the example of docs/sites.md
    assert sorted(p.name for p in (run_dir / "sites" / "cand").glob("*.sites.json")) == [
        "e2e_start_span-" + hashlib.sha256(b"e2e/start_span").hexdigest()[:10] + ".sites.json"]
    # allocbench's state never shows up as untracked files in the user's repository.
    assert git(repo, "status", "--porcelain") == ""


def test_identical_builds_pass(user_repo, prefix, runner, capsys, tmp_path):
    repo, shas = user_repo
    code = cli.main(ab(repo, prefix, runner, shas["base"], "main", "--unpaired",
                       "--repetitions", "3", "--min-time", "0.002", "--format", "json",
                       "--fail-on", "alloc", "--report", str(tmp_path / "site")))
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc["gate"]
    assert doc["gate"]["failed"] == []
    spans = next(i for i in doc["instances"] if i["name"] == "e2e/start_span")
    assert {c["verdict"] for c in spans["exact"]} == {"same"}
    # Time was measured: 2 forks × 3 repetitions a side, through the interval gate.
    time, cpu = spans["time"]   # wall and CPU clocks, from the same repetitions
    assert (time["metric"], cpu["metric"]) == ("ns_per_op", "cpu_ns_per_op")
    assert (time["base_n"], time["cand_n"]) == (cpu["base_n"], cpu["cand_n"]) == (6, 6)
    interval = time["interval"]
    # The point estimate is the ratio of the sides' means, and the interval surrounds it.
    assert interval["relative"] == pytest.approx(time["cand_mean"] / time["base_mean"] - 1)
    assert interval["relative_low"] < interval["relative"] < interval["relative_high"]
    assert interval["absolute"] == pytest.approx(time["cand_mean"] - time["base_mean"])
    # The JSON carries the samples each verdict was judged on: 2 forks of 3, as measured.
    assert [len(f) for f in time["base_forks"]] == [3, 3]
    # --report: the comparison's page, with both sides' 6 samples in its statistics.
    (page,) = (tmp_path / "site" / "compare").iterdir()
    html = page.read_text()
    assert "Gate passed" in html and html.count('<td class="num">6 (2 forks)</td>') == 2 * sum(
        len(i["time"]) for i in doc["instances"])   # per side, per clock


def test_time_is_measured_paired_by_default(user_repo, prefix, runner, capsys):
    """Forks count, one paired run times: its pairs judge both clocks of every instance, and
    `compare` of ab's folders finds them again."""
    repo, shas = user_repo
    code = cli.main(ab(repo, prefix, runner, shas["base"], "main", "--paired-time", "0.3",
                       "--format", "json", "--no-sites"))
    doc = json.loads(capsys.readouterr().out)
    main = worktrees.resolve(repo, "main")
    run_dir = repo / ".allocbench" / "ab" / f"{shas['base'][:12]}-{main[:12]}"
    assert doc["paired"] == str(run_dir / "paired.json")
    pairs = json.loads((run_dir / "paired.json").read_text())
    fork = json.loads((run_dir / "cand" / "fork-1.json").read_text())
    assert fork["context"]["time"] is None and pairs["context"]["paired"]["budget_s"] == 0.3
    measured = {r["name"]: len(r["paired"]["cand_first"]) for r in pairs["results"]}
    assert sorted(measured) == ["e2e/start_span", "e2e/tag"]
    for inst in doc["instances"]:
        time, cpu = inst["time"]
        assert (time["metric"], cpu["metric"]) == ("ns_per_op", "cpu_ns_per_op")
        assert time["pairs"] == cpu["pairs"] == time["base_n"] == measured[inst["name"]] >= 100
        assert time["threshold"] == 1.0   # [time] paired_threshold, not the 5% of forks
        low, high = time["interval"]["relative_low"], time["interval"]["relative_high"]
        assert low <= time["interval"]["relative"] <= high
    # Identical sources: every exact metric is the same, and so the gate rests on time alone.
    assert {c["verdict"] for i in doc["instances"] for c in i["exact"]} == {"same"}
    assert code == (1 if doc["gate"]["failed"] else 0)
    # compare, given ab's two folders, judges time from the same pairs.
    assert cli.main(["compare", str(run_dir / "base"), str(run_dir / "cand"), "--format",
                     "json"]) == code
    again = json.loads(capsys.readouterr().out)
    assert [i["time"] for i in again["instances"]] == [i["time"] for i in doc["instances"]]


@pytest.mark.parametrize("flags, message", [
    (["--repetitions", "3"], "--repetitions sets the unpaired time pass, and ab times base and "
                             "candidate paired: add --unpaired to time them in forks, or drop "
                             "it (--paired-time sets the paired pass)"),
    (["--unpaired", "--paired-time", "1"], "--paired-time sets the paired time pass, which "
                                           "--unpaired turns off; drop one"),
    (["--no-time", "--paired-time", "1"], "--paired-time sets the paired time pass, which "
                                          "--no-time turns off; drop one"),
])
def test_options_of_a_time_pass_that_does_not_run_are_refused(user_repo, prefix, runner,
                                                              capsys, flags, message):
    repo, shas = user_repo
    assert cli.main(ab(repo, prefix, runner, shas["base"], "main", *flags)) == 2
    assert capsys.readouterr().err == f"allocbench: error: {message}\n"


def test_a_crashing_candidate_is_a_failed_instance_that_gates(user_repo, prefix, runner,
                                                              capsys):
    repo, shas = user_repo
    code = cli.main(ab(repo, prefix, runner, "main~2", "crash", "--no-time", "--format",
                       "markdown"))
    comment = capsys.readouterr().out
    assert code == 1, comment
    assert "- ❌ failed in the candidate: count pass: crashed with SIGSEGV (Segmentation " \
        "fault)" in comment
    assert "Gate failed: 1 gated regression (--fail-on any) in e2e/start_span (failed)." in \
        comment
    # The other scenario of the crashing plugin is still measured, and unchanged.
    assert "| `e2e/tag` | `bytes_per_op` | 24 | 24 | 0 | same |" in comment


def test_a_candidate_whose_static_destructor_crashes_at_exit_is_gated_normally(user_repo,
                                                                             prefix, runner,
                                                                             capsys):
    """allocbench-run leaves without running exit handlers once its results are written, so
    the crash is never reached; before, every fork died by SIGSEGV and `ab` failed with 3,
    "no output"."""
    repo, shas = user_repo
    code = cli.main(ab(repo, prefix, runner, "main~2", "exit_crash", "--no-time", "--format",
                       "markdown"))
    comment = capsys.readouterr().out
    assert code == 0, comment
    assert "| `e2e/start_span` | `bytes_per_op` | 48 | 48 | 0 | same |" in comment
    assert "| `e2e/tag` | `bytes_per_op` | 24 | 24 | 0 | same |" in comment


def test_a_candidate_that_does_not_build_is_a_failed_measurement(user_repo, prefix, runner,
                                                                 capsys):
    repo, shas = user_repo
    assert cli.main(ab(repo, prefix, runner, "main~2", "broken", "--no-time")) == 3
    err = capsys.readouterr().err
    # The error, then the end of the build's output, where the compiler says why.
    assert f"allocbench: error: building e2e_scenarios at {shas['broken'][:12]} failed (exit " \
        "code 2):\n" in err
    assert "spans.cc:12:5: error: invalid use of ‘this’ in non-member function" in err


@pytest.mark.parametrize("flags, message", [
    (["--min-time", "inf"], "--min-time expects a finite number of seconds > 0, not 'inf' (an "
                            "option for allocbench-run)"),
    (["--instance-timeout", "0"], "--instance-timeout expects a finite number of seconds > 0, "
                                  "not '0' (an option for allocbench-run)"),
    (["--runner", "/bin/true"], "--runner /bin/true: not an allocbench-run (its --help shows no "
                                "allocbench-run usage); pass one, e.g. "
                                "build/release/bin/allocbench-run, or drop --runner"),
    (["--cmake", "/opt/none/cmake"], "--cmake /opt/none/cmake: no such program; give the path "
                                     "of a cmake executable, e.g. --cmake "
                                     "/opt/cmake-3.28/bin/cmake"),
])
def test_bad_runner_options_are_refused_before_anything_is_built(user_repo, prefix, runner,
                                                                 capsys, flags, message):
    repo, shas = user_repo
    argv = ab(repo, prefix, runner, shas["base"], "crash", "--no-time")
    if flags[0] == "--runner":
        argv[argv.index("--runner") + 1] = flags[1]
    else:
        argv += flags
    before = sorted((repo / ".allocbench" / "worktrees").glob("*"))
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == f"allocbench: error: {message}\n"
    assert sorted((repo / ".allocbench" / "worktrees").glob("*")) == before


def test_worktrees_are_reused(user_repo):
    repo, shas = user_repo
    tree = worktrees.worktree(repo, shas["base"])
    assert tree == repo / ".allocbench" / "worktrees" / shas["base"]
    assert (tree / "spans.cc").exists()
    assert worktrees.worktree(repo, shas["base"]) == tree


@pytest.mark.parametrize("name", ["main..HEAD", "HEAD;rm -rf /", "$(reboot)", "-q", "a b",
                                  "HEAD:spans.cc", "`id`"])
def test_unsafe_revision_names_are_refused(user_repo, name):
    repo, _ = user_repo
    with pytest.raises(UserError) as e:
        worktrees.resolve(repo, name)
    assert str(e.value).startswith(f"'{name}' is not accepted as a revision")


def test_unknown_revision_is_a_one_line_error(user_repo, capsys):
    repo, _ = user_repo
    assert cli.main(["ab", "--repo", str(repo), "--base", "main", "--cand", "nosuchbranch"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"allocbench: error: {repo}: no commit named 'nosuchbranch'; check the name "
                   f"with 'git -C {repo} log --oneline'"]


def test_not_a_repository(tmp_path, capsys):
    assert cli.main(["ab", "--repo", str(tmp_path), "--base", "a", "--cand", "b"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"allocbench: error: {tmp_path}: not inside a git repository; pass --repo PATH")


def test_profile_of_two_revisions_names_the_block_the_candidate_adds(user_repo, prefix, runner,
                                                                     capsys, tmp_path,
                                                                     monkeypatch):
    repo, shas = user_repo
    monkeypatch.setattr(runners, "profile_runner_path",
                        lambda jobs=None: runner.parent / "allocbench-run-profile")
    code = cli.main(["profile", "e2e/start_span", "--rev", "main~2", "--rev", "main~1",
                     "--repo", str(repo), f"--cmake-arg=-DCMAKE_PREFIX_PATH={prefix}",
                     "--target", "e2e_scenarios", "--plugin-path", "e2e_scenarios.so",
                     "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "### Sites of `e2e/start_span`: `main~2` → `main~1`\n\n- +96 B/op, +1 allocs/op: " \
           f"new site `StartSpan` (spans.cc:{EXTRA_LINE}) 1 × 96 B" in out
    folders = [f"main_{n}-{hashlib.sha256(f'main~{n}'.encode()).hexdigest()[:10]}"
               for n in (1, 2)]   # names.slug of each --rev
    assert sorted(p.name for p in tmp_path.iterdir()) == folders
    table = "e2e_start_span-" + hashlib.sha256(b"e2e/start_span").hexdigest()[:10] + ".sites.md"
    assert (tmp_path / folders[1] / table).read_text().count("| 48 |") == 1
