// An append-only string pool handing out (offset, length) handles: 8 bytes per string instead
// of a 32-byte std::string plus, above 15 characters, a heap block of its own.
//
// Storage is a list of fixed-size chunks; a string never spans two chunks, so a handle is read
// back in O(1): chunk = offset >> log2(chunk_bytes). Chunk sizes are powers of two because
// serialization reads two handles per tag, and two 64-bit divisions per tag made it measurably
// slower than copying owned strings. A string longer than a chunk gets a block of its
// own that occupies as many chunk slots as it needs, so offsets stay a plain multiple of the
// chunk size. Appending never moves earlier strings: views stay valid for the pool's life.
//
// Not thread-safe.
#ifndef ALLOCBENCH_REFERENCE_METRICS_STRING_POOL_H_
#define ALLOCBENCH_REFERENCE_METRICS_STRING_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace metrics {

struct PoolHandle {
  uint32_t offset;
  uint32_t length;
};

class StringPool {
 public:
  static constexpr size_t kDefaultChunkBytes = 64 * 1024;

  // Allocates nothing until the first Append(). `chunk_bytes` is rounded up to a power of two.
  explicit StringPool(size_t chunk_bytes = kDefaultChunkBytes);
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;

  // Copies `s` into the pool. Throws std::length_error past 4 GiB of offsets.
  PoolHandle Append(std::string_view s);

  // REQUIRES: `handle` came from this pool's Append().
  std::string_view View(PoolHandle handle) const {
    if (handle.length == 0) return std::string_view();
    const char* chunk = chunks_[handle.offset >> chunk_shift_].get();
    return std::string_view(chunk + (handle.offset & (chunk_bytes_ - 1)), handle.length);
  }

  size_t chunk_bytes() const { return chunk_bytes_; }
  size_t chunk_count() const { return chunk_count_; }  // blocks allocated, oversized included
  // Heap blocks allocated and their bytes (chunks and the chunk list): the pool's whole cost,
  // known by construction.
  size_t allocations() const { return allocations_; }
  size_t allocated_bytes() const { return allocated_bytes_; }

 private:
  char* AddBlock(size_t bytes);  // a chunk or an oversized string's block, in the next slot
  void AddSlot(std::unique_ptr<char[]> block);

  int chunk_shift_;
  size_t chunk_bytes_;                           // 1 << chunk_shift_
  std::vector<std::unique_ptr<char[]>> chunks_;  // one per chunk slot; null after an oversized
  size_t used_in_last_ = 0;                      // bytes used in chunks_.back()
  size_t chunk_count_ = 0;
  size_t allocations_ = 0;
  size_t allocated_bytes_ = 0;
};

}  // namespace metrics

#endif  // ALLOCBENCH_REFERENCE_METRICS_STRING_POOL_H_
