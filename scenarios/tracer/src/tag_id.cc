#include "tracer/tag_id.h"

#include <array>

namespace tracer {
namespace {

constexpr std::array<std::string_view, kKnownTagCount> kTagNames = {
    "http.method",    "http.url",      "http.route",    "http.status_code", "http.useragent",
    "http.client_ip", "peer.hostname", "peer.port",     "out.host",         "component",
    "span.kind",      "db.type",       "db.instance",   "db.user",          "db.statement",
    "db.operation",   "db.row_count",  "error.message", "error.type",       "error.stack",
};
static_assert(static_cast<std::size_t>(TagId::kErrorStack) + 1 == kKnownTagCount,
              "kKnownTagCount must follow the last TagId");

}  // namespace

std::string_view TagName(TagId id) { return kTagNames[static_cast<std::size_t>(id)]; }

std::optional<TagId> FindTagId(std::string_view key) {
  // Twenty short comparisons, mostly rejected on the first bytes: cheaper than hashing the key.
  for (std::size_t i = 0; i < kKnownTagCount; ++i) {
    if (kTagNames[i] == key) return static_cast<TagId>(i);
  }
  return std::nullopt;
}

}  // namespace tracer
