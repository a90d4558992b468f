// What one scenario instance produced in one run of allocbench-run.
#ifndef ALLOCBENCH_HARNESS_RESULT_H_
#define ALLOCBENCH_HARNESS_RESULT_H_

#include <optional>
#include <string>
#include <vector>

#include "count_pass.h"
#include "plugin_loader.h"
#include "time_pass.h"

namespace allocbench {

struct InstanceResult {
  Instance instance;
  std::optional<AllocMetrics> alloc;  // absent with --no-count or when the count pass failed
  std::optional<TimeMetrics> time;    // absent with --no-time or when the time pass failed
  std::vector<Counter> counters;      // reported by the scenario (State::SetCounter)
  std::string error;                  // non-empty: the scenario failed (which pass is named)
};

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_RESULT_H_
