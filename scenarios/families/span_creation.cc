// span_creation: one span created, tagged and finished per op, the shapes of the Java tracer's
// SpanCreationBenchmark (dd-trace-java #11915). The writer drops each trace, but only after
// DoNotOptimize: a writer the optimizer can see through would let it delete the work measured.
//
// Arguments: dense (tag storage: 0 node-based map, 1 dense slots by tag id) and builder_reuse
// (0 a new builder per span, 1 one cached builder per thread), where they apply.
#include <allocbench/scenario.h>

#include <thread>

#include "tracer/decorators.h"
#include "tracer/tracer.h"
#include "web_request.h"

namespace {

using families::DropWriter;
using families::kRequest;
using families::kServerOperation;

using tracer::Span;
using tracer::TagStorage;

constexpr tracer::DbClientQuery kQuery = {
    tracer::Database::kPostgres,
    "orders",
    "orders_service",
    "SELECT id, status, total FROM orders WHERE customer_id = ? ORDER BY created_at DESC LIMIT ?",
    "SELECT",
    "orders-db.internal.example.com",
    5432,
    "libpq",
};

tracer::TracerOptions Options(bool dense, bool builder_reuse) {
  tracer::TracerOptions options;
  options.tag_storage = dense ? TagStorage::kDense : TagStorage::kMap;
  options.builder_reuse = builder_reuse;
  return options;
}

// startSpan: the tracer's direct path, no builder.
ALLOCBENCH_SCENARIO(BareStartSpan, state) {
  DropWriter writer;
  tracer::Tracer tracer(Options(false, false), &writer);
  for (auto _ : state) {
    Span span = tracer.StartSpan(kServerOperation);
    span.Finish();
  }
}
ALLOCBENCH_REGISTER(BareStartSpan)->Name("span_creation/bare_start_span");

// buildSpan().start(): the same span through a builder, which costs exactly the builder.
ALLOCBENCH_SCENARIO(BareBuildSpan, state) {
  DropWriter writer;
  tracer::Tracer tracer(Options(false, state.range(0) != 0), &writer);
  for (auto _ : state) {
    Span span = tracer.BuildSpan(kServerOperation).Start();
    span.Finish();
  }
}
ALLOCBENCH_REGISTER(BareBuildSpan)
    ->Name("span_creation/bare_build_span")
    ->ArgNames({"builder_reuse"})
    ->Args({0})
    ->Args({1});

// 7 tags set after start.
ALLOCBENCH_SCENARIO(WebServerSpan, state) {
  DropWriter writer;
  tracer::Tracer tracer(Options(state.range(0) != 0, false), &writer);
  for (auto _ : state) {
    Span span = tracer.StartSpan(kServerOperation);
    tracer::DecorateHttpServerSpan(kRequest, span);
    span.Finish();
  }
}
ALLOCBENCH_REGISTER(WebServerSpan)
    ->Name("span_creation/web_server_span")
    ->ArgNames({"dense"})
    ->Args({0})
    ->Args({1});

// 9 tags of a database client span, named by the naming schema ("postgres.query", service
// "web-store-postgres").
ALLOCBENCH_SCENARIO(DbClientSpan, state) {
  DropWriter writer;
  tracer::Tracer tracer(Options(state.range(0) != 0, false), &writer);
  const tracer::NamingSchema& naming = tracer.naming();
  for (auto _ : state) {
    Span span = tracer.StartSpan(naming.DatabaseOperationName(kQuery.database).view());
    span.SetService(naming.DatabaseServiceName(kQuery.database).view());
    tracer::DecorateDbClientSpan(kQuery, span);
    span.Finish();
  }
}
ALLOCBENCH_REGISTER(DbClientSpan)
    ->Name("span_creation/db_client_span")
    ->ArgNames({"dense"})
    ->Args({0})
    ->Args({1});

// The web server span's tags given to the builder before start (the OTel-bridge shape).
ALLOCBENCH_SCENARIO(WebServerSpanViaBuilder, state) {
  DropWriter writer;
  tracer::Tracer tracer(Options(state.range(0) != 0, state.range(1) != 0), &writer);
  for (auto _ : state) {
    tracer::SpanBuilder builder = tracer.BuildSpan(kServerOperation);
    tracer::DecorateHttpServerSpan(kRequest, builder);
    Span span = builder.Start();
    span.Finish();
  }
}
ALLOCBENCH_REGISTER(WebServerSpanViaBuilder)
    ->Name("span_creation/web_server_span_via_builder")
    ->ArgNames({"dense", "builder_reuse"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1});

// bare_build_span on a new thread per op (the Java tracer's virtual-thread benchmark): the
// thread-local builder cache is cold every time, so builder_reuse cannot help. The thread's
// spawn and join cost the same with either argument.
ALLOCBENCH_SCENARIO(FreshThreadSpan, state) {
  DropWriter writer;
  tracer::Tracer tracer(Options(false, state.range(0) != 0), &writer);
  for (auto _ : state) {
    std::thread thread([&state, &tracer] {
      state.CountThisThread();
      Span span = tracer.BuildSpan(kServerOperation).Start();
      span.Finish();
    });
    thread.join();
  }
}
ALLOCBENCH_REGISTER(FreshThreadSpan)
    ->Name("span_creation/fresh_thread_span")
    ->ArgNames({"builder_reuse"})
    ->Args({0})
    ->Args({1});

}  // namespace
