#include "tracer/tracer.h"

#include <utility>

#include "clock.h"

namespace tracer {

Tracer::Tracer(TracerOptions options, Writer* writer)
    : options_(std::move(options)),
      writer_(writer),
      naming_(options_.schema, options_.service, options_.precomputed_names),
      ids_(options_.id_seed) {}

Span Tracer::StartSpan(std::string_view operation_name) {
  return Start(operation_name, nullptr, 0);
}

Span Tracer::StartSpan(std::string_view operation_name, const Span& parent) {
  return Start(operation_name, &parent.trace(), parent.span_id());
}

SpanBuilder Tracer::BuildSpan(std::string_view operation_name) {
  return SpanBuilder(this, operation_name, options_.builder_reuse);
}

Span Tracer::Start(std::string_view operation_name, const std::shared_ptr<Trace>* parent_trace,
                   uint64_t parent_id) {
  std::shared_ptr<Trace> trace;
  std::shared_ptr<PropagationTags> propagation;
  if (parent_trace != nullptr && *parent_trace != nullptr) {
    trace = *parent_trace;
    // The one-line difference of the Java tracer's #11701: a pointer copy instead of an object.
    propagation = options_.propagation_tags == PropagationTagsMode::kShare
                      ? trace->propagation()
                      : CopyPropagationTags(*trace->propagation());
  } else {
    parent_id = 0;
    const uint64_t id_high = ids_.Next();
    const uint64_t id_low = ids_.Next();
    propagation = std::make_shared<PropagationTags>(PropagationTags::ForNewTrace(id_high));
    trace = std::make_shared<Trace>(writer_, id_high, id_low, propagation);
  }
  SpanData& data = trace->AddSpan(options_.tag_storage);
  data.trace_id_high = trace->trace_id_high();
  data.trace_id_low = trace->trace_id_low();
  data.span_id = ids_.Next();
  data.parent_id = parent_id;
  data.name = std::string(operation_name);
  data.service = options_.service;
  data.start_ns = internal::WallNowNs();
  data.steady_start_ns = internal::SteadyNowNs();
  data.propagation = std::move(propagation);
  return Span(std::move(trace), &data);
}

}  // namespace tracer
