"""bench/paired_gate.py and what it measured (bench/data/paired-gate.json): docs/paired.md's
tables are the script's rendering of that file, and a tiny real run yields every comparison ×
gate × clock, its planted effects checked in Ir/op. Never checks timing values."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from docs_pages import page

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "paired_gate.py"
DATA = ROOT / "bench" / "data" / "paired-gate.json"
COMPARISONS = ["A/A", "A/A′", "+1%", "+2%", "+5%", "+10%"]


def run_script(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    assert done.returncode == 0, f"{args}: exit code {done.returncode}\n{done.stdout}\n" \
                                 f"{done.stderr[-4000:]}"
    return done


def block(name: str) -> str:
    found = re.search(rf"<!-- {name}:begin -->\n(.*?)<!-- {name}:end -->", page("paired"),
                      re.DOTALL)
    assert found, f"docs/paired.md has no <!-- {name}:begin --> … <!-- {name}:end --> block"
    return found[1]


def test_the_guides_tables_are_the_scripts_rendering_of_the_data_file():
    planted, builtin = run_script("--from", str(DATA), timeout=60).stdout.split("\n\n")
    assert block("paired-gate") == planted.strip("\n") + "\n"
    assert block("paired-gate-builtin") == builtin
    doc = json.loads(DATA.read_text())
    assert sorted({r["comparison"] for r in doc["planted"]}) == sorted(COMPARISONS)
    assert len(doc["planted"]) == doc["rounds"] * len(COMPARISONS) * 2


def test_the_readmes_claim_is_the_scripts_sentence_of_the_data_file():
    found = re.search(r"<!-- paired-claim:begin -->\n\s*(.*?)\n\s*<!-- paired-claim:end -->",
                      (ROOT / "README.md").read_text(), re.DOTALL)
    assert found, "README.md has no <!-- paired-claim:begin --> … <!-- paired-claim:end -->"
    assert found[1] + "\n" == run_script("--from", str(DATA), "--claim", timeout=60).stdout


@pytest.mark.timeout(600)
def test_a_tiny_run_has_every_row_and_checks_its_planted_effects(runner, tmp_path):
    out = tmp_path / "paired-gate.json"
    done = run_script("--rounds", "1", "--builtin-rounds", "0", "--runner", str(runner),
                      "--out", str(out))
    doc = json.loads(out.read_text())
    rows = [line.split(" | ")[:4] for line in done.stdout.splitlines()
            if line.startswith("| ") and "---" not in line][1:]
    assert [(r[0].lstrip("| "), r[2], r[3]) for r in rows] == [
        (c, g, k) for c in COMPARISONS for g in ("paired", "unpaired")
        for k in ("ns_per_op", "cpu_ns_per_op")]
    # The planted effects, in callgrind's instructions per op: 1, 2, 5 and 10% of a chain that
    # is the whole op, the A/A′ one jump more.
    ir = doc["ir_per_op"]
    for label, effect in (("+1%", 0.01), ("+2%", 0.02), ("+5%", 0.05), ("+10%", 0.10)):
        assert ir[label] / ir["A/A"] - 1 == pytest.approx(effect, abs=0.001)
    assert (ir["A/A"], ir["A/A′"] - ir["A/A"]) == (ir["A/A"], 1)
    for r in doc["planted"]:
        for clock in ("ns_per_op", "cpu_ns_per_op"):
            relative, low, high = r[clock][:3]
            assert low <= relative <= high
