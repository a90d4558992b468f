"""Per-site budgets ([[sites]] in allocbench.toml, site_budget.py): an allocation that moved to
another site fails the gate although the instance's totals did not change. Hand-made site
tables here; `ab` end to end, with heaptrack on a real plugin: test_site_budget_ab.py."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest

from allocbench.base.errors import UserError
from allocbench.sites import per_op
from allocbench.gate import compare as cmp, compare_format, compare_json, config, site_budget
from conftest import ROOT

DATA = Path(__file__).parent / "data" / "compare"
MIXED = "ground_truth/mixed"   # 206 B/op, 5 allocs/op on both sides of the fixtures


def cost(function: str, line: int, *sizes: tuple[int, int]) -> per_op.SiteCost:
    """A site of one frame (spans.cc:line) with (size, allocs per op) pairs."""
    return per_op.SiteCost(per_op.Site(((function, "spans.cc", line),), False),
                          tuple((size, Fraction(n)) for size, n in sizes))


# The move: 96 bytes per op allocated in MakeTags at the base, in MakeBuffer in the candidate.
BASE = [cost("Span::MakeTags", 5, (96, 1)), cost("Span::Name", 9, (17, 1))]
CAND = [cost("Span::MakeBuffer", 6, (96, 1)), cost("Span::Name", 9, (17, 1))]


def section(comment: str, title: str) -> list[str]:
    """The lines of the comment's section `title`, up to the next section or table."""
    lines = comment.splitlines()
    start = lines.index(f"### {title}") + 1
    end = next((i for i in range(start, len(lines))
                if lines[i].startswith(("### ", "<details>"))), len(lines))
    return lines[start:end]


NOT_JUDGED = "Site budgets not judged (`[[sites]]` in allocbench.toml)"


def settings(toml: str, tmp_path: Path) -> config.Config:
    path = tmp_path / "allocbench.toml"
    path.write_text(toml)
    return config.load(path)


def test_a_moved_allocation_is_a_new_site_beyond_a_zero_budget(tmp_path):
    cfg = settings('[[sites]]\nmatch = "span/*"\nbytes_per_op = 0\n', tmp_path)
    changes = per_op.diff(BASE, CAND)
    assert [(c.kind, c.bytes) for c in changes] == [("new", 96), ("gone", -96)]
    (excess,) = site_budget.excesses(cfg, "span/start", changes)
    assert excess == cmp.SiteExcess(
        "span/start", ("bytes_per_op",), "bytes_per_op +0",
        "+96 B/op, +1 allocs/op: new site Span::MakeBuffer (spans.cc:6) 1 × 96 B")
    # Not matched by the glob, or no change at all: nothing to judge.
    assert site_budget.excesses(cfg, "trace/start", changes) == ()
    assert site_budget.excesses(cfg, "span/start", per_op.diff(BASE, BASE)) == ()


def test_budgets_in_bytes_allocs_and_percent_of_the_sites_base(tmp_path):
    grown = [cost("Span::MakeTags", 5, (96, 1), (8, 1)), cost("Span::Name", 9, (17, 1))]
    changes = per_op.diff(BASE, grown)   # MakeTags: +8 B/op, +1 alloc/op
    assert [(c.kind, c.bytes, c.allocs) for c in changes] == [("changed", 8, 1)]

    def beyond(toml: str) -> list[tuple[str, ...]]:
        cfg = settings(f'[[sites]]\nmatch = "*"\n{toml}', tmp_path)
        return [e.metrics for e in site_budget.excesses(cfg, "span/start", changes)]

    assert beyond("bytes_per_op = 8\n") == []                  # 8 B allowed: +8 is within
    assert beyond("bytes_per_op = 7\n") == [("bytes_per_op",)]
    assert beyond('bytes_per_op = "8.5%"\n') == []             # 8.5% of 96 B = 8.16 B
    assert beyond('bytes_per_op = "8%"\n') == [("bytes_per_op",)]   # 7.68 B
    assert beyond("allocs_per_op = 0\n") == [("allocs_per_op",)]
    assert beyond("bytes_per_op = 0\nallocs_per_op = 0\n") == [("bytes_per_op",
                                                                 "allocs_per_op")]
    # A new site's base is 0: a percent allows it nothing.
    cfg = settings('[[sites]]\nmatch = "*"\nbytes_per_op = "50%"\n', tmp_path)
    assert len(site_budget.excesses(cfg, "span/start", per_op.diff(BASE, CAND))) == 1


