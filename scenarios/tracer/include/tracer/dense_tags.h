// Tags stored densely: one slot per well-known tag id, inline in the span, plus a small
// overflow list for unknown keys. Setting a known tag allocates only when its value outgrows
// the slot string's small-string buffer (values over 15 characters).
#ifndef ALLOCBENCH_TRACER_DENSE_TAGS_H_
#define ALLOCBENCH_TRACER_DENSE_TAGS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracer/tag_id.h"

namespace tracer {

class DenseTags {
 public:
  void Set(TagId id, std::string_view value);
  // Unknown keys only; REQUIRES: !FindTagId(key) (TagStore routes known keys to their slot).
  void SetUnknown(std::string_view key, std::string_view value);

  std::optional<std::string_view> Get(TagId id) const;
  std::optional<std::string_view> GetUnknown(std::string_view key) const;
  std::size_t size() const;

  // f(std::string_view key, std::string_view value) for every tag: known ones in id order, then
  // unknown ones in insertion order.
  template <class F>
  void ForEach(F&& f) const {
    for (std::size_t i = 0; i < kKnownTagCount; ++i) {
      if (present_ & (uint32_t{1} << i)) f(TagName(static_cast<TagId>(i)), known_[i]);
    }
    for (const auto& [key, value] : overflow_) f(std::string_view(key), std::string_view(value));
  }

 private:
  static_assert(kKnownTagCount <= 32, "present_ has one bit per known tag");
  std::array<std::string, kKnownTagCount> known_;
  uint32_t present_ = 0;
  // A span rarely carries more than a few custom tags: a linear scan beats hashing here.
  std::vector<std::pair<std::string, std::string>> overflow_;
};

}  // namespace tracer

#endif  // ALLOCBENCH_TRACER_DENSE_TAGS_H_
