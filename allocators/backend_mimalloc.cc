// mimalloc through its mi_* API. The hooks own malloc/free, so the standard names (which
// Debian's libmimalloc also defines) would loop back to us.
#include <mimalloc.h>

#include "backend.h"

namespace allocbench::backend {

void* Malloc(size_t size) noexcept { return mi_malloc(size); }
void* Calloc(size_t count, size_t size) noexcept { return mi_calloc(count, size); }
void* Realloc(void* p, size_t size) noexcept { return mi_realloc(p, size); }
void Free(void* p) noexcept { mi_free(p); }
void* Memalign(size_t alignment, size_t size) noexcept {
  return mi_malloc_aligned(size, alignment);
}
size_t UsableSize(void* p) noexcept { return mi_usable_size(p); }

void Stats(int64_t* mapped, int64_t* allocated) noexcept {
  size_t elapsed, user, system, rss, peak_rss, commit, peak_commit, faults;
  mi_process_info(&elapsed, &user, &system, &rss, &peak_rss, &commit, &peak_commit, &faults);
  *mapped = static_cast<int64_t>(commit);
  *allocated = -1;  // mimalloc 2.0 keeps no cheap process-wide total of live bytes
}

const char* Name() noexcept { return "mimalloc"; }
const char* Version() noexcept {
  // mi_version() encodes major*100 + minor*10 + patch (209 for 2.0.9). Formatted by hand:
  // snprintf may allocate, and this can run with counting on.
  static const struct Text {
    char digits[12] = {};
    Text() {
      const int v = mi_version();
      const int parts[] = {v / 100, (v / 10) % 10, v % 10};
      char* out = digits;
      for (int i = 0; i < 3; ++i) {
        if (i > 0) *out++ = '.';
        if (parts[i] >= 10) *out++ = static_cast<char>('0' + parts[i] / 10 % 10);
        *out++ = static_cast<char>('0' + parts[i] % 10);
      }
    }
  } text;
  return text.digits;
}

}  // namespace allocbench::backend
