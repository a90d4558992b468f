// allocbench::testing's GoogleTest macros: what passes, what fails, and the exact message of a
// failure, against ground_truth.h. Built with -g, so that the messages carry file:line; the lines
// expected are found in the sources by their `line:` markers, never taken from a run.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "allocbench/testing_gtest.h"
#include "ground_truth.h"

namespace {

namespace gt = ground_truth;
using ::testing::TestPartResult;

// The line of ground_truth.cc that carries `// line:<marker>`.
std::string LineOf(const std::string& marker) {
  std::ifstream source(GROUND_TRUTH_SOURCE);
  std::string text;
  for (int line = 1; std::getline(source, text); ++line) {
    if (text.find("// line:" + marker) != std::string::npos) return std::to_string(line);
  }
  ADD_FAILURE() << "no marker " << marker << " in " << GROUND_TRUTH_SOURCE;
  return "?";
}

// The failures `body` reports, intercepted (they do not fail this test).
template <typename Body>
std::vector<TestPartResult> Failures(Body body) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    body();
  }
  std::vector<TestPartResult> failures;
  for (int i = 0; i < results.size(); ++i) failures.push_back(results.GetTestPartResult(i));
  return failures;
}

std::string Message(const std::vector<TestPartResult>& failures) {
  return failures.size() == 1 ? failures[0].message() : "(not exactly one failure)";
}

TEST(GtestChecks, PassingChecksReportNothing) {
  int x = 0;
  const std::vector<TestPartResult> failures = Failures([&] {
    ALLOCBENCH_EXPECT_NO_ALLOC(x += 1);
    ALLOCBENCH_ASSERT_NO_ALLOC(x += 1);
    ALLOCBENCH_EXPECT_ALLOCS(gt::FiveAllocations(), 5, 206);
    ALLOCBENCH_ASSERT_ALLOCS(gt::FiveAllocations(), 5, 206);
    ALLOCBENCH_EXPECT_ALLOCS_LE(gt::FiveAllocations(), 5, 206);  // the budget, exactly
    ALLOCBENCH_EXPECT_ALLOCS_LE(gt::FiveAllocations(), 6, 1000);
    ALLOCBENCH_ASSERT_ALLOCS_LE(gt::FiveAllocations(), 5, 206);
    ALLOCBENCH_EXPECT_NO_LEAK(gt::FiveAllocations());
    ALLOCBENCH_ASSERT_NO_LEAK(gt::FortyEightFreed());
  });
  EXPECT_EQ(failures.size(), 0u) << (failures.empty() ? "" : failures[0].message());
  EXPECT_EQ(x, 2);  // each statement ran once
}

TEST(GtestChecks, NoAllocNamesTheFunctionAndLineThatAllocated) {
  const int line = __LINE__ + 1;
  const auto failures = Failures([] { ALLOCBENCH_EXPECT_NO_ALLOC(gt::FortyEightFreed()); });
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].type(), TestPartResult::kNonFatalFailure);
  EXPECT_EQ(failures[0].line_number(), line);
  const std::string expected =
      "ALLOCBENCH_EXPECT_NO_ALLOC(gt::FortyEightFreed())\n"
      "  Expected: no allocation\n"
      "    Actual: 1 allocation, 48 B\n"
      "  1 unexpected allocation of 48 B in ground_truth::FortyEightFreed() (ground_truth.cc:" +
      LineOf("forty-eight") +
      ")\n"
      "      called from ";
  EXPECT_EQ(Message(failures).substr(0, expected.size()), expected);
  // The caller is the statement, at the line of the check, and nothing follows it.
  const std::string called_from = "gtest_checks_test.cc:" + std::to_string(line);
  EXPECT_EQ(Message(failures).find('\n', expected.size()), std::string::npos) << Message(failures);
  EXPECT_NE(Message(failures).find(called_from, expected.size()), std::string::npos)
      << Message(failures);
}

TEST(GtestChecks, AssertNoAllocIsFatalAndReturns) {
  bool went_on = false;
  const auto failures = Failures([&] {
    ALLOCBENCH_ASSERT_NO_ALLOC(gt::FortyEightFreed());
    went_on = true;
  });
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].type(), TestPartResult::kFatalFailure);
  EXPECT_FALSE(went_on);
  EXPECT_EQ(Message(failures).rfind("ALLOCBENCH_ASSERT_NO_ALLOC(gt::FortyEightFreed())\n", 0), 0u);
}

