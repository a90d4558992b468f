// tag_interning and dictionary_inserts through the real count pass on the built-in plugin, with
// the real counting operator new / malloc (glibc backend). Expectations come from the subject's
// generators (the data), from sizes and from the growth policies its headers document, replayed
// here: never from a previous result, nor from the subject's own bookkeeping counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "count_pass.h"
#include "expected_heap.h"
#include "metrics/arena.h"
#include "metrics/context_generator.h"
#include "metrics/hash_index.h"
#include "metrics/metric_contexts.h"
#include "metrics/string_pool.h"
#include "metrics/symbol_mix.h"
#include "plugin_loader.h"

namespace allocbench {
namespace {

using expected::Heap;
using expected::kSsoCapacity;

// A page: what glibc's accounting may add to a block it maps on its own (plus its alignment).
constexpr size_t kPage = 4096;

// A string made at its exact size: a block of size()+1 past the small-string buffer.
size_t ExactString(size_t length) { return length > kSsoCapacity ? length + 1 : 0; }
// A string view assigned into an empty std::string: libstdc++ grows the full buffer to at least
// twice its capacity, max(size, 30) + 1.
size_t AssignedString(size_t length) {
  return length > kSsoCapacity ? std::max(length, 2 * kSsoCapacity) + 1 : 0;
}

// A std::vector of `element` bytes growing one push at a time: capacities 1, 2, 4, ...
// (libstdc++'s policy, on a vector of the same element size).
class VectorGrowth {
 public:
  explicit VectorGrowth(size_t element) : element_(element) {}
  void Push(Heap* heap) {
    if (size_ == capacity_) {
      capacity_ = capacity_ == 0 ? 1 : 2 * capacity_;
      heap->Add(capacity_ * element_);
    }
    ++size_;
  }

 private:
  size_t element_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// hash_index.h's table: 16-byte slots (64-bit hash, 32-bit value, used flag), 16 of them at the
// first call, doubled whenever one more entry would fill it past half; checked at every
// FindOrInsert, found or not.
class IndexGrowth {
 public:
  struct Slot {
    uint64_t hash;
    uint32_t value;
    bool used;
  };
  void Call(size_t size, Heap* heap) {
    if (2 * (size + 1) > slots_) {
      slots_ = slots_ == 0 ? 16 : 2 * slots_;
      heap->Add(slots_ * sizeof(Slot));
    }
  }

 private:
  size_t slots_ = 0;
};

// A bump arena of fixed chunks (arena.h, string_pool.h): a string that does not fit what is
// left of the current chunk starts a new one; one longer than a chunk gets a block of its own.
// Every block is also one more entry of the chunk list, a vector of pointers.
class ChunkReplay {
 public:
  explicit ChunkReplay(size_t chunk_bytes) : chunk_bytes_(chunk_bytes) {}
  void NewChunk(Heap* heap) {
    heap->Add(chunk_bytes_);
    list_.Push(heap);
    used_ = 0;
    has_chunk_ = true;
  }
  void Copy(size_t length, Heap* heap) {
    if (length == 0) return;
    if (length > chunk_bytes_) {
      heap->Add(length);
      list_.Push(heap);
      return;
    }
    if (!has_chunk_ || chunk_bytes_ - used_ < length) NewChunk(heap);
    used_ += length;
  }

