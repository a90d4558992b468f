// The reference tracer's allocation promises, checked on its own code with allocbench::testing:
// no benchmark runner, no plugin, just the library's calls counted on this thread. These are the
// promises tests/tracer/families_test.cc checks through the span_creation, trace_fanout and
// naming_schema families, one level down.
//
// Every expected count is derived from sizes, never from a previous result: the headers'
// documented formats and costs, sizeof of the tracer's types, the lengths of the strings used,
// and libstdc++'s layouts and growth (tests/expected_heap.h's strings and vectors, and
// tests/tracer/expected_tracer.h's make_shared control block, list and hash-map nodes and bucket
// arrays replayed on the same types, which families_test.cc derives its counts from too).
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "allocbench/testing.h"
#include "allocbench/testing_gtest.h"
#include "expected_heap.h"
#include "expected_tracer.h"
#include "tracer/decorators.h"
#include "tracer/naming.h"
#include "tracer/propagation_tags.h"
#include "tracer/span_builder.h"
#include "tracer/span_data.h"
#include "tracer/tag_store.h"
#include "tracer/trace.h"
#include "tracer/tracer.h"
#include "tracer/writer.h"

namespace tracer {
namespace {

using allocbench::expected::Block;
using allocbench::expected::BuilderPendingHttpServerTags;
using allocbench::expected::BuilderState;
using allocbench::expected::ChildSpan;
using allocbench::expected::DenseValues;
using allocbench::expected::ExactString;
using allocbench::expected::GrownString;
using allocbench::expected::Heap;
using allocbench::expected::HttpServerDecoration;
using allocbench::expected::HttpServerTags;
using allocbench::expected::Ids;
using allocbench::expected::kSsoCapacity;
using allocbench::expected::kThreadAtExitNode;
using allocbench::expected::MapOverhead;
using allocbench::expected::PropagationTagsCopy;
using allocbench::expected::RootSpan;

// The literals of the span_creation and trace_fanout families (scenarios/families/web_request.h,
// span_creation.cc, trace_fanout.cc), spelled out because web_request.h pulls in the scenario
// API. The expectations below derive from whatever these are.
constexpr std::string_view kServerOperation = "http.server.request";
constexpr std::string_view kChildOperation = "app.handler.step";
constexpr HttpServerRequest kRequest = {
    "GET",
    "https://shop.example.com/api/v1/users/12345?expand=orders",
    "/api/v1/users/{id}",
    200,
    "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "shop.example.com",
    "cpp-httplib"};
constexpr DbClientQuery kQuery = {
    Database::kPostgres,
    "orders",
    "orders_service",
    "SELECT id, status, total FROM orders WHERE customer_id = ? ORDER BY created_at DESC LIMIT ?",
    "SELECT",
    "orders-db.internal.example.com",
    5432,
    "libpq"};
// The naming_schema family's service, also TracerOptions' default.
const std::string kService = "web-store";
constexpr SchemaVersion kVersions[] = {SchemaVersion::kV0, SchemaVersion::kV1};

// The 9 tags DecorateDbClientSpan sets (decorators.h), in its order, with their values (the port
// in decimal, span.kind "client"): expected_tracer.h's HttpServerTags for the database span.
std::vector<std::pair<TagId, std::string>> DbClientTags(const DbClientQuery& query) {
  return {{TagId::kDbType, std::string(DatabaseName(query.database))},
          {TagId::kDbInstance, std::string(query.instance)},
          {TagId::kDbUser, std::string(query.user)},
          {TagId::kDbStatement, std::string(query.statement)},
          {TagId::kDbOperation, std::string(query.operation)},
          {TagId::kPeerHostname, std::string(query.host)},
          {TagId::kPeerPort, std::to_string(query.port)},
          {TagId::kSpanKind, "client"},
          {TagId::kComponent, std::string(query.component)}};
}
// The database client span's decoration: its 9 values and the statement as its resource, each
// at its exact size.
Heap DbClientDecoration(const DbClientQuery& query) {
  return DenseValues(DbClientTags(query)) + Block(ExactString(query.statement.size()));
}

// Drops every trace it is given: freeing, never allocating (a recording writer's vector would
// allocate inside the counted calls).
class DropWriter : public Writer {
 public:
  void Write(SpanList trace) override { spans_written_ += trace.size(); }
  size_t spans_written() const { return spans_written_; }

