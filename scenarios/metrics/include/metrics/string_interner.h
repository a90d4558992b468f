// Interns strings into a StringPool: equal strings get the same handle, so a tag key repeated
// on 7,500 contexts (or a value shared by many) is stored once.
//
// Not thread-safe.
#ifndef ALLOCBENCH_REFERENCE_METRICS_STRING_INTERNER_H_
#define ALLOCBENCH_REFERENCE_METRICS_STRING_INTERNER_H_

#include <cstddef>
#include <string_view>
#include <vector>

#include "metrics/hash_index.h"
#include "metrics/string_pool.h"

namespace metrics {

class StringInterner {
 public:
  // Allocates nothing until the first Intern().
  explicit StringInterner(size_t chunk_bytes = StringPool::kDefaultChunkBytes);

  PoolHandle Intern(std::string_view s);
  std::string_view View(PoolHandle handle) const { return pool_.View(handle); }

  size_t size() const { return handles_.size(); }  // distinct strings
  const StringPool& pool() const { return pool_; }
  // Heap blocks allocated by the pool, the index and the handle list, and their bytes.
  size_t allocations() const;
  size_t allocated_bytes() const;

 private:
  StringPool pool_;
  HashIndex index_;                  // hash -> position in handles_
  std::vector<PoolHandle> handles_;  // position -> handle
  size_t list_allocations_ = 0;
  size_t list_bytes_ = 0;
};

}  // namespace metrics

#endif  // ALLOCBENCH_REFERENCE_METRICS_STRING_INTERNER_H_
