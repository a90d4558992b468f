// Both tag storages behave the same: set, overwrite, unknown keys, known keys given as strings.
#include "tracer/tag_store.h"

#include <gtest/gtest.h>

#include <string>

#include "recording_writer.h"
#include "tracer/tag_id.h"

namespace tracer {
namespace {

TEST(TracerTagId, EveryIdRoundTripsThroughItsName) {
  for (std::size_t i = 0; i < kKnownTagCount; ++i) {
    const auto id = static_cast<TagId>(i);
    ASSERT_FALSE(TagName(id).empty()) << i;
    EXPECT_EQ(FindTagId(TagName(id)), id) << TagName(id);
  }
  EXPECT_EQ(TagName(TagId::kHttpStatusCode), "http.status_code");
  EXPECT_EQ(TagName(TagId::kDbStatement), "db.statement");
  EXPECT_EQ(FindTagId("customer.tier"), std::nullopt);
  EXPECT_EQ(FindTagId(""), std::nullopt);
}

class TracerTagStore : public ::testing::TestWithParam<TagStorage> {};

TEST_P(TracerTagStore, ReadsBackWhatWasSet) {
  TagStore tags(GetParam());
  EXPECT_EQ(tags.size(), 0u);
  EXPECT_EQ(tags.Get(TagId::kHttpMethod), std::nullopt);
  tags.Set(TagId::kHttpMethod, "GET");
  tags.Set(TagId::kHttpUserAgent, std::string(100, 'u'));  // beyond the small-string buffer
  EXPECT_EQ(tags.Get(TagId::kHttpMethod), "GET");
  EXPECT_EQ(tags.Get("http.method"), "GET");
  EXPECT_EQ(tags.Get(TagId::kHttpUserAgent), std::string(100, 'u'));
  EXPECT_EQ(tags.Get(TagId::kHttpUrl), std::nullopt);
  EXPECT_EQ(tags.size(), 2u);
}

TEST_P(TracerTagStore, OverwriteKeepsOneEntryWithTheLastValue) {
  TagStore tags(GetParam());
  tags.Set(TagId::kHttpStatusCode, "200");
  tags.Set(TagId::kHttpStatusCode, "a status much longer than fifteen characters");
  tags.Set("http.status_code", "503");
  EXPECT_EQ(tags.Get(TagId::kHttpStatusCode), "503");
  tags.Set("customer.tier", "gold");
  tags.Set("customer.tier", "platinum");
  EXPECT_EQ(tags.Get("customer.tier"), "platinum");
  EXPECT_EQ(tags.size(), 2u);
}

TEST_P(TracerTagStore, UnknownKeysReadBack) {
  TagStore tags(GetParam());
  tags.Set("customer.tier", "gold");
  tags.Set("feature.flag.checkout_v2", "enabled");
  EXPECT_EQ(tags.Get("customer.tier"), "gold");
  EXPECT_EQ(tags.Get("feature.flag.checkout_v2"), "enabled");
  EXPECT_EQ(tags.Get("customer"), std::nullopt);
  EXPECT_EQ(tags.size(), 2u);
}

TEST_P(TracerTagStore, AKnownKeyGivenAsAStringIsTheSameTagAsItsId) {
  TagStore tags(GetParam());
  tags.Set("db.statement", "SELECT 1");
  EXPECT_EQ(tags.Get(TagId::kDbStatement), "SELECT 1");
  tags.Set(TagId::kDbStatement, "SELECT 2");
  EXPECT_EQ(tags.Get("db.statement"), "SELECT 2");
  EXPECT_EQ(tags.size(), 1u);
}

TEST_P(TracerTagStore, ForEachVisitsEveryTagOnce) {
  TagStore tags(GetParam());
  tags.Set(TagId::kComponent, "libpq");
  tags.Set(TagId::kErrorStack, "frame");
  tags.Set("zeta", "z");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"component", "libpq"}, {"error.stack", "frame"}, {"zeta", "z"}};
  EXPECT_EQ(SortedTags(tags), expected);
}

TEST(TracerTagStoreBoth, AgreeOnTheSameSequenceOfSets) {
  TagStore map(TagStorage::kMap);
  TagStore dense(TagStorage::kDense);
  for (TagStore* tags : {&map, &dense}) {
    for (std::size_t i = 0; i < kKnownTagCount; ++i) {
      tags->Set(static_cast<TagId>(i), "value-" + std::to_string(i * 7919));
    }
    tags->Set("custom.one", "1");
    tags->Set(TagId::kHttpRoute, "/overwritten/route/that/is/long");
  }
  EXPECT_EQ(SortedTags(map), SortedTags(dense));
  EXPECT_EQ(map.size(), kKnownTagCount + 1);
}

INSTANTIATE_TEST_SUITE_P(Storages, TracerTagStore,
                         ::testing::Values(TagStorage::kMap, TagStorage::kDense),
                         [](const ::testing::TestParamInfo<TagStorage>& info) {
                           return info.param == TagStorage::kMap ? "Map" : "Dense";
                         });

}  // namespace
}  // namespace tracer
