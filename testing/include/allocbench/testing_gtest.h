// allocbench::testing's checks for GoogleTest:
//
//   #include <allocbench/testing_gtest.h>
//   TEST(Naming, PrecomputedNamesDoNotAllocate) {
//     ALLOCBENCH_EXPECT_NO_ALLOC(schema.GetOperationName(kHttp));
//   }
//
// Each runs its statement once on the calling thread, counted (see <allocbench/testing.h>), and
// fails like EXPECT_* (ASSERT_*: and returns) with a message that lists where the allocations
// it did not allow were made: size, function, file:line (with debug info), in the order made.
// Where counting is impossible (a sanitizer owns malloc) each check calls GTEST_SKIP() with
// the reason, which ends the test as skipped: never a silent pass. Like GTEST_SKIP() and
// ASSERT_*, they can only be used in functions returning void.
//
//   ALLOCBENCH_EXPECT_NO_ALLOC(statement)              no allocation at all
//   ALLOCBENCH_ASSERT_NO_ALLOC(statement)
//   ALLOCBENCH_EXPECT_ALLOCS(statement, allocs, bytes)     exactly that many, of exactly
//   ALLOCBENCH_ASSERT_ALLOCS(statement, allocs, bytes)     that many requested bytes
//   ALLOCBENCH_EXPECT_ALLOCS_LE(statement, allocs, bytes)  a budget: at most both
//   ALLOCBENCH_ASSERT_ALLOCS_LE(statement, allocs, bytes)
//   ALLOCBENCH_EXPECT_NO_LEAK(statement)               what it allocates, it frees (net 0 B)
//   ALLOCBENCH_ASSERT_NO_LEAK(statement)
//
// The NO_ALLOC and NO_LEAK forms take the statement as their whole argument list, so it may
// contain unparenthesised commas.
#ifndef ALLOCBENCH_TESTING_GTEST_H_
#define ALLOCBENCH_TESTING_GTEST_H_

#include <gtest/gtest.h>

#include "allocbench/testing.h"

#define ALLOCBENCH_GTEST_CHECK_(macro, expectation, text, fail, ...)       \
  GTEST_AMBIGUOUS_ELSE_BLOCKER_                                            \
  if (const ::allocbench::testing::internal::Verdict allocbench_verdict_ = \
          ::allocbench::testing::internal::Check(expectation, macro, text, \
                                                 [&]() { __VA_ARGS__; }))  \
    ;                                                                      \
  else if (allocbench_verdict_.skipped())                                  \
    GTEST_SKIP() << allocbench_verdict_.message();                         \
  else                                                                     \
    fail(allocbench_verdict_.message().c_str())

#define ALLOCBENCH_GTEST_EXPECTATION_(kind, allocs, bytes)                      \
  ::allocbench::testing::internal::Expectation {                                \
    ::allocbench::testing::internal::Kind::kind, static_cast<uint64_t>(allocs), \
        static_cast<uint64_t>(bytes)                                            \
  }

#define ALLOCBENCH_EXPECT_NO_ALLOC(...)                                                \
  ALLOCBENCH_GTEST_CHECK_("ALLOCBENCH_EXPECT_NO_ALLOC",                                \
                          ALLOCBENCH_GTEST_EXPECTATION_(kNoAlloc, 0, 0), #__VA_ARGS__, \
                          GTEST_NONFATAL_FAILURE_, __VA_ARGS__)
#define ALLOCBENCH_ASSERT_NO_ALLOC(...)                                                \
  ALLOCBENCH_GTEST_CHECK_("ALLOCBENCH_ASSERT_NO_ALLOC",                                \
                          ALLOCBENCH_GTEST_EXPECTATION_(kNoAlloc, 0, 0), #__VA_ARGS__, \
                          GTEST_FATAL_FAILURE_, __VA_ARGS__)
#define ALLOCBENCH_EXPECT_ALLOCS(statement, allocs, bytes)                                    \
  ALLOCBENCH_GTEST_CHECK_("ALLOCBENCH_EXPECT_ALLOCS",                                         \
                          ALLOCBENCH_GTEST_EXPECTATION_(kExactly, allocs, bytes), #statement, \
                          GTEST_NONFATAL_FAILURE_, statement)
#define ALLOCBENCH_ASSERT_ALLOCS(statement, allocs, bytes)                                    \
  ALLOCBENCH_GTEST_CHECK_("ALLOCBENCH_ASSERT_ALLOCS",                                         \
                          ALLOCBENCH_GTEST_EXPECTATION_(kExactly, allocs, bytes), #statement, \
                          GTEST_FATAL_FAILURE_, statement)
#define ALLOCBENCH_EXPECT_ALLOCS_LE(statement, allocs, bytes)                                \
  ALLOCBENCH_GTEST_CHECK_("ALLOCBENCH_EXPECT_ALLOCS_LE",                                     \
                          ALLOCBENCH_GTEST_EXPECTATION_(kAtMost, allocs, bytes), #statement, \
                          GTEST_NONFATAL_FAILURE_, statement)
#define ALLOCBENCH_ASSERT_ALLOCS_LE(statement, allocs, bytes)                                \
  ALLOCBENCH_GTEST_CHECK_("ALLOCBENCH_ASSERT_ALLOCS_LE",                                     \
                          ALLOCBENCH_GTEST_EXPECTATION_(kAtMost, allocs, bytes), #statement, \
                          GTEST_FATAL_FAILURE_, statement)
#define ALLOCBENCH_EXPECT_NO_LEAK(...)                                                \
  ALLOCBENCH_GTEST_CHECK_("ALLOCBENCH_EXPECT_NO_LEAK",                                \
                          ALLOCBENCH_GTEST_EXPECTATION_(kNoLeak, 0, 0), #__VA_ARGS__, \
                          GTEST_NONFATAL_FAILURE_, __VA_ARGS__)
#define ALLOCBENCH_ASSERT_NO_LEAK(...)                                                \
  ALLOCBENCH_GTEST_CHECK_("ALLOCBENCH_ASSERT_NO_LEAK",                                \
                          ALLOCBENCH_GTEST_EXPECTATION_(kNoLeak, 0, 0), #__VA_ARGS__, \
                          GTEST_FATAL_FAILURE_, __VA_ARGS__)

#endif  // ALLOCBENCH_TESTING_GTEST_H_
