"""Per-site budgets ([[sites]] in allocbench.toml, site_budget.py): an allocation that moved to
another site fails the gate although the instance's totals did not change. Hand-made site
tables here; `ab` end to end, with heaptrack on a real plugin: test_site_budget_ab.py."""

from __future__ import annotations

import json
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from allocbench import compare as cmp
from allocbench import compare_format, compare_json, config, site_budget, sites
from allocbench.errors import UserError
from conftest import ROOT

DATA = Path(__file__).parent / "data" / "compare"
MIXED = "ground_truth/mixed"   # 206 B/op, 5 allocs/op on both sides of the fixtures


def cost(function: str, line: int, *sizes: tuple[int, int]) -> sites.SiteCost:
    """A site of one frame (spans.cc:line) with (size, allocs per op) pairs."""
    return sites.SiteCost(sites.Site(((function, "spans.cc", line),), False),
                          tuple((size, Fraction(n)) for size, n in sizes))


# The move: 96 bytes per op allocated in MakeTags at the base, in MakeBuffer in the candidate.
BASE = [cost("Span::MakeTags", 5, (96, 1)), cost("Span::Name", 9, (17, 1))]
CAND = [cost("Span::MakeBuffer", 6, (96, 1)), cost("Span::Name", 9, (17, 1))]


def settings(toml: str, tmp_path: Path) -> config.Config:
    path = tmp_path / "allocbench.toml"
    path.write_text(toml)
    return config.load(path)


def test_a_moved_allocation_is_a_new_site_beyond_a_zero_budget(tmp_path):
    cfg = settings('[[sites]]\nmatch = "span/*"\nbytes_per_op = 0\n', tmp_path)
    changes = sites.diff(BASE, CAND)
    assert [(c.kind, c.bytes) for c in changes] == [("new", 96), ("gone", -96)]
    (excess,) = site_budget.excesses(cfg, "span/start", changes)
    assert excess == cmp.SiteExcess(
        "span/start", ("bytes_per_op",), "bytes_per_op +0",
        "+96 B/op, +1 allocs/op: new site Span::MakeBuffer (spans.cc:6) 1 × 96 B")
    # Not matched by the glob, or no change at all: nothing to judge.
    assert site_budget.excesses(cfg, "trace/start", changes) == ()
    assert site_budget.excesses(cfg, "span/start", sites.diff(BASE, BASE)) == ()


def test_budgets_in_bytes_allocs_and_percent_of_the_sites_base(tmp_path):
    grown = [cost("Span::MakeTags", 5, (96, 1), (8, 1)), cost("Span::Name", 9, (17, 1))]
    changes = sites.diff(BASE, grown)   # MakeTags: +8 B/op, +1 alloc/op
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
    assert len(site_budget.excesses(cfg, "span/start", sites.diff(BASE, CAND))) == 1


def test_the_last_matching_entry_wins_per_metric(tmp_path):
    cfg = settings('[[sites]]\nmatch = "*"\nbytes_per_op = 0\nallocs_per_op = 0\n'
                   '[[sites]]\nmatch = "span/*"\nbytes_per_op = 100\n', tmp_path)
    assert cfg.site_limit("span/start", "bytes_per_op") == config.Limit(100)
    assert cfg.site_limit("span/start", "allocs_per_op") == config.Limit(0)
    assert cfg.site_limit("trace/x", "bytes_per_op") == config.Limit(0)
    (excess,) = site_budget.excesses(cfg, "span/start", sites.diff(BASE, CAND))
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
    return site_budget.judge(comparison, cfg, {MIXED: sites.diff(BASE, CAND)})


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


def write_tables(folder: Path, costs: list[sites.SiteCost]) -> Path:
    folder.mkdir()
    (folder / "mixed.sites.json").write_text(json.dumps(
        {"instance": MIXED, "sites": sites.to_json(costs)}))
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
    (tmp_path / "allocbench.toml").write_text("")   # no budget: the move is shown, not gated
    done = compare("--fail-on", "alloc")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "+96 B/op, +1 allocs/op: new site Span::MakeBuffer (spans.cc:6)" in done.stdout
