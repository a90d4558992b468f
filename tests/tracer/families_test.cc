// The span_creation, trace_fanout and naming_schema families keep their promises, on exact
// counts from the real count pass over the built-in plugin (interposed operator new / malloc).
//
// Every expected count is derived from sizes, never from a previous result: sizeof of the
// subject's types, the lengths of the strings the scenarios use, and libstdc++'s layouts (the
// 15-character small-string buffer, make_shared's control block, list and hash-map nodes, the
// growth of strings, vectors and bucket arrays), as tests/expected_heap.h and
// tests/tracer/expected_tracer.h add them up (shared with alloc_checks_test.cc).
#include <gtest/gtest.h>
#include <link.h>

#include <cstring>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "count_pass.h"
#include "expected_heap.h"
#include "expected_tracer.h"
#include "families/web_request.h"  // kRequest, kServerOperation: the literals
#include "plugin_loader.h"
#include "tracer/naming.h"
#include "tracer/propagation_tags.h"
#include "tracer/span_builder.h"
#include "tracer/span_data.h"
#include "tracer/trace.h"
#include "tracer/tracer.h"

namespace allocbench {
namespace {

using expected::BuilderPendingHttpServerTags;
using expected::BuilderState;
using expected::ChildSpan;
using expected::ExactString;
using expected::GrownString;
using expected::Heap;
using expected::HttpServerDecoration;
using expected::HttpServerTags;
using expected::Ids;
using expected::kThreadAtExitNode;
using expected::MapOverhead;
using expected::PropagationTagsCopy;
using expected::RootSpan;
using families::kRequest;
using families::kServerOperation;

// trace_fanout.cc's child operation name and naming_schema.cc's service.
constexpr std::string_view kChildOperation = "app.handler.step";
constexpr std::string_view kNamingService = "web-store";

// The keys DecorateDbClientSpan sets, in its order (expected_tracer.h's HttpServerTags has the
// web server's, with their values).
const std::vector<tracer::TagId> kDbClientTags = {
    tracer::TagId::kDbType,      tracer::TagId::kDbInstance,  tracer::TagId::kDbUser,
    tracer::TagId::kDbStatement, tracer::TagId::kDbOperation, tracer::TagId::kPeerHostname,
    tracer::TagId::kPeerPort,    tracer::TagId::kSpanKind,    tracer::TagId::kComponent};

// The plugin's thread-local storage block (its PT_TLS segment), which glibc mallocs on a
// thread's first use of one of the plugin's thread_locals (the plugin is dlopen'ed).
size_t PluginTlsBytes() {
  struct Search {
    std::string basename;
    size_t bytes = 0;
    bool found = false;
  } search;
  const std::string path = PLUGIN_PATH;
  search.basename = path.substr(path.rfind('/') + 1);
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        const std::string name = info->dlpi_name == nullptr ? "" : info->dlpi_name;
        if (name.size() < s->basename.size() ||
            name.compare(name.size() - s->basename.size(), s->basename.size(), s->basename) != 0) {
          return 0;
        }
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type == PT_TLS) s->bytes = info->dlpi_phdr[i].p_memsz;
        }
        s->found = true;
        return 1;
      },
      &search);
  EXPECT_TRUE(search.found) << "the plugin is not loaded: " << path;
  return search.bytes;
}

// std::thread's state for a lambda capturing two references: its vtable pointer and the two.
constexpr size_t kThreadStateWithTwoRefs = sizeof(void*) + 2 * sizeof(void*);

bool IsOurs(const std::string& name) {
  for (const char* family : {"span_creation/", "trace_fanout/", "naming_schema/"}) {
    if (name.rfind(family, 0) == 0) return true;
  }
  return false;
}

