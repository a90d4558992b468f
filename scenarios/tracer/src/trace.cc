#include "tracer/trace.h"

#include <utility>

namespace tracer {

Trace::Trace(Writer* writer, uint64_t trace_id_high, uint64_t trace_id_low,
             std::shared_ptr<PropagationTags> propagation)
    : writer_(writer),
      trace_id_high_(trace_id_high),
      trace_id_low_(trace_id_low),
      propagation_(std::move(propagation)) {}

SpanData& Trace::AddSpan(TagStorage storage) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Only the list links are touched here: other threads may be filling their own spans' data.
  return spans_.emplace_back(storage);
}

void Trace::SpanFinished() {
  SpanList done;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (++finished_ < spans_.size()) return;
    done.swap(spans_);
    finished_ = 0;
  }
  // Outside the lock: the writer may be slow, and a late child may start meanwhile.
  writer_->Write(std::move(done));
}

std::size_t Trace::pending_spans() {
  std::lock_guard<std::mutex> lock(mutex_);
  return spans_.size();
}

}  // namespace tracer
