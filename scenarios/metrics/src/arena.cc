#include "metrics/arena.h"

#include <cstring>

namespace metrics {

Arena::Arena(size_t chunk_bytes) : chunk_bytes_(chunk_bytes == 0 ? 1 : chunk_bytes) {
  cursor_ = NewBlock(chunk_bytes_);
  end_ = cursor_ + chunk_bytes_;
}

std::string_view Arena::Copy(std::string_view s) {
  if (s.empty()) return std::string_view();
  char* at;
  if (s.size() > chunk_bytes_) {
    at = NewBlock(s.size());  // the current chunk stays current
  } else {
    if (static_cast<size_t>(end_ - cursor_) < s.size()) {
      cursor_ = NewBlock(chunk_bytes_);
      end_ = cursor_ + chunk_bytes_;
    }
    at = cursor_;
    cursor_ += s.size();
  }
  std::memcpy(at, s.data(), s.size());
  return std::string_view(at, s.size());
}

char* Arena::NewBlock(size_t bytes) {
  // Default-initialized on purpose: make_unique<char[]> would zero it and make it resident.
  chunks_.emplace_back(new char[bytes]);
  reserved_bytes_ += bytes;
  return chunks_.back().get();
}

}  // namespace metrics
