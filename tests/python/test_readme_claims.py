"""The README's numbers in prose, each derived from what it counts or from a command's output
(issue 11): collected test cases, the runner's defaults and measurements, the hooks' sources,
the synthetic histories' known values run through sweep_table and bisection, compare's message.
Every claim is matched on the page of the guide that holds it (docs/<page>.md, docs_pages.py)
with its line breaks folded into single spaces."""

from __future__ import annotations

import argparse
import copy
import importlib
import importlib.util
import inspect
import json
import math
import re
import subprocess
import sys
from collections import Counter

import pytest

import realistic_subject as real
import synthetic_history as synth
import test_determinism
import test_hostile_inputs as hostile
from allocbench.base import exit_codes
from allocbench.history import bisection, sweep, sweep_table
from allocbench.gate import config
from conftest import ROOT, count_only, run_runner
from docs_pages import page
from test_faults import FAULTS

WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()


def folded(text: str) -> str:
    return " ".join(text.split())


# --- test cases, as pytest collects them ---------------------------------------------------

@pytest.fixture(scope="module")
def collected() -> dict[str, list[str]]:
    """{test function: the ids of its collected cases} of the files the README counts in; "*"
    is every case of test_hostile_inputs.py but its own check of the README."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", "tests/python/test_hostile_inputs.py",
                           "tests/python/test_faults.py"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    found: dict[str, list[str]] = {"*": []}
    for node in (line for line in done.stdout.splitlines() if "::" in line):
        path, test = node.split("::", 1)
        function, _, case = test.partition("[")
        found.setdefault(function, []).append(case[:-1])
        if path.endswith("test_hostile_inputs.py") and "readme" not in function:
            found["*"].append(test)
    return found


RELIABILITY = [  # (the README's words, the test functions whose cases they count)
    ("Damaged or hostile input, {} cases", ["*"]),
    ("exit 0 or 1: {} damaged candidates given to `compare`",
     ["test_compare_refuses_a_damaged_candidate"]),
    ("{} damaged store records",
     ["test_merge_refuses_a_damaged_store_record",
      "test_sweep_table_refuses_a_damaged_store_record",
      "test_a_damaged_store_record_stops_bisect_before_anything_is_built"]),
    ("{} bad `--threshold`s", ["test_threshold_must_be_a_positive_finite_percentage"]),
    ("{} damaged calibrations", ["test_a_damaged_calibration_is_refused"]),
    ("{} damaged `allocbench.toml`s", ["test_a_damaged_allocbench_toml_is_refused"]),
    ("{} output paths of allocbench's own files",
     ["test_write_atomically_refuses_what_is_not_a_regular_file"]),
    ("and {} plugins broken before any scenario runs",
     ["test_a_plugin_broken_before_any_scenario_is_refused"]),
]


@pytest.mark.parametrize("claim, functions", RELIABILITY, ids=[c for c, _ in RELIABILITY])
def test_reliability_counts_the_collected_cases(collected, claim, functions):
    assert claim.format(sum(len(collected[f]) for f in functions)) in folded(page("reliability"))


# The damaged candidates by kind (the part before ": " in each case's id).
KINDS = [
    ("NaN and infinities {}", ["NaN or Infinity"]),
    ("numbers out of range {}", ["number out of range"]),
    ("null, missing, boolean or string metrics {}",
     ["null metric", "missing metric", "bool metric", "string metric"]),
    ("sections of the wrong type {}", ["section of the wrong type"]),
    ("damaged field lists {}", ["field list damaged"]),
    ("gated fields that differ between sides {}", ["gated fields differ between the sides"]),
    ("duplicated instances or keys {}", ["duplicated instance"]),
    ("damaged instances {}", ["instance damaged"]),
    ("and contexts {}", ["context damaged"]),
    ("binary {}", ["binary garbage"]),
    ("UTF-16/32 and Latin-1 {}", ["not UTF-8"]),
    ("deep {}", ["nested too deep"]),
    ("empty {}", ["empty file"]),
    ("truncated {}", ["truncated file"]),
    ("not a results file {}", ["not a results document"]),
    ("an interrupted run {}", ["interrupted run"]),
    ("sides measured with different passes {}", ["passes differ between the sides"]),
    ("regression hidden behind a damaged field {}", ["regression and a damaged field"]),
]


def test_the_damaged_candidates_are_counted_by_kind(collected):
    ids = collected["test_compare_refuses_a_damaged_candidate"]
    kinds = Counter(i.split(": ")[0] for i in ids)
    assert sorted(k for _, ks in KINDS for k in ks) == sorted(kinds), "a kind the README omits"
    listed = folded(page("reliability").split("**Damaged or hostile input")[1]
                    .split("damaged store records")[0])
    # Each count ends where the number does: "binary 3" must not pass for "binary 30".
    claims = [claim.format(sum(kinds[k] for k in ks)) for claim, ks in KINDS]
    assert [c for c in claims if not re.search(re.escape(c) + r"(,|\)| and )", listed)] == []
    depths = sorted({int(d) for i in ids if i.startswith("nested too deep")
                     for d in re.findall(r"(\d+) deep", i)})
    assert f"nesting {depths[0]:,} to {depths[-1]:,} deep {kinds['nested too deep']}" in listed
    doc = copy.deepcopy(hostile.CAND)
    hostile.plus_1000_bytes(doc)
    base = json.loads(hostile.BASE.read_text())["results"][2]["alloc"]["bytes_per_op"]
    grown = doc["results"][2]["alloc"]["bytes_per_op"] - base
    assert f"a +{grown} B/op regression hidden behind a damaged field" in listed


def test_the_fault_kinds_are_the_faults_test_checks():
    misuses = [n for n in FAULTS if n.startswith("misuse/") and "utf8" not in n
               and "control" not in n]
    text = folded(page("reliability"))
    assert f"Faulting scenarios, {len(FAULTS)} kinds" in text
    assert f"a clean count pass, {WORDS[len(misuses)]} misuses of the scenario API" in text


# --- what allocbench-run measures and defaults to ---------------------------------------------

def test_the_faults_prose_is_what_allocbench_run_measures(runner, build_dir, tmp_path):
    alloc = count_only(runner, build_dir / "tests" / "plugins" / "faults.so", tmp_path / "r.json",
                       "--filter", "^(good/before|fault/leak)$")
    good, leak = alloc["good/before"], alloc["fault/leak"]
    text = folded(page("scenarios"))
    assert (f"both good instances measure exactly {good['bytes_per_op']:g} B/op in "
            f"{good['allocs_per_op']:g} allocations, with {good['background_allocs_per_op']:g} "
            "background allocations") in text
    assert f"is measured ({leak['bytes_per_op']:g} B/op, {leak['frees_per_op']:g} frees)" in text


def test_the_tests_sections_ground_truth_is_measured(runner, ground_truth, tmp_path):
    text = folded(page("tests"))
    found = re.search(r"a scenario doing (\d+) × `new` of (\d+) B, `malloc\((\d+)\)` and a "
                      r"(\d+)-character `strdup` reports exactly (\d+) B/op, (\d+) allocs/op, "
                      r"(\d+) frees/op, with setup and paused regions excluded", text)
    news, size, malloc, chars, b, a, f = map(int, found.groups())
    assert (news * size + malloc + chars + 1, news + 2, news + 2) == (b, a, f)
    alloc = count_only(runner, ground_truth, tmp_path / "r.json", "--filter",
                       "^ground_truth/(mixed|setup_and_pause|threaded)")
    for name in ("ground_truth/mixed", "ground_truth/setup_and_pause"):
        assert (alloc[name]["bytes_per_op"], alloc[name]["allocs_per_op"],
                alloc[name]["frees_per_op"]) == (b, a, f)
    (threaded,) = [n for n in alloc if n.startswith("ground_truth/threaded/threads:")]
    assert f"{threaded.rsplit(':', 1)[1]} threads give exact totals" in text


DEFAULTS = [  # (flag, where the results' context records it, the page, the page's words)
    ("--count-warmup", ("count", "warmup_ops"), "measurement",
     "(`--count-warmup`, default {} ops including the cold one)"),
    ("--count-ops", ("count", "window_ops"), "measurement",
     "two windows of `--count-ops` (default {}) ops"),
    ("--repetitions", ("time", "repetitions"), "measurement", "`--repetitions` times (default {})"),
    ("--min-time", ("time", "min_time_s"), "measurement",
     "for at least `--min-time` seconds each (default {})"),
    ("--instance-timeout", ("isolation", "instance_timeout_s"), "scenarios",
     "runs longer than `--instance-timeout` (default {} s)"),
]


def test_the_documented_defaults_are_allocbench_runs(runner, ground_truth, tmp_path):
    done = run_runner(runner, "--plugin", str(ground_truth), "--filter", "^ground_truth/mixed$",
                      "--quiet", "--out", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    context = json.loads((tmp_path / "r.json").read_text())["context"]
    usage = run_runner(runner, "--help").stdout
    for flag, (part, key), name, claim in DEFAULTS:
        value = f"{context[part][key]:g}"
        assert claim.format(value) in folded(page(name)), flag
        said = re.search(rf"\n  {flag} .*?\[([^\]]*)\]", usage, re.S).group(1)
        assert said == value, (flag, said)


# --- the gate and the commands' defaults --------------------------------------------------------

def default(command: str, dest: str):
    parser = argparse.ArgumentParser()
    importlib.import_module(f"allocbench.commands.{command}").setup_arguments(parser)
    return parser.get_default(dest)


def test_the_gates_defaults_are_compares():
    gating, time = folded(page("gating")), config.TimeSettings()
    assert config.Limit().allowed(1000.0) == 0
    assert "an increase beyond the budget (default: no increase)" in gating
    assert (f"the whole {time.confidence:.0%} interval of the relative difference lies beyond "
            f"±threshold: paired (`ab`'s default, [Paired time](paired.md)) `[time] "
            f"paired_threshold`, {time.paired_threshold:g}%; unpaired `[time] threshold`, "
            f"{time.threshold:g}%") in gating
    assert f"fewer than {time.min_samples} samples a side, cv above {time.max_cv:.2f}" in gating
    assert default("compare", "fail_on") == default("ab", "fail_on")
    assert f"sets exit code 1 (default `{default('ab', 'fail_on')}`)" in gating
    assert f"exceeds `--timeout` (default {default('sweep', 'timeout'):g} s)" in \
        folded(page("sweeps"))
    comment = re.search(r"echo \$\?\s+# (.*)", page("gating")).group(1)
    assert [int(c.split()[0]) for c in comment.split(", ")] == \
        [c.code for c in exit_codes.CODES if "ab" in c.returned_by
         and c.code != exit_codes.INTERRUPTED]


def test_the_budget_examples_comments_say_what_it_loads(tmp_path):
    """A limit prints as the README's comment should say it: "64" absolute, "10%" relative."""
    (block,) = [b for b in re.findall(r"```toml\n(.*?)```", page("gating"), re.S)
                if "[[budget]]" in b]
    (tmp_path / "allocbench.toml").write_text(block)
    loaded = config.load(tmp_path / "allocbench.toml")
    (budget,) = loaded.budgets
    assert f"threshold = {loaded.time.threshold:g}" in block
    assert f"# may grow by {budget.limits['bytes_per_op']} B/op" in block
    assert f"# or by {budget.limits['allocs_per_op']} of the base" in block


