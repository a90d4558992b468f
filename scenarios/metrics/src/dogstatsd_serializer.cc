#include "metrics/dogstatsd_serializer.h"

namespace metrics {

std::string_view DogStatsdSerializer::Serialize(const MetricContexts& contexts) {
  buffer_.clear();  // keeps the capacity
  for (size_t c = 0; c < contexts.size(); ++c) {
    buffer_.append(contexts.name(c));
    buffer_.append(":1|c");
    if (contexts.tag_count(c) > 0) {
      buffer_.append("|#");
      contexts.AppendTags(c, &buffer_);
    }
    buffer_.push_back('\n');
  }
  return buffer_;
}

}  // namespace metrics