TEST(GtestChecks, ExactCountsListEveryAllocationInTheOrderMade) {
  const auto failures = Failures([] { ALLOCBENCH_EXPECT_ALLOCS(gt::FiveAllocations(), 5, 200); });
  const std::string in = " in ground_truth::FiveAllocations() (ground_truth.cc:";
  std::string expected =
      "ALLOCBENCH_EXPECT_ALLOCS(gt::FiveAllocations())\n"
      "  Expected: exactly 5 allocations, 200 B\n"
      "    Actual: 5 allocations, 206 B\n"
      "  Where, from running it again:\n";
  const char* markers[] = {"five-a", "five-b", "five-c", "five-malloc", "five-strdup"};
  const int sizes[] = {32, 32, 32, 100, 10};
  const std::string message = Message(failures);
  ASSERT_EQ(message.substr(0, expected.size()), expected) << message;
  // Then each allocation on a line of its own, each followed by its "called from" line.
  std::vector<std::string> lines;
  std::istringstream rest(message.substr(expected.size()));
  for (std::string line; std::getline(rest, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 10u) << message;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(lines[2 * i], "  1 allocation of " + std::to_string(sizes[i]) + " B" + in +
                                LineOf(markers[i]) + ")")
        << message;
    EXPECT_EQ(lines[2 * i + 1].rfind("      called from ", 0), 0u) << message;
  }
}

TEST(GtestChecks, TheBudgetFailsOneOverOnEitherAxis) {
  EXPECT_EQ(Failures([] { ALLOCBENCH_EXPECT_ALLOCS_LE(gt::FiveAllocations(), 4, 206); }).size(),
            1u);
  EXPECT_EQ(Failures([] { ALLOCBENCH_EXPECT_ALLOCS_LE(gt::FiveAllocations(), 5, 205); }).size(),
            1u);
  EXPECT_EQ(Failures([] { ALLOCBENCH_EXPECT_ALLOCS(gt::FiveAllocations(), 6, 206); }).size(), 1u);
  EXPECT_EQ(Failures([] { ALLOCBENCH_EXPECT_ALLOCS(gt::FiveAllocations(), 4, 206); }).size(), 1u);
  EXPECT_EQ(Failures([] { ALLOCBENCH_EXPECT_ALLOCS(gt::FiveAllocations(), 5, 207); }).size(), 1u);
  const auto failures =
      Failures([] { ALLOCBENCH_ASSERT_ALLOCS_LE(gt::FiveAllocations(), 4, 1000); });
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].type(), TestPartResult::kFatalFailure);
  EXPECT_EQ(Message(failures).rfind("ALLOCBENCH_ASSERT_ALLOCS_LE(gt::FiveAllocations())\n"
                                    "  Expected: at most 4 allocations, 1000 B\n"
                                    "    Actual: 5 allocations, 206 B\n",
                                    0),
            0u)
      << Message(failures);
}

TEST(GtestChecks, ALeakNamesTheBlockLeftAllocated) {
  void* leaked[2] = {nullptr, nullptr};
  int n = 0;
  const auto failures = Failures([&] {
    ALLOCBENCH_EXPECT_NO_LEAK(gt::FortyEightFreed(); leaked[n++] = gt::LeakTwentyFour());
  });
  ASSERT_EQ(n, 2);  // run twice: counted, then again for the stacks
  for (void* p : leaked) ::operator delete(p);
  const std::string expected =
      "ALLOCBENCH_EXPECT_NO_LEAK(gt::FortyEightFreed(); leaked[n++] = gt::LeakTwentyFour())\n"
      "  Expected: every block it allocates freed by its end\n"
      "    Actual: 24 B left allocated (2 allocations, 72 B, 1 free)\n"
      "  Where, from running it again:\n"
      "  1 block of 24 B left allocated, made in ground_truth::LeakTwentyFour() "
      "(ground_truth.cc:" +
      LineOf("leak") + ")\n      called from ";
  EXPECT_EQ(Message(failures).substr(0, expected.size()), expected) << Message(failures);
  EXPECT_EQ(Message(failures).find("48 B"), std::string::npos) << Message(failures);
}

