// A metrics client's contexts (metric name + tags), built from a ContextGenerator with one of
// two tag storages, chosen at run time:
//
//  - kOwned: one "key:value" std::string per tag, formatted at construction. Every tag longer
//    than the 15-character small-string buffer is a heap block of its own (7,500 contexts x 26
//    tags: ~130K blocks).
//  - kHandles: per tag, (offset, length) handles of its key and its value in an interned string
//    pool; keys and values that repeat are stored once, and "key:value" is written only at
//    serialization.
//
// Everything else (names, per-context tag vectors, the context list) is the same in both, so
// the difference in allocations is the tag storage alone:
//   allocs(owned) - allocs(handles) = #tags longer than 15 chars - interner().allocations()
#ifndef ALLOCBENCH_REFERENCE_METRICS_METRIC_CONTEXTS_H_
#define ALLOCBENCH_REFERENCE_METRICS_METRIC_CONTEXTS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/context_generator.h"
#include "metrics/string_interner.h"

namespace metrics {

enum class TagStorage { kOwned = 0, kHandles = 1 };

class MetricContexts {
 public:
  // Builds every context of `generator` from scratch.
  MetricContexts(const ContextGenerator& generator, TagStorage storage);

  TagStorage storage() const { return storage_; }
  size_t size() const { return contexts_.size(); }
  std::string_view name(size_t context) const { return contexts_[context].name; }
  size_t tag_count(size_t context) const;

  // Appends the context's tags as "key:value,key:value" (no separator before the first).
  void AppendTags(size_t context, std::string* out) const;

  // Empty with kOwned.
  const StringInterner& interner() const { return interner_; }

 private:
  struct HandleTag {
    PoolHandle key;
    PoolHandle value;
  };
  struct Context {
    std::string name;
    std::vector<std::string> owned_tags;  // kOwned only
    std::vector<HandleTag> handle_tags;   // kHandles only
  };

  TagStorage storage_;
  StringInterner interner_;
  std::vector<Context> contexts_;
};

}  // namespace metrics

#endif  // ALLOCBENCH_REFERENCE_METRICS_METRIC_CONTEXTS_H_
