"""bench/gbench_overhead.py and what it measured (bench/data/gbench-overhead.json): the
README's table is the script's rendering of that file, and a tiny real run times every
benchmark on both sides with the drop-in's exact allocation counts. Never checks timings."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from conftest import ROOT
from docs_pages import page

SCRIPT = ROOT / "bench" / "gbench_overhead.py"
DATA = ROOT / "bench" / "data" / "gbench-overhead.json"
BLOCK = re.compile(r"<!-- gbench-overhead:begin -->\n(.*?)<!-- gbench-overhead:end -->",
                   re.DOTALL)
# allocs per op of the default benchmarks, from tests/gbench/ground_truth_benchmarks.cc
ALLOCS = {"BM_ThreeNew32": 3, "BM_MallocFamily": 6, "BM_OneIn8": 1 / 8, "BM_NoAlloc": 0}


def run_script(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_readme_table_is_the_scripts_rendering_of_the_data_file():
    found = BLOCK.search(page("gbench"))
    assert found, "docs/gbench.md lacks the gbench-overhead block"
    assert found[1] == run_script("--from", str(DATA)).stdout
    doc = json.loads(DATA.read_text())
    assert {b["name"]: b["allocs_per_op"] for b in doc["benchmarks"]} == ALLOCS
    caption = f"({doc['rounds']} rounds, min\ntime {doc['min_time_s']:g} s, load average " \
              f"{doc['load_average']:.1f};"
    assert caption in page("gbench")


def test_a_tiny_run_times_both_sides_of_every_benchmark(build_dir, tmp_path):
    out = tmp_path / "overhead.json"
    run_script("--rounds", "2", "--min-time", "0.001", "--build", str(build_dir),
               "--out", str(out))
    doc = json.loads(out.read_text())
    assert doc["rounds"] == 2
    assert {b["name"]: b["allocs_per_op"] for b in doc["benchmarks"]} == ALLOCS
    for b in doc["benchmarks"]:
        assert sorted(b["ns"]) == ["drop_in", "plain"]
        assert all(len(samples) == 2 and min(samples) > 0 for samples in b["ns"].values())