class TracerFamilies : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    counting::SetMode(counting::Mode::kIgnored);
    for (Instance& inst : ExpandInstances({LoadPlugin(PLUGIN_PATH)})) {
      if (IsOurs(inst.name)) instances_.emplace(inst.name, inst);
    }
  }

  static AllocMetrics CountOnce(const std::string& name) {
    auto it = instances_.find(name);
    if (it == instances_.end()) {
      ADD_FAILURE() << "no instance " << name;
      return {};
    }
    const CountOutcome out = RunCountPass(it->second, {});
    EXPECT_EQ(out.error, "") << name;
    return out.metrics;
  }

  // Counted once per test process; the determinism test calls CountOnce() itself.
  static const AllocMetrics& Count(const std::string& name) {
    auto it = cache_.find(name);
    if (it == cache_.end()) it = cache_.emplace(name, CountOnce(name)).first;
    return it->second;
  }

  static inline std::map<std::string, Instance> instances_;
  static inline std::map<std::string, AllocMetrics> cache_;
};

TEST_F(TracerFamilies, InstancesAreTheDocumentedOnes) {
  std::vector<std::string> names;
  for (const auto& entry : instances_) names.push_back(entry.first);
  const std::vector<std::string> expected = {
      "naming_schema/database_names/schema:0/precomputed:0",
      "naming_schema/database_names/schema:0/precomputed:1",
      "naming_schema/database_names/schema:1/precomputed:0",
      "naming_schema/database_names/schema:1/precomputed:1",
      "naming_schema/protocol_names/schema:0/precomputed:0",
      "naming_schema/protocol_names/schema:0/precomputed:1",
      "naming_schema/protocol_names/schema:1/precomputed:0",
      "naming_schema/protocol_names/schema:1/precomputed:1",
      "span_creation/bare_build_span/builder_reuse:0",
      "span_creation/bare_build_span/builder_reuse:1",
      "span_creation/bare_start_span",
      "span_creation/db_client_span/dense:0",
      "span_creation/db_client_span/dense:1",
      "span_creation/fresh_thread_span/builder_reuse:0",
      "span_creation/fresh_thread_span/builder_reuse:1",
      "span_creation/web_server_span/dense:0",
      "span_creation/web_server_span/dense:1",
      "span_creation/web_server_span_via_builder/dense:0/builder_reuse:0",
      "span_creation/web_server_span_via_builder/dense:0/builder_reuse:1",
      "span_creation/web_server_span_via_builder/dense:1/builder_reuse:0",
      "span_creation/web_server_span_via_builder/dense:1/builder_reuse:1",
      "trace_fanout/propagation_tags_copy",
      "trace_fanout/web_trace/children:1/share:0",
      "trace_fanout/web_trace/children:1/share:1",
      "trace_fanout/web_trace/children:20/share:0",
      "trace_fanout/web_trace/children:20/share:1",
      "trace_fanout/web_trace/children:5/share:0",
      "trace_fanout/web_trace/children:5/share:1",
  };
  EXPECT_EQ(names, expected);
}

TEST_F(TracerFamilies, PrecomputedNamesCostZeroBytesAndZeroAllocations) {
  for (const char* shape : {"protocol_names", "database_names"}) {
    for (const char* schema : {"0", "1"}) {
      const std::string name =
          std::string("naming_schema/") + shape + "/schema:" + schema + "/precomputed:1";
      const AllocMetrics& m = Count(name);
      EXPECT_EQ(m.bytes_per_op, 0.0) << name;
      EXPECT_EQ(m.allocs_per_op, 0.0) << name;
      EXPECT_EQ(m.first_op_bytes, 0.0) << name;  // the tables were made before the loop
    }
  }
}

