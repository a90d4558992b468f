// The process's memory footprint for State::ReadFootprint(): RSS from /proc/self/statm and the
// allocator's own statistics. Reads without allocating, so it may run on any thread.
#ifndef ALLOCBENCH_HARNESS_FOOTPRINT_H_
#define ALLOCBENCH_HARNESS_FOOTPRINT_H_

#include <allocbench/scenario.h>

namespace allocbench {

// Fields are -1 where unknown (no /proc, or a backend that does not say).
internal::FootprintData ReadProcessFootprint() noexcept;

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_FOOTPRINT_H_
