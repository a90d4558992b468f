// allocbench::testing's checks for Catch2 (v2's single header, as Debian 12 ships it, and v3):
//
//   #include <allocbench/testing_catch2.h>
//   TEST_CASE("precomputed names do not allocate") {
//     ALLOCBENCH_CHECK_NO_ALLOC(schema.GetOperationName(kHttp));
//   }
//
// CHECK_ forms go on after a failure, REQUIRE_ forms end the test case, as Catch2's own do.
// Each runs its statement once on the calling thread, counted (see <allocbench/testing.h>); a
// pass is one passed assertion, a failure's message lists where the allocations it did not
// allow were made: size, function, file:line (with debug info), in the order made.
//
// Where counting is impossible (a sanitizer owns malloc): Catch2 v3.3 and later SKIP() the test
// case with the reason. Catch2 v2 has no skip: there the check reports a WARN with the reason
// (printed by the console reporter, passing or not), counts no assertion, and the test case
// goes on; it can then only pass on its other assertions, never on this one.
//
//   ALLOCBENCH_CHECK_NO_ALLOC(statement)               ALLOCBENCH_REQUIRE_NO_ALLOC(statement)
//   ALLOCBENCH_CHECK_ALLOCS(statement, allocs, bytes)  ALLOCBENCH_REQUIRE_ALLOCS(...)
//   ALLOCBENCH_CHECK_ALLOCS_LE(statement, allocs, bytes)  ALLOCBENCH_REQUIRE_ALLOCS_LE(...)
//   ALLOCBENCH_CHECK_NO_LEAK(statement)                ALLOCBENCH_REQUIRE_NO_LEAK(statement)
#ifndef ALLOCBENCH_TESTING_CATCH2_H_
#define ALLOCBENCH_TESTING_CATCH2_H_

#if !defined(CATCH_VERSION_MAJOR) && !defined(CATCH_TEST_MACROS_HPP_INCLUDED)
#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_test_macros.hpp>
#else
#include <catch2/catch.hpp>
#endif
#endif

#include "allocbench/testing.h"

#ifdef CATCH_CONFIG_PREFIX_ALL
#define ALLOCBENCH_CATCH_PASS_(text) CATCH_SUCCEED(text)
#define ALLOCBENCH_CATCH_FAIL_CHECK_(message) CATCH_FAIL_CHECK(message)
#define ALLOCBENCH_CATCH_FAIL_REQUIRE_(message) CATCH_FAIL(message)
#define ALLOCBENCH_CATCH_WARN_(message) CATCH_WARN(message)
#ifdef CATCH_SKIP
#define ALLOCBENCH_CATCH_SKIP_(message) CATCH_SKIP(message)
#endif
#else
#define ALLOCBENCH_CATCH_PASS_(text) SUCCEED(text)
#define ALLOCBENCH_CATCH_FAIL_CHECK_(message) FAIL_CHECK(message)
#define ALLOCBENCH_CATCH_FAIL_REQUIRE_(message) FAIL(message)
#define ALLOCBENCH_CATCH_WARN_(message) WARN(message)
#ifdef SKIP
#define ALLOCBENCH_CATCH_SKIP_(message) SKIP(message)
#endif
#endif
#ifndef ALLOCBENCH_CATCH_SKIP_
#define ALLOCBENCH_CATCH_SKIP_(message) ALLOCBENCH_CATCH_WARN_(message)
#endif

#define ALLOCBENCH_CATCH_CHECK_(macro, kind, allocs, bytes, text, fail, ...)                \
  do {                                                                                      \
    const ::allocbench::testing::internal::Verdict allocbench_verdict_ =                    \
        ::allocbench::testing::internal::Check(                                             \
            ::allocbench::testing::internal::Expectation{                                   \
                ::allocbench::testing::internal::Kind::kind, static_cast<uint64_t>(allocs), \
                static_cast<uint64_t>(bytes)},                                              \
            macro, text, [&]() { __VA_ARGS__; });                                           \
    if (allocbench_verdict_) {                                                              \
      ALLOCBENCH_CATCH_PASS_(macro "(" text ")");                                           \
    } else if (allocbench_verdict_.skipped()) {                                             \
      ALLOCBENCH_CATCH_SKIP_(allocbench_verdict_.message());                                \
    } else {                                                                                \
      fail(allocbench_verdict_.message());                                                  \
    }                                                                                       \
  } while (false)

#define ALLOCBENCH_CHECK_NO_ALLOC(...)                                               \
  ALLOCBENCH_CATCH_CHECK_("ALLOCBENCH_CHECK_NO_ALLOC", kNoAlloc, 0, 0, #__VA_ARGS__, \
                          ALLOCBENCH_CATCH_FAIL_CHECK_, __VA_ARGS__)
#define ALLOCBENCH_REQUIRE_NO_ALLOC(...)                                               \
  ALLOCBENCH_CATCH_CHECK_("ALLOCBENCH_REQUIRE_NO_ALLOC", kNoAlloc, 0, 0, #__VA_ARGS__, \
                          ALLOCBENCH_CATCH_FAIL_REQUIRE_, __VA_ARGS__)
#define ALLOCBENCH_CHECK_ALLOCS(statement, allocs, bytes)                                 \
  ALLOCBENCH_CATCH_CHECK_("ALLOCBENCH_CHECK_ALLOCS", kExactly, allocs, bytes, #statement, \
                          ALLOCBENCH_CATCH_FAIL_CHECK_, statement)
#define ALLOCBENCH_REQUIRE_ALLOCS(statement, allocs, bytes)                                 \
  ALLOCBENCH_CATCH_CHECK_("ALLOCBENCH_REQUIRE_ALLOCS", kExactly, allocs, bytes, #statement, \
                          ALLOCBENCH_CATCH_FAIL_REQUIRE_, statement)
#define ALLOCBENCH_CHECK_ALLOCS_LE(statement, allocs, bytes)                                \
  ALLOCBENCH_CATCH_CHECK_("ALLOCBENCH_CHECK_ALLOCS_LE", kAtMost, allocs, bytes, #statement, \
                          ALLOCBENCH_CATCH_FAIL_CHECK_, statement)
#define ALLOCBENCH_REQUIRE_ALLOCS_LE(statement, allocs, bytes)                                \
  ALLOCBENCH_CATCH_CHECK_("ALLOCBENCH_REQUIRE_ALLOCS_LE", kAtMost, allocs, bytes, #statement, \
                          ALLOCBENCH_CATCH_FAIL_REQUIRE_, statement)
#define ALLOCBENCH_CHECK_NO_LEAK(...)                                              \
  ALLOCBENCH_CATCH_CHECK_("ALLOCBENCH_CHECK_NO_LEAK", kNoLeak, 0, 0, #__VA_ARGS__, \
                          ALLOCBENCH_CATCH_FAIL_CHECK_, __VA_ARGS__)
#define ALLOCBENCH_REQUIRE_NO_LEAK(...)                                              \
  ALLOCBENCH_CATCH_CHECK_("ALLOCBENCH_REQUIRE_NO_LEAK", kNoLeak, 0, 0, #__VA_ARGS__, \
                          ALLOCBENCH_CATCH_FAIL_REQUIRE_, __VA_ARGS__)

#endif  // ALLOCBENCH_TESTING_CATCH2_H_