// Interpolated names cost one grown string per name over 15 characters (formats in naming.h):
//   protocol v0  "<protocol>.request", "<service>-<protocol>-client"  -> 2 x 31 B ("-client")
//   protocol v1  "<protocol>.client.request", "<service>"             -> 2 x 31 B
//   database v0  "<database>.query", "<service>-<database>"           -> 10 x 31 B
//   database v1  "<database>.query", "<service>"                      -> 2 x 31 B
// which is the README's 62-310 B.
TEST_F(TracerFamilies, InterpolatedNamesCostExactlyTheirConcatenatedStrings) {
  const std::string service(kNamingService);
  std::map<std::string, Heap> expected;
  for (const char* schema : {"0", "1"}) {
    const bool v0 = schema[0] == '0';
    Heap protocols;
    for (std::size_t i = 0; i < tracer::kProtocolCount; ++i) {
      const std::string protocol(tracer::ProtocolName(static_cast<tracer::Protocol>(i)));
      protocols.Add(GrownString((protocol + (v0 ? ".request" : ".client.request")).size()));
      protocols.Add(v0 ? GrownString((service + "-" + protocol + "-client").size())
                       : ExactString(service.size()));
    }
    expected[std::string("protocol_names/schema:") + schema] = protocols;
    Heap databases;
    for (std::size_t i = 0; i < tracer::kDatabaseCount; ++i) {
      const std::string database(tracer::DatabaseName(static_cast<tracer::Database>(i)));
      databases.Add(GrownString((database + ".query").size()));
      databases.Add(v0 ? GrownString((service + "-" + database).size())
                       : ExactString(service.size()));
    }
    expected[std::string("database_names/schema:") + schema] = databases;
  }
  ASSERT_EQ(expected.size(), 4u);
  for (const auto& [shape, heap] : expected) {
    const std::string name = "naming_schema/" + shape + "/precomputed:0";
    const AllocMetrics& m = Count(name);
    EXPECT_EQ(m.bytes_per_op, heap.bytes) << name;
    EXPECT_EQ(m.allocs_per_op, heap.allocs) << name;
    EXPECT_EQ(m.frees_per_op, heap.allocs) << name;  // each name is dropped within the op
  }
  // Two of the interpolated database operation names outgrow the buffer:
  // "sql-server.query" and "elasticsearch.query".
  EXPECT_EQ(expected["database_names/schema:1"].allocs, 2.0);
}

TEST_F(TracerFamilies, BareStartSpanCostsExactlyItsTraceSpanNodeNameAndPropagationTags) {
  const Heap root = RootSpan(kServerOperation);
  const AllocMetrics& m = Count("span_creation/bare_start_span");
  EXPECT_EQ(m.bytes_per_op, root.bytes);
  EXPECT_EQ(m.allocs_per_op, root.allocs);
  EXPECT_EQ(m.allocs_per_op, 5.0);  // tags, "_dd.p.tid", trace, span node, name
  EXPECT_EQ(m.frees_per_op, m.allocs_per_op);
  EXPECT_EQ(m.first_op_bytes, root.bytes);  // nothing lazy on this path
}

TEST_F(TracerFamilies, BareBuildCostsExactlyTheBuilderAndNothingWithReuse) {
  const AllocMetrics& start = Count("span_creation/bare_start_span");
  const AllocMetrics& fresh = Count("span_creation/bare_build_span/builder_reuse:0");
  const AllocMetrics& reused = Count("span_creation/bare_build_span/builder_reuse:1");
  // The builder's state object and its copy of the operation name; nothing else differs: the
  // README's "+180 B, +2 allocs".
  const Heap builder = BuilderState(kServerOperation);
  EXPECT_EQ(fresh.bytes_per_op - start.bytes_per_op, builder.bytes);
  EXPECT_EQ(fresh.allocs_per_op - start.allocs_per_op, builder.allocs);
  EXPECT_EQ(builder.allocs, 2.0);
  EXPECT_EQ(reused.bytes_per_op, start.bytes_per_op);
  EXPECT_EQ(reused.allocs_per_op, start.allocs_per_op);
  // The cached builder is made by the thread's first build: the cold op pays for it, for the
  // registration of its thread_local's destructor, and for the plugin's TLS block.
  EXPECT_EQ(reused.first_op_bytes - start.first_op_bytes,
            builder.bytes + static_cast<double>(kThreadAtExitNode + PluginTlsBytes()));
  EXPECT_EQ(reused.first_op_allocs - start.first_op_allocs, builder.allocs + 2);
}

TEST_F(TracerFamilies, WebServerSpanCostsTheBareSpanPlusItsLongTagValuesAndResource) {
  // Dense tags: every value and the resource at their exact size, nothing per tag otherwise.
  const Heap expected = RootSpan(kServerOperation) + HttpServerDecoration(kRequest);
  const AllocMetrics& m = Count("span_creation/web_server_span/dense:1");
  EXPECT_EQ(m.bytes_per_op, expected.bytes);
  EXPECT_EQ(m.allocs_per_op, expected.allocs);
  // Over 15 characters: the URL, the route, the user agent, the host and the resource.
  EXPECT_EQ(expected.allocs - RootSpan(kServerOperation).allocs, 5.0);
}

