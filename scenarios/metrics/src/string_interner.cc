#include "metrics/string_interner.h"

#include <cstdint>

namespace metrics {

StringInterner::StringInterner(size_t chunk_bytes) : pool_(chunk_bytes) {}

PoolHandle StringInterner::Intern(std::string_view s) {
  const uint32_t position = index_.FindOrInsert(
      HashString(s), [&](uint32_t candidate) { return pool_.View(handles_[candidate]) == s; },
      [&] {
        const size_t capacity = handles_.capacity();
        handles_.push_back(pool_.Append(s));
        if (handles_.capacity() != capacity) {
          ++list_allocations_;
          list_bytes_ += handles_.capacity() * sizeof(PoolHandle);
        }
        return static_cast<uint32_t>(handles_.size() - 1);
      });
  return handles_[position];
}

size_t StringInterner::allocations() const {
  return pool_.allocations() + index_.allocations() + list_allocations_;
}

size_t StringInterner::allocated_bytes() const {
  return pool_.allocated_bytes() + index_.allocated_bytes() + list_bytes_;
}

}  // namespace metrics
