// Propagation tags: a new trace's decisions, and children that copy or share them as named.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "recording_writer.h"
#include "tracer/tracer.h"

namespace tracer {
namespace {

TracerOptions Mode(PropagationTagsMode mode) {
  TracerOptions options;
  options.propagation_tags = mode;
  return options;
}

TEST(TracerPropagation, ANewTraceKeepsByDefaultAndCarriesItsHighTraceId) {
  RecordingWriter writer;
  Tracer tracer(TracerOptions{}, &writer);
  Span root = tracer.StartSpan("root");
  const PropagationTags& tags = root.propagation_tags();
  char expected_tid[17];
  std::snprintf(expected_tid, sizeof expected_tid, "%016llx",
                static_cast<unsigned long long>(root.trace()->trace_id_high()));
  EXPECT_EQ(tags.sampling_priority, 1);
  EXPECT_EQ(tags.trace_id_high, expected_tid);
  EXPECT_EQ(tags.EncodeHeader(),
            std::string("_dd.p.dm=-0,_dd.p.tid=") + expected_tid + ",_dd.p.ksr=1");
}

TEST(TracerPropagation, SharingChildrenPointToTheRootsObject) {
  RecordingWriter writer;
  Tracer tracer(Mode(PropagationTagsMode::kShare), &writer);
  Span root = tracer.StartSpan("root");
  Span child = tracer.StartSpan("child", root);
  Span built = tracer.BuildSpan("built").AsChildOf(root).Start();
  EXPECT_EQ(&child.propagation_tags(), &root.propagation_tags());
  EXPECT_EQ(&built.propagation_tags(), &root.propagation_tags());
  child.propagation_tags().sampling_priority = 2;  // a decision made below is the trace's
  EXPECT_EQ(root.propagation_tags().sampling_priority, 2);
}

TEST(TracerPropagation, CopyingChildrenGetTheirOwnEqualObject) {
  RecordingWriter writer;
  Tracer tracer(Mode(PropagationTagsMode::kCopy), &writer);
  Span root = tracer.StartSpan("root");
  Span child = tracer.StartSpan("child", root);
  Span sibling = tracer.StartSpan("sibling", root);
  EXPECT_NE(&child.propagation_tags(), &root.propagation_tags());
  EXPECT_NE(&child.propagation_tags(), &sibling.propagation_tags());
  EXPECT_EQ(child.propagation_tags(), root.propagation_tags());
  child.propagation_tags().sampling_priority = -1;
  EXPECT_EQ(root.propagation_tags().sampling_priority, 1);
  EXPECT_EQ(sibling.propagation_tags().sampling_priority, 1);
}

TEST(TracerPropagation, CopyPropagationTagsMakesAnIndependentEqualObject) {
  const PropagationTags original = PropagationTags::ForNewTrace(0x0123456789abcdef);
  EXPECT_EQ(original.trace_id_high, "0123456789abcdef");
  const std::shared_ptr<PropagationTags> copy = CopyPropagationTags(original);
  EXPECT_EQ(*copy, original);
  EXPECT_EQ(copy.use_count(), 1);
}

}  // namespace
}  // namespace tracer
