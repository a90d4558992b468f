// What one scenario instance produced in one run of allocbench-run.
#ifndef ALLOCBENCH_HARNESS_RESULT_H_
#define ALLOCBENCH_HARNESS_RESULT_H_

#include <optional>
#include <string>
#include <vector>

#include "callgrind.h"
#include "count_pass.h"
#include "plugin_loader.h"
#include "time_pass.h"

namespace allocbench {

// What callgrind counted in the count windows (callgrind.h), per op per thread.
struct InstructionMetrics {
  int64_t window_ops = 0;                         // per thread, in each window
  callgrind::Events windows[2];                   // all the scenario's threads
  double instructions_per_op = 0;                 // Ir of both windows / (2 x window_ops x threads)
  std::optional<double> estimated_cycles_per_op;  // with the cache simulation
  bool steady = true;                             // both windows executed the same Ir
  std::string steady_reason;
};

struct InstanceResult {
  Instance instance;
  std::optional<AllocMetrics> alloc;  // absent with --no-count or when the count pass failed
  std::optional<TimeMetrics> time;    // absent with --no-time or when the time pass failed
  std::vector<Counter> counters;      // reported by the scenario (State::SetCounter)
  std::string error;                  // non-empty: the scenario failed (which pass is named)
  std::optional<InstructionMetrics> instructions;  // the count pass ran under callgrind
};

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_RESULT_H_
