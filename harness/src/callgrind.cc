#include "callgrind.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#if ALLOCBENCH_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#endif

namespace allocbench::callgrind {
namespace {

thread_local bool t_collecting = false;  // callgrind's state for this thread (starts off)

std::string WindowLabel(int window) { return "allocbench window " + std::to_string(window); }

// The events and totals of one dump file, if its trigger is `label`.
std::optional<Events> ParseDump(const std::string& path, const std::string& label) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> names;
  bool ours = false;
  while (std::getline(in, line)) {
    if (line == "desc: Trigger: Client Request: " + label) ours = true;
    if (line.rfind("events: ", 0) == 0) {
      std::istringstream words(line.substr(8));
      for (std::string name; words >> name;) names.push_back(name);
    }
    if (line.rfind("totals: ", 0) == 0 || line.rfind("summary: ", 0) == 0) {
      if (!ours || names.empty()) return std::nullopt;
      std::istringstream words(line.substr(line.find(' ') + 1));
      Events events;
      for (const std::string& name : names) {
        int64_t value = 0;  // callgrind leaves trailing zero events out
        words >> value;
        events[name] = value;
      }
      return events;
    }
  }
  return std::nullopt;
}

}  // namespace

#if ALLOCBENCH_HAVE_CALLGRIND
bool Available() { return true; }
bool RunningOnValgrind() { return RUNNING_ON_VALGRIND != 0; }
void Collect(bool on) {
  if (t_collecting == on) return;
  CALLGRIND_TOGGLE_COLLECT;
  t_collecting = on;
}
void DumpWindow(int window) {
  CALLGRIND_DUMP_STATS_AT(window == 1 ? "allocbench window 1" : "allocbench window 2");
}
#else
bool Available() { return false; }
bool RunningOnValgrind() { return false; }
void Collect(bool on) { t_collecting = on; }
void DumpWindow(int) {}
#endif

std::optional<Events> ReadWindow(const std::string& prefix, long pid, int window,
                                 std::string* error) {
  const size_t slash = prefix.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : prefix.substr(0, slash);
  const std::string stem =
      (slash == std::string::npos ? prefix : prefix.substr(slash + 1)) + "." + std::to_string(pid);
  const std::string label = WindowLabel(window);
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    *error = "cannot read callgrind's folder " + dir;
    return std::nullopt;
  }
  std::optional<Events> found;
  while (const dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name.rfind(stem + ".", 0) != 0) continue;  // stem.<n>: a dump of this process
    // Read once: in a process that measures several instances (--no-isolation) the next
    // instance's dump of this window must not find this one.
    if ((found = ParseDump(dir + "/" + name, label))) {
      unlink((dir + "/" + name).c_str());
      break;
    }
  }
  closedir(d);
  if (!found) *error = "callgrind wrote no dump of " + label + " (looked for " + stem + ".*)";
  return found;
}

std::optional<int64_t> EstimatedCycles(const Events& e) {
  for (const char* name : {"Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"}) {
    if (e.find(name) == e.end()) return std::nullopt;
  }
  const int64_t accesses = e.at("Ir") + e.at("Dr") + e.at("Dw");
  const int64_t l1_misses = e.at("I1mr") + e.at("D1mr") + e.at("D1mw");
  const int64_t ram = e.at("ILmr") + e.at("DLmr") + e.at("DLmw");
  return (accesses - l1_misses) + 5 * (l1_misses - ram) + 35 * ram;
}

}  // namespace allocbench::callgrind
