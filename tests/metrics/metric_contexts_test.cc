// Metric contexts under both tag storages, and the DogStatsD serializer.
#include "metrics/metric_contexts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "metrics/context_generator.h"
#include "metrics/dogstatsd_serializer.h"

namespace metrics {
namespace {

TEST(ContextGenerator, IsDeterministicAndRealistic) {
  const ContextGenerator a(7500, 26);
  const ContextGenerator b(7500, 26);
  size_t short_tags = 0;
  std::set<std::string> distinct_values;
  for (int c = 0; c < 7500; c += 7) {
    EXPECT_EQ(a.Name(c), b.Name(c));
    for (int t = 0; t < 26; ++t) {
      EXPECT_EQ(a.TagValue(c, t), b.TagValue(c, t));
      distinct_values.insert(std::string(a.TagValue(c, t)));
      if (a.TagKey(t).size() + 1 + a.TagValue(c, t).size() <= 15) ++short_tags;
    }
  }
  EXPECT_EQ(a.TagKey(0), "env");
  EXPECT_EQ(a.TagKey(14), "http.route");
  // Some tags fit the small-string buffer, most do not; values repeat across contexts.
  EXPECT_GT(short_tags, 0u);
  EXPECT_LT(short_tags, 1072u * 26 / 2);
  EXPECT_LT(distinct_values.size(), 1200u);
}

TEST(ContextGenerator, ExtraTagsBeyondTheStandardTwentySix) {
  const ContextGenerator g(3, 30);
  EXPECT_EQ(g.tags_per_context(), 30);
  EXPECT_EQ(g.TagKey(29), "custom.tag_29");
}

TEST(MetricContexts, OwnedTagsAreFormattedAtConstruction) {
  const ContextGenerator g(2, 3);
  const MetricContexts owned(g, TagStorage::kOwned);
  std::string tags;
  owned.AppendTags(0, &tags);
  EXPECT_EQ(tags, "env:" + std::string(g.TagValue(0, 0)) + ",service:" +
                      std::string(g.TagValue(0, 1)) + ",version:" + std::string(g.TagValue(0, 2)));
  EXPECT_EQ(owned.interner().size(), 0u);
}

TEST(MetricContexts, HandlesInternEveryKeyAndValueOnce) {
  const ContextGenerator g(500, 26);
  const MetricContexts handles(g, TagStorage::kHandles);
  std::set<std::string> distinct;
  for (int c = 0; c < 500; ++c) {
    for (int t = 0; t < 26; ++t) {
      distinct.insert(std::string(g.TagKey(t)));
      distinct.insert(std::string(g.TagValue(c, t)));
    }
  }
  EXPECT_EQ(handles.interner().size(), distinct.size());
  EXPECT_EQ(handles.size(), 500u);
  EXPECT_EQ(handles.tag_count(499), 26u);
}

TEST(DogStatsdSerializer, OwnedAndHandleStoragesWriteIdenticalBytes) {
  for (const auto& [contexts, tags] : {std::pair{7500, 26}, {500, 26}, {40, 3}, {5, 0}}) {
    const ContextGenerator g(contexts, tags);
    const MetricContexts owned(g, TagStorage::kOwned);
    const MetricContexts handles(g, TagStorage::kHandles);
    DogStatsdSerializer a;
    DogStatsdSerializer b;
    const std::string_view owned_bytes = a.Serialize(owned);
    EXPECT_EQ(owned_bytes, b.Serialize(handles)) << contexts << "x" << tags;
    EXPECT_EQ(std::count(owned_bytes.begin(), owned_bytes.end(), '\n'), contexts);
  }
}

TEST(DogStatsdSerializer, WritesTheDogStatsdLineFormat) {
  const ContextGenerator g(1, 2);
  const MetricContexts handles(g, TagStorage::kHandles);
  DogStatsdSerializer serializer;
  EXPECT_EQ(serializer.Serialize(handles), std::string(g.Name(0)) +
                                               ":1|c|#env:" + std::string(g.TagValue(0, 0)) +
                                               ",service:" + std::string(g.TagValue(0, 1)) + "\n");
  const ContextGenerator untagged(1, 0);
  const MetricContexts bare(untagged, TagStorage::kOwned);
  EXPECT_EQ(serializer.Serialize(bare), std::string(untagged.Name(0)) + ":1|c\n");
}

TEST(DogStatsdSerializer, ReusesItsBuffer) {
  const ContextGenerator g(100, 26);
  const MetricContexts handles(g, TagStorage::kHandles);
  DogStatsdSerializer serializer;
  const char* first = serializer.Serialize(handles).data();
  EXPECT_EQ(serializer.Serialize(handles).data(), first);
}

}  // namespace
}  // namespace metrics
