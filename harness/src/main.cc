// allocbench-run: loads scenario plugins, runs the count and time passes of every selected
// instance (each in a child process of its own, see isolation.h), prints the table and writes
// the results JSON.
#include <allocbench/counting.h>
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "callgrind.h"
#include "console_table.h"
#include "context.h"
#include "instructions_pass.h"
#include "isolation.h"
#include "journal.h"
#include "measure.h"
#include "options.h"
#include "paired_pass.h"
#include "plugin_loader.h"
#include "results_json.h"
#include "signals.h"
#include "text.h"
#include "user_error.h"

namespace allocbench {
namespace {

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

// --list: prints the instances' names; true if that is all the run does.
bool Listed(const std::vector<Instance>& instances, const Options& options) {
  if (!options.list) return false;
  for (const Instance& inst : instances) std::printf("%s\n", inst.name.c_str());
  return true;
}

// FILE.partial for --out FILE ("" without --out), both checked writable before anything runs.
std::string CheckedOutputs(const Options& options) {
  if (options.out.empty()) return "";
  const std::string partial = options.out + ".partial";
  CheckWritable(options.out);
  CheckWritable(partial);
  return partial;
}

int StoppedAfter(size_t done, size_t total, const std::string& partial) {
  std::fprintf(stderr, "allocbench-run: interrupted after %zu of %zu instances%s\n", done, total,
               partial.empty() || done == 0 ? "" : ("; results so far are in " + partial).c_str());
  return 130;
}

// Paths as the user meant them, whatever a plugin's static constructor does to the current
// folder (a chdir() would redirect a relative --out, or the next relative --plugin).
Options Resolved(Options options) {
  char cwd[PATH_MAX];
  const auto absolute = [&](std::string& path) {
    if (path.empty() || path[0] == '/') return;
    if (getcwd(cwd, sizeof cwd) == nullptr) {
      throw UserError("cannot resolve the relative path '" + path +
                      "': the current folder is gone; give an absolute path");
    }
    path = std::string(cwd) + "/" + path;
  };
  absolute(options.out);
  for (std::string& plugin : options.plugins) absolute(plugin);
  return options;
}

// Measures every instance into `results`, adding each to FILE.partial; false if a SIGINT or
// SIGTERM stopped it.
bool MeasureAll(const std::vector<Instance>& instances, const Options& options,
                const nlohmann::json& context, Journal& journal, nlohmann::json& results) {
  const std::string allocator = context.value("/allocator/name"_json_pointer, "unknown");
  const char* pass = options.callgrind_dumps.empty() ? "" : "callgrind ";
  for (size_t i = 0; i < instances.size(); ++i) {
    if (Interrupted()) return false;
    if (!options.quiet) {
      std::fprintf(stderr, "[%s%zu/%zu] %s\n", pass, i + 1, instances.size(),
                   instances[i].name.c_str());
    }
    if (options.isolate) {
      bool interrupted = false;
      nlohmann::json result = MeasureIsolated(instances[i], options, allocator, &interrupted);
      if (interrupted) return false;
      results.push_back(std::move(result));
    } else {
      results.push_back(ResultToJson(Measure(instances[i], options), allocator));
    }
    // Everything measured so far survives a crash or a kill of the run itself.
    journal.Append(results.back());
  }
  return !Interrupted();
}

// The paired results document: what ResultsDocument is for the other passes.
nlohmann::json PairedDocument(const nlohmann::json& context, const nlohmann::json& results,
                              bool complete) {
  return {
      {"allocbench_paired", 1}, {"complete", complete}, {"context", context}, {"results", results}};
}

std::vector<std::string> NamesOnlyIn(const std::vector<Instance>& these,
                                     const std::set<std::string>& others) {
  std::vector<std::string> out;
  for (const Instance& i : these) {
    if (!others.count(i.name)) out.push_back(i.name);
  }
  return out;
}

// --against: the paired time pass of the instances both builds register (paired_pass.h).
int RunPairedPass(const Options& options, int argc, const char* const* argv) {
  const Probed base = ProbePlugin(options.plugins.front(), options.instance_timeout_s);
  const Probed cand = ProbePlugin(options.paired.against, options.instance_timeout_s);
  std::set<std::string> base_names, cand_names;
  for (const Instance& i : base.instances) base_names.insert(i.name);
  for (const Instance& i : cand.instances) cand_names.insert(i.name);
  std::vector<Instance> common;
  for (const Instance& i : base.instances) {
    if (cand_names.count(i.name)) common.push_back(i);
  }
  if (common.empty()) {
    throw UserError("--plugin '" + Escaped(base.plugin.path) + "' and --against '" +
                    Escaped(cand.plugin.path) +
                    "' register no scenario instance of the same name; pair two builds of the "
                    "same scenarios");
  }
  const std::vector<Instance> instances = Select(common, options.filter);
  if (Listed(instances, options)) return 0;
  const std::string partial = CheckedOutputs(options);
  nlohmann::json context = BuildContext(options, {base.plugin, cand.plugin}, argc, argv);
  context["count"] = nullptr;
  context["time"] = nullptr;
  context["paired"] = {{"base", base.plugin.path},
                       {"candidate", cand.plugin.path},
                       {"budget_s", options.paired.budget_s},
                       {"sessions", options.paired.sessions},
                       {"batch_target_s", options.paired.batch_s},
                       {"warmup_fraction", options.paired.warmup_fraction},
                       {"only_in_base", NamesOnlyIn(base.instances, cand_names)},
                       {"only_in_candidate", NamesOnlyIn(cand.instances, base_names)}};
  const std::string allocator = context.value("/allocator/name"_json_pointer, "unknown");
  Journal journal(partial,
                  Journal::Header{PairedDocument(context, nlohmann::json::array(), false)});
  nlohmann::json results = nlohmann::json::array();
  for (size_t i = 0; i < instances.size() && !Interrupted(); ++i) {
    if (!options.quiet) {
      std::fprintf(stderr, "[paired %zu/%zu] %s\n", i + 1, instances.size(),
                   instances[i].name.c_str());
    }
    bool interrupted = false;
    nlohmann::json result =
        options.isolate
            ? MeasurePairedIsolated(instances[i], options, allocator, &interrupted)
            : RunPaired(instances[i], options.plugins.front(), options.paired, allocator);
    if (interrupted) break;
    results.push_back(std::move(result));
    journal.Append(results.back());
  }
  if (Interrupted()) return StoppedAfter(results.size(), instances.size(), partial);
  int failed = 0;
  for (const nlohmann::json& r : results) {
    if (r.contains("error")) {
      ++failed;
      std::fprintf(stderr, "allocbench-run: %s: %s\n", r["name"].get<std::string>().c_str(),
                   ForTerminal(r["error"].get<std::string>()).c_str());
    } else if (!options.quiet) {
      const nlohmann::json& p = r["paired"];
      std::printf("%-60s %6zu pairs of %lld ops\n", r["name"].get<std::string>().c_str(),
                  p["cand_first"].size(), static_cast<long long>(p["batch_ops"].get<int64_t>()));
    }
  }
  if (!options.out.empty()) {
    WriteFileAtomically(options.out, Dump(PairedDocument(context, results, true)) + "\n");
    journal.Remove();
  }
  return failed > 0 ? 1 : 0;
}

int Run(int argc, const char* const* argv) {
  // The harness's own thread is never counted; scenario threads switch themselves on.
  counting::SetMode(counting::Mode::kIgnored);
  const Options options = Resolved(ParseOptions(argc, argv));
  // Before --help: a sweep or ab checks its runner's options with it, before building anything.
  if (options.instructions && !callgrind::Available()) {
    throw UserError(
        "--instructions: this allocbench-run was built without valgrind's headers "
        "(valgrind/callgrind.h); install Debian's valgrind and rebuild, or drop --instructions");
  }
  if (options.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  InstallInterruptHandlers(options.isolate);
  if (!options.paired.against.empty()) return RunPairedPass(options, argc, argv);
  const std::string valgrind = options.instructions ? ValgrindVersion() : "";
  if (!options.callgrind_dumps.empty() && !callgrind::RunningOnValgrind()) {
    throw UserError(
        "--callgrind-dumps is allocbench-run's own, for its run under callgrind; "
        "use --instructions");
  }
  std::vector<std::string> paths = options.plugins;
  if (paths.empty()) paths.push_back(BuiltinPluginPath());
  std::vector<Plugin> plugins;
  for (const std::string& path : paths) {
    if (options.isolate) ProbePlugin(path, options.instance_timeout_s);
    plugins.push_back(LoadPluginHere(path));
  }
  const std::vector<Instance> instances = Select(ExpandInstances(plugins), options.filter);
  if (Listed(instances, options)) return 0;
  const std::string partial = CheckedOutputs(options);
  nlohmann::json context = BuildContext(options, plugins, argc, argv);
  if (options.time) InitializeTimePass(argv[0]);

  nlohmann::json results = nlohmann::json::array();
  Journal journal(partial, context);
  if (!MeasureAll(instances, options, context, journal, results) ||
      (options.instructions && !RunInstructionsPass(options, paths, valgrind, context, results))) {
    return StoppedAfter(results.size(), instances.size(), partial);
  }
  if (!options.quiet && options.callgrind_dumps.empty()) {
    std::fputs(FormatTable(results).c_str(), stdout);
  }
  if (!options.out.empty()) {
    WriteFileAtomically(options.out, Dump(ResultsDocument(context, results, true), 2) + "\n");
    journal.Remove();
  }
  const auto failed = std::count_if(results.begin(), results.end(),
                                    [](const nlohmann::json& r) { return r.contains("error"); });
  if (failed > 0) {
    if (options.callgrind_dumps.empty()) {  // under callgrind: the outer run says it, once
      std::fprintf(stderr, "allocbench-run: %ld scenario instance(s) failed; see the notes above\n",
                   static_cast<long>(failed));
    }
    return 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const UserError& e) {
    if (Interrupted()) {
      std::fprintf(stderr, "allocbench-run: interrupted\n");
      return 130;
    }
    std::fprintf(stderr, "allocbench-run: error: %s\n", ForTerminal(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "allocbench-run: internal error: %s\n", e.what());
    return 3;
  }
}

}  // namespace
}  // namespace allocbench

int main(int argc, char** argv) {
  const int code = allocbench::Main(argc, argv);
  // Out without running static destructors or exit handlers: everything is written, and a
  // plugin's destructor may crash or hang (a common C++ bug), which would turn a run that
  // measured everything into a failed one. heaptrack (allocbench profile runs us under it)
  // writes the end of its data from an exit handler: it is told to, first.
  std::fflush(nullptr);
  if (auto stop = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "heaptrack_stop"))) stop();
  _exit(code);
}
