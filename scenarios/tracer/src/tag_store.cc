#include "tracer/tag_store.h"

#include "assign.h"

namespace tracer {

void TagStore::Set(TagId id, std::string_view value) {
  if (storage_ == TagStorage::kDense) {
    dense_.Set(id, value);
  } else {
    SetInMap(std::string(TagName(id)), value);
  }
}

void TagStore::Set(std::string_view key, std::string_view value) {
  if (storage_ == TagStorage::kDense) {
    if (const std::optional<TagId> id = FindTagId(key)) {
      dense_.Set(*id, value);
    } else {
      dense_.SetUnknown(key, value);
    }
  } else {
    SetInMap(std::string(key), value);
  }
}

// C++17's unordered_map has no heterogeneous lookup: the key is a std::string before the map
// can even look, which is part of what the map costs per tag.
void TagStore::SetInMap(std::string key, std::string_view value) {
  auto it = map_.find(key);
  if (it != map_.end()) {
    internal::AssignExact(it->second, value);
  } else {
    map_.emplace(std::move(key), std::string(value));
  }
}

std::optional<std::string_view> TagStore::Get(TagId id) const {
  if (storage_ == TagStorage::kDense) return dense_.Get(id);
  return Get(TagName(id));
}

std::optional<std::string_view> TagStore::Get(std::string_view key) const {
  if (storage_ == TagStorage::kDense) {
    if (const std::optional<TagId> id = FindTagId(key)) return dense_.Get(*id);
    return dense_.GetUnknown(key);
  }
  auto it = map_.find(std::string(key));
  if (it == map_.end()) return std::nullopt;
  return std::string_view(it->second);
}

std::size_t TagStore::size() const {
  return storage_ == TagStorage::kDense ? dense_.size() : map_.size();
}

}  // namespace tracer