def test_the_exit_codes_example_is_compares_message(tmp_path):
    """The example is made as it says (that instance's value, in a copy of the compare
    fixture's candidate) and must be, word for word, what `allocbench compare` prints."""
    example = re.search(r"e\.g\. `([^`]*)`\. Thresholds", folded(page("exit-codes"))).group(1)
    file, index, name, part, key, value = re.match(
        r"(\S+): results\[(\d+)\](?: \('([^']*)'\))?\.(\w+)\.(\w+) is (\w+)", example).groups()
    doc = copy.deepcopy(hostile.CAND)
    result = doc["results"][int(index)]
    result["name"] = name or result["name"]
    result[part][key] = 4242.5
    (tmp_path / file).write_text(json.dumps(doc).replace(f'"{key}": 4242.5', f'"{key}": {value}'))
    done = hostile.allocbench("compare", str(hostile.BASE), file, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, f"allocbench: error: {example}\n")


# --- the counting layer -----------------------------------------------------------------------

def test_the_counting_layer_replaces_what_the_readme_lists():
    hooks = ROOT / "allocators"
    forms = re.findall(r"^void\*? operator (?:new|delete)(?:\[\])?\(",
                       (hooks / "hooks_new.cc").read_text(), re.M)
    text = folded(page("counting-layer"))
    assert f"replaces all {len(forms)} forms of `operator new`/`delete`" in text
    exported = re.findall(r"^\s*(\w+);$", (hooks / "hooks.dynlist").read_text(), re.M)
    defined = (hooks / "hooks_malloc.cc").read_text()
    assert [n for n in exported if re.search(rf"^\w[\w* ]* {n}\(", defined, re.M)] == exported
    listed = ", ".join(f"`{n}`" for n in exported[:-1]) + f" and `{exported[-1]}`"
    assert f"interposes {listed}, so C libraries" in text


