#include "plugin_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <map>

#include "text.h"
#include "user_error.h"

namespace allocbench {
namespace {

using ApiVersionFn = int (*)();
using DescribeFn = const void* (*)();

std::string Quoted(const std::string& path) { return "'" + Escaped(path) + "'"; }

const char* Or(const char* text, const char* fallback) { return text ? text : fallback; }

// Limits no real plugin comes near; beyond them the description is garbage.
constexpr int32_t kMaxScenarios = 1 << 20;
constexpr int32_t kMaxArgs = 1 << 10;
constexpr int32_t kMaxThreads = 1 << 16;

// What is wrong with a description read from a plugin, or "" (scenario.h always writes a valid
// one; a plugin that defines the entry points by hand may not).
std::string Broken(const internal::PluginDesc& desc) {
  if (desc.num_scenarios < 0 || desc.num_scenarios > kMaxScenarios) {
    return "num_scenarios is " + std::to_string(desc.num_scenarios);
  }
  if (desc.num_scenarios > 0 && desc.scenarios == nullptr) return "scenarios is NULL";
  for (int32_t s = 0; s < desc.num_scenarios; ++s) {
    const internal::ScenarioDesc& d = desc.scenarios[s];
    const std::string where = "scenario " + std::to_string(s) + ": ";
    if (d.name == nullptr) return where + "name is NULL";
    if (d.function == nullptr) return where + "function is NULL";
    if (d.num_arg_sets < 0 || d.num_arg_sets > kMaxScenarios || d.num_args < 0 ||
        d.num_args > kMaxArgs) {
      return where + "num_arg_sets or num_args is out of range";
    }
    if (d.num_arg_sets > 0 && d.num_args > 0 && d.args == nullptr) return where + "args is NULL";
    for (int32_t i = 0; d.arg_names != nullptr && i < d.num_args; ++i) {
      if (d.arg_names[i] == nullptr) return where + "arg_names[" + std::to_string(i) + "] is NULL";
    }
    if (d.num_threads < 0 || d.num_threads > kMaxArgs) {
      return where + "num_threads is " + std::to_string(d.num_threads);
    }
    if (d.num_threads > 0 && d.threads == nullptr) return where + "threads is NULL";
    for (int32_t t = 0; t < d.num_threads; ++t) {
      if (d.threads[t] < 1 || d.threads[t] > kMaxThreads) {
        return where + "a thread count is " + std::to_string(d.threads[t]);
      }
    }
    if (d.count_warmup < 0 || d.count_ops < 0 || (d.count_ops > 0) != (d.count_warmup > 0)) {
      return where + "count_warmup and count_ops must both be 0 or both at least 1";
    }
  }
  return "";
}

// Names reach JSON, terminals and markdown: an instance whose name is not printable UTF-8 is
// kept under an escaped name and refused, so the run goes on and says why.
void CheckName(Instance& inst) {
  std::string problem = PrintableProblem(inst.name);
  if (problem.empty()) return;
  inst.name = Escaped(inst.name);
  inst.scenario = Escaped(inst.scenario);
  for (auto& [key, value] : inst.args) key = Escaped(key);
  inst.refusal = "not run: its name (shown escaped) " + problem +
                 "; give the scenario a printable Name() and ArgNames()";
}

}  // namespace

Plugin LoadPlugin(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    throw UserError("--plugin " + Quoted(path) + ": no such file; build it first or fix the path");
  }
  if (!S_ISREG(st.st_mode)) {
    throw UserError("--plugin " + Quoted(path) + ": not a regular file; pass the plugin's .so");
  }
  // A path without a slash would make dlopen search the library path instead of this file.
  const std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw UserError("--plugin " + Quoted(path) + ": cannot be loaded as a shared library (" +
                    std::string(why ? why : "unknown reason") + ")");
  }
  auto version_fn = reinterpret_cast<ApiVersionFn>(dlsym(handle, "allocbench_plugin_api_version"));
  auto describe_fn = reinterpret_cast<DescribeFn>(dlsym(handle, "allocbench_plugin_describe"));
  if (version_fn == nullptr || describe_fn == nullptr) {
    dlclose(handle);
    throw UserError("--plugin " + Quoted(path) +
                    ": not an allocbench plugin (it exports no allocbench_plugin_api_version); "
                    "build it from sources that include <allocbench/scenario.h>, e.g. with "
                    "allocbench_add_plugin()");
  }
  const int version = version_fn();
  if (version != ALLOCBENCH_SCENARIO_API_VERSION) {
    dlclose(handle);
    throw UserError("--plugin " + Quoted(path) + ": built against scenario API v" +
                    std::to_string(version) + ", but this allocbench-run speaks v" +
                    std::to_string(ALLOCBENCH_SCENARIO_API_VERSION) +
                    "; rebuild the plugin against this allocbench");
  }
  Plugin plugin;
  char resolved[PATH_MAX];
  plugin.path = realpath(path.c_str(), resolved) != nullptr ? resolved : path;
  plugin.desc = static_cast<const internal::PluginDesc*>(describe_fn());
  if (plugin.desc == nullptr) {
    throw UserError("--plugin " + Quoted(path) +
                    ": allocbench_plugin_describe() returned NULL; build the plugin from sources "
                    "that include <allocbench/scenario.h> instead of defining it yourself");
  }
  if (plugin.desc->error != nullptr) {
    throw UserError("--plugin " + Quoted(path) + ": " + ValidUtf8(plugin.desc->error));
  }
  if (const std::string broken = Broken(*plugin.desc); !broken.empty()) {
    throw UserError("--plugin " + Quoted(path) + ": its description is broken (" + broken +
                    "); rebuild it against this allocbench's <allocbench/scenario.h>");
  }
  plugin.compiler = ValidUtf8(Or(plugin.desc->compiler, "unknown"));
  plugin.build_flags = ValidUtf8(Or(plugin.desc->build_flags, "unknown"));
  return plugin;
}

