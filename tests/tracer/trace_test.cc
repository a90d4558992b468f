// Trace assembly: the writer gets the root and every child, exactly once, when all are finished.
#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "recording_writer.h"
#include "tracer/tracer.h"

namespace tracer {
namespace {

constexpr int kChildren = 5;

TEST(TracerTrace, WriterGetsRootAndAllChildrenOnceTheLastIsFinished) {
  RecordingWriter writer;
  Tracer tracer(TracerOptions{}, &writer);
  Span root = tracer.StartSpan("root");
  std::vector<Span> children;
  for (int i = 0; i < kChildren; ++i) children.push_back(tracer.StartSpan("child", root));
  EXPECT_EQ(root.trace()->pending_spans(), 1u + kChildren);
  for (Span& child : children) {
    child.Finish();
    EXPECT_EQ(writer.writes(), 0u);
  }
  root.Finish();
  ASSERT_EQ(writer.writes(), 1u);
  const SpanList& trace = writer.traces()[0];
  ASSERT_EQ(trace.size(), 1u + kChildren);
  EXPECT_EQ(trace.front().name, "root");
  EXPECT_EQ(trace.front().parent_id, 0u);
  std::set<uint64_t> ids;
  for (const SpanData& span : trace) {
    ids.insert(span.span_id);
    EXPECT_GE(span.duration_ns, 0);
    EXPECT_EQ(span.trace_id_low, trace.front().trace_id_low);
    EXPECT_EQ(span.trace_id_high, trace.front().trace_id_high);
    if (&span != &trace.front()) {
      EXPECT_EQ(span.parent_id, trace.front().span_id);
    }
  }
  EXPECT_EQ(ids.size(), 1u + kChildren);  // distinct span ids
  EXPECT_EQ(root.trace()->pending_spans(), 0u);
}

TEST(TracerTrace, ChildrenStillRunningHoldTheTraceAfterTheRootFinishes) {
  RecordingWriter writer;
  Tracer tracer(TracerOptions{}, &writer);
  Span root = tracer.StartSpan("root");
  Span first = tracer.StartSpan("child", root);
  Span grandchild = tracer.StartSpan("grandchild", first);
  root.Finish();
  first.Finish();
  EXPECT_EQ(writer.writes(), 0u);
  grandchild.Finish();
  ASSERT_EQ(writer.writes(), 1u);
  ASSERT_EQ(writer.traces()[0].size(), 3u);
  EXPECT_EQ(writer.traces()[0].back().parent_id, first.span_id());
}

TEST(TracerTrace, SeparateRootsAreSeparateTraces) {
  RecordingWriter writer;
  Tracer tracer(TracerOptions{}, &writer);
  Span a = tracer.StartSpan("a");
  Span b = tracer.StartSpan("b");
  EXPECT_NE(a.trace(), b.trace());
  a.Finish();
  b.Finish();
  ASSERT_EQ(writer.writes(), 2u);
  EXPECT_NE(writer.traces()[0].front().trace_id_low, writer.traces()[1].front().trace_id_low);
}

TEST(TracerTrace, ChildrenFinishedOnOtherThreadsAreAssembledOnce) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 50;
  RecordingWriter writer;
  TracerOptions options;
  options.propagation_tags = PropagationTagsMode::kCopy;
  Tracer tracer(options, &writer);
  Span root = tracer.StartSpan("root");
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&tracer, &root] {
      for (int i = 0; i < kPerThread; ++i) {
        Span child = tracer.BuildSpan("child").AsChildOf(root).WithTag("i", "x").Start();
        child.SetTag(TagId::kComponent, "worker");
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(writer.writes(), 0u);
  root.Finish();
  ASSERT_EQ(writer.writes(), 1u);
  EXPECT_EQ(writer.traces()[0].size(), 1u + kThreads * kPerThread);
}

}  // namespace
}  // namespace tracer
