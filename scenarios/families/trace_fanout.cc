// trace_fanout: a web-shaped root span plus N children per op, the shape of the Java tracer's
// TraceAssemblyBenchmark (dd-trace-java #11915). The trace reaches the writer when the root
// finishes, after its children.
//
// share:0 gives every child its own copy of the root's propagation tags, share:1 a pointer to
// the root's (dd-trace-java #11701). The per-child slope of B/op over children:1/5/20 differs
// between the two by exactly what one copy allocates, which propagation_tags_copy measures alone.
#include <allocbench/scenario.h>

#include <memory>

#include "tracer/decorators.h"
#include "tracer/tracer.h"
#include "web_request.h"

namespace {

using families::DropWriter;
using families::kRequest;
using families::kServerOperation;

using tracer::PropagationTagsMode;
using tracer::Span;

constexpr std::string_view kChildOperation = "app.handler.step";

tracer::TracerOptions Options(bool share) {
  tracer::TracerOptions options;
  options.propagation_tags = share ? PropagationTagsMode::kShare : PropagationTagsMode::kCopy;
  return options;
}

ALLOCBENCH_SCENARIO(WebTrace, state) {
  const int64_t children = state.range(0);
  DropWriter writer;
  tracer::Tracer tracer(Options(state.range(1) != 0), &writer);
  for (auto _ : state) {
    Span root = tracer.StartSpan(kServerOperation);
    tracer::DecorateHttpServerSpan(kRequest, root);
    for (int64_t i = 0; i < children; ++i) {
      Span child = tracer.StartSpan(kChildOperation, root);
      child.SetTag(tracer::TagId::kComponent, kRequest.component);
      child.Finish();
    }
    root.Finish();
  }
}
ALLOCBENCH_REGISTER(WebTrace)
    ->Name("trace_fanout/web_trace")
    ->ArgNames({"children", "share"})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Args({5, 0})
    ->Args({5, 1})
    ->Args({20, 0})
    ->Args({20, 1});

// One copy of a real root's propagation tags, made as a share:0 child makes it.
ALLOCBENCH_SCENARIO(PropagationTagsCopy, state) {
  DropWriter writer;
  tracer::Tracer tracer(Options(false), &writer);
  Span root = tracer.StartSpan(kServerOperation);
  const tracer::PropagationTags& tags = root.propagation_tags();
  for (auto _ : state) {
    std::shared_ptr<tracer::PropagationTags> copy = tracer::CopyPropagationTags(tags);
    allocbench::DoNotOptimize(copy);
  }
}
ALLOCBENCH_REGISTER(PropagationTagsCopy)->Name("trace_fanout/propagation_tags_copy");

}  // namespace
