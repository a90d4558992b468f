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
import shutil
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
    assert f"({len(mutation.MUTATIONS)} mutations, listed in `bench/mutations.py`" in readme
    assert f"all {len(mutation.MUTATIONS)} are caught" in readme


# --- bench/report_site.py: the cost of `allocbench report --store`, by store size -------------


def report_site_cells(line: str) -> list[str]:
    return markdown_rows([line])[0]


def probe_sweep(store: Path, sha: str, records: Path) -> dict:
    done = run_script(sys.executable, str(BENCH / "report_site.py"), "--probe-sweep", str(store),
                      sha, "--records", str(records))
    return json.loads(done.stdout)


def report_site_verdicts(doc: dict) -> dict[str, str]:
    """The goals of the issue judged at 2,000 revisions (else the largest size), the rebuild's
    growth from 500 (else the next smaller size), worked out here from the JSON's numbers."""
    runs = {r["revisions"]: r for r in doc["runs"]}
    at = 2000 if 2000 in runs else max(runs)
    smaller = [n for n in runs if n < at]
    base = 500 if 500 in smaller else max(smaller, default=None)
    run = runs[at]

    def said(ok: bool) -> str:
        return "met" if ok else "MISSED"

    cpu = run["one_more"]["median_cpu_s"]
    one_more = f"≤ 5 s CPU: {said(cpu <= 5)}; "
    if base is None:
        one_more += "≤ 1.3× a smaller store's: n/a"
    else:
        ratio = cpu / runs[base]["one_more"]["median_cpu_s"]
        one_more += f"≤ 1.3× at {base:,}: {said(ratio <= 1.3)} ({ratio:.2f}×)"
    return {"at": at,
            "store": f"≤ 100 MB: {said(run['store']['bytes'] <= 100e6)}",
            "record": f"≤ 25 KB: {said(run['store']['bytes'] / run['records'] <= 25e3)}",
            "site": f"≤ 40 MB: {said(run['site']['bytes'] <= 40e6)}",
            "cold": f"≤ 60 s CPU: {said(run['cold']['median_cpu_s'] <= 60)}",
            "one_more": one_more,
            "sweep_table": f"≤ 3 s CPU: {said(run['sweep_table']['median_cpu_s'] <= 3)}"}


REPORT_SITE_ROWS = [   # (the row's name, its key among the verdicts, or None: no goal)
    ("records (revisions × 2 allocators)", None), ("store: its record files", "store"),
    ("store: bytes per record", "record"), ("store: its index, after the first read", None),
    ("site after the cold build", "site"),
    ("first report of a store not read before (its index built)", None),
    ("cold report (new --out)", "cold"), ("report after one more revision (rebuild)", "one_more"),
    ("pictures drawn / reused by that rebuild", None),
    ("sweep-table of every revision (one allocator)", "sweep_table"),
    ("sweep of one new revision: its store lookups and puts", None)]


def check_report_site_table(text: str, doc: dict) -> None:
    lines = text.splitlines()
    verdicts = report_site_verdicts(doc)
    sizes = [r["revisions"] for r in doc["runs"]]
    start = lines.index(f"| median of {doc['repeat']}: wall / CPU | "
                        + " | ".join(f"{n:,} revisions" for n in sizes)
                        + f" | goal at {verdicts['at']:,} revisions |")
    assert lines[start + 1] == "|---|" + "---:|" * len(sizes) + "---|"
    rows = markdown_rows(lines[start + 2:start + 2 + len(REPORT_SITE_ROWS)])
    assert [r[0] for r in rows] == [name for name, _ in REPORT_SITE_ROWS]
    assert [r[-1] for r in rows] == [verdicts[key] if key else "" for _, key in REPORT_SITE_ROWS]
    by_name = {r[0]: r[1:-1] for r in rows}

    def times(key: str) -> list[str]:
        return [f"{r[key]['median_s']:.2f} / {r[key]['median_cpu_s']:.2f} s" for r in doc["runs"]]

    assert by_name["records (revisions × 2 allocators)"] == [f"{2 * n:,}" for n in sizes]
    assert by_name["store: its record files"] == [
        f"{r['store']['bytes'] / 1e6:.2f} MB ({r['store']['files']:,} files)" for r in doc["runs"]]
    assert by_name["store: bytes per record"] == [
        f"{r['store']['bytes'] / r['records'] / 1e3:.1f} KB" for r in doc["runs"]]
    assert by_name["site after the cold build"] == [
        f"{r['site']['bytes'] / 1e6:.2f} MB ({r['site']['files']:,} files)" for r in doc["runs"]]
    for name, key in (("first report of a store not read before (its index built)",
                       "first_read"), ("cold report (new --out)", "cold"),
                      ("report after one more revision (rebuild)", "one_more"),
                      ("sweep-table of every revision (one allocator)", "sweep_table"),
                      ("sweep of one new revision: its store lookups and puts", "sweep_probe")):
        assert by_name[name] == times(key), name
    assert by_name["pictures drawn / reused by that rebuild"] == [
        f"{r['one_more']['drawn']} / {r['one_more']['reused']}" for r in doc["runs"]]


