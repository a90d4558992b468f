#include "metrics/string_pool.h"

#include <cstring>
#include <stdexcept>

namespace metrics {

namespace {

int Log2Ceil(size_t n) {
  int shift = 0;
  while ((size_t{1} << shift) < n) ++shift;
  return shift;
}

}  // namespace

StringPool::StringPool(size_t chunk_bytes)
    : chunk_shift_(Log2Ceil(chunk_bytes)), chunk_bytes_(size_t{1} << chunk_shift_) {}

PoolHandle StringPool::Append(std::string_view s) {
  if (s.empty()) return PoolHandle{0, 0};  // View() never touches a chunk for it
  size_t offset;
  char* destination;
  if (s.size() > chunk_bytes_) {
    // Oversized: a block of its own, starting on a slot boundary and covering as many slots as
    // it needs; the chunk being filled is abandoned (its tail is wasted, as at any chunk end).
    offset = chunks_.size() * chunk_bytes_;
    destination = AddBlock(s.size());
    for (size_t covered = chunk_bytes_; covered < s.size(); covered += chunk_bytes_) {
      AddSlot(nullptr);
    }
    used_in_last_ = chunk_bytes_;  // the next string starts a fresh chunk
  } else {
    if (chunks_.empty() || chunk_bytes_ - used_in_last_ < s.size()) {
      AddBlock(chunk_bytes_);
      used_in_last_ = 0;
    }
    offset = (chunks_.size() - 1) * chunk_bytes_ + used_in_last_;
    destination = chunks_.back().get() + used_in_last_;
    used_in_last_ += s.size();
  }
  std::memcpy(destination, s.data(), s.size());
  return PoolHandle{static_cast<uint32_t>(offset), static_cast<uint32_t>(s.size())};
}

char* StringPool::AddBlock(size_t bytes) {
  // `new char[]`, not make_unique: the block stays untouched (not resident) until written.
  std::unique_ptr<char[]> block(new char[bytes]);
  char* data = block.get();
  AddSlot(std::move(block));
  ++chunk_count_;
  ++allocations_;
  allocated_bytes_ += bytes;
  return data;
}

void StringPool::AddSlot(std::unique_ptr<char[]> block) {
  if ((chunks_.size() + 1) * chunk_bytes_ > UINT32_MAX) {
    throw std::length_error("StringPool: offsets would pass 4 GiB; use a second pool");
  }
  const size_t capacity = chunks_.capacity();
  chunks_.push_back(std::move(block));
  if (chunks_.capacity() != capacity) {  // the chunk list itself moved to a larger block
    ++allocations_;
    allocated_bytes_ += chunks_.capacity() * sizeof(chunks_[0]);
  }
}

}  // namespace metrics
