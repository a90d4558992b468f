// Loads scenario plugins (shared libraries built against allocbench/scenario.h) and expands
// their registrations into runnable instances: one per argument set x thread count.
#ifndef ALLOCBENCH_HARNESS_PLUGIN_LOADER_H_
#define ALLOCBENCH_HARNESS_PLUGIN_LOADER_H_

#include <allocbench/scenario.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace allocbench {

struct Plugin {
  std::string path;
  std::string compiler;
  std::string build_flags;
  const internal::PluginDesc* desc = nullptr;
};

struct Instance {
  std::string name;      // "family/shape/argname:value/threads:n", unique within a run
  std::string scenario;  // the registered name
  std::vector<std::pair<std::string, int64_t>> args;  // unnamed arguments are "arg0", "arg1" ...
  std::vector<int64_t> arg_values;
  int threads = 1;
  Function function = nullptr;
  std::string plugin;        // path of the plugin it came from
  int64_t count_warmup = 0;  // the scenario's CountOps(), 0: allocbench-run's options
  int64_t count_ops = 0;
  std::string refusal;  // non-empty: not run, recorded as failed with this reason
};

// Throws UserError naming the file and the fix: missing file, not a shared library, not an
// allocbench plugin, another scenario API version, inconsistent registrations.
// Plugins stay loaded for the life of the process.
Plugin LoadPlugin(const std::string& path);

// Throws UserError if two instances get the same name. An instance whose name is not printable
// UTF-8 keeps an escaped name (text.h) and a refusal.
std::vector<Instance> ExpandInstances(const std::vector<Plugin>& plugins);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_PLUGIN_LOADER_H_
