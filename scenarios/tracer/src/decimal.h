// Integer tag values go on the wire as decimal strings.
#ifndef ALLOCBENCH_TRACER_SRC_DECIMAL_H_
#define ALLOCBENCH_TRACER_SRC_DECIMAL_H_

#include <charconv>
#include <cstdint>
#include <string_view>

namespace tracer::internal {

// A view into `buffer`: no allocation (every int64 fits in 20 characters).
inline std::string_view FormatDecimal(int64_t value, char (&buffer)[20]) {
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string_view(buffer, static_cast<std::size_t>(result.ptr - buffer));
}

}  // namespace tracer::internal

#endif  // ALLOCBENCH_TRACER_SRC_DECIMAL_H_
