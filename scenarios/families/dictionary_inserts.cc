// dictionary_inserts: a profiler's string dictionary, before and after libdatadog#2246
// (16 shards x 1 MiB arena chunks -> 4 x 256 KiB: the empty dictionary's floor from 16 MiB to
// 1 MiB of strings arena, at the price of more contention between inserting threads).
//
// The mix is a Python service's profile (SymbolMix): ~49K inserts of ~3.7K distinct function
// names, file paths and module-qualified symbols, generated once per process.
#include <allocbench/scenario.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "metrics/sharded_string_set.h"
#include "metrics/symbol_mix.h"

namespace {

using metrics::ShardedStringSet;
using metrics::SymbolMix;

const SymbolMix& Mix() {
  static const SymbolMix mix = metrics::GenerateSymbolMix();
  return mix;
}

// Inserts the whole mix, starting at `start` and wrapping around.
void InsertMix(ShardedStringSet& dictionary, const SymbolMix& mix, size_t start) {
  const size_t n = mix.inserts.size();
  for (size_t k = 0, i = start; k < n; ++k, i = i + 1 == n ? 0 : i + 1) {
    ShardedStringSet::Id id = dictionary.Insert(mix.distinct[mix.inserts[i]]);
    allocbench::DoNotOptimize(id);
  }
}

// A floor is a footprint difference; reported in both views, because they disagree: arena
// chunks are allocated but not written, so the allocator counts them and RSS mostly does not.
// A view the backend does not give (-1, e.g. mimalloc's live bytes) is left out, not set to 0.
void SetFloorCounters(allocbench::State& state, const std::string& prefix,
                      const allocbench::Footprint& before, const allocbench::Footprint& after) {
  const auto set = [&](const char* view, int64_t from, int64_t to) {
    if (from < 0 || to < 0) return;
    state.SetCounter((prefix + view).c_str(), static_cast<double>(to - from), "B");
  };
  set("_allocator_bytes", before.allocator_allocated_bytes, after.allocator_allocated_bytes);
  set("_rss_bytes", before.rss_bytes, after.rss_bytes);
}

bool ReadArgs(allocbench::State& state, size_t* shards, size_t* chunk_bytes) {
  const int64_t s = state.range(0);
  const int64_t kib = state.range(1);
  if (s < 1 || s > 256 || (s & (s - 1)) != 0 || kib < 1) {
    state.SkipWithError("dictionary_inserts: shards must be a power of two <= 256, chunk_kib >= 1");
    return false;
  }
  *shards = static_cast<size_t>(s);
  *chunk_bytes = static_cast<size_t>(kib) * 1024;
  return true;
}

// Shared by the instance's threads: thread 0 publishes it before its loop; the others load it
// inside theirs, after the loop-start barrier, and never touch it after the loop-end barrier.
std::atomic<ShardedStringSet*> g_shared{nullptr};

// One op: every thread inserts the whole mix (each from its own starting point) into one
// shared dictionary. The threads' cold ops fill it; every later op re-interns known strings,
// as a profiler does for almost every frame, and allocates nothing: the windows are steady at
// 0 B/op whatever the shards, chunks and threads. What differs is time (contention, ns/op per
// thread count), the fill (first_op_bytes, exact at one thread) and the floor (counters).
ALLOCBENCH_SCENARIO(DictionaryProfileFrames, state) {
  size_t shards, chunk_bytes;
  if (!ReadArgs(state, &shards, &chunk_bytes)) return;
  const SymbolMix& mix = Mix();  // built before any footprint is read
  std::unique_ptr<ShardedStringSet> shared;
  if (state.thread_index() == 0) {
    // Every footprint is read before any counter is set: SetCounter itself allocates.
    const allocbench::Footprint before = state.ReadFootprint();
    shared = std::make_unique<ShardedStringSet>(shards, chunk_bytes);
    const allocbench::Footprint empty = state.ReadFootprint();
    allocbench::Footprint filled;
    {
      ShardedStringSet probe(shards, chunk_bytes);
      InsertMix(probe, mix, 0);
      filled = state.ReadFootprint();
    }
    SetFloorCounters(state, "floor_empty", before, empty);
    SetFloorCounters(state, "floor_filled", empty, filled);
    state.SetCounter("inserts_per_op", static_cast<double>(mix.inserts.size()));
    state.SetCounter("distinct_strings", static_cast<double>(mix.distinct.size()));
    g_shared.store(shared.get(), std::memory_order_release);
  }
  const size_t start = mix.inserts.size() * state.thread_index() / state.threads();
  for (auto _ : state) {
    InsertMix(*g_shared.load(std::memory_order_acquire), mix, start);
  }
  if (state.thread_index() != 0) return;
  g_shared.store(nullptr, std::memory_order_release);
  bool complete = shared->size() == mix.distinct.size();
  for (size_t i = 0; complete && i < mix.distinct.size(); ++i) {
    const auto id = shared->Find(mix.distinct[i]);
    complete = id.has_value() && shared->Get(*id) == mix.distinct[i];
  }
  if (!complete) state.SkipWithError("dictionary_inserts: inserted strings were lost");
}
ALLOCBENCH_REGISTER(DictionaryProfileFrames)
    ->Name("dictionary_inserts/profile_frames")
    ->ArgNames({"shards", "chunk_kib"})
    ->Args({16, 1024})  // before #2246
    ->Args({4, 256})    // after
    ->Threads(1)
    ->Threads(2)
    ->Threads(4)
    ->Threads(16)
    ->CountOps(1, 2);

// One op: a new dictionary, filled with the whole mix, then dropped: what a profiler pays to
// set one up, floor included, so before and after show in the B/op column itself.
ALLOCBENCH_SCENARIO(DictionaryFresh, state) {
  size_t shards, chunk_bytes;
  if (!ReadArgs(state, &shards, &chunk_bytes)) return;
  const SymbolMix& mix = Mix();
  for (auto _ : state) {
    ShardedStringSet dictionary(shards, chunk_bytes);
    InsertMix(dictionary, mix, 0);
  }
}
ALLOCBENCH_REGISTER(DictionaryFresh)
    ->Name("dictionary_inserts/fresh_dictionary")
    ->ArgNames({"shards", "chunk_kib"})
    ->Args({16, 1024})
    ->Args({4, 256})
    ->CountOps(1, 2);

}  // namespace
