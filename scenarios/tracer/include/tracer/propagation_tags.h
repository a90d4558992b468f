// The trace-level decisions every span of a trace carries and that cross process boundaries
// (the x-datadog-tags header): the sampling decision, the origin and the "_dd.p.*" tags.
//
// A child span either copies its trace's object (one fresh make_shared per child: a control
// block with the object, plus every string over 15 characters, here the 16-hex-digit "_dd.p.tid")
// or shares the root's by pointer, which allocates nothing. See PropagationTagsMode.
#ifndef ALLOCBENCH_TRACER_PROPAGATION_TAGS_H_
#define ALLOCBENCH_TRACER_PROPAGATION_TAGS_H_

#include <cstdint>
#include <memory>
#include <string>

namespace tracer {

enum class PropagationTagsMode : uint8_t {
  kCopy,   // each child span gets its own copy: independent, one allocation set per child
  kShare,  // each child span points to the root's object: mutations are seen trace-wide
};

struct PropagationTags {
  // Keep (1) under the default sampler at rate 1, as a new trace with no upstream decision.
  static PropagationTags ForNewTrace(uint64_t trace_id_high);

  int sampling_priority = 0;        // -1 user drop, 0 auto drop, 1 auto keep, 2 user keep
  std::string origin;               // "_dd.origin", e.g. "synthetics"; empty for most traces
  std::string decision_maker;       // "_dd.p.dm", e.g. "-0" (the default sampler decided)
  std::string trace_id_high;        // "_dd.p.tid": upper 64 bits of the trace id, 16 hex digits
  std::string knuth_sampling_rate;  // "_dd.p.ksr", the rate the decision was made at

  // The x-datadog-tags header value: the non-empty "_dd.p.*" tags, comma-separated.
  std::string EncodeHeader() const;
};

// What one child span's copy costs: a fresh object, as the kCopy mode makes it.
std::shared_ptr<PropagationTags> CopyPropagationTags(const PropagationTags& tags);

bool operator==(const PropagationTags& a, const PropagationTags& b);

}  // namespace tracer

#endif  // ALLOCBENCH_TRACER_PROPAGATION_TAGS_H_
