// A span handle: what instrumentation holds between start and finish. Move-only; finishing is
// explicit (Finish) or happens when the handle is destroyed.
//
// After Finish() the span's data belongs to the trace (and then the writer): the handle still
// knows its ids and trace, so children can start from it, but data() and the setters are gone.
#ifndef ALLOCBENCH_TRACER_SPAN_H_
#define ALLOCBENCH_TRACER_SPAN_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "tracer/span_data.h"
#include "tracer/tag_id.h"
#include "tracer/trace.h"

namespace tracer {

class Span {
 public:
  Span() = default;  // an empty handle: no trace, nothing to finish
  Span(Span&& other) noexcept;
  Span& operator=(Span&& other) noexcept;
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  ~Span();

  // REQUIRES for the setters and data(): !finished() and the handle is not empty.
  Span& SetTag(TagId id, std::string_view value);
  Span& SetTag(TagId id, int64_t value);  // formatted in decimal, as the wire wants a string
  Span& SetTag(std::string_view key, std::string_view value);
  Span& SetResource(std::string_view resource);
  Span& SetService(std::string_view service);
  Span& SetError(bool error);
  const SpanData& data() const { return *data_; }
  // The trace-level decisions this span carries (its own copy or the trace's shared object).
  PropagationTags& propagation_tags() { return *data_->propagation; }

  // Records the duration and gives the span to its trace. Idempotent.
  void Finish();

  bool empty() const { return trace_ == nullptr; }
  bool finished() const { return data_ == nullptr; }
  uint64_t span_id() const { return span_id_; }
  const std::shared_ptr<Trace>& trace() const { return trace_; }

 private:
  friend class Tracer;
  Span(std::shared_ptr<Trace> trace, SpanData* data)
      : trace_(std::move(trace)), data_(data), span_id_(data->span_id) {}

  std::shared_ptr<Trace> trace_;
  SpanData* data_ = nullptr;  // null once finished
  uint64_t span_id_ = 0;
};

}  // namespace tracer

#endif  // ALLOCBENCH_TRACER_SPAN_H_
