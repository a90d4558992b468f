// Span timestamps. Reading a clock never allocates, so timing stays out of the counts.
#ifndef ALLOCBENCH_TRACER_SRC_CLOCK_H_
#define ALLOCBENCH_TRACER_SRC_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace tracer::internal {

inline int64_t WallNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace tracer::internal

#endif  // ALLOCBENCH_TRACER_SRC_CLOCK_H_