# --- sweeps and bisect on the generated histories ---------------------------------------------

def markdown_table(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """The first table whose header starts with `scenario`: its header, {scenario: cells}."""
    head, _, *lines = text[text.index("| scenario |"):].splitlines()
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return [c.strip() for c in head.strip("|").split(" | ")], {r[0]: r[1:] for r in rows}


def test_the_example_sweep_table_is_the_synthetic_historys(tracer):
    """Rendered by sweep_table from each commit's known values (test_sweep.py checks that a
    real grafted sweep measures exactly those): each cell the README shows is in the column of
    the same name, and … stands exactly where columns are left out."""
    fields = [{"section": "alloc", "key": "bytes_per_op", "column": "B/op", "gate": "exact"}]
    columns = []
    for commit in tracer.commits:
        known = commit.expected(graft=True)
        record = {"status": "build_failed", "log_tail": "error: x", "recipe": "r"} \
            if known is None else \
            {"status": "ok", "time_measured": False, "recipe": "r",
             "results": {"fields": fields, "context": {},
                         "results": [{"name": n, "alloc": m} for n, m in known.items()]}}
        columns.append(sweep_table.Column(commit.sha, sweep.label(tracer.repo, commit.sha),
                                          record))
    head, rows = markdown_table(sweep_table.markdown(columns, ["bytes_per_op"]))
    shown_head, shown = markdown_table(page("sweeps"))
    assert shown.keys() == rows.keys()
    last, elided, at = -1, False, []
    for label in shown_head:
        if label == "…":
            elided = True
            continue
        place = head.index(label)
        assert place > last + 1 if elided else place == last + 1, label
        last, elided = place, False
        at.append(place)
    assert last == len(head) - 1
    for name, cells in shown.items():
        assert [c for c in cells if c != "…"] == [rows[name][i - 1] for i in at[1:]], name
        assert [i for i, c in enumerate(cells, 1) if c == "…"] == \
            [i for i, label in enumerate(shown_head) if label == "…"], name
    assert f"`tests/python/synthetic_history.py`: {WORDS[len(tracer.commits)]} commits" in \
        folded(page("tests"))


def survey(values: list) -> tuple[bisection.Survey, list[int]]:
    probes: list[int] = []

    def value(i: int):
        probes.append(i)
        return values[i]
    return bisection.every_change(len(values) - 1, (values[0], values[-1]), value), probes


def test_the_bisect_example_probes_as_the_search_does(tracer):
    """test_bisect_all.py pins the same counts on real bisect runs of this history."""
    good, bad = tracer.by_tag("v1.0").index - 1, tracer.by_tag("v2.0").index - 1
    values = [c.expected(graft=False)[synth.SET_TAG]["bytes_per_op"] if c.builds else None
              for c in tracer.commits[good:bad + 1]]
    found, probes = survey(values)
    n, steps = len(values) - 1, len(found.changes)
    first: list[int] = []

    def differs(i: int) -> bool | None:   # as bisect does: position i is commit i + 1
        first.append(i)
        return None if values[i + 1] is None else values[i + 1] != values[0]
    plain = bisection.search(n, differs)
    assert plain.exact and plain.high + 1 == found.changes[0].high
    assert synth.BROKEN - 1 - good not in probes
    assert (f"`{synth.SET_TAG}` from v1.0 to v2.0 (N = {n}, B/op steps at {steps} commits): "
            f"`--all` names all {WORDS[steps]} in {len(probes)} probes (the bound is "
            f"{steps * math.ceil(math.log2(n))}), the plain bisect the first in {len(first)}; "
            "the broken commit between two equal values is not probed") in folded(page("sweeps"))


def test_the_build_reuse_bisect_probes_as_the_search_does(tmp_path, monkeypatch):
    """bench/build_reuse.py's subject with its default extra commits (the units do not change
    a value), bisected from v1.0 to main as the script does."""
    spec = importlib.util.spec_from_file_location("build_reuse", ROOT / "bench" / "build_reuse.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(sys, "argv", ["build_reuse.py"])
    args = script.parse_arguments()
    subject = real.make_subject(tmp_path, units=1, extra_commits=args.extra_commits)
    good = subject.by_tag("v1.0").index - 1
    values = [c.expected()[args.instance]["bytes_per_op"] for c in subject.commits[good:]]
    found, probes = survey(values)
    n, steps = len(values) - 1, len(found.changes)
    at = " and ".join(str(good + c.high + 1) for c in found.changes)
    assert (f"`bisect --all` over the same {n} commits names {'both' if steps == 2 else steps} "
            f"B/op steps of {args.instance.split('/')[-1]} (commits {at}) with {len(probes)} "
            f"probes between the ends (the bound is {steps}·⌈log2 {n}⌉ = "
            f"{steps * math.ceil(math.log2(n))})") in folded(page("sweeps"))


def test_the_determinism_test_runs_as_often_as_the_readme_says():
    runs = re.search(r"for i in range\((\d+)\)",
                     inspect.getsource(test_determinism.test_five_runs_are_identical)).group(1)
    assert f"{WORDS[int(runs)]} runs are identical" in folded(page("tests"))
