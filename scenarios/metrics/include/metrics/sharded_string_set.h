// A profiler's string dictionary: a concurrent, deduplicating set of strings handing out
// stable ids, modelled on libdatadog's ParallelStringSet (ProfilesDictionary).
//
// The set is split into `shards` shards picked by hash; each has a mutex, an arena holding its
// strings and a hash index over them. Every shard allocates its first arena chunk at
// construction, so an empty set costs shards x chunk_bytes: 16 x 1 MiB before libdatadog#2246,
// 4 x 256 KiB after. Fewer shards mean more contention between inserting threads.
//
// Thread-safe: Insert, Find, Get and size may be called concurrently.
#ifndef ALLOCBENCH_REFERENCE_METRICS_SHARDED_STRING_SET_H_
#define ALLOCBENCH_REFERENCE_METRICS_SHARDED_STRING_SET_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace metrics {

class ShardedStringSet {
 public:
  // Equal strings always get the same id; ids of distinct strings differ.
  using Id = uint32_t;

  // REQUIRES: shards is a power of two in [1, 256]; chunk_bytes > 0.
  ShardedStringSet(size_t shards, size_t chunk_bytes);
  ~ShardedStringSet();
  ShardedStringSet(const ShardedStringSet&) = delete;
  ShardedStringSet& operator=(const ShardedStringSet&) = delete;

  // The id of `s`, inserting a copy of it first if it is new.
  Id Insert(std::string_view s);
  std::optional<Id> Find(std::string_view s) const;
  // REQUIRES: `id` came from this set. The view lives as long as the set.
  std::string_view Get(Id id) const;

  size_t size() const;  // distinct strings
  size_t shard_count() const { return shards_.size(); }
  size_t reserved_arena_bytes() const;  // every shard's chunks, used or not

 private:
  struct Shard;

  Shard& ShardOf(uint64_t hash, size_t* index) const;

  int shard_bits_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace metrics

#endif  // ALLOCBENCH_REFERENCE_METRICS_SHARDED_STRING_SET_H_
