// tag_interning and dictionary_inserts through the real count pass on the built-in plugin, with
// the real counting operator new / malloc (glibc backend). Expectations come from the subject's
// generators (the data), from sizes and from the growth policies its headers document, replayed
// in tests/metrics/expected_metrics.h (shared with alloc_checks_test.cc): never from a previous
// result, nor from the subject's own bookkeeping counters.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "count_pass.h"
#include "expected_heap.h"
#include "expected_metrics.h"
#include "metrics/context_generator.h"
#include "metrics/metric_contexts.h"
#include "metrics/symbol_mix.h"
#include "plugin_loader.h"

namespace allocbench {
namespace {

using expected::ContextsInterner;
using expected::DictionaryReplay;
using expected::ExpectedInit;
using expected::Heap;
using expected::LongTagStrings;
using expected::Mix;
using expected::ReplayDictionary;

// A page: what glibc's accounting may add to a block it maps on its own (plus its alignment).
constexpr size_t kPage = 4096;

class MetricsFamilies : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    counting::SetMode(counting::Mode::kIgnored);
    for (Instance& inst : ExpandInstances({LoadPlugin(PLUGIN_PATH)})) {
      instances_.emplace(inst.name, inst);
    }
  }
  // With {} options, the scenario's own CountOps() apply.
  static CountOutcome Count(const std::string& name) {
    auto it = instances_.find(name);
    if (it == instances_.end()) {
      ADD_FAILURE() << "no instance " << name;
      CountOutcome missing;
      missing.error = "no such instance";
      return missing;
    }
    return RunCountPass(it->second, {});
  }
  static double CounterOf(const CountOutcome& out, const std::string& name) {
    for (const Counter& c : out.counters) {
      if (c.name == name) return c.value;
    }
    ADD_FAILURE() << "no counter " << name;
    return 0;
  }
  static inline std::map<std::string, Instance> instances_;
};

std::string Init(int contexts, int storage) {
  return "tag_interning/init/contexts:" + std::to_string(contexts) +
         "/tags:26/storage:" + std::to_string(storage);
}

TEST_F(MetricsFamilies, InitCostsExactlyTheContextsAndTheirTagStorage) {
  for (int contexts : {7500, 500}) {
    const metrics::ContextGenerator generator(contexts, 26);
    const CountOutcome owned = Count(Init(contexts, 0));
    const CountOutcome handles = Count(Init(contexts, 1));
    ASSERT_EQ(owned.error, "");
    ASSERT_EQ(handles.error, "");
    const Heap expected_owned = ExpectedInit(generator, metrics::TagStorage::kOwned);
    const Heap expected_handles = ExpectedInit(generator, metrics::TagStorage::kHandles);
    EXPECT_EQ(owned.metrics.bytes_per_op, expected_owned.bytes) << contexts << " contexts";
    EXPECT_EQ(owned.metrics.allocs_per_op, expected_owned.allocs) << contexts << " contexts";
    EXPECT_EQ(handles.metrics.bytes_per_op, expected_handles.bytes) << contexts << " contexts";
    EXPECT_EQ(handles.metrics.allocs_per_op, expected_handles.allocs) << contexts << " contexts";
    EXPECT_TRUE(owned.metrics.steady) << owned.metrics.steady_reason;
    EXPECT_TRUE(handles.metrics.steady) << handles.metrics.steady_reason;

    // The README's sentence: handles save exactly the long tag strings, less the interner's
    // blocks; the scenario reports the former as a counter.
    const int64_t long_tags = LongTagStrings(generator);
    EXPECT_EQ(CounterOf(owned, "tag_strings_over_sso"), static_cast<double>(long_tags));
    EXPECT_EQ(owned.metrics.allocs_per_op - handles.metrics.allocs_per_op,
              static_cast<double>(long_tags) - ContextsInterner(generator).allocs)
        << contexts << " contexts";
  }
}

TEST_F(MetricsFamilies, SerializingAllocatesNothingOnceTheBufferHasGrown) {
  for (int contexts : {7500, 500}) {
    const std::string shape = "tag_interning/serialize/contexts:" + std::to_string(contexts);
    const CountOutcome owned = Count(shape + "/tags:26/storage:0");
    const CountOutcome handles = Count(shape + "/tags:26/storage:1");
    ASSERT_EQ(owned.error, "");
    ASSERT_EQ(handles.error, "");
    EXPECT_EQ(owned.metrics.bytes_per_op, 0.0);
    EXPECT_EQ(handles.metrics.bytes_per_op, 0.0);
    EXPECT_GT(owned.metrics.first_op_bytes, 0.0);
    // Byte-identical payloads grow the buffer identically.
    EXPECT_EQ(owned.metrics.first_op_bytes, handles.metrics.first_op_bytes);
    EXPECT_EQ(CounterOf(owned, "payload_bytes"), CounterOf(handles, "payload_bytes"));
  }
}

