// Helpers shared by the counting tests: run a body with counting on and return exactly what it
// counted, without the test framework's own allocations getting in the way.
#ifndef ALLOCBENCH_TESTS_COUNTING_COUNTING_TEST_UTIL_H_
#define ALLOCBENCH_TESTS_COUNTING_COUNTING_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "allocbench/counting.h"

namespace allocbench::counting {

// Found by ADL: names parameterised tests "... # GetParam() = kFull" instead of a byte dump.
inline void PrintTo(Tracking tracking, std::ostream* out) {
  *out << (tracking == Tracking::kFull ? "kFull" : "kBasic");
}

}  // namespace allocbench::counting

namespace allocbench::counting::testing {

struct Delta {
  Counters scenario;
  Counters background;
};

inline Counters Minus(const Counters& after, const Counters& before) {
  return {after.allocs - before.allocs, after.frees - before.frees,
          after.requested_bytes - before.requested_bytes, after.usable_bytes - before.usable_bytes};
}

inline Delta Minus(const Snapshot& after, const Snapshot& before) {
  return {Minus(after.scenario, before.scenario), Minus(after.background, before.background)};
}

// Keeps the optimiser from eliding an allocation/free pair (GCC may drop new+delete of an
// object that does not escape).
inline void Escape(const void* p) { asm volatile("" : : "g"(p) : "memory"); }

// Runs `body` with the calling thread in kCounting, then restores its mode. Nothing but `body`
// runs between the two Read()s, and Read() itself does not allocate.
template <typename Body>
Delta Counted(Body&& body) {
  const Mode previous = GetMode();
  const Snapshot before = Read();
  SetMode(Mode::kCounting);
  body();
  SetMode(previous);
  return Minus(Read(), before);
}

// Same, with the calling thread left in its current mode (for kPaused/kIgnored/kUnassigned).
template <typename Body>
Delta Observed(Body&& body) {
  const Snapshot before = Read();
  body();
  return Minus(Read(), before);
}

// Sets the process-wide tracking level for one scope.
class ScopedTracking {
 public:
  explicit ScopedTracking(Tracking tracking) : previous_(GetTracking()) { SetTracking(tracking); }
  ~ScopedTracking() { SetTracking(previous_); }
  ScopedTracking(const ScopedTracking&) = delete;
  ScopedTracking& operator=(const ScopedTracking&) = delete;

 private:
  Tracking previous_;
};

// Exactly one allocation of `requested` bytes on the scenario counters, nothing else.
inline void ExpectOneAlloc(const Delta& d, uint64_t requested, Tracking tracking) {
  EXPECT_EQ(d.scenario.allocs, 1u);
  EXPECT_EQ(d.scenario.frees, 0u);
  EXPECT_EQ(d.scenario.requested_bytes, requested);
  if (tracking == Tracking::kFull) {
    EXPECT_GE(d.scenario.usable_bytes, requested);
    EXPECT_GT(d.scenario.usable_bytes, 0u);
  } else {
    EXPECT_EQ(d.scenario.usable_bytes, 0u);
  }
  EXPECT_EQ(d.background.allocs + d.background.frees, 0u);
}

// Exactly one free on the scenario counters, nothing else.
inline void ExpectOneFree(const Delta& d) {
  EXPECT_EQ(d.scenario.allocs, 0u);
  EXPECT_EQ(d.scenario.frees, 1u);
  EXPECT_EQ(d.scenario.requested_bytes, 0u);
  EXPECT_EQ(d.scenario.usable_bytes, 0u);
  EXPECT_EQ(d.background.allocs + d.background.frees, 0u);
}

inline void ExpectNothing(const Delta& d) {
  EXPECT_EQ(d.scenario.allocs, 0u);
  EXPECT_EQ(d.scenario.frees, 0u);
  EXPECT_EQ(d.scenario.requested_bytes, 0u);
  EXPECT_EQ(d.scenario.usable_bytes, 0u);
  EXPECT_EQ(d.background.allocs, 0u);
  EXPECT_EQ(d.background.frees, 0u);
  EXPECT_EQ(d.background.requested_bytes, 0u);
  EXPECT_EQ(d.background.usable_bytes, 0u);
}

// Test-name suffix for suites parameterised over the tracking level.
inline std::string TrackingName(const ::testing::TestParamInfo<Tracking>& info) {
  return info.param == Tracking::kFull ? "Full" : "Basic";
}

}  // namespace allocbench::counting::testing

#endif  // ALLOCBENCH_TESTS_COUNTING_COUNTING_TEST_UTIL_H_