def test_report_site_measures_each_store_size_side_by_side(tmp_path):
    # 3 revisions (v1.0, a failed build, a commit) and 6 (two tags, two failed builds), each
    # then one more; no build needed.
    out, keep = tmp_path / "report-site.json", tmp_path / "keep"
    done = run_script(sys.executable, str(BENCH / "report_site.py"), "--revisions", "6,3",
                      "--repeat", "1", "--out", str(out), "--keep", str(keep))
    doc = json.loads(out.read_text())
    instances = len(json.loads((BENCH / "data" / "builtin-results.json").read_text())["results"])
    assert (doc["sizes"], doc["instances"], doc["allocators"], doc["repeat"]) == (
        [3, 6], instances, ["system", "jemalloc"], 1)
    assert [r["revisions"] for r in doc["runs"]] == [3, 6]
    pages = 1 + instances + 2 + 2   # the index, a page per instance, a sweep page and the
    for run in doc["runs"]:         # newest run per history
        n, folder = run["revisions"], keep / str(run["revisions"])
        store = folder / "store" / "results"
        # The store: every record valid (allocbench's own check), one per revision and
        # allocator, the failed builds as many for both; the tags every fifth revision.
        records = [r for _, r in Store(store).records()]
        assert run["records"] == len(records) == 2 * n
        assert {(r["sha"], r["allocator"]) for r in records} == {
            (r["sha"], a) for r in records for a in ("system", "jemalloc")}
        statuses = [r["status"] for r in records]
        assert run["failed"] == statuses.count("build_failed") // 2 == {3: 1, 6: 2}[n]
        assert run["tags"] == len({r["label"] for r in records if r["label"].startswith("v1.")}
                                  ) == (n + 4) // 5
        # Its size: the record files only (not the index, not the .gitignore beside it).
        files = [p for p in store.rglob("*") if p.is_file()
                 and not any(part.startswith(".") for part in p.relative_to(store).parts)]
        assert run["store"]["bytes"] == sum(p.stat().st_size for p in files) > 0
        assert run["store"]["files"] == len(files) == 2 * n
        assert run["store"]["bytes_per_record"] == run["store"]["bytes"] / (2 * n)
        index = list(store.glob(".allocbench-index*"))
        assert (run["store"]["index_bytes"] is None) == (not index)
        assert run["store"]["index_bytes"] is None or run["store"]["index_bytes"] > 0

        # The one more revision: the newest commit, stored by the sweep probe for both
        # allocators into the copy the rebuild reported on.
        plus_one = folder / "store-plus-one" / "results"
        added = [r for _, r in Store(plus_one).records() if r["sha"] == run["new_sha"]]
        assert sorted(r["allocator"] for r in added) == ["jemalloc", "system"]
        assert len(list(Store(plus_one).records())) == 2 * n + 2
        # Both committed on the store's branch (the new records in the clone's newest commit),
        # as publish.yml keeps the store; its index is not.
        listed = subprocess.run(["git", "-C", str(plus_one), "ls-files"], capture_output=True,
                                text=True, check=True).stdout.split()
        assert len([f for f in listed if f.endswith(".json.gz")]) == 2 * n + 2
        assert not any(".allocbench-index" in f for f in listed)
        assert subprocess.run(["git", "-C", str(plus_one), "status", "--porcelain"],
                              capture_output=True, text=True, check=True).stdout == ""
        assert all(r["status"] == "ok" and r["committed"] > max(s["committed"] for s in records)
                   and r["results"]["context"]["revision"]["sha"] == r["sha"] for r in added)
        # The probe decides as a sweep does (sweep.Plan.stored): a stored revision is not
        # measured again, the new one is, and stored.
        stored_sha = records[0]["sha"]
        assert probe_sweep(store, stored_sha, folder / "one-more.json") == {
            "system": "stored", "jemalloc": "stored"}
        fresh = tmp_path / f"probe-{n}"
        shutil.copytree(store, fresh)
        assert probe_sweep(fresh, run["new_sha"], folder / "one-more.json") == {
            "system": "measured", "jemalloc": "measured"}
        assert len(list(Store(fresh).records())) == 2 * n + 2

        # sweep-table showed every revision, exit code 0.
        assert run["sweep_table"]["exit_code"] == 0
        header = (folder / "sweep-table.md").read_text().split("\n| scenario | ")[1]
        header = header.split("\n")[0]
        assert all(r["label"] in header for r in records), header

        # The site: its pages, the cold build's size and the rebuild's, which reused pictures.
        cold, again = run["cold"], run["one_more"]
        assert cold["pages"] == again["pages"] == run["first_read"]["pages"] == pages
        assert cold["drawn"] > 0 and cold["reused"] == 0
        assert again["drawn"] > 0 and again["reused"] > 0
        site = folder / "cold-1"   # the cold build, rebuilt with the one more revision
        assert len(list(site.rglob("*.html"))) == pages
        assert len(list((site / "img").iterdir())) == again["drawn"] + again["reused"]
        assert again["size_bytes"] == sum(p.stat().st_size for p in site.rglob("*")
                                          if p.is_file())
        assert run["site"]["bytes"] == cold["size_bytes"] > 0
        assert len(list((folder / "first-1").rglob("*.html"))) == pages
        for key in ("first_read", "cold", "one_more", "sweep_table", "sweep_probe"):
            s = run[key]
            assert len(s["seconds"]) == len(s["cpu_seconds"]) == 1, key
            assert s["median_s"] == s["seconds"][0] > 0 and \
                s["median_cpu_s"] == s["cpu_seconds"][0] > 0, key

    # The table: a column per size, the goals judged at the largest (6) from the smallest.
    check_report_site_table(done.stdout, doc)
    verdicts = report_site_verdicts(doc)
    assert doc["goals"]["met"] == {key: verdicts[key].count("MISSED") == 0
                                   for key in ("store", "record", "site", "cold", "one_more",
                                               "sweep_table")}
    again = run_script(sys.executable, str(BENCH / "report_site.py"), "--from", str(out))
    assert again.stdout in done.stdout

    # At 500, 2,000 and 10,000 revisions the goals are judged at 2,000, its rebuild's growth
    # from 500: each goal met and missed by numbers on either side of it.
    script = load_report_site_script()
    small, large = doc["runs"]
    for base_cpu, rebuild, cold_cpu, store_bytes, one_more in (
            (3.5, 4.0, 50.0, 90e6, "≤ 5 s CPU: met; ≤ 1.3× at 500: met (1.14×)"),
            (3.5, 5.5, 70.0, 110e6, "≤ 5 s CPU: MISSED; ≤ 1.3× at 500: MISSED (1.57×)"),
            (3.0, 4.5, 50.0, 90e6, "≤ 5 s CPU: met; ≤ 1.3× at 500: MISSED (1.50×)")):
        scaled = json.loads(json.dumps(doc))
        scaled["runs"] = [json.loads(json.dumps(r)) for r in (small, large, large)]
        for run, n in zip(scaled["runs"], (500, 2000, 10000)):
            run["revisions"], run["records"] = n, 2 * n
            run["store"]["bytes_per_record"] = run["store"]["bytes"] / (2 * n)
        base, judged, largest = scaled["runs"]
        base["one_more"]["median_cpu_s"] = base_cpu
        judged["one_more"]["median_cpu_s"] = rebuild
        judged["cold"]["median_cpu_s"] = cold_cpu
        judged["store"]["bytes"] = store_bytes
        judged["store"]["bytes_per_record"] = store_bytes / 4000
        largest["cold"]["median_cpu_s"] = 1000.0   # 10,000 revisions: not what is judged
        source = tmp_path / f"scaled-{rebuild}.json"
        source.write_text(json.dumps(scaled))
        shown = run_script(sys.executable, str(BENCH / "report_site.py"), "--from",
                           str(source)).stdout
        check_report_site_table(shown, scaled)
        verdicts = report_site_verdicts(scaled)
        assert verdicts["at"] == 2000 and verdicts["one_more"] == one_more
        expected = "met" if cold_cpu < 60 else "MISSED"
        for key in ("cold", "store", "record"):
            assert verdicts[key].endswith(f": {expected}"), (rebuild, key)
        # --out's verdicts: the same.
        assert script.judged(scaled)["met"] == {
            key: "MISSED" not in verdicts[key]
            for key in ("store", "record", "site", "cold", "one_more", "sweep_table")}


