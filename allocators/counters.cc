// Per-thread counter blocks, their pool, folding at thread exit, and Read().
//
// Nothing in this file allocates: blocks live in a static pool, the thread's state is trivial
// TLS, and the only lock is a spin lock shared by Read() and the thread-exit fold.
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "allocbench/counting.h"
#include "thread_state.h"

namespace allocbench::counting {
namespace internal {

__thread ThreadState tls_state __attribute__((tls_model("initial-exec")));
std::atomic<bool> g_window_open{false};
std::atomic<int64_t> g_scenario_live{0};
std::atomic<int64_t> g_scenario_peak{0};
std::atomic<Tracking> g_tracking{Tracking::kFull};
std::atomic<Observer*> g_background_observer{nullptr};
std::atomic<uint32_t> g_background_calls{0};

namespace {

// Enough for any realistic threads sweep; beyond it threads share the overflow block.
constexpr uint32_t kSlots = 4096;

CounterBlock g_blocks[kSlots];
std::atomic<uint32_t> g_in_use[kSlots];
// One past the highest slot ever claimed, so that Read() scans only what was used.
std::atomic<uint32_t> g_high_water{0};

// Pool exhausted, or a thread counting after its exit fold: correct, but every event is a
// locked fetch_add on a shared line.
CounterBlock g_overflow;

// Counts of exited threads. Guarded by g_fold_lock, which only Read() and FoldAtExit() take.
struct Totals {
  Counters scenario;
  Counters background;
} g_retired;
std::atomic<bool> g_fold_lock{false};

pthread_key_t g_exit_key;
pthread_once_t g_exit_key_once = PTHREAD_ONCE_INIT;
bool g_exit_key_ok = false;

class SpinLock {
 public:
  SpinLock() noexcept {
    while (g_fold_lock.exchange(true, std::memory_order_acquire)) {
      while (g_fold_lock.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
  }
  ~SpinLock() { g_fold_lock.store(false, std::memory_order_release); }
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;
};

void AddInto(Counters& total, const Counts& c) noexcept {
  total.allocs += c.allocs.load(std::memory_order_relaxed);
  total.frees += c.frees.load(std::memory_order_relaxed);
  total.requested_bytes += c.requested_bytes.load(std::memory_order_relaxed);
  total.usable_bytes += c.usable_bytes.load(std::memory_order_relaxed);
}

void AddInto(Counters& total, const Counters& c) noexcept {
  total.allocs += c.allocs;
  total.frees += c.frees;
  total.requested_bytes += c.requested_bytes;
  total.usable_bytes += c.usable_bytes;
}

void Zero(Counts& c) noexcept {
  c.allocs.store(0, std::memory_order_relaxed);
  c.frees.store(0, std::memory_order_relaxed);
  c.requested_bytes.store(0, std::memory_order_relaxed);
  c.usable_bytes.store(0, std::memory_order_relaxed);
}

// pthread key destructor: runs on the exiting thread itself, after its last user code.
void FoldAtExit(void* value) noexcept {
  auto* block = static_cast<CounterBlock*>(value);
  const auto slot = static_cast<uint32_t>(block - g_blocks);
  {
    SpinLock lock;
    AddInto(g_retired.scenario, block->scenario);
    AddInto(g_retired.background, block->background);
    Zero(block->scenario);
    Zero(block->background);
    // Released under the lock, so Read() never sees the slot both free and not yet retired.
    g_in_use[slot].store(0, std::memory_order_release);
  }
  // Frees done by later TLS destructors still count, through the overflow block. Re-claiming a
  // slot here would leak it: the key's destructor is not re-run after the last iteration.
  tls_state.block = nullptr;
  tls_state.shared = true;
  tls_state.fast_target = FastTargetFor(tls_state.mode, nullptr);
}

void CreateExitKey() noexcept { g_exit_key_ok = pthread_key_create(&g_exit_key, FoldAtExit) == 0; }

// Created during static initialisation so that the key gets a low index: pthread_setspecific
// on the first 32 keys writes into the thread descriptor and never allocates.
[[maybe_unused]] const bool g_exit_key_created = [] {
  pthread_once(&g_exit_key_once, CreateExitKey);
  return true;
}();

void RaiseHighWater(uint32_t bound) noexcept {
  uint32_t seen = g_high_water.load(std::memory_order_relaxed);
  while (seen < bound && !g_high_water.compare_exchange_weak(seen, bound, std::memory_order_release,
                                                             std::memory_order_relaxed)) {
  }
}

// Claims a free slot for the calling thread; nullptr when the pool is full.
CounterBlock* ClaimBlock() noexcept {
  for (uint32_t slot = 0; slot < kSlots; ++slot) {
    uint32_t expected = 0;
    if (g_in_use[slot].load(std::memory_order_relaxed) != 0 ||
        !g_in_use[slot].compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                                std::memory_order_relaxed)) {
      continue;
    }
    RaiseHighWater(slot + 1);
    return &g_blocks[slot];
  }
  return nullptr;
}

// Claims a slot for the calling thread. nullptr (and the overflow block from now on) when the
// pool is full or the thread is past its exit fold.
CounterBlock* RegisterThread() noexcept {
  ThreadState& t = tls_state;
  if (t.shared) return nullptr;
  ReentryGuard guard;  // nothing pthread does for us here may be counted
  pthread_once(&g_exit_key_once, CreateExitKey);
  // Without the exit key a slot could never be folded and recycled: share instead.
  CounterBlock* block = g_exit_key_ok ? ClaimBlock() : nullptr;
  if (block == nullptr) {
    t.shared = true;
    return nullptr;
  }
  // Cannot fail for a key created at static-init time (low index: no allocation). If it did,
  // the slot would stay claimed with its counts still visible to Read(), only not recycled.
  (void)pthread_setspecific(g_exit_key, block);
  t.block = block;
  return block;
}

void AddShared(std::atomic<uint64_t>& counter, uint64_t delta) noexcept {
  counter.fetch_add(delta, std::memory_order_relaxed);
}

// Live slots + overflow + retired, consistent with any concurrent fold.
Snapshot SumAll() noexcept {
  Snapshot snapshot;
  SpinLock lock;
  const uint32_t high_water = g_high_water.load(std::memory_order_acquire);
  for (uint32_t slot = 0; slot < high_water; ++slot) {
    if (g_in_use[slot].load(std::memory_order_acquire) == 0) continue;
    AddInto(snapshot.scenario, g_blocks[slot].scenario);
    AddInto(snapshot.background, g_blocks[slot].background);
  }
  AddInto(snapshot.scenario, g_overflow.scenario);
  AddInto(snapshot.background, g_overflow.background);
  AddInto(snapshot.scenario, g_retired.scenario);
  AddInto(snapshot.background, g_retired.background);
  return snapshot;
}

}  // namespace

void RecordAllocSlow(size_t requested, size_t usable) noexcept {
  ThreadState& t = tls_state;
  const bool scenario = t.mode == Mode::kCounting;
  CounterBlock* block = t.block != nullptr ? t.block : RegisterThread();
  if (block != nullptr) {
    if (scenario) return RecordScenarioAlloc(block->scenario, requested, usable);
    Bump(block->background.allocs, 1);
    Bump(block->background.requested_bytes, requested);
    Bump(block->background.usable_bytes, usable);
    return;
  }
  Counts& c = scenario ? g_overflow.scenario : g_overflow.background;
  AddShared(c.allocs, 1);
  AddShared(c.requested_bytes, requested);
  if (usable != 0) AddShared(c.usable_bytes, usable);
  if (scenario && usable != 0) TrackLive(static_cast<int64_t>(usable));
}

void RecordFreeSlow(size_t usable) noexcept {
  ThreadState& t = tls_state;
  const bool scenario = t.mode == Mode::kCounting;
  CounterBlock* block = t.block != nullptr ? t.block : RegisterThread();
  if (block != nullptr) {
    if (scenario) return RecordScenarioFree(block->scenario, usable);
    return Bump(block->background.frees, 1);
  }
  AddShared(scenario ? g_overflow.scenario.frees : g_overflow.background.frees, 1);
  if (scenario && usable != 0) {
    g_scenario_live.fetch_sub(static_cast<int64_t>(usable), std::memory_order_relaxed);
  }
}

}  // namespace internal

using internal::tls_state;

// Entering kCounting claims the thread's slot here, outside any allocation, so that the hooks'
// fast path finds it ready.
void SetMode(Mode mode) noexcept {
  internal::ThreadState& t = tls_state;
  t.mode = mode;
  if (mode == Mode::kCounting && t.block == nullptr) internal::RegisterThread();
  t.fast_target = internal::FastTargetFor(mode, t.block);
}
Mode GetMode() noexcept { return tls_state.mode; }

Observer* SetThreadObserver(Observer* observer) noexcept {
  internal::ThreadState& t = tls_state;
  Observer* previous = t.observer;
  t.observer = observer;
  if (t.fast_target != internal::kBusy) t.fast_target = internal::FastTargetFor(t.mode, t.block);
  return previous;
}

// Returns once no thread is still calling the observer it replaced, which may then go away.
Observer* SetBackgroundObserver(Observer* observer) noexcept {
  Observer* previous =
      internal::g_background_observer.exchange(observer, std::memory_order_seq_cst);
  while (internal::g_background_calls.load(std::memory_order_seq_cst) != 0) __builtin_ia32_pause();
  return previous;
}

void SetBackgroundWindow(bool open) noexcept {
  internal::g_window_open.store(open, std::memory_order_relaxed);
}

void SetTracking(Tracking tracking) noexcept {
  internal::g_tracking.store(tracking, std::memory_order_relaxed);
}
Tracking GetTracking() noexcept { return internal::g_tracking.load(std::memory_order_relaxed); }

Snapshot Read() noexcept { return internal::SumAll(); }

bool ReadThisThread(Counters* out) noexcept {
  const internal::ThreadState& t = tls_state;
  if (t.block == nullptr || t.shared) return false;
  Counters counters;
  internal::AddInto(counters, t.block->scenario);
  *out = counters;
  return true;
}

void ResetLive() noexcept {
  internal::g_scenario_live.store(0, std::memory_order_relaxed);
  internal::g_scenario_peak.store(0, std::memory_order_relaxed);
}
int64_t PeakLiveBytes() noexcept {
  return internal::g_scenario_peak.load(std::memory_order_relaxed);
}
int64_t LiveBytes() noexcept { return internal::g_scenario_live.load(std::memory_order_relaxed); }

void RecordAlloc(size_t requested, size_t usable) noexcept {
  if (!internal::ShouldCount()) return;
  const uintptr_t target = tls_state.fast_target;
  internal::ReentryGuard guard;
  internal::RecordAllocAs(target, requested, internal::FullTracking() ? usable : 0);
}

void RecordFree(size_t usable) noexcept {
  if (!internal::ShouldCount()) return;
  const uintptr_t target = tls_state.fast_target;
  internal::ReentryGuard guard;
  internal::RecordFreeAs(target, internal::FreeNeedsUsable() ? usable : 0);
}

bool Active() noexcept { return internal::ShouldCount(); }

// Weak so that a binary without interposition says "none"; backend_identity.cc overrides them.
// allocbench::gbench, one archive with backend_identity.o in it, leaves them out: a weak
// definition already linked from counters.o would keep the linker from extracting the strong one.
#ifndef ALLOCBENCH_NO_WEAK_BACKEND_IDENTITY
__attribute__((weak)) const char* BackendName() noexcept { return "none"; }
__attribute__((weak)) const char* BackendVersion() noexcept { return "none"; }
__attribute__((weak)) AllocatorFootprint ReadAllocatorFootprint() noexcept { return {}; }
#endif

}  // namespace allocbench::counting
