// The profiler's string dictionary: deduplication, ids, the arena floor, and concurrent inserts
// with more threads than this machine has cores.
#include "metrics/sharded_string_set.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "metrics/arena.h"
#include "metrics/symbol_mix.h"

namespace metrics {
namespace {

TEST(Arena, FirstChunkIsAllocatedAtConstruction) {
  Arena arena(4096);
  EXPECT_EQ(arena.chunk_count(), 1u);
  EXPECT_EQ(arena.reserved_bytes(), 4096u);
}

TEST(Arena, CopiesStayValidAndOversizedStringsGetTheirOwnBlock) {
  Arena arena(16);
  const std::string_view a = arena.Copy("0123456789");
  const std::string_view b = arena.Copy("abcdefghij");  // does not fit the 6 left
  const std::string big(40, 'q');
  const std::string_view c = arena.Copy(big);
  const std::string_view d = arena.Copy("xyz");  // still fits the second chunk
  EXPECT_EQ(a, "0123456789");
  EXPECT_EQ(b, "abcdefghij");
  EXPECT_EQ(c, big);
  EXPECT_EQ(d, "xyz");
  EXPECT_EQ(d.data(), b.data() + b.size());
  EXPECT_EQ(arena.chunk_count(), 3u);
  EXPECT_EQ(arena.reserved_bytes(), 16u + 16u + 40u);
}

TEST(ShardedStringSet, EqualStringsGetOneIdDistinctOnesDiffer) {
  ShardedStringSet set(4, 1024);
  const auto a = set.Insert("checkout.services.order_service:OrderService.process_order_items");
  const auto b = set.Insert("/app/src/checkout/services/order_service.py");
  const auto c = set.Insert(std::string("checkout.services.order_service:") +
                            "OrderService.process_order_items");
  EXPECT_EQ(a, c);
  EXPECT_NE(a, b);
  EXPECT_EQ(set.size(), 2u);
  EXPECT_EQ(set.Get(b), "/app/src/checkout/services/order_service.py");
  EXPECT_EQ(set.Find("/app/src/checkout/services/order_service.py"), b);
  EXPECT_FALSE(set.Find("not inserted").has_value());
}

TEST(ShardedStringSet, SizeCountsDistinctStringsOfTheMix) {
  const SymbolMix mix = GenerateSymbolMix(300);
  for (size_t shards : {1, 4, 16}) {
    ShardedStringSet set(shards, 4096);
    std::set<ShardedStringSet::Id> ids;
    for (uint32_t i : mix.inserts) ids.insert(set.Insert(mix.distinct[i]));
    EXPECT_EQ(set.size(), mix.distinct.size()) << shards;
    EXPECT_EQ(ids.size(), mix.distinct.size()) << shards;
    for (const std::string& s : mix.distinct) EXPECT_EQ(set.Get(*set.Find(s)), s);
  }
}

TEST(ShardedStringSet, EmptySetReservesOneChunkPerShard) {
  EXPECT_EQ(ShardedStringSet(16, 1 << 20).reserved_arena_bytes(), 16u << 20);
  EXPECT_EQ(ShardedStringSet(4, 256 << 10).reserved_arena_bytes(), 1u << 20);
  EXPECT_THROW(ShardedStringSet(3, 1024), std::invalid_argument);
}

TEST(SymbolMix, IsDeterministicWithManyRepeats) {
  const SymbolMix a = GenerateSymbolMix();
  const SymbolMix b = GenerateSymbolMix();
  EXPECT_EQ(a.distinct, b.distinct);
  EXPECT_EQ(a.inserts, b.inserts);
  EXPECT_GT(a.distinct.size(), 1000u);
  EXPECT_GT(a.inserts.size(), 10 * a.distinct.size());  // mostly repeats
}

// Every thread inserts the whole mix, each from its own starting point, into one set, and
// remembers the ids it got; then every id must agree and every string be found.
void InsertConcurrently(int threads, size_t shards, size_t chunk_bytes) {
  static const SymbolMix mix = GenerateSymbolMix(400);
  ShardedStringSet set(shards, chunk_bytes);
  std::vector<std::vector<ShardedStringSet::Id>> ids(
      threads, std::vector<ShardedStringSet::Id>(mix.distinct.size()));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const size_t n = mix.inserts.size();
      for (size_t k = 0, i = n * t / threads; k < n; ++k, i = (i + 1) % n) {
        ids[t][mix.inserts[i]] = set.Insert(mix.distinct[mix.inserts[i]]);
      }
    });
  }
  for (std::thread& w : workers) w.join();
  ASSERT_EQ(set.size(), mix.distinct.size());
  for (size_t s = 0; s < mix.distinct.size(); ++s) {
    const auto found = set.Find(mix.distinct[s]);
    ASSERT_TRUE(found.has_value()) << mix.distinct[s];
    EXPECT_EQ(set.Get(*found), mix.distinct[s]);
    for (int t = 0; t < threads; ++t) ASSERT_EQ(ids[t][s], *found) << "thread " << t;
  }
}

TEST(ShardedStringSetThreads, OneThread) { InsertConcurrently(1, 16, 1 << 20); }
TEST(ShardedStringSetThreads, TwoThreads) { InsertConcurrently(2, 4, 256 << 10); }
TEST(ShardedStringSetThreads, FourThreads) { InsertConcurrently(4, 4, 256 << 10); }
TEST(ShardedStringSetThreads, SixteenThreadsOnFourShards) { InsertConcurrently(16, 4, 256 << 10); }
TEST(ShardedStringSetThreads, SixteenThreadsOnSixteenShards) {
  InsertConcurrently(16, 16, 1 << 20);
}
TEST(ShardedStringSetThreads, SixteenThreadsOnOneShardWithTinyChunks) {
  InsertConcurrently(16, 1, 512);  // maximal contention, chunks added under contention
}

}  // namespace
}  // namespace metrics
