// The reference metrics library's allocation promises, checked on its own code with
// allocbench::testing: no benchmark runner, no plugin, just the library's calls counted on this
// thread. These are the promises tests/metrics/metrics_families_test.cc checks through the
// tag_interning and dictionary_inserts families, one level down.
//
// Every expected count is derived here, never from a previous result nor from the library's own
// bookkeeping counters (which are checked against the derivation instead): from the generators'
// data, sizes, tests/expected_heap.h's small-string buffer, and the growth policies the headers
// document (string_pool.h's chunks and slots, hash_index.h's tables, arena.h's chunks), replayed
// in tests/metrics/expected_metrics.h, which metrics_families_test.cc uses too.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allocbench/testing_gtest.h"
#include "expected_heap.h"
#include "expected_metrics.h"
#include "metrics/arena.h"
#include "metrics/context_generator.h"
#include "metrics/dogstatsd_serializer.h"
#include "metrics/hash_index.h"
#include "metrics/metric_contexts.h"
#include "metrics/sharded_string_set.h"
#include "metrics/string_interner.h"
#include "metrics/string_pool.h"
#include "metrics/symbol_mix.h"

namespace metrics {
namespace {

using allocbench::expected::ArenaReplay;
using allocbench::expected::ContextsInterner;
using allocbench::expected::DictionaryReplay;
using allocbench::expected::ExpectedInit;
using allocbench::expected::Heap;
using allocbench::expected::IndexGrowth;
using allocbench::expected::InternerReplay;
using allocbench::expected::LongTagStrings;
using allocbench::expected::Mix;
using allocbench::expected::PoolReplay;
using allocbench::expected::ReplayDictionary;

// The dictionary_inserts family's two configurations: before libdatadog#2246 and after.
struct Shape {
  size_t shards;
  size_t chunk_bytes;
};
constexpr Shape kShapes[] = {{16, 1024 * 1024}, {4, 256 * 1024}};

// --- string pool and interner (string_pool.h, string_interner.h, hash_index.h) ---------------

// string_pool.h and string_interner.h: "allocates nothing until the first Append()" / "the first
// Intern()". Catches a reserve() or a first chunk moved into a constructor.
TEST(MetricsAllocChecks, AnEmptyPoolOrInternerAllocatesNothing) {
  ALLOCBENCH_EXPECT_NO_ALLOC(StringPool pool);
  ALLOCBENCH_EXPECT_NO_ALLOC(StringInterner interner);
  ALLOCBENCH_EXPECT_NO_ALLOC(HashIndex index);
}

// The first intern of a string: the index's first table (16 slots of 16 B), the pool's first
// 64 KiB chunk and its chunk list's first entry, and the handle list's first handle: 4 blocks,
// replayed. The interner's own allocations() / allocated_bytes() must say the same (its header:
// the blocks "allocated by the pool, the index and the handle list, and their bytes"). Catches
// the index's first table or the pool's chunk size changed, or a handle list reserved ahead.
TEST(MetricsAllocChecks, TheFirstInternCostsTheIndexTheFirstChunkAndTheHandleList) {
  const std::string_view s = "service:checkout-api";
  Heap expected;
  InternerReplay replay;
  replay.Intern(s, &expected);
  EXPECT_EQ(expected.allocs, 4.0);
  StringInterner interner;
  PoolHandle handle{};
  ALLOCBENCH_EXPECT_ALLOCS(handle = interner.Intern(s), expected.allocs, expected.bytes);
  EXPECT_EQ(interner.View(handle), s);
  EXPECT_EQ(static_cast<double>(interner.allocations()), expected.allocs);
  EXPECT_EQ(static_cast<double>(interner.allocated_bytes()), expected.bytes);
}

// string_interner.h: "equal strings get the same handle" and are stored once, so interning an
// already-interned string allocates nothing: the 26 tag keys of an agent's config, each once,
// then each again (the replay checks that 26 entries leave the index below its growth point, see
// the next test). Catches a known string appended again (a lookup that never matches), or the
// handle list pushed on a hit.
TEST(MetricsAllocChecks, InterningAKnownStringAllocatesNothing) {
  const ContextGenerator generator(1, ContextGenerator::kDefaultTagsPerContext);
  StringInterner interner;
  Heap first;
  Heap again;
  InternerReplay replay;
  std::vector<PoolHandle> handles;
  for (int t = 0; t < generator.tags_per_context(); ++t) {
    replay.Intern(generator.TagKey(t), &first);
    handles.push_back(interner.Intern(generator.TagKey(t)));
  }
  for (int t = 0; t < generator.tags_per_context(); ++t) {
    replay.Intern(generator.TagKey(t), &again);
    PoolHandle handle{};
    ALLOCBENCH_EXPECT_NO_ALLOC(handle = interner.Intern(generator.TagKey(t)));
    EXPECT_EQ(handle.offset, handles[t].offset) << generator.TagKey(t);
  }
  EXPECT_EQ(again.allocs, 0.0);  // the derivation agrees: nothing to grow
  EXPECT_EQ(static_cast<double>(interner.allocations()), first.allocs);
}

// hash_index.h checks its load factor before it looks ("2 * (size_ + 1) > slots"), so the call
// after the one that fills a table to half grows it, even when its string is known: after 8
// distinct strings in 16 slots, interning the first one again allocates the 32-slot table.
// expected_metrics.h's IndexGrowth replays exactly this (metrics_families_test.cc's exact B/op
// for the tag_interning family counts on it); if HashIndex learns to grow only on a miss, both
// change.
TEST(MetricsAllocChecks, AKnownStringGrowsAnIndexFilledToHalfBeforeItIsFound) {
  StringInterner interner;
  InternerReplay replay;
  Heap fill;
  std::vector<std::string> strings;
  for (int i = 0; i < 8; ++i) strings.push_back("tag_" + std::to_string(i));
  for (const std::string& s : strings) {
    replay.Intern(s, &fill);
    interner.Intern(s);
  }
  Heap again;
  replay.Intern(strings[0], &again);
  EXPECT_EQ(again.allocs, 1.0);
  EXPECT_EQ(again.bytes, 32.0 * sizeof(IndexGrowth::Slot));
  ALLOCBENCH_EXPECT_ALLOCS(interner.Intern(strings[0]), again.allocs, again.bytes);
  // ... and once grown, the known strings cost nothing again.
  for (const std::string& s : strings) ALLOCBENCH_EXPECT_NO_ALLOC(interner.Intern(s));
}

// string_pool.h on small chunks: `chunk_bytes` rounded up to a power of two; strings packed into
// the current chunk (no allocation), a new chunk when one does not fit, an empty string for free,
// an oversized string in a block of its own covering as many slots as it needs, then a fresh
// chunk. The pool's allocations() / allocated_bytes() ("the pool's whole cost, known by
// construction") must agree. Catches the rounding changed (`<` for `<=` in Log2Ceil: a 64-byte
// request would get 128), an oversized string's extra slots dropped, or the pool appending after
// an oversized string into the abandoned chunk.
TEST(MetricsAllocChecks, APoolCostsItsChunksItsOversizedBlocksAndItsChunkList) {
  const std::vector<size_t> lengths = {10, 10, 40, 0, 100, 5, 64, 200, 1};
  for (size_t requested : {size_t{64}, size_t{100}}) {
    StringPool pool(requested);
    PoolReplay replay(requested);
    EXPECT_EQ(pool.chunk_bytes(), replay.chunk_bytes());
    Heap total;
    for (size_t length : lengths) {
      const std::string s(length, 'x');
      Heap expected;
      replay.Append(length, &expected);
      ALLOCBENCH_EXPECT_ALLOCS(pool.Append(s), expected.allocs, expected.bytes)
          << length << " B into chunks of " << replay.chunk_bytes();
      total += expected;
    }
    EXPECT_EQ(static_cast<double>(pool.allocations()), total.allocs);
    EXPECT_EQ(static_cast<double>(pool.allocated_bytes()), total.bytes);
  }
}

// --- metric contexts and serialization (metric_contexts.h, dogstatsd_serializer.h) ------------

// metrics_families_test.cc's InitCostsExactlyTheContextsAndTheirTagStorage, on the constructor
// itself (the default 7,500 contexts and 500, 26 tags), and its header's sentence:
//   allocs(owned) - allocs(handles) = #tags longer than 15 chars - interner().allocations().
// Catches a long tag built by reserve() + append (30-character rounding), a tag vector not
// reserved (its growth), a key or value interned twice, or owned tags copied into place.
TEST(MetricsAllocChecks, BuildingContextsCostsExactlyTheirListNamesAndTagStorage) {
  for (int contexts : {ContextGenerator::kDefaultContexts, 500}) {
    const ContextGenerator generator(contexts, ContextGenerator::kDefaultTagsPerContext);
    const Heap owned = ExpectedInit(generator, TagStorage::kOwned);
    const Heap handles = ExpectedInit(generator, TagStorage::kHandles);
    ALLOCBENCH_EXPECT_ALLOCS(MetricContexts(generator, TagStorage::kOwned), owned.allocs,
                             owned.bytes)
        << contexts << " contexts";
    ALLOCBENCH_EXPECT_ALLOCS(MetricContexts(generator, TagStorage::kHandles), handles.allocs,
                             handles.bytes)
        << contexts << " contexts";
    const MetricContexts built(generator, TagStorage::kHandles);
    const Heap interner = ContextsInterner(generator);
    EXPECT_EQ(static_cast<double>(built.interner().allocations()), interner.allocs);
    EXPECT_EQ(static_cast<double>(built.interner().allocated_bytes()), interner.bytes);
    EXPECT_EQ(owned.allocs - handles.allocs,
              static_cast<double>(LongTagStrings(generator)) - interner.allocs);
  }
}

// What the contexts allocate they free: both storages are built and dropped with nothing left
// (the tag_interning/init family drops them every op). Catches any block kept past the
// contexts' life (a pool chunk, an index table, a tag vector released instead of freed).
TEST(MetricsAllocChecks, ContextsLeaveNothingBehind) {
  const ContextGenerator generator(500, ContextGenerator::kDefaultTagsPerContext);
  for (TagStorage storage : {TagStorage::kOwned, TagStorage::kHandles}) {
    ALLOCBENCH_EXPECT_NO_LEAK(MetricContexts(generator, storage));
  }
}

// dogstatsd_serializer.h: "once it has grown to a payload's size, serializing the same contexts
// again allocates nothing, whatever the tag storage"; and the first serialization grows the
// buffer identically for both storages, their payloads being byte-identical (the
// tag_interning/serialize family's first_op_bytes). Catches the buffer's capacity given up between
// calls (a swap with a fresh string, shrink_to_fit), or AppendTags building a temporary string
// per context.
TEST(MetricsAllocChecks, SerializingAgainAllocatesNothingAndTheFirstGrowsTheBufferAlike) {
  const ContextGenerator generator(500, ContextGenerator::kDefaultTagsPerContext);
  const MetricContexts owned(generator, TagStorage::kOwned);
  const MetricContexts handles(generator, TagStorage::kHandles);
  DogStatsdSerializer owned_serializer;
  DogStatsdSerializer handles_serializer;
  std::string_view owned_payload;
  std::string_view handles_payload;
  const allocbench::testing::Counts owned_cold =
      allocbench::testing::Count([&] { owned_payload = owned_serializer.Serialize(owned); });
  const allocbench::testing::Counts handles_cold =
      allocbench::testing::Count([&] { handles_payload = handles_serializer.Serialize(handles); });
  ASSERT_EQ(owned_payload, handles_payload);
  EXPECT_EQ(owned_cold.allocs, handles_cold.allocs);
  EXPECT_EQ(owned_cold.bytes, handles_cold.bytes);
  EXPECT_GE(owned_cold.bytes, owned_payload.size() + 1);  // the last block holds the payload
  ALLOCBENCH_EXPECT_NO_ALLOC(owned_payload = owned_serializer.Serialize(owned));
  ALLOCBENCH_EXPECT_NO_ALLOC(handles_payload = handles_serializer.Serialize(handles));
  EXPECT_EQ(owned_payload, handles_payload);
}

// --- arena and sharded dictionary (arena.h, sharded_string_set.h) -------------------------------

// arena.h: the first chunk is "allocated at construction" (the floor), copies are packed into
// it, a string longer than a chunk gets a block of its own while "the current chunk stays
// current", and a full chunk starts a new one. Catches the floor made lazy, or an oversized string
// making its block the current chunk.
TEST(MetricsAllocChecks, AnArenaCostsItsFirstChunkThenBlocksOnlyWhenFull) {
  constexpr size_t kChunk = 64;
  ArenaReplay replay(kChunk);
  Heap floor;
  replay.NewChunk(&floor);
  ALLOCBENCH_EXPECT_ALLOCS((void)Arena(kChunk), floor.allocs, floor.bytes);
  Arena arena(kChunk);
  for (size_t length : {size_t{20}, size_t{0}, size_t{100}, size_t{30}, size_t{20}, size_t{64}}) {
    const std::string s(length, 'y');
    Heap expected;
    replay.Copy(length, &expected);
    std::string_view copy;
    ALLOCBENCH_EXPECT_ALLOCS(copy = arena.Copy(s), expected.allocs, expected.bytes) << length;
    EXPECT_EQ(copy, s);
  }
}

// sharded_string_set.h: "every shard allocates its first arena chunk at construction, so an
// empty set costs shards x chunk_bytes" (plus the shard list, the shards and their chunk lists'
// first entries); inserting the dictionary_inserts mix costs exactly the replayed fill; a second
// pass re-interns known strings and, "as a profiler does for almost every frame", allocates
// nothing (the family's 0 B/op windows); Find and Get never allocate; and the set frees all of it.
// Catches a shard's chunk made lazy or its size changed, a known string copied again into the
// arena, or a Find that builds a std::string key.
TEST(MetricsAllocChecks, AShardedSetCostsItsFloorThenItsFillThenNothing) {
  const SymbolMix& mix = Mix();
  for (const Shape& shape : kShapes) {
    const DictionaryReplay replay = ReplayDictionary(shape.shards, shape.chunk_bytes, 2);
    EXPECT_EQ(replay.passes[1].allocs, 0.0) << shape.shards;  // the derivation agrees
    ALLOCBENCH_EXPECT_ALLOCS(ShardedStringSet(shape.shards, shape.chunk_bytes),
                             replay.construction.allocs, replay.construction.bytes)
        << shape.shards << " shards";
    ShardedStringSet dictionary(shape.shards, shape.chunk_bytes);
    const auto insert_mix = [&] {
      for (uint32_t i : mix.inserts) dictionary.Insert(mix.distinct[i]);
    };
    ALLOCBENCH_EXPECT_ALLOCS(insert_mix(), replay.passes[0].allocs, replay.passes[0].bytes)
        << shape.shards << " shards";
    ALLOCBENCH_EXPECT_NO_ALLOC(insert_mix());
    ASSERT_EQ(dictionary.size(), mix.distinct.size());
    const auto find_all = [&] {
      for (const std::string& s : mix.distinct) {
        const std::optional<ShardedStringSet::Id> id = dictionary.Find(s);
        if (!id.has_value() || dictionary.Get(*id) != s) ADD_FAILURE() << "lost " << s;
      }
    };
    ALLOCBENCH_EXPECT_NO_ALLOC(find_all());
    ALLOCBENCH_EXPECT_NO_LEAK({
      ShardedStringSet fresh(shape.shards, shape.chunk_bytes);
      for (uint32_t i : mix.inserts) fresh.Insert(mix.distinct[i]);
    });
  }
}

}  // namespace
}  // namespace metrics
