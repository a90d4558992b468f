// allocbench-run: loads scenario plugins, runs the count and time passes of every selected
// instance, prints the table and writes the results JSON.
#include <allocbench/counting.h>
#include <limits.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "console_table.h"
#include "context.h"
#include "options.h"
#include "plugin_loader.h"
#include "result.h"
#include "results_json.h"
#include "user_error.h"

namespace allocbench {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

void OnInterrupt(int) {
  g_interrupted = 1;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
  std::signal(SIGTERM, SIG_DFL);
}

// The built-in plugin sits at <prefix>/lib/allocbench/ next to <prefix>/bin/allocbench-run, in
// the build tree and in an installed tree alike.
std::string BuiltinPluginPath() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw UserError("cannot locate the built-in plugin; pass --plugin PATH");
  std::string dir(self, static_cast<size_t>(n));
  dir = dir.substr(0, dir.rfind('/'));
  return dir + "/../lib/allocbench/allocbench_builtin.so";
}

std::vector<Instance> Select(std::vector<Instance> all, const std::string& filter) {
  if (filter.empty()) return all;
  std::regex re;
  try {
    re = std::regex(filter, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw UserError("--filter '" + filter + "' is not a valid regular expression (" + e.what() +
                    ")");
  }
  std::vector<Instance> selected;
  for (auto& inst : all) {
    if (std::regex_search(inst.name, re)) selected.push_back(std::move(inst));
  }
  if (selected.empty()) {
    throw UserError("--filter '" + filter + "' matches no scenario instance (see --list)");
  }
  return selected;
}

InstanceResult Measure(const Instance& instance, const Options& options) {
  InstanceResult r{instance, std::nullopt, std::nullopt, {}, ""};
  if (options.count) {
    CountOutcome c = RunCountPass(instance, options.count_options);
    if (c.error.empty()) {
      r.alloc = c.metrics;
      r.counters = c.counters;
    } else {
      r.error = "count pass: " + c.error;
    }
  }
  if (options.time && r.error.empty()) {
    TimeOutcome t = RunTimePass(instance, options.time_options);
    if (t.error.empty()) {
      r.time = t.metrics;
    } else {
      r.error = "time pass: " + t.error;
    }
  }
  return r;
}

int Run(int argc, const char* const* argv) {
  // The harness's own thread is never counted; scenario threads switch themselves on.
  counting::SetMode(counting::Mode::kIgnored);
  const Options options = ParseOptions(argc, argv);
  if (options.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::vector<std::string> paths = options.plugins;
  if (paths.empty()) paths.push_back(BuiltinPluginPath());
  std::vector<Plugin> plugins;
  for (const std::string& path : paths) plugins.push_back(LoadPlugin(path));
  const std::vector<Instance> instances = Select(ExpandInstances(plugins), options.filter);
  if (options.list) {
    for (const Instance& inst : instances) std::printf("%s\n", inst.name.c_str());
    return 0;
  }

  const std::string partial = options.out.empty() ? "" : options.out + ".partial";
  if (!options.out.empty()) {
    CheckWritable(options.out);
    CheckWritable(partial);
  }
  const nlohmann::json context = BuildContext(options, plugins, argc, argv);
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  if (options.time) InitializeTimePass(argv[0]);

  std::vector<InstanceResult> results;
  int failed = 0;
  for (size_t i = 0; i < instances.size() && !g_interrupted; ++i) {
    if (!options.quiet) {
      std::fprintf(stderr, "[%zu/%zu] %s\n", i + 1, instances.size(), instances[i].name.c_str());
    }
    results.push_back(Measure(instances[i], options));
    if (!results.back().error.empty()) ++failed;
    // Everything measured so far survives a crash or Ctrl-C in the next scenario.
    if (!partial.empty()) {
      WriteFileAtomically(partial, ResultsDocument(context, results, false).dump(2) + "\n");
    }
  }
  if (g_interrupted) {
    std::fprintf(stderr, "allocbench-run: interrupted after %zu of %zu instances%s\n",
                 results.size(), instances.size(),
                 partial.empty() ? "" : ("; results so far are in " + partial).c_str());
    return 130;
  }
  if (!options.quiet) std::fputs(FormatTable(results).c_str(), stdout);
  if (!options.out.empty()) {
    WriteFileAtomically(options.out, ResultsDocument(context, results, true).dump(2) + "\n");
    unlink(partial.c_str());
  }
  if (failed > 0) {
    std::fprintf(stderr, "allocbench-run: %d scenario instance(s) failed; see the notes above\n",
                 failed);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace allocbench

int main(int argc, char** argv) {
  try {
    return allocbench::Run(argc, argv);
  } catch (const allocbench::UserError& e) {
    std::fprintf(stderr, "allocbench-run: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "allocbench-run: internal error: %s\n", e.what());
    return 3;
  }
}
