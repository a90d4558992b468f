#include "plugin_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <map>

#include "user_error.h"

namespace allocbench {
namespace {

using ApiVersionFn = int (*)();
using DescribeFn = const void* (*)();

std::string Quoted(const std::string& path) { return "'" + path + "'"; }

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
  if (plugin.desc->error != nullptr) {
    throw UserError("--plugin " + Quoted(path) + ": " + plugin.desc->error);
  }
  plugin.compiler = plugin.desc->compiler;
  plugin.build_flags = plugin.desc->build_flags;
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
