// glibc's allocator, reached through its __libc_* entry points because the hooks own the public
// names (malloc, free, ...) in this process.
#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "backend.h"
#include "thread_state.h"

extern "C" {
void* __libc_malloc(size_t size) noexcept;
void* __libc_calloc(size_t count, size_t size) noexcept;
void* __libc_realloc(void* p, size_t size) noexcept;
void __libc_free(void* p) noexcept;
void* __libc_memalign(size_t alignment, size_t size) noexcept;
}

namespace allocbench::backend {
namespace {

using UsableSizeFn = size_t (*)(void*);
std::atomic<UsableSizeFn> g_libc_usable_size{nullptr};

// glibc exports no __libc_ alias for malloc_usable_size, and the name itself resolves to our
// hook. A dlsym on libc's own handle searches libc's local scope, where its definition wins.
// Out of line, so that UsableSize() stays a load and an indirect tail call.
__attribute__((noinline, cold)) UsableSizeFn ResolveUsableSize() noexcept {
  counting::internal::ReentryGuard guard;  // dlopen's own allocations are not the program's
  UsableSizeFn fn = nullptr;
  void* libc = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
  if (libc != nullptr) {
    fn = reinterpret_cast<UsableSizeFn>(dlsym(libc, "malloc_usable_size"));
    dlclose(libc);  // RTLD_NOLOAD still took a reference; libc itself stays loaded
  }
  if (fn == nullptr) {
    static const char kMessage[] = "allocbench: cannot find glibc's malloc_usable_size\n";
    (void)!write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    abort();
  }
  g_libc_usable_size.store(fn, std::memory_order_release);
  return fn;
}

UsableSizeFn LibcUsableSize() noexcept {
  UsableSizeFn fn = g_libc_usable_size.load(std::memory_order_acquire);
  return ALLOCBENCH_LIKELY(fn != nullptr) ? fn : ResolveUsableSize();
}

// Resolve before main so that no look-up happens inside a measured loop.
__attribute__((constructor)) void ResolveAtStartup() { LibcUsableSize(); }

}  // namespace

void* Malloc(size_t size) noexcept { return __libc_malloc(size); }
void* Calloc(size_t count, size_t size) noexcept { return __libc_calloc(count, size); }
void* Realloc(void* p, size_t size) noexcept { return __libc_realloc(p, size); }
void Free(void* p) noexcept { __libc_free(p); }
void* Memalign(size_t alignment, size_t size) noexcept { return __libc_memalign(alignment, size); }
size_t UsableSize(void* p) noexcept { return LibcUsableSize()(p); }

void Stats(int64_t* mapped, int64_t* allocated) noexcept {
  const struct mallinfo2 info = mallinfo2();
  // arena: sbrk'ed main-arena bytes plus other arenas' heaps; hblkhd: blocks mmapped one by one.
  *mapped = static_cast<int64_t>(info.arena + info.hblkhd);
  *allocated = static_cast<int64_t>(info.uordblks + info.hblkhd);
}

const char* Name() noexcept { return "glibc"; }
const char* Version() noexcept { return gnu_get_libc_version(); }

}  // namespace allocbench::backend
