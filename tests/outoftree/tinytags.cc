#include "tinytags.h"

#include <cstring>

namespace tinytags {

std::unique_ptr<char[]> FormatTag(std::string_view key, std::string_view value) {
  std::unique_ptr<char[]> out(new char[key.size() + 1 + value.size() + 1]);
  std::memcpy(out.get(), key.data(), key.size());
  out[key.size()] = ':';
  std::memcpy(out.get() + key.size() + 1, value.data(), value.size());
  out[key.size() + 1 + value.size()] = '\0';
  return out;
}

}  // namespace tinytags
