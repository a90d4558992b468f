// The "context" block of a results file: what was measured, where, with what.
//   revision   {sha, describe, dirty} — given by the caller with --context revision.*=...
//   harness    {version, scenario_api, compiler, build_flags}
//   allocator  {name, version} — the counting layer's backend
//   host, cpu, date (UTC, ISO 8601), command (argv), plugins [{path, compiler, build_flags}],
//   count {warmup_ops, window_ops}, time {repetitions, min_time_s}
#ifndef ALLOCBENCH_HARNESS_CONTEXT_H_
#define ALLOCBENCH_HARNESS_CONTEXT_H_

#include <nlohmann/json.hpp>
#include <vector>

#include "options.h"
#include "plugin_loader.h"

namespace allocbench {

nlohmann::json BuildContext(const Options& options, const std::vector<Plugin>& plugins, int argc,
                            const char* const* argv);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_CONTEXT_H_
