"""The mutations bench/mutation.py plants, one at a time: each a one-token change of a snippet
that must occur exactly once in its file, with the tests that should catch it."""

from __future__ import annotations

from dataclasses import dataclass

# Test selections shared by several mutations.
COUNTING_CTEST = r"^(system\.|GroundTruth\.)"
COUNTING_PYTEST = ("tests/python/test_runner_results.py", "tests/python/test_determinism.py")
COUNT_PASS_CTEST = r"^(CountPass|GroundTruth)\."
TIME_PASS_CTEST = r"^(TimePass|TimeSummary)\."
COMPARE_PYTEST = ("tests/python/test_compare.py", "tests/python/test_stats.py",
                  "tests/python/test_compare_format.py", "tests/python/test_calibrate.py")
BISECT_PYTEST = ("tests/python/test_bisect_all.py", "tests/python/test_sweep_parts.py",
                 "tests/python/test_exit_codes.py::test_bisect_between_equal_values_is_1")
CALIBRATE_PYTEST = ("tests/python/test_calibrate.py", "tests/python/test_compare.py")
IMPORT_PYTEST = ("tests/python/test_import_gate.py", "tests/python/test_import_formats.py")
GBENCH_PYTEST = ("tests/python/test_gbench_dropin.py",)
TESTING_CTEST = r"^(Count|AllocsPerRun|GtestChecks|Unavailable)\."
TESTING_PYTEST = ("tests/python/test_testing_catch2.py",)
SITE_PYTEST = ("tests/python/test_site_budget.py", "tests/python/test_site_budget_ab.py")
STORE_PYTEST = ("tests/python/test_store_index.py", "tests/python/test_sweep_parts.py")
SLIM_PYTEST = ("tests/python/test_slim.py", "tests/python/test_report_rebuild.py")
PAIRED_PYTEST = ("tests/python/test_paired_pass.py", "tests/python/test_paired_gate.py",
                 "tests/python/test_paired_stats.py")


@dataclass(frozen=True)
class Mutation:
    id: str
    file: str                       # relative to the repository
    original: str                   # must occur exactly once in the file
    replacement: str
    ctest: str | None = None        # ctest -R REGEX, run first
    pytest: tuple[str, ...] = ()    # pytest arguments (files, node ids, -k EXPR), run next
    what: str = ""                  # the bug it plants, in words