 private:
  size_t spans_written_ = 0;
};

TracerOptions Options(TagStorage storage, bool builder_reuse,
                      PropagationTagsMode propagation = PropagationTagsMode::kShare) {
  TracerOptions options;
  options.tag_storage = storage;
  options.builder_reuse = builder_reuse;
  options.propagation_tags = propagation;
  return options;
}

// --- naming (naming.h) -------------------------------------------------------------------------

// naming.h: "a lookup never allocates". Every name of both schemas, operation and service, is
// borrowed from a table (the v0 service names are over 15 characters: an owned copy would
// allocate). Catches a Borrow turned into an Own, or `if (precomputed_)` inverted.
TEST(TracerAllocChecks, PrecomputedNamesAllocateNothing) {
  for (SchemaVersion version : kVersions) {
    const NamingSchema schema(version, kService, /*precomputed=*/true);
    Name name = Name::Borrow("");
    for (size_t i = 0; i < kProtocolCount; ++i) {
      const auto protocol = static_cast<Protocol>(i);
      ALLOCBENCH_EXPECT_NO_ALLOC(name = schema.ProtocolOperationName(protocol));
      EXPECT_FALSE(name.owned());
      ALLOCBENCH_EXPECT_NO_ALLOC(name = schema.ProtocolServiceName(protocol));
      EXPECT_FALSE(name.owned());
    }
    for (size_t i = 0; i < kDatabaseCount; ++i) {
      const auto database = static_cast<Database>(i);
      ALLOCBENCH_EXPECT_NO_ALLOC(name = schema.DatabaseOperationName(database));
      EXPECT_FALSE(name.owned());
      ALLOCBENCH_EXPECT_NO_ALLOC(name = schema.DatabaseServiceName(database));
      EXPECT_FALSE(name.owned());
    }
  }
}

// naming.h: the service tables are "built at construction", "whatever the mode". v0's
// "<service>-<protocol>-client" and "<service>-<database>" are each a copy of the service
// appended to (one grown block when over 15 characters, 10 of the 12 names: "web-store-mysql"
// and "web-store-redis" are 15), and then copied into the table: in naming.cc's
// `v0 ? std::string(service_).append(suffix) : service_` both operands are lvalues, so the table
// entry is copy-assigned, not moved, and the copy into an empty string grows the same way (a
// second block of the same size; a move would make this half). v1's are copies of the
// 9-character service, within the buffer. The service argument is moved in. Catches a table
// left unfilled or filled once more, or a service argument copied.
TEST(TracerAllocChecks, TheServiceTablesAreBuiltOnceAtConstruction) {
  for (SchemaVersion version : kVersions) {
    const bool v0 = version == SchemaVersion::kV0;
    Heap tables;
    for (size_t i = 0; i < kProtocolCount; ++i) {
      const std::string_view protocol = ProtocolName(static_cast<Protocol>(i));
      const size_t length =
          kService.size() + 1 + protocol.size() + std::string_view("-client").size();
      ASSERT_LE(length, 2 * kSsoCapacity);
      tables += v0 ? Block(GrownString(length)) * 2 : Block(ExactString(kService.size()));
    }
    for (size_t i = 0; i < kDatabaseCount; ++i) {
      const size_t length = kService.size() + 1 + DatabaseName(static_cast<Database>(i)).size();
      ASSERT_LE(length, 2 * kSsoCapacity);
      tables += v0 ? Block(GrownString(length)) * 2 : Block(ExactString(kService.size()));
    }
    for (bool precomputed : {false, true}) {
      ALLOCBENCH_EXPECT_ALLOCS(NamingSchema(version, kService, precomputed), tables.allocs,
                               tables.bytes);
    }
    EXPECT_EQ(tables.allocs, v0 ? 2 * 10.0 : 0.0);
  }
}

// naming.h's formats, built per call by concatenation: each name over 15 characters is one grown
// block (families_test.cc's InterpolatedNamesCostExactlyTheirConcatenatedStrings, per call); v1's
// service name is a copy of the service. The owned string is moved into the Name, never copied.
// Catches a dropped std::move in Name's constructor (a second, exact-size block), a reserve()
// (an exact block instead of a grown one), or `if (precomputed_)` inverted (a borrowed name).
TEST(TracerAllocChecks, InterpolatedNamesCostExactlyTheirConcatenatedStrings) {
  for (SchemaVersion version : kVersions) {
    const bool v0 = version == SchemaVersion::kV0;
    const NamingSchema schema(version, kService, /*precomputed=*/false);
    Name name = Name::Borrow("");
    for (size_t i = 0; i < kProtocolCount; ++i) {
      const auto protocol = static_cast<Protocol>(i);
      const std::string p(ProtocolName(protocol));
      const std::string operation = p + (v0 ? ".request" : ".client.request");
      ASSERT_LE(operation.size(), 2 * kSsoCapacity);
      const Heap op = Block(GrownString(operation.size()));
      ALLOCBENCH_EXPECT_ALLOCS(name = schema.ProtocolOperationName(protocol), op.allocs, op.bytes);
      EXPECT_EQ(name.view(), operation);
      const std::string service = v0 ? kService + "-" + p + "-client" : kService;
      ASSERT_LE(service.size(), 2 * kSsoCapacity);
      const Heap svc = Block(v0 ? GrownString(service.size()) : ExactString(service.size()));
      ALLOCBENCH_EXPECT_ALLOCS(name = schema.ProtocolServiceName(protocol), svc.allocs, svc.bytes);
      EXPECT_EQ(name.view(), service);
    }
    Heap all_databases;
    for (size_t i = 0; i < kDatabaseCount; ++i) {
      const auto database = static_cast<Database>(i);
      const std::string d(DatabaseName(database));
      const std::string operation = d + ".query";
      ASSERT_LE(operation.size(), 2 * kSsoCapacity);
      const Heap op = Block(GrownString(operation.size()));
      ALLOCBENCH_EXPECT_ALLOCS(name = schema.DatabaseOperationName(database), op.allocs, op.bytes);
      EXPECT_EQ(name.view(), operation);
      const std::string service = v0 ? kService + "-" + d : kService;
      ASSERT_LE(service.size(), 2 * kSsoCapacity);
      const Heap svc = Block(v0 ? GrownString(service.size()) : ExactString(service.size()));
      ALLOCBENCH_EXPECT_ALLOCS(name = schema.DatabaseServiceName(database), svc.allocs, svc.bytes);
      EXPECT_EQ(name.view(), service);
      all_databases += op + svc;
    }
    // families_test.cc's spot check: two database operation names outgrow the buffer
    // ("sql-server.query", "elasticsearch.query"), and v0 adds 8 service names.
    EXPECT_EQ(all_databases.allocs, v0 ? 10.0 : 2.0);
  }
}

// --- tag storage (tag_store.h, dense_tags.h) ---------------------------------------------------

// dense_tags.h: "setting a known tag allocates only when its value outgrows the slot string's
// small-string buffer", at its exact size (assign.h's AssignExact). For the web server's 7 tags:
// the URL, the route, the user agent and the host. Catches AssignExact replaced by assign() (a
// grown block instead of an exact one), or a known id routed to the overflow list.
TEST(TracerAllocChecks, DenseStoreCostsExactlyTheLongValues) {
  const auto tags = HttpServerTags(kRequest);
  const Heap expected = DenseValues(tags);
  TagStore store(TagStorage::kDense);
  const auto set_all = [&] {
    for (const auto& [id, value] : tags) store.Set(id, value);
  };
  ALLOCBENCH_EXPECT_ALLOCS(set_all(), expected.allocs, expected.bytes);
  EXPECT_EQ(expected.allocs, 4.0);
  EXPECT_EQ(store.size(), tags.size());
}

// tag_store.h: kMap costs, per new tag, a node, the key as a std::string and the value; and the
// bucket array grows as tags arrive: exactly the dense cost plus expected_tracer.h's MapOverhead
// (7 nodes, "http.status_code" as the one key over 15 characters, the bucket arrays). Catches a
// value copied rather than moved into the node, or the key built twice.
TEST(TracerAllocChecks, MapStoreCostsTheValuesPlusANodeAKeyAndBucketsPerTag) {
  for (const auto& tags : {HttpServerTags(kRequest), DbClientTags(kQuery)}) {
    const Heap expected = DenseValues(tags) + MapOverhead(Ids(tags));
    TagStore store(TagStorage::kMap);
    const auto set_all = [&] {
      for (const auto& [id, value] : tags) store.Set(id, value);
    };
    ALLOCBENCH_EXPECT_ALLOCS(set_all(), expected.allocs, expected.bytes);
    EXPECT_EQ(store.size(), tags.size());
  }
  // The README's "9 allocations" per 7-tag web span: 7 nodes, one key, one bucket array.
  EXPECT_EQ(MapOverhead(Ids(HttpServerTags(kRequest))).allocs, 7.0 + 1 + 1);
}

// Overwriting reuses every value's capacity (AssignExact): nothing for the dense store; the map
// still builds the key as a std::string before it can look (tag_store.cc: no heterogeneous
// lookup in C++17), so it pays "http.status_code" again. Catches a dense slot reassigned through
// a fresh string, or the map's node re-created.
TEST(TracerAllocChecks, OverwritingCostsTheDenseStoreNothingAndTheMapItsLongKeys) {
  const auto tags = HttpServerTags(kRequest);
  for (TagStorage storage : {TagStorage::kDense, TagStorage::kMap}) {
    TagStore store(storage);
    const auto set_all = [&] {
      for (const auto& [id, value] : tags) store.Set(id, value);
    };
    set_all();
    Heap keys;
    if (storage == TagStorage::kMap) {
      for (const auto& tag : tags) keys.Add(ExactString(TagName(tag.first).size()));
    }
    ALLOCBENCH_EXPECT_ALLOCS(set_all(), keys.allocs, keys.bytes);
    EXPECT_EQ(keys.allocs, storage == TagStorage::kMap ? 1.0 : 0.0);
  }
}

// tag_store.h: "a well-known key given as a string lands in the same place as its id": the dense
// store finds its slot and keeps no key (a 3-character value: no allocation at all), where the
// map pays a node, the 16-character key and its first bucket array. Catches FindTagId's routing
// dropped (the key would go to the overflow list: its vector and the key string).
TEST(TracerAllocChecks, AKnownKeyGivenAsAStringCostsTheDenseStoreNoKey) {
  const std::string_view key = TagName(TagId::kHttpStatusCode);
  TagStore dense(TagStorage::kDense);
  ALLOCBENCH_EXPECT_NO_ALLOC(dense.Set(key, "200"));
  EXPECT_EQ(dense.Get(TagId::kHttpStatusCode), "200");
  TagStore map(TagStorage::kMap);
  const Heap expected = MapOverhead({TagId::kHttpStatusCode});
  ALLOCBENCH_EXPECT_ALLOCS(map.Set(key, "200"), expected.allocs, expected.bytes);
}

// The decorators on a started span (decorators.h): dense, exactly the values and the resource at
// their exact size (families_test.cc's WebServerSpanCosts...: 5 blocks for the web span); the map,
// that plus MapOverhead (DenseTagStorageSavesExactlyTheMapsNodesKeysAndBuckets). Catches the
// resource built on the heap instead of the stack, or a value stored grown rather than exact.
TEST(TracerAllocChecks, DecoratorsCostTheirValuesResourceAndForTheMapItsNodes) {
  for (TagStorage storage : {TagStorage::kDense, TagStorage::kMap}) {
    const bool map = storage == TagStorage::kMap;
    DropWriter writer;
    Tracer tracer(Options(storage, false), &writer);
    {
      Span span = tracer.StartSpan(kServerOperation);
      Heap expected = HttpServerDecoration(kRequest);
      EXPECT_EQ(expected.allocs, 5.0);  // the URL, route, user agent, host and resource
      if (map) expected += MapOverhead(Ids(HttpServerTags(kRequest)));
      ALLOCBENCH_EXPECT_ALLOCS(DecorateHttpServerSpan(kRequest, span), expected.allocs,
                               expected.bytes);
    }
    {
      Span span = tracer.StartSpan(kServerOperation);
      Heap expected = DbClientDecoration(kQuery);
      if (map) expected += MapOverhead(Ids(DbClientTags(kQuery)));
      ALLOCBENCH_EXPECT_ALLOCS(DecorateDbClientSpan(kQuery, span), expected.allocs, expected.bytes);
    }
    EXPECT_EQ(writer.spans_written(), 2u);
  }
}

// --- spans, builders, traces (tracer.h, span_builder.h, propagation_tags.h) --------------------

// families_test.cc's BareStartSpanCostsExactlyItsTraceSpanNodeNameAndPropagationTags, at the call:
// 5 blocks, and the same for either tag storage (both live inline in every span). Catches a
// span's name or service copied once more, or the propagation tags allocated apart from their
// control block (make_shared turned into shared_ptr(new)).
TEST(TracerAllocChecks, AStartedSpanCostsItsTraceNodeNameAndPropagationTags) {
  const Heap root = RootSpan(kServerOperation);
  EXPECT_EQ(root.allocs, 5.0);  // tags, "_dd.p.tid", trace, span node, name
  for (TagStorage storage : {TagStorage::kDense, TagStorage::kMap}) {
    DropWriter writer;
    Tracer tracer(Options(storage, false), &writer);
    Span span;
    ALLOCBENCH_EXPECT_ALLOCS(span = tracer.StartSpan(kServerOperation), root.allocs, root.bytes);
    EXPECT_EQ(span.data().name, kServerOperation);
  }
}

// span_builder.h: a builder costs "the state object, its copy of the operation name, and a
// growing list of pending tags", which a plain StartSpan() does not pay; the pending values and
// resource are copied again into the span at Start() (families_test.cc's
// BareBuildCostsExactlyTheBuilder... and AWarmReusedBuilderCosts...). Catches a fresh builder
// handed the thread's cached state (builder_reuse ignored), pending values stored grown rather
// than exact (assign() for AssignExact), or the resource built on the heap.
TEST(TracerAllocChecks, AFreshBuilderCostsItsStateNameAndPendingTags) {
  DropWriter writer;
  Tracer tracer(Options(TagStorage::kDense, /*builder_reuse=*/false), &writer);
  const Heap bare = RootSpan(kServerOperation) + BuilderState(kServerOperation);
  EXPECT_EQ(BuilderState(kServerOperation).allocs, 2.0);  // the README's "+2 allocs"
  ALLOCBENCH_EXPECT_ALLOCS(tracer.BuildSpan(kServerOperation).Start(), bare.allocs, bare.bytes);
  const Heap decorated =
      bare + BuilderPendingHttpServerTags(kRequest) + HttpServerDecoration(kRequest);
  const auto build = [&] {
    SpanBuilder builder = tracer.BuildSpan(kServerOperation);
    DecorateHttpServerSpan(kRequest, builder);
    builder.Start();
  };
  ALLOCBENCH_EXPECT_ALLOCS(build(), decorated.allocs, decorated.bytes);
}

// span_builder.h: "a warm thread pays nothing for the builder": with builder_reuse, building costs
// exactly what StartSpan() does, bare or with the web server's tags and resource given before
// Start() (their strings and the pending-tag list keep their capacity). The thread's cached
// state is made by its first reusing build (and its capacity by the first decorated one), so
// each shape is built once, uncounted, first. Catches Reset() giving capacity up (a swap with a
// fresh string, shrink_to_fit, the pending-tag list cleared), or the cache not consulted (a
// fresh state per build).
TEST(TracerAllocChecks, AWarmReusedBuilderCostsNothingMoreThanStartSpan) {
  DropWriter writer;
  Tracer tracer(Options(TagStorage::kDense, /*builder_reuse=*/true), &writer);
  const auto bare = [&] { tracer.BuildSpan(kServerOperation).Start(); };
  bare();  // warm-up: the thread's builder state
  const Heap root = RootSpan(kServerOperation);
  ALLOCBENCH_EXPECT_ALLOCS(bare(), root.allocs, root.bytes);
  const auto decorated = [&] {
    SpanBuilder builder = tracer.BuildSpan(kServerOperation);
    DecorateHttpServerSpan(kRequest, builder);
    builder.Start();
  };
  decorated();  // warm-up: the pending tags' and resource's capacity
  const Heap direct = root + HttpServerDecoration(kRequest);
  ALLOCBENCH_EXPECT_ALLOCS(decorated(), direct.allocs, direct.bytes);
  EXPECT_EQ(writer.spans_written(), 4u);
}

// span_builder.h: "a thread that builds its first span pays for it once": on a new thread the
// first reusing build costs the bare span, the cached state with its copy of the name, and the
// registration of the thread_local's destructor (families_test.cc's BareBuildCosts...'s cold op,
// less the plugin's TLS block: the tracer is linked into this executable); the second costs the
// bare span alone. Counted on that thread with Count (the checks are made here). Catches the
// cache not kept (a state per build) or not consulted.
TEST(TracerAllocChecks, AThreadsFirstReusedBuildPaysForItsCachedStateOnce) {
  DropWriter writer;
  Tracer tracer(Options(TagStorage::kDense, /*builder_reuse=*/true), &writer);
  allocbench::testing::Counts first;
  allocbench::testing::Counts second;
  if (!allocbench::testing::Available()) GTEST_SKIP() << allocbench::testing::UnavailableReason();
  std::thread thread([&] {
    // Not const: Count() cannot take a const callable (CallableOf casts &f to void*).
    auto build = [&] { tracer.BuildSpan(kServerOperation).Start(); };
    first = allocbench::testing::Count(build);
    second = allocbench::testing::Count(build);
  });
  thread.join();
  const Heap root = RootSpan(kServerOperation);
  const Heap cold = root + BuilderState(kServerOperation);
  EXPECT_EQ(first.allocs, cold.allocs + 1);
  EXPECT_EQ(first.bytes, cold.bytes + kThreadAtExitNode);
  EXPECT_EQ(second.allocs, root.allocs);
  EXPECT_EQ(second.bytes, root.bytes);
}

// propagation_tags.h: one copy is "one fresh make_shared per child: a control block with the
// object, plus every string over 15 characters, here the 16-hex-digit _dd.p.tid"
// (families_test.cc's FanoutSlopeDifference...: 2 blocks). Catches make_shared turned into
// shared_ptr(new) (3 blocks), or a string of the copy stored grown.
TEST(TracerAllocChecks, APropagationTagsCopyCostsOneSharedBlockAndTheTraceIdString) {
  DropWriter writer;
  Tracer tracer(TracerOptions{}, &writer);
  Span root = tracer.StartSpan(kServerOperation);
  const Heap copy = PropagationTagsCopy();
  EXPECT_EQ(copy.allocs, 2.0);
  std::shared_ptr<PropagationTags> tags;
  ALLOCBENCH_EXPECT_ALLOCS(tags = CopyPropagationTags(root.propagation_tags()), copy.allocs,
                           copy.bytes);
  EXPECT_TRUE(*tags == root.propagation_tags());
}

// tracer.h: kShare children "point to the root's", so a child costs its list node and its name
// (and here its short component tag: nothing); kCopy adds one copy of the propagation tags
// (families_test.cc's FanoutIsExactlyTheWebRootPlusOneSpanNodeAndNamePerChild). Catches kShare
// copying anyway (the one-line difference of tracer.cc), or a child starting a new trace.
TEST(TracerAllocChecks, AChildCostsItsNodeAndNameAndCopyingAddsThePropagationTags) {
  for (PropagationTagsMode mode : {PropagationTagsMode::kShare, PropagationTagsMode::kCopy}) {
    DropWriter writer;
    Tracer tracer(Options(TagStorage::kDense, true, mode), &writer);
    Span root = tracer.StartSpan(kServerOperation);
    const auto child = [&] {
      Span span = tracer.StartSpan(kChildOperation, root);
      span.SetTag(TagId::kComponent, kRequest.component);
      span.Finish();
    };
    Heap expected = ChildSpan(kChildOperation) + Block(ExactString(kRequest.component.size()));
    if (mode == PropagationTagsMode::kCopy) expected += PropagationTagsCopy();
    for (int i = 0; i < 3; ++i) {
      ALLOCBENCH_EXPECT_ALLOCS(child(), expected.allocs, expected.bytes);
    }
    EXPECT_EQ(writer.spans_written(), 0u);  // the root is not finished
    root.Finish();
    EXPECT_EQ(writer.spans_written(), 4u);
  }
}

// --- nothing left behind ------------------------------------------------------------------------

// trace.h and writer.h: a finished trace goes to the writer whole, which owns it from then on
// (DropWriter frees it), and the handles' references to the trace die with them: a span started
// and finished, decorated or not, in either storage, with children copying or sharing, or built
// by a fresh builder, leaves nothing behind. Catches a builder state released instead of freed
// (owned_.release() in SpanBuilder::Release), a reference cycle (a span's data holding its
// trace), or a trace kept by the tracer.
TEST(TracerAllocChecks, StartedAndFinishedSpansLeaveNothingBehind) {
  for (TagStorage storage : {TagStorage::kDense, TagStorage::kMap}) {
    for (PropagationTagsMode mode : {PropagationTagsMode::kShare, PropagationTagsMode::kCopy}) {
      DropWriter writer;
      Tracer tracer(Options(storage, /*builder_reuse=*/false, mode), &writer);
      ALLOCBENCH_EXPECT_NO_LEAK(tracer.StartSpan(kServerOperation).Finish());
      ALLOCBENCH_EXPECT_NO_LEAK({
        Span root = tracer.StartSpan(kServerOperation);
        DecorateHttpServerSpan(kRequest, root);
        for (int i = 0; i < 5; ++i) {
          Span child = tracer.StartSpan(kChildOperation, root);
          child.SetTag(TagId::kComponent, kRequest.component);
        }
        root.Finish();
      });
      ALLOCBENCH_EXPECT_NO_LEAK({
        SpanBuilder builder = tracer.BuildSpan(kServerOperation);
        DecorateHttpServerSpan(kRequest, builder);
        builder.Start().Finish();
      });
      EXPECT_EQ(writer.spans_written(), 1u + 6 + 1);
    }
  }
}

// span_builder.h's Reset(): a reused state "forgets what was built", its parent trace included,
// so a child built through the thread's cached builder does not keep its trace alive once the
// trace is finished (builder_test.cc checks the pointer; this, that the memory goes). Warmed up
// first: the cached state itself, kept on purpose, is not a leak of the span. Catches
// `parent_trace.reset()` dropped from Reset().
TEST(TracerAllocChecks, AReusedBuilderDoesNotKeepItsParentsTraceAlive) {
  DropWriter writer;
  Tracer tracer(Options(TagStorage::kDense, /*builder_reuse=*/true), &writer);
  const auto trace = [&] {
    Span root = tracer.StartSpan(kServerOperation);
    Span child = tracer.BuildSpan(kChildOperation).AsChildOf(root).Start();
    child.Finish();
    root.Finish();
  };
  trace();  // warm-up: the thread's builder state and its name's capacity
  ALLOCBENCH_EXPECT_NO_LEAK(trace());
  EXPECT_EQ(writer.spans_written(), 4u);
}

}  // namespace
}  // namespace tracer
