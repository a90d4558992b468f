// A profiler's interning traffic, deterministic: stack samples of a Python web service
// (gunicorn -> django -> app views, services, repositories -> database and HTTP clients), each
// frame interning its function name, its file path and its module-qualified symbol:
//   "process_order_items"
//   "/app/src/checkout/services/order_service.py"
//   "checkout.services.order_service:OrderService.process_order_items"
// Frames near the root repeat in every sample and app frames follow a skewed distribution, so
// most inserts are repeats, as in a real profile.
#ifndef ALLOCBENCH_REFERENCE_METRICS_SYMBOL_MIX_H_
#define ALLOCBENCH_REFERENCE_METRICS_SYMBOL_MIX_H_

#include <cstdint>
#include <string>
#include <vector>

namespace metrics {

struct SymbolMix {
  std::vector<std::string> distinct;  // every string of the stream once, in order of first use
  std::vector<uint32_t> inserts;      // the insert stream, as indices into `distinct`
};

// The same mix for the same arguments, on every run and machine.
SymbolMix GenerateSymbolMix(int samples = 1000, uint64_t seed = 2246);

}  // namespace metrics

#endif  // ALLOCBENCH_REFERENCE_METRICS_SYMBOL_MIX_H_