MUTATIONS: tuple[Mutation, ...] = (
    # --- the counting layer (allocators/) ---------------------------------------------------
    Mutation("new-aligned-uncounted", "allocators/hooks_new.cc",
             "return CountedAlloc(size, [=] { return backend::Memalign(align, size); });",
             "return backend::Memalign(align, size);",
             COUNTING_CTEST, COUNTING_PYTEST,
             "the aligned operator new forms allocate without counting"),
    Mutation("requested-bytes-plus-one", "allocators/hooks_common.h",
             "ci::Bump(c.requested_bytes, requested);",
             "ci::Bump(c.requested_bytes, requested + 1);",
             COUNTING_CTEST, COUNTING_PYTEST,
             "the fast path (Tracking::kBasic) counts one byte too many per allocation"),
    Mutation("free-uncounted", "allocators/hooks_malloc.cc",
             "void free(void* p) noexcept { CountedFree(p); }",
             "void free(void* p) noexcept { backend::Free(p); }",
             COUNTING_CTEST, COUNTING_PYTEST, "free() releases without counting a free"),
    Mutation("realloc-no-alloc", "allocators/hooks_malloc.cc",
             "  ci::RecordAllocAs(target, size, ci::FullTracking() ? "
             "backend::UsableSize(moved) : 0);\n  ci::ObserveFree(p);",
             "  ci::ObserveFree(p);",
             COUNTING_CTEST, COUNTING_PYTEST,
             "a moving realloc counts its free but not its allocation"),
    # --- the count pass (harness/src/count_pass.cc) -----------------------------------------
    Mutation("window-start-1", "harness/src/count_pass.cc",
             "constexpr int kWindow1Start = 2;", "constexpr int kWindow1Start = 1;",
             COUNT_PASS_CTEST, COUNTING_PYTEST,
             "background counting and live-growth start at the warm-up, not at window 1"),
    Mutation("window-ops-once", "harness/src/count_pass.cc",
             "const double window_ops = 2.0 * static_cast<double>(m.window_ops) * threads;",
             "const double window_ops = 1.0 * static_cast<double>(m.window_ops) * threads;",
             COUNT_PASS_CTEST, COUNTING_PYTEST, "per-op values divide two windows by one"),
    Mutation("first-op-not-per-thread", "harness/src/count_pass.cc",
             "m.first_op_bytes = static_cast<double>(first.requested_bytes) / threads;",
             "m.first_op_bytes = static_cast<double>(first.requested_bytes);",
             COUNT_PASS_CTEST, COUNTING_PYTEST,
             "first_op_bytes is the cold op of all threads together, not per thread"),
    Mutation("steady-allocs-differ", "harness/src/count_pass.cc",
             "w1.allocs == w2.allocs", "w1.allocs != w2.allocs",
             COUNT_PASS_CTEST, COUNTING_PYTEST, "steady requires the windows' allocs to differ"),
    Mutation("growth-at-zero", "harness/src/count_pass.cc",
             "if (window_growth > 0) {", "if (window_growth >= 0) {",
             COUNT_PASS_CTEST, COUNTING_PYTEST,
             "windows that differ with no growth are called amortized growth"),
    # --- the time pass (harness/src/time_pass.cc) -------------------------------------------
    Mutation("time-divided-by-threads", "harness/src/time_pass.cc",
             "m.samples_ns.push_back(t * instance.threads);",
             "m.samples_ns.push_back(t / instance.threads);",
             TIME_PASS_CTEST, ("tests/python/test_runner_results.py",),
             "a multi-threaded sample is divided by the threads instead of multiplied"),
    Mutation("ops-per-s-one-thread", "harness/src/time_pass.cc",
             "m.ops_per_s = m.median_ns > 0 ? 1e9 * threads / m.median_ns : 0.0;",
             # (threads > 0) is 1, and keeps `threads` used (-Werror=unused-parameter).
             "m.ops_per_s = m.median_ns > 0 ? 1e9 * (threads > 0) / m.median_ns : 0.0;",
             TIME_PASS_CTEST, ("tests/python/test_runner_results.py",),
             "ops/s is one thread's throughput, not all threads'"),
    # --- the gate (scripts/allocbench/gate/compare.py) -------------------------------------------
    Mutation("budget-boundary-worse", "scripts/allocbench/gate/compare.py",
             "elif c[0] > b[0] + limit_allowed:", "elif c[0] >= b[0] + limit_allowed:",
             None, COMPARE_PYTEST,
             "an increase of exactly the budget is worse (and, at budget 0, no change is)"),
    Mutation("time-gate-part-of-interval", "scripts/allocbench/gate/compare.py",
             "elif low > limit:", "elif high > limit:",
             None, COMPARE_PYTEST,
             "time is worse when the interval reaches beyond the threshold, not lies beyond it"),
    Mutation("nondeterministic-both-sides", "scripts/allocbench/gate/compare.py",
             "if len(b) > 1 or len(c) > 1:", "if len(b) > 1 and len(c) > 1:",
             None, COMPARE_PYTEST,
             "forks that disagree on one side only are not nondeterministic"),
    # --- results of other harnesses (scripts/allocbench/imports/) ---------------------------
    Mutation("sampled-tolerance-ignored", "scripts/allocbench/gate/compare.py",
             "elif c > b + tol + limit_allowed:", "elif c > b + limit_allowed:",
             None, IMPORT_PYTEST,
             "a sampled B/op (JMH, BenchmarkDotNet) is worse by any increase, noise included"),
    Mutation("gbench-first-repetition-only", "scripts/allocbench/imports/gbench.py",
             'alloc.update({key: values[0], f"samples_{key}": values})',
             'alloc.update({key: values[0], f"samples_{key}": values[:1]})',
             None, IMPORT_PYTEST,
             "Google Benchmark repetitions that disagree on B/op read as the first one"),
    Mutation("jmh-throughput-unit", "scripts/allocbench/imports/jmh.py",
             'return "ops_per_s", 1e9 / common.NS_PER[unit[4:]]',
             'return "ops_per_s", 1e9 * common.NS_PER[unit[4:]]',
             None, IMPORT_PYTEST, "a JMH throughput in ops/ms is converted to ops/s backwards"),
    # --- the Google Benchmark drop-in (gbench/) ---------------------------------------------
    Mutation("gbench-pause-counts", "gbench/gbench_counters.cc",
             "if (tls_loop.active) counting::SetMode(counting::Mode::kPaused);",
             "if (tls_loop.active) counting::SetMode(counting::Mode::kCounting);",
             None, GBENCH_PYTEST, "allocations between PauseTiming and ResumeTiming count"),
    Mutation("gbench-per-thread-average", "gbench/gbench_counters.cc",
             'state->counters["bytes_per_op"] = benchmark::Counter(bytes, '
             'benchmark::Counter::kAvgIterations);',
             'state->counters["bytes_per_op"] = benchmark::Counter(bytes, '
             'benchmark::Counter::kAvgThreads);',
             None, GBENCH_PYTEST, "bytes_per_op is per thread, not per op"),
    # --- allocation checks in unit tests (testing/) ------------------------------------------
    Mutation("observed-thread-on-fast-path", "allocators/thread_state.h",
             "block != nullptr && tls_state.observer == nullptr) {", "block != nullptr) {",
             TESTING_CTEST, TESTING_PYTEST,
             "an observed thread counts on the fast path, so its observer never sees an event"),
    Mutation("testing-free-keeps-block-live", "testing/recorder.cc",
             "  live_bytes_ -= static_cast<int64_t>(slots_[slot].bytes);\n  if (slots_",
             "  if (slots_",
             TESTING_CTEST, TESTING_PYTEST, "a block the call frees still counts in net_bytes"),
    Mutation("testing-erase-shifts-the-wrong-blocks", "testing/recorder.cc",
             "    if (stays) continue;", "    if (!stays) continue;",
             r"^Recorder\.", (), "freeing a block moves the wrong ones in the live-block table"),
    Mutation("testing-permit-counts", "testing/window.cc",
             "if (saved_ != counting::Mode::kIgnored) counting::SetMode(counting::Mode::kPaused);",
             "if (saved_ != counting::Mode::kIgnored) counting::SetMode(counting::Mode::kCounting);",
             TESTING_CTEST, TESTING_PYTEST, "PermitAllocations excludes nothing"),
    Mutation("testing-nested-not-chained", "testing/window.cc",
             "recorder_->Chain(saved_mode_ == counting::Mode::kCounting ? saved_thread_observer_ "
             ": nullptr,",
             "recorder_->Chain(nullptr,",
             TESTING_CTEST, TESTING_PYTEST, "a count nested in another is not counted by the outer"),
    Mutation("testing-budget-boundary", "testing/verdict.cc",
             "return c.allocs <= e.allocs && c.bytes <= e.bytes;",
             "return c.allocs < e.allocs && c.bytes <= e.bytes;",
             TESTING_CTEST, TESTING_PYTEST, "a statement exactly at its allocation budget fails"),
    Mutation("testing-listing-nine", "testing/verdict.cc",
             "constexpr size_t kListed = 10;", "constexpr size_t kListed = 9;",
             TESTING_CTEST, TESTING_PYTEST, "a failure lists nine lines, not ten"),
    Mutation("testing-library-headers-are-program", "testing/stacks.cc",
             'return StartsWith(frame.path, "/usr/include/") || frame.path.find("/c++/") != '
             'std::string::npos;',
             "return false;",
             None, ("tests/python/test_testing_docs.py::test_the_regression_fails_as_the_page_shows",),
             "a failure names libstdc++'s inlined std::string code instead of the program's line"),
    # --- per-site budgets (scripts/allocbench/gate/site_budget.py) --------------------------------
    Mutation("site-budget-boundary", "scripts/allocbench/gate/site_budget.py",
             "increase > Fraction(limit.allowed(float(base)))",
             "increase >= Fraction(limit.allowed(float(base)))",
             None, SITE_PYTEST, "a site that grew by exactly its budget is beyond it"),
    Mutation("site-budget-ignored-when-sums-equal", "scripts/allocbench/gate/compare.py",
             "out += [(e.instance, SITE) for e in comparison.site_excesses]",
             "out += []",
             None, SITE_PYTEST, "a site beyond its budget does not fail the gate"),
    # --- bisect (scripts/allocbench/history/bisection.py, commands/bisect.py) -----------------------
    Mutation("bisect-midpoint-up", "scripts/allocbench/history/bisection.py",
             "middle = (low + high) // 2", "middle = (low + high) // 2 + 1",
             None, BISECT_PYTEST, "the probe is one commit right of the middle"),
    Mutation("bisect-all-equal-ends-searched", "scripts/allocbench/history/bisection.py",
             "if known[part[0]] != known[part[1]])",
             "if known[part[0]] != known[part[1]] or part[1] - part[0] > 1)",
             None, BISECT_PYTEST,
             "--all halves intervals whose ends are equal too (no equal-ends shortcut)"),
    Mutation("bisect-equal-ends-command", "scripts/allocbench/commands/bisect.py",
             "if bad_value == good_value:", "if bad_value == good_value and False:",
             None, BISECT_PYTEST,
             "bisect with equal good and bad values searches anyway and names a commit"),
    # --- calibrate (scripts/allocbench/commands/calibrate.py) -------------------------------
    Mutation("calibrate-unstable-boundary", "scripts/allocbench/commands/calibrate.py",
             "unstable > 0.2 * n", "unstable >= 0.2 * n",
             None, CALIBRATE_PYTEST, "unstable in exactly 20% of the rounds is noisy"),
    Mutation("calibrate-mde-boundary", "scripts/allocbench/commands/calibrate.py",
             "mde_percent > 2 * threshold", "mde_percent >= 2 * threshold",
             None, CALIBRATE_PYTEST, "an MDE of exactly twice the threshold is noisy"),
    # --- the store and its index (scripts/allocbench/history/store.py, store_index.py) ---
    Mutation("index-stat-without-ctime", "scripts/allocbench/history/store_index.py",
             "{st.st_mtime_ns}:{st.st_ctime_ns}:", "{st.st_mtime_ns}:",
             None, STORE_PYTEST, "a record rewritten with its size and mtime put back is served "
             "from the index as it was"),
    Mutation("index-ignores-the-code", "scripts/allocbench/history/store_index.py",
             "hashlib.blake2b(self._code_digest() + blob, digest_size=20)",
             "hashlib.blake2b(blob, digest_size=20)",
             None, STORE_PYTEST, "another allocbench's validation is trusted"),
    Mutation("git-vouches-for-changed-files", "scripts/allocbench/history/store_index.py",
             "and len(parts[2]) == 40 and name not in skip:", "and len(parts[2]) == 40:",
             None, STORE_PYTEST, "a record changed in a checkout of the store's branch is "
             "served as git checked it out"),
    Mutation("index-forms-of-other-bytes", "scripts/allocbench/history/store.py",
             "        if row is not None and row.digest == digest:\n            found = ",
             "        if row is not None:\n            found = ",
             None, STORE_PYTEST, "the forms an index holds of other bytes are served"),
    Mutation("steps-of-equal-briefs-keep-the-first", "scripts/allocbench/reports/steps.py",
             "                where.update(dict.fromkeys(measured, point))\n",
             "                pass\n",
             None, SLIM_PYTEST + ("tests/python/test_report_site.py",),
             "a step after revisions that measured alike names the first of them as its before"),
    Mutation("slim-drops-the-samples", "scripts/allocbench/history/slim.py",
             '_TIME_KEPT = ("ns_per_op", "samples_ns_per_op")', '_TIME_KEPT = ("ns_per_op",)',
             None, SLIM_PYTEST, "a report's time charts of the window lose their samples"),
    Mutation("older-page-key-without-versions", "scripts/allocbench/reports/pages.py",
             "[[p.sha, p.label, p.subject, p.status, p.problem, p.version] for p in points]",
             "[[p.sha, p.label, p.subject, p.status, p.problem] for p in points]",
             None, SLIM_PYTEST, "a re-measured old revision's page is copied as it was"),
    Mutation("store-record-gzip-dated", "scripts/allocbench/history/store.py",
             "compresslevel=9, mtime=0)", "compresslevel=9)",
             None, STORE_PYTEST, "the same record is written as other bytes (a date in its header)"),
    Mutation("store-trailing-data-accepted", "scripts/allocbench/history/store.py",
             "if not inflate.eof or inflate.unused_data:", "if not inflate.eof:",
             None, STORE_PYTEST, "bytes after a record's gzip stream are taken as a record"),
    # --- the paired time pass and its gate ----------------------------------------------------
    Mutation("paired-pause-not-taken-out", "harness/src/paired_worker.cc",
             "slot_->wall_ns = end - t0_ - paused_wall_sum_.exchange(0) / instance_.threads;",
             "slot_->wall_ns = end - t0_;",
             None, PAIRED_PYTEST, "paused work is timed in the paired pass"),
    Mutation("paired-sides-not-pinned", "harness/src/paired_worker.cc",
             "      if (!cpus_.cpus.empty())\n        PinThisThread(",
             "      if (false)\n        PinThisThread(",
             None, PAIRED_PYTEST, "each side runs on whichever CPU: one may sit on a busier one"),
    Mutation("paired-order-fixed", "harness/src/paired_pass.cc",
             "return ((z ^ (z >> 31)) & 1) != 0;", "return false;",
             None, PAIRED_PYTEST, "the base always runs first in a pair"),
    Mutation("paired-warmup-kept", "harness/src/paired_pass.cc",
             "    if (warming) {\n      ++out->warmup_pairs;\n      continue;\n    }\n",
             "    if (warming) {\n      ++out->warmup_pairs;\n    }\n",
             None, PAIRED_PYTEST, "the warm-up pairs are judged too"),
    Mutation("paired-fault-blames-the-base", "harness/src/paired_pass.cc",
             'constexpr const char* kSideName[2] = {"base", "candidate"};',
             'constexpr const char* kSideName[2] = {"base", "base"};',
             None, PAIRED_PYTEST, "a fault of the candidate is said to be the base's"),
    Mutation("paired-cpu-per-thread-not-divided", "scripts/allocbench/base/paired_results.py",
             'ops = float(self.batch_ops) * (threads if summed else 1)',
             'ops = float(self.batch_ops)',
             None, PAIRED_PYTEST, "CPU per op of a multi-threaded instance counts every thread"),
    Mutation("paired-sessions-ignored", "scripts/allocbench/gate/paired_gate.py",
             "                          sessions=sessions)", "                          sessions=None)",
             None, PAIRED_PYTEST, "the gate takes the pairs of every session as one run"),
    Mutation("paired-gate-by-the-unpaired-threshold", "scripts/allocbench/gate/paired_gate.py",
             "_threshold(config.threshold(inst.name, paired=True),",
             "_threshold(config.threshold(inst.name),",
             None, PAIRED_PYTEST + ("tests/python/test_ab.py",),
             "paired time is judged by the 5% of forked time"),
    Mutation("paired-failure-never-gates", "scripts/allocbench/gate/paired_gate.py",
             'side = "base" if error.startswith("paired time pass: base:") else "candidate"',
             'side = "base"',
             None, PAIRED_PYTEST, "a candidate that crashes in the paired pass passes the gate"),
    Mutation("paired-layout-calibration-ignored", "scripts/allocbench/gate/paired_gate.py",
             'or moved <= configured:', 'or moved >= 0:',
             None, PAIRED_PYTEST, "an instance another layout moves by 3% gates at 1%"),
    Mutation("paired-interval-untrimmed", "scripts/allocbench/gate/paired.py",
             "    cut = (TRIM * sizes).astype(int)", "    cut = (0 * sizes).astype(int)",
             None, PAIRED_PYTEST, "a preempted batch moves the estimate"),
)
