// Sixteen threads allocating through the hooks while a seventeenth keeps reading: the totals
// must be exact. Built once per backend.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <thread>
#include <vector>

#include "allocbench/counting.h"
#include "counting_test_util.h"

namespace allocbench::counting::testing {
namespace {

constexpr uint64_t kThreads = 16;
constexpr uint64_t kIterations = 20000;
constexpr uint64_t kNewBytes = 64;
constexpr uint64_t kMallocBytes = 48;

struct Payload {
  char bytes[kNewBytes];
};

void Churn() {
  SetMode(Mode::kCounting);
  for (uint64_t i = 0; i < kIterations; ++i) {
    auto* object = new Payload;
    Escape(object);
    delete object;
    void* block = malloc(kMallocBytes);
    Escape(block);
    free(block);
  }
  SetMode(Mode::kPaused);  // the thread's own exit (std::thread state, TLS) is not counted
}

class ConcurrencyTest : public ::testing::TestWithParam<Tracking> {
 protected:
  ScopedTracking tracking_{GetParam()};
};
INSTANTIATE_TEST_SUITE_P(Tracking, ConcurrencyTest,
                         ::testing::Values(Tracking::kBasic, Tracking::kFull), TrackingName);

TEST_P(ConcurrencyTest, SixteenThreadsCountExactlyWhileAReaderReads) {
  std::atomic<bool> done{false};
  std::atomic<uint64_t> reads{0};
  std::atomic<bool> went_backwards{false};
  std::thread reader([&] {
    SetMode(Mode::kIgnored);
    uint64_t last_allocs = 0;
    while (!done.load(std::memory_order_relaxed)) {
      const Snapshot s = Read();
      if (s.scenario.allocs < last_allocs) went_backwards = true;
      last_allocs = s.scenario.allocs;
      reads.fetch_add(1, std::memory_order_relaxed);
    }
  });

  const Snapshot before = Read();
  std::vector<std::thread> workers;
  workers.reserve(kThreads);
  for (uint64_t i = 0; i < kThreads; ++i) workers.emplace_back(Churn);
  for (std::thread& worker : workers) worker.join();
  const Delta d = Minus(Read(), before);
  done = true;
  reader.join();

  const uint64_t allocations = kThreads * kIterations * 2;
  EXPECT_EQ(d.scenario.allocs, allocations);
  EXPECT_EQ(d.scenario.frees, allocations);
  EXPECT_EQ(d.scenario.requested_bytes, kThreads * kIterations * (kNewBytes + kMallocBytes));
  if (GetParam() == Tracking::kFull) {
    EXPECT_GE(d.scenario.usable_bytes, d.scenario.requested_bytes);
  } else {
    EXPECT_EQ(d.scenario.usable_bytes, 0u);
  }
  EXPECT_EQ(d.background.allocs + d.background.frees, 0u);
  EXPECT_FALSE(went_backwards);
  EXPECT_GT(reads.load(), 0u);
}

}  // namespace
}  // namespace allocbench::counting::testing
