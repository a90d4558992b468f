// Expected heap traffic, added up block by block: what the built-in families' tests derive their
// exact B/op and allocs/op from (sizes, never an earlier result).
#ifndef ALLOCBENCH_TESTS_EXPECTED_HEAP_H_
#define ALLOCBENCH_TESTS_EXPECTED_HEAP_H_

#include <cstddef>

namespace allocbench::expected {

// libstdc++'s std::string keeps up to 15 characters in its small-string buffer.
constexpr size_t kSsoCapacity = 15;

// Heap blocks and their requested bytes.
struct Heap {
  double bytes = 0;
  double allocs = 0;
  void Add(size_t block) {
    if (block == 0) return;
    bytes += static_cast<double>(block);
    allocs += 1;
  }
  Heap& operator+=(const Heap& other) {
    bytes += other.bytes;
    allocs += other.allocs;
    return *this;
  }
  Heap operator*(double n) const { return {bytes * n, allocs * n}; }
};
inline Heap operator+(Heap a, const Heap& b) { return a += b; }

}  // namespace allocbench::expected

#endif  // ALLOCBENCH_TESTS_EXPECTED_HEAP_H_
