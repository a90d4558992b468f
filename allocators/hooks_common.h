// Internal to allocators/: the one pattern every interposed function follows, so that the
// operator new/delete forms and the malloc family cannot drift apart.
//
//  - Not counting (a time pass, any thread outside its measured loop): forward to the backend.
//  - Scenario, Tracking::kBasic (a count pass): the fast path. Call the backend, then bump
//    the thread's two counters if the allocation succeeded; for a free, bump the counter, then
//    tail-call the backend. No guard and no usable-size look-up: this keeps a count pass
//    within a few percent of an uncounted run (bench/).
//  - Everything else (kFull, background, a thread without a slot): out of line, holding the
//    re-entry guard across the backend call and the bookkeeping (the usable-size look-up, the
//    slot claim), so that nothing they do is counted or recurses. The allocation is recorded
//    once it succeeded; a free before the pointer is released (its usable size cannot be asked
//    for afterwards, and another thread may already own the address).
//
// The fast path does not hold the guard across the backend call: the bookkeeping there is two
// stores and triggers nothing, and no backend calls the public malloc from its own malloc
// (tests/counting pins one malloc == one allocation under each backend, on new threads too).
#ifndef ALLOCBENCH_ALLOCATORS_HOOKS_COMMON_H_
#define ALLOCBENCH_ALLOCATORS_HOOKS_COMMON_H_

#include <cstddef>
#include <cstdint>

#include "backend.h"
#include "thread_state.h"

namespace allocbench::hooks {

namespace ci = counting::internal;

// Out of line: kFull, background, and threads counting without a slot.
template <typename Allocate>
__attribute__((noinline)) void* CountedAllocPath(size_t requested, Allocate allocate) noexcept {
  const uintptr_t target = ci::tls_state.fast_target;
  ci::ReentryGuard guard;
  void* p = allocate();
  if (ALLOCBENCH_LIKELY(p != nullptr)) {
    ci::RecordAllocAs(target, requested, ci::FullTracking() ? backend::UsableSize(p) : 0);
    ci::ObserveAlloc(p, requested);
  }
  return p;
}

__attribute__((noinline)) inline void CountedFreePath(void* p) noexcept {
  const uintptr_t target = ci::tls_state.fast_target;
  ci::ReentryGuard guard;
  ci::RecordFreeAs(target, ci::FreeNeedsUsable() ? backend::UsableSize(p) : 0);
  ci::ObserveFree(p);
  backend::Free(p);
}

// Allocates with `allocate()` and counts one allocation of `requested` bytes if it succeeded.
template <typename Allocate>
inline void* CountedAlloc(size_t requested, Allocate allocate) noexcept {
  const uintptr_t target = ci::tls_state.fast_target;
  if (target >= ci::kFirstPointer && ALLOCBENCH_LIKELY(!ci::FullTracking())) {
    void* p = allocate();
    if (ALLOCBENCH_LIKELY(p != nullptr)) {
      ci::Counts& c = ci::AsCounts(target);
      ci::Bump(c.allocs, 1);
      ci::Bump(c.requested_bytes, requested);
    }
    return p;
  }
  if (target >= ci::kFirstPointer || (target == ci::kSlowPath && ci::SlowPathCounts())) {
    return CountedAllocPath(requested, allocate);
  }
  return allocate();
}

// Counts one free of `p` unless it is nullptr, then releases it with the backend. (The
// not-counting path leaves nullptr to the backend, for which it is a no-op.)
inline void CountedFree(void* p) noexcept {
  const uintptr_t target = ci::tls_state.fast_target;
  if (target >= ci::kFirstPointer && ALLOCBENCH_LIKELY(!ci::FullTracking())) {
    if (p == nullptr) return;
    ci::Bump(ci::AsCounts(target).frees, 1);
    return backend::Free(p);
  }
  if (target >= ci::kFirstPointer || (target == ci::kSlowPath && ci::SlowPathCounts())) {
    if (p == nullptr) return;
    return CountedFreePath(p);
  }
  return backend::Free(p);
}

}  // namespace allocbench::hooks

#endif  // ALLOCBENCH_ALLOCATORS_HOOKS_COMMON_H_
