// The allocator that comes next in the dynamic linker's search order (dlsym RTLD_NEXT): the C
// library's, or a profiler's hooks preloaded in front of it. `allocbench-run-profile` links
// this backend so that every allocation the count pass counts also reaches heaptrack's
// LD_PRELOAD hooks, which never see a call in the other runners: their executable defines
// malloc and operator new itself and calls its allocator directly.
//
// Sizes are passed on as requested (the C library gives size 0 a unique pointer), so that the
// profiler records the bytes the count pass counts. The functions are looked up on first use. dlsym
// may itself allocate (its error buffer): a call made while the look-up is under way is served from
// a small static arena, whose blocks are never handed to the next allocator (Free and UsableSize
// recognise them).
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "backend.h"
#include "thread_state.h"

namespace allocbench::backend {
namespace {

using MallocFn = void* (*)(size_t);
using CallocFn = void* (*)(size_t, size_t);
using ReallocFn = void* (*)(void*, size_t);
using FreeFn = void (*)(void*);
using MemalignFn = int (*)(void**, size_t, size_t);
using UsableSizeFn = size_t (*)(void*);

struct Next {
  MallocFn malloc;
  CallocFn calloc;
  ReallocFn realloc;
  FreeFn free;
  MemalignFn posix_memalign;
  UsableSizeFn usable_size;
};

Next g_next;
std::atomic<int> g_state{0};  // 0 not resolved, 1 resolving, 2 resolved

// Blocks for dlsym's own allocations while the look-up runs; 16-byte aligned, size-prefixed.
alignas(16) char g_arena[16 * 1024];
std::atomic<size_t> g_arena_used{0};

bool InArena(const void* p) {
  const char* c = static_cast<const char*>(p);
  return c >= g_arena && c < g_arena + sizeof(g_arena);
}

void* ArenaAlloc(size_t size) {
  const size_t need = 16 + ((size + 15) & ~size_t{15});
  const size_t at = g_arena_used.fetch_add(need, std::memory_order_relaxed);
  if (at + need > sizeof(g_arena)) return nullptr;
  std::memcpy(g_arena + at, &size, sizeof(size));
  return g_arena + at + 16;
}

size_t ArenaSize(const void* p) {
  size_t size = 0;
  std::memcpy(&size, static_cast<const char*>(p) - 16, sizeof(size));
  return size;
}

template <typename Fn>
Fn Find(const char* name) {
  void* found = dlsym(RTLD_NEXT, name);
  if (found == nullptr) {
    static const char kMessage[] = "allocbench: no next definition of an allocation function\n";
    (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    abort();
  }
  return reinterpret_cast<Fn>(found);
}

// True when g_next is usable; false while this thread (or another) is resolving it.
__attribute__((noinline, cold)) bool Resolve() noexcept {
  int expected = 0;
  if (!g_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    return expected == 2;
  }
  counting::internal::ReentryGuard guard;  // dlsym's allocations are not the program's
  Next next;
  next.malloc = Find<MallocFn>("malloc");
  next.calloc = Find<CallocFn>("calloc");
  next.realloc = Find<ReallocFn>("realloc");
  next.free = Find<FreeFn>("free");
  next.posix_memalign = Find<MemalignFn>("posix_memalign");
  next.usable_size = Find<UsableSizeFn>("malloc_usable_size");
  g_next = next;
  g_state.store(2, std::memory_order_release);
  return true;
}

inline bool Ready() noexcept {
  return ALLOCBENCH_LIKELY(g_state.load(std::memory_order_acquire) == 2) || Resolve();
}

__attribute__((constructor)) void ResolveAtStartup() { Ready(); }

}  // namespace

void* Malloc(size_t size) noexcept { return Ready() ? g_next.malloc(size) : ArenaAlloc(size); }

void* Calloc(size_t count, size_t size) noexcept {
  if (Ready()) return g_next.calloc(count, size);
  return ArenaAlloc(count * size);  // static storage: already zero, never reused
}

void* Realloc(void* p, size_t size) noexcept {
  if (InArena(p)) {  // out of the arena, into the next allocator
    void* moved = Malloc(size);
    if (moved != nullptr) {
      const size_t old = ArenaSize(p);
      std::memcpy(moved, p, old < size ? old : size);
    }
    return moved;
  }
  return Ready() ? g_next.realloc(p, size) : nullptr;
}

void Free(void* p) noexcept {
  if (p == nullptr || InArena(p)) return;
  if (Ready()) g_next.free(p);
}

void* Memalign(size_t alignment, size_t size) noexcept {
  if (!Ready()) return alignment <= 16 ? ArenaAlloc(size) : nullptr;
  void* p = nullptr;
  return g_next.posix_memalign(&p, alignment, size) == 0 ? p : nullptr;
}

size_t UsableSize(void* p) noexcept {
  if (InArena(p)) return ArenaSize(p);
  return Ready() ? g_next.usable_size(p) : 0;
}

void Stats(int64_t* mapped, int64_t* allocated) noexcept {
  *mapped = -1;  // the next allocator is not known to say anything
  *allocated = -1;
}

const char* Name() noexcept { return "next"; }
const char* Version() noexcept { return "the next definition (RTLD_NEXT)"; }

}  // namespace allocbench::backend
