"""The scripts under bench/ that make the README's measured tables still run, and still print
tables of the README's shape: each is run with its tiniest sizes against the build under test,
and its output is checked for rows, columns and parseable numbers — never for timing values.
bench/mutation.py is too slow for the suite; its list of mutations is checked instead (every
snippet occurs exactly once, every test selection selects something). bench/report_site.py
needs no build: it writes the store it reports on."""

from __future__ import annotations

import importlib.util
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from allocbench.history.store import Store
from docs_pages import page

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
# Two fast instances of the built-in plugin.
TWO_INSTANCES = "naming_schema/protocol_names/schema:0"
NUMBER = r"(\d+(?:\.\d+)?)"


def run_script(*command: str, timeout: float = 600) -> subprocess.CompletedProcess:
    done = subprocess.run([*command], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)
    assert done.returncode == 0, f"{command}: exit code {done.returncode}\n{done.stdout}\n" \
                                 f"{done.stderr[-4000:]}"
    return done


def markdown_rows(lines: list[str]) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]


# --- bench/counting_overhead.sh: "What counting costs" ----------------------------------------


def test_counting_overhead_prints_every_configuration_and_its_ratio(build_dir):
    done = run_script("bash", str(BENCH / "counting_overhead.sh"), "-r", "1", "-n", "1000",
                      str(build_dir / "bench"))
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"config +median_ns/op +vs_plain +\(1 runs x 1000 ops, interleaved\)",
                        lines[0]), lines[0]
    rows = [re.fullmatch(rf"(\w+) +{NUMBER} +{NUMBER}x", line) for line in lines[1:]]
    assert all(rows), lines
    # The README's four rows, plain first: every median positive, plain exactly 1.000×.
    assert [r[1] for r in rows] == ["plain", "off", "basic", "full"]
    assert all(float(r[2]) > 0 and float(r[3]) > 0 for r in rows)
    assert rows[0][3] == "1.000"
    assert "round 1/1: plain=" in done.stderr


# --- bench/isolation_cost.py: "What isolation costs" ------------------------------------------


@pytest.mark.parametrize("with_time", [False, True], ids=["count pass", "both passes"])
def test_isolation_cost_prints_both_modes_and_their_ratio(build_dir, with_time):
    done = run_script(sys.executable, str(BENCH / "isolation_cost.py"), "--rounds", "1",
                      "--filter", TWO_INSTANCES, *(["--time"] if with_time else []),
                      str(build_dir))
    lines = done.stdout.splitlines()
    passes = "count and time passes" if with_time else "count pass only"
    assert lines[0] == f"built-in plugin, 2 instances, {passes}, 1 rounds interleaved:"
    assert lines[1:3] == ["| mode | median wall time | range | vs --no-isolation |",
                          "|---|---:|---:|---:|"]
    rows = markdown_rows(lines[3:5])
    assert [r[0] for r in rows] == ["isolated (default)", "--no-isolation"]
    for mode, median, spread, ratio in rows:
        low, high = re.fullmatch(rf"{NUMBER}–{NUMBER} s", spread).groups()
        assert float(re.fullmatch(rf"{NUMBER} s", median)[1]) > 0
        assert float(low) <= float(high)
        assert float(re.fullmatch(rf"{NUMBER}×", ratio)[1]) > 0
    assert rows[1][3] == "1.000×"
    assert re.fullmatch(r"per instance: [+-]\d+\.\d ms", lines[5]), lines[5]
    assert len(lines) == 6


# --- bench/sweep_timing.py: the sweep-timing table --------------------------------------------


def test_sweep_timing_prints_the_five_sweeps_and_what_each_built(build_dir):
    # From v1.3: 4 revisions, 5 with the commit the script adds.
    done = run_script(sys.executable, str(BENCH / "sweep_timing.py"), "--start", "v1.3",
                      str(build_dir))
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"sweep of the synthetic history +wall s +builds", lines[0]), lines[0]
    rows = [re.fullmatch(rf"(.+?) +{NUMBER} +(\d+)", line) for line in lines[1:]]
    assert all(rows) and len(rows) == 5, lines
    # Not times: how many revisions each sweep built, which follows from the store.
    assert [(r[1], int(r[3])) for r in rows] == [
        ("cold, ccache off", 4), ("cold, ccache warm", 4), ("again (all stored)", 0),
        ("one new commit", 1), ("edited graft (5)", 5)]
    assert all(float(r[2]) > 0 for r in rows)


# --- bench/build_reuse.py: the build-reuse table ----------------------------------------------


