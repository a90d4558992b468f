// The reference tracer's heap traffic, derived from sizes on top of tests/expected_heap.h:
// sizeof of the tracer's types, the lengths of the strings used, and libstdc++'s layouts
// (make_shared's control block, list and hash-map nodes, bucket arrays replayed on the same
// types). Shared by tests/tracer/families_test.cc (the span_creation, trace_fanout and
// naming_schema families through the count pass) and tests/tracer/alloc_checks_test.cc (the same
// promises on the tracer's own calls), so both derive their exact counts from one derivation.
#ifndef ALLOCBENCH_TESTS_TRACER_EXPECTED_TRACER_H_
#define ALLOCBENCH_TESTS_TRACER_EXPECTED_TRACER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "expected_heap.h"
#include "tracer/decorators.h"
#include "tracer/propagation_tags.h"
#include "tracer/span_builder.h"
#include "tracer/span_data.h"
#include "tracer/tag_id.h"
#include "tracer/trace.h"
#include "tracer/tracer.h"

namespace allocbench::expected {

// make_shared's single block: the control block (vtable pointer, use and weak counts), then
// the object.
constexpr size_t kSharedControl = sizeof(void*) + 2 * sizeof(int);
// A std::list node: next and previous pointers, then the value.
constexpr size_t kListLinks = 2 * sizeof(void*);
// "_dd.p.tid" holds the upper 64 bits of the trace id as 16 hex digits (propagation_tags.h).
constexpr size_t kTraceIdHighDigits = 16;
// glibc's registration of a thread_local's destructor (__cxa_thread_atexit_impl): a calloc'ed
// node of four pointers (function, object, owning module, next).
constexpr size_t kThreadAtExitNode = 4 * sizeof(void*);

// A root span of a new trace (tracer.cc's Start): its trace's propagation tags (one make_shared
// block, plus "_dd.p.tid" as their one string over 15 characters), the trace (one make_shared
// block), the span's list node in the trace, its name at its exact size, and the tracer's
// default service copied into the span's empty string.
inline Heap RootSpan(std::string_view operation) {
  Heap heap;
  heap.Add(kSharedControl + sizeof(tracer::PropagationTags));
  heap.Add(ExactString(kTraceIdHighDigits));
  heap.Add(kSharedControl + sizeof(tracer::Trace));
  heap.Add(kListLinks + sizeof(tracer::SpanData));
  heap.Add(ExactString(operation.size()));
  heap.Add(GrownString(tracer::TracerOptions().service.size()));
  return heap;
}

// A child span sharing its root's trace: its list node and its name.
inline Heap ChildSpan(std::string_view operation) {
  Heap heap;
  heap.Add(kListLinks + sizeof(tracer::SpanData));
  heap.Add(ExactString(operation.size()));
  return heap;
}

// One copy of a root's propagation tags (CopyPropagationTags, as a share:0 child makes it):
// make_shared's block and the copy of "_dd.p.tid"; the other strings ("", "-0", "1") fit the
// buffer.
inline Heap PropagationTagsCopy() {
  Heap heap;
  heap.Add(kSharedControl + sizeof(tracer::PropagationTags));
  heap.Add(ExactString(kTraceIdHighDigits));
  return heap;
}

// A builder that is not reused (span_builder.h): its state object and its copy of the operation
// name.
inline Heap BuilderState(std::string_view operation) {
  Heap heap;
  heap.Add(sizeof(tracer::SpanBuilderState));
  heap.Add(ExactString(operation.size()));
  return heap;
}

// The 7 tags DecorateHttpServerSpan sets, in the decorator's order, with their values (the status
// code in decimal: tags are strings on the wire).
inline std::vector<std::pair<tracer::TagId, std::string>> HttpServerTags(
    const tracer::HttpServerRequest& request) {
  return {{tracer::TagId::kHttpMethod, std::string(request.method)},
          {tracer::TagId::kHttpUrl, std::string(request.url)},
          {tracer::TagId::kHttpRoute, std::string(request.route)},
          {tracer::TagId::kHttpStatusCode, std::to_string(request.status_code)},
          {tracer::TagId::kHttpUserAgent, std::string(request.user_agent)},
          {tracer::TagId::kPeerHostname, std::string(request.host)},
          {tracer::TagId::kComponent, std::string(request.component)}};
}

// The keys of a tag list, in its order.
inline std::vector<tracer::TagId> Ids(
    const std::vector<std::pair<tracer::TagId, std::string>>& tags) {
  std::vector<tracer::TagId> ids;
  for (const auto& tag : tags) ids.push_back(tag.first);
  return ids;
}

// What the dense store costs for tags set into empty slots (dense_tags.h): each value at its
// exact size, nothing per tag otherwise.
inline Heap DenseValues(const std::vector<std::pair<tracer::TagId, std::string>>& tags) {
  Heap heap;
  for (const auto& tag : tags) heap.Add(ExactString(tag.second.size()));
  return heap;
}

// What the node-based map costs on top of the dense store for the same new tags (tag_store.h):
// per tag a node (next pointer, the key/value pair, the cached hash: libstdc++ caches
// std::hash<std::string>) and the key as a std::string; and the bucket arrays, whose growth from
// the single inline bucket is replayed on a map of the same type.
inline Heap MapOverhead(const std::vector<tracer::TagId>& ids) {
  using Map = std::unordered_map<std::string, std::string>;
  constexpr size_t kNode = sizeof(void*) + sizeof(Map::value_type) + sizeof(size_t);
  Heap heap;
  Map replay;
  size_t buckets = replay.bucket_count();
  for (tracer::TagId id : ids) {
    heap.Add(kNode);
    heap.Add(ExactString(tracer::TagName(id).size()));
    replay.emplace(std::string(tracer::TagName(id)), std::string());
    if (replay.bucket_count() != buckets) {
      buckets = replay.bucket_count();
      heap.Add(buckets * sizeof(void*));
    }
  }
  return heap;
}

// The web server span's decoration, whatever the tag storage: its 7 values and the resource
// "<method> <route>", each at its exact size in the span (decorators.cc builds the resource on
// the stack).
inline Heap HttpServerDecoration(const tracer::HttpServerRequest& request) {
  Heap heap = DenseValues(HttpServerTags(request));
  heap.Add(ExactString(request.method.size() + 1 + request.route.size()));
  return heap;
}

// A fresh builder's own copies of the web server span's tags and resource, until Start() copies
// them again into the span: the pending-tag list growing to 7 entries, each value at its exact
// size, and the resource.
inline Heap BuilderPendingHttpServerTags(const tracer::HttpServerRequest& request) {
  return GrownVector<tracer::SpanBuilderState::PendingTag>(HttpServerTags(request).size()) +
         HttpServerDecoration(request);
}

}  // namespace allocbench::expected

#endif  // ALLOCBENCH_TESTS_TRACER_EXPECTED_TRACER_H_
