"""allocbench::gbench: exact bytes_per_op and allocs_per_op in an existing Google Benchmark suite.

tests/gbench/ground_truth_benchmarks.cc is plain Google Benchmark code; every expectation below
is derived from the sizes in that source, never from a run. gbench_ground_truth links it with
allocbench::gbench; gbench_memory_manager links the same code with Google Benchmark 1.7.1's own
MemoryManager (memory_manager_main.cc) instead, for comparison.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from docs_pages import page


# name -> (bytes_per_op, allocs_per_op), per op per thread, timed loop only
# (see each benchmark's comment in ground_truth_benchmarks.cc).
EXPECTED = {
    "BM_ThreeNew32": (3 * 32, 3),
    "BM_SetupTeardown": (8, 1),                    # not the 1 MiB setup nor the 1000 B teardown
    "BM_PauseResume": (24, 1),                     # not the 4096 B allocated while paused
    "BM_MallocFamily": (10 + 3 * 7 + 100 + 64 + 48 + 5 * 4, 6),
    "BM_PerThread/threads:2": (16 * (1 + 2) / 2, 1),           # thread i: 16 * (i + 1)
    "BM_PerThread/threads:4": (16 * (1 + 2 + 3 + 4) / 4, 1),
    "BM_Repeated/repeats:3": (40, 1),
    "BM_OneIn8": (64 / 8, 1 / 8),
    "BM_NoAlloc": (0, 0),
}
MIN_TIME = "--benchmark_min_time=0.01"


@pytest.fixture(scope="module")
def gbench_dir(build_dir: Path) -> Path:
    directory = build_dir / "tests" / "gbench"
    for exe in ("gbench_ground_truth", "gbench_memory_manager"):
        if not (directory / exe).exists():
            pytest.fail(f"no {exe} in {directory}: build the tree first")
    return directory


def run(exe: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    done = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def run_json(exe: Path, tmp_path: Path, *args: str) -> dict:
    """Runs with JSON on stdout and in --benchmark_out; both must agree. Returns the document."""
    out = tmp_path / "out.json"
    done = run(exe, "--benchmark_format=json", f"--benchmark_out={out}",
               "--benchmark_out_format=json", MIN_TIME, *args)
    printed, written = json.loads(done.stdout), json.loads(out.read_text())
    assert ([(b["name"], b.get("bytes_per_op"), b.get("allocs_per_op"))
             for b in printed["benchmarks"]]
            == [(b["name"], b.get("bytes_per_op"), b.get("allocs_per_op"))
                for b in written["benchmarks"]])
    return written


def iteration_runs(document: dict) -> dict[str, list[dict]]:
    runs: dict[str, list[dict]] = {}
    for entry in document["benchmarks"]:
        if entry["run_type"] == "iteration":
            runs.setdefault(entry["name"], []).append(entry)
    return runs


@pytest.mark.parametrize("args, repetitions", [
    ([], 1),
    (["--benchmark_repetitions=3"], 3),
    (["--benchmark_repetitions=3", "--benchmark_enable_random_interleaving=true"], 3),
], ids=["once", "repetitions", "random-interleaving"])
def test_every_run_reports_the_exact_counters(gbench_dir, tmp_path, args, repetitions):
    document = run_json(gbench_dir / "gbench_ground_truth", tmp_path, *args)
    runs = iteration_runs(document)
    assert sorted(runs) == sorted(EXPECTED)
    for name, (bytes_per_op, allocs_per_op) in EXPECTED.items():
        # Repetitions(3) on BM_Repeated wins over the flag.
        assert len(runs[name]) == (3 if "repeats:3" in name else repetitions), name
        for entry in runs[name]:
            assert entry["iterations"] > 0
            assert (entry["bytes_per_op"], entry["allocs_per_op"]) == (bytes_per_op,
                                                                       allocs_per_op), name
    # The aggregates of repeated runs agree: every repetition counted the same.
    aggregates = {e["name"]: e for e in document["benchmarks"] if e["run_type"] == "aggregate"}
    for name, (bytes_per_op, allocs_per_op) in EXPECTED.items():
        if f"{name}_mean" not in aggregates:
            continue
        for statistic in ("mean", "median"):
            entry = aggregates[f"{name}_{statistic}"]
            assert (entry["bytes_per_op"], entry["allocs_per_op"]) == (bytes_per_op,
                                                                       allocs_per_op)
        assert aggregates[f"{name}_stddev"]["bytes_per_op"] == 0
    assert "glibc" in document["context"]["allocbench_gbench"]


def test_the_console_table_shows_the_counters(gbench_dir):
    done = run(gbench_dir / "gbench_ground_truth", MIN_TIME,
               "--benchmark_filter=BM_ThreeNew32|BM_NoAlloc|BM_PerThread/threads:4")
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.startswith("BM_")}
    assert re.search(r" allocs_per_op=3 bytes_per_op=96$", lines["BM_ThreeNew32"])
    assert re.search(r" allocs_per_op=1 bytes_per_op=40$", lines["BM_PerThread/threads:4"])
    assert re.search(r" allocs_per_op=0 bytes_per_op=0$", lines["BM_NoAlloc"])
    assert "allocbench_gbench: bytes_per_op, allocs_per_op" in done.stderr   # the context


def defined_symbols(path: Path, *nm_args: str) -> dict[str, str]:
    done = subprocess.run(["nm", *nm_args, str(path)], capture_output=True, text=True,
                          check=True)
    symbols = {}
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            symbols[parts[2]] = parts[1]
    return symbols


def test_the_executable_defines_the_hooks_and_exports_them(gbench_dir):
    exe = gbench_dir / "gbench_ground_truth"
    symbols = defined_symbols(exe)
    for name in ("malloc", "free", "calloc", "realloc", "_Znwm", "_ZdlPv", "_ZnwmSt11align_val_t",
                 "__wrap__ZN9benchmark5State16StartKeepRunningEv",
                 "__wrap__ZN9benchmark5State17FinishKeepRunningEv",
                 "__wrap__ZN9benchmark5State11PauseTimingEv",
                 "__wrap__ZN9benchmark5State12ResumeTimingEv",
                 "_ZN10allocbench8counting11BackendNameEv"):   # strong: glibc, not "none"
        assert symbols.get(name) == "T", name
    # --dynamic-list: libbenchmark.so and libstdc++ bind to the executable's hooks.
    dynamic = defined_symbols(exe, "-D")
    assert dynamic.get("malloc") == "T" and dynamic.get("_Znwm") == "T"


# --- Google Benchmark's own MemoryManager on the same code -------------------------------------

# What 1.7.1's MemoryManager run covers (src/benchmark_runner.cc): min(16, iterations) iterations
# on one thread (thread 0, whatever Threads() says), plus the benchmark's setup and teardown,
# its paused regions, and the runner's own `new ThreadManager(1)` (one allocation, whose size is
# Google Benchmark's business: taken from BM_NoAlloc, which allocates nothing itself).
# name -> (bytes, allocs) of the benchmark's own code in that run.
MM_ITERATIONS = 16
MEMORY_MANAGER_RUN = {
    "BM_ThreeNew32": (16 * 3 * 32, 16 * 3),
    "BM_SetupTeardown": ((1 << 20) + 16 * 8 + 1000, 1 + 16 + 1),
    "BM_PauseResume": (16 * (4096 + 24), 16 * 2),
    "BM_MallocFamily": (16 * (10 + 21 + 100 + 64 + 48 + 20), 16 * 6),
    "BM_PerThread/threads:2": (16 * 16, 16),    # thread 0 only
    "BM_PerThread/threads:4": (16 * 16, 16),
    "BM_Repeated/repeats:3": (16 * 40, 16),
    "BM_OneIn8": (2 * 64, 2),                   # 16 iterations = 2 batches of 8
    "BM_NoAlloc": (0, 0),
}
RUNNER_ALLOCS = 1   # new ThreadManager(1)


def test_memory_manager_misreports_what_the_drop_in_gets_right(gbench_dir, tmp_path):
    runs = iteration_runs(run_json(gbench_dir / "gbench_memory_manager", tmp_path))
    assert sorted(runs) == sorted(MEMORY_MANAGER_RUN)
    bookkeeping = runs["BM_NoAlloc"][0]["total_allocated_bytes"]
    assert bookkeeping > 0
    for name, (bytes_, allocs) in MEMORY_MANAGER_RUN.items():
        entry = runs[name][-1]   # the last repetition: see below for the others
        assert "bytes_per_op" not in entry   # no drop-in in this executable
        assert entry["allocs_per_iter"] == (RUNNER_ALLOCS + allocs) / MM_ITERATIONS, name
        assert entry["total_allocated_bytes"] == bookkeeping + bytes_, name
        assert entry["max_bytes_used"] == 0
    # e.g. BM_ThreeNew32: 3.0625 allocs/iter and 1536 B + the runner's own over 16 hidden
    # iterations, where the drop-in says 3 and 96 B/op.
    assert runs["BM_ThreeNew32"][-1]["allocs_per_iter"] == 3.0625
    # Setup and teardown amortised over the 16 iterations: 1.1875 allocs/iter (drop-in: 1).
    assert runs["BM_SetupTeardown"][-1]["allocs_per_iter"] == 1.1875
    # google/benchmark#1939: each repetition's report points into a std::vector of results that
    # later repetitions grow, so the first repetition's memory result is read from freed memory
    # (allocs_per_iter was computed before, and stays right). Not a deterministic value, only
    # never the right one: glibc's tcache writes its random key over max_bytes_used.
    repeated = runs["BM_Repeated/repeats:3"]
    assert len(repeated) == 3
    assert all(entry["allocs_per_iter"] == (RUNNER_ALLOCS + 16) / 16 for entry in repeated)
    assert ((repeated[0]["max_bytes_used"], repeated[0].get("total_allocated_bytes"))
            != (0, bookkeeping + 16 * 40))


# --- out of tree: the build tree's package and an installed one ------------------------------

CONSUMER_CMAKE = """cmake_minimum_required(VERSION 3.20)
project(consumer CXX)
find_package(benchmark REQUIRED)
find_package(allocbench REQUIRED COMPONENTS gbench)
add_executable(bench bench.cc)
target_link_libraries(bench PRIVATE benchmark::benchmark allocbench::gbench)
"""
# One 100-byte std::vector<char> per op: only operator new in the user's object, no malloc or
# free, so the archive's malloc hooks must come in by themselves (gbench_counters.cc's anchors).
CONSUMER_SOURCE = r"""#include <benchmark/benchmark.h>
#include <vector>
#ifndef VECTOR_BYTES
#define VECTOR_BYTES 100
#endif

