// Internal to allocators/: the allocator the interposed functions forward to. Exactly one
// backend_<name>.cc is linked into a counted executable.
//
// The hooks normalise the C library's edge cases (malloc(0), realloc(p, 0), calloc overflow,
// alignment rounding) before calling here, so that every backend sees the same requests and
// the requested-bytes count cannot depend on the backend.
#ifndef ALLOCBENCH_ALLOCATORS_BACKEND_H_
#define ALLOCBENCH_ALLOCATORS_BACKEND_H_

#include <cstddef>
#include <cstdint>

namespace allocbench::backend {

// Returns a unique pointer even for size 0; nullptr on exhaustion.
void* Malloc(size_t size) noexcept;
// REQUIRES: count * size does not overflow. Zeroed memory.
void* Calloc(size_t count, size_t size) noexcept;
// REQUIRES: p != nullptr, size != 0. nullptr on exhaustion, p left intact.
void* Realloc(void* p, size_t size) noexcept;
// REQUIRES: p allocated by this backend, or nullptr (a no-op).
void Free(void* p) noexcept;
// REQUIRES: alignment is a power of two and >= sizeof(void*).
void* Memalign(size_t alignment, size_t size) noexcept;
// REQUIRES: p != nullptr, allocated by this backend.
size_t UsableSize(void* p) noexcept;

// The allocator's own view of the process: bytes it holds from the OS (mapped, committed or
// heap size, whichever it reports) and bytes handed out and not yet freed; -1 where it does not
// say. Never called from inside the hooks.
void Stats(int64_t* mapped, int64_t* allocated) noexcept;

// "glibc", "jemalloc", "mimalloc", "tcmalloc", and the library's own version string.
const char* Name() noexcept;
const char* Version() noexcept;

}  // namespace allocbench::backend

#endif  // ALLOCBENCH_ALLOCATORS_BACKEND_H_
