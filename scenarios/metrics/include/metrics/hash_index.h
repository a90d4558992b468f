// An open-addressing index from a 64-bit hash to a 32-bit value (a handle, an id). The keys
// themselves live elsewhere (a string pool, an arena), so the index stores each string once and
// costs no allocation per entry: only its table, which doubles in steps.
//
// Not thread-safe; the sharded set puts one behind each shard's mutex.
#ifndef ALLOCBENCH_REFERENCE_METRICS_HASH_INDEX_H_
#define ALLOCBENCH_REFERENCE_METRICS_HASH_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace metrics {

// std::hash of a string_view is MurmurHash2 with a fixed seed in libstdc++: the same on every
// run, so every table and shard choice (and thus every allocation count) is deterministic.
inline uint64_t HashString(std::string_view s) { return std::hash<std::string_view>()(s); }

class HashIndex {
 public:
  HashIndex() = default;  // allocates nothing until the first insert

  // Returns the value whose key `matches` (called with candidate values of the same hash), or
  // inserts `make()` under `hash` and returns it. `make` runs at most once.
  template <class Matches, class Make>
  uint32_t FindOrInsert(uint64_t hash, Matches&& matches, Make&& make) {
    if (2 * (size_ + 1) > slots_.size()) Grow();  // load factor <= 1/2: short probe sequences
    Slot* slot = Probe(slots_.data(), slots_.size(), hash, matches);
    if (slot->used) return slot->value;
    *slot = Slot{hash, make(), true};
    ++size_;
    return slot->value;
  }

  // The value whose key `matches`, or nullptr.
  template <class Matches>
  const uint32_t* Find(uint64_t hash, Matches&& matches) const {
    if (slots_.empty()) return nullptr;
    const Slot* slot = Probe(slots_.data(), slots_.size(), hash, matches);
    return slot->used ? &slot->value : nullptr;
  }

  size_t size() const { return size_; }
  // Tables allocated so far and their bytes: what this index has cost, by construction.
  size_t allocations() const { return allocations_; }
  size_t allocated_bytes() const { return allocated_bytes_; }

 private:
  struct Slot {
    uint64_t hash;
    uint32_t value;
    bool used;
  };

  // The slot holding the matching key, or the empty slot where it belongs. `SlotT` is Slot or
  // const Slot. REQUIRES: count is a power of two and the table is never full.
  template <class SlotT, class Matches>
  static SlotT* Probe(SlotT* slots, size_t count, uint64_t hash, Matches& matches) {
    const size_t mask = count - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {  // linear probing
      SlotT& slot = slots[i];
      if (!slot.used || (slot.hash == hash && matches(slot.value))) return &slot;
    }
  }

  void Grow() {
    std::vector<Slot> old =
        std::exchange(slots_, std::vector<Slot>(slots_.empty() ? 16 : 2 * slots_.size()));
    ++allocations_;
    allocated_bytes_ += slots_.size() * sizeof(Slot);
    const size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (!s.used) continue;
      size_t i = s.hash & mask;
      while (slots_[i].used) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;  // size is zero or a power of two
  size_t size_ = 0;
  size_t allocations_ = 0;
  size_t allocated_bytes_ = 0;
};

}  // namespace metrics

#endif  // ALLOCBENCH_REFERENCE_METRICS_HASH_INDEX_H_
