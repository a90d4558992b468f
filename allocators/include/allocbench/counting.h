// The counting layer's control interface, used by the harness and by tests.
//
// Contract:
//  - Every allocation made through any `operator new` form or the malloc family is attributed to
//    the calling thread's mode at the time of the call:
//      kCounting   -> the scenario's counters,
//      kUnassigned -> the background counters, but only while the background window is open,
//      kPaused / kIgnored -> nothing.
//  - Nothing here allocates, locks on the allocation path, or throws. Reading a snapshot may take
//    a short spin lock against a thread that is exiting (folding its counts), never against
//    an allocation.
//  - Counts survive thread exit: an exiting thread's block is folded into a retired total.
#ifndef ALLOCBENCH_COUNTING_H_
#define ALLOCBENCH_COUNTING_H_

#include <cstddef>
#include <cstdint>

namespace allocbench::counting {

enum class Mode : uint8_t {
  kUnassigned = 0,  // a thread allocbench did not start or adopt: background while window open
  kIgnored,         // the harness's own threads: never counted
  kPaused,          // a scenario thread outside its measured loop or in PauseTiming
  kCounting,        // a scenario thread inside its measured loop
};

// What to track per allocation. kBasic: allocations, frees and requested bytes only (no size
// look-ups). kFull adds usable bytes and per-thread live/peak-live bytes, which costs one
// usable-size call per allocation and per free.
enum class Tracking : uint8_t { kBasic = 0, kFull };

struct Counters {
  uint64_t allocs = 0;
  uint64_t frees = 0;
  uint64_t requested_bytes = 0;
  uint64_t usable_bytes = 0;  // 0 under Tracking::kBasic
};

struct Snapshot {
  Counters scenario;
  Counters background;
};

// Current thread's mode.
void SetMode(Mode mode) noexcept;
Mode GetMode() noexcept;

// Process-wide: whether kUnassigned threads are counted (as background) right now.
void SetBackgroundWindow(bool open) noexcept;

// Process-wide tracking level; default kFull.
void SetTracking(Tracking tracking) noexcept;
Tracking GetTracking() noexcept;

// Sum over every thread, live and exited. Thread-safe; may be called while others allocate.
Snapshot Read() noexcept;

// The calling thread's own scenario counters, read from its slot: everything it allocated and
// freed while kCounting since it claimed the slot (its first kCounting, or its first counted
// event), cumulative, so take differences. False, leaving *out untouched, when the thread has no
// slot of its own: it never counted, or it counts through the shared overflow block (the pool of
// slots is full, or the thread is past its exit fold); its events are then only in Read()'s
// totals, mixed with other threads'. Reads only this thread's slot: no allocation, no lock.
bool ReadThisThread(Counters* out) noexcept;

// Live bytes (usable) allocated minus freed by all kCounting threads together, and the highest
// value that reached, since the last ResetLive(), which zeroes both (live bytes go negative
// when blocks allocated before it are freed). Process-wide, not per thread, because one thread
// of a scenario may free what another allocated. Both stay 0 under Tracking::kBasic.
void ResetLive() noexcept;
int64_t PeakLiveBytes() noexcept;
int64_t LiveBytes() noexcept;

// Recording entry points with the same attribution as the interposed functions: a no-op unless
// Active(), then scenario (kCounting) or background (kUnassigned, window open). Tests call them
// directly to exercise the bookkeeping without interposition (e.g. under TSan). `usable` is
// ignored under Tracking::kBasic. (The interposed functions use an inline internal path.)
void RecordAlloc(size_t requested, size_t usable) noexcept;
void RecordFree(size_t usable) noexcept;

// An observer of counted events with their pointers (allocbench::testing's recorder). Called
// on the thread that made the event, after it was counted, under the re-entry guard: nothing
// the observer allocates or frees is counted or observed, and it must not throw. An allocation
// is passed once it succeeded; a free before the block is released. realloc is a free of the
// old block and an allocation of the new one (as it is counted).
struct Observer {
  void (*on_alloc)(Observer* self, void* p, size_t requested) noexcept;
  void (*on_free)(Observer* self, void* p) noexcept;
};

// The calling thread's observer of its own kCounting events, or nullptr; returns the one it
// replaces. While one is set, the thread's counted events take the out-of-line path (the hooks'
// fast path has no pointer to pass). Other threads and modes are unaffected.
Observer* SetThreadObserver(Observer* observer) noexcept;

// The process-wide observer of background events (kUnassigned threads while the background
// window is open), or nullptr; returns the one it replaces once no thread is still calling
// it (it may then be destroyed). Never call it from inside an observer.
Observer* SetBackgroundObserver(Observer* observer) noexcept;

// Would an allocation on this thread be counted now? False inside the counting layer's own
// bookkeeping (re-entry guard).
bool Active() noexcept;

// The allocator's own view of the process (its statistics, not ours): bytes it holds from the
// OS and bytes it has handed out and not taken back; -1 where the backend does not say, and
// both -1 in a binary without a backend. Reading may take the allocator's locks; never call it
// from inside an allocation.
struct AllocatorFootprint {
  int64_t mapped_bytes = -1;
  int64_t allocated_bytes = -1;
};
AllocatorFootprint ReadAllocatorFootprint() noexcept;

// The backend linked into this process ("glibc", "jemalloc", "mimalloc", "tcmalloc") and its
// version, or "none" when the process has no interposition (a counters-only test binary).
const char* BackendName() noexcept;
const char* BackendVersion() noexcept;

}  // namespace allocbench::counting

#endif  // ALLOCBENCH_COUNTING_H_
