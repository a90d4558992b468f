#include "tracer/id_generator.h"

namespace tracer {

uint64_t IdGenerator::Next() {
  constexpr uint64_t kGamma = 0x9e3779b97f4a7c15;
  for (;;) {
    uint64_t z = state_.fetch_add(kGamma, std::memory_order_relaxed) + kGamma;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    z ^= z >> 31;
    if (z != 0) return z;
  }
}

}  // namespace tracer
