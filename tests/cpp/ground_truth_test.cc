// The count pass through the real interposed operator new / malloc (glibc backend), on the
// ground_truth plugin whose per-op allocations are known by construction.
#include <gtest/gtest.h>

#include <map>

#include "count_pass.h"
#include "plugin_loader.h"

namespace allocbench {
namespace {

class GroundTruth : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    counting::SetMode(counting::Mode::kIgnored);
    for (Instance& inst : ExpandInstances({LoadPlugin(PLUGIN_PATH)})) {
      instances_.emplace(inst.name, inst);
    }
  }
  static CountOutcome Count(const std::string& name, CountOptions options = {}) {
    auto it = instances_.find(name);
    EXPECT_NE(it, instances_.end()) << name;
    return RunCountPass(it->second, options);
  }
  static inline std::map<std::string, Instance> instances_;
};

TEST_F(GroundTruth, MixedOpIsExactly206BytesIn5Allocations) {
  const CountOutcome out = Count("ground_truth/mixed");
  ASSERT_EQ(out.error, "");
  const AllocMetrics& m = out.metrics;
  EXPECT_EQ(m.bytes_per_op, 206.0);
  EXPECT_EQ(m.allocs_per_op, 5.0);
  EXPECT_EQ(m.frees_per_op, 5.0);
  EXPECT_EQ(m.first_op_bytes, 206.0);
  EXPECT_EQ(m.first_op_allocs, 5.0);
  EXPECT_TRUE(m.steady) << m.steady_reason;
  EXPECT_EQ(m.background_bytes_per_op, 0.0);
  // glibc 2.36 on x86-64 hands out 40 B for 32, 104 B for 100 and 24 B for 10: all five are
  // live at once at the peak of each op.
  EXPECT_EQ(m.usable_bytes_per_op, 248.0);
  EXPECT_EQ(m.peak_live_bytes, 248);
  EXPECT_EQ(m.windows[0].allocs, 5u * 1000u);
  EXPECT_EQ(m.windows[1].requested_bytes, 206u * 1000u);
}

TEST_F(GroundTruth, SetupTeardownAndPausedRegionsAreNotCounted) {
  const CountOutcome out = Count("ground_truth/setup_and_pause");
  ASSERT_EQ(out.error, "");
  EXPECT_EQ(out.metrics.bytes_per_op, 206.0);
  EXPECT_EQ(out.metrics.allocs_per_op, 5.0);
  EXPECT_EQ(out.metrics.frees_per_op, 5.0);
  EXPECT_EQ(out.metrics.first_op_bytes, 206.0);
}

TEST_F(GroundTruth, AnotherThreadsAllocationsAreOnlyBackground) {
  const CountOutcome out = Count("ground_truth/background");
  ASSERT_EQ(out.error, "");
  EXPECT_EQ(out.metrics.bytes_per_op, 206.0);
  EXPECT_EQ(out.metrics.allocs_per_op, 5.0);
  EXPECT_GT(out.metrics.background_bytes_per_op, 0.0);
  EXPECT_GT(out.metrics.background_allocs_per_op, 0.0);
  // The noise thread only ever allocates 64 B blocks.
  EXPECT_EQ(out.metrics.background_bytes_per_op, 64.0 * out.metrics.background_allocs_per_op);
}

TEST_F(GroundTruth, GrowingVectorIsNotSteadyAndSaysWhy) {
  const CountOutcome out = Count("ground_truth/growing_vector");
  ASSERT_EQ(out.error, "");
  EXPECT_FALSE(out.metrics.steady);
  EXPECT_EQ(out.metrics.steady_reason.rfind("amortized growth: live memory grew by", 0), 0u)
      << out.metrics.steady_reason;
}

TEST_F(GroundTruth, SixteenThreadsCountExactlyPerOpPerThread) {
  const CountOutcome out = Count("ground_truth/threaded/threads:16");
  ASSERT_EQ(out.error, "");
  EXPECT_EQ(out.metrics.bytes_per_op, 96.0);
  EXPECT_EQ(out.metrics.allocs_per_op, 2.0);
  EXPECT_EQ(out.metrics.frees_per_op, 2.0);
  EXPECT_EQ(out.metrics.windows[0].allocs, 2u * 16u * 1000u);
  EXPECT_EQ(out.metrics.windows[1].requested_bytes, 96u * 16u * 1000u);
  EXPECT_TRUE(out.metrics.steady);
}

TEST_F(GroundTruth, NamedArgumentsReachTheBody) {
  EXPECT_EQ(Count("ground_truth/sized/bytes:24").metrics.bytes_per_op, 24.0);
  EXPECT_EQ(Count("ground_truth/sized/bytes:96").metrics.bytes_per_op, 96.0);
}

TEST_F(GroundTruth, SkipWithErrorIsRecordedNotThrown) {
  const CountOutcome out = Count("ground_truth/fails");
  EXPECT_EQ(out.error, "the subject is not configured");
}

TEST_F(GroundTruth, FiveRunsGiveIdenticalCounts) {
  const AllocMetrics first = Count("ground_truth/mixed").metrics;
  for (int run = 0; run < 4; ++run) {
    const AllocMetrics again = Count("ground_truth/mixed").metrics;
    EXPECT_EQ(again.bytes_per_op, first.bytes_per_op);
    EXPECT_EQ(again.allocs_per_op, first.allocs_per_op);
    EXPECT_EQ(again.usable_bytes_per_op, first.usable_bytes_per_op);
  }
}

TEST_F(GroundTruth, WindowSizesFollowTheOptions) {
  const CountOutcome out = Count("ground_truth/sized/bytes:24", CountOptions{3, 7});
  ASSERT_EQ(out.error, "");
  EXPECT_EQ(out.metrics.warmup_ops, 3);
  EXPECT_EQ(out.metrics.window_ops, 7);
  EXPECT_EQ(out.metrics.windows[0].requested_bytes, 24u * 7u);
  EXPECT_EQ(out.metrics.bytes_per_op, 24.0);
}

}  // namespace
}  // namespace allocbench
