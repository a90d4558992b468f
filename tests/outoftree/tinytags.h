// A stand-in for a user's library: formats "key:value" tags into exactly-sized buffers.
#pragma once

#include <memory>
#include <string_view>

namespace tinytags {

// One allocation of key.size() + 1 + value.size() + 1 bytes.
std::unique_ptr<char[]> FormatTag(std::string_view key, std::string_view value);

}  // namespace tinytags