TEST(GtestChecks, TheListingStopsAtTenLinesAndCountsTheRest) {
  const auto failures = Failures([] { ALLOCBENCH_EXPECT_NO_ALLOC(gt::FifteenSizes()); });
  const std::string message = Message(failures);
  for (int size = 1; size <= 10; ++size) {
    const std::string line =
        "  1 unexpected allocation of " + std::to_string(size) +
        " B in ground_truth::FifteenSizes() (ground_truth.cc:" + LineOf("fifteen") + ")\n";
    EXPECT_NE(message.find(line), std::string::npos) << line << message;
  }
  EXPECT_EQ(message.find("allocation of 11 B"), std::string::npos) << message;
  const std::string tail = "\n  ... and 5 more allocations not listed";
  EXPECT_EQ(message.substr(message.size() - tail.size()), tail) << message;
  EXPECT_NE(message.find("    Actual: 15 allocations, 120 B\n"), std::string::npos) << message;
}

TEST(GtestChecks, ConsecutiveAllocationsFromOnePlaceShareALine) {
  const auto failures = Failures(
      [] { ALLOCBENCH_EXPECT_NO_ALLOC(for (int i = 0; i < 3; ++i) gt::FortyEightFreed()); });
  EXPECT_NE(Message(failures).find("  3 unexpected allocations of 48 B in "
                                   "ground_truth::FortyEightFreed() (ground_truth.cc:" +
                                   LineOf("forty-eight") + ")\n"),
            std::string::npos)
      << Message(failures);
}

// A statement that allocates only the first time (a cache filled once): the second run, the
// one with stacks, allocates nothing, and the message says so rather than list nothing.
TEST(GtestChecks, ASecondRunThatDiffersIsSaid) {
  void* cache = nullptr;
  const auto failures = Failures(
      [&] { ALLOCBENCH_EXPECT_ALLOCS(if (cache == nullptr) cache = gt::LeakTwentyFour(), 0, 0); });
  ::operator delete(cache);
  EXPECT_EQ(Message(failures),
            "ALLOCBENCH_EXPECT_ALLOCS(if (cache == nullptr) cache = gt::LeakTwentyFour())\n"
            "  Expected: exactly 0 allocations, 0 B\n"
            "    Actual: 1 allocation, 24 B\n"
            "  Where, from running it again (which made 0 allocations, 0 B: not the same as the "
            "first run):");
}

// The same statement both times: a leak it makes does not make the runs look different to an
// exact check, which does not judge net bytes.
TEST(GtestChecks, ALeakDoesNotMakeAnExactChecksRunsDiffer) {
  void* leaked[2] = {nullptr, nullptr};
  int n = 0;
  const auto failures =
      Failures([&] { ALLOCBENCH_EXPECT_ALLOCS(leaked[n++] = gt::LeakTwentyFour(), 0, 0); });
  for (void* p : leaked) ::operator delete(p);
  EXPECT_NE(Message(failures).find("  Where, from running it again:\n  1 allocation of 24 B in "
                                   "ground_truth::LeakTwentyFour() (ground_truth.cc:" +
                                   LineOf("leak") + ")"),
            std::string::npos)
      << Message(failures);
}

TEST(GtestChecks, ThePassingCheckCapturesNoStack) {
  // A passing NO_ALLOC runs its statement once; a failing exact check runs it twice.
  int runs = 0;
  Failures([&] { ALLOCBENCH_EXPECT_NO_ALLOC(++runs); });
  EXPECT_EQ(runs, 1);
  runs = 0;
  Failures([&] { ALLOCBENCH_EXPECT_NO_ALLOC(++runs; gt::FortyEightFreed()); });
  EXPECT_EQ(runs, 1);  // its first run kept the stacks
  runs = 0;
  Failures([&] { ALLOCBENCH_EXPECT_ALLOCS(++runs; gt::FortyEightFreed(), 0, 0); });
  EXPECT_EQ(runs, 2);
}

}  // namespace
