// What the span_creation and trace_fanout families share: the web request their spans describe
// and the writer that drops finished traces.
#ifndef ALLOCBENCH_SCENARIOS_FAMILIES_WEB_REQUEST_H_
#define ALLOCBENCH_SCENARIOS_FAMILIES_WEB_REQUEST_H_

#include <allocbench/scenario.h>

#include <string_view>

#include "tracer/decorators.h"
#include "tracer/writer.h"

namespace families {

constexpr std::string_view kServerOperation = "http.server.request";

// A request as a web framework's integration sees it (long URL and user agent, as in life).
constexpr tracer::HttpServerRequest kRequest = {
    "GET",
    "https://shop.example.com/api/v1/users/12345?expand=orders",
    "/api/v1/users/{id}",
    200,
    "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "shop.example.com",
    "cpp-httplib",
};

// Drops each finished trace, but only after handing it to DoNotOptimize: a writer the optimizer
// can see through would let it delete the spans, and measure nothing.
class DropWriter : public tracer::Writer {
 public:
  void Write(tracer::SpanList trace) override { allocbench::DoNotOptimize(trace); }
};

}  // namespace families

#endif  // ALLOCBENCH_SCENARIOS_FAMILIES_WEB_REQUEST_H_
