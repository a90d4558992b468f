"""What the gate says of a sampled B/op it cannot judge (issue 23, item 7): one whose tolerance
is wider than its bound (gate/tolerance.py: 5% of the base, at least 1 B and at least the
configured or default tolerance), or that has none, is *unstable*, never *same*, and fails
--fail-on alloc|any unless `[sampled] unstable = "show"`. A side of several files is their
mean, its error the error of that mean. Every number below is computed here from the edited
fixtures.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from allocbench import cli
from allocbench.gate import compare, compare_format, compare_json, config, tolerance
from allocbench.gate.config import Config
from docs_pages import page

DATA = Path(__file__).parent / "data" / "import"
AVGT = "datadog.trace.core.SpanCreationBenchmark.startSpan (avgt)"   # jmh-*.json [0]
THRPT = "datadog.trace.core.TraceAssemblyBenchmark.assemble/childCount:5 (thrpt)"   # [1]
BDN_SPAN = "Datadog.Trace.Benchmarks.SpanBenchmark.StartFinishSpan"
T_9995_5 = 6.868827   # Student t, 99.95th percentile, 5 degrees of freedom (tables)


@pytest.fixture(autouse=True)
def elsewhere(tmp_path, monkeypatch):
    """Away from any ./allocbench.toml of the checkout."""
    monkeypatch.chdir(tmp_path)


def edited(path: Path, source: str, edit=lambda doc: None) -> Path:
    doc = json.loads((DATA / source).read_text())
    edit(doc)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def judged(base: Path, cand: Path, cfg: Config = Config()) -> compare.Comparison:
    return compare.compare(compare.load_side(base), compare.load_side(cand), cfg)


def change(c: compare.Comparison, name: str, metric: str = "bytes_per_op"):
    inst = next(i for i in c.instances if i.name == name)
    return next(x for x in (*inst.exact, *inst.time) if x.metric == metric)


def run(capsys, *args) -> tuple[int, str]:
    code = cli.main(["compare", *map(str, args)])
    out, err = capsys.readouterr()
    assert err == ""
    return code, out


def last_line(out: str) -> str:
    return out.rstrip("\n").splitlines()[-1]


def norm(index: int, score: float | None, error: float | str = 0.0):
    """jmh entry [index]'s gc.alloc.rate.norm set to score ± error; None: left out, as JMH 1.37
    does when nothing was allocated (then 0 B/op)."""
    def edit(doc):
        metrics = doc[index]["secondaryMetrics"]
        if score is None:
            del metrics["gc.alloc.rate.norm"]
        else:
            metrics["gc.alloc.rate.norm"].update(score=score, scoreError=error)
    return edit


# --- item 7: a tolerance wider than its bound is unstable --------------------------------------

def noisy(tmp_path: Path) -> Path:
    """The issue's candidate: startSpan 96 → 5,096 B/op, its scoreError 1e9."""
    return edited(tmp_path / "noisy.json", "jmh-cand.json", norm(0, 96.0 + 5000, 1e9))


def test_a_noisy_candidate_is_unstable_not_same_and_fails_the_gate(tmp_path, capsys):
    c = judged(DATA / "jmh-base.json", noisy(tmp_path))
    found = change(c, AVGT)
    assert (found.verdict, found.delta) == (compare.UNSTABLE, 5000.0)
    assert found.tolerance == math.hypot(0.001, 1e9)   # the base's scoreError is 0.001
    assert found.bound == pytest.approx(96 * 5 / 100)
    assert compare.unstable_alloc(c) == [(AVGT, "bytes_per_op")]
    assert compare.gated(c, "any") == compare.gated(c, "alloc") == [(AVGT, "bytes_per_op")]
    assert (AVGT, "bytes_per_op") not in compare.gated(c, "time")
    code, out = run(capsys, DATA / "jmh-base.json", noisy(tmp_path))
    assert code == 1
    assert compare_format.summary(c) in out.splitlines()
    # 4 metrics unchanged, the B/op above and sample-mode time (4 samples < 5) unstable
    assert compare_format.summary(c) == ("Found 0 regressions and 0 improvements; 4 metrics "
                                         "unchanged, 2 unstable (bytes_per_op of 1 instance).")
    assert last_line(out) == (
        f"Gate failed: 1 unstable allocation metric (--fail-on any) in {AVGT} (unstable "
        "bytes_per_op). An unstable allocation metric cannot be judged, so it fails the gate "
        '([sampled] unstable = "fail", the default).')
    assert ("+5,000 B (+5208.3%), sampled: tolerance ±1,000,000,000 B, wider than its bound "
            "±4.80 B") in out


