// One instance's passes (count, then time), as the runner records them.
#ifndef ALLOCBENCH_HARNESS_MEASURE_H_
#define ALLOCBENCH_HARNESS_MEASURE_H_

#include <functional>

#include "options.h"
#include "result.h"

namespace allocbench {

// Told when each pass starts ("count", "time") and, after it, what was measured so far: a
// supervisor keeps that if a later pass crashes.
struct MeasureHooks {
  std::function<void(const char* pass)> starting;
  std::function<void(const InstanceResult& so_far)> measured;
};

// REQUIRES: the calling thread is in counting::Mode::kIgnored.
InstanceResult Measure(const Instance& instance, const Options& options,
                       const MeasureHooks& hooks = {});

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_MEASURE_H_
