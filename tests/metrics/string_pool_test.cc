// The string pool and the interner: every handle reads back its string, across chunk ends.
#include "metrics/string_pool.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "metrics/string_interner.h"

namespace metrics {
namespace {

TEST(StringPool, EveryHandleReadsBackItsStringAcrossChunkBoundaries) {
  StringPool pool(64);  // tiny chunks: most appends near a chunk end; lengths 0..70 cycle
  std::vector<std::string> strings;
  std::vector<PoolHandle> handles;
  for (int i = 0; i < 500; ++i) {
    strings.push_back(std::string(i % 71, static_cast<char>('a' + i % 26)) + std::to_string(i));
    handles.push_back(pool.Append(strings.back()));
  }
  for (size_t i = 0; i < strings.size(); ++i) EXPECT_EQ(pool.View(handles[i]), strings[i]) << i;
  EXPECT_GT(pool.chunk_count(), 100u);
}

TEST(StringPool, AStringNeverSpansTwoChunks) {
  StringPool pool(16);
  const PoolHandle a = pool.Append("0123456789");  // 10 of 16
  const PoolHandle b = pool.Append("abcdefghij");  // does not fit the 6 left: next chunk
  EXPECT_EQ(a.offset, 0u);
  EXPECT_EQ(b.offset, 16u);
  EXPECT_EQ(pool.View(b), "abcdefghij");
  EXPECT_EQ(pool.chunk_count(), 2u);
}

TEST(StringPool, OversizedStringsGetTheirOwnBlockAndKeepOffsetsPlain) {
  StringPool pool(8);
  const std::string big(30, 'x');  // four slots of 8
  const PoolHandle a = pool.Append("ab");
  const PoolHandle b = pool.Append(big);
  const PoolHandle c = pool.Append("cd");
  EXPECT_EQ(b.offset, 8u);
  EXPECT_EQ(c.offset, 8u * 5);
  EXPECT_EQ(pool.View(a), "ab");
  EXPECT_EQ(pool.View(b), big);
  EXPECT_EQ(pool.View(c), "cd");
}

TEST(StringPool, EmptyStringsNeedNoStorage) {
  StringPool pool;
  EXPECT_EQ(pool.View(pool.Append("")), "");
  EXPECT_EQ(pool.allocations(), 0u);
  const PoolHandle a = pool.Append("a");
  EXPECT_EQ(pool.View(pool.Append("")), "");
  EXPECT_EQ(pool.View(a), "a");
}

TEST(StringPool, ViewsStayValidWhilePoolGrows) {
  StringPool pool(32);
  const std::string_view first = pool.View(pool.Append("first string"));
  const char* where = first.data();
  for (int i = 0; i < 1000; ++i) pool.Append("filler " + std::to_string(i));
  EXPECT_EQ(first, "first string");
  EXPECT_EQ(first.data(), where);
}

TEST(StringPool, AllocationsAreChunksPlusTheChunkList) {
  StringPool pool(100);  // rounded up to 128
  EXPECT_EQ(pool.chunk_bytes(), 128u);
  for (int i = 0; i < 10; ++i) pool.Append(std::string(100, 'z'));  // one chunk each
  EXPECT_EQ(pool.chunk_count(), 10u);
  // The chunk list grows 1, 2, 4, 8, 16: five blocks of 8 B pointers.
  EXPECT_EQ(pool.allocations(), 10u + 5u);
  EXPECT_EQ(pool.allocated_bytes(), 10u * 128u + (1 + 2 + 4 + 8 + 16) * 8u);
}

TEST(StringInterner, EqualStringsShareOneHandle) {
  StringInterner interner(64);
  const PoolHandle a = interner.Intern("service:checkout-api");
  const PoolHandle b = interner.Intern(std::string("service:") + "checkout-api");
  const PoolHandle c = interner.Intern("service:cart-api");
  EXPECT_EQ(a.offset, b.offset);
  EXPECT_EQ(a.length, b.length);
  EXPECT_NE(a.offset, c.offset);
  EXPECT_EQ(interner.size(), 2u);
  EXPECT_EQ(interner.View(c), "service:cart-api");
}

TEST(StringInterner, ThousandsOfStringsRoundTripThroughGrowth) {
  StringInterner interner(256);
  std::vector<PoolHandle> handles;
  for (int i = 0; i < 5000; ++i) handles.push_back(interner.Intern("key." + std::to_string(i)));
  for (int i = 0; i < 5000; ++i) {
    const PoolHandle again = interner.Intern("key." + std::to_string(i));
    EXPECT_EQ(again.offset, handles[i].offset);
    EXPECT_EQ(interner.View(again), "key." + std::to_string(i));
  }
  EXPECT_EQ(interner.size(), 5000u);
}

}  // namespace
}  // namespace metrics
