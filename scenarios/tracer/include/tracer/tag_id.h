// The well-known span tags. A dense tag store keeps each of them in a fixed slot indexed by its
// id, so setting one costs no node, no key string and no hashing; any other key is "unknown".
#ifndef ALLOCBENCH_TRACER_TAG_ID_H_
#define ALLOCBENCH_TRACER_TAG_ID_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tracer {

// The order is the slot order of the dense store; kKnownTagCount must follow the last one.
enum class TagId : uint8_t {
  kHttpMethod,
  kHttpUrl,
  kHttpRoute,
  kHttpStatusCode,
  kHttpUserAgent,
  kHttpClientIp,
  kPeerHostname,
  kPeerPort,
  kOutHost,
  kComponent,
  kSpanKind,
  kDbType,
  kDbInstance,
  kDbUser,
  kDbStatement,
  kDbOperation,
  kDbRowCount,
  kErrorMessage,
  kErrorType,
  kErrorStack,
};
inline constexpr std::size_t kKnownTagCount = 20;

// The tag's key as it appears on the wire, e.g. "http.status_code".
std::string_view TagName(TagId id);

// The id of a well-known key, or nullopt for any other key.
std::optional<TagId> FindTagId(std::string_view key);

}  // namespace tracer

#endif  // ALLOCBENCH_TRACER_TAG_ID_H_
