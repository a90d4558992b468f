// allocbench::gbench: bytes_per_op and allocs_per_op as user counters of every Google Benchmark
// benchmark in the executable, counted only inside the timed loop, on the benchmark's threads.
//
// The link options of allocbench::gbench (gbench/CMakeLists.txt) redirect the executable's own
// calls of four out-of-line benchmark::State members to the __wrap_ functions below; each calls
// the real member (__real_, in libbenchmark). Per benchmark thread:
//
//   StartKeepRunning   real (starts the timer), then enter kCounting and read this thread's
//                      counters
//   PauseTiming        leave kCounting, then real
//   ResumeTiming       real, then kCounting again
//   FinishKeepRunning  leave kCounting and read this thread's counters, real (stops the timer),
//                      then set the two counters (which allocates: not counted, not timed) and
//                      restore the thread's mode from before the loop
//
// Both counters are Counter::kAvgIterations: Google Benchmark sums them over the benchmark's
// threads and divides by the iterations of all threads, i.e. per op per thread. Everything else
// (setup and teardown around the loop, PauseTiming regions, Google Benchmark's runner, its
// thread pool and reporters, other threads, including threads a benchmark starts) is never
// counted. A thread that counts through the counting layer's shared overflow block (more than
// 4096 threads at once) has no counters of its own: both counters are NaN for it, never a
// wrong number.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <string>

#include "allocbench/counting.h"
#include "hook_anchors.h"

namespace {

namespace counting = allocbench::counting;

// Pulls every hook object from the archive whatever the user's objects reference (a suite
// whose own code never calls malloc must still count libbenchmark's and libstdc++'s calls
// made in its loop). The backend comes with the hooks; counters.o and backend_identity.o with
// the calls below.
ALLOCBENCH_ANCHOR_HOOKS();

// This thread's loop. Trivial, zero-initialised TLS: no constructor runs on a new thread.
struct Loop {
  bool active;    // between StartKeepRunning and FinishKeepRunning
  bool has_slot;  // the thread counts in a slot of its own (see ReadThisThread)
  counting::Mode saved;
  uint64_t start_bytes;
  uint64_t start_allocs;
};
__thread Loop tls_loop;

// Only the counters are needed: no usable-size look-up or live-bytes tracking per allocation.
// Set during static initialisation, before main() runs any benchmark.
[[maybe_unused]] const bool g_basic_tracking = [] {
  counting::SetTracking(counting::Tracking::kBasic);
  benchmark::AddCustomContext(
      "allocbench_gbench",
      std::string("bytes_per_op, allocs_per_op = requested bytes, allocations per iteration "
                  "per thread in the timed loop (") +
          counting::BackendName() + " " + counting::BackendVersion() + ")");
  return true;
}();

}  // namespace

extern "C" {

void __real__ZN9benchmark5State16StartKeepRunningEv(benchmark::State* state);
void __real__ZN9benchmark5State17FinishKeepRunningEv(benchmark::State* state);
void __real__ZN9benchmark5State11PauseTimingEv(benchmark::State* state);
void __real__ZN9benchmark5State12ResumeTimingEv(benchmark::State* state);

void __wrap__ZN9benchmark5State16StartKeepRunningEv(benchmark::State* state) {
  __real__ZN9benchmark5State16StartKeepRunningEv(state);
  Loop& loop = tls_loop;
  loop.saved = counting::GetMode();
  loop.active = true;
  counting::SetMode(counting::Mode::kCounting);  // claims the thread's slot if it has none
  counting::Counters now;
  loop.has_slot = counting::ReadThisThread(&now);
  loop.start_bytes = now.requested_bytes;
  loop.start_allocs = now.allocs;
}

void __wrap__ZN9benchmark5State11PauseTimingEv(benchmark::State* state) {
  if (tls_loop.active) counting::SetMode(counting::Mode::kPaused);
  __real__ZN9benchmark5State11PauseTimingEv(state);
}

void __wrap__ZN9benchmark5State12ResumeTimingEv(benchmark::State* state) {
  __real__ZN9benchmark5State12ResumeTimingEv(state);
  if (tls_loop.active) counting::SetMode(counting::Mode::kCounting);
}

void __wrap__ZN9benchmark5State17FinishKeepRunningEv(benchmark::State* state) {
  Loop& loop = tls_loop;
  if (!loop.active) return __real__ZN9benchmark5State17FinishKeepRunningEv(state);
  counting::SetMode(counting::Mode::kPaused);
  counting::Counters now;
  const bool exact = loop.has_slot && counting::ReadThisThread(&now);
  __real__ZN9benchmark5State17FinishKeepRunningEv(state);
  loop.active = false;
  constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
  const double bytes =
      exact ? static_cast<double>(now.requested_bytes - loop.start_bytes) : kUnknown;
  const double allocs = exact ? static_cast<double>(now.allocs - loop.start_allocs) : kUnknown;
  state->counters["bytes_per_op"] = benchmark::Counter(bytes, benchmark::Counter::kAvgIterations);
  state->counters["allocs_per_op"] = benchmark::Counter(allocs, benchmark::Counter::kAvgIterations);
  counting::SetMode(loop.saved);
}

}  // extern "C"
