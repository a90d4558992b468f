// allocbench::testing's core: Count, AllocsPerRun / BytesPerRun and PermitAllocations against
// ground_truth.h, whose sizes are the expectations.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

#include "allocbench/testing.h"
#include "ground_truth.h"

namespace {

namespace at = allocbench::testing;
namespace gt = ground_truth;

void ExpectCounts(const at::Counts& c, uint64_t allocs, uint64_t frees, uint64_t bytes,
                  int64_t net_bytes) {
  EXPECT_EQ(c.allocs, allocs);
  EXPECT_EQ(c.frees, frees);
  EXPECT_EQ(c.bytes, bytes);
  EXPECT_EQ(c.net_bytes, net_bytes);
}

TEST(Count, IsAvailableWithTheHooksLinked) {
  EXPECT_TRUE(at::Available()) << at::UnavailableReason();
  EXPECT_STREQ(at::UnavailableReason(), "");
}

TEST(Count, EveryFormOnTheCallingThreadExactly) {
  ExpectCounts(at::Count(gt::FiveAllocations), 5, 5, gt::kFiveAllocationsBytes, 0);
  EXPECT_EQ(gt::kFiveAllocationsBytes, 206u);
}

TEST(Count, TakesConstAndTemporaryCallables) {
  const auto five = [] { gt::FiveAllocations(); };
  ExpectCounts(at::Count(five), 5, 5, 206, 0);
  ExpectCounts(at::Count([] { gt::FortyEightFreed(); }), 1, 1, 48, 0);
  EXPECT_EQ(at::AllocsPerRun(3, five), 5.0);
}

TEST(Count, NothingAllocatedIsZero) {
  ExpectCounts(at::Count([] {}), 0, 0, 0, 0);
}

TEST(Count, ALeakedBlockIsNetBytes) {
  void* leaked = nullptr;
  ExpectCounts(at::Count([&] { leaked = gt::LeakTwentyFour(); }), 1, 0, 24, 24);
  ::operator delete(leaked);
}

TEST(Count, FreeingAnOlderBlockIsAFreeButNotNegativeNetBytes) {
  void* older = malloc(77);
  ExpectCounts(at::Count([&] { free(older); }), 0, 1, 0, 0);
}

TEST(Count, ReallocIsAFreeAndAnAllocationOfTheNewSize) {
  void* p = nullptr;
  ExpectCounts(at::Count([&] {
                 p = malloc(10);
                 p = realloc(p, 1000);
               }),
               2, 1, 1010, 1000);
  free(p);
}

// Every form goes through the same observed path: aligned and array new, calloc,
// posix_memalign, aligned_alloc, each freed by its matching form.
TEST(Count, TheOtherFormsAreCountedAndMatchedToTheirFrees) {
  void* (*volatile alloc_aligned)(size_t, size_t) = &aligned_alloc;
  void* (*volatile alloc_zeroed)(size_t, size_t) = &calloc;
  const at::Counts c = at::Count([&] {
    void* a = ::operator new (40, std::align_val_t{64});
    void* b = ::operator new[](24);
    void* z = alloc_zeroed(3, 11);
    void* m = nullptr;
    if (posix_memalign(&m, 32, 50) != 0) m = nullptr;
    void* l = alloc_aligned(16, 48);
    ::operator delete (a, std::align_val_t{64});
    ::operator delete[](b);
    free(z);
    free(m);
    free(l);
  });
  ExpectCounts(c, 5, 5, 40 + 24 + 33 + 50 + 48, 0);
}

TEST(Count, AnotherThreadIsCountedOnlyWhenAsked) {
  // std::thread allocates its state on this thread and the worker frees it when it is done;
  // the worker makes 1 x 64 B. The first thread a process starts also allocates its TLS once
  // (glibc keeps it for reuse), hence the warm-up.
  gt::AllocateOnAnotherThread();
  const at::Counts own = at::Count(gt::AllocateOnAnotherThread);
  const at::Counts all = at::Count(gt::AllocateOnAnotherThread, at::Threads::kAll);
  EXPECT_EQ(own.allocs, 1u);  // the state
  EXPECT_EQ(own.frees, 0u);   // freed by the worker: not this thread's
  EXPECT_EQ(own.net_bytes, static_cast<int64_t>(own.bytes));
  EXPECT_EQ(all.allocs - own.allocs, 1u);
  EXPECT_EQ(all.bytes - own.bytes, 64u);
  EXPECT_EQ(all.frees, 2u);  // the 64 B and the state, both on the worker
  EXPECT_EQ(all.net_bytes, 0);
}

TEST(Count, PermitAllocationsExcludesExactlyItsPart) {
  ExpectCounts(at::Count(gt::PermitsOneThousand), 2, 2, 16, 0);
}

TEST(Count, PermitAllocationsOutsideACountChangesNothing) {
  { at::PermitAllocations permit; }
  ExpectCounts(at::Count(gt::FortyEightFreed), 1, 1, 48, 0);
}

TEST(Count, NestedCountsAreCountedByBoth) {
  at::Counts inner;
  const at::Counts outer = at::Count([&] {
    gt::FortyEightFreed();
    inner = at::Count(gt::FiveAllocations);
  });
  ExpectCounts(inner, 5, 5, 206, 0);
  ExpectCounts(outer, 6, 6, 48 + 206, 0);
}

TEST(Count, ACountInsideAPermitCountsForItselfOnly) {
  at::Counts inner;
  const at::Counts outer = at::Count([&] {
    at::PermitAllocations permit;
    inner = at::Count(gt::FiveAllocations);
  });
  ExpectCounts(inner, 5, 5, 206, 0);
  ExpectCounts(outer, 0, 0, 0, 0);
}

// The checks count on the thread's own counters (no observer): nested in a count they are
// counted by it too, and under its PermitAllocations only by themselves.
TEST(Count, ACheckNestedInACountIsCountedByBothUnlessPermitted) {
  namespace ai = allocbench::testing::internal;
  const ai::Expectation exactly{ai::Kind::kExactly, 5, 206};
  bool passed = false;
  const at::Counts outer = at::Count([&] {
    passed = static_cast<bool>(ai::Check(exactly, "CHECK", "five", gt::FiveAllocations));
  });
  EXPECT_TRUE(passed);
  ExpectCounts(outer, 5, 5, 206, 0);
  passed = false;
  const at::Counts permitted = at::Count([&] {
    at::PermitAllocations permit;
    passed = static_cast<bool>(ai::Check(exactly, "CHECK", "five", gt::FiveAllocations));
  });
  EXPECT_TRUE(passed);
  ExpectCounts(permitted, 0, 0, 0, 0);
  // And a check's count is its own: the enclosing count's allocations are not in it.
  const at::Counts around = at::Count([&] {
    gt::FortyEightFreed();
    passed = static_cast<bool>(ai::Check(exactly, "CHECK", "five", gt::FiveAllocations));
    gt::FortyEightFreed();
  });
  EXPECT_TRUE(passed);
  ExpectCounts(around, 7, 7, 206 + 2 * 48, 0);
}

TEST(Count, AnExceptionEndsTheCountAndPropagates) {
  const auto mode = allocbench::counting::GetMode();
  EXPECT_THROW(at::Count(gt::AllocatesThenThrows), std::runtime_error);
  EXPECT_EQ(allocbench::counting::GetMode(), mode);
  // Counting stopped: the next count starts from nothing.
  ExpectCounts(at::Count(gt::FortyEightFreed), 1, 1, 48, 0);
  // An enclosing count saw the throw's allocations (the 40 B and the exception's), all freed.
  const at::Counts outer = at::Count([] {
    try {
      at::Count(gt::AllocatesThenThrows);
    } catch (const std::runtime_error&) {
    }
  });
  EXPECT_GE(outer.allocs, 2u);
  EXPECT_GE(outer.bytes, 40u + sizeof(std::runtime_error));
  EXPECT_EQ(outer.frees, outer.allocs);
  EXPECT_EQ(outer.net_bytes, 0);
}

TEST(AllocsPerRun, TheWarmUpCallIsNotCounted) {
  void* cache = nullptr;
  auto fill_once = [&] {
    if (cache == nullptr) cache = ::operator new(16);
  };
  EXPECT_EQ(at::AllocsPerRun(10, fill_once), 0.0);
  EXPECT_EQ(at::BytesPerRun(10, fill_once), 0.0);
  ::operator delete(cache);
  EXPECT_EQ(at::AllocsPerRun(10, gt::FiveAllocations), 5.0);
  EXPECT_EQ(at::BytesPerRun(10, gt::FiveAllocations), 206.0);
}

TEST(AllocsPerRun, IsTheExactMean) {
  // Allocates 64 B on every fourth call: calls 0 (the warm-up), 4 and 8 of 0..8.
  int calls = 0;
  std::vector<void*> blocks;
  blocks.reserve(16);
  auto every_fourth = [&] {
    if (calls++ % 4 == 0) blocks.push_back(::operator new(64));
  };
  EXPECT_EQ(at::AllocsPerRun(8, every_fourth), 2.0 / 8);
  calls = 0;
  EXPECT_EQ(at::BytesPerRun(8, every_fourth), 2.0 * 64 / 8);
  for (void* p : blocks) ::operator delete(p);
  EXPECT_THROW(at::AllocsPerRun(0, every_fourth), std::invalid_argument);
  EXPECT_THROW(at::BytesPerRun(-1, every_fourth), std::invalid_argument);
}

// Several test threads count at once, each exactly its own, while a kAll count runs too: the
// other threads are inside counts of their own, so the kAll one sees none of them.
TEST(Count, ConcurrentCountsOnSeveralThreadsAreEachExact) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 300;
  std::atomic<int> wrong{0};
  std::atomic<int> started{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      ++started;
      for (int round = 0; round < kRounds || !stop.load(); ++round) {
        const at::Counts c = at::Count(gt::FiveAllocations);
        if (c.allocs != 5 || c.frees != 5 || c.bytes != 206 || c.net_bytes != 0) ++wrong;
      }
    });
  }
  while (started.load() != kThreads) std::this_thread::yield();
  for (int round = 0; round < 50; ++round) {
    const at::Counts all = at::Count(gt::FiveAllocations, at::Threads::kAll);
    if (all.allocs != 5 || all.frees != 5 || all.bytes != 206 || all.net_bytes != 0) ++wrong;
  }
  stop = true;
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Count, AThreadsAllCountInsideAnotherIsCountedByBoth) {
  gt::AllocateOnAnotherThread();  // the first thread's one-time allocations
  at::Counts inner;
  const at::Counts outer = at::Count(
      [&] {
        gt::FortyEightFreed();
        inner = at::Count(gt::AllocateOnAnotherThread, at::Threads::kAll);
      },
      at::Threads::kAll);
  const at::Counts own = at::Count(gt::AllocateOnAnotherThread);
  EXPECT_EQ(inner.allocs, own.allocs + 1);
  EXPECT_EQ(inner.bytes, own.bytes + 64);
  EXPECT_EQ(outer.allocs, inner.allocs + 1);
  EXPECT_EQ(outer.bytes, inner.bytes + 48);
  EXPECT_EQ(outer.frees, inner.frees + 1);
  EXPECT_EQ(outer.net_bytes, 0);
}

}  // namespace