def test_the_gate_line_tells_a_regression_from_an_unstable_metric(tmp_path):
    """startSpan 96 → 128 B/op (±0.001) worse, assemble's candidate scoreError 1e9 unstable."""
    cand = edited(tmp_path / "cand.json", "jmh-cand.json", norm(1, 1882.0, 1e9))
    c = judged(DATA / "jmh-base.json", cand)
    assert compare.gated(c, "alloc") == [(AVGT, "bytes_per_op"), (THRPT, "bytes_per_op")]
    assert compare_format.gate_line(c, "alloc") == (
        "Gate failed: 1 gated regression and 1 unstable allocation metric (--fail-on alloc) in "
        f"{AVGT} (bytes_per_op); {THRPT} (unstable bytes_per_op). An unstable allocation "
        'metric cannot be judged, so it fails the gate ([sampled] unstable = "fail", the '
        "default).")


def test_unstable_show_in_the_config_shows_it_and_passes(tmp_path, capsys):
    toml = tmp_path / "allocbench.toml"
    toml.write_text('[sampled]\nunstable = "show"\n')
    c = judged(DATA / "jmh-base.json", noisy(tmp_path), config.load(toml))
    assert (change(c, AVGT).verdict, compare.gated(c, "any")) == (compare.UNSTABLE, [])
    code, out = run(capsys, DATA / "jmh-base.json", noisy(tmp_path), "--config", toml)
    assert (code, last_line(out)) == (
        0, "Gate passed: no gated regression (--fail-on any); 1 unstable allocation metric "
           'shown, not gated ([sampled] unstable = "show").')
    markdown = compare_format.markdown(c, "any")
    assert "### Unstable or nondeterministic (never gate)" in markdown
    assert ('*unstable* without one or with one wider than its bound (5% of the base, at least '
            '1 B and at least the configured or default tolerance), which is shown, never '
            'gating ([sampled] unstable = "show").') in markdown


def test_the_comment_says_unstable_allocation_metrics_fail_the_gate(tmp_path):
    markdown = compare_format.markdown(judged(DATA / "jmh-base.json", noisy(tmp_path)), "any")
    lines = markdown.splitlines()
    assert lines[2] == ("**Found 0 regressions and 0 improvements; 4 metrics unchanged, 2 "
                        "unstable (bytes_per_op of 1 instance).**")
    assert lines[4].startswith("❌ Gate failed: 1 unstable allocation metric (--fail-on any)")
    assert lines[6] == ("### Unstable or nondeterministic (unstable allocation metrics fail "
                        "the gate, the rest never gate)")
    assert "which fails the gate." in lines[-1]


@pytest.mark.parametrize("cand_score, cand_error, verdict", [
    (168.0, 8.0, compare.SAME),        # tolerance 8 = the bound, 5% of 160: judged
    (168.5, 8.0, compare.WORSE),       # beyond it
    (168.0, 8.001, compare.UNSTABLE),  # a tolerance just wider than the bound
])
def test_the_bound_is_five_percent_of_the_base(tmp_path, cand_score, cand_error, verdict):
    base = edited(tmp_path / "base.json", "jmh-base.json", norm(0, 160.0, 0.0))
    cand = edited(tmp_path / "cand.json", "jmh-cand.json", norm(0, cand_score, cand_error))
    found = change(judged(base, cand), AVGT)
    assert (found.verdict, found.tolerance, found.bound) == (verdict, cand_error, 8.0)


