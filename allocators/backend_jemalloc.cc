// jemalloc through its non-standard API (mallocx & co.), which Debian's libjemalloc exports
// unprefixed. The hooks own malloc/free, so the standard names would loop back to us.
#include <jemalloc/jemalloc.h>

#include "backend.h"

namespace allocbench::backend {
namespace {

// mallocx/rallocx leave size 0 undefined; malloc(0) must still return a unique pointer.
size_t NonZero(size_t size) { return size == 0 ? 1 : size; }

}  // namespace

void* Malloc(size_t size) noexcept { return mallocx(NonZero(size), 0); }
void* Calloc(size_t count, size_t size) noexcept {
  return mallocx(NonZero(count * size), MALLOCX_ZERO);
}
void* Realloc(void* p, size_t size) noexcept { return rallocx(p, size, 0); }
void Free(void* p) noexcept {
  if (p != nullptr) dallocx(p, 0);  // dallocx(nullptr) is undefined
}
void* Memalign(size_t alignment, size_t size) noexcept {
  return mallocx(NonZero(size), MALLOCX_ALIGN(alignment));
}
size_t UsableSize(void* p) noexcept { return sallocx(p, 0); }

void Stats(int64_t* mapped, int64_t* allocated) noexcept {
  uint64_t epoch = 1;  // statistics are cached until the epoch advances
  size_t length = sizeof(epoch);
  mallctl("epoch", &epoch, &length, &epoch, length);
  const auto read = [](const char* name) -> int64_t {
    size_t value = 0;
    size_t size = sizeof(value);
    return mallctl(name, &value, &size, nullptr, 0) == 0 ? static_cast<int64_t>(value) : -1;
  };
  *mapped = read("stats.mapped");
  *allocated = read("stats.allocated");
}

const char* Name() noexcept { return "jemalloc"; }
const char* Version() noexcept {
  static const char* const version = [] {
    const char* v = nullptr;
    size_t length = sizeof(v);
    return mallctl("version", &v, &length, nullptr, 0) == 0 && v != nullptr ? v : "unknown";
  }();
  return version;
}

}  // namespace allocbench::backend