def test_build_reuse_prints_the_sweep_and_bisect_rows(runner, prefix):
    done = run_script(sys.executable, str(BENCH / "build_reuse.py"), "--runs", "1",
                      "--units", "0", "--extra-commits", "0", "--runner", str(runner),
                      "--prefix", str(prefix))
    lines = done.stdout.splitlines()
    assert lines[1].startswith("subject: 9 commits, 0 units, route project, local submodule, "
                               "ccache off"), lines[1]
    start = lines.index("| median of 1 runs | median | range |")
    assert lines[start + 1] == "|---|---:|---:|"
    rows = markdown_rows(lines[start + 2:start + 8])
    assert [r[0] for r in rows] == [
        "cold sweep of 9 commits: wall s", "cold sweep: build s, sum over revisions",
        "cold sweep: build s per revision (median)", "cold bisect: wall s",
        "cold bisect: revisions built", "cold bisect: build s per probe (median)"]
    for name, median, spread in rows:   # the store's layout read: no "n/a"
        low, high = re.fullmatch(rf"{NUMBER}–{NUMBER}", spread).groups()
        assert float(low) <= float(re.fullmatch(NUMBER, median)[1]) <= float(high), name
    assert 1 <= int(rows[4][1]) <= 9
    assert "bisect run 1 (first change found): build s per probe: v1.0 " in done.stdout
    assert lines[-1] == "stored values that differ from the knobs: 0"


# --- bench/calibration_table.py: "What the time gate can see here" ----------------------------


def test_calibration_table_adds_up_with_the_calibration(runner, tmp_path):
    out = tmp_path / "calibration.json"
    done = run_script(sys.executable, str(BENCH / "calibration_table.py"), "--rounds", "2",
                      "--forks", "2", "--repetitions", "2", "--min-time", "0.001",
                      "--filter", TWO_INSTANCES, "--runner", str(runner), "--out", str(out))
    doc = json.loads(out.read_text())
    assert (doc["rounds"], doc["forks"], doc["repetitions"]) == (2, 2, 2)
    found = [c for c in doc["scenarios"] if c["metric"] == "ns_per_op"]   # the wall clock's
    assert len({c["name"] for c in found}) == 2

    lines = done.stdout.splitlines()
    assert lines[:2] == ["| | measured |", "|---|---|"] and len(lines) == 5
    rows = markdown_rows(lines[2:])
    assert [r[0] for r in rows] == ["false positives of the time gate",
                                    "rounds marked *unstable*",
                                    "minimum detectable effect (interval alone)"]
    fp, n, fp_percent = re.fullmatch(r"(\d+) of (\d+) instance-rounds \((\d+\.\d)%\)",
                                     rows[0][1]).groups()
    unstable, n_again, unstable_percent = re.fullmatch(r"(\d+) of (\d+) \((\d+)%\)",
                                                       rows[1][1]).groups()
    low, high, median = map(float, re.fullmatch(r"(\d+\.\d)% – (\d+\.\d)%, median (\d+\.\d)%",
                                                rows[2][1]).groups())
    # N = instances × rounds, and every count is the calibration's.
    assert int(n) == int(n_again) == 2 * 2 == sum(c["rounds"] for c in found)
    assert int(fp) == sum(c["false_positives"] for c in found)
    assert int(unstable) == sum(c["unstable_rounds"] for c in found)
    assert float(fp_percent) == round(100 * int(fp) / int(n), 1)
    assert int(unstable_percent) == round(100 * int(unstable) / int(n))
    mde = [c["interval_mde_percent"] for c in found]
    assert (low, high, median) == tuple(round(v, 1) for v in (min(mde), max(mde),
                                                               statistics.median(mde)))
    # calibrate's own summary says the same.
    assert f"false positives in {fp} of {n} instance-rounds" in doc["summary"]
    assert "2 rounds × 2 forks × 2 repetitions, 2 instances:" in done.stderr

    # --from reads the file instead of measuring: the same table.
    again = run_script(sys.executable, str(BENCH / "calibration_table.py"), "--from", str(out))
    assert again.stdout == done.stdout


def test_the_readmes_calibration_table_is_the_committed_calibrations():
    data = ROOT / "bench" / "data" / "calibration.json"
    done = run_script(sys.executable, str(BENCH / "calibration_table.py"), "--from", str(data))
    readme = page("gating")
    table = readme.split("<!-- calibration-table:begin -->\n")[1].split(
        "<!-- calibration-table:end -->")[0]
    assert table == done.stdout
    caption = re.match(r"(\d+) rounds × (\d+) forks × (\d+) repetitions, (\d+) instances",
                       done.stderr.splitlines()[-1]).groups()
    rounds, forks, repetitions, instances = caption
    assert (f"{rounds} rounds × {forks} forks × {repetitions} repetitions of {instances} "
            in " ".join(readme.split()))


