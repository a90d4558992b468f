// The builder path: tags, resource and parent given before Start(), the shape of the
// OpenTracing/OpenTelemetry bridges. Its cost is the builder itself: the state object, its copy
// of the operation name, and a growing list of pending tags, all of which a plain StartSpan()
// does not pay.
//
// With TracerOptions::builder_reuse, each thread keeps one builder state and reuses it (strings
// and the pending-tag list keep their capacity), so a warm thread pays nothing for the builder.
// A thread that builds its first span pays for it once; a fresh thread per span always does.
#ifndef ALLOCBENCH_TRACER_SPAN_BUILDER_H_
#define ALLOCBENCH_TRACER_SPAN_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tracer/span.h"
#include "tracer/tag_id.h"
#include "tracer/trace.h"

namespace tracer {

class Tracer;

// Everything a builder accumulates before Start(). Public so that tests can size it.
struct SpanBuilderState {
  struct PendingTag {
    bool known = false;
    TagId id = TagId::kHttpMethod;  // when known
    std::string key;                // when not known
    std::string value;
  };

  explicit SpanBuilderState(std::string_view operation_name) : operation_name(operation_name) {}
  // Forgets what was built but keeps every buffer's capacity, for the next span on this thread.
  void Reset();

  std::string operation_name;
  std::string resource;
  std::string service;  // empty: the tracer's
  std::vector<PendingTag> tags;
  std::size_t num_tags = 0;  // tags[0, num_tags) are set; the rest are kept for their capacity
  std::shared_ptr<Trace> parent_trace;
  uint64_t parent_id = 0;
  bool in_use = false;
};

class SpanBuilder {
 public:
  SpanBuilder(SpanBuilder&& other) noexcept;
  SpanBuilder& operator=(SpanBuilder&&) = delete;
  SpanBuilder(const SpanBuilder&) = delete;
  SpanBuilder& operator=(const SpanBuilder&) = delete;
  ~SpanBuilder();

  // REQUIRES for all of these: Start() not called yet.
  SpanBuilder& WithTag(TagId id, std::string_view value);
  SpanBuilder& WithTag(TagId id, int64_t value);
  SpanBuilder& WithTag(std::string_view key, std::string_view value);
  SpanBuilder& WithResource(std::string_view resource);
  SpanBuilder& WithService(std::string_view service);
  // REQUIRES: `parent` is not empty. Without it, Start() begins a new trace.
  SpanBuilder& AsChildOf(const Span& parent);

  // The span, with everything given so far. The builder is spent afterwards (its state goes back
  // to the thread's cache, or is freed).
  Span Start();

  // Whether this builder uses the thread's cached state (true only with builder_reuse).
  bool reused() const { return owned_ == nullptr; }
  // For tests: the state this builder fills.
  const SpanBuilderState* state() const { return state_; }

 private:
  friend class Tracer;
  SpanBuilder(Tracer* tracer, std::string_view operation_name, bool reuse);
  SpanBuilderState::PendingTag& NextPendingTag();
  void Release();

  Tracer* tracer_;
  SpanBuilderState* state_;                  // null once started
  std::unique_ptr<SpanBuilderState> owned_;  // set unless the state is the thread's cached one
};

}  // namespace tracer

#endif  // ALLOCBENCH_TRACER_SPAN_BUILDER_H_
