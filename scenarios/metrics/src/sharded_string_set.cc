#include "metrics/sharded_string_set.h"

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "metrics/arena.h"
#include "metrics/hash_index.h"

namespace metrics {

// Cache-line aligned so that two shards' mutexes never share a line.
struct alignas(64) ShardedStringSet::Shard {
  explicit Shard(size_t chunk_bytes) : arena(chunk_bytes) {}

  mutable std::mutex mutex;
  Arena arena;
  HashIndex index;                        // hash -> local id
  std::vector<std::string_view> strings;  // local id -> the arena's copy
};

ShardedStringSet::ShardedStringSet(size_t shards, size_t chunk_bytes) {
  if (shards == 0 || shards > 256 || (shards & (shards - 1)) != 0) {
    throw std::invalid_argument(
        "ShardedStringSet: shards must be a power of two in [1, 256], not " +
        std::to_string(shards));
  }
  shard_bits_ = __builtin_ctzll(shards);
  shards_.reserve(shards);
  for (size_t i = 0; i < shards; ++i) shards_.push_back(std::make_unique<Shard>(chunk_bytes));
}

ShardedStringSet::~ShardedStringSet() = default;

// Shards take the hash's top bits, the index its bottom bits: the two choices stay independent.
ShardedStringSet::Shard& ShardedStringSet::ShardOf(uint64_t hash, size_t* index) const {
  *index = shard_bits_ == 0 ? 0 : hash >> (64 - shard_bits_);
  return *shards_[*index];
}

ShardedStringSet::Id ShardedStringSet::Insert(std::string_view s) {
  const uint64_t hash = HashString(s);
  size_t shard_index;
  Shard& shard = ShardOf(hash, &shard_index);
  std::lock_guard<std::mutex> lock(shard.mutex);
  const uint32_t local = shard.index.FindOrInsert(
      hash, [&](uint32_t candidate) { return shard.strings[candidate] == s; },
      [&] {
        shard.strings.push_back(shard.arena.Copy(s));
        return static_cast<uint32_t>(shard.strings.size() - 1);
      });
  if ((static_cast<uint64_t>(local) << shard_bits_) > UINT32_MAX) {
    throw std::length_error("ShardedStringSet: ids exhausted");
  }
  return static_cast<Id>((local << shard_bits_) | shard_index);
}

std::optional<ShardedStringSet::Id> ShardedStringSet::Find(std::string_view s) const {
  const uint64_t hash = HashString(s);
  size_t shard_index;
  const Shard& shard = ShardOf(hash, &shard_index);
  std::lock_guard<std::mutex> lock(shard.mutex);
  const uint32_t* local =
      shard.index.Find(hash, [&](uint32_t candidate) { return shard.strings[candidate] == s; });
  if (local == nullptr) return std::nullopt;
  return static_cast<Id>((*local << shard_bits_) | shard_index);
}

std::string_view ShardedStringSet::Get(Id id) const {
  const Shard& shard = *shards_[id & (shards_.size() - 1)];
  std::lock_guard<std::mutex> lock(shard.mutex);  // `strings` may be growing concurrently
  return shard.strings[id >> shard_bits_];
}

size_t ShardedStringSet::size() const {
  size_t total = 0;
  for (const auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mutex);
    total += shard->strings.size();
  }
  return total;
}

size_t ShardedStringSet::reserved_arena_bytes() const {
  size_t total = 0;
  for (const auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mutex);
    total += shard->arena.reserved_bytes();
  }
  return total;
}

}  // namespace metrics