def test_the_last_matching_entry_wins_per_metric(tmp_path):
    cfg = settings('[[sites]]\nmatch = "*"\nbytes_per_op = 0\nallocs_per_op = 0\n'
                   '[[sites]]\nmatch = "span/*"\nbytes_per_op = 100\n', tmp_path)
    assert cfg.site_limit("span/start", "bytes_per_op") == config.Limit(100)
    assert cfg.site_limit("span/start", "allocs_per_op") == config.Limit(0)
    assert cfg.site_limit("trace/x", "bytes_per_op") == config.Limit(0)
    (excess,) = site_budget.excesses(cfg, "span/start", per_op.diff(BASE, CAND))
    assert (excess.metrics, excess.budget) == (("allocs_per_op",), "allocs_per_op +0")
    assert not site_budget.budgeted(config.Config(), "span/start")
    assert site_budget.budgeted(cfg, "trace/x")


@pytest.mark.parametrize("toml, message", [
    ('[[sites]]\nbytes_per_op = 0\n', "sites[1] has no 'match'; add a glob over instance names"),
    ('[[sites]]\nmatch = 3\nbytes_per_op = 0\n', "'sites[1].match' must be a glob over instance "
     "names"),
    ('[[sites]]\nmatch = "*"\n', "sites[1] names no metric; add bytes_per_op = 0"),
    ('[[sites]]\nmatch = "*"\nbyte_per_op = 0\n',
     "unknown key 'sites[1].byte_per_op'; the known keys here are match, bytes_per_op, "
     "allocs_per_op"),
    ('[[sites]]\nmatch = "*"\nbytes_per_op = -1\n', "'sites[1].bytes_per_op' must be an "
     "allowed increase"),
    ('[sites]\nmatch = "*"\n', "'sites' must be an array of tables ([[sites]] entries)"),
])
def test_a_damaged_sites_table_is_refused(tmp_path, toml, message):
    with pytest.raises(UserError, match="^" + str(tmp_path / "allocbench.toml") + ": ") as e:
        settings(toml, tmp_path)
    assert message in str(e.value)


def judged(tmp_path) -> cmp.Comparison:
    """The compare fixtures, with MIXED's 96 bytes moved (its totals unchanged)."""
    cfg = settings(f'[[sites]]\nmatch = "{MIXED}"\nbytes_per_op = 0\n', tmp_path)
    comparison = cmp.compare(cmp.load_side(DATA / "base.json"),
                             cmp.load_side(DATA / "cand.json"), cfg)
    return site_budget.judge(comparison, cfg, {MIXED: per_op.diff(BASE, CAND)})


def test_a_site_beyond_its_budget_fails_the_gate_in_every_output(tmp_path):
    comparison = judged(tmp_path)
    moved = (MIXED, cmp.SITE)
    assert moved in cmp.gated(comparison, "alloc") and moved in cmp.gated(comparison, "any")
    assert moved not in cmp.gated(comparison, "time")
    comment = compare_format.markdown(comparison, "any")
    section = comment.split("### Allocation sites beyond their budget (`[[sites]]` in "
                            "allocbench.toml)\n")[1].split("\n\n###")[0]
    assert section.splitlines() == [
        "", f"scenario:`{MIXED}`", "",
        "- 🟥 beyond its budget (bytes_per_op +0): +96 B/op, +1 allocs/op: new site "
        "Span::MakeBuffer (spans.cc:6) 1 × 96 B"]
    assert "1 allocation site beyond its budget" in comment.splitlines()[2]
    assert f"{MIXED} (allocation site)" in comment
    console = compare_format.console(comparison, "any")
    assert (f"site beyond budget  {MIXED}  +96 B/op, +1 allocs/op: new site Span::MakeBuffer "
            "(spans.cc:6) 1 × 96 B (budget per site: bytes_per_op +0)") in console.splitlines()
    # The JSON carries it, and reads back into the same gate (a report judges as ab did).
    doc = json.loads(compare_json.to_json(comparison, "any"))
    assert {"instance": MIXED, "metric": cmp.SITE} in doc["gate"]["failed"]
    back, fail_on = compare_json.from_json(doc, "comparison.json")
    assert back.site_excesses == comparison.site_excesses
    assert cmp.gated(back, fail_on) == cmp.gated(comparison, "any")
    doc["site_excesses"][0]["metrics"] = ["frees_per_op"]
    with pytest.raises(UserError, match=r"site_excesses\[0\]\.metrics\[0\] is"):
        compare_json.from_json(doc, "comparison.json")


