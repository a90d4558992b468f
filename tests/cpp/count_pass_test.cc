// The count pass's bookkeeping (segments, windows, threads, pause, errors) with simulated
// allocations: no interposition, so these run under ASan+UBSan and TSan too.
#include "count_pass.h"

#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <thread>

namespace allocbench {
namespace {

// What an interposed malloc of `bytes` would record.
void SimulatedAlloc(size_t bytes) {
  if (counting::Active()) counting::RecordAlloc(bytes, bytes);
}
void SimulatedFree(size_t bytes) {
  if (counting::Active()) counting::RecordFree(bytes);
}

Instance Make(Function f, int threads = 1, std::vector<int64_t> args = {}) {
  Instance inst;
  inst.name = inst.scenario = "test";
  inst.function = f;
  inst.threads = threads;
  inst.arg_values = std::move(args);
  return inst;
}

class CountPass : public ::testing::Test {
 protected:
  void SetUp() override { counting::SetMode(counting::Mode::kIgnored); }
};

TEST_F(CountPass, OnlyTheLoopIsCounted) {
  const auto body = [](State& state) {
    SimulatedAlloc(1000);  // setup
    for (auto _ : state) {
      for (int i = 0; i < 3; ++i) SimulatedAlloc(32);
      for (int i = 0; i < 3; ++i) SimulatedFree(32);
    }
    SimulatedAlloc(1000);  // teardown
  };
  const CountOutcome out = RunCountPass(Make(body), {});
  ASSERT_EQ(out.error, "");
  EXPECT_EQ(out.metrics.bytes_per_op, 96.0);
  EXPECT_EQ(out.metrics.allocs_per_op, 3.0);
  EXPECT_EQ(out.metrics.frees_per_op, 3.0);
  EXPECT_EQ(out.metrics.first_op_bytes, 96.0);
  EXPECT_EQ(out.metrics.peak_live_bytes, 96);
  EXPECT_TRUE(out.metrics.steady);
}

TEST_F(CountPass, PausedRegionsAreNotCounted) {
  const auto body = [](State& state) {
    for (auto _ : state) {
      state.PauseTiming();
      SimulatedAlloc(500);
      state.ResumeTiming();
      SimulatedAlloc(8);
    }
  };
  const CountOutcome out = RunCountPass(Make(body), {});
  ASSERT_EQ(out.error, "");
  EXPECT_EQ(out.metrics.bytes_per_op, 8.0);
}

TEST_F(CountPass, ColdFirstOpIsReportedApart) {
  const auto body = [](State& state) {
    bool cold = true;
    for (auto _ : state) {
      if (cold) SimulatedAlloc(4096);  // a lazily built cache
      cold = false;
      SimulatedAlloc(16);
    }
  };
  const CountOutcome out = RunCountPass(Make(body), {});
  EXPECT_EQ(out.metrics.first_op_bytes, 4096.0 + 16.0);
  EXPECT_EQ(out.metrics.first_op_allocs, 2.0);
  EXPECT_EQ(out.metrics.bytes_per_op, 16.0);
}

TEST_F(CountPass, EightThreadsArePerOpPerThread) {
  const auto body = [](State& state) {
    for (auto _ : state) SimulatedAlloc(static_cast<size_t>(state.thread_index() + 1));
  };
  const CountOutcome out = RunCountPass(Make(body, 8), {10, 100});
  ASSERT_EQ(out.error, "");
  // Thread i allocates i+1 bytes per op: (1 + ... + 8) / 8 = 4.5 B per op per thread.
  EXPECT_EQ(out.metrics.bytes_per_op, 4.5);
  EXPECT_EQ(out.metrics.allocs_per_op, 1.0);
  EXPECT_EQ(out.metrics.windows[0].allocs, 800u);
  // The cold op is per thread too: each thread's first op, (1 + ... + 8) / 8 B in 8 / 8 allocs.
  EXPECT_EQ(out.metrics.first_op_bytes, 4.5);
  EXPECT_EQ(out.metrics.first_op_allocs, 1.0);
}

TEST_F(CountPass, WindowsThatDifferWithoutGrowthAreNondeterministic) {
  const auto body = [](State& state) {
    int64_t op = 0;
    for (auto _ : state) {
      // One extra allocation in the second window only, freed at once.
      if (++op == 150) {
        SimulatedAlloc(64);
        SimulatedFree(64);
      }
    }
  };
  const CountOutcome out = RunCountPass(Make(body), {10, 100});
  ASSERT_EQ(out.error, "");
  EXPECT_FALSE(out.metrics.steady);
  EXPECT_EQ(out.metrics.steady_reason.rfind("nondeterministic:", 0), 0u)
      << out.metrics.steady_reason;
}

// Live memory that grows during the warm-up only (a cache filled by the first ops) is not the
// windows' growth: windows that then differ are nondeterministic, not amortized growth.
TEST_F(CountPass, GrowthDuringTheWarmUpOnlyIsNotWindowGrowth) {
  const auto body = [](State& state) {
    int64_t op = 0;
    for (auto _ : state) {
      ++op;
      if (op <= 10) SimulatedAlloc(64);  // the whole warm-up (1 cold op + 9), kept
      if (op == 150) {                   // window 2 (ops 111..210), freed at once
        SimulatedAlloc(32);
        SimulatedFree(32);
      }
    }
  };
  const CountOutcome out = RunCountPass(Make(body), {10, 100});
  ASSERT_EQ(out.error, "");
  EXPECT_EQ(out.metrics.first_op_bytes, 64.0);
  EXPECT_EQ(out.metrics.windows[0].allocs, 0u);
  EXPECT_EQ(out.metrics.windows[1].allocs, 1u);
  EXPECT_FALSE(out.metrics.steady);
  EXPECT_EQ(out.metrics.steady_reason,
            "nondeterministic: the two windows differ (window 1: 0 B in 0 allocs, window 2: 32 B "
            "in 1 allocs) with no net growth of live memory");
}

// The same shape with growth inside the windows: amortized growth, by exactly what was kept.
TEST_F(CountPass, GrowthInsideTheWindowsIsAmortizedGrowth) {
  const auto body = [](State& state) {
    int64_t op = 0;
    for (auto _ : state) {
      if (++op == 150) SimulatedAlloc(48);  // window 2, kept
    }
  };
  const CountOutcome out = RunCountPass(Make(body), {10, 100});
  ASSERT_EQ(out.error, "");
  EXPECT_FALSE(out.metrics.steady);
  EXPECT_EQ(out.metrics.steady_reason.rfind("amortized growth: live memory grew by 48 B", 0), 0u)
      << out.metrics.steady_reason;
}

TEST_F(CountPass, SkipWithErrorEndsEveryThread) {
  const auto body = [](State& state) {
    for (auto _ : state) {
      if (state.thread_index() == 2) {
        state.SkipWithError("thread 2 gave up");
        break;
      }
    }
  };
  const CountOutcome out = RunCountPass(Make(body, 4), {});
  EXPECT_EQ(out.error, "thread 2 gave up");
}

TEST_F(CountPass, SkipBeforeTheLoopRunsNoIteration) {
  static std::atomic<int> iterations{0};
  const auto body = [](State& state) {
    state.SkipWithError("not configured");
    for (auto _ : state) iterations++;
  };
  const CountOutcome out = RunCountPass(Make(body, 2), {});
  EXPECT_EQ(out.error, "not configured");
  EXPECT_EQ(iterations.load(), 0);
}

TEST_F(CountPass, ABodyWithoutALoopIsAnError) {
  const auto body = [](State&) {};
  EXPECT_EQ(RunCountPass(Make(body, 3), {}).error,
            "the scenario body has no `for (auto _ : state)` loop");
}

TEST_F(CountPass, LeavingTheLoopEarlyIsAnError) {
  const auto body = [](State& state) {
    int n = 0;
    for (auto _ : state) {
      if (++n == 10) break;
    }
  };
  EXPECT_NE(RunCountPass(Make(body), {}).error.find("left its measured loop early"),
            std::string::npos);
}

// Misuse of the scenario API is the scenario's recorded error, never a crash of the harness.
TEST_F(CountPass, MisuseIsAnErrorNotACrash) {
  const std::pair<Function, std::string> cases[] = {
      {[](State& state) {
         for (auto _ : state) SimulatedAlloc(8);
         for (auto _ : state) SimulatedAlloc(8);
       },
       "the scenario body runs `for (auto _ : state)` more than once; give it exactly one "
       "measured loop (split the work into two scenarios)"},
      {[](State& state) {
         for (auto _ : state) {
           for (auto _ : state) SimulatedAlloc(8);  // nested
         }
       },
       "the scenario body runs `for (auto _ : state)` more than once; give it exactly one "
       "measured loop (split the work into two scenarios)"},
      {[](State& state) {
         state.SkipWithError(nullptr);
         for (auto _ : state) {
         }
       },
       "SkipWithError() with no message"},
      {[](State& state) {
         for (auto _ : state) {
         }
         state.SetCounter(nullptr, 1);
       },
       "SetCounter() with a NULL name"},
      {[](State& state) {
         for (auto _ : state) {
         }
         state.SetCounter("ratio", std::numeric_limits<double>::quiet_NaN());
       },
       "SetCounter(\"ratio\", nan): the value is not a finite number"},
      {[](State& state) {
         for (auto _ : state) {
         }
         state.SetCounter("a\nb", 1);
       },
       "SetCounter(\"a\\x0ab\", ...): the name has a control character"},
      {[](State& state) {
         state.ResumeTiming();
         for (auto _ : state) {
         }
       },
       "ResumeTiming() outside the measured loop"},
      {[](State& state) {
         for (auto _ : state) {
         }
         state.PauseTiming();
       },
       "PauseTiming() outside the measured loop"},
  };
  for (const auto& [body, error] : cases) {
    for (int threads : {1, 3}) {
      EXPECT_EQ(RunCountPass(Make(body, threads), {10, 10}).error, error) << threads;
    }
  }
}

TEST_F(CountPass, RangeOutOfBoundsIsAnErrorNotACrash) {
  const auto body = [](State& state) {
    const int64_t n = state.range(1);
    for (auto _ : state) allocbench::DoNotOptimize(n);
  };
  EXPECT_NE(RunCountPass(Make(body, 1, {5}), {}).error.find("state.range(i)"), std::string::npos);
}

TEST_F(CountPass, OtherThreadsAreBackgroundOnlyInsideTheWindows) {
  const auto body = [](State& state) {
    std::atomic<int> phase{0};
    std::thread other([&] {
      counting::SetMode(counting::Mode::kUnassigned);
      while (phase.load() == 0) std::this_thread::yield();
      SimulatedAlloc(10);  // inside the windows: background
      phase = 2;
    });
    int64_t op = 0;
    for (auto _ : state) {
      if (++op == 1500) {  // in window 1 (ops 1000..1999 with the defaults)
        phase = 1;
        while (phase.load() != 2) std::this_thread::yield();
      }
    }
    other.join();
  };
  const CountOutcome out = RunCountPass(Make(body), {});
  ASSERT_EQ(out.error, "");
  EXPECT_EQ(out.metrics.bytes_per_op, 0.0);
  EXPECT_EQ(out.metrics.background_bytes_per_op, 10.0 / 2000.0);
}

// The other side of the window's start: an allocation of another thread during the warm-up is
// not background (the background window opens with window 1).
TEST_F(CountPass, OtherThreadsDuringTheWarmUpAreNotBackground) {
  const auto body = [](State& state) {
    std::atomic<int> phase{0};
    std::thread other([&] {
      counting::SetMode(counting::Mode::kUnassigned);
      while (phase.load() == 0) std::this_thread::yield();
      SimulatedAlloc(10);
      phase = 2;
    });
    int64_t op = 0;
    for (auto _ : state) {
      if (++op == 500) {  // in the warm-up (ops 1..1000 with the defaults)
        phase = 1;
        while (phase.load() != 2) std::this_thread::yield();
      }
    }
    other.join();
  };
  const CountOutcome out = RunCountPass(Make(body), {});
  ASSERT_EQ(out.error, "");
  EXPECT_EQ(out.metrics.background_bytes_per_op, 0.0);
}

TEST_F(CountPass, AThreadTheScenarioStartsCountsOnlyWhenAdopted) {
  const auto body = [](State& state) {
    for (auto _ : state) {
      std::thread adopted([&state] {
        state.CountThisThread();
        SimulatedAlloc(100);
      });
      adopted.join();
      std::thread stranger([] { SimulatedAlloc(7); });  // background
      stranger.join();
    }
  };
  const CountOutcome out = RunCountPass(Make(body), {2, 20});
  ASSERT_EQ(out.error, "");
  EXPECT_EQ(out.metrics.bytes_per_op, 100.0);
  EXPECT_EQ(out.metrics.background_bytes_per_op, 7.0);
}

TEST_F(CountPass, AnAdoptedThreadFollowsPause) {
  const auto body = [](State& state) {
    for (auto _ : state) {
      state.PauseTiming();
      std::thread adopted([&state] {
        state.CountThisThread();
        SimulatedAlloc(100);
      });
      adopted.join();
      state.ResumeTiming();
    }
  };
  EXPECT_EQ(RunCountPass(Make(body), {2, 20}).metrics.bytes_per_op, 0.0);
}

TEST_F(CountPass, CountersAndFootprintAreReported) {
  const auto body = [](State& state) {
    const Footprint f = state.ReadFootprint();
    state.SetCounter("rss_seen", f.rss_bytes > 0 ? 1 : 0);
    state.SetCounter("floor_bytes", 4096, "B");
    state.SetCounter("floor_bytes", 8192, "B");  // the last value wins
    for (auto _ : state) {
    }
  };
  const CountOutcome out = RunCountPass(Make(body), {});
  ASSERT_EQ(out.error, "");
  ASSERT_EQ(out.counters.size(), 2u);
  EXPECT_EQ(out.counters[0].name, "rss_seen");
  EXPECT_EQ(out.counters[0].value, 1.0);
  EXPECT_EQ(out.counters[1].name, "floor_bytes");
  EXPECT_EQ(out.counters[1].value, 8192.0);
  EXPECT_EQ(out.counters[1].unit, "B");
}

// The scenario's own CountOps win over the options, unless forced (--force-count-ops:
// allocbench profile needs windows of its own length).
TEST_F(CountPass, TheScenariosOwnCountOpsWinUnlessForced) {
  static std::atomic<int64_t> ops{0};
  const auto body = [](State& state) {
    for (auto _ : state) ops++;
  };
  Instance inst = Make(body);
  inst.count_warmup = 2;
  inst.count_ops = 3;
  for (const bool force : {false, true}) {
    ops = 0;
    const CountOutcome out = RunCountPass(inst, {4, 5, force});
    const int64_t warmup = force ? 4 : 2;
    const int64_t window = force ? 5 : 3;
    EXPECT_EQ(out.metrics.warmup_ops, warmup) << force;
    EXPECT_EQ(out.metrics.window_ops, window) << force;
    EXPECT_EQ(ops.load(), warmup + 2 * window) << force;
  }
}

}  // namespace
}  // namespace allocbench
