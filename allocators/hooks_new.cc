// Every replaceable form of operator new and operator delete (the checklist is mimalloc's
// mimalloc-new-delete.h): plain/array x throwing/nothrow x aligned, and delete plain, sized,
// nothrow, aligned, sized+aligned, aligned+nothrow. All of them, so that every form takes the
// same path (one count per call, straight to the backend) instead of depending on how the C++
// runtime's versions happen to forward to malloc, and so that the dynamic list exports all.
//
// Built with -fno-builtin, like hooks_malloc.cc.
#include <cstddef>
#include <new>

#include "backend.h"
#include "hooks_common.h"

namespace {

namespace backend = allocbench::backend;
using allocbench::hooks::CountedAlloc;
using allocbench::hooks::CountedFree;

inline void* TryNew(size_t size) noexcept {
  return CountedAlloc(size, [size] { return backend::Malloc(size); });
}

inline void* TryNewAligned(size_t size, std::align_val_t alignment) noexcept {
  size_t align = static_cast<size_t>(alignment);
  align = align < sizeof(void*) ? sizeof(void*) : align;
  return CountedAlloc(size, [=] { return backend::Memalign(align, size); });
}

// [new.delete.single]: after a failed attempt, call the new_handler and retry until it gives
// up by throwing (or there is none: throw bad_alloc). Out of line and cold, so that the first
// attempt, inlined into each operator new, carries no loop or exception handling.
template <typename Try>
__attribute__((noinline, cold)) void* RetryOrThrow(Try try_new) {
  for (;;) {
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
    if (void* p = try_new()) return p;
  }
}

// The nothrow forms behave as the throwing ones inside a try block: nullptr instead of a throw.
template <typename Try>
__attribute__((noinline, cold)) void* RetryOrNull(Try try_new) noexcept {
  for (;;) {
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) return nullptr;
    try {
      handler();
    } catch (...) {
      return nullptr;
    }
    if (void* p = try_new()) return p;
  }
}

template <typename Try>
inline void* NewOrThrow(Try try_new) {
  void* p = try_new();
  return ALLOCBENCH_LIKELY(p != nullptr) ? p : RetryOrThrow(try_new);
}

template <typename Try>
inline void* NewOrNull(Try try_new) noexcept {
  void* p = try_new();
  return ALLOCBENCH_LIKELY(p != nullptr) ? p : RetryOrNull(try_new);
}

}  // namespace

void* operator new(size_t size) {
  return NewOrThrow([=] { return TryNew(size); });
}
void* operator new[](size_t size) {
  return NewOrThrow([=] { return TryNew(size); });
}
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  return NewOrNull([=] { return TryNew(size); });
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  return NewOrNull([=] { return TryNew(size); });
}
void* operator new(size_t size, std::align_val_t alignment) {
  return NewOrThrow([=] { return TryNewAligned(size, alignment); });
}
void* operator new[](size_t size, std::align_val_t alignment) {
  return NewOrThrow([=] { return TryNewAligned(size, alignment); });
}
void* operator new(size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return NewOrNull([=] { return TryNewAligned(size, alignment); });
}
void* operator new[](size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return NewOrNull([=] { return TryNewAligned(size, alignment); });
}

// Every backend frees any of its blocks, aligned or not, without the size or the alignment.
void operator delete(void* p) noexcept { CountedFree(p); }
void operator delete[](void* p) noexcept { CountedFree(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { CountedFree(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { CountedFree(p); }
void operator delete(void* p, size_t) noexcept { CountedFree(p); }
void operator delete[](void* p, size_t) noexcept { CountedFree(p); }
void operator delete(void* p, std::align_val_t) noexcept { CountedFree(p); }
void operator delete[](void* p, std::align_val_t) noexcept { CountedFree(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { CountedFree(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { CountedFree(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { CountedFree(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  CountedFree(p);
}
