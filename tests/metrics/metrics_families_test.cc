// tag_interning and dictionary_inserts through the real count pass on the built-in plugin, with
// the real counting operator new / malloc (glibc backend). Expectations come from the subject's
// generators and from arena arithmetic, never from a previous result.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "count_pass.h"
#include "metrics/context_generator.h"
#include "metrics/metric_contexts.h"
#include "plugin_loader.h"

namespace allocbench {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

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

// What owned storage pays on top of handle storage, derived from the generator: one block of
// size()+1 bytes per "key:value" longer than 15 characters, and a 32-byte std::string instead of
// a 16-byte pair of handles per tag; handle storage pays its interner (pool chunks, index and
// handle list) instead, which it knows by construction.
struct ExpectedDifference {
  double allocs = 0;
  double bytes = 0;
};

ExpectedDifference OwnedMinusHandles(int contexts, int tags) {
  const metrics::ContextGenerator generator(contexts, tags);
  ExpectedDifference d;
  for (int c = 0; c < contexts; ++c) {
    for (int t = 0; t < tags; ++t) {
      const size_t length = generator.TagKey(t).size() + 1 + generator.TagValue(c, t).size();
      if (length > 15) {
        d.allocs += 1;
        d.bytes += static_cast<double>(length + 1);
      }
    }
  }
  d.bytes += static_cast<double>(contexts) * tags *
             static_cast<double>(sizeof(std::string) - 2 * sizeof(metrics::PoolHandle));
  const metrics::MetricContexts handles(generator, metrics::TagStorage::kHandles);
  d.allocs -= static_cast<double>(handles.interner().allocations());
  d.bytes -= static_cast<double>(handles.interner().allocated_bytes());
  return d;
}

TEST_F(MetricsFamilies, HandleTagsAllocateLessAtInitByExactlyTheOwnedTagStrings) {
  for (int contexts : {7500, 500}) {
    const CountOutcome owned = Count(Init(contexts, 0));
    const CountOutcome handles = Count(Init(contexts, 1));
    ASSERT_EQ(owned.error, "");
    ASSERT_EQ(handles.error, "");
    EXPECT_LT(handles.metrics.allocs_per_op, owned.metrics.allocs_per_op);
    EXPECT_LT(handles.metrics.bytes_per_op, owned.metrics.bytes_per_op);
    const ExpectedDifference expected = OwnedMinusHandles(contexts, 26);
    EXPECT_EQ(owned.metrics.allocs_per_op - handles.metrics.allocs_per_op, expected.allocs)
        << contexts << " contexts";
    EXPECT_EQ(owned.metrics.bytes_per_op - handles.metrics.bytes_per_op, expected.bytes)
        << contexts << " contexts";
    EXPECT_TRUE(owned.metrics.steady) << owned.metrics.steady_reason;
    EXPECT_TRUE(handles.metrics.steady) << handles.metrics.steady_reason;
  }
  // At the default config that is ~128K heap blocks per initialisation (the PR's "-260K").
  EXPECT_GT(OwnedMinusHandles(7500, 26).allocs, 100000);
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
      EXPECT_GT(CounterOf(out, "distinct_strings"), 1000);
    }
  }
}

TEST_F(MetricsFamilies, SmallerShardsAndChunksCutTheFloorByAtLeastTheArenaArithmetic) {
  const CountOutcome before = Count(Frames(16, 1024, 1));
  const CountOutcome after = Count(Frames(4, 256, 1));
  ASSERT_EQ(before.error, "");
  ASSERT_EQ(after.error, "");
  // 16 x 1 MiB of first chunks against 4 x 256 KiB, in the allocator's own accounting.
  EXPECT_GE(CounterOf(before, "floor_empty_allocator_bytes"), 16 * kMiB);
  EXPECT_GE(CounterOf(after, "floor_empty_allocator_bytes"), 1 * kMiB);
  EXPECT_GE(CounterOf(before, "floor_empty_allocator_bytes") -
                CounterOf(after, "floor_empty_allocator_bytes"),
            16 * kMiB - 1 * kMiB);
  EXPECT_GE(CounterOf(before, "floor_filled_allocator_bytes") -
                CounterOf(after, "floor_filled_allocator_bytes"),
            16 * kMiB - 1 * kMiB);
  // A filled dictionary holds more than an empty one.
  EXPECT_GT(CounterOf(after, "floor_filled_allocator_bytes"),
            CounterOf(after, "floor_empty_allocator_bytes"));

  // Set up from scratch per op, the floor is in B/op itself, exactly.
  const CountOutcome fresh_before =
      Count("dictionary_inserts/fresh_dictionary/shards:16/chunk_kib:1024");
  const CountOutcome fresh_after =
      Count("dictionary_inserts/fresh_dictionary/shards:4/chunk_kib:256");
  EXPECT_GE(fresh_before.metrics.bytes_per_op - fresh_after.metrics.bytes_per_op,
            16 * kMiB - 1 * kMiB);
  EXPECT_TRUE(fresh_before.metrics.steady) << fresh_before.metrics.steady_reason;
}

}  // namespace
}  // namespace allocbench