def write_tables(folder: Path, costs: list[per_op.SiteCost]) -> Path:
    folder.mkdir()
    (folder / "mixed.sites.json").write_text(json.dumps(
        {"instance": MIXED, "sites": per_op.to_json(costs)}))
    return folder


def test_compare_judges_the_site_tables_it_is_given_against_the_config(tmp_path):
    base, cand = write_tables(tmp_path / "b", BASE), write_tables(tmp_path / "c", CAND)
    (tmp_path / "allocbench.toml").write_text(f'[[sites]]\nmatch = "{MIXED}"\n'
                                              'bytes_per_op = 0\n')

    def compare(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(ROOT / "allocbench"), "compare", str(DATA / "base.json"),
                               str(DATA / "base.json"), "--sites", str(base), str(cand), *args],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120)

    done = compare("--fail-on", "alloc")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Found 0 regressions and 0 improvements" in done.stdout
    assert f"Gate failed: 1 gated regression (--fail-on alloc) in {MIXED} (allocation site)." \
        in done.stdout
    # A budget over instances the folders hold no table of cannot be judged: it fails.
    (tmp_path / "allocbench.toml").write_text('[[sites]]\nmatch = "ground_truth/*"\n'
                                              'allocs_per_op = 0\n')
    done = compare("--fail-on", "alloc")
    assert done.returncode == 1, done.stdout + done.stderr
    assert ("Gate failed: 4 gated regressions (--fail-on alloc) in ground_truth/mixed "
            "(allocation site); ground_truth/sized/bytes:24 (allocation sites not judged); "
            "ground_truth/growing_vector (allocation sites not judged); ground_truth/fails "
            "(allocation sites not judged).") in done.stdout
    assert ("site budget not judged  ground_truth/sized/bytes:24  its sites were not profiled "
            "on both sides (fails the gate)") in done.stdout.splitlines()
    (tmp_path / "allocbench.toml").write_text("")   # no budget: the move is shown, not gated
    done = compare("--fail-on", "alloc")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "+96 B/op, +1 allocs/op: new site Span::MakeBuffer (spans.cc:6)" in done.stdout


# A flush at the end of the candidate's instance: it allocates once, as many bytes as ops ran,
# so two runs of different lengths disagree; on the table its sizes do not cancel.
FLUSH = cost("Span::Flush", 30, (11, 1), (7, -1))
NOT_STEADY = "which allocated differently over two stretches of ops"


def compared(tmp_path, toml: str = f'[[sites]]\nmatch = "{MIXED}"\nbytes_per_op = 0\n'
             ) -> tuple[cmp.Comparison, config.Config]:
    cfg = settings(toml, tmp_path)
    return cmp.compare(cmp.load_side(DATA / "base.json"), cmp.load_side(DATA / "cand.json"),
                       cfg), cfg


