#include "context.h"

#include <allocbench/counting.h>
#include <allocbench/scenario.h>
#include <sys/personality.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <string>

#include "user_error.h"

#ifndef ALLOCBENCH_VERSION
#define ALLOCBENCH_VERSION "unknown"
#endif
#ifndef ALLOCBENCH_BUILD_FLAGS
#define ALLOCBENCH_BUILD_FLAGS "unknown"
#endif

namespace allocbench {
namespace {

using nlohmann::json;

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// "true"/"false" become booleans so that revision.dirty reads naturally; the rest is text.
json ContextValue(const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  return text;
}

// Whether this process runs with address-space randomization off (personality(2)).
const char* AslrState() {
  const int persona = personality(0xffffffff);
  return persona != -1 && (persona & ADDR_NO_RANDOMIZE) ? "disabled" : "enabled";
}

}  // namespace

json BuildContext(const Options& options, const std::vector<Plugin>& plugins, int argc,
                  const char* const* argv) {
  utsname uts{};
  uname(&uts);
  json command = json::array();
  for (int i = 0; i < argc; ++i) command.push_back(argv[i]);
  json plugin_list = json::array();
  for (const Plugin& p : plugins) {
    plugin_list.push_back(
        {{"path", p.path}, {"compiler", p.compiler}, {"build_flags", p.build_flags}});
  }
  json context = {
      {"revision", nullptr},
      {"harness",
       {{"version", ALLOCBENCH_VERSION},
        {"scenario_api", ALLOCBENCH_SCENARIO_API_VERSION},
        {"compiler", "g++ " __VERSION__},
        {"build_flags", ALLOCBENCH_BUILD_FLAGS}}},
      {"allocator", {{"name", counting::BackendName()}, {"version", counting::BackendVersion()}}},
      {"host",
       {{"name", uts.nodename},
        {"os", std::string(uts.sysname) + " " + uts.release},
        {"arch", uts.machine}}},
      {"cpu", {{"model", CpuModel()}, {"logical_cpus", sysconf(_SC_NPROCESSORS_ONLN)}}},
      {"date", UtcNow()},
      {"command", command},
      {"plugins", plugin_list},
      {"count", options.count ? json{{"warmup_ops", options.count_options.warmup},
                                     {"window_ops", options.count_options.ops},
                                     {"tracking", "full"}}
                              : json(nullptr)},
      {"time", options.time ? json{{"repetitions", options.time_options.repetitions},
                                   {"min_time_s", options.time_options.min_time_s}}
                            : json(nullptr)},
      // Set by the instructions pass when it has run (instructions_pass.h); its inner run
      // records whether address-space randomization was off.
      {"instructions",
       options.callgrind_dumps.empty() ? json(nullptr) : json{{"aslr", AslrState()}}},
      {"isolation", options.isolate ? json{{"mode", "process per instance"},
                                           {"instance_timeout_s", options.instance_timeout_s}}
                                    : json{{"mode", "none"}}},
  };
  for (const auto& [key, value] : options.context) {
    std::string pointer = "/" + key;
    for (char& c : pointer) {
      if (c == '.') c = '/';
    }
    try {
      context[json::json_pointer(pointer)] = ContextValue(value);
    } catch (const json::exception&) {
      throw UserError("--context '" + key +
                      "': not a usable key here; use a dotted path of "
                      "plain names that does not go inside an existing value, e.g. revision.sha");
    }
  }
  return context;
}

}  // namespace allocbench