std::vector<Instance> ExpandInstances(const std::vector<Plugin>& plugins) {
  std::vector<Instance> out;
  std::map<std::string, std::string> seen;  // instance name -> plugin path
  for (const Plugin& plugin : plugins) {
    for (int32_t s = 0; s < plugin.desc->num_scenarios; ++s) {
      const internal::ScenarioDesc& d = plugin.desc->scenarios[s];
      const int32_t num_sets = d.num_arg_sets == 0 ? 1 : d.num_arg_sets;
      const int32_t num_threads = d.num_threads == 0 ? 1 : d.num_threads;
      for (int32_t a = 0; a < num_sets; ++a) {
        for (int32_t t = 0; t < num_threads; ++t) {
          Instance inst;
          inst.scenario = d.name;
          inst.name = d.name;
          inst.function = d.function;
          inst.plugin = plugin.path;
          inst.count_warmup = d.count_warmup;
          inst.count_ops = d.count_ops;
          inst.threads = d.num_threads == 0 ? 1 : d.threads[t];
          for (int32_t i = 0; i < d.num_args && d.num_arg_sets > 0; ++i) {
            const int64_t value = d.args[a * d.num_args + i];
            const bool named = d.arg_names != nullptr;
            std::string key = named ? d.arg_names[i] : "arg" + std::to_string(i);
            inst.name += "/" + (named ? key + ":" : "") + std::to_string(value);
            inst.args.emplace_back(std::move(key), value);
            inst.arg_values.push_back(value);
          }
          if (d.num_threads != 0) inst.name += "/threads:" + std::to_string(inst.threads);
          CheckName(inst);
          auto [it, fresh] = seen.emplace(inst.name, plugin.path);
          if (!fresh) {
            throw UserError("scenario instance '" + inst.name + "' is registered twice (in " +
                            Quoted(it->second) + " and " + Quoted(plugin.path) +
                            "); give one of them another Name() or other Args()");
          }
          out.push_back(std::move(inst));
        }
      }
    }
  }
  return out;
}

}  // namespace allocbench
