"""bench/testing_overhead.py and what it measured (bench/data/testing-overhead.json): the table
of docs/testing.md is the script's rendering of that file, and a tiny real run times every
benchmark (bench/testing_overhead.cc) with its checks passing. Never checks timings."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys

from conftest import ROOT
from docs_pages import page

SCRIPT = ROOT / "bench" / "testing_overhead.py"
DATA = ROOT / "bench" / "data" / "testing-overhead.json"
BLOCK = re.compile(r"<!-- testing-overhead:begin -->\n(.*?)<!-- testing-overhead:end -->",
                   re.DOTALL)
BENCHMARKS = ["BM_Bare/0", "BM_Bare/1", "BM_CapturingRun", "BM_Count/0", "BM_Count/1",
              "BM_FailingCheck/iterations:20", "BM_PassingCheck/0", "BM_PassingCheck/1"]


def run_script(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_the_pages_table_is_the_scripts_rendering_of_the_data_file():
    found = BLOCK.search(page("testing"))
    assert found, "docs/testing.md lacks the testing-overhead block"
    assert found[1] == run_script("--from", str(DATA)).stdout
    doc = json.loads(DATA.read_text())
    assert sorted(doc["ns"]) == BENCHMARKS
    assert all(len(samples) == doc["rounds"] for samples in doc["ns"].values())
    text = " ".join(page("testing").split())
    caption = f"({doc['rounds']} rounds, min time {doc['min_time_s']:g} s, load average " \
              f"{doc['load_average']:.1f};"
    assert caption in text
    # The prose's numbers, from the same file: the worst passing check's ratio, the recorder's
    # cost and the capture's per allocation (of the statement's 5), the failing check's.
    ns = {name: statistics.median(samples) for name, samples in doc["ns"].items()}
    ratios = [statistics.median(c / b for c, b in zip(doc["ns"][f"BM_PassingCheck/{arg}"],
                                                        doc["ns"][f"BM_Bare/{arg}"]))
              for arg in "01"]
    assert f"stays within about {round((max(ratios) - 1) * 100)}% of a statement of " \
           f"{round(ns['BM_Bare/0'] / 1000)} µs" in text
    recorder = (ns["BM_Count/1"] - ns["BM_Bare/1"]) / 5
    assert f"some {round(recorder, -1):.0f} ns per allocation" in text
    capture = (ns["BM_CapturingRun"] - ns["BM_Bare/1"]) / 5
    assert f"about {round(capture / 1000)} µs per allocation" in text
    assert f"about {round(ns['BM_FailingCheck/iterations:20'] / 1e6, -1):.0f} ms here" in text


def test_a_tiny_run_times_every_benchmark(build_dir, tmp_path):
    out = tmp_path / "overhead.json"
    run_script("--rounds", "1", "--min-time", "0.001", "--build", str(build_dir),
               "--out", str(out))
    doc = json.loads(out.read_text())
    assert doc["rounds"] == 1 and sorted(doc["ns"]) == BENCHMARKS
    assert all(len(samples) == 1 and samples[0] > 0 for samples in doc["ns"].values())
