// The two C symbols allocbench-run looks up in a plugin. Included by scenario.h in every plugin
// translation unit (not in allocbench-run, which defines ALLOCBENCH_HOST): the functions are
// inline, so each unit may define them and the linker keeps one; `used` makes sure a plugin with
// a single scenario file still exports them.
#ifndef ALLOCBENCH_PLUGIN_ENTRY_H_
#define ALLOCBENCH_PLUGIN_ENTRY_H_

#include <string>
#include <vector>

#ifndef ALLOCBENCH_PLUGIN_BUILD_FLAGS
#define ALLOCBENCH_PLUGIN_BUILD_FLAGS "unknown (not built with allocbench_add_plugin)"
#endif

namespace allocbench ALLOCBENCH_PRIVATE_VISIBILITY {
namespace internal {

struct PluginTables {
  std::vector<ScenarioDesc> descs;
  std::vector<std::vector<int64_t>> args;
  std::vector<std::vector<const char*>> names;
  std::vector<std::vector<int32_t>> threads;
  std::string error;
  PluginDesc desc{};
};

inline std::string CheckScenario(const Scenario& s) {
  if (s.name().empty()) return "a scenario registered with an empty Name()";
  const std::size_t width = s.arg_sets().empty() ? 0 : s.arg_sets()[0].size();
  for (const auto& set : s.arg_sets()) {
    if (set.size() != width) {
      return "scenario '" + s.name() +
             "': every Args({...}) call must give the same number of "
             "arguments";
    }
  }
  if (!s.arg_names().empty() && s.arg_names().size() != width) {
    return "scenario '" + s.name() + "': ArgNames() names " + std::to_string(s.arg_names().size()) +
           " arguments but Args() gives " + std::to_string(width);
  }
  for (int t : s.threads()) {
    if (t < 1) return "scenario '" + s.name() + "': Threads() must be at least 1";
  }
  if (s.count_warmup() < 0 || s.count_ops() < 0 || (s.count_ops() > 0) != (s.count_warmup() > 0)) {
    return "scenario '" + s.name() + "': CountOps(warmup, ops) needs both at least 1";
  }
  return "";
}

inline void BuildTables(PluginTables& t) {
  const auto& registry = Registry();
  t.args.resize(registry.size());
  t.names.resize(registry.size());
  t.threads.resize(registry.size());
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const Scenario& s = *registry[i];
    t.error = CheckScenario(s);
    if (!t.error.empty()) return;
    for (const auto& set : s.arg_sets()) t.args[i].insert(t.args[i].end(), set.begin(), set.end());
    for (const auto& name : s.arg_names()) t.names[i].push_back(name.c_str());
    t.threads[i].assign(s.threads().begin(), s.threads().end());
    ScenarioDesc d{};
    d.name = s.name().c_str();
    d.function = s.function();
    d.args = t.args[i].data();
    d.num_arg_sets = static_cast<int32_t>(s.arg_sets().size());
    d.num_args = s.arg_sets().empty() ? 0 : static_cast<int32_t>(s.arg_sets()[0].size());
    d.arg_names = t.names[i].empty() ? nullptr : t.names[i].data();
    d.threads = t.threads[i].data();
    d.num_threads = static_cast<int32_t>(t.threads[i].size());
    d.count_warmup = s.count_warmup();
    d.count_ops = s.count_ops();
    t.descs.push_back(d);
  }
}

#if defined(__clang__)
#define ALLOCBENCH_PRIVATE_COMPILER "clang " __clang_version__
#else
#define ALLOCBENCH_PRIVATE_COMPILER "g++ " __VERSION__
#endif

inline const PluginDesc* DescribePlugin() {
  // Built in place, once: the descriptors point into these vectors and strings.
  static PluginTables tables;
  static const bool built = [] {
    BuildTables(tables);
    tables.desc.scenarios = tables.descs.data();
    tables.desc.num_scenarios = static_cast<int32_t>(tables.descs.size());
    tables.desc.compiler = ALLOCBENCH_PRIVATE_COMPILER;
    tables.desc.build_flags = ALLOCBENCH_PLUGIN_BUILD_FLAGS;
    tables.desc.error = tables.error.empty() ? nullptr : tables.error.c_str();
    return true;
  }();
  (void)built;
  return &tables.desc;
}

}  // namespace internal
}  // namespace ALLOCBENCH_PRIVATE_VISIBILITY

extern "C" inline __attribute__((used, visibility("default"))) int allocbench_plugin_api_version() {
  return ALLOCBENCH_SCENARIO_API_VERSION;
}

extern "C" inline __attribute__((used, visibility("default"))) const void*
allocbench_plugin_describe() {
  return allocbench::internal::DescribePlugin();
}

#endif  // ALLOCBENCH_PLUGIN_ENTRY_H_
