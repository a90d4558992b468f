// The C allocation functions, defined in the executable so that they preempt the C library's
// (and the backend library's own malloc) for every object in the process, including shared
// libraries dlopen'ed later (the executable exports them: see hooks.dynlist).
//
// Built with -fno-builtin: GCC would otherwise turn malloc+memset into calloc, or elide a pair.
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "backend.h"
#include "hooks_common.h"

namespace {

namespace backend = allocbench::backend;
namespace ci = allocbench::counting::internal;
using allocbench::hooks::CountedAlloc;
using allocbench::hooks::CountedFree;

bool IsPowerOfTwo(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

size_t PageSize() {
  static std::atomic<size_t> page{0};  // sysconf once; it does not allocate
  size_t size = page.load(std::memory_order_relaxed);
  if (ALLOCBENCH_UNLIKELY(size == 0)) {
    size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    page.store(size, std::memory_order_relaxed);
  }
  return size;
}

// POSIX wants ENOMEM on failure; not every backend's non-standard API sets it.
void* OrEnomem(void* p) {
  if (ALLOCBENCH_UNLIKELY(p == nullptr)) errno = ENOMEM;
  return p;
}

void* Malloc(size_t size) {
  return OrEnomem(CountedAlloc(size, [size] { return backend::Malloc(size); }));
}

// REQUIRES: alignment is a power of two.
void* Aligned(size_t alignment, size_t size) {
  alignment = alignment < sizeof(void*) ? sizeof(void*) : alignment;
  return OrEnomem(CountedAlloc(size, [=] { return backend::Memalign(alignment, size); }));
}

void* Realloc(void* p, size_t size) {
  if (p == nullptr) return Malloc(size);
  if (size == 0) {
    CountedFree(p);
    return nullptr;
  }
  if (ALLOCBENCH_LIKELY(!ci::ShouldCount())) return OrEnomem(backend::Realloc(p, size));
  const uintptr_t target = ci::tls_state.fast_target;
  ci::ReentryGuard guard;
  const size_t old_usable = ci::FreeNeedsUsable() ? backend::UsableSize(p) : 0;
  void* moved = backend::Realloc(p, size);
  if (moved == nullptr) return OrEnomem(nullptr);  // p untouched: nothing happened
  ci::RecordFreeAs(target, old_usable);
  ci::RecordAllocAs(target, size, ci::FullTracking() ? backend::UsableSize(moved) : 0);
  ci::ObserveFree(p);  // the old address, released by now: observers only match it
  ci::ObserveAlloc(moved, size);
  return moved;
}

}  // namespace

extern "C" {

void* malloc(size_t size) noexcept { return Malloc(size); }

void* calloc(size_t count, size_t size) noexcept {
  size_t total = 0;
  if (__builtin_mul_overflow(count, size, &total)) return OrEnomem(nullptr);
  return OrEnomem(CountedAlloc(total, [=] { return backend::Calloc(count, size); }));
}

// realloc and reallocarray. Counted as what they do: one allocation (p == nullptr), one free
// (size == 0; glibc frees and returns nullptr, and so do we under every backend), or one free
// plus one allocation.
void* realloc(void* p, size_t size) noexcept { return Realloc(p, size); }

// Defined although glibc's own calls realloc: Debian's libmimalloc exports a reallocarray of
// its own that would otherwise win over glibc's and bypass the hooks.
void* reallocarray(void* p, size_t count, size_t size) noexcept {
  size_t total = 0;
  if (__builtin_mul_overflow(count, size, &total)) return OrEnomem(nullptr);
  return Realloc(p, total);
}

void free(void* p) noexcept { CountedFree(p); }

int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  if (!IsPowerOfTwo(alignment) || alignment % sizeof(void*) != 0) return EINVAL;
  const int saved_errno = errno;  // posix_memalign reports through its result only
  void* p = Aligned(alignment, size);
  errno = saved_errno;
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

// C17 and glibc >= 2.38: the alignment must be a power of two.
void* aligned_alloc(size_t alignment, size_t size) noexcept {
  if (!IsPowerOfTwo(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return Aligned(alignment, size);
}

// glibc's memalign rounds an alignment that is not a power of two up to one.
void* memalign(size_t alignment, size_t size) noexcept {
  if (alignment > SIZE_MAX / 2 + 1) {
    errno = EINVAL;
    return nullptr;
  }
  size_t rounded = 1;
  while (rounded < alignment) rounded <<= 1;
  return Aligned(rounded, size);
}

void* valloc(size_t size) noexcept { return Aligned(PageSize(), size); }

// pvalloc allocates whole pages: the request is the size rounded up to the page size.
void* pvalloc(size_t size) noexcept {
  const size_t page = PageSize();
  size_t rounded = 0;
  if (__builtin_add_overflow(size, page - 1, &rounded)) return OrEnomem(nullptr);
  return Aligned(page, rounded & ~(page - 1));
}

size_t malloc_usable_size(void* p) noexcept { return p == nullptr ? 0 : backend::UsableSize(p); }

}  // extern "C"
