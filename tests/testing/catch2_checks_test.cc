// allocbench::testing's Catch2 checks (Catch2 2.13, Debian 12's single header), against
// ground_truth.h. The cases tagged [!shouldfail] must fail: Catch2 counts them as passed when
// they do, and the run fails when one passes. tests/python/test_testing_catch2.py checks the
// messages this binary prints.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "allocbench/testing_catch2.h"
#include "ground_truth.h"

namespace gt = ground_truth;

TEST_CASE("passing checks") {
  int x = 0;
  ALLOCBENCH_CHECK_NO_ALLOC(x += 1);
  ALLOCBENCH_REQUIRE_NO_ALLOC(x += 1);
  ALLOCBENCH_CHECK_ALLOCS(gt::FiveAllocations(), 5, 206);
  ALLOCBENCH_REQUIRE_ALLOCS(gt::FiveAllocations(), 5, 206);
  ALLOCBENCH_CHECK_ALLOCS_LE(gt::FiveAllocations(), 5, 206);
  ALLOCBENCH_REQUIRE_ALLOCS_LE(gt::FiveAllocations(), 6, 300);
  ALLOCBENCH_CHECK_NO_LEAK(gt::FiveAllocations());
  ALLOCBENCH_REQUIRE_NO_LEAK(gt::FortyEightFreed());
  CHECK(x == 2);
}

TEST_CASE("no alloc fails on 48 B", "[!shouldfail]") {
  ALLOCBENCH_CHECK_NO_ALLOC(gt::FortyEightFreed());
}

TEST_CASE("exact fails one byte off", "[!shouldfail]") {
  ALLOCBENCH_CHECK_ALLOCS(gt::FiveAllocations(), 5, 205);
}

TEST_CASE("the budget fails one allocation over", "[!shouldfail]") {
  ALLOCBENCH_CHECK_ALLOCS_LE(gt::FiveAllocations(), 4, 206);
}

TEST_CASE("a leak fails", "[!shouldfail]") {
  void* leaked[2] = {nullptr, nullptr};
  int n = 0;
  ALLOCBENCH_CHECK_NO_LEAK(leaked[n++] = gt::LeakTwentyFour());
  for (void* p : leaked) ::operator delete(p);
}

TEST_CASE("require ends the test case", "[!shouldfail]") {
  ALLOCBENCH_REQUIRE_NO_ALLOC(gt::FortyEightFreed());
  FAIL("not reached: REQUIRE_NO_ALLOC went on");
}
