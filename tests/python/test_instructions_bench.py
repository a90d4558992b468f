"""bench/instructions_gate.py and what it measured (bench/data/instructions-gate.json): the
README's table is the script's rendering of that file, the knob's sizes are the +1%, +3% and
+10% they claim, and the knob is off in the product. Nothing is built or run here: a real run
takes hours (see the script's docstring)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from docs_pages import page

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "instructions_gate.py"
DATA = ROOT / "bench" / "data" / "instructions-gate.json"
BLOCK = re.compile(r"<!-- instructions-gate:begin -->\n(.*?)<!-- instructions-gate:end -->",
                   re.DOTALL)


def load_script():
    spec = importlib.util.spec_from_file_location("bench_instructions_gate", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


gate = load_script()


def finished_run() -> dict:
    if not DATA.is_file():
        pytest.skip(f"{DATA.relative_to(ROOT)} does not exist yet: run bench/instructions_gate.py "
                    f"--out {DATA.relative_to(ROOT)} (about two hours)")
    doc = json.loads(DATA.read_text())
    if not doc.get("complete") and not doc.get("stopped"):
        pytest.skip(f"{DATA.relative_to(ROOT)} is a run still in progress: its table is not "
                    "final")
    return doc


# --- the README's table -------------------------------------------------------------------------


def test_readme_table_is_the_scripts_rendering_of_the_data_file():
    finished_run()
    done = subprocess.run([sys.executable, str(SCRIPT), "--from", str(DATA)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found = BLOCK.search(page("instructions"))
    assert found, ("docs/instructions.md has no <!-- instructions-gate:begin --> ... end block; "
                   "put the output of "
                   f"`bench/instructions_gate.py --from {DATA.relative_to(ROOT)}` "
                   "between the two markers")
    assert found[1].strip() == done.stdout.strip()


# --- the knob's sizes ---------------------------------------------------------------------------


def test_each_size_adds_its_percent_of_the_targets_instructions():
    doc = finished_run()
    sizes = doc["knob"]["sizes"]
    assert sorted(int(p) for p in sizes) == list(gate.PERCENTS)
    for percent, size in sizes.items():
        assert abs(size["achieved_percent"] - int(percent)) <= 0.5, (percent, size)
    # The same increase in every run: instructions per op are exact.
    for run in doc["runs"]:
        if run["percent"] is not None and run["mode"] != "time":
            target = run["target"]
            measured = (target["ir_cand"] / target["ir_base"] - 1) * 100
            assert round(measured, 3) == sizes[str(run["percent"])]["achieved_percent"], run


def test_the_recorded_rounds_are_the_helpers_from_the_recorded_probes():
    doc = finished_run()
    knob = doc["knob"]
    if not knob["probes"]:
        pytest.skip("this run was given its rounds (--knob-rounds): no probes to check")
    counts = gate.round_counts(knob["base_ir"], [(p["rounds"], p["ir"]) for p in knob["probes"]])
    assert {str(p): r for p, r in counts.items()} == \
        {p: s["rounds"] for p, s in knob["sizes"].items()}


def test_every_aa_run_measured_the_same_instructions_on_both_sides():
    doc = finished_run()
    aa = [r for r in doc["runs"] if r["percent"] is None and r["mode"] == "both"]
    assert len(aa) >= (20 if doc.get("complete") else 1)   # a stopped run: what it measured
    assert {(r["target"]["ir_base"], r["target"]["ir_cand"]) for r in aa} == \
        {(doc["knob"]["base_ir"], doc["knob"]["base_ir"])}


# --- the helpers, without a run -----------------------------------------------------------------


def test_the_knob_is_off_in_the_product_and_its_line_is_rewritable():
    text = (ROOT / gate.KNOB_FILE).read_text()
    assert [int(v) for v in gate.KNOB_LINE.findall(text)] == [0]
    changed = gate.with_rounds(text, 148)
    assert gate.KNOB_LINE.findall(changed) == ["148"]
    assert changed.replace("= 148;", "= 0;") == text


def test_round_counts_inverts_a_linear_cost():
    # 7 + 7 × rounds per op on 10438.07 Ir/op (the reference tracer's span_creation/
    # web_server_span/dense:0 with the knob's code as g++ 12 -O3 generates it).
    base = 10438.07
    probes = [(20, base + 7 + 7 * 20), (200, base + 7 + 7 * 200)]
    assert gate.round_counts(base, probes) == {1: 14, 3: 44, 10: 148}
    # Whatever the cost, the nearest count: never more than half a round away.
    for slope, intercept in ((3.0, 0.0), (50.5, 12.0), (1.25, 3.0)):
        probes = [(r, base + intercept + slope * r) for r in (10, 90)]
        for percent, rounds in gate.round_counts(base, probes).items():
            added = intercept + slope * rounds
            assert abs(added - percent / 100 * base) <= slope / 2 + 1e-9


def test_the_schedule_interleaves_the_kinds_and_spreads_the_single_gate_runs():
    runs = gate.schedule(20, 5)
    both = [r for r in runs if r["mode"] == "both"]
    assert [r["percent"] for r in both] == [None, 1, 3, 10] * 20
    for mode in ("time", "instructions"):
        alone = [r for r in runs if r["mode"] == mode]
        assert len(alone) == 5
        assert len({r["round"] for r in alone}) == 5
    smoke = gate.schedule(1, 1)
    assert [(r["mode"], r["percent"]) for r in smoke] == [
        ("both", None), ("both", 1), ("both", 3), ("both", 10), ("time", 1),
        ("instructions", 1)]
