// Span and trace ids: a splitmix64 sequence from a fixed seed. Deterministic on purpose (the
// benchmarks need the same work on every run); thread-safe, lock-free, never allocates.
#ifndef ALLOCBENCH_TRACER_ID_GENERATOR_H_
#define ALLOCBENCH_TRACER_ID_GENERATOR_H_

#include <atomic>
#include <cstdint>

namespace tracer {

class IdGenerator {
 public:
  explicit IdGenerator(uint64_t seed) : state_(seed) {}
  // Never 0 (0 means "no parent" on the wire).
  uint64_t Next();

 private:
  std::atomic<uint64_t> state_;
};

}  // namespace tracer

#endif  // ALLOCBENCH_TRACER_ID_GENERATOR_H_
