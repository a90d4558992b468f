// A span's tags, in one of two run-time-selectable storages:
//
//  - kMap: a node-based std::unordered_map<std::string, std::string>, the classic layout. Every
//    tag costs a node, the key as a std::string (a heap allocation above 15 characters, e.g.
//    "http.status_code"), the value, and the bucket array grows as tags arrive.
//  - kDense: DenseTags, well-known tags in fixed slots by TagId, unknown keys in an overflow list.
//
// Both storages live inline in every TagStore, so a span has the same size whichever is
// selected: the difference between the two modes is exactly their heap work, nothing else.
#ifndef ALLOCBENCH_TRACER_TAG_STORE_H_
#define ALLOCBENCH_TRACER_TAG_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tracer/dense_tags.h"
#include "tracer/tag_id.h"

namespace tracer {

enum class TagStorage : uint8_t { kMap, kDense };

class TagStore {
 public:
  explicit TagStore(TagStorage storage) : storage_(storage) {}

  TagStorage storage() const { return storage_; }

  // Sets or overwrites. A well-known key given as a string lands in the same place as its id.
  void Set(TagId id, std::string_view value);
  void Set(std::string_view key, std::string_view value);

  std::optional<std::string_view> Get(TagId id) const;
  std::optional<std::string_view> Get(std::string_view key) const;
  std::size_t size() const;

  // f(std::string_view key, std::string_view value) for every tag, in no particular order.
  template <class F>
  void ForEach(F&& f) const {
    if (storage_ == TagStorage::kDense) {
      dense_.ForEach(f);
    } else {
      for (const auto& [key, value] : map_) f(std::string_view(key), std::string_view(value));
    }
  }

 private:
  void SetInMap(std::string key, std::string_view value);

  TagStorage storage_;
  std::unordered_map<std::string, std::string> map_;
  DenseTags dense_;
};

}  // namespace tracer

#endif  // ALLOCBENCH_TRACER_TAG_STORE_H_
