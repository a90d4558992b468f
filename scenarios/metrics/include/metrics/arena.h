// A bump arena for immutable strings: chunks of a fixed size, the first one allocated at
// construction. That first chunk is the arena's memory floor, paid even when nothing is ever
// stored; a sharded dictionary pays it once per shard.
//
// Chunks come from `new char[]` and are never written until used, so an empty arena costs its
// chunk in the allocator's accounting (and in virtual memory) but little in RSS.
// Not thread-safe.
#ifndef ALLOCBENCH_REFERENCE_METRICS_ARENA_H_
#define ALLOCBENCH_REFERENCE_METRICS_ARENA_H_

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

namespace metrics {

class Arena {
 public:
  // REQUIRES: chunk_bytes > 0.
  explicit Arena(size_t chunk_bytes);
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // A copy of `s` that lives as long as the arena. A string longer than a chunk gets a block
  // of its own; otherwise, when the current chunk is too full, a new chunk is started.
  std::string_view Copy(std::string_view s);

  size_t chunk_bytes() const { return chunk_bytes_; }
  size_t chunk_count() const { return chunks_.size(); }
  size_t reserved_bytes() const { return reserved_bytes_; }  // all chunks, used or not

 private:
  char* NewBlock(size_t bytes);

  size_t chunk_bytes_;
  std::vector<std::unique_ptr<char[]>> chunks_;
  char* cursor_ = nullptr;  // free space of the current chunk: [cursor_, end_)
  char* end_ = nullptr;
  size_t reserved_bytes_ = 0;
};

}  // namespace metrics

#endif  // ALLOCBENCH_REFERENCE_METRICS_ARENA_H_
