// Trace assembly: a trace collects its spans as they start and, when every span started so far
// has finished (the root first among them), hands them all to the writer in one call.
//
// Thread-safe: spans of one trace may start and finish on different threads.
#ifndef ALLOCBENCH_TRACER_TRACE_H_
#define ALLOCBENCH_TRACER_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "tracer/span_data.h"
#include "tracer/writer.h"

namespace tracer {

class Trace {
 public:
  // REQUIRES: `writer` outlives the trace.
  Trace(Writer* writer, uint64_t trace_id_high, uint64_t trace_id_low,
        std::shared_ptr<PropagationTags> propagation);
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  // A new, unfinished span of this trace. The reference stays valid until SpanFinished() is
  // called for it.
  SpanData& AddSpan(TagStorage storage);
  // One of this trace's spans is finished (its data complete). REQUIRES: once per AddSpan().
  // When it was the last unfinished one, the trace goes to the writer, from this thread.
  void SpanFinished();

  uint64_t trace_id_high() const { return trace_id_high_; }
  uint64_t trace_id_low() const { return trace_id_low_; }
  // The root's propagation tags: what children copy or share.
  const std::shared_ptr<PropagationTags>& propagation() const { return propagation_; }

  // Spans started and not yet written.
  std::size_t pending_spans();

 private:
  Writer* const writer_;
  const uint64_t trace_id_high_;
  const uint64_t trace_id_low_;
  const std::shared_ptr<PropagationTags> propagation_;
  std::mutex mutex_;
  SpanList spans_;            // guarded by mutex_
  std::size_t finished_ = 0;  // guarded by mutex_; how many of spans_ are finished
};

}  // namespace tracer

#endif  // ALLOCBENCH_TRACER_TRACE_H_
