#include "tracer/span_builder.h"

#include <utility>

#include "assign.h"
#include "decimal.h"
#include "tracer/tracer.h"

namespace tracer {
namespace {

// The thread's reusable builder state: made by its first reusing BuildSpan(), kept until the
// thread exits. A thread that lives for one span pays for it every time.
thread_local std::unique_ptr<SpanBuilderState> t_cached_state;

}  // namespace

void SpanBuilderState::Reset() {
  resource.clear();
  service.clear();
  num_tags = 0;
  parent_trace.reset();
  parent_id = 0;
}

SpanBuilder::SpanBuilder(Tracer* tracer, std::string_view operation_name, bool reuse)
    : tracer_(tracer), state_(nullptr) {
  if (reuse) {
    std::unique_ptr<SpanBuilderState>& cached = t_cached_state;
    if (cached == nullptr) {
      cached = std::make_unique<SpanBuilderState>(operation_name);
      state_ = cached.get();
    } else if (!cached->in_use) {
      state_ = cached.get();
      internal::AssignExact(state_->operation_name, operation_name);
    }
  }
  if (state_ == nullptr) {  // no reuse, or the thread's builder is busy (a build inside a build)
    owned_ = std::make_unique<SpanBuilderState>(operation_name);
    state_ = owned_.get();
  }
  state_->in_use = true;
}

SpanBuilder::SpanBuilder(SpanBuilder&& other) noexcept
    : tracer_(other.tracer_),
      state_(std::exchange(other.state_, nullptr)),
      owned_(std::move(other.owned_)) {}

SpanBuilder::~SpanBuilder() { Release(); }

void SpanBuilder::Release() {
  if (state_ == nullptr) return;
  if (owned_ != nullptr) {
    owned_.reset();
  } else {
    state_->Reset();
    state_->in_use = false;
  }
  state_ = nullptr;
}

SpanBuilderState::PendingTag& SpanBuilder::NextPendingTag() {
  SpanBuilderState& s = *state_;
  if (s.num_tags < s.tags.size()) return s.tags[s.num_tags++];
  ++s.num_tags;
  return s.tags.emplace_back();
}

SpanBuilder& SpanBuilder::WithTag(TagId id, std::string_view value) {
  SpanBuilderState::PendingTag& tag = NextPendingTag();
  tag.known = true;
  tag.id = id;
  internal::AssignExact(tag.value, value);
  return *this;
}

SpanBuilder& SpanBuilder::WithTag(TagId id, int64_t value) {
  char buffer[20];
  return WithTag(id, internal::FormatDecimal(value, buffer));
}

SpanBuilder& SpanBuilder::WithTag(std::string_view key, std::string_view value) {
  SpanBuilderState::PendingTag& tag = NextPendingTag();
  tag.known = false;
  internal::AssignExact(tag.key, key);
  internal::AssignExact(tag.value, value);
  return *this;
}

SpanBuilder& SpanBuilder::WithResource(std::string_view resource) {
  internal::AssignExact(state_->resource, resource);
  return *this;
}

SpanBuilder& SpanBuilder::WithService(std::string_view service) {
  internal::AssignExact(state_->service, service);
  return *this;
}

SpanBuilder& SpanBuilder::AsChildOf(const Span& parent) {
  state_->parent_trace = parent.trace();
  state_->parent_id = parent.span_id();
  return *this;
}

Span SpanBuilder::Start() {
  const SpanBuilderState& s = *state_;
  Span span =
      tracer_->Start(s.operation_name, s.parent_trace ? &s.parent_trace : nullptr, s.parent_id);
  if (!s.service.empty()) span.SetService(s.service);
  if (!s.resource.empty()) span.SetResource(s.resource);
  for (std::size_t i = 0; i < s.num_tags; ++i) {
    const SpanBuilderState::PendingTag& tag = s.tags[i];
    if (tag.known) {
      span.SetTag(tag.id, tag.value);
    } else {
      span.SetTag(tag.key, tag.value);
    }
  }
  Release();
  return span;
}

}  // namespace tracer
