#include "tracer/dense_tags.h"

#include <bitset>

#include "assign.h"

namespace tracer {

void DenseTags::Set(TagId id, std::string_view value) {
  const auto i = static_cast<std::size_t>(id);
  internal::AssignExact(known_[i], value);
  present_ |= uint32_t{1} << i;
}

void DenseTags::SetUnknown(std::string_view key, std::string_view value) {
  for (auto& [k, v] : overflow_) {
    if (k == key) {
      internal::AssignExact(v, value);
      return;
    }
  }
  overflow_.emplace_back(std::string(key), std::string(value));
}

std::optional<std::string_view> DenseTags::Get(TagId id) const {
  const auto i = static_cast<std::size_t>(id);
  if (!(present_ & (uint32_t{1} << i))) return std::nullopt;
  return std::string_view(known_[i]);
}

std::optional<std::string_view> DenseTags::GetUnknown(std::string_view key) const {
  for (const auto& [k, v] : overflow_) {
    if (k == key) return std::string_view(v);
  }
  return std::nullopt;
}

std::size_t DenseTags::size() const { return std::bitset<32>(present_).count() + overflow_.size(); }

}  // namespace tracer
