"""`allocbench ab` with a [[sites]] budget, end to end: a pull request moves a span's 96-byte
block from one function to another, so its B/op and allocs/op stay the same; heaptrack on both
sides finds the new site, and the README's budget fails the gate with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from allocbench import cli
from docs_pages import folded, page
from test_ab import CMAKELISTS, commit, git
from test_site_budget import NOT_JUDGED, section

SPANS = """#include <allocbench/scenario.h>

#include <array>

using Block = std::array<char, 96>;
// Two functions of different bodies (identical ones may be folded into one by the compiler).
__attribute__((noinline)) Block* MakeTags() { return new Block{'t'}; }
__attribute__((noinline)) Block* MakeBuffer() { return new Block{'b'}; }

ALLOCBENCH_SCENARIO(StartSpan, state) {
  for (auto _ : state) {
    Block* block = MAKE();
    allocbench::DoNotOptimize(block);
    delete block;
  }
}
ALLOCBENCH_REGISTER(StartSpan)->Name("span_creation/start_span");

ALLOCBENCH_SCENARIO(Tag, state) {
  for (auto _ : state) {
    char* tag = new char[24];
    allocbench::DoNotOptimize(tag);
    delete[] tag;
  }
}
ALLOCBENCH_REGISTER(Tag)->Name("tags/tag");
"""
BUFFER_LINE = next(i for i, text in enumerate(SPANS.splitlines(), 1) if "MakeBuffer()" in text)


def readme_budget() -> str:
    """The [[sites]] example of docs/sites.md, as printed."""
    readme = page("sites")
    (block,) = [b for b in re.findall(r"```toml\n(.*?)```", readme, re.S) if "[[sites]]" in b]
    return block


@pytest.fixture(scope="module")
def moved(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    repo = tmp_path_factory.mktemp("moved") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shas = {"base": commit(repo, "base", {"CMakeLists.txt": CMAKELISTS,
                                          "spans.cc": SPANS.replace("MAKE", "MakeTags"),
                                          "allocbench.toml": readme_budget()}),
            "moved": commit(repo, "the block moves", {
                "spans.cc": SPANS.replace("MAKE", "MakeBuffer")})}
    return repo, shas


def ab(repo: Path, prefix: Path, runner: Path, *flags: str) -> list[str]:
    return ["ab", "--repo", str(repo), "--base", "main~1", "--cand", "main",
            f"--cmake-arg=-DCMAKE_PREFIX_PATH={prefix}", "--target", "e2e_scenarios",
            "--plugin-path", "e2e_scenarios.so", "--runner", str(runner), "--forks", "1",
            "--no-time", "--format", "markdown", *flags]


def test_a_moved_allocation_fails_the_site_budget_with_its_new_site(moved, prefix, runner,
                                                                     capsys):
    repo, shas = moved
    code = cli.main(ab(repo, prefix, runner))
    comment = capsys.readouterr().out
    assert code == 1, comment
    # The totals did not change: no regression of B/op, and no instance profiled for one.
    assert comment.splitlines()[2] == (
        "**Found 0 regressions and 0 improvements; 6 metrics unchanged, 0 unstable, "
        "1 allocation site beyond its budget.**")
    assert ("❌ Gate failed: 1 gated regression (--fail-on any) in span_creation/start_span "
            "(allocation site).") in comment
    line = (f"- 🟥 beyond its budget (bytes_per_op +0): +96 B/op, +1 allocs/op: new site "
            f"MakeBuffer (spans.cc:{BUFFER_LINE}) 1 × 96 B")
    assert line in comment.splitlines()
    assert line in page("sites")   # docs/sites.md shows this comment's line
    # Only the budgeted instance was profiled, and its old site is shown gone.
    run_dir = repo / ".allocbench" / "ab" / f"{shas['base'][:12]}-{shas['moved'][:12]}"
    for side in ("base", "cand"):   # named by names.slug: the hash is sha256's
        assert [p.name for p in (run_dir / "sites" / side).glob("*.sites.json")] == [
            "span_creation_start_span-0f59846e23.sites.json"]
    assert "−96 B/op, −1 allocs/op: site gone `MakeTags`" in comment

    # --no-sites: the budget is not judged, and the comment says so where it lists budgets;
    # the user asked for it, so it does not fail the gate.
    code = cli.main(ab(repo, prefix, runner, "--no-sites"))
    comment = capsys.readouterr().out
    assert code == 0, comment
    assert comment.splitlines()[2] == (
        "**Found 0 regressions and 0 improvements; 6 metrics unchanged, 0 unstable, "
        "1 site budget not judged in full.**")
    assert section(comment, NOT_JUDGED) == [
        "", "scenario:`span_creation/start_span`", "", "- ⚠️ not profiled (--no-sites)", ""]
    readme = folded("sites")
    assert 'counts them ("1 site budget not judged in full")' in readme
    assert '"not profiled (--no-sites)"' in readme


def test_without_heaptrack_a_site_budget_stops_ab_before_it_builds(moved, prefix, runner,
                                                                    capsys, monkeypatch):
    from allocbench.base import packages
    from allocbench.base.errors import UserError
    from allocbench.history import buildspec

    def missing(needed):
        if "heaptrack" in needed:
            raise UserError("missing Debian packages; run as root:\n  sudo apt-get install "
                            "heaptrack")

    def no_build(*args, **kwargs):
        raise AssertionError("built although the budget cannot be judged")

    monkeypatch.setattr(packages, "ensure", missing)
    monkeypatch.setattr(buildspec, "build_plugins", no_build)
    repo, shas = moved
    assert cli.main(ab(repo, prefix, runner)) == 2
    err = capsys.readouterr().err
    assert f"{shas['base'][:12]}:allocbench.toml: its [[sites]] budgets need heaptrack to " \
        "profile allocation sites (or pass --no-sites): missing Debian packages" in err


# A span whose block moves, and whose candidate flushes at the end one byte per op it ran: the
# count pass does not see the flush (it is after the ops), heaptrack does, and its size depends
# on the run's length, so the candidate's sites do not sum to its count pass. A second instance
# only flushes, on both sides.
FLUSHING = """#include <allocbench/scenario.h>