def test_a_side_that_does_not_sum_is_judged_on_its_steady_sites(tmp_path):
    # The case: the candidate's sites do not sum to its count pass (the flush), and the
    # moved block, steady on both sides, is still beyond the budget.
    comparison, cfg = compared(tmp_path)
    cand = CAND + [FLUSH]
    shaky = per_op.Unsteady.of(BASE, frozenset(), cand, frozenset({FLUSH.site}))
    judged = site_budget.judge(comparison, cfg, {MIXED: per_op.diff(BASE, cand)},
                               {MIXED: shaky})
    (excess,) = judged.site_excesses
    assert excess.text == "+96 B/op, +1 allocs/op: new site Span::MakeBuffer (spans.cc:6) 1 × 96 B"
    # MakeTags, Name, MakeBuffer judged; the flush named, without failing the gate.
    assert judged.sites_not_judged == (cmp.SitesNotJudged(MIXED, (
        f"judged on 3 of its 4 sites; not on Span::Flush (spans.cc:30), {NOT_STEADY} (its "
        "sites do not sum to its count pass on a side)"), gates=False),)
    assert [g for g in cmp.gated(judged, "any") if g[0] == MIXED] == [(MIXED, cmp.SITE)]
    # Had the block stayed, only the flush would have changed: no excess, the gate passes.
    stayed = site_budget.judge(comparison, cfg, {MIXED: per_op.diff(BASE, BASE + [FLUSH])},
                               {MIXED: per_op.Unsteady.of(BASE, frozenset(), BASE + [FLUSH],
                                                         frozenset({FLUSH.site}))})
    assert stayed.site_excesses == () and (MIXED, cmp.NOT_JUDGED) not in cmp.gated(stayed, "any")


def test_a_budget_none_of_whose_sites_can_be_judged_fails_the_gate_in_every_output(tmp_path):
    comparison, cfg = compared(tmp_path)
    shaky = per_op.Unsteady.of([FLUSH], frozenset({FLUSH.site}), [FLUSH], frozenset({FLUSH.site}))
    judged = site_budget.judge(comparison, cfg, {MIXED: []}, {MIXED: shaky})
    reason = ("none of its sites can be judged: its sites do not sum to its count pass on a "
              "side, and each of them (Span::Flush (spans.cc:30)) allocated differently over "
              "two stretches of ops; make the instance deterministic, or leave it out of the "
              "[[sites]] match")
    assert judged.sites_not_judged == (cmp.SitesNotJudged(MIXED, reason, gates=True),)
    assert (MIXED, cmp.NOT_JUDGED) in cmp.gated(judged, "alloc")
    assert (MIXED, cmp.NOT_JUDGED) not in cmp.gated(judged, "time")
    comment = compare_format.markdown(judged, "any")
    assert "1 site budget not judged in full" in comment.splitlines()[2]
    assert f"{MIXED} (allocation sites not judged)" in comment.splitlines()[4]
    assert section(comment, NOT_JUDGED) == [
        "", f"scenario:`{MIXED}`", "",
        "- 🟥 not judged, fails the gate: none of its sites can be judged: its sites do not sum "
        "to its count pass on a side, and each of them (Span::Flush (spans.cc:30)) allocated "
        "differently over two stretches of ops; make the instance deterministic, or leave it "
        "out of the \\[\\[sites\\]\\] match", ""]
    assert f"site budget not judged  {MIXED}  {reason} (fails the gate)" in \
        compare_format.console(judged, "any").splitlines()
    doc = json.loads(compare_json.to_json(judged, "any"))
    assert doc["sites_not_judged"] == [{"instance": MIXED, "reason": reason, "gates": True}]
    assert {"instance": MIXED, "metric": cmp.NOT_JUDGED} in doc["gate"]["failed"]
    back, fail_on = compare_json.from_json(doc, "comparison.json")
    assert back.sites_not_judged == judged.sites_not_judged
    assert cmp.gated(back, fail_on) == cmp.gated(judged, "any")
    doc["sites_not_judged"][0]["gates"] = "yes"
    with pytest.raises(UserError, match=r"sites_not_judged\[0\]\.gates is"):
        compare_json.from_json(doc, "comparison.json")


def test_a_side_that_does_not_sum_with_no_site_at_all_fails_the_gate(tmp_path):
    # The count pass counted what heaptrack did not see: there is nothing steady to judge.
    comparison, cfg = compared(tmp_path)
    shaky = per_op.Unsteady.of([], frozenset(), [], frozenset())
    assert shaky == per_op.Unsteady((), steady=0)
    judged = site_budget.judge(comparison, cfg, {MIXED: []}, {MIXED: shaky})
    assert judged.sites_not_judged == (cmp.SitesNotJudged(MIXED, (
        "none of its sites can be judged: its sites do not sum to its count pass on a side, and "
        "heaptrack saw no site allocate per op; make the instance deterministic, or leave it "
        "out of the [[sites]] match"), gates=True),)


