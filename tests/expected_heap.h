// Expected heap traffic, added up block by block: what the built-in families' tests derive their
// exact B/op and allocs/op from (sizes, never an earlier result). Holds the Heap tally and the
// generic libstdc++ replays (strings, vectors) shared by tests/tracer/ and tests/metrics/; the
// subjects' own replays are in tests/tracer/expected_tracer.h and tests/metrics/expected_metrics.h.
#ifndef ALLOCBENCH_TESTS_EXPECTED_HEAP_H_
#define ALLOCBENCH_TESTS_EXPECTED_HEAP_H_

#include <algorithm>
#include <cstddef>
#include <vector>

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

// One block of `bytes` as a Heap, none if 0: for the block sizes below in Heap arithmetic.
inline Heap Block(size_t bytes) {
  Heap heap;
  heap.Add(bytes);
  return heap;
}

// The block of a string constructed (or copy-constructed) at its exact size: none within the
// small-string buffer, else one of size()+1 bytes.
inline size_t ExactString(size_t length) { return length > kSsoCapacity ? length + 1 : 0; }

// The block of a string that outgrows the small-string buffer by appending (concatenation,
// append) or by assignment into an empty std::string: libstdc++ grows the full buffer to at least
// twice its capacity, one block of max(size, 30) + 1 bytes. A string built by several appends
// has only that one block while its final size is at most 30: callers check it where it matters.
inline size_t GrownString(size_t length) {
  return length > kSsoCapacity ? std::max(length, 2 * kSsoCapacity) + 1 : 0;
}

// What a std::vector<T> allocates growing from empty to n elements one push at a time, replayed
// on a vector of the same type (libstdc++'s growth policy, not the subject's code).
template <class T>
Heap GrownVector(size_t n) {
  Heap heap;
  std::vector<T> replay;
  for (size_t i = 0; i < n; ++i) {
    const size_t capacity = replay.capacity();
    replay.emplace_back();
    if (replay.capacity() != capacity) heap.Add(replay.capacity() * sizeof(T));
  }
  return heap;
}

// A std::vector of `element` bytes growing one push at a time, for replays that interleave its
// pushes with other blocks: capacities 1, 2, 4, ... (libstdc++'s policy, on a vector of the same
// element size).
class VectorGrowth {
 public:
  explicit VectorGrowth(size_t element) : element_(element) {}
  void Push(Heap* heap) {
    if (size_ == capacity_) {
      capacity_ = capacity_ == 0 ? 1 : 2 * capacity_;
      heap->Add(capacity_ * element_);
    }
    ++size_;
  }

 private:
  size_t element_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace allocbench::expected

#endif  // ALLOCBENCH_TESTS_EXPECTED_HEAP_H_