static void BM_Vector(benchmark::State& state) {
  std::vector<char> setup(5000);  // not counted
  benchmark::DoNotOptimize(setup.data());
  for (auto _ : state) {
    std::vector<char> v(VECTOR_BYTES);
    benchmark::DoNotOptimize(v.data());
  }
}
BENCHMARK(BM_Vector)->Threads(1)->Threads(3);
BENCHMARK_MAIN();
"""


def build_consumer(tmp_path: Path, *cmake_args: str, name: str = "consumer") -> Path:
    source, build = tmp_path / name, tmp_path / f"{name}-build"
    source.mkdir()
    (source / "CMakeLists.txt").write_text(CONSUMER_CMAKE)
    (source / "bench.cc").write_text(CONSUMER_SOURCE)
    for command in (["cmake", "-S", str(source), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     *cmake_args],
                    ["cmake", "--build", str(build)]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
    return build


@pytest.mark.parametrize("package", ["build-tree", "install"])
def test_an_out_of_tree_suite_links_one_target(build_dir, tmp_path, request, package):
    if package == "build-tree":
        args = [f"-Dallocbench_DIR={build_dir / 'lib' / 'cmake' / 'allocbench'}"]
    else:
        args = [f"-DCMAKE_PREFIX_PATH={request.getfixturevalue('prefix')}"]
    build = build_consumer(tmp_path, *args)
    done = subprocess.run(["nm", "-u", str(build / "CMakeFiles" / "bench.dir" / "bench.cc.o")],
                          capture_output=True, text=True, check=True)
    undefined = {line.split()[-1] for line in done.stdout.splitlines()}
    assert not undefined & {"malloc", "free", "calloc", "realloc"}   # the premise above
    symbols = defined_symbols(build / "bench")
    assert symbols.get("_Znwm") == "T" and symbols.get("malloc") == "T"

    runs = iteration_runs(json.loads(run(build / "bench", "--benchmark_format=json",
                                         MIN_TIME).stdout))
    assert sorted(runs) == ["BM_Vector/threads:1", "BM_Vector/threads:3"]
    for entries in runs.values():
        (entry,) = entries
        assert (entry["bytes_per_op"], entry["allocs_per_op"]) == (100, 1)


def test_compare_gates_a_suite_with_the_drop_in_exactly(build_dir, tmp_path):
    """The whole path a C++ team takes: its suite, the drop-in, two builds (a vector of 100
    bytes per op, then of 132), Google Benchmark's JSON of each, and allocbench compare."""
    package = f"-Dallocbench_DIR={build_dir / 'lib' / 'cmake' / 'allocbench'}"
    sides = {}
    for side, size in (("base", 100), ("cand", 132)):
        build = build_consumer(tmp_path, package, f"-DCMAKE_CXX_FLAGS=-DVECTOR_BYTES={size}",
                               name=side)
        sides[side] = tmp_path / f"{side}.json"
        run(build / "bench", "--benchmark_repetitions=5", f"--benchmark_out={sides[side]}",
            "--benchmark_out_format=json", MIN_TIME)

    def compare(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(ROOT / "allocbench"), "compare", *args], capture_output=True,
                              text=True, timeout=300, cwd=tmp_path)

    done = compare(str(sides["base"]), str(sides["cand"]), "--format", "markdown",
                   "--fail-on", "alloc")
    assert done.returncode == 1, done.stdout + done.stderr
    for threads in (1, 3):
        row = f"| `BM_Vector/threads:{threads}` | `{{}}` | {{}} | {{}} | {{}} |"
        assert row.format("bytes_per_op", 100, 132, "+32 B (+32.0%) | 🟥 worse") in done.stdout
        assert row.format("allocs_per_op", 1, 1, "0 | same") in done.stdout
    assert "counted exactly by allocbench::gbench" in done.stdout   # the source's note
    # Exactly the two B/op rows fail the gate. (The headline's count of regressions may also
    # hold a time verdict: 32 more bytes per op can make the candidate slower.)
    done = compare(str(sides["base"]), str(sides["cand"]), "--format", "json",
                   "--fail-on", "alloc")
    assert done.returncode == 1, done.stdout + done.stderr
    assert json.loads(done.stdout)["gate"]["failed"] == [
        {"instance": f"BM_Vector/threads:{threads}", "metric": "bytes_per_op"}
        for threads in (1, 3)]
    # The same build on both sides: allocation metrics same, exit 0 whatever time does.
    done = compare(str(sides["base"]), str(sides["base"]), "--fail-on", "alloc")
    assert done.returncode == 0, done.stdout + done.stderr


