#include "measure.h"

#include <unistd.h>

#include "text.h"

namespace allocbench {
namespace {

// The instructions of the count windows, from the dumps callgrind wrote for this process.
std::optional<InstructionMetrics> ReadInstructions(const std::string& prefix,
                                                   const AllocMetrics& alloc, int threads,
                                                   std::string* error) {
  InstructionMetrics m;
  m.window_ops = alloc.window_ops;
  for (int w = 0; w < 2; ++w) {
    auto events = callgrind::ReadWindow(prefix, static_cast<long>(getpid()), w + 1, error);
    if (!events) return std::nullopt;
    m.windows[w] = *events;
  }
  const double ops = 2.0 * static_cast<double>(alloc.window_ops) * threads;
  const int64_t ir[2] = {m.windows[0]["Ir"], m.windows[1]["Ir"]};
  m.instructions_per_op = static_cast<double>(ir[0] + ir[1]) / ops;
  const auto cycles1 = callgrind::EstimatedCycles(m.windows[0]);
  const auto cycles2 = callgrind::EstimatedCycles(m.windows[1]);
  if (cycles1 && cycles2)
    m.estimated_cycles_per_op = static_cast<double>(*cycles1 + *cycles2) / ops;
  m.steady = ir[0] == ir[1];
  if (!m.steady) {
    m.steady_reason =
        "the two windows executed different instructions (window 1: " + std::to_string(ir[0]) +
        " Ir, window 2: " + std::to_string(ir[1]) +
        " Ir): the op's work varies from op to op (growing tables, data-dependent "
        "branches, other threads), so Ir/op depends on which ops are measured";
  }
  return m;
}

}  // namespace

InstanceResult Measure(const Instance& instance, const Options& options,
                       const MeasureHooks& hooks) {
  InstanceResult r{instance, std::nullopt, std::nullopt, {}, instance.refusal, std::nullopt};
  const auto starting = [&](const char* pass) {
    if (hooks.starting) hooks.starting(pass);
  };
  if (options.count && r.error.empty()) {
    starting("count");
    CountOutcome c = RunCountPass(instance, options.count_options);
    if (c.error.empty()) {
      r.alloc = c.metrics;
      r.counters = c.counters;
      std::string error;
      if (options.count_options.callgrind &&
          !(r.instructions =
                ReadInstructions(options.callgrind_dumps, c.metrics, instance.threads, &error))) {
        r.error = "count pass: " + error;
      }
    } else {
      r.error = "count pass: " + ValidUtf8(c.error);
    }
    if (hooks.measured) hooks.measured(r);
  }
  if (options.time && r.error.empty()) {
    starting("time");
    TimeOutcome t = RunTimePass(instance, options.time_options);
    if (t.error.empty()) {
      r.time = t.metrics;
    } else {
      r.error = "time pass: " + ValidUtf8(t.error);
    }
  }
  return r;
}

}  // namespace allocbench
