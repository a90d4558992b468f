// The span_creation, trace_fanout and naming_schema families keep their promises, on exact
// counts from the real count pass over the built-in plugin (interposed operator new / malloc).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "count_pass.h"
#include "plugin_loader.h"
#include "tracer/propagation_tags.h"
#include "tracer/span_builder.h"

namespace allocbench {
namespace {

// span_creation.cc's operation name; its copy is one of the builder's allocations.
constexpr char kServerOperation[] = "http.server.request";

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

TEST_F(TracerFamilies, InterpolatedNamesAllocate) {
  for (const char* shape : {"protocol_names", "database_names"}) {
    for (const char* schema : {"0", "1"}) {
      const std::string name =
          std::string("naming_schema/") + shape + "/schema:" + schema + "/precomputed:0";
      EXPECT_GT(Count(name).bytes_per_op, 0.0) << name;
      EXPECT_GT(Count(name).allocs_per_op, 0.0) << name;
    }
  }
}

TEST_F(TracerFamilies, BareBuildCostsExactlyTheBuilderAndNothingWithReuse) {
  const AllocMetrics& start = Count("span_creation/bare_start_span");
  const AllocMetrics& fresh = Count("span_creation/bare_build_span/builder_reuse:0");
  const AllocMetrics& reused = Count("span_creation/bare_build_span/builder_reuse:1");
  // The builder's state object and its copy of the operation name; nothing else differs.
  EXPECT_EQ(fresh.bytes_per_op - start.bytes_per_op,
            static_cast<double>(sizeof(tracer::SpanBuilderState) + sizeof(kServerOperation)));
  EXPECT_EQ(fresh.allocs_per_op - start.allocs_per_op, 2.0);
  EXPECT_EQ(reused.bytes_per_op, start.bytes_per_op);
  EXPECT_EQ(reused.allocs_per_op, start.allocs_per_op);
  // The cached builder is made by the thread's first build: the cold op pays for it.
  EXPECT_GT(reused.first_op_bytes, start.first_op_bytes);
}

TEST_F(TracerFamilies, DenseTagStorageAllocatesLessThanTheMapForTheSameTags) {
  for (const std::string prefix :
       {"span_creation/web_server_span/", "span_creation/db_client_span/"}) {
    const AllocMetrics& map = Count(prefix + "dense:0");
    const AllocMetrics& dense = Count(prefix + "dense:1");
    EXPECT_LT(dense.bytes_per_op, map.bytes_per_op) << prefix;
    EXPECT_LT(dense.allocs_per_op, map.allocs_per_op) << prefix;
  }
  for (const char* reuse : {"0", "1"}) {
    const std::string prefix = "span_creation/web_server_span_via_builder/dense:";
    const AllocMetrics& map = Count(prefix + "0/builder_reuse:" + reuse);
    const AllocMetrics& dense = Count(prefix + "1/builder_reuse:" + reuse);
    EXPECT_LT(dense.bytes_per_op, map.bytes_per_op) << reuse;
    EXPECT_LT(dense.allocs_per_op, map.allocs_per_op) << reuse;
  }
}

TEST_F(TracerFamilies, AWarmReusedBuilderCostsWhatSettingTagsAfterStartCosts) {
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
    EXPECT_GT(fresh.bytes_per_op, direct.bytes_per_op) << dense;
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
  const double copy_bytes = 16 + sizeof(tracer::PropagationTags) + 17;
  EXPECT_EQ(slope[0] - slope[1], copy_bytes);
  EXPECT_EQ(alloc_slope[0] - alloc_slope[1], 2.0);
  // The same, measured alone by the family's dedicated scenario.
  const AllocMetrics& copy = Count("trace_fanout/propagation_tags_copy");
  EXPECT_EQ(copy.bytes_per_op, copy_bytes);
  EXPECT_EQ(copy.allocs_per_op, 2.0);
}

TEST_F(TracerFamilies, FreshThreadSpanCountsTheSpawnedThreadsSpan) {
  const AllocMetrics& main_thread = Count("span_creation/bare_build_span/builder_reuse:0");
  for (const char* reuse : {"0", "1"}) {
    const std::string name = std::string("span_creation/fresh_thread_span/builder_reuse:") + reuse;
    const AllocMetrics& m = Count(name);
    EXPECT_GE(m.bytes_per_op, main_thread.bytes_per_op) << name;
    EXPECT_GE(m.allocs_per_op, main_thread.allocs_per_op) << name;
    EXPECT_EQ(m.background_bytes_per_op, 0.0) << name;  // the spawned thread is the scenario's
  }
  // A cold thread-local cache every time: reuse cannot make a fresh thread cheaper.
  EXPECT_GE(Count("span_creation/fresh_thread_span/builder_reuse:1").bytes_per_op,
            Count("span_creation/fresh_thread_span/builder_reuse:0").bytes_per_op);
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
