// Assigning into a string that may be empty: std::string::assign() grows an empty string to at
// least twice its small-string capacity (31 bytes for a 16-character value); a span keeps the
// string as it is, so it should cost exactly what it holds. Existing capacity is still reused.
#ifndef ALLOCBENCH_TRACER_SRC_ASSIGN_H_
#define ALLOCBENCH_TRACER_SRC_ASSIGN_H_

#include <string>
#include <string_view>

namespace tracer::internal {

inline void AssignExact(std::string& target, std::string_view value) {
  if (value.size() > target.capacity()) {
    target = std::string(value);
  } else {
    target.assign(value);
  }
}

}  // namespace tracer::internal

#endif  // ALLOCBENCH_TRACER_SRC_ASSIGN_H_
