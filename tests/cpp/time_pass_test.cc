#include "time_pass.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

namespace allocbench {
namespace {

TEST(TimeSummary, Statistics) {
  TimeMetrics m;
  m.samples_ns = {4, 1, 3, 2};
  Summarize(m, 2);
  EXPECT_EQ(m.median_ns, 2.5);
  EXPECT_EQ(m.mean_ns, 2.5);
  EXPECT_DOUBLE_EQ(m.stddev_ns, std::sqrt(5.0 / 3.0));
  EXPECT_DOUBLE_EQ(m.cv, std::sqrt(5.0 / 3.0) / 2.5);
  EXPECT_EQ(m.min_ns, 1);
  EXPECT_EQ(m.max_ns, 4);
  EXPECT_DOUBLE_EQ(m.ops_per_s, 2 * 1e9 / 2.5);  // two threads
}

Instance Make(Function f, int threads = 1) {
  Instance inst;
  inst.name = inst.scenario = "time_test";
  inst.function = f;
  inst.threads = threads;
  return inst;
}

class TimePass : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { InitializeTimePass("time_pass_test"); }
};

TEST_F(TimePass, EveryRepetitionIsASample) {
  const auto body = [](State& state) {
    int64_t x = 0;
    for (auto _ : state) allocbench::DoNotOptimize(x += 1);
  };
  const TimeOutcome out = RunTimePass(Make(body), {3, 0.001});
  ASSERT_EQ(out.error, "");
  ASSERT_EQ(out.metrics.samples_ns.size(), 3u);
  ASSERT_EQ(out.metrics.iterations.size(), 3u);
  for (double s : out.metrics.samples_ns) EXPECT_GT(s, 0);
  for (int64_t n : out.metrics.iterations) EXPECT_GT(n, 0);
  EXPECT_GT(out.metrics.ops_per_s, 0);
}

TEST_F(TimePass, ThreadsRunTogether) {
  const auto body = [](State& state) {
    int64_t x = state.thread_index();
    for (auto _ : state) allocbench::DoNotOptimize(x += 1);
  };
  const TimeOutcome out = RunTimePass(Make(body, 3), {2, 0.001});
  ASSERT_EQ(out.error, "");
  EXPECT_EQ(out.metrics.samples_ns.size(), 2u);
}

// An op that sleeps 10 ms takes 10 ms of wall time on each of its threads whatever their number,
// so ns/op (per op per thread) is the same with one thread and with two. Sleeping keeps this
// true on a loaded machine (the threads do not compete for a core); a sleep only overshoots, by
// the scheduler's wake-up latency (a millisecond or two under load, well within the bounds),
// so the fastest repetition is the one to compare. Dividing instead of multiplying by the
// threads gives a quarter, not scaling at all a half.
TEST_F(TimePass, NsPerOpIsPerOpPerThreadAndOpsPerSecondCountsEveryThread) {
  const auto body = [](State& state) {
    for (auto _ : state) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  const TimeOutcome one = RunTimePass(Make(body, 1), {5, 0.02});
  const TimeOutcome two = RunTimePass(Make(body, 2), {5, 0.02});
  ASSERT_EQ(one.error, "");
  ASSERT_EQ(two.error, "");
  for (const TimeOutcome* out : {&one, &two}) {
    EXPECT_GE(out->metrics.min_ns, 1e7);  // a sleep lasts at least what it asks for
  }
  EXPECT_GT(two.metrics.min_ns / one.metrics.min_ns, 0.7);
  EXPECT_LT(two.metrics.min_ns / one.metrics.min_ns, 1.4);
  // ops/s counts both threads' ops.
  EXPECT_DOUBLE_EQ(two.metrics.ops_per_s, 2 * 1e9 / two.metrics.median_ns);
}

TEST_F(TimePass, ErrorsAreRecorded) {
  const auto body = [](State& state) {
    state.SkipWithError("no subject");
    for (auto _ : state) {
    }
  };
  EXPECT_EQ(RunTimePass(Make(body), {2, 0.001}).error, "no subject");
}

// Google Benchmark aborts on each of these; the time pass makes them the scenario's error.
TEST_F(TimePass, MisuseIsAnErrorNotAnAbort) {
  const std::pair<Function, std::string> cases[] = {
      {[](State& state) {
         for (auto _ : state) {
         }
         for (auto _ : state) {
         }
       },
       "the scenario body runs `for (auto _ : state)` more than once"},
      {[](State& state) {
         for (auto _ : state) {
           for (auto _ : state) {
           }
         }
       },
       "the scenario body runs `for (auto _ : state)` more than once"},
      {[](State& state) {
         state.SkipWithError(nullptr);
         for (auto _ : state) {
         }
       },
       "SkipWithError() with no message"},
      {[](State& state) {
         state.PauseTiming();
         for (auto _ : state) {
         }
       },
       "PauseTiming() outside the measured loop"},
      {[](State& state) {
         for (auto _ : state) {
         }
         state.ResumeTiming();
       },
       "ResumeTiming() outside the measured loop"},
  };
  for (const auto& [body, error] : cases) {
    for (int threads : {1, 2}) {
      EXPECT_EQ(RunTimePass(Make(body, threads), {1, 0.001}).error, error) << threads;
    }
  }
}

TEST_F(TimePass, ALoopLeftEarlyIsAnErrorNotAnAbort) {
  const auto body = [](State& state) {
    for (auto _ : state) break;
  };
  EXPECT_NE(RunTimePass(Make(body), {1, 0.001}).error.find("left its measured loop early"),
            std::string::npos);
}

}  // namespace
}  // namespace allocbench
