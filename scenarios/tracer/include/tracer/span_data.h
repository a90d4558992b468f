// What a span is once recorded: plain data, owned by its trace until the trace is handed to the
// writer, then by the writer. Instrumentation reaches it only through the Span handle.
#ifndef ALLOCBENCH_TRACER_SPAN_DATA_H_
#define ALLOCBENCH_TRACER_SPAN_DATA_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "tracer/propagation_tags.h"
#include "tracer/tag_store.h"

namespace tracer {

struct SpanData {
  explicit SpanData(TagStorage storage) : tags(storage) {}

  uint64_t trace_id_high = 0;
  uint64_t trace_id_low = 0;
  uint64_t span_id = 0;
  uint64_t parent_id = 0;  // 0 for the root
  std::string name;        // the operation name, e.g. "http.server.request"
  std::string service;
  std::string resource;      // e.g. "GET /api/v1/users/{id}"; empty until set
  int64_t start_ns = 0;      // wall clock, ns since the epoch
  int64_t duration_ns = -1;  // -1 until finished
  bool error = false;
  TagStore tags;
  std::shared_ptr<PropagationTags> propagation;  // the trace's (shared) or this span's (copied)
  int64_t steady_start_ns = 0;                   // monotonic clock at start, for the duration
};

// A trace as the writer receives it: one list node per span, so a trace costs exactly one
// allocation per span for its bookkeeping and nothing to hand over.
using SpanList = std::list<SpanData>;

}  // namespace tracer

#endif  // ALLOCBENCH_TRACER_SPAN_DATA_H_