TEST_F(TracerFamilies, DenseTagStorageSavesExactlyTheMapsNodesKeysAndBuckets) {
  const Heap web = MapOverhead(Ids(HttpServerTags(kRequest)));
  const Heap db = MapOverhead(kDbClientTags);
  // 7 nodes of 80 B, "http.status_code" (17 B), 13 buckets (104 B): the README's "681 B and 9
  // allocations" per 7-tag span.
  EXPECT_EQ(web.allocs, 7.0 + 1 + 1);
  const std::vector<std::pair<std::string, Heap>> cases = {
      {"span_creation/web_server_span/dense:", web},
      {"span_creation/db_client_span/dense:", db},
  };
  for (const auto& [prefix, saved] : cases) {
    const AllocMetrics& map = Count(prefix + "0");
    const AllocMetrics& dense = Count(prefix + "1");
    EXPECT_EQ(map.bytes_per_op - dense.bytes_per_op, saved.bytes) << prefix;
    EXPECT_EQ(map.allocs_per_op - dense.allocs_per_op, saved.allocs) << prefix;
  }
  for (const char* reuse : {"0", "1"}) {
    const std::string prefix = "span_creation/web_server_span_via_builder/dense:";
    const AllocMetrics& map = Count(prefix + "0/builder_reuse:" + reuse);
    const AllocMetrics& dense = Count(prefix + "1/builder_reuse:" + reuse);
    EXPECT_EQ(map.bytes_per_op - dense.bytes_per_op, web.bytes) << reuse;
    EXPECT_EQ(map.allocs_per_op - dense.allocs_per_op, web.allocs) << reuse;
  }
}

TEST_F(TracerFamilies, AWarmReusedBuilderCostsWhatSettingTagsAfterStartCosts) {
  // A fresh builder also holds its own copies of the tags until Start().
  const Heap builder = BuilderState(kServerOperation) + BuilderPendingHttpServerTags(kRequest);
  for (const char* dense : {"0", "1"}) {
    const AllocMetrics& direct = Count(std::string("span_creation/web_server_span/dense:") + dense);
    const AllocMetrics& reused =
        Count(std::string("span_creation/web_server_span_via_builder/dense:") + dense +
              "/builder_reuse:1");
    const AllocMetrics& fresh =
        Count(std::string("span_creation/web_server_span_via_builder/dense:") + dense +
              "/builder_reuse:0");
    EXPECT_EQ(reused.bytes_per_op, direct.bytes_per_op) << dense;
    EXPECT_EQ(reused.allocs_per_op, direct.allocs_per_op) << dense;
    EXPECT_EQ(fresh.bytes_per_op - direct.bytes_per_op, builder.bytes) << dense;
    EXPECT_EQ(fresh.allocs_per_op - direct.allocs_per_op, builder.allocs) << dense;
  }
}

TEST_F(TracerFamilies, FanoutIsExactlyTheWebRootPlusOneSpanNodeAndNamePerChild) {
  // The root is a web server span with dense tags (the tracer's default): the fit's intercept.
  const Heap root = RootSpan(kServerOperation) + HttpServerDecoration(kRequest);
  EXPECT_EQ(root.bytes, Count("span_creation/web_server_span/dense:1").bytes_per_op);
  Heap child = ChildSpan(kChildOperation);
  child.Add(ExactString(kRequest.component.size()));  // its component tag
  for (int share : {0, 1}) {
    const Heap per_child = share == 1 ? child : child + PropagationTagsCopy();
    for (int children : {1, 5, 20}) {
      const std::string name = "trace_fanout/web_trace/children:" + std::to_string(children) +
                               "/share:" + std::to_string(share);
      const AllocMetrics& m = Count(name);
      EXPECT_EQ(m.bytes_per_op, root.bytes + children * per_child.bytes) << name;
      EXPECT_EQ(m.allocs_per_op, root.allocs + children * per_child.allocs) << name;
    }
  }
}

