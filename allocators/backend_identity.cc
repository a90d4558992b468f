// The strong definitions that replace counters.cc's weak "none" in a counted executable.
#include "allocbench/counting.h"
#include "backend.h"

namespace allocbench::counting {

const char* BackendName() noexcept { return backend::Name(); }
const char* BackendVersion() noexcept { return backend::Version(); }

AllocatorFootprint ReadAllocatorFootprint() noexcept {
  AllocatorFootprint f;
  backend::Stats(&f.mapped_bytes, &f.allocated_bytes);
  return f;
}

}  // namespace allocbench::counting