#include <array>
#include <cstddef>

using Block = std::array<char, 96>;
__attribute__((noinline)) Block* MakeTags() { return new Block{'t'}; }
__attribute__((noinline)) Block* MakeBuffer() { return new Block{'b'}; }
__attribute__((noinline)) void Flush(std::size_t ops) {
  char* buffer = new char[ops];
  allocbench::DoNotOptimize(buffer);
  delete[] buffer;
}

ALLOCBENCH_SCENARIO(StartSpan, state) {
  std::size_t ops = 0;
  for (auto _ : state) {
    Block* block = MAKE();
    allocbench::DoNotOptimize(block);
    delete block;
    ++ops;
  }
  allocbench::DoNotOptimize(ops);
  FLUSH
}
ALLOCBENCH_REGISTER(StartSpan)->Name("span_creation/start_span");

ALLOCBENCH_SCENARIO(Flushed, state) {
  std::size_t ops = 0;
  for (auto _ : state) {
    ++ops;
    allocbench::DoNotOptimize(ops);
  }
  Flush(ops);
}
ALLOCBENCH_REGISTER(Flushed)->Name("span_creation/flushed");
"""
FLUSH_LINE = next(i for i, text in enumerate(FLUSHING.splitlines(), 1) if "new char" in text)
FLUSHING_BUFFER_LINE = next(i for i, text in enumerate(FLUSHING.splitlines(), 1)
                            if "MakeBuffer()" in text)


def test_a_side_that_does_not_sum_is_judged_on_its_steady_sites_and_none_never_passes(
        tmp_path, prefix, runner, capsys):
    # Under heaptrack the runs measure 3 + 2·N ops (3 warm-up, two windows of N = 2, 4, 6):
    # the flush allocates 7, 11 and 15 bytes, so the second run's extra ops show +11 B −7 B
    # and the third's +15 B −11 B; the block is 96 bytes in every op of each.
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "base", {"CMakeLists.txt": CMAKELISTS, "allocbench.toml": readme_budget(),
                          "spans.cc": FLUSHING.replace("MAKE", "MakeTags").replace("FLUSH", "")})
    commit(repo, "moved, and flushed", {"spans.cc": FLUSHING.replace("MAKE", "MakeBuffer")
                                        .replace("FLUSH", "Flush(ops);")})
    code = cli.main(ab(repo, prefix, runner))
    comment = capsys.readouterr().out
    assert code == 1, comment
    lines = comment.splitlines()
    assert lines[2] == ("**Found 0 regressions and 0 improvements; 6 metrics unchanged, "
                        "0 unstable, 1 allocation site beyond its budget, 2 site budgets not "
                        "judged in full.**")
    assert lines[4] == ("❌ Gate failed: 2 gated regressions (--fail-on any) in "
                        "span_creation/start_span (allocation site); span_creation/flushed "
                        "(allocation sites not judged).")
    # The block moved and was steady on both sides: beyond its budget, as ever.
    assert (f"- 🟥 beyond its budget (bytes_per_op +0): +96 B/op, +1 allocs/op: new site "
            f"MakeBuffer (spans.cc:{FLUSHING_BUFFER_LINE}) 1 × 96 B") in lines
    flush = f"Flush (spans.cc:{FLUSH_LINE})"
    assert section(comment, NOT_JUDGED) == [
        "", "scenario:`span_creation/start_span`", "",
        f"- ⚠️ judged on 2 of its 3 sites; not on {flush}, which allocated differently over "
        "two stretches of ops (its sites do not sum to its count pass on a side)",
        "", "scenario:`span_creation/flushed`", "",
        f"- 🟥 not judged, fails the gate: none of its sites can be judged: its sites do not "
        f"sum to its count pass on a side, and each of them ({flush}) allocated differently "
        "over two stretches of ops; make the instance deterministic, or leave it out of the "
        "\\[\\[sites\\]\\] match", ""]
    # docs/sites.md shows this section.
    readme = page("sites")
    block = readme[readme.index("<!-- sites-not-judged:begin -->"):
                   readme.index("<!-- sites-not-judged:end -->")].split("```")[1]
    assert block.strip("\n").splitlines() == [f"### {NOT_JUDGED}"] + \
        section(comment, NOT_JUDGED)[:-1]
    # The flush's change is shown (+4 B over 4 ops: +1 B/op), not judged.
    assert (f"- +1 B/op, +0 allocs/op: new site `Flush` (spans.cc:{FLUSH_LINE}) 0.25 × 11 B + "
            "-0.25 × 7 B") in lines
