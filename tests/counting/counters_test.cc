// The counter blocks alone, driven through RecordAlloc/RecordFree with no interposition, so
// that this binary runs under ASan+UBSan and TSan.
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "allocbench/counting.h"
#include "counting_test_util.h"

namespace allocbench::counting::testing {
namespace {

// The pool size in counters.cc; threads beyond it count through the shared overflow block.
constexpr int kPoolSlots = 4096;

TEST(CountersTest, BackendIsNoneAndItsFootprintUnknownWithoutInterposition) {
  EXPECT_STREQ(BackendName(), "none");
  EXPECT_STREQ(BackendVersion(), "none");
  // No allocator to ask: both numbers say "not known" (-1), never a footprint of 0 bytes.
  const AllocatorFootprint footprint = ReadAllocatorFootprint();
  EXPECT_EQ(footprint.mapped_bytes, -1);
  EXPECT_EQ(footprint.allocated_bytes, -1);
}

TEST(CountersTest, DefaultsAreUnassignedAndFullTracking) {
  std::thread([] { EXPECT_EQ(GetMode(), Mode::kUnassigned); }).join();
  EXPECT_EQ(GetTracking(), Tracking::kFull);
}

TEST(CountersTest, CountingGoesToTheScenario) {
  const Delta d = Counted([] {
    RecordAlloc(100, 112);
    RecordFree(112);
  });
  EXPECT_EQ(d.scenario.allocs, 1u);
  EXPECT_EQ(d.scenario.frees, 1u);
  EXPECT_EQ(d.scenario.requested_bytes, 100u);
  EXPECT_EQ(d.scenario.usable_bytes, 112u);
  EXPECT_EQ(d.background.allocs + d.background.frees, 0u);
}

TEST(CountersTest, PausedAndIgnoredCountNothing) {
  SetBackgroundWindow(true);
  for (Mode mode : {Mode::kPaused, Mode::kIgnored}) {
    SetMode(mode);
    EXPECT_FALSE(Active());
    ExpectNothing(Observed([] {
      RecordAlloc(100, 112);
      RecordFree(112);
    }));
  }
  SetMode(Mode::kUnassigned);
  SetBackgroundWindow(false);
}

TEST(CountersTest, UnassignedIsBackgroundOnlyWhileTheWindowIsOpen) {
  ASSERT_EQ(GetMode(), Mode::kUnassigned);
  EXPECT_FALSE(Active());
  ExpectNothing(Observed([] { RecordAlloc(10, 16); }));
  SetBackgroundWindow(true);
  EXPECT_TRUE(Active());
  const Delta d = Observed([] {
    RecordAlloc(10, 16);
    RecordFree(16);
  });
  SetBackgroundWindow(false);
  EXPECT_EQ(d.background.allocs, 1u);
  EXPECT_EQ(d.background.frees, 1u);
  EXPECT_EQ(d.background.requested_bytes, 10u);
  EXPECT_EQ(d.background.usable_bytes, 16u);
  EXPECT_EQ(d.scenario.allocs + d.scenario.frees, 0u);
}

TEST(CountersTest, BasicTrackingIgnoresUsableBytes) {
  ScopedTracking tracking(Tracking::kBasic);
  int64_t peak = -1;
  const Delta d = Counted([&] {
    ResetLive();
    RecordAlloc(100, 112);
    peak = PeakLiveBytes();
  });
  EXPECT_EQ(d.scenario.requested_bytes, 100u);
  EXPECT_EQ(d.scenario.usable_bytes, 0u);
  EXPECT_EQ(peak, 0);
}

TEST(CountersTest, PeakAndLiveBytesFollowTheCountingThreads) {
  int64_t peak = 0;
  int64_t live = 0;
  int64_t after_reset = -1;
  Counted([&] {
    ResetLive();
    for (int i = 0; i < 3; ++i) RecordAlloc(32, 48);
    for (int i = 0; i < 3; ++i) RecordFree(48);
    RecordAlloc(8, 16);
    peak = PeakLiveBytes();
    live = LiveBytes();
    ResetLive();
    after_reset = PeakLiveBytes();
  });
  EXPECT_EQ(peak, 144);
  EXPECT_EQ(live, 16);
  EXPECT_EQ(after_reset, 0);
}

// A thread the scenario starts frees what its starter allocated (std::thread's own state does
// exactly this): live bytes are the scenario's, not a thread's, so they return to zero.
TEST(CountersTest, LiveBytesFollowBlocksFreedOnAnotherCountingThread) {
  int64_t peak = 0;
  int64_t live = -1;
  Counted([&] {
    ResetLive();
    RecordAlloc(64, 80);
    std::thread([] {
      SetMode(Mode::kCounting);
      RecordAlloc(16, 32);
      RecordFree(80);
      RecordFree(32);
    }).join();
    peak = PeakLiveBytes();
    live = LiveBytes();
  });
  EXPECT_EQ(peak, 112);
  EXPECT_EQ(live, 0);
}

TEST(CountersTest, ExitedThreadsCountsSurvive) {
  const Delta d = Observed([] {
    std::thread([] {
      SetMode(Mode::kCounting);
      RecordAlloc(7, 8);
      RecordAlloc(9, 16);
      RecordFree(8);
    }).join();
  });
  EXPECT_EQ(d.scenario.allocs, 2u);
  EXPECT_EQ(d.scenario.frees, 1u);
  EXPECT_EQ(d.scenario.requested_bytes, 16u);
  EXPECT_EQ(d.scenario.usable_bytes, 24u);
}

// Waves of 16 short-lived threads (slots are folded and reused) while a reader reads; the
// reader must never see a total go backwards, and the final totals must be exact.
TEST(CountersTest, ConcurrentThreadsWithSlotReuseCountExactly) {
  constexpr uint64_t kWaves = 20;
  constexpr uint64_t kThreads = 16;
  constexpr uint64_t kEvents = 5000;
  std::atomic<bool> done{false};
  std::atomic<bool> went_backwards{false};
  std::thread reader([&] {
    SetMode(Mode::kIgnored);
    Snapshot last{};
    while (!done.load(std::memory_order_relaxed)) {
      const Snapshot s = Read();
      if (s.scenario.allocs < last.scenario.allocs || s.scenario.frees < last.scenario.frees ||
          s.scenario.requested_bytes < last.scenario.requested_bytes ||
          s.background.allocs < last.background.allocs) {
        went_backwards = true;
      }
      last = s;
    }
  });
  const Snapshot before = Read();
  SetBackgroundWindow(true);  // every other thread counts as background
  for (uint64_t wave = 0; wave < kWaves; ++wave) {
    std::vector<std::thread> threads;
    for (uint64_t t = 0; t < kThreads; ++t) {
      threads.emplace_back([t] {
        SetMode(t % 2 == 0 ? Mode::kCounting : Mode::kUnassigned);
        for (uint64_t i = 0; i < kEvents; ++i) {
          RecordAlloc(24, 32);
          RecordFree(32);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  SetBackgroundWindow(false);
  const Delta d = Minus(Read(), before);
  done = true;
  reader.join();
  const uint64_t per_half = kWaves * kThreads / 2 * kEvents;
  EXPECT_EQ(d.scenario.allocs, per_half);
  EXPECT_EQ(d.scenario.frees, per_half);
  EXPECT_EQ(d.scenario.requested_bytes, per_half * 24);
  EXPECT_EQ(d.scenario.usable_bytes, per_half * 32);
  EXPECT_EQ(d.background.allocs, per_half);
  EXPECT_EQ(d.background.frees, per_half);
  EXPECT_EQ(d.background.requested_bytes, per_half * 24);
  EXPECT_FALSE(went_backwards);
}

// More live counting threads than the pool has slots: the rest share the overflow block.
// allocbench::gbench's per-thread read: this thread's own events while it counted, nothing of
// another counting thread's, nothing while paused.
TEST(CountersTest, ReadThisThreadSeesOnlyTheCallingThreadsCountedEvents) {
  std::thread([] {
    Counters start;
    EXPECT_FALSE(ReadThisThread(&start));  // never counted: no slot of its own yet
    SetMode(Mode::kCounting);
    ASSERT_TRUE(ReadThisThread(&start));
    for (int i = 0; i < 3; ++i) RecordAlloc(32, 48);
    RecordFree(48);
    std::thread([] {
      SetMode(Mode::kCounting);
      RecordAlloc(1000, 1008);
    }).join();
    SetMode(Mode::kPaused);
    RecordAlloc(64, 64);
    Counters end;
    ASSERT_TRUE(ReadThisThread(&end));
    EXPECT_EQ(end.allocs - start.allocs, 3u);
    EXPECT_EQ(end.frees - start.frees, 1u);
    EXPECT_EQ(end.requested_bytes - start.requested_bytes, 3u * 32);
    EXPECT_EQ(end.usable_bytes - start.usable_bytes, 3u * 48);
  }).join();
}

TEST(CountersTest, ThreadsBeyondThePoolCountThroughTheOverflowBlock) {
  constexpr int kThreads = kPoolSlots + 64;
  // Every thread keeps its slot until all have counted: they block on `gate`, held by the test.
  struct Shared {
    std::mutex gate;
    std::atomic<int> counted{0};
    std::atomic<int> shared{0};  // threads with no slot of their own
    std::atomic<int> wrong{0};   // threads whose own counters were not exactly their event
  } shared;
  auto body = [](void* arg) -> void* {
    auto* s = static_cast<Shared*>(arg);
    SetMode(Mode::kCounting);
    RecordAlloc(3, 8);
    RecordFree(8);
    Counters own;
    if (ReadThisThread(&own)) {
      if (own.allocs != 1 || own.requested_bytes != 3) s->wrong.fetch_add(1);
    } else {
      s->shared.fetch_add(1);  // no slot: its events are only in Read()'s totals
    }
    s->counted.fetch_add(1);
    std::lock_guard<std::mutex> wait(s->gate);
    return nullptr;
  };
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  const Snapshot before = Read();
  std::vector<pthread_t> threads(kThreads);
  int started = 0;
  shared.gate.lock();
  for (pthread_t& thread : threads) {
    if (pthread_create(&thread, &attr, body, &shared) != 0) break;
    ++started;
  }
  while (shared.counted.load() < started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  shared.gate.unlock();
  for (int i = 0; i < started; ++i) pthread_join(threads[i], nullptr);
  pthread_attr_destroy(&attr);
  ASSERT_EQ(started, kThreads) << "could not start enough threads";
  const Delta d = Minus(Read(), before);
  EXPECT_EQ(d.scenario.allocs, static_cast<uint64_t>(kThreads));
  EXPECT_EQ(d.scenario.frees, static_cast<uint64_t>(kThreads));
  EXPECT_EQ(d.scenario.requested_bytes, 3u * kThreads);
  EXPECT_EQ(d.scenario.usable_bytes, 8u * kThreads);
  EXPECT_GE(shared.shared.load(), kThreads - kPoolSlots);
  EXPECT_EQ(shared.wrong.load(), 0);
}

}  // namespace
}  // namespace allocbench::counting::testing