@pytest.mark.parametrize("cand_score, cand_error, verdict", [
    (96.0, 0.001, compare.WORSE),      # 0 → 96 B/op: judged, beyond ±0.001
    (0.5, 0.6, compare.SAME),
    (0.5, 1.5, compare.UNSTABLE),      # wider than 1 B
])
def test_a_base_that_allocated_nothing_has_a_bound_of_one_byte(tmp_path, cand_score,
                                                                cand_error, verdict):
    base = edited(tmp_path / "base.json", "jmh-base.json", norm(0, None))   # 0 B/op, ±0
    cand = edited(tmp_path / "cand.json", "jmh-cand.json", norm(0, cand_score, cand_error))
    found = change(judged(base, cand), AVGT)
    assert (found.base, found.verdict, found.tolerance, found.bound) == (
        (0.0,), verdict, cand_error, 1.0)


def test_a_configured_tolerance_widens_the_bound_with_it(tmp_path):
    toml = tmp_path / "allocbench.toml"
    toml.write_text('[sampled]\ntolerance = "10%"\n')   # of 96 B: 9.6 B, wider than 4.8
    cfg = config.load(toml)
    quiet = edited(tmp_path / "quiet.json", "jmh-cand.json", norm(0, 104.0, 0.001))
    found = change(judged(DATA / "jmh-base.json", quiet, cfg), AVGT)
    assert (found.verdict, found.tolerance, found.bound) == (
        compare.SAME, pytest.approx(9.6), pytest.approx(9.6))
    found = change(judged(DATA / "jmh-base.json", noisy(tmp_path), cfg), AVGT)
    assert (found.verdict, found.bound) == (compare.UNSTABLE, pytest.approx(9.6))
    # BenchmarkDotNet's default floor (0.5%, at least 1 B) is within its bound, 5% of 536 B
    bdn = change(judged(DATA / "bdn-base-report-full.json",
                        DATA / "bdn-cand-report-full.json"), BDN_SPAN)
    assert (bdn.verdict, bdn.tolerance, bdn.bound) == (
        compare.WORSE, pytest.approx(2.68), pytest.approx(26.8))


def test_no_spread_and_nothing_configured_fails_the_gate(tmp_path, capsys):
    two_iterations = norm(0, 96.0, "NaN")   # and rawData of fewer than 3 values in all
    def edit(doc):
        two_iterations(doc)
        doc[0]["secondaryMetrics"]["gc.alloc.rate.norm"]["rawData"] = [[96.0], [96.0]]
    base = edited(tmp_path / "base.json", "jmh-base.json", edit)
    code, out = run(capsys, base, DATA / "jmh-cand.json", "--fail-on", "alloc")
    assert (code, last_line(out)) == (
        1, f"Gate failed: 1 unstable allocation metric (--fail-on alloc) in {AVGT} (unstable "
           "bytes_per_op). An unstable allocation metric cannot be judged, so it fails the gate "
           '([sampled] unstable = "fail", the default).')
    assert ("sampled: no tolerance (no spread in the files (fewer than 3 iterations) and no "
            "[sampled] tolerance in allocbench.toml)") in out


# --- a side of several files: the mean, and the error of the mean ------------------------------

def test_two_files_alike_are_two_estimates(tmp_path):
    """Two copies of jmh-base.json: the mean of 1880.5 ± 2.0 twice is 1880.5 ± 2.0/√2; with the
    candidate's ± 2.1, the tolerance is √(2.0²/2 + 2.1²) = √6.41. (Collapsing the copies into
    one estimate, as before, gave √(2.0² + 2.1²) = 2.9.)"""
    for name in ("a.json", "b.json"):
        edited(tmp_path / "base" / name, "jmh-base.json")
    found = change(judged(tmp_path / "base", DATA / "jmh-cand.json"), THRPT)
    assert found.base == (1880.5,)
    assert found.tolerance == pytest.approx(math.sqrt(6.41), rel=1e-12)


