// The reference metrics library's heap traffic, replayed from the growth policies its headers
// document (string_pool.h's chunks and slots, hash_index.h's tables, arena.h's chunks,
// string_interner.h, metric_contexts.h, sharded_string_set.h) on top of tests/expected_heap.h.
// Shared by tests/metrics/metrics_families_test.cc (the tag_interning and dictionary_inserts
// families through the count pass) and tests/metrics/alloc_checks_test.cc (the same promises on
// the library's own calls), so both derive their exact counts from one replay.
#ifndef ALLOCBENCH_TESTS_METRICS_EXPECTED_METRICS_H_
#define ALLOCBENCH_TESTS_METRICS_EXPECTED_METRICS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "expected_heap.h"
#include "metrics/arena.h"
#include "metrics/context_generator.h"
#include "metrics/hash_index.h"
#include "metrics/metric_contexts.h"
#include "metrics/string_pool.h"
#include "metrics/symbol_mix.h"

namespace allocbench::expected {

// hash_index.h's table: 16-byte slots (64-bit hash, 32-bit value, used flag), 16 of them at the
// first call, doubled whenever one more entry would fill it past half ("load factor <= 1/2");
// checked at every FindOrInsert, found or not.
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

// string_pool.h's chunks: `chunk_bytes` rounded up to a power of two, the first chunk at the
// first non-empty Append, a new one when a string does not fit what is left; a string longer
// than a chunk gets a block of its own covering as many chunk slots as it needs, and the next
// string starts a fresh chunk. Every slot is one more entry of the chunk list, a vector of
// pointers. An empty string needs no storage.
class PoolReplay {
 public:
  explicit PoolReplay(size_t chunk_bytes) {
    while (chunk_ < chunk_bytes) chunk_ *= 2;
  }
  void Append(size_t length, Heap* heap) {
    if (length == 0) return;
    if (length > chunk_) {
      heap->Add(length);
      for (size_t slots = (length + chunk_ - 1) / chunk_; slots > 0; --slots) list_.Push(heap);
      left_ = 0;
      return;
    }
    if (left_ < length) {
      heap->Add(chunk_);
      list_.Push(heap);
      left_ = chunk_;
    }
    left_ -= length;
  }
  size_t chunk_bytes() const { return chunk_; }

 private:
  size_t chunk_ = 1;
  size_t left_ = 0;
  VectorGrowth list_{sizeof(void*)};
};

// arena.h's chunks: the first at construction (NewChunk); a string that does not fit what is
// left starts a new chunk; one longer than a chunk gets a block of its own and the current chunk
// stays current. Every block is one more entry of the chunk list, a vector of pointers.
class ArenaReplay {
 public:
  explicit ArenaReplay(size_t chunk_bytes) : chunk_(chunk_bytes) {}
  void NewChunk(Heap* heap) {
    heap->Add(chunk_);
    list_.Push(heap);
    left_ = chunk_;
  }
  void Copy(size_t length, Heap* heap) {
    if (length == 0) return;
    if (length > chunk_) {
      heap->Add(length);
      list_.Push(heap);
      return;
    }
    if (left_ < length) NewChunk(heap);
    left_ -= length;
  }

 private:
  size_t chunk_;
  size_t left_ = 0;
  VectorGrowth list_{sizeof(void*)};
};

// An interner (string_interner.h), replayed: each call checks the index's table; each new string
// goes to the pool and one 8-byte handle onto the handle list; a known one costs nothing more.
class InternerReplay {
 public:
  explicit InternerReplay(size_t chunk_bytes = metrics::StringPool::kDefaultChunkBytes)
      : pool_(chunk_bytes) {}
  void Intern(std::string_view s, Heap* heap) {
    index_.Call(seen_.size(), heap);
    if (!seen_.insert(s).second) return;
    pool_.Append(s.size(), heap);
    handles_.Push(heap);
  }

