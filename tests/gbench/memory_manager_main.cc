// The same benchmarks with Google Benchmark 1.7.1's own benchmark::MemoryManager, implemented as
// a user would: every allocation of the process between Start() and Stop(), from allocbench's
// counting layer (the process-wide totals, all threads, background window open). No
// allocbench::gbench here: only the interposed malloc/operator new and the counters.
//
// What 1.7.1's runner does with it (src/benchmark_runner.cc, DoOneRepetition): after each
// repetition's timed run, one more run of min(16, iterations) iterations on one thread, between
// Start() and Stop(), which also covers the runner's `new ThreadManager(1)`, the benchmark's
// setup and teardown and its paused regions; it reports num_allocs / that iteration count as
// allocs_per_iter and total_allocated_bytes unscaled. It keeps the results in a std::vector and
// the reports point into it, so with repetitions all but the last repetition's pointers dangle
// once the vector grows (google/benchmark#1939, fixed after 1.9.1).
#include <benchmark/benchmark.h>

#include <cstdint>

#include "allocbench/counting.h"

namespace {

namespace counting = allocbench::counting;

struct Totals {
  uint64_t allocs = 0;
  uint64_t bytes = 0;
};

Totals ReadTotals() {
  const counting::Snapshot s = counting::Read();
  return {s.scenario.allocs + s.background.allocs,
          s.scenario.requested_bytes + s.background.requested_bytes};
}

class CountingMemoryManager : public benchmark::MemoryManager {
 public:
  void Start() override {
    start_ = ReadTotals();
    counting::SetBackgroundWindow(true);
  }
  void Stop(Result* result) override {
    counting::SetBackgroundWindow(false);
    const Totals end = ReadTotals();
    result->num_allocs = static_cast<int64_t>(end.allocs - start_.allocs);
    result->total_allocated_bytes = static_cast<int64_t>(end.bytes - start_.bytes);
    // max_bytes_used stays 0 and net_heap_growth absent: not measured here.
  }

 private:
  Totals start_;
};

}  // namespace

int main(int argc, char** argv) {
  CountingMemoryManager memory_manager;
  benchmark::RegisterMemoryManager(&memory_manager);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  benchmark::RegisterMemoryManager(nullptr);
  return 0;
}
