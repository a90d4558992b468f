// A benchmark knob, not a feature: kExtraHashRounds rounds of extra hashing per finished span,
// with no allocation, so that a benchmark can make the tracer a known fraction slower in
// instructions while its B/op and allocs/op stay the same. bench/instructions_gate.py sets it,
// in commits of a temporary copy of this repository, to measure what the instructions gate and
// the time gate of `allocbench ab` detect. 0, the default, generates no code at all: the
// tracer, and every built-in scenario's instruction count, are exactly what they are without it.
#ifndef ALLOCBENCH_TRACER_SRC_EXTRA_WORK_H_
#define ALLOCBENCH_TRACER_SRC_EXTRA_WORK_H_

#include <cstdint>

namespace tracer::internal {

// bench/instructions_gate.py rewrites this line: keep it one line, of this form.
inline constexpr int kExtraHashRounds = 0;

// kExtraHashRounds rounds of a 64-bit mix of `seed`. Each round's result goes through an empty
// asm the compiler cannot see through, so no round is folded away or hoisted; the trip count
// goes through one too, so the loop is neither peeled nor unrolled: the same few instructions
// per round (shift, xor, multiply, loop), a cost linear in the rounds.
inline void ExtraHashWork(uint64_t seed) {
  if constexpr (kExtraHashRounds > 0) {
    int rounds = kExtraHashRounds;
    asm volatile("" : "+r"(rounds));
    uint64_t h = seed;
    for (int i = 0; i < rounds; ++i) {
      h ^= h >> 31;
      h *= uint64_t{0x9e3779b97f4a7c15};
      asm volatile("" : "+r"(h));
    }
  }
}

}  // namespace tracer::internal

#endif  // ALLOCBENCH_TRACER_SRC_EXTRA_WORK_H_