def test_a_budgeted_instance_that_could_not_be_profiled_fails_the_gate(tmp_path):
    comparison, cfg = compared(tmp_path)
    why = "heaptrack allocbench-run-profile (ground_truth/mixed) failed with exit code 3: x"
    failed = site_budget.judge(comparison, cfg, {}, failed={MIXED: why})
    assert failed.sites_not_judged == (cmp.SitesNotJudged(
        MIXED, f"profiling it under heaptrack failed: {why}", gates=True),)
    missing = site_budget.judge(comparison, cfg, {})
    assert missing.sites_not_judged == (cmp.SitesNotJudged(
        MIXED, "its sites were not profiled on both sides", gates=True),)
    assert (MIXED, cmp.NOT_JUDGED) in cmp.gated(missing, "any")


def test_a_budgeted_instance_that_failed_is_named_only_when_the_base_failed(tmp_path):
    comparison, cfg = compared(tmp_path, '[[sites]]\nmatch = "ground_truth/*"\n'
                                         'bytes_per_op = 0\n')
    sized = "ground_truth/sized/bytes:24"
    base_failed = replace(comparison, instances=tuple(
        replace(i, failure="base: crashed") if i.name == sized else i
        for i in comparison.instances))
    judged = site_budget.judge(base_failed, cfg, {MIXED: per_op.diff(BASE, BASE)})
    # ground_truth/fails failed in the candidate: that fails the gate already, and is not named.
    assert [i.failure for i in comparison.instances if i.name == "ground_truth/fails"] == [
        "candidate: SkipWithError: the tag table is full"]
    assert judged.sites_not_judged == (cmp.SitesNotJudged(
        sized, "it failed in the base: crashed", gates=False),)


def test_no_sites_names_each_budget_not_judged_without_failing(tmp_path):
    comparison, cfg = compared(tmp_path, '[[sites]]\nmatch = "ground_truth/*"\n'
                                         'bytes_per_op = 0\n')
    skipped = site_budget.unjudged(comparison, cfg, "not profiled (--no-sites)")
    assert skipped.sites_not_judged == tuple(
        cmp.SitesNotJudged(name, "not profiled (--no-sites)", gates=False)
        for name in ("ground_truth/mixed", "ground_truth/sized/bytes:24"))
    assert not any(m == cmp.NOT_JUDGED for _, m in cmp.gated(skipped, "any"))
    comment = compare_format.markdown(skipped, "any")
    assert "2 site budgets not judged in full" in comment.splitlines()[2]
    assert section(comment, NOT_JUDGED) == [
        "", "scenario:`ground_truth/mixed`", "", "- ⚠️ not profiled (--no-sites)",
        "", "scenario:`ground_truth/sized/bytes:24`", "", "- ⚠️ not profiled (--no-sites)", ""]


def test_a_site_that_allocates_more_at_equal_bytes_is_judged_on_its_allocations(tmp_path):
    # 1 × 64 B → 2 × 32 B: within a bytes budget of 0, beyond an allocations budget of 0.
    changes = per_op.diff([cost("Span::Tag", 5, (64, 1))], [cost("Span::Tag", 5, (32, 2))])

    def beyond(toml: str) -> list[tuple[str, ...]]:
        cfg = settings(f'[[sites]]\nmatch = "*"\n{toml}', tmp_path)
        return [e.metrics for e in site_budget.excesses(cfg, "span/start", changes)]

    assert beyond("bytes_per_op = 0\n") == []
    assert beyond("allocs_per_op = 0\n") == [("allocs_per_op",)]
    assert beyond('allocs_per_op = "100%"\n') == []   # 100% of 1 alloc/op allows +1
    assert beyond('allocs_per_op = "99%"\n') == [("allocs_per_op",)]
