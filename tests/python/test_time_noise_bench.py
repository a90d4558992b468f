"""bench/time_noise.py and what it measured (bench/data/time-noise.json): the README's table
is the script's rendering of that file, and a tiny real run (one round, one instance, a short
min time) still yields all six variant × clock rows, with counts that add up and verdicts that
are the gate's own on the runner's fork files. Never checks timing values."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from allocbench.base import results
from allocbench.gate import compare
from allocbench.gate.config import TimeSettings
from docs_pages import page

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "time_noise.py"
DATA = ROOT / "bench" / "data" / "time-noise.json"
BLOCK = re.compile(r"<!-- time-noise:begin -->\n(.*?)<!-- time-noise:end -->", re.DOTALL)
ONE_INSTANCE = "^span_creation/bare_start_span$"
ROWS = [(v, c) for v in ("V1", "V2", "V3") for c in ("wall", "cpu")]


def run_script(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    assert done.returncode == 0, f"{args}: exit code {done.returncode}\n{done.stdout}\n" \
                                 f"{done.stderr[-4000:]}"
    return done


def test_readme_table_is_the_scripts_rendering_of_the_data_file():
    if not DATA.is_file():
        pytest.skip(f"{DATA.relative_to(ROOT)} does not exist yet: run bench/time_noise.py "
                    f"--rounds 20 --out {DATA.relative_to(ROOT)}")
    found = BLOCK.search(page("instructions"))
    if not found or not found[1].strip():
        pytest.skip("docs/instructions.md has no filled <!-- time-noise:begin --> … "
                    "<!-- time-noise:end --> block yet: put the output of "
                    f"`bench/time_noise.py --from {DATA.relative_to(ROOT)}` between the two "
                    "markers")
    done = run_script("--from", str(DATA), timeout=60)
    assert found[1] == done.stdout
    doc = json.loads(DATA.read_text())
    assert [(r["variant"], r["clock"]) for r in doc["rows"]] == ROWS


def test_a_tiny_run_has_every_row_and_its_counts_add_up(runner, tmp_path):
    out, runs = tmp_path / "time-noise.json", tmp_path / "runs"
    cpu = max(os.sched_getaffinity(0))
    done = run_script("--rounds", "1", "--filter", ONE_INSTANCE, "--min-time", "0.01",
                      "--cpu", str(cpu), "--runner", str(runner), "--out", str(out),
                      "--runs", str(runs))
    doc = json.loads(out.read_text())
    assert doc["rounds"] == 1 and doc["instances"] == ["span_creation/bare_start_span"]
    assert doc["settings"] == {"threshold": 5.0, "max_cv": 0.1, "confidence": 0.95,
                               "min_samples": 5, "paired_threshold": 1.0}
    assert [(r["variant"], r["clock"]) for r in doc["rows"]] == ROWS
    layouts = {r["variant"]: (r["forks"], r["repetitions"], r["min_time_s"], r["cpu"])
               for r in doc["rows"]}
    assert layouts == {"V1": (3, 5, 0.01, None), "V2": (6, 5, 0.005, None),
                       "V3": (3, 5, 0.01, cpu)}
    gate_verdicts = {compare.SAME, compare.WORSE, compare.BETTER, compare.UNSTABLE}
    for row in doc["rows"]:
        totals = row["totals"]
        assert totals["instance_rounds"] == doc["rounds"] * len(doc["instances"])
        assert totals["unstable"] + totals["judged"] == totals["instance_rounds"], row["label"]
        assert totals["false_positives"] <= totals["judged"]
        (summary,) = row["instances"]
        assert summary["rounds"] == 1 and summary["metric"] == row["metric"]
        assert summary["unstable_rounds"] == totals["unstable"]
        assert summary["false_positives"] == totals["false_positives"]
        assert summary["samples_per_side"] == row["forks"] * row["repetitions"]
        (record,) = row["records"]["span_creation/bare_start_span"]
        assert record[0] == 1 and record[1] in gate_verdicts

    # The verdicts are the gate's own on the runner's fork files: V1 and V2 on both clocks.
    for row in doc["rows"][:4]:
        field = {"section": "time", "key": row["metric"], "unit": "ns"}
        sides = []
        for side in ("a", "b"):
            files = sorted((runs / "round-1" / row["variant"]).glob(f"slot-*/{side}/fork-*.json"))
            assert len(files) == row["forks"]
            sides.append([s for f in files
                          for s in compare.fork_samples(results.load(f)["results"], field)])
        change = compare.time_change(row["metric"], "ns", *sides, threshold=5.0,
                                     settings=TimeSettings(),
                                     seed=compare.seed_of(doc["instances"][0], row["metric"]))
        record = row["records"]["span_creation/bare_start_span"][0]
        assert record[1] == change.verdict
        assert np.isclose(record[3], 100 * change.interval.relative_low, atol=1e-3)

    # The table: a header, a rule and the six rows; --from prints it again from the file.
    lines = done.stdout.splitlines()
    assert len(lines) == 8 and lines[0].startswith("| variant | clock | unstable |")
    assert [tuple(cell.strip() for cell in line.split("|")[1:3]) for line in lines[2:]] == [
        (f"{v} ({layouts[v][0]} × 5 × {layouts[v][2]:g} s"
         + (f", CPU {cpu})" if v == "V3" else ")"), c) for v, c in ROWS]
    assert "1 A/A rounds, 1 instances (span_creation/bare_start_span)" in done.stderr
    assert run_script("--from", str(out), timeout=60).stdout == done.stdout
