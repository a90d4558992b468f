// String building on a hot path: what a tracer pays when it formats names per span.
#include <allocbench/scenario.h>

#include <string>

namespace {

// Above the 15-character small-string buffer, every copy is one allocation of size()+1 bytes.
ALLOCBENCH_SCENARIO(CopyLongString, state) {
  const std::string source(state.range(0), 'x');
  for (auto _ : state) {
    std::string copy = source;
    allocbench::DoNotOptimize(copy);
  }
}
ALLOCBENCH_REGISTER(CopyLongString)
    ->Name("strings/copy")
    ->ArgNames({"length"})
    ->Args({15})
    ->Args({64});

// "<protocol>.client.request" built per call, the pattern that precomputed name tables remove.
ALLOCBENCH_SCENARIO(InterpolatedOperationName, state) {
  const std::string protocol = "postgresql";
  for (auto _ : state) {
    std::string name = protocol + ".client.request";
    allocbench::DoNotOptimize(name);
  }
}
ALLOCBENCH_REGISTER(InterpolatedOperationName)->Name("strings/interpolated_name");

ALLOCBENCH_SCENARIO(PrecomputedOperationName, state) {
  static const std::string kNames[] = {"http.request", "postgresql.client.request"};
  size_t i = 0;
  for (auto _ : state) {
    const std::string& name = kNames[++i & 1];
    allocbench::DoNotOptimize(name);
  }
}
ALLOCBENCH_REGISTER(PrecomputedOperationName)->Name("strings/precomputed_name");

}  // namespace
