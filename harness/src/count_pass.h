// The count pass: runs a scenario instance's loop under the counting layer and turns the counts
// into exact per-op metrics (DESIGN.md, "Measurement semantics").
//
// Each scenario thread runs 1 cold op, warmup-1 more warm-up ops, then two windows of `ops` ops.
// All threads meet at every boundary; one of them takes the snapshot while the others wait, so
// the windows hold exactly threads x ops operations. Per-op metrics are per op per thread.
#ifndef ALLOCBENCH_HARNESS_COUNT_PASS_H_
#define ALLOCBENCH_HARNESS_COUNT_PASS_H_

#include <allocbench/counting.h>

#include <cstdint>
#include <string>
#include <vector>

#include "plugin_loader.h"

namespace allocbench {

struct CountOptions {
  int64_t warmup = 1000;   // includes the cold first op
  int64_t ops = 1000;      // per window, per thread
  bool force = false;      // also for instances whose scenario sets CountOps (profiling)
  bool callgrind = false;  // make callgrind collect the windows (callgrind.h)
};

struct AllocMetrics {
  int64_t warmup_ops = 0;
  int64_t window_ops = 0;
  counting::Counters windows[2];  // scenario counters of each window, all threads
  double bytes_per_op = 0;
  double allocs_per_op = 0;
  double frees_per_op = 0;
  double usable_bytes_per_op = 0;
  double first_op_bytes = 0;
  double first_op_allocs = 0;
  int64_t peak_live_bytes = 0;  // usable bytes live at once, all the scenario's threads together
  double background_bytes_per_op = 0;
  double background_allocs_per_op = 0;
  bool steady = true;
  std::string steady_reason;  // why not, when !steady
};

// A value the scenario reported with State::SetCounter().
struct Counter {
  std::string name;
  double value = 0;
  std::string unit;
};

struct CountOutcome {
  AllocMetrics metrics;
  std::vector<Counter> counters;  // in the order first set
  std::string error;              // non-empty: the scenario failed and metrics are meaningless
};

// REQUIRES: the calling thread is in counting::Mode::kIgnored; options.warmup, options.ops >= 1.
// The instance's own CountOps(), if it has one, takes precedence over `options`.
CountOutcome RunCountPass(const Instance& instance, const CountOptions& options);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_COUNT_PASS_H_
