// Internal to allocators/: the per-thread state and the inline fast path shared by counters.cc
// and the interposed functions. Not installed; nothing outside allocators/ may include it.
//
// Every malloc/free/new/delete of the process runs the checks below, so they are inline and
// built around one thread-local word, `fast_target`: the scenario counters of a kCounting
// thread that owns a slot, or a marker. A not-counting event costs one TLS load and two
// compares; a scenario event under Tracking::kBasic adds a load of the tracking level and two
// single-writer increments (hooks_common.h). Everything else (kFull, background, the first
// event of an unassigned thread, a full pool, an exiting thread) takes the out-of-line path.
// bench/counting_overhead.cc measures the result.
#ifndef ALLOCBENCH_ALLOCATORS_THREAD_STATE_H_
#define ALLOCBENCH_ALLOCATORS_THREAD_STATE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "allocbench/counting.h"

#define ALLOCBENCH_LIKELY(x) __builtin_expect(!!(x), 1)
#define ALLOCBENCH_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace allocbench::counting::internal {

// Four counters of one attribution target. In a slot, written only by the owning thread
// (relaxed load + store, no locked instruction) and read concurrently by Read(). In the shared
// overflow block, updated with fetch_add.
struct Counts {
  std::atomic<uint64_t> allocs;
  std::atomic<uint64_t> frees;
  std::atomic<uint64_t> requested_bytes;
  std::atomic<uint64_t> usable_bytes;
};

// One thread's counters: exactly one cache line, so that threads never share a line.
struct alignas(64) CounterBlock {
  Counts scenario;
  Counts background;
};
static_assert(sizeof(CounterBlock) == 64, "a counter block must fill exactly one cache line");

// fast_target is either a pointer to the thread's scenario counters (>= kFirstPointer) or one
// of these markers. Integers, so that they are constants even before static initialisation
// (malloc runs before it). One compare separates "count on the fast path" from the rest, and a
// second "certainly not counting" from "ask the slow path".
constexpr uintptr_t kSlowPath = 0;  // kUnassigned (window?), or kCounting without a slot
constexpr uintptr_t kBusy = 8;      // the re-entry guard is held
constexpr uintptr_t kNever = 16;    // kPaused or kIgnored
constexpr uintptr_t kFirstPointer = 64;

// Trivial type, zero-initialised by the TLS image: kUnassigned, kSlowPath, no slot. `__thread`
// (not thread_local) so that no TLS wrapper or lazy initialisation runs inside malloc.
struct ThreadState {
  uintptr_t fast_target;  // see kSlowPath; kBusy while the counting layer itself is at work
  Mode mode;
  bool shared;          // counts through the shared overflow block (pool full, or exiting)
  CounterBlock* block;  // this thread's slot, claimed by its first counted event or kCounting
  Observer* observer;   // SetThreadObserver(): its kCounting events, with their pointers
};

// initial-exec: the counting layer lives in executables, where this resolves to a fixed offset
// from %fs with no __tls_get_addr call. Do not link allocbench_counters into a dlopen'ed DSO.
extern __thread ThreadState tls_state __attribute__((tls_model("initial-exec")));
extern std::atomic<bool> g_window_open;
// Live usable bytes of all kCounting threads together, and their peak (kFull only). Shared, not
// per thread: a thread the scenario starts may free what its starter allocated.
extern std::atomic<int64_t> g_scenario_live;
extern std::atomic<int64_t> g_scenario_peak;
extern std::atomic<Tracking> g_tracking;
extern std::atomic<Observer*> g_background_observer;
extern std::atomic<uint32_t> g_background_calls;  // background observer calls in flight

inline bool FullTracking() noexcept {
  return g_tracking.load(std::memory_order_relaxed) == Tracking::kFull;
}

// The fast_target for the calling thread in `mode`, owning `block` (or nullptr). An observed
// thread counts on the slow path, which passes the pointers.
inline uintptr_t FastTargetFor(Mode mode, CounterBlock* block) noexcept {
  if (mode == Mode::kPaused || mode == Mode::kIgnored) return kNever;
  if (mode == Mode::kCounting && block != nullptr && tls_state.observer == nullptr) {
    return reinterpret_cast<uintptr_t>(&block->scenario);
  }
  return kSlowPath;
}

// With fast_target == kSlowPath: would this event be counted (through the slow path)?
inline bool SlowPathCounts() noexcept {
  return tls_state.mode == Mode::kCounting || g_window_open.load(std::memory_order_relaxed);
}

inline bool ShouldCount() noexcept {
  const uintptr_t target = tls_state.fast_target;
  if (ALLOCBENCH_LIKELY(target >= kFirstPointer)) return true;
  return target == kSlowPath && SlowPathCounts();
}

