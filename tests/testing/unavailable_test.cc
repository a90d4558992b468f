// Where allocbench::testing cannot count, it says so: in a sanitizer build (the sanitizer owns
// malloc; this binary links allocbench::testing there) and in a binary without the hooks (the
// release build's copy of this test links only the checks and the counters). Never a count
// of zero that was not measured, never a silent pass.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <string>

#include "allocbench/testing_gtest.h"
#include "ground_truth.h"

namespace {

namespace at = allocbench::testing;

std::string ExpectedReason() {
#if defined(__SANITIZE_ADDRESS__)
  return "AddressSanitizer owns malloc and operator new in this process";
#elif defined(__SANITIZE_THREAD__)
  return "ThreadSanitizer owns malloc and operator new in this process";
#else
  return "this executable has no allocbench hooks";
#endif
}

TEST(Unavailable, SaysWhy) {
  EXPECT_FALSE(at::Available());
  EXPECT_EQ(std::string(at::UnavailableReason()).rfind(ExpectedReason(), 0), 0u)
      << at::UnavailableReason();
}

TEST(Unavailable, CountThrowsRatherThanReturnZero) {
  bool ran = false;
  try {
    at::Count([&] { ran = true; });
    ADD_FAILURE() << "Count returned";
  } catch (const at::Unavailable& e) {
    EXPECT_EQ(std::string(e.what()),
              std::string("allocbench::testing: ") + at::UnavailableReason());
  }
  EXPECT_FALSE(ran);
  EXPECT_THROW(at::AllocsPerRun(3, [] {}), at::Unavailable);
  EXPECT_THROW(at::BytesPerRun(3, [] {}), at::Unavailable);
}

// Each check runs its statement (uncounted) and skips the test with the reason.
TEST(Unavailable, EveryCheckSkipsWithTheReason) {
  int ran = 0;
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    [&] { ALLOCBENCH_EXPECT_NO_ALLOC(++ran; ground_truth::FortyEightFreed()); }();
    [&] { ALLOCBENCH_ASSERT_NO_ALLOC(++ran); }();
    [&] { ALLOCBENCH_EXPECT_ALLOCS(++ran, 1, 1); }();
    [&] { ALLOCBENCH_ASSERT_ALLOCS(++ran, 1, 1); }();
    [&] { ALLOCBENCH_EXPECT_ALLOCS_LE(++ran, 0, 0); }();
    [&] { ALLOCBENCH_ASSERT_ALLOCS_LE(++ran, 0, 0); }();
    [&] { ALLOCBENCH_EXPECT_NO_LEAK(++ran); }();
    [&] { ALLOCBENCH_ASSERT_NO_LEAK(++ran); }();
  }
  EXPECT_EQ(ran, 8);
  ASSERT_EQ(results.size(), 8);
  const char* macros[] = {"ALLOCBENCH_EXPECT_NO_ALLOC",  "ALLOCBENCH_ASSERT_NO_ALLOC",
                          "ALLOCBENCH_EXPECT_ALLOCS",    "ALLOCBENCH_ASSERT_ALLOCS",
                          "ALLOCBENCH_EXPECT_ALLOCS_LE", "ALLOCBENCH_ASSERT_ALLOCS_LE",
                          "ALLOCBENCH_EXPECT_NO_LEAK",   "ALLOCBENCH_ASSERT_NO_LEAK"};
  for (int i = 0; i < results.size(); ++i) {
    const ::testing::TestPartResult& result = results.GetTestPartResult(i);
    EXPECT_EQ(result.type(), ::testing::TestPartResult::kSkip);
    EXPECT_EQ(std::string(result.message()),
              std::string(macros[i]) + " skipped: " + at::UnavailableReason());
  }
}

}  // namespace