 private:
  size_t chunk_bytes_;
  size_t used_ = 0;
  bool has_chunk_ = false;
  VectorGrowth list_{sizeof(void*)};
};

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

// Tags whose "key:value" outgrows the small-string buffer: one block each with owned storage.
int64_t LongTagStrings(const metrics::ContextGenerator& generator) {
  int64_t n = 0;
  for (int c = 0; c < generator.contexts(); ++c) {
    for (int t = 0; t < generator.tags_per_context(); ++t) {
      n += ExactString(generator.TagKey(t).size() + 1 + generator.TagValue(c, t).size()) > 0;
    }
  }
  return n;
}

// The interner of handle storage, replayed on the generator's strings in the order MetricContexts
// interns them (per context, per tag: key, then value): 64 KiB pool chunks and their list, the
// hash index's tables, and the handle list (8-byte handles), each string stored once.
Heap InternerReplay(const metrics::ContextGenerator& generator) {
  Heap heap;
  ChunkReplay pool(metrics::StringPool::kDefaultChunkBytes);
  IndexGrowth index;
  VectorGrowth handles(sizeof(metrics::PoolHandle));
  std::unordered_set<std::string_view> seen;
  const auto intern = [&](std::string_view s) {
    index.Call(seen.size(), &heap);
    if (!seen.insert(s).second) return;
    pool.Copy(s.size(), &heap);
    handles.Push(&heap);
  };
  for (int c = 0; c < generator.contexts(); ++c) {
    for (int t = 0; t < generator.tags_per_context(); ++t) {
      intern(generator.TagKey(t));
      intern(generator.TagValue(c, t));
    }
  }
  return heap;
}

// One initialisation of every context: the context list (reserved once: a name, the owned-tag
// vector and the handle-tag vector per context), each name assigned into an empty string, each
// context's tag vector reserved at its size (a std::string per tag, or two handles), and then the
// storage's own work: a block per long "key:value" (built at its exact size), or the interner.
Heap ExpectedInit(const metrics::ContextGenerator& generator, metrics::TagStorage storage) {
  const bool owned = storage == metrics::TagStorage::kOwned;
  const size_t tags = static_cast<size_t>(generator.tags_per_context());
  constexpr size_t kContext = sizeof(std::string) + 2 * sizeof(std::vector<char>);
  Heap heap;
  heap.Add(static_cast<size_t>(generator.contexts()) * kContext);
  for (int c = 0; c < generator.contexts(); ++c) {
    heap.Add(AssignedString(generator.Name(c).size()));
    heap.Add(tags * (owned ? sizeof(std::string) : 2 * sizeof(metrics::PoolHandle)));
    if (!owned) continue;
    for (size_t t = 0; t < tags; ++t) {
      heap.Add(ExactString(generator.TagKey(static_cast<int>(t)).size() + 1 +
                           generator.TagValue(c, static_cast<int>(t)).size()));
    }
  }
  if (!owned) heap += InternerReplay(generator);
  return heap;
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
              static_cast<double>(long_tags) - InternerReplay(generator).allocs)
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

const metrics::SymbolMix& Mix() {
  static const metrics::SymbolMix mix = metrics::GenerateSymbolMix();  // the scenarios' mix
  return mix;
}

// sharded_string_set.cc's Shard, laid out alike: cache-line aligned, with its mutex, arena, hash
// index and id list.
struct alignas(64) ShardLayout {
  std::mutex mutex;
  metrics::Arena arena;
  metrics::HashIndex index;
  std::vector<std::string_view> strings;
};

// A sharded dictionary, replayed: `construction` is the empty set (the shard list, and per shard
// its object, its first arena chunk and the chunk list's first entry); `fill` is inserting the
// whole mix once, in order, from empty: per shard (picked by the top bits of std::hash), the
// arena's further chunks, the index's tables and the id list (16-byte views) growing.
struct DictionaryReplay {
  Heap construction;
  Heap fill;
};

DictionaryReplay ReplayDictionary(size_t shards, size_t chunk_bytes) {
  DictionaryReplay replay;
  replay.construction.Add(shards * sizeof(void*));
  struct Shard {
    explicit Shard(size_t chunk_bytes) : arena(chunk_bytes) {}
    ChunkReplay arena;
    IndexGrowth index;
    VectorGrowth strings{sizeof(std::string_view)};
    std::unordered_set<std::string_view> seen;
  };
  std::vector<Shard> state(shards, Shard(chunk_bytes));
  for (Shard& shard : state) {
    replay.construction.Add(sizeof(ShardLayout));
    shard.arena.NewChunk(&replay.construction);
  }
  const int bits = __builtin_ctzll(shards);
  const metrics::SymbolMix& mix = Mix();
  for (uint32_t i : mix.inserts) {
    const std::string_view s = mix.distinct[i];
    const uint64_t hash = std::hash<std::string_view>()(s);
    Shard& shard = state[bits == 0 ? 0 : hash >> (64 - bits)];
    shard.index.Call(shard.seen.size(), &replay.fill);
    if (!shard.seen.insert(s).second) continue;
    shard.strings.Push(&replay.fill);
    shard.arena.Copy(s.size(), &replay.fill);
  }
  return replay;
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
    const DictionaryReplay replay = ReplayDictionary(shards, static_cast<size_t>(kib) * 1024);
    // Set up from scratch per op: the floor is in B/op itself, exactly.
    const CountOutcome fresh = Count(Fresh(shards, kib));
    ASSERT_EQ(fresh.error, "");
    EXPECT_EQ(fresh.metrics.bytes_per_op, replay.construction.bytes + replay.fill.bytes) << shards;
    EXPECT_EQ(fresh.metrics.allocs_per_op, replay.construction.allocs + replay.fill.allocs)
        << shards;
    EXPECT_TRUE(fresh.metrics.steady) << fresh.metrics.steady_reason;
    // A shared dictionary made before the loop: one thread's cold op is the fill alone.
    const CountOutcome shared = Count(Frames(shards, kib, 1));
    ASSERT_EQ(shared.error, "");
    EXPECT_EQ(shared.metrics.first_op_bytes, replay.fill.bytes) << shards;
    EXPECT_EQ(shared.metrics.first_op_allocs, replay.fill.allocs) << shards;
  }
}

TEST_F(MetricsFamilies, SmallerShardsAndChunksCutTheFloorAsTheArenaArithmeticSays) {
  // 16 x 1 MiB of first chunks against 4 x 256 KiB, in the allocator's own accounting: what the
  // empty set requests, plus at most a page and an alignment per block (glibc maps each chunk on
  // its own and rounds it to pages).
  for (const auto& [shards, kib] : {std::pair{16, 1024}, std::pair{4, 256}}) {
    const Heap empty = ReplayDictionary(shards, static_cast<size_t>(kib) * 1024).construction;
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
