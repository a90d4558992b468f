#include "measure.h"

#include "text.h"

namespace allocbench {

InstanceResult Measure(const Instance& instance, const Options& options,
                       const MeasureHooks& hooks) {
  InstanceResult r{instance, std::nullopt, std::nullopt, {}, instance.refusal};
  const auto starting = [&](const char* pass) {
    if (hooks.starting) hooks.starting(pass);
  };
  if (options.count && r.error.empty()) {
    starting("count");
    CountOutcome c = RunCountPass(instance, options.count_options);
    if (c.error.empty()) {
      r.alloc = c.metrics;
      r.counters = c.counters;
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
