#include "metrics/metric_contexts.h"

#include <cstring>

namespace metrics {

MetricContexts::MetricContexts(const ContextGenerator& generator, TagStorage storage)
    : storage_(storage) {
  const int tags = generator.tags_per_context();
  contexts_.reserve(generator.contexts());
  for (int c = 0; c < generator.contexts(); ++c) {
    Context& context = contexts_.emplace_back();
    context.name = generator.Name(c);
    if (storage_ == TagStorage::kOwned) {
      context.owned_tags.reserve(tags);
      for (int t = 0; t < tags; ++t) {
        const std::string_view key = generator.TagKey(t);
        const std::string_view value = generator.TagValue(c, t);
        // Sized once, so a long tag is exactly one block of size()+1 bytes (reserve() would
        // round a 16-29 character string up to 30).
        std::string& tag = context.owned_tags.emplace_back(key.size() + 1 + value.size(), ':');
        std::memcpy(tag.data(), key.data(), key.size());
        std::memcpy(tag.data() + key.size() + 1, value.data(), value.size());
      }
    } else {
      context.handle_tags.reserve(tags);
      for (int t = 0; t < tags; ++t) {
        const PoolHandle key = interner_.Intern(generator.TagKey(t));
        context.handle_tags.push_back(HandleTag{key, interner_.Intern(generator.TagValue(c, t))});
      }
    }
  }
}

size_t MetricContexts::tag_count(size_t context) const {
  const Context& c = contexts_[context];
  return storage_ == TagStorage::kOwned ? c.owned_tags.size() : c.handle_tags.size();
}

// Sized once and filled with memcpy, in both storages: one capacity check per context instead
// of one per piece, which otherwise dominates (handles write four pieces per tag, owned two).
void MetricContexts::AppendTags(size_t context, std::string* out) const {
  const Context& c = contexts_[context];
  const size_t tags = tag_count(context);
  if (tags == 0) return;
  size_t bytes = tags - 1;  // commas
  if (storage_ == TagStorage::kOwned) {
    for (const std::string& tag : c.owned_tags) bytes += tag.size();
  } else {
    for (const HandleTag& tag : c.handle_tags) bytes += tag.key.length + 1 + tag.value.length;
  }
  const size_t start = out->size();
  out->resize(start + bytes);
  char* p = out->data() + start;
  const auto put = [&p](std::string_view s) {
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  };
  for (size_t t = 0; t < tags; ++t) {
    if (t > 0) *p++ = ',';
    if (storage_ == TagStorage::kOwned) {
      put(c.owned_tags[t]);
    } else {
      put(interner_.View(c.handle_tags[t].key));
      *p++ = ':';
      put(interner_.View(c.handle_tags[t].value));
    }
  }
}

}  // namespace metrics