def load_report_site_script():
    spec = importlib.util.spec_from_file_location("bench_report_site", BENCH / "report_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def report_site_listed(values: list[str]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


def test_the_docs_report_table_is_the_measured_one():
    # docs/reports.md's numbers come from bench/data/report-site.json, rendered by the script.
    data = BENCH / "data" / "report-site.json"
    doc = json.loads(data.read_text())
    done = run_script(sys.executable, str(BENCH / "report_site.py"), "--from", str(data))
    check_report_site_table(done.stdout, doc)
    text = page("reports")
    block = text[text.index("<!-- report-bench:begin -->"):
                 text.index("<!-- report-bench:end -->")]
    assert done.stdout in block
    runs = doc["runs"]
    words = " ".join(block.split())
    sizes = report_site_listed([f"{r['revisions']:,}" for r in runs])
    records = report_site_listed([f"{r['records']:,}" for r in runs])
    megabytes = report_site_listed([f"{r['store']['bytes'] / 1e6:.1f}" for r in runs])
    assert (f"stores of {sizes} revisions × the built-in plugin's {doc['instances']} instances "
            f"× two allocators ({records} records, {megabytes} MB") in words, words
    assert f"median of {doc['repeat']} runs" in words
    assert doc["allocators"] == ["system", "jemalloc"]


def test_the_readme_scale_table_is_the_measured_one():
    # The README's rows are the docs table's rows of store, site, cold report, one more
    # revision and sweep-table (that table is checked against the JSON above), as measured.
    data = BENCH / "data" / "report-site.json"
    full = run_script(sys.executable, str(BENCH / "report_site.py"), "--from", str(data)).stdout
    scale = run_script(sys.executable, str(BENCH / "report_site.py"), "--from", str(data),
                       "--scale").stdout
    wanted = ("store: its record files", "site after the cold build", "cold report (new --out)",
              "report after one more revision (rebuild)",
              "sweep-table of every revision (one allocator)")
    lines = full.splitlines()
    assert scale.splitlines() == lines[:2] + [
        line for line in lines[2:] if line.split(" | ")[0].removeprefix("| ") in wanted]
    assert len(scale.splitlines()) == 2 + len(wanted)
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("<!-- report-scale:begin -->"):
                   readme.index("<!-- report-scale:end -->")]
    assert scale in block
    doc = json.loads(data.read_text())
    assert [r["revisions"] for r in doc["runs"]] == [500, 2000]
    assert f"Median of {doc['repeat']} runs" in block


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