# --- bench/mutation.py: its list of mutations --------------------------------------------------


def load_mutation_script():
    spec = importlib.util.spec_from_file_location("bench_mutation", BENCH / "mutation.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_mutation_applies_once_and_selects_tests(build_dir):
    mutation = load_mutation_script()
    assert mutation.snippet_problems(ROOT) == []
    listed = run_script(sys.executable, str(BENCH / "mutation.py"), "--list")
    assert f"{len(mutation.MUTATIONS)} mutations; snippets all occur exactly once" in \
        listed.stdout
    for m in mutation.MUTATIONS:
        assert m.id in listed.stdout
        if m.ctest is not None:
            names = subprocess.run(["ctest", "--test-dir", str(build_dir), "-N", "-R", m.ctest],
                                   capture_output=True, text=True, check=True).stdout
            assert re.search(r"Total Tests: [1-9]", names), (m.id, m.ctest)
        for arg in m.pytest:
            if not arg.startswith("-"):
                assert (ROOT / arg.split("::")[0]).is_file(), (m.id, arg)
    readme = page("tests")
    assert f"calibrate ({len(mutation.MUTATIONS)} mutations, listed in `bench/mutations.py`" in readme
    assert f"all {len(mutation.MUTATIONS)} are caught" in readme


# --- bench/report_site.py: the cost of `allocbench report --store` ----------------------------


def test_report_site_builds_the_generated_store_and_reuses_pictures(tmp_path):
    # 3 revisions (v1.0, a failed build, a commit) then one more; no build needed.
    out, keep = tmp_path / "report-site.json", tmp_path / "keep"
    done = run_script(sys.executable, str(BENCH / "report_site.py"), "--revisions", "3",
                      "--repeat", "1", "--out", str(out), "--keep", str(keep))
    doc = json.loads(out.read_text())
    instances = len(json.loads((BENCH / "data" / "builtin-results.json").read_text())["results"])
    assert (doc["revisions"], doc["instances"], doc["allocators"]) == (3, instances,
                                                                      ["system", "jemalloc"])
    assert (doc["records"], doc["tags"], doc["failed"], doc["repeat"]) == (6, 1, 1, 1)

    # The store: every record valid (allocbench's own check), one failed build per allocator,
    # and the one more revision the newest commit of both allocators.
    records = [r for _, r in Store(keep / "store-plus-one").records()]
    assert len(records) == 8 and len([r for _, r in Store(keep / "store").records()]) == 6
    assert [r["status"] for r in records].count("build_failed") == 2
    newest = max(records, key=lambda r: r["committed"])
    assert {r["allocator"] for r in records if r["sha"] == newest["sha"]} == {"system",
                                                                               "jemalloc"}
    assert newest["status"] == "ok" and newest["results"]["context"]["revision"]["sha"] == \
        newest["sha"]

    # Pages: the index, a page per instance, a sweep page and the newest run per history.
    pages = 1 + instances + 2 + 2
    cold, again = doc["cold"], doc["one_more"]
    assert cold["pages"] == again["pages"] == pages
    assert cold["drawn"] > 0 and cold["reused"] == 0
    assert again["drawn"] > 0 and again["reused"] > 0   # the new revision reused pictures
    site = keep / "cold-1"   # the cold build, rebuilt with the one more revision
    assert len(list(site.rglob("*.html"))) == pages
    assert len(list((site / "img").iterdir())) == again["drawn"] + again["reused"]
    assert again["size_bytes"] == sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    assert again["files"] == sum(1 for p in site.rglob("*") if p.is_file())
    for s in (cold, again):
        assert len(s["seconds"]) == 1 and s["median_s"] == s["seconds"][0] > 0

    # The markdown table: the two timings and the two sizes, each against its goal.
    lines = done.stdout.splitlines()
    start = lines.index("| site of 3 revisions, median of 1 | median | range | CPU | pages | "
                        "pictures drawn | reused | goal |")
    assert lines[start + 1] == "|---|---:|---:|---:|---:|---:|---:|---|"
    rows = markdown_rows(lines[start + 2:])
    assert [r[0] for r in rows] == ["cold build (new --out)", "one more revision (rebuild)",
                                    "size after the cold build",
                                    "size after one more revision"]
    for (name, median, spread, cpu, shown_pages, drawn, reused, goal), s in zip(
            rows[:2], (cold, again)):
        assert re.fullmatch(rf"{NUMBER} s", median) and re.fullmatch(rf"{NUMBER}–{NUMBER} s",
                                                                     spread), name
        assert cpu == f"{s['median_cpu_s']:.2f} s" and s["median_cpu_s"] > 0
        assert (shown_pages, drawn, reused) == (str(pages), str(s["drawn"]), str(s["reused"]))
        assert re.fullmatch(r"≤ (60|5) s: (met|MISSED)", goal), goal
    for name, megabytes, files, _, shown_pages, _, _, goal in rows[2:]:
        assert re.fullmatch(rf"{NUMBER} MB", megabytes) and re.fullmatch(r"\d+ files", files)
        assert shown_pages == str(pages) and re.fullmatch(r"≤ 20 MB: (met|MISSED)", goal)
    assert rows[3][1] == f"{again['size_bytes'] / 1e6:.2f} MB"


def test_the_readme_report_table_is_the_measured_one():
    # README's numbers come from bench/data/report-site.json, rendered by the script itself.
    data = BENCH / "data" / "report-site.json"
    doc = json.loads(data.read_text())
    done = run_script(sys.executable, str(BENCH / "report_site.py"), "--from", str(data))
    readme = page("reports")
    block = readme[readme.index("<!-- report-bench:begin -->"):
                   readme.index("<!-- report-bench:end -->")]
    assert done.stdout in block
    text = " ".join(block.split())
    assert (f"{doc['revisions']} revisions × the built-in plugin's {doc['instances']} instances "
            f"× two allocators ({doc['records']} records, {doc['store_bytes'] / 1e6:.1f} MB"
            ) in text
    assert doc["allocators"] == ["system", "jemalloc"]


def test_the_readme_profile_cost_table_is_the_measured_one():
    data = BENCH / "data" / "profile-cost.json"
    done = run_script(sys.executable, str(BENCH / "profile_cost.py"), "--from", str(data))
    readme = page("sites")
    block = readme[readme.index("<!-- profile-cost:begin -->"):
                   readme.index("<!-- profile-cost:end -->")]
    assert done.stdout in block
    doc = json.loads(data.read_text())
    assert len(doc["instances"]) == 46 and all(r["exact"] for r in doc["instances"])


def test_profile_cost_measures_what_it_says(build_dir, tmp_path):
    out = tmp_path / "cost.json"
    done = run_script(sys.executable, str(BENCH / "profile_cost.py"), "--build-dir",
                      str(build_dir), "--filter", "^naming_schema/protocol_names/schema:0/",
                      "--out", str(out))
    doc = json.loads(out.read_text())
    assert [r["name"] for r in doc["instances"]] == [
        "naming_schema/protocol_names/schema:0/precomputed:0",
        "naming_schema/protocol_names/schema:0/precomputed:1"]
    assert [r["allocs_per_op"] for r in doc["instances"]] == [2, 0]
    assert all(r["exact"] and r["profile_s"] > 0 and r["count_s"] > 0 for r in doc["instances"])
    assert "Site tables equal to their count pass: 2 of 2." in done.stdout


def test_the_readmes_determinism_list_is_the_measured_one():
    data = BENCH / "data" / "instructions-determinism.json"
    done = run_script(sys.executable, str(BENCH / "instructions_determinism.py"), "--from",
                      str(data))
    readme = page("instructions")
    block = readme[readme.index("<!-- instructions-determinism:begin -->"):
                   readme.index("<!-- instructions-determinism:end -->")]
    assert done.stdout in block
    doc = json.loads(data.read_text())
    assert doc["processes"] == 3 and len(doc["values"]) == 46
    assert all(len(v) == 3 for v in doc["values"].values())


def test_instructions_determinism_measures_what_it_says(build_dir, tmp_path):
    out = tmp_path / "det.json"
    done = run_script(sys.executable, str(BENCH / "instructions_determinism.py"), "--runner",
                      str(build_dir / "bin" / "allocbench-run"), "--processes", "2",
                      "--filter", "^naming_schema/protocol_names/schema:0/", "--out", str(out))
    doc = json.loads(out.read_text())
    assert sorted(doc["values"]) == ["naming_schema/protocol_names/schema:0/precomputed:0",
                                     "naming_schema/protocol_names/schema:0/precomputed:1"]
    assert all(len(set(v)) == 1 for v in doc["values"].values())
    assert done.stdout == ("Instructions per op, 2 processes each: 2 of 2 instances identical "
                           "in every process.\n")
