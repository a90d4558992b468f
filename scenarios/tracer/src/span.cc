#include "tracer/span.h"

#include <utility>

#include "assign.h"
#include "clock.h"
#include "decimal.h"
#include "extra_work.h"

namespace tracer {

Span::Span(Span&& other) noexcept
    : trace_(std::move(other.trace_)),
      data_(std::exchange(other.data_, nullptr)),
      span_id_(other.span_id_) {}

Span& Span::operator=(Span&& other) noexcept {
  if (this != &other) {
    Finish();
    trace_ = std::move(other.trace_);
    data_ = std::exchange(other.data_, nullptr);
    span_id_ = other.span_id_;
  }
  return *this;
}

Span::~Span() { Finish(); }

Span& Span::SetTag(TagId id, std::string_view value) {
  data_->tags.Set(id, value);
  return *this;
}

Span& Span::SetTag(TagId id, int64_t value) {
  char buffer[20];
  data_->tags.Set(id, internal::FormatDecimal(value, buffer));
  return *this;
}

Span& Span::SetTag(std::string_view key, std::string_view value) {
  data_->tags.Set(key, value);
  return *this;
}

Span& Span::SetResource(std::string_view resource) {
  internal::AssignExact(data_->resource, resource);
  return *this;
}

Span& Span::SetService(std::string_view service) {
  internal::AssignExact(data_->service, service);
  return *this;
}

Span& Span::SetError(bool error) {
  data_->error = error;
  return *this;
}

void Span::Finish() {
  if (data_ == nullptr) return;
  SpanData* data = std::exchange(data_, nullptr);
  data->duration_ns = internal::SteadyNowNs() - data->steady_start_ns;
  internal::ExtraHashWork(span_id_);  // a benchmark knob: no code unless it is set (extra_work.h)
  // May complete the trace and hand it, this span included, to the writer.
  trace_->SpanFinished();
}

}  // namespace tracer