inline Counts& AsCounts(uintptr_t target) noexcept { return *reinterpret_cast<Counts*>(target); }

// Holds the re-entry guard for its scope: nothing the bookkeeping or the backend call does on
// this thread is counted or recurses. Restores the previous state, so nesting is safe.
class ReentryGuard {
 public:
  ReentryGuard() noexcept : saved_(tls_state.fast_target) { tls_state.fast_target = kBusy; }
  ~ReentryGuard() { tls_state.fast_target = saved_; }
  ReentryGuard(const ReentryGuard&) = delete;
  ReentryGuard& operator=(const ReentryGuard&) = delete;

 private:
  uintptr_t saved_;
};

// Single-writer increment: the owner is the only thread that stores, so a relaxed load + store
// is exact and avoids the locked read-modify-write of fetch_add.
inline void Bump(std::atomic<uint64_t>& counter, uint64_t delta) noexcept {
  counter.store(counter.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}

// kFull only: one locked add, and a compare-exchange when a new peak is reached.
inline void TrackLive(int64_t delta) noexcept {
  const int64_t now = g_scenario_live.fetch_add(delta, std::memory_order_relaxed) + delta;
  int64_t peak = g_scenario_peak.load(std::memory_order_relaxed);
  while (now > peak &&
         !g_scenario_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

// Scenario event of a thread on the fast path. `usable` is 0 unless FullTracking().
inline void RecordScenarioAlloc(Counts& c, size_t requested, size_t usable) noexcept {
  Bump(c.allocs, 1);
  Bump(c.requested_bytes, requested);
  if (usable != 0) {
    Bump(c.usable_bytes, usable);
    TrackLive(static_cast<int64_t>(usable));
  }
}
inline void RecordScenarioFree(Counts& c, size_t usable) noexcept {
  Bump(c.frees, 1);
  if (usable != 0)
    g_scenario_live.fetch_sub(static_cast<int64_t>(usable), std::memory_order_relaxed);
}

// Any counted event, attributed by the thread's mode; claims a slot if the thread has none.
// REQUIRES: ShouldCount() was true for this event; the caller holds the ReentryGuard.
// `usable` is 0 unless FullTracking() (for frees: unless FreeNeedsUsable()).
void RecordAllocSlow(size_t requested, size_t usable) noexcept;
void RecordFreeSlow(size_t usable) noexcept;

// Either path, given the fast_target read before the guard was taken.
inline void RecordAllocAs(uintptr_t target, size_t requested, size_t usable) noexcept {
  if (target >= kFirstPointer) return RecordScenarioAlloc(AsCounts(target), requested, usable);
  RecordAllocSlow(requested, usable);
}
inline void RecordFreeAs(uintptr_t target, size_t usable) noexcept {
  if (target >= kFirstPointer) return RecordScenarioFree(AsCounts(target), usable);
  RecordFreeSlow(usable);
}

// After a counted allocation / before a counted free on the slow path (guard held): passes the
// pointer to the thread's observer (kCounting) or the background one (kUnassigned). A
// background call is counted in flight, so that SetBackgroundObserver() can wait until no
// thread still uses the observer it replaced.
template <typename Call>
inline void Observe(Call call) noexcept {
  const Mode mode = tls_state.mode;
  if (mode == Mode::kCounting) {
    if (ALLOCBENCH_UNLIKELY(tls_state.observer != nullptr)) call(tls_state.observer);
    return;
  }
  if (mode != Mode::kUnassigned ||
      ALLOCBENCH_LIKELY(g_background_observer.load(std::memory_order_relaxed) == nullptr)) {
    return;
  }
  g_background_calls.fetch_add(1, std::memory_order_seq_cst);
  Observer* observer = g_background_observer.load(std::memory_order_seq_cst);
  if (observer != nullptr) call(observer);
  g_background_calls.fetch_sub(1, std::memory_order_release);
}
inline void ObserveAlloc(void* p, size_t requested) noexcept {
  Observe([=](Observer* observer) { observer->on_alloc(observer, p, requested); });
}
inline void ObserveFree(void* p) noexcept {
  Observe([=](Observer* observer) { observer->on_free(observer, p); });
}

// Whether a free needs its usable size: only the scenario's live bytes use it (Counts has no
// usable-bytes-freed field), so background frees and kBasic skip the look-up.
inline bool FreeNeedsUsable() noexcept {
  return tls_state.mode == Mode::kCounting && FullTracking();
}

}  // namespace allocbench::counting::internal

#endif  // ALLOCBENCH_ALLOCATORS_THREAD_STATE_H_