# --- the README's table: the drop-in and MemoryManager on the same benchmarks ------------------

README_ROWS = {   # benchmark -> what its timed loop does (the source's comments)
    "BM_ThreeNew32": "3 × `new` of 32 B",
    "BM_SetupTeardown": "8 B; 1 MiB setup before the loop, 1000 B teardown after",
    "BM_PauseResume": "24 B; 4096 B between `PauseTiming` and `ResumeTiming`",
    "BM_PerThread/threads:4": "thread *i* allocates 16·(*i*+1) B",
    "BM_OneIn8": "one 64 B block every 8 ops",
}


def readme_table(drop_in: dict[str, list[dict]], memory_manager: dict[str, list[dict]]) -> str:
    lines = ["| benchmark | per op | `allocbench::gbench` | `MemoryManager` of Google Benchmark "
             "1.7.1 |", "|---|---|---|---|"]
    for name, what in README_ROWS.items():
        ours, theirs = drop_in[name][0], memory_manager[name][-1]
        lines.append(f"| `{name}` | {what} | {ours['bytes_per_op']:g} B/op, "
                     f"{ours['allocs_per_op']:g} allocs/op | {theirs['allocs_per_iter']:g} "
                     f"allocs_per_iter, {theirs['total_allocated_bytes']} "
                     "total_allocated_bytes |")
    return "\n".join(lines) + "\n"


def test_the_readme_table_is_what_both_report(gbench_dir, tmp_path):
    drop_in = iteration_runs(run_json(gbench_dir / "gbench_ground_truth", tmp_path))
    memory_manager = iteration_runs(run_json(gbench_dir / "gbench_memory_manager", tmp_path))
    readme = page("gbench")
    block = readme.split("<!-- gbench-table:begin -->\n")[1].split("<!-- gbench-table:end -->")[0]
    assert block == readme_table(drop_in, memory_manager)
