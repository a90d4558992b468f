// Builder reuse: a thread's cached builder state really is reused, and only when it is free.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "recording_writer.h"
#include "tracer/tracer.h"

namespace tracer {
namespace {

TracerOptions Reuse(bool reuse) {
  TracerOptions options;
  options.builder_reuse = reuse;
  return options;
}

TEST(TracerBuilder, ReuseHandsOutTheSameStateToConsecutiveBuilders) {
  RecordingWriter writer;
  Tracer tracer(Reuse(true), &writer);
  const SpanBuilderState* first = nullptr;
  {
    SpanBuilder builder = tracer.BuildSpan("one");
    EXPECT_TRUE(builder.reused());
    first = builder.state();
    builder.Start();
  }
  SpanBuilder builder = tracer.BuildSpan("two");
  EXPECT_TRUE(builder.reused());
  EXPECT_EQ(builder.state(), first);
  EXPECT_EQ(builder.state()->operation_name, "two");
}

TEST(TracerBuilder, AReusedStateKeepsItsCapacityAndForgetsItsContent) {
  RecordingWriter writer;
  Tracer tracer(Reuse(true), &writer);
  Span parent = tracer.StartSpan("parent");
  {
    SpanBuilder builder = tracer.BuildSpan("one");
    for (int i = 0; i < 9; ++i) builder.WithTag("key." + std::to_string(i), "v");
    builder.WithResource("a resource longer than the buffer").AsChildOf(parent).Start();
  }
  SpanBuilder builder = tracer.BuildSpan("two");
  const SpanBuilderState& state = *builder.state();
  EXPECT_EQ(state.num_tags, 0u);
  EXPECT_GE(state.tags.size(), 9u);  // the pending-tag slots stay, strings and all
  EXPECT_TRUE(state.resource.empty());
  EXPECT_EQ(state.parent_trace, nullptr);  // a reused builder must not keep a trace alive
  Span span = builder.Start();
  EXPECT_EQ(span.data().tags.size(), 0u);
  EXPECT_EQ(span.data().parent_id, 0u);
  EXPECT_NE(span.trace(), parent.trace());
}

TEST(TracerBuilder, ABuildInsideABuildGetsItsOwnState) {
  RecordingWriter writer;
  Tracer tracer(Reuse(true), &writer);
  SpanBuilder outer = tracer.BuildSpan("outer");
  SpanBuilder inner = tracer.BuildSpan("inner");
  EXPECT_TRUE(outer.reused());
  EXPECT_FALSE(inner.reused());
  EXPECT_NE(outer.state(), inner.state());
}

TEST(TracerBuilder, WithoutReuseEveryBuilderHasAFreshState) {
  RecordingWriter writer;
  Tracer tracer(Reuse(false), &writer);
  SpanBuilder a = tracer.BuildSpan("a");
  EXPECT_FALSE(a.reused());
  a.Start();
  SpanBuilder b = tracer.BuildSpan("b");
  EXPECT_FALSE(b.reused());
}

TEST(TracerBuilder, EachThreadHasItsOwnCachedState) {
  RecordingWriter writer;
  Tracer tracer(Reuse(true), &writer);
  const SpanBuilderState* states[2] = {nullptr, nullptr};
  std::atomic<int> arrived{0};
  auto build = [&](int i) {
    SpanBuilder first = tracer.BuildSpan("t");
    states[i] = first.state();
    first.Start();
    // Both threads (and their cached states) alive at once: the addresses cannot coincide by
    // reuse of freed memory.
    arrived.fetch_add(1);
    while (arrived.load() < 2) std::this_thread::yield();
    SpanBuilder second = tracer.BuildSpan("t");
    EXPECT_EQ(second.state(), states[i]);
    second.Start();
  };
  std::thread t0(build, 0);
  std::thread t1(build, 1);
  t0.join();
  t1.join();
  EXPECT_NE(states[0], nullptr);
  EXPECT_NE(states[0], states[1]);
  EXPECT_EQ(writer.writes(), 4u);
}

}  // namespace
}  // namespace tracer
