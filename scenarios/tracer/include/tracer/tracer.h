// The tracer: starts spans (directly or through a builder), assembles them into traces and
// hands finished traces to a writer. Every allocation hot spot is a run-time option, so that one
// build measures both sides of each change:
//
//   option                 before (costly)                  after
//   tag_storage            kMap: node per tag, key strings   kDense: slots by well-known id
//   builder_reuse          false: a new builder per span     true: one cached builder per thread
//   propagation_tags       kCopy: one object per child        kShare: children point to the root's
//   precomputed_names      false: names built per call       true: looked up in tables
//
// The defaults are the right-hand column; the benchmarks select the left one to show the before.
// Thread-safe: any thread may start and finish spans.
#ifndef ALLOCBENCH_TRACER_TRACER_H_
#define ALLOCBENCH_TRACER_TRACER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tracer/id_generator.h"
#include "tracer/naming.h"
#include "tracer/propagation_tags.h"
#include "tracer/span.h"
#include "tracer/span_builder.h"
#include "tracer/tag_store.h"
#include "tracer/writer.h"

namespace tracer {

struct TracerOptions {
  std::string service = "web-store";
  TagStorage tag_storage = TagStorage::kDense;
  bool builder_reuse = true;
  PropagationTagsMode propagation_tags = PropagationTagsMode::kShare;
  SchemaVersion schema = SchemaVersion::kV0;
  bool precomputed_names = true;
  uint64_t id_seed = 0x5eed'a110'cbe7'c4a1;
};

class Tracer {
 public:
  // REQUIRES: `writer` outlives the tracer and every span it starts.
  Tracer(TracerOptions options, Writer* writer);
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // A new trace's root span.
  Span StartSpan(std::string_view operation_name);
  // A child of `parent` (finished or not); an empty `parent` starts a new trace.
  Span StartSpan(std::string_view operation_name, const Span& parent);
  // The builder path; see span_builder.h.
  SpanBuilder BuildSpan(std::string_view operation_name);

  const TracerOptions& options() const { return options_; }
  const NamingSchema& naming() const { return naming_; }

 private:
  friend class SpanBuilder;
  // The one place spans are made: with `parent_trace` null, a new trace.
  Span Start(std::string_view operation_name, const std::shared_ptr<Trace>* parent_trace,
             uint64_t parent_id);

  const TracerOptions options_;
  Writer* const writer_;
  const NamingSchema naming_;
  IdGenerator ids_;
};

}  // namespace tracer

#endif  // ALLOCBENCH_TRACER_TRACER_H_