TEST_F(TracerFamilies, FanoutSlopeDifferenceIsExactlyOneCopyOfThePropagationTags) {
  auto bytes = [](int children, int share) {
    return Count("trace_fanout/web_trace/children:" + std::to_string(children) +
                 "/share:" + std::to_string(share))
        .bytes_per_op;
  };
  auto allocs = [](int children, int share) {
    return Count("trace_fanout/web_trace/children:" + std::to_string(children) +
                 "/share:" + std::to_string(share))
        .allocs_per_op;
  };
  double slope[2];
  double alloc_slope[2];
  for (int share : {0, 1}) {
    slope[share] = (bytes(20, share) - bytes(1, share)) / 19;
    alloc_slope[share] = (allocs(20, share) - allocs(1, share)) / 19;
    // Every child costs the same: the three points lie on one line.
    EXPECT_EQ((bytes(5, share) - bytes(1, share)) / 4, slope[share]) << share;
    EXPECT_EQ((bytes(20, share) - bytes(5, share)) / 15, slope[share]) << share;
  }
  // What one copy allocates, from sizes alone: make_shared's single block (libstdc++: the
  // control block's vtable pointer and two 32-bit counts, then the object) plus the one string
  // that outgrows the small-string buffer, "_dd.p.tid" (16 hex digits and the terminator).
  const Heap copy = PropagationTagsCopy();
  EXPECT_EQ(copy.bytes, 16 + sizeof(tracer::PropagationTags) + 17);
  EXPECT_EQ(slope[0] - slope[1], copy.bytes);
  EXPECT_EQ(alloc_slope[0] - alloc_slope[1], copy.allocs);
  EXPECT_EQ(copy.allocs, 2.0);
  // The same, measured alone by the family's dedicated scenario.
  const AllocMetrics& measured = Count("trace_fanout/propagation_tags_copy");
  EXPECT_EQ(measured.bytes_per_op, copy.bytes);
  EXPECT_EQ(measured.allocs_per_op, copy.allocs);
}

TEST_F(TracerFamilies, FreshThreadSpanCostsTheThreadStateAndTheColdCacheExactly) {
  const AllocMetrics& main_thread = Count("span_creation/bare_build_span/builder_reuse:0");
  const AllocMetrics& fresh = Count("span_creation/fresh_thread_span/builder_reuse:0");
  const AllocMetrics& reused = Count("span_creation/fresh_thread_span/builder_reuse:1");
  for (const AllocMetrics* m : {&fresh, &reused}) {
    EXPECT_EQ(m->background_bytes_per_op, 0.0);  // the spawned thread is the scenario's
  }
  // The span a builder makes, on another thread: plus std::thread's state.
  EXPECT_EQ(fresh.bytes_per_op - main_thread.bytes_per_op,
            static_cast<double>(kThreadStateWithTwoRefs));
  EXPECT_EQ(fresh.allocs_per_op - main_thread.allocs_per_op, 1.0);
  // With reuse, every op's thread builds the cache (the same state and name copy a fresh builder
  // has), registers its destructor and gets the plugin's TLS block: the README's "+48 B", a
  // fresh thread paying for the cache instead of saving.
  EXPECT_EQ(reused.bytes_per_op - fresh.bytes_per_op,
            static_cast<double>(kThreadAtExitNode + PluginTlsBytes()));
  EXPECT_EQ(reused.allocs_per_op - fresh.allocs_per_op, 2.0);
}

TEST_F(TracerFamilies, EveryInstanceIsSteady) {
  for (const auto& entry : instances_) {
    const AllocMetrics& m = Count(entry.first);
    EXPECT_TRUE(m.steady) << entry.first << ": " << m.steady_reason;
  }
}

TEST_F(TracerFamilies, EveryInstanceGivesIdenticalCountsOnThreeRuns) {
  for (const auto& entry : instances_) {
    ASSERT_EQ(entry.second.threads, 1) << entry.first;
    const AllocMetrics first = CountOnce(entry.first);
    for (int run = 0; run < 2; ++run) {
      const AllocMetrics again = CountOnce(entry.first);
      EXPECT_EQ(again.bytes_per_op, first.bytes_per_op) << entry.first;
      EXPECT_EQ(again.allocs_per_op, first.allocs_per_op) << entry.first;
    }
  }
}

}  // namespace
}  // namespace allocbench