TEST_F(MetricsFamilies, EverySingleThreadScenarioIsDeterministic) {
  int checked = 0;
  for (const auto& [name, instance] : instances_) {
    if (instance.threads != 1) continue;
    if (name.rfind("tag_interning/", 0) != 0 && name.rfind("dictionary_inserts/", 0) != 0) {
      continue;
    }
    const CountOutcome first = Count(name);
    ASSERT_EQ(first.error, "") << name;
    for (int run = 0; run < 2; ++run) {
      const CountOutcome again = Count(name);
      EXPECT_EQ(again.metrics.bytes_per_op, first.metrics.bytes_per_op) << name;
      EXPECT_EQ(again.metrics.allocs_per_op, first.metrics.allocs_per_op) << name;
      EXPECT_EQ(again.metrics.first_op_bytes, first.metrics.first_op_bytes) << name;
      EXPECT_EQ(again.metrics.first_op_allocs, first.metrics.first_op_allocs) << name;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 8 + 2 + 2);  // tag_interning init/serialize, fresh_dictionary, threads:1
}

std::string Frames(int shards, int kib, int threads) {
  return "dictionary_inserts/profile_frames/shards:" + std::to_string(shards) +
         "/chunk_kib:" + std::to_string(kib) + "/threads:" + std::to_string(threads);
}

std::string Fresh(int shards, int kib) {
  return "dictionary_inserts/fresh_dictionary/shards:" + std::to_string(shards) +
         "/chunk_kib:" + std::to_string(kib);
}

TEST_F(MetricsFamilies, SharedDictionaryCompletesAtEveryThreadCountWithoutLoss) {
  for (const auto& [shards, kib] : {std::pair{16, 1024}, std::pair{4, 256}}) {
    for (int threads : {1, 2, 4, 16}) {
      const CountOutcome out = Count(Frames(shards, kib, threads));
      // The scenario checks every string of the mix after the loop and fails if one is lost.
      ASSERT_EQ(out.error, "") << Frames(shards, kib, threads);
      // Only the cold ops insert new strings; re-interning known ones allocates nothing.
      EXPECT_EQ(out.metrics.bytes_per_op, 0.0) << Frames(shards, kib, threads);
      EXPECT_TRUE(out.metrics.steady) << out.metrics.steady_reason;
      EXPECT_GT(out.metrics.first_op_bytes, 0.0);
      EXPECT_EQ(CounterOf(out, "distinct_strings"), static_cast<double>(Mix().distinct.size()));
      EXPECT_EQ(CounterOf(out, "inserts_per_op"), static_cast<double>(Mix().inserts.size()));
    }
  }
}

TEST_F(MetricsFamilies, AFreshDictionaryCostsExactlyItsShardsChunksAndFill) {
  for (const auto& [shards, kib] : {std::pair{16, 1024}, std::pair{4, 256}}) {
    const DictionaryReplay replay =
        ReplayDictionary(shards, static_cast<size_t>(kib) * 1024, /*passes=*/1);
    const Heap& fill = replay.passes[0];  // inserting the whole mix once, from empty
    // Set up from scratch per op: the floor is in B/op itself, exactly.
    const CountOutcome fresh = Count(Fresh(shards, kib));
    ASSERT_EQ(fresh.error, "");
    EXPECT_EQ(fresh.metrics.bytes_per_op, replay.construction.bytes + fill.bytes) << shards;
    EXPECT_EQ(fresh.metrics.allocs_per_op, replay.construction.allocs + fill.allocs) << shards;
    EXPECT_TRUE(fresh.metrics.steady) << fresh.metrics.steady_reason;
    // A shared dictionary made before the loop: one thread's cold op is the fill alone.
    const CountOutcome shared = Count(Frames(shards, kib, 1));
    ASSERT_EQ(shared.error, "");
    EXPECT_EQ(shared.metrics.first_op_bytes, fill.bytes) << shards;
    EXPECT_EQ(shared.metrics.first_op_allocs, fill.allocs) << shards;
  }
}

TEST_F(MetricsFamilies, SmallerShardsAndChunksCutTheFloorAsTheArenaArithmeticSays) {
  // 16 x 1 MiB of first chunks against 4 x 256 KiB, in the allocator's own accounting: what the
  // empty set requests, plus at most a page and an alignment per block (glibc maps each chunk on
  // its own and rounds it to pages).
  for (const auto& [shards, kib] : {std::pair{16, 1024}, std::pair{4, 256}}) {
    const Heap empty =
        ReplayDictionary(shards, static_cast<size_t>(kib) * 1024, /*passes=*/0).construction;
    const CountOutcome out = Count(Frames(shards, kib, 1));
    ASSERT_EQ(out.error, "");
    const double floor = CounterOf(out, "floor_empty_allocator_bytes");
    EXPECT_GE(floor, empty.bytes) << shards;
    EXPECT_LE(floor, empty.bytes + empty.allocs * (kPage + 64)) << shards;
    // A filled dictionary holds more than an empty one.
    EXPECT_GT(CounterOf(out, "floor_filled_allocator_bytes"), floor) << shards;
  }
}

}  // namespace
}  // namespace allocbench
