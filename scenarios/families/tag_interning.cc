// tag_interning: a metrics client's tag storage, before and after handle-based tags
// (metrics agent #1691: "-260K String allocations during DogStatsD initialization").
//
// C contexts x T tags from a config-like generator (default 7,500 x 26, an agent's default
// config). storage:0 keeps one "key:value" std::string per tag, formatted at init; storage:1
// keeps (offset, length) handles into an interned string pool and formats at serialization.
// One op is a whole workload (all contexts), hence CountOps(1, 2): a cold op, then two windows
// of two ops; every op builds (or writes) the same thing, so the windows are equal.
#include <allocbench/scenario.h>

#include <string_view>

#include "metrics/context_generator.h"
#include "metrics/dogstatsd_serializer.h"
#include "metrics/metric_contexts.h"

namespace {

constexpr int kDefaultContexts = metrics::ContextGenerator::kDefaultContexts;
constexpr int kDefaultTags = metrics::ContextGenerator::kDefaultTagsPerContext;

// The generator is the parsed config: built in setup, never counted.
bool ReadArgs(allocbench::State& state, int* contexts, int* tags, metrics::TagStorage* storage) {
  *contexts = static_cast<int>(state.range(0));
  *tags = static_cast<int>(state.range(1));
  const int64_t s = state.range(2);
  if (*contexts < 0 || *tags < 0 || (s != 0 && s != 1)) {
    state.SkipWithError("tag_interning: contexts and tags must be >= 0 and storage 0 or 1");
    return false;
  }
  *storage = static_cast<metrics::TagStorage>(s);
  return true;
}

// Tags whose "key:value" is longer than the 15-character small-string buffer: exactly the
// heap blocks that owned storage pays per op and handle storage does not.
int64_t LongTagStrings(const metrics::ContextGenerator& generator) {
  int64_t n = 0;
  for (int c = 0; c < generator.contexts(); ++c) {
    for (int t = 0; t < generator.tags_per_context(); ++t) {
      n += generator.TagKey(t).size() + 1 + generator.TagValue(c, t).size() > 15;
    }
  }
  return n;
}

// One op: initialise every context from scratch (and drop them).
ALLOCBENCH_SCENARIO(TagInterningInit, state) {
  int contexts, tags;
  metrics::TagStorage storage;
  if (!ReadArgs(state, &contexts, &tags, &storage)) return;
  const metrics::ContextGenerator generator(contexts, tags);
  state.SetCounter("tags", static_cast<double>(contexts) * tags);
  state.SetCounter("tag_strings_over_sso", static_cast<double>(LongTagStrings(generator)));
  for (auto _ : state) {
    metrics::MetricContexts built(generator, storage);
    allocbench::DoNotOptimize(built);
  }
}
ALLOCBENCH_REGISTER(TagInterningInit)
    ->Name("tag_interning/init")
    ->ArgNames({"contexts", "tags", "storage"})
    ->Args({kDefaultContexts, kDefaultTags, 0})
    ->Args({kDefaultContexts, kDefaultTags, 1})
    ->Args({500, kDefaultTags, 0})
    ->Args({500, kDefaultTags, 1})
    ->CountOps(1, 2);

// One op: serialize every context into the reused payload buffer (contexts built in setup).
// Both storages allocate nothing once the buffer has grown; the difference is time.
ALLOCBENCH_SCENARIO(TagInterningSerialize, state) {
  int contexts, tags;
  metrics::TagStorage storage;
  if (!ReadArgs(state, &contexts, &tags, &storage)) return;
  const metrics::ContextGenerator generator(contexts, tags);
  const metrics::MetricContexts built(generator, storage);
  metrics::DogStatsdSerializer serializer;
  state.SetCounter("payload_bytes", static_cast<double>(serializer.Serialize(built).size()), "B");
  metrics::DogStatsdSerializer measured;  // starts empty: the cold op shows the buffer's growth
  for (auto _ : state) {
    std::string_view payload = measured.Serialize(built);
    allocbench::DoNotOptimize(payload);
  }
}
ALLOCBENCH_REGISTER(TagInterningSerialize)
    ->Name("tag_interning/serialize")
    ->ArgNames({"contexts", "tags", "storage"})
    ->Args({kDefaultContexts, kDefaultTags, 0})
    ->Args({kDefaultContexts, kDefaultTags, 1})
    ->Args({500, kDefaultTags, 0})
    ->Args({500, kDefaultTags, 1})
    ->CountOps(1, 2);

}  // namespace
