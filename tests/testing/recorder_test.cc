// The recorder behind a count (testing/recorder.h), driven directly through its observer with
// made-up blocks: its live-block table against a std::unordered_map model, and its counts when
// threads report at once. No interposition, so it runs under ASan+UBSan and TSan too.
#include "recorder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

using allocbench::testing::internal::Recorder;

// Distinct addresses, never dereferenced: block i is 16 bytes after block i - 1.
char g_arena[1 << 20];
void* Block(size_t i) { return g_arena + (i % (sizeof(g_arena) / 16)) * 16; }

void Alloc(Recorder& r, void* p, size_t bytes) { r.observer()->on_alloc(r.observer(), p, bytes); }
void Free(Recorder& r, void* p) { r.observer()->on_free(r.observer(), p); }

TEST(Recorder, NetBytesFollowsAModelThroughGrowthAndDeletions) {
  Recorder recorder(false);
  std::unordered_map<void*, size_t> live;  // the model: block -> bytes
  std::mt19937 random(12345);
  uint64_t allocs = 0, frees = 0, bytes = 0;
  // Up to ~3000 live blocks (the table grows from 64 many times), interleaved frees that leave
  // gaps in its probe runs, and frees of blocks it never saw (from before the call).
  for (int step = 0; step < 20000; ++step) {
    const size_t i = random() % 6000;
    void* p = Block(i);
    if (live.count(p) != 0 && random() % 2 == 0) {
      Free(recorder, p);
      live.erase(p);
      ++frees;
    } else if (live.count(p) == 0) {
      const size_t size = 1 + random() % 500;
      Alloc(recorder, p, size);
      live[p] = size;
      ++allocs;
      bytes += size;
    } else {
      Free(recorder, Block(6000 + i));  // never allocated in the call
      ++frees;
    }
  }
  int64_t net = 0;
  for (const auto& [p, size] : live) net += static_cast<int64_t>(size);
  const allocbench::testing::Counts counts = recorder.counts();
  EXPECT_EQ(counts.allocs, allocs);
  EXPECT_EQ(counts.frees, frees);
  EXPECT_EQ(counts.bytes, bytes);
  EXPECT_EQ(counts.net_bytes, net);
  // Freeing every live block leaves nothing.
  for (const auto& [p, size] : live) Free(recorder, p);
  EXPECT_EQ(recorder.counts().net_bytes, 0);
  EXPECT_FALSE(recorder.lost());
}

TEST(Recorder, ThreadsReportingAtOnceLoseNothing) {
  Recorder recorder(false);
  constexpr int kThreads = 4;
  constexpr size_t kPerThread = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&recorder, t] {
      for (size_t i = 0; i < kPerThread; ++i) {
        void* p = Block(t * kPerThread + i);
        Alloc(recorder, p, 8);
        if (i % 2 == 0) Free(recorder, p);  // half of them freed again
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const allocbench::testing::Counts counts = recorder.counts();
  EXPECT_EQ(counts.allocs, kThreads * kPerThread);
  EXPECT_EQ(counts.frees, kThreads * kPerThread / 2);
  EXPECT_EQ(counts.bytes, kThreads * kPerThread * 8);
  EXPECT_EQ(counts.net_bytes, static_cast<int64_t>(kThreads * kPerThread / 2 * 8));
}

TEST(Recorder, KeepsTheFirstStacksInOrderAndMarksTheFreedOnes) {
  Recorder recorder(true);
  for (size_t i = 0; i < Recorder::kCaptured + 10; ++i) Alloc(recorder, Block(i), 10 + i);
  Free(recorder, Block(1));
  Free(recorder, Block(Recorder::kCaptured + 5));  // not captured: only counted
  ASSERT_EQ(recorder.events(), Recorder::kCaptured);
  for (int i = 0; i < recorder.events(); ++i) {
    EXPECT_EQ(recorder.event(i).bytes, 10u + i);
    EXPECT_EQ(recorder.event(i).freed, i == 1);
    EXPECT_GT(recorder.event(i).depth, 0);
  }
  EXPECT_EQ(recorder.counts().allocs, Recorder::kCaptured + 10u);
}

}  // namespace
