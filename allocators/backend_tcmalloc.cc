// gperftools' tcmalloc through its tc_* API. The hooks own malloc/free, so the standard names
// (which libtcmalloc also defines) would loop back to us.
#include <gperftools/malloc_extension_c.h>
#include <gperftools/tcmalloc.h>

#include "backend.h"

namespace allocbench::backend {

void* Malloc(size_t size) noexcept { return tc_malloc(size); }
void* Calloc(size_t count, size_t size) noexcept { return tc_calloc(count, size); }
void* Realloc(void* p, size_t size) noexcept { return tc_realloc(p, size); }
void Free(void* p) noexcept { tc_free(p); }
void* Memalign(size_t alignment, size_t size) noexcept { return tc_memalign(alignment, size); }
size_t UsableSize(void* p) noexcept { return tc_malloc_size(p); }

void Stats(int64_t* mapped, int64_t* allocated) noexcept {
  const auto read = [](const char* name) -> int64_t {
    size_t value = 0;
    return MallocExtension_GetNumericProperty(name, &value) ? static_cast<int64_t>(value) : -1;
  };
  *mapped = read("generic.heap_size");
  *allocated = read("generic.current_allocated_bytes");
}

const char* Name() noexcept { return "tcmalloc"; }
const char* Version() noexcept {
  // "gperftools 2.10"; a static string owned by the library.
  int major = 0;
  int minor = 0;
  const char* patch = nullptr;
  return tc_version(&major, &minor, &patch);
}

}  // namespace allocbench::backend