def test_two_files_that_differ_are_their_mean_and_its_error(tmp_path):
    """1880.5 ± 2.0 and 1879.5 ± 1.0: 1880.0 ± √(2.0² + 1.0²)/2; the tolerance with the
    candidate's 2.1 is √(5/4 + 2.1²) = √5.66. Each file's two forks count once."""
    edited(tmp_path / "base" / "a.json", "jmh-base.json")
    edited(tmp_path / "base" / "b.json", "jmh-base.json", norm(1, 1879.5, 1.0))
    found = change(judged(tmp_path / "base", DATA / "jmh-cand.json"), THRPT)
    assert (found.base, found.delta) == ((1880.0,), 2.0)
    assert found.tolerance == pytest.approx(math.sqrt(5.66), rel=1e-12)


# --- the JSON keeps the rule -------------------------------------------------------------------

def test_json_round_trip_keeps_the_bound_and_the_rule(tmp_path):
    c = judged(DATA / "jmh-base.json", noisy(tmp_path))
    doc = json.loads(compare_json.to_json(c, "any"))
    assert doc["gate"]["sampled_unstable"] == "fail"
    assert doc["gate"]["failed"] == [{"instance": AVGT, "metric": "bytes_per_op"}]
    exact = next(i for i in doc["instances"] if i["name"] == AVGT)["exact"][0]
    assert (exact["verdict"], exact["bound"]) == ("unstable", pytest.approx(4.8))
    back, fail_on = compare_json.from_json(doc, "c.json")
    assert compare_format.markdown(back, fail_on) == compare_format.markdown(c, "any")
    # Written before unstable allocation metrics gated: they did not, and are read so.
    del doc["gate"]["sampled_unstable"]
    back, _ = compare_json.from_json(doc, "c.json")
    assert (back.sampled_unstable, compare.gated(back, "any")) == ("show", [])


# --- the README --------------------------------------------------------------------------------

SECTION = page("imports").split(
    "# Results of Google Benchmark, JMH and BenchmarkDotNet\n")[1].split("\n## ")[0]
PROSE = " ".join(SECTION.split("<!-- import-unstable-example:begin -->")[0].split())


def test_the_readme_unstable_example_is_this_output(monkeypatch, capsys):
    """jmh-cand-noisy.json is jmh-cand.json with startSpan's norm from rawData of five
    iterations at 96 B and one at 96 + 30,000: its mean and JMH's scoreError (t(99.95%, 5) ·
    sd / √6) are what the README's prose says, and its output is the README's block."""
    doc = json.loads((DATA / "jmh-cand-noisy.json").read_text())
    entry = doc[0]["secondaryMetrics"]["gc.alloc.rate.norm"]
    values = [v for fork in entry["rawData"] for v in fork]
    assert sorted(values) == [96.0] * 5 + [96.0 + 30_000]
    mean = sum(values) / 6
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / 5)
    assert (entry["score"], entry["scoreError"]) == (mean, pytest.approx(T_9995_5 * sd / 6 ** .5))
    assert (f"one iteration in six allocated {30_000:,} B more (96 → {mean:,.0f} B/op, "
            f"`scoreError` {entry['scoreError']:,.0f} B) was *same* before") in PROSE
    monkeypatch.chdir(DATA)
    code, out = run(capsys, "jmh-base.json", "jmh-cand-noisy.json")
    block = SECTION.split("<!-- import-unstable-example:begin -->\n")[1].split(
        "<!-- import-unstable-example:end -->")[0]
    assert (code, block) == (
        1, f"```\n$ allocbench compare jmh-base.json jmh-cand-noisy.json\n{out}```\n")


def test_the_readme_states_the_bound_and_the_opt_out(tmp_path):
    percent, least = tolerance.BOUND
    assert f"the bound is {percent:g}% of the base (at least {least:g} B" in PROSE
    (block,) = re.findall(r"```toml\n(.*?)```", SECTION, re.S)
    toml = tmp_path / "allocbench.toml"
    toml.write_text(block)
    assert config.load(toml).sampled == config.Sampled(None, "show")
    assert f'# default "{config.Sampled().unstable}"' in block