 private:
  PoolReplay pool_;
  IndexGrowth index_;
  VectorGrowth handles_{sizeof(metrics::PoolHandle)};
  std::unordered_set<std::string_view> seen_;
};

// Handle storage's interner over the generator's strings, in the order MetricContexts interns
// them (per context, per tag: key, then value).
inline Heap ContextsInterner(const metrics::ContextGenerator& generator) {
  Heap heap;
  InternerReplay interner;
  for (int c = 0; c < generator.contexts(); ++c) {
    for (int t = 0; t < generator.tags_per_context(); ++t) {
      interner.Intern(generator.TagKey(t), &heap);
      interner.Intern(generator.TagValue(c, t), &heap);
    }
  }
  return heap;
}

// Tags whose "key:value" outgrows the small-string buffer: one block each with owned storage.
inline int64_t LongTagStrings(const metrics::ContextGenerator& generator) {
  int64_t n = 0;
  for (int c = 0; c < generator.contexts(); ++c) {
    for (int t = 0; t < generator.tags_per_context(); ++t) {
      n += ExactString(generator.TagKey(t).size() + 1 + generator.TagValue(c, t).size()) > 0;
    }
  }
  return n;
}

// Building every context once (MetricContexts' constructor, the tag_interning/init op): the
// context list (reserved once: a name, the owned-tag vector and the handle-tag vector per
// context), each name assigned into an empty string, each context's tag vector reserved at its
// size (a std::string per tag, or two handles), and then the storage's own work: a block per long
// "key:value" (built at its exact size), or the interner.
inline Heap ExpectedInit(const metrics::ContextGenerator& generator, metrics::TagStorage storage) {
  const bool owned = storage == metrics::TagStorage::kOwned;
  const size_t tags = static_cast<size_t>(generator.tags_per_context());
  constexpr size_t kContext = sizeof(std::string) + 2 * sizeof(std::vector<char>);
  Heap heap;
  heap.Add(static_cast<size_t>(generator.contexts()) * kContext);
  for (int c = 0; c < generator.contexts(); ++c) {
    heap.Add(GrownString(generator.Name(c).size()));
    heap.Add(tags * (owned ? sizeof(std::string) : 2 * sizeof(metrics::PoolHandle)));
    if (!owned) continue;
    for (size_t t = 0; t < tags; ++t) {
      heap.Add(ExactString(generator.TagKey(static_cast<int>(t)).size() + 1 +
                           generator.TagValue(c, static_cast<int>(t)).size()));
    }
  }
  if (!owned) heap += ContextsInterner(generator);
  return heap;
}

// sharded_string_set.cc's Shard, laid out alike: cache-line aligned, with its mutex, arena, hash
// index and id list.
struct alignas(64) ShardLayout {
  std::mutex mutex;
  metrics::Arena arena;
  metrics::HashIndex index;
  std::vector<std::string_view> strings;
};

// The dictionary_inserts scenarios' mix.
inline const metrics::SymbolMix& Mix() {
  static const metrics::SymbolMix mix = metrics::GenerateSymbolMix();
  return mix;
}

// A sharded dictionary, replayed: `construction` is the empty set (the shard list, and per shard
// its object, its first arena chunk and the chunk list's first entry); `passes[i]` is inserting
// the whole mix once more, in order (`passes[0]` the fill from empty): per shard (picked by the
// top bits of std::hash), the index's tables, the id list (16-byte views) and the arena's further
// chunks.
struct DictionaryReplay {
  Heap construction;
  std::vector<Heap> passes;
};

inline DictionaryReplay ReplayDictionary(size_t shards, size_t chunk_bytes, int passes) {
  DictionaryReplay replay;
  replay.construction.Add(shards * sizeof(void*));
  struct Shard {
    explicit Shard(size_t chunk_bytes) : arena(chunk_bytes) {}
    ArenaReplay arena;
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
  for (int pass = 0; pass < passes; ++pass) {
    Heap& heap = replay.passes.emplace_back();
    for (uint32_t i : mix.inserts) {
      const std::string_view s = mix.distinct[i];
      const uint64_t hash = std::hash<std::string_view>()(s);
      Shard& shard = state[bits == 0 ? 0 : hash >> (64 - bits)];
      shard.index.Call(shard.seen.size(), &heap);
      if (!shard.seen.insert(s).second) continue;
      shard.strings.Push(&heap);
      shard.arena.Copy(s.size(), &heap);
    }
  }
  return replay;
}

}  // namespace allocbench::expected

#endif  // ALLOCBENCH_TESTS_METRICS_EXPECTED_METRICS_H_
