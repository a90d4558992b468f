// Spans: finishing, setters, the decorators' tag sets, and the equivalence of the direct and
// builder paths.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "recording_writer.h"
#include "tracer/decorators.h"
#include "tracer/tracer.h"

namespace tracer {
namespace {

constexpr HttpServerRequest kRequest = {
    "GET",
    "https://shop.example.com/api/v1/users/12345?expand=orders",
    "/api/v1/users/{id}",
    200,
    "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "shop.example.com",
    "cpp-httplib"};

TracerOptions Options(TagStorage storage, bool builder_reuse) {
  TracerOptions options;
  options.tag_storage = storage;
  options.builder_reuse = builder_reuse;
  return options;
}

TEST(TracerSpan, FinishHandsALoneRootToTheWriterWithItsDuration) {
  RecordingWriter writer;
  Tracer tracer(TracerOptions{}, &writer);
  Span span = tracer.StartSpan("http.server.request");
  EXPECT_FALSE(span.finished());
  EXPECT_EQ(span.data().name, "http.server.request");
  EXPECT_EQ(span.data().service, "web-store");
  EXPECT_EQ(span.data().duration_ns, -1);
  EXPECT_EQ(writer.writes(), 0u);
  span.Finish();
  EXPECT_TRUE(span.finished());
  ASSERT_EQ(writer.writes(), 1u);
  const SpanList& trace = writer.traces()[0];
  ASSERT_EQ(trace.size(), 1u);
  const SpanData& data = trace.front();
  EXPECT_GE(data.duration_ns, 0);
  EXPECT_GT(data.start_ns, 0);
  EXPECT_NE(data.span_id, 0u);
  EXPECT_EQ(data.span_id, span.span_id());
  EXPECT_EQ(data.parent_id, 0u);
  EXPECT_NE(data.trace_id_low, 0u);
}

TEST(TracerSpan, FinishIsIdempotentAndTheDestructorFinishes) {
  RecordingWriter writer;
  Tracer tracer(TracerOptions{}, &writer);
  {
    Span span = tracer.StartSpan("a");
    span.Finish();
    span.Finish();
    EXPECT_EQ(writer.writes(), 1u);
  }
  EXPECT_EQ(writer.writes(), 1u);
  { Span span = tracer.StartSpan("b"); }
  EXPECT_EQ(writer.writes(), 2u);
  Span moved_from = tracer.StartSpan("c");
  Span moved_to = std::move(moved_from);
  EXPECT_TRUE(moved_from.empty());  // NOLINT(bugprone-use-after-move): the contract under test
  moved_to.Finish();
  EXPECT_EQ(writer.writes(), 3u);
}

TEST(TracerSpan, SettersReachTheRecordedSpan) {
  RecordingWriter writer;
  Tracer tracer(TracerOptions{}, &writer);
  Span span = tracer.StartSpan("db.query");
  span.SetTag(TagId::kPeerPort, int64_t{5432})
      .SetTag(TagId::kDbRowCount, int64_t{-1})
      .SetTag("custom", "value")
      .SetResource("SELECT 1")
      .SetService("orders-db")
      .SetError(true);
  span.Finish();
  const SpanData& data = writer.traces().at(0).front();
  EXPECT_EQ(data.tags.Get(TagId::kPeerPort), "5432");
  EXPECT_EQ(data.tags.Get(TagId::kDbRowCount), "-1");
  EXPECT_EQ(data.tags.Get("custom"), "value");
  EXPECT_EQ(data.resource, "SELECT 1");
  EXPECT_EQ(data.service, "orders-db");
  EXPECT_TRUE(data.error);
}

TEST(TracerSpan, WebServerDecoratorSetsSevenTagsAndTheResource) {
  RecordingWriter writer;
  Tracer tracer(TracerOptions{}, &writer);
  Span span = tracer.StartSpan("http.server.request");
  DecorateHttpServerSpan(kRequest, span);
  EXPECT_EQ(span.data().tags.size(), 7u);
  EXPECT_EQ(span.data().tags.Get(TagId::kHttpStatusCode), "200");
  EXPECT_EQ(span.data().tags.Get(TagId::kHttpRoute), "/api/v1/users/{id}");
  EXPECT_EQ(span.data().resource, "GET /api/v1/users/{id}");
}

TEST(TracerSpan, DbClientDecoratorSetsNineTagsAndTheStatementAsResource) {
  RecordingWriter writer;
  Tracer tracer(TracerOptions{}, &writer);
  const DbClientQuery query = {Database::kMySql, "orders",      "svc", "SELECT ?",
                               "SELECT",         "db.internal", 3306,  "libmysqlclient"};
  Span span = tracer.StartSpan(tracer.naming().DatabaseOperationName(query.database).view());
  DecorateDbClientSpan(query, span);
  EXPECT_EQ(span.data().name, "mysql.query");
  EXPECT_EQ(span.data().tags.size(), 9u);
  EXPECT_EQ(span.data().tags.Get(TagId::kDbType), "mysql");
  EXPECT_EQ(span.data().tags.Get(TagId::kPeerPort), "3306");
  EXPECT_EQ(span.data().tags.Get(TagId::kSpanKind), "client");
  EXPECT_EQ(span.data().resource, "SELECT ?");
}

// Everything but ids and times (and "_dd.p.tid", which is the trace id's upper half).
auto Comparable(const SpanData& d) {
  const PropagationTags& p = *d.propagation;
  return std::make_tuple(d.name, d.service, d.resource, d.error, SortedTags(d.tags),
                         d.tags.storage(), d.parent_id != 0, p.sampling_priority, p.origin,
                         p.decision_maker, p.knuth_sampling_rate, p.trace_id_high.size());
}

class TracerBuilderEquivalence : public ::testing::TestWithParam<std::tuple<TagStorage, bool>> {};

TEST_P(TracerBuilderEquivalence, BuilderAndDirectStartGiveEquivalentSpans) {
  const auto [storage, reuse] = GetParam();
  RecordingWriter writer;
  Tracer tracer(Options(storage, reuse), &writer);
  for (int round = 0; round < 2; ++round) {  // the second round runs on a warm cached builder
    {
      Span direct = tracer.StartSpan("http.server.request");
      DecorateHttpServerSpan(kRequest, direct);
      direct.SetTag("custom", "1");
      Span direct_child = tracer.StartSpan("child", direct);
    }
    {
      SpanBuilder builder = tracer.BuildSpan("http.server.request");
      DecorateHttpServerSpan(kRequest, builder);
      builder.WithTag("custom", "1");
      Span built = builder.Start();
      Span built_child = tracer.BuildSpan("child").AsChildOf(built).Start();
    }
  }
  ASSERT_EQ(writer.writes(), 4u);
  for (int round = 0; round < 2; ++round) {
    const SpanList& direct = writer.traces()[2 * round];
    const SpanList& built = writer.traces()[2 * round + 1];
    ASSERT_EQ(direct.size(), 2u);
    ASSERT_EQ(built.size(), 2u);
    EXPECT_EQ(Comparable(direct.front()), Comparable(built.front()));
    EXPECT_EQ(Comparable(direct.back()), Comparable(built.back()));
    EXPECT_EQ(built.back().parent_id, built.front().span_id);
    EXPECT_EQ(built.back().trace_id_low, built.front().trace_id_low);
  }
}

INSTANTIATE_TEST_SUITE_P(StorageAndReuse, TracerBuilderEquivalence,
                         ::testing::Combine(::testing::Values(TagStorage::kMap, TagStorage::kDense),
                                            ::testing::Bool()));

}  // namespace
}  // namespace tracer
